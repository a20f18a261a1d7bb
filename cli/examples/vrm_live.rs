//! A VRM avatar driven live: Live Link Face packets (here a recording fed in-process; in an app,
//! the iPhone's UDP stream on port 11111) go through a `LiveReceiver`'s jitter buffer onto a VRM
//! 0.x avatar, whose expressions (`aa`, `blinkLeft`, `happy`, …) follow the ARKit → VRM table; a
//! gaze set by the application turns the look expressions through the avatar's lookAt curves.
//! What `mien live` does, as a library user writes it.
//!
//! ```sh
//! cargo run --release --example vrm_live
//! cargo run --release --example vrm_live -- AVATAR.vrm TAKE.gesichter
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien::core::vrm::Gaze;
use mien::runtime::live::{LiveOptions, LiveReceiver, read_recording};
use mien::{Asset, Device, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// What the session saw: per played packet, the `aa` expression's output and the face's `ah`
/// target weight; the receiver's counts.
struct Session {
    aa: Vec<f32>,
    ah: Vec<f32>,
    played: u64,
    look_left: f32,
}

fn run(avatar: &Path, take: &Path) -> mien::Result<Session> {
    let asset = Arc::new(Asset::load(avatar)?);
    // Pose only: this example reads expressions and joints, not splats.
    let pose_only = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let mut rt = Runtime::new(asset.clone(), &Device::Cpu, &pose_only)?;
    let ch = asset.character();
    let vrm = ch.vrm.as_ref().expect("a VRM avatar");
    let control = vrm.control_node.index();
    let aa = vrm.expression("aa").expect("an aa expression");
    // The first bind of `aa` is the face target it moves.
    let bind = vrm.expressions[aa].morph_binds[0];
    // Port 0 picks a free port; an app listens on 11111 (LiveOptions::default()).
    let mut rx = LiveReceiver::bind(&LiveOptions {
        port: 0,
        delay_s: 0.0,
        ..LiveOptions::default()
    })?;
    let mut out = Session {
        aa: Vec::new(),
        ah: Vec::new(),
        played: 0,
        look_left: 0.0,
    };
    // A simulated clock: each packet arrives at its own frame time (an app calls rx.poll() and
    // rx.next_frame() on the wall clock instead).
    let mut t0 = None;
    let mut last = 0.0;
    for datagram in read_recording(take)? {
        let Ok(p) = mien::runtime::live::decode(&datagram) else {
            continue;
        };
        let now = p.time.seconds() - *t0.get_or_insert(p.time.seconds());
        rx.offer_datagram_at(&datagram, now);
        last = now;
        while let Some(frame) = rx.next_frame_at(now) {
            rt.instance_mut(0)?
                .set_live_frame(frame.packet.blendshapes(), frame.packet.angles())?;
            rt.update(now)?;
            let pose = rt.instance(0)?.pose();
            out.aa.push(pose.weights[control][aa]);
            out.ah.push(pose.weights[bind.node.index()][bind.target]);
        }
    }
    out.played = rx.stats().played;
    // The application looks 30° to the avatar's left.
    rt.instance_mut(0)?.set_vrm_gaze(Some(Gaze {
        yaw_deg: 30.0,
        pitch_deg: 0.0,
    }))?;
    rt.update(last + 1.0 / 60.0)?;
    let look = vrm.expression("lookLeft").expect("a lookLeft expression");
    out.look_left = rt.instance(0)?.pose().weights[control][look];
    Ok(out)
}

fn main() -> mien::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let avatar = args
        .first()
        .map_or_else(|| data("vrm/Godette_vrm_v4.vrm"), PathBuf::from);
    let take = args
        .get(1)
        .map_or_else(|| data("livelink-udp/dao.gesichter"), PathBuf::from);
    let s = run(&avatar, &take)?;
    let max = s.aa.iter().copied().fold(0.0f32, f32::max);
    println!(
        "{} packets played; the aa expression reached {max:.3}; lookLeft at a 30° gaze: {:.3}",
        s.played, s.look_left
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_take_moves_the_mouth_through_aa_and_the_gaze_turns_look_left() {
        let s = run(
            &data("vrm/Godette_vrm_v4.vrm"),
            &data("livelink-udp/dao.gesichter"),
        )
        .unwrap();
        assert_eq!(s.played, 180);
        assert!(s.aa.iter().any(|&w| w > 0.05), "the jaw opens in the take");
        // Godette's `aa` binds `ah` at weight 1 (100 in the 0.x file); `angry` adds ¼ of its own
        // output, so `ah` is at least `aa`.
        for (a, h) in s.aa.iter().zip(&s.ah) {
            assert!(h + 1e-6 >= *a, "ah {h} < aa {a}");
        }
        assert!(s.look_left > 0.0);
    }
}
