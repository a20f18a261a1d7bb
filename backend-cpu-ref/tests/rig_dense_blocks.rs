//! The CPU rig backend's dense morph blocks (`rig_tiles`, used for rigs dense enough) pose every
//! vertex as the reference `RigData::pose_vertex` bit for bit — dense, mid and sparse random rigs
//! (the sparse ones take the CSR path), batches of several instances — including a vertex at
//! `-0.0` that no target moves inside a tile an active target moves (its lane is left alone, not
//! given `+0`).

use glam::Mat4;
use mien_core::rig::{RigBackend, RigControls, RigData};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_cpu::{CpuEncoder, CpuRigBackend};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// The reference pose of every vertex: the rig's own weight rules, then `pose_vertex`.
fn reference(rig: &RigData, controls: &RigControls) -> Vec<u32> {
    let mut frame = mien_core::rig::FrameControls::new(rig);
    frame.set(controls).unwrap();
    (0..rig.vertex_count())
        .flat_map(|v| {
            let (p, n) = rig.pose_vertex(v, &frame.weights, &frame.palette, &frame.normal_palette);
            p.into_iter().chain(n).map(f32::to_bits)
        })
        .collect()
}

fn posed_bits(b: &CpuRigBackend, h: mien_core::rig::RigHandle) -> Vec<u32> {
    let (p, n) = b.posed(h);
    p.iter()
        .zip(n)
        .flat_map(|(p, n)| p.iter().chain(n).map(|x| x.to_bits()))
        .collect()
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn every_density_poses_as_the_reference_bit_for_bit(
        vertices in 1u32..400,
        targets in 1u32..40,
        density in prop::sample::select(vec![0.02f32, 0.3, 0.95]),
        instances in 1u32..5,
        seed: u64,
    ) {
        let rig = random_rig(seed, RigShape { vertices, targets, density, joints: 3 });
        let mut b = CpuRigBackend::new();
        let hs = b.upload_batch(&rig, instances).unwrap();
        let controls: Vec<RigControls> =
            (0..instances).map(|i| random_controls(seed ^ u64::from(i + 1), &rig)).collect();
        for (h, c) in hs.iter().zip(&controls) {
            b.set_controls(*h, c).unwrap();
        }
        b.encode(&mut CpuEncoder::default()).unwrap();
        for (h, c) in hs.iter().zip(&controls) {
            prop_assert_eq!(posed_bits(&b, *h), reference(&rig, c));
        }
    }
}

#[test]
fn a_vertex_no_target_moves_at_negative_zero_poses_as_the_reference() {
    // Dense rig (every vertex but 0 moved by every target); vertex 0 sits at (-0, -0, -0) and no
    // target moves it, while an active target moves its tile's other vertices.
    let mut rig = random_rig(
        5,
        RigShape {
            vertices: 64,
            targets: 4,
            density: 1.0,
            joints: 1,
        },
    );
    rig.positions[0] = [-0.0, -0.0, -0.0];
    // Drop vertex 0's entries.
    let first_end = rig.morph_offsets[1] as usize;
    rig.morph_target.drain(..first_end);
    rig.morph_position.drain(..first_end);
    rig.morph_normal.drain(..first_end);
    if !rig.morph_tangent.is_empty() {
        rig.morph_tangent.drain(..first_end);
    }
    for o in &mut rig.morph_offsets[1..] {
        *o -= first_end as u32;
    }
    rig.validate().unwrap();
    let mut controls = random_controls(9, &rig);
    controls.weights.iter_mut().for_each(|w| *w = 0.5);
    controls.palette = vec![Mat4::IDENTITY; controls.palette.len()];
    let mut b = CpuRigBackend::new();
    let h = b.upload(&rig).unwrap();
    b.set_controls(h, &controls).unwrap();
    b.encode(&mut CpuEncoder::default()).unwrap();
    assert_eq!(posed_bits(&b, h), reference(&rig, &controls));
}
