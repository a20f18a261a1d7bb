//! A target without deltas in a mesh moves nothing and never takes one of the 32 active slots:
//! Ready Player Me's eye meshes carry all 57 head targets, 51 of them empty.

use std::path::{Path, PathBuf};

use mien_core::io::gltf::import_gltf;
use mien_core::rig::{ControlStats, LimitStats, MorphLimiter, RigData};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

#[test]
fn empty_targets_are_zeroed_before_the_active_limit() {
    let ch = import_gltf(&data("avatars/rpm_male.glb")).unwrap();
    let rig = RigData::from_character(&ch).unwrap();
    // Which weight slots have deltas, counted here from the CSR entries.
    let mut has = vec![false; rig.weight_count as usize];
    for &t in &rig.morph_target {
        has[t as usize] = true;
    }
    let mut w = vec![0.5f32; rig.weight_count as usize];
    let (mut lim, mut scratch, mut stats) = (
        MorphLimiter::new(),
        LimitStats::default(),
        ControlStats::default(),
    );
    rig.limit_weights(&mut w, &mut lim, &mut scratch, &mut stats);
    let mut checked = 0;
    for (ii, inst) in rig.instances.iter().enumerate() {
        let range = inst.weight_base as usize..(inst.weight_base + inst.target_count) as usize;
        let real = range.clone().filter(|&s| has[s]).count();
        let kept = range.clone().filter(|&s| w[s] != 0.0).count();
        let dropped = stats.dropped.iter().filter(|d| d.0 == ii as u32).count();
        // Empty slots end at 0; the real ones are limited among themselves only.
        assert!(range.clone().all(|s| has[s] || w[s] == 0.0));
        assert_eq!(kept, real.min(32), "instance {ii}");
        assert_eq!(dropped, real.saturating_sub(32), "instance {ii}");
        if inst.target_count > 0 && real < 32 && real < inst.target_count as usize {
            checked += 1;
        }
    }
    assert!(
        checked >= 2,
        "meshes with empty targets (eyes, teeth): {checked}"
    );
}
