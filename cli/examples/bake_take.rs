//! Bake a take into a character's own GLB, check it, and read its timing record back — what
//! `mien bake` and `mien bake --verify` do, through the library: Face Cap's `facecap.glb` lip-synced
//! from a Gentle alignment over the Live Link Face recording's other channels.
//!
//! ```sh
//! cargo run --release --example bake_take                # writes ./facecap-baked.glb
//! cargo run --release --example bake_take -- OUT.glb
//! ```
//!
//! Any glTF engine plays the appended animation (three.js's AnimationMixer does, in the browser
//! test); `verify` refuses the file if a facial part, a key or the record is edited afterwards;
//! `alignment` recovers the utterance's label, origin, duration and every interval, so the
//! application can play the same audio against the animation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien::runtime::bake::{BakeOptions, BakeReport, TimingRecord, alignment, bake, verify};
use mien::{Asset, Device, Runtime, RuntimeOptions, Speech, SpeechOptions};

/// `../shared/data` beside the repository (where the tests read real inputs).
fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// Bake `seconds` of the take at 30 keys per second into `out`; verify it and recover its timing
/// record.
fn run(out: &Path, seconds: u32) -> mien::Result<(BakeReport, TimingRecord)> {
    let character = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&character)?);
    // Pose only: a bake samples the rig, not splats.
    let options = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &options)?;
    let speech = Speech::from_file(
        data("gentle/lucier_golden.json"),
        &SpeechOptions::default(),
        asset.character(),
    )?;
    rt.instance_mut(0)?
        .play_livelink_csv(data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"))?
        .set_speech(Some(speech))?;
    let source = std::fs::read(&character).map_err(|e| mien::core::Error::io(&character, e))?;
    let opts = BakeOptions::new("lucier", 30.0, 30 * seconds + 1);
    let (glb, report) = bake(&mut rt, &source, &opts)?;
    mien::core::io::atomic::write_atomic_bytes(out, &glb)?;
    // Read back as a user of the file would: verify, then the timing record.
    let bytes = std::fs::read(out).map_err(|e| mien::core::Error::io(out, e))?;
    let name = out.display().to_string();
    let checked = verify(&bytes, &name)?;
    println!(
        "{name}: takes {:?}, {} facial parts unchanged",
        checked.takes, checked.parts
    );
    let timing = alignment(&bytes, &name, "lucier")?.expect("a speech take has a timing record");
    Ok((report, timing))
}

fn main() -> mien::Result<()> {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("facecap-baked.glb"), PathBuf::from);
    let (report, timing) = run(&out, 10)?;
    println!(
        "{} keys, {} weight and {} joint channels, {} bytes; utterance `{}` at {} s on the media clock, \
         {:.2} s, {} intervals ({}, {})",
        report.keys,
        report.weight_channels,
        report.transform_channels,
        report.bytes,
        timing.label,
        timing.origin_s,
        timing.duration_s,
        timing.intervals.len(),
        timing.mapping_revision,
        timing.timing_revision
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baked_take_verifies_and_keeps_its_timing_record() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("baked.glb");
        let (report, timing) = run(&out, 2).unwrap();
        assert_eq!(report.keys, 61);
        assert!(report.weight_channels >= 1, "{report:?}");
        // The Gentle file's first aligned word is "I" at 0 s: `ay_S`, 70 ms.
        assert_eq!(timing.intervals[0].unit, "AY");
        assert!((timing.intervals[0].end_s - 0.07).abs() < 1e-6);
        assert_eq!(timing.origin_s, 0.0);
        assert_eq!(timing.mapping_revision, "mien-arpabet-viseme-v1");
    }
}
