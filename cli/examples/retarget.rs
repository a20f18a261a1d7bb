//! Retarget a walk from one skeleton onto another character and play it — what `mien retarget`
//! does, through the library: the Quaternius knight's `Walking` clip (Blender names, `UpperLeg.L`)
//! onto the Ready Player Me avatar (Mixamo names, `LeftUpLeg`), both skeletons turned into T-poses
//! first so the knight's arm rest does not carry over. Instance 1 of the runtime walks while
//! instance 0 stands at rest; the walking instance's splats at 0.5 s are written as an SPZ.
//!
//! ```sh
//! cargo run --release --example retarget                 # writes ./walk.spz
//! cargo run --release --example retarget -- OUT.spz
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien::retarget::{
    Reference, RetargetOptions, RetargetReport, RetargetRequest, load_source, retarget,
};
use mien::{Asset, Device, LiftKind, LiftOptions, Runtime, RuntimeOptions, SurfaceOptions};

/// `../shared/data` beside the repository (where the tests read real inputs).
fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// Retarget, play on instance 1 of 2, write instance 1's splats at 0.5 s to `out` (surface lift of
/// `gaussians`). Returns the report and the two feet's world heights (left, right) at each of
/// `times`.
fn run(
    out: &Path,
    gaussians: u32,
    times: &[f64],
) -> mien::Result<(RetargetReport, Vec<(f32, f32)>)> {
    let knight = load_source(data("bodies/KnightCharacter.glb"))?;
    let avatar = Asset::load(data("avatars/rpm_male.glb"))?;
    let request = RetargetRequest {
        options: RetargetOptions {
            source_reference: Reference::TPose,
            target_reference: Reference::TPose,
            strict: false,
        },
        ..RetargetRequest::clip("HumanArmature|Walking")
    };
    let walk = retarget(&knight, &avatar, &request)?;
    let asset = Arc::new(walk.asset);
    let options = RuntimeOptions {
        instances: 2,
        lift: Some(LiftOptions {
            kind: LiftKind::Surface(SurfaceOptions {
                target: gaussians,
                ..SurfaceOptions::default()
            }),
            ..LiftOptions::default()
        }),
    };
    let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &options)?;
    rt.instance_mut(1)?
        .play_clips(&[walk.clip])?
        .set_drive_timing(0.0, true)?;
    let ch = asset.character();
    let foot = |name: &str| {
        ch.nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name))
            .expect("the avatar has its feet")
    };
    let (l, r) = (foot("LeftFoot"), foot("RightFoot"));
    let mut feet = Vec::new();
    for &t in times {
        rt.update(t)?;
        let pose = rt.instance(1)?.pose().clone();
        let (mut scratch, mut world) = (Vec::new(), Vec::new());
        ch.world_matrices(&pose, &mut scratch, &mut world);
        feet.push((world[l].w_axis.y, world[r].w_axis.y));
    }
    rt.update(0.5)?;
    let splats = rt.splats(1)?;
    mien::core::io::splat_file::write_splats(out, &splats, &[splats.all()])?;
    Ok((walk.report, feet))
}

fn main() -> mien::Result<()> {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("walk.spz"), PathBuf::from);
    let times: Vec<f64> = (0..6).map(|i| f64::from(i) * 0.2).collect();
    let (report, feet) = run(&out, 100_000, &times)?;
    println!(
        "{} bones mapped (scale {:.3}, {}), {} target bones left at rest; wrote {}",
        report.mapped.len(),
        report.scale,
        report.scale_from,
        report.unmapped_target.len(),
        out.display()
    );
    for (t, (l, r)) in times.iter().zip(&feet) {
        println!("  {t:.1} s: left foot {l:.3} m, right foot {r:.3} m");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_avatar_walks_the_knights_walk() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("walk.spz");
        let times: Vec<f64> = (0..12).map(|i| f64::from(i) * 0.1).collect();
        let (report, feet) = run(&out, 5_000, &times).unwrap();
        assert_eq!(report.mapped.len(), 21);
        assert!(
            report
                .mapped
                .iter()
                .any(|m| m.target == "LeftUpLeg" && m.source == "UpperLeg.L")
        );
        // A walk lifts each foot in turn: each is at some time the higher by more than 3 cm.
        assert!(feet.iter().any(|(l, r)| l - r > 0.03), "{feet:?}");
        assert!(feet.iter().any(|(l, r)| r - l > 0.03), "{feet:?}");
        assert!(std::fs::metadata(&out).unwrap().len() > 1000);
    }
}
