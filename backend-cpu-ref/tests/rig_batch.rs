//! N characters sharing one rig on the CPU backend (`RigBackend::upload_batch`): every instance
//! poses exactly as a separate upload with the same controls (the same reference math, so the same
//! bits), re-posing one instance leaves the others alone, the rig is held once (`bytes()` grows by
//! `4W + 100P + 24V` per instance: weights, palette and normal matrices, posed positions and
//! normals), and lifting instance k equals lifting a single upload.

use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{PosedVertices, RigBackend};
use mien_core::sink::SplatSink;
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_cpu::conformance::rig_batch::{
    RigBatchHarness, RigBatchInput, batch_reference, check_rig_batch, rig_batch_cases,
};
use mien_cpu::{CpuDebugLift, CpuEncoder, CpuRigBackend, CpuSplatSink, Precision};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x6d69_656e),
        ..Config::default()
    }
}

struct Cpu;

/// The fast path ([`Precision::Fast`]) as a batch harness.
struct FastCpu;

impl RigBatchHarness for Cpu {
    fn run_batch(
        &mut self,
        uploads: &[RigBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        run(Precision::Exact, uploads)
    }
}

impl RigBatchHarness for FastCpu {
    fn run_batch(
        &mut self,
        uploads: &[RigBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        run(Precision::Fast, uploads)
    }
}

fn run(
    precision: Precision,
    uploads: &[RigBatchInput],
) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
    let mut b = CpuRigBackend::new();
    b.set_precision(precision);
    let mut handles = Vec::new();
    for u in uploads {
        let hs = b.upload_batch(&u.rig, u.controls.len() as u32)?;
        for (h, c) in hs.iter().zip(&u.controls) {
            b.set_controls(*h, c)?;
        }
        handles.push(hs);
    }
    b.encode(&mut CpuEncoder::default())?;
    let read = |hs: &Vec<_>| hs.iter().map(|h| b.read_vertices(*h)).collect();
    handles.iter().map(read).collect()
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn batch_instances_pose_as_separate_uploads(uploads in rig_batch_cases(3, 2000, 4)) {
        check_rig_batch(&mut Cpu, &uploads).map_err(TestCaseError::fail)?;
        let got = Cpu.run_batch(&uploads).unwrap();
        prop_assert!(got == batch_reference(&uploads).unwrap(), "not bit-identical");
    }

    #[test]
    fn fast_batches_are_within_the_bound(uploads in rig_batch_cases(3, 2000, 4)) {
        check_rig_batch(&mut FastCpu, &uploads).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn fast_rigid_rigs_are_within_the_bound(uploads in rig_batch_cases(2, 2000, 4), joint: u32) {
        let uploads: Vec<RigBatchInput> = uploads.into_iter().map(|u| rigid(u, joint)).collect();
        check_rig_batch(&mut FastCpu, &uploads).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn lifting_instance_k_equals_lifting_a_single_upload(uploads in rig_batch_cases(1, 500, 4), k in 0usize..4) {
        let u = &uploads[0];
        let k = k % u.controls.len();
        let nv = u.rig.vertex_count() as u32;
        let lifted = |b: &CpuRigBackend, h| {
            let mut sink = CpuSplatSink::new(nv + 9);
            let range = sink.allocate(nv + 9).unwrap();
            let mut l = CpuDebugLift::new(b, h, &sink, DebugLiftParams::new(range, nv)).unwrap();
            l.encode(&mut CpuEncoder::default(), b, &mut sink).unwrap();
            sink.buffers().clone()
        };
        let mut batch = CpuRigBackend::new();
        let hs = batch.upload_batch(&u.rig, u.controls.len() as u32).unwrap();
        for (h, c) in hs.iter().zip(&u.controls) {
            batch.set_controls(*h, c).unwrap();
        }
        batch.encode(&mut CpuEncoder::default()).unwrap();
        let mut single = CpuRigBackend::new();
        let h1 = single.upload(&u.rig).unwrap();
        single.set_controls(h1, &u.controls[k]).unwrap();
        single.encode(&mut CpuEncoder::default()).unwrap();
        prop_assert!(lifted(&batch, hs[k]) == lifted(&single, h1));
    }
}

#[test]
fn the_rig_is_held_once_and_reposing_one_instance_leaves_the_others() {
    let shape = RigShape {
        vertices: 800,
        targets: 12,
        density: 0.3,
        joints: 5,
    };
    let rig = random_rig(9, shape);
    let mut one = CpuRigBackend::new();
    one.upload(&rig).unwrap();
    let mut b = CpuRigBackend::new();
    let hs = b.upload_batch(&rig, 3).unwrap();
    assert_eq!(b.len(), 3);
    // 4·12 + 100·5 + 24·800 bytes per further instance, + 16·800 of tangents (odd seed: the rig
    // carries them).
    assert!(!rig.tangents.is_empty());
    assert_eq!(
        b.bytes() - one.bytes(),
        2 * (4 * 12 + 100 * 5 + 24 * 800 + 16 * 800)
    );
    let controls: Vec<_> = (0..3).map(|i| random_controls(40 + i, &rig)).collect();
    for (h, c) in hs.iter().zip(&controls) {
        b.set_controls(*h, c).unwrap();
    }
    b.encode(&mut CpuEncoder::default()).unwrap();
    let before: Vec<_> = hs.iter().map(|h| b.read_vertices(*h).unwrap()).collect();
    assert!(before[0] != before[1]);
    b.set_controls(hs[1], &controls[2]).unwrap();
    b.encode(&mut CpuEncoder::default()).unwrap();
    let after: Vec<_> = hs.iter().map(|h| b.read_vertices(*h).unwrap()).collect();
    assert_eq!(before[0], after[0]);
    assert_eq!(before[2], after[2]);
    assert_eq!(after[1], after[2]);
    assert!(b.upload_batch(&rig, 0).is_err());
}

/// `u` with every vertex bound to one joint alone (weight 1): the fast path's rigid tiles.
fn rigid(mut u: RigBatchInput, joint: u32) -> RigBatchInput {
    let j = joint % u.rig.palette.len() as u32;
    u.rig.joints.fill([j, 0, 0, 0]);
    u.rig.weights.fill([1.0, 0.0, 0.0, 0.0]);
    u
}

/// The fast path really fuses where the CPU can: a dense rig of 16 instances (its blocks and its
/// rigid tiles) differs from the reference's bits somewhere yet stays within the bound; without
/// FMA it is the exact path.
#[test]
fn the_fast_path_fuses_where_the_cpu_has_fma() {
    let shape = RigShape {
        vertices: 1000,
        targets: 40,
        density: 0.9,
        joints: 3,
    };
    for rigid_tiles in [false, true] {
        let mut u = RigBatchInput::new(shape, 23, 16);
        if rigid_tiles {
            u = rigid(u, 2);
        }
        let uploads = [u];
        check_rig_batch(&mut FastCpu, &uploads).unwrap();
        let (exact, fast) = (
            run(Precision::Exact, &uploads).unwrap(),
            run(Precision::Fast, &uploads).unwrap(),
        );
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx")
        {
            assert_ne!(
                exact, fast,
                "rigid {rigid_tiles}: the fast path rounded as the exact one"
            );
            continue;
        }
        println!("notice: this CPU has no AVX + FMA; the fast path runs the exact loop");
        assert_eq!(exact, fast);
    }
}
