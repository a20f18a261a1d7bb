//! Speech on a simulated media clock: a captured face lip-syncs a forced-aligner transcript
//! (Gentle JSON) while the audio player plays, pauses, seeks and resumes. mien samples the speech
//! at the player's position (seed 002: never wall time or frame counts); the transport holds the
//! mouth while paused, jumps on a seek and follows the clock again on resume.
//!
//! ```sh
//! cargo run --release --example speech_clock
//! cargo run --release --example speech_clock -- FACE.glb TIMINGS.json
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien::core::sink::SplatBuffers;
use mien::{Asset, Device, Runtime, RuntimeOptions, Speech, SpeechOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// Where the user seeks to while paused, seconds on the media clock.
const SEEK_S: f64 = 13.3;

/// The application's audio player: a position that advances only while playing.
struct Player {
    position: f64,
    playing: bool,
}

impl Player {
    fn tick(&mut self, dt: f64) {
        if self.playing {
            self.position += dt;
        }
    }
}

/// A runtime with the speech attached, on the CPU.
fn runtime(face: &Path, timings: &Path) -> mien::Result<Runtime> {
    let asset = Arc::new(Asset::load(face)?);
    let speech = Speech::from_file(timings, &SpeechOptions::default(), asset.character())?;
    let mut rt = Runtime::new(asset, &Device::Cpu, &RuntimeOptions::default())?;
    rt.instance_mut(0)?.set_speech(Some(speech))?;
    Ok(rt)
}

/// One frame at the player's position; the splats.
fn frame(rt: &mut Runtime, player: &Player) -> mien::Result<SplatBuffers> {
    rt.update(player.position)?;
    rt.splats(0)
}

/// What the run saw at each transport event.
struct Seen {
    paused_first: SplatBuffers,
    paused_last: SplatBuffers,
    after_seek: SplatBuffers,
    after_resume: SplatBuffers,
    positions: [f64; 3],
}

fn run(face: &Path, timings: &Path) -> mien::Result<Seen> {
    let mut rt = runtime(face, timings)?;
    let dt = 1.0 / 30.0;
    // The take is silent for its first seconds: start the player where the words are ("different
    // from the one you are in now", 11.6–14.2 s).
    let mut player = Player {
        position: 12.2,
        playing: true,
    };
    // Play 0.5 s.
    for _ in 0..15 {
        frame(&mut rt, &player)?;
        player.tick(dt);
    }
    // Pause: the player stops where it is; the speech holds that position.
    player.playing = false;
    let paused_at = player.position;
    rt.instance_mut(0)?
        .speech()
        .expect("speech attached")
        .pause(paused_at)?;
    let paused_first = frame(&mut rt, &player)?;
    let mut paused_last = paused_first.clone();
    for _ in 0..15 {
        player.tick(dt);
        paused_last = frame(&mut rt, &player)?;
    }
    // Seek while paused: the speech jumps to the destination and stays paused there.
    player.position = SEEK_S;
    rt.instance_mut(0)?
        .speech()
        .expect("speech attached")
        .seek(SEEK_S)?;
    let after_seek = frame(&mut rt, &player)?;
    // Resume: follow the player's clock again, for 1/3 s.
    player.playing = true;
    rt.instance_mut(0)?
        .speech()
        .expect("speech attached")
        .resume(player.position)?;
    let mut after_resume = after_seek.clone();
    for _ in 0..10 {
        player.tick(dt);
        after_resume = frame(&mut rt, &player)?;
    }
    println!(
        "paused at {paused_at:.3} s, sought to {SEEK_S} s, resumed; now at {:.3} s",
        player.position
    );
    Ok(Seen {
        paused_first,
        paused_last,
        after_seek,
        after_resume,
        positions: [paused_at, SEEK_S, player.position],
    })
}

fn main() -> mien::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let face = args
        .first()
        .map_or_else(|| data("facecap/facecap.glb"), PathBuf::from);
    let timings = args
        .get(1)
        .map_or_else(|| data("gentle/lucier_golden.json"), PathBuf::from);
    let seen = run(&face, &timings)?;
    let held = seen.paused_first == seen.paused_last;
    println!("the mouth held still while paused: {held}");
    let moved = seen.after_seek != seen.after_resume;
    println!("the mouth moved again after resuming: {moved}");
    println!(
        "positions: paused {:.3} s, seek {SEEK_S} s, resumed to {:.3} s",
        seen.positions[0], seen.positions[2]
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame a fresh runtime poses at media time `t` (no transport involved).
    fn fresh(t: f64) -> SplatBuffers {
        let mut rt = runtime(
            &data("facecap/facecap.glb"),
            &data("gentle/lucier_golden.json"),
        )
        .unwrap();
        rt.update(t).unwrap();
        rt.splats(0).unwrap()
    }

    #[test]
    fn pause_holds_seek_jumps_resume_follows_the_clock() {
        let s = run(
            &data("facecap/facecap.glb"),
            &data("gentle/lucier_golden.json"),
        )
        .unwrap();
        assert_eq!(
            s.paused_first, s.paused_last,
            "the mouth moved while paused"
        );
        assert_eq!(s.paused_first, fresh(s.positions[0]));
        assert_eq!(s.after_seek, fresh(SEEK_S));
        assert_eq!(s.after_resume, fresh(s.positions[2]));
        // The speech moves the mouth between those positions (the test would pass on a still face
        // otherwise).
        assert_ne!(s.after_seek, s.after_resume);
        assert_ne!(s.paused_first, s.after_seek);
    }
}
