//! The CPU linear-head backend is the reference (`forward::pose`) bit for bit, the hand-worked pack
//! poses where the arithmetic says, the GNM bound accepts the reference and rejects a result off by
//! more than it, and bad frames are refused with typed errors that leave the last frame in place.

use glam::Mat4;
use mien_core::gnm::forward;
use mien_core::gnm::{GnmBackend, GnmFrame, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_cpu::conformance::gnm::{
    GnmFrameInput, GnmHarness, GnmInputs, check_gnm, check_pack, compare_gnm, gnm_cases,
    gnm_reference, one_vertex_pack, vertex_bounds,
};
use mien_cpu::conformance::gnm_batch::{GnmBatchInput, check_batch, gnm_batch_cases};
use mien_cpu::{CpuEncoder, CpuGnmBackend, Precision};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: std::env::var("MIEN_PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// The CPU backend as a conformance harness (its exact path).
struct Cpu;

/// The CPU backend's fast path ([`Precision::Fast`]) as a conformance harness.
struct FastCpu;

impl GnmHarness for Cpu {
    fn run(
        &mut self,
        pack: &GnmPack,
        frames: &[GnmFrameInput],
    ) -> mien_core::Result<Vec<PosedVertices>> {
        run_frames(Precision::Exact, pack, frames)
    }

    fn run_batch(
        &mut self,
        uploads: &[GnmBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        run_uploads(Precision::Exact, uploads)
    }
}

impl GnmHarness for FastCpu {
    fn run(
        &mut self,
        pack: &GnmPack,
        frames: &[GnmFrameInput],
    ) -> mien_core::Result<Vec<PosedVertices>> {
        run_frames(Precision::Fast, pack, frames)
    }

    fn run_batch(
        &mut self,
        uploads: &[GnmBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        run_uploads(Precision::Fast, uploads)
    }
}

fn run_frames(
    precision: Precision,
    pack: &GnmPack,
    frames: &[GnmFrameInput],
) -> mien_core::Result<Vec<PosedVertices>> {
    let mut b = CpuGnmBackend::new();
    b.set_precision(precision);
    let h = b.upload_gnm(pack)?;
    let mut out = Vec::new();
    for f in frames {
        b.set_head_ext(h, &f.head_ext, &f.joint_world)?;
        b.encode(&mut CpuEncoder::default())?;
        out.push(b.read_vertices(h)?);
    }
    Ok(out)
}

fn run_uploads(
    precision: Precision,
    uploads: &[GnmBatchInput],
) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
    let mut b = CpuGnmBackend::new();
    b.set_precision(precision);
    let mut handles = Vec::new();
    for u in uploads {
        handles.push(b.upload_gnm_batch(&u.pack, u.frames.len() as u32)?);
    }
    for (u, hs) in uploads.iter().zip(&handles) {
        for (f, h) in u.frames.iter().zip(hs) {
            b.set_head_ext(*h, &f.head_ext, &f.joint_world)?;
        }
    }
    b.encode(&mut CpuEncoder::default())?;
    let read = |hs: &Vec<GnmHandle>| hs.iter().map(|h| b.read_vertices(*h)).collect();
    handles.iter().map(read).collect()
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn the_cpu_backend_is_the_reference_bit_for_bit(case in gnm_cases(300, 120)) {
        let inputs = GnmInputs::new(&case);
        let want = gnm_reference(&inputs.pack, &inputs.frames).unwrap();
        let got = Cpu.run(&inputs.pack, &inputs.frames).unwrap();
        for (g, w) in got.iter().zip(&want) {
            prop_assert_eq!(&g.positions, w);
        }
        let report = check_gnm(&mut Cpu, &case).map_err(TestCaseError::fail)?;
        prop_assert_eq!(report.max_abs, 0.0);
    }

    #[test]
    fn a_batch_poses_each_instance_as_the_reference_bit_for_bit(cases in gnm_batch_cases(3, 100, 40)) {
        let uploads: Vec<GnmBatchInput> = cases.iter().map(GnmBatchInput::new).collect();
        let report = check_batch(&mut Cpu, &uploads).map_err(TestCaseError::fail)?;
        prop_assert_eq!(report.max_abs, 0.0);
        prop_assert_eq!(report.frames, uploads.iter().map(|u| u.frames.len()).sum::<usize>());
    }

    #[test]
    fn the_fast_path_is_within_the_bound(case in gnm_cases(300, 120)) {
        check_gnm(&mut FastCpu, &case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_fast_batch_is_within_the_bound(cases in gnm_batch_cases(3, 100, 40)) {
        let uploads: Vec<GnmBatchInput> = cases.iter().map(GnmBatchInput::new).collect();
        let report = check_batch(&mut FastCpu, &uploads).map_err(TestCaseError::fail)?;
        prop_assert!(report.max_ratio <= 1.0);
    }

    #[test]
    fn the_bound_rejects_an_error_just_past_it(case in gnm_cases(60, 40), pick: u64) {
        let inputs = GnmInputs::new(&case);
        let want = gnm_reference(&inputs.pack, &inputs.frames).unwrap();
        let bounds = vertex_bounds(&inputs.pack, &inputs.frames[0]).unwrap();
        let v = (pick % bounds.len() as u64) as usize;
        prop_assert!(bounds[v] > 0.0 && bounds[v] < 1e-3, "bound {}", bounds[v]);
        let mut got: Vec<PosedVertices> = want.iter().map(|p| PosedVertices { positions: p.clone(), normals: vec![[0.0; 3]; p.len()], tangents: Vec::new() }).collect();
        // Nudge one coordinate by 1.5 bounds (rounded to f32, still > 1.25 bounds away).
        let x = &mut got[0].positions[v][1];
        *x = (f64::from(*x) + 1.5 * bounds[v]) as f32;
        prop_assume!((f64::from(got[0].positions[v][1]) - f64::from(want[0][v][1])).abs() > bounds[v]);
        prop_assert!(compare_gnm(&inputs.pack, &inputs.frames, &got, &want).is_err());
    }

    #[test]
    fn the_gpu_frame_inputs_are_the_reference_expressions(case in gnm_cases(4, 60)) {
        let inputs = GnmInputs::new(&case);
        let (pack, f) = (&inputs.pack, &inputs.frames[0]);
        let mut frame = GnmFrame::new(pack);
        frame.set(&f.head_ext, &f.joint_world).unwrap();
        let bind = forward::from_row_major(&pack.header.bind_transform);
        for (j, m) in frame.skin.iter().enumerate() {
            let want = f.joint_world[j] * forward::from_row_major(&pack.rest_world[j]).inverse() * bind;
            prop_assert_eq!(m.to_cols_array(), want.to_cols_array());
        }
        for (e, s) in frame.scaled.iter().enumerate() {
            prop_assert_eq!(s.to_bits(), (f.head_ext[e] * pack.basis_scale[e]).to_bits());
        }
    }
}

#[test]
fn the_hand_worked_vertex_poses_where_the_arithmetic_says() {
    let hand = one_vertex_pack();
    let mut out = Vec::new();
    forward::pose(
        &hand.pack,
        &hand.frame.head_ext,
        &hand.frame.joint_world,
        &mut out,
    )
    .unwrap();
    for a in 0..3 {
        assert!(
            (out[0][a] - hand.expected[a]).abs() <= 1e-6,
            "axis {a}: {} vs {}",
            out[0][a],
            hand.expected[a]
        );
    }
    let report = check_pack(&mut Cpu, &hand.pack, std::slice::from_ref(&hand.frame)).unwrap();
    assert_eq!(report.max_abs, 0.0);
}

#[test]
fn bad_frames_are_refused_and_leave_the_last_frame() {
    let hand = one_vertex_pack();
    let mut b = CpuGnmBackend::new();
    let h = b.upload_gnm(&hand.pack).unwrap();
    assert_eq!(b.vertex_count(h), 1);
    assert_eq!(b.vertex_count(GnmHandle(9)), 0);
    b.set_head_ext(h, &hand.frame.head_ext, &hand.frame.joint_world)
        .unwrap();
    let short = &hand.frame.head_ext[..5];
    let e = b
        .set_head_ext(h, short, &hand.frame.joint_world)
        .unwrap_err();
    assert!(
        matches!(
            e,
            mien_core::Error::Mismatch {
                expected: 6,
                found: 5,
                ..
            }
        ),
        "{e}"
    );
    let mut nan = hand.frame.head_ext.clone();
    nan[3] = f32::NAN;
    let e = b
        .set_head_ext(h, &nan, &hand.frame.joint_world)
        .unwrap_err();
    assert!(e.to_string().contains("head_ext[3]"), "{e}");
    let e = b
        .set_head_ext(h, &hand.frame.head_ext, &[Mat4::IDENTITY])
        .unwrap_err();
    assert!(
        matches!(
            e,
            mien_core::Error::Mismatch {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{e}"
    );
    let mut inf = hand.frame.joint_world.clone();
    inf[1].w_axis.x = f32::INFINITY;
    assert!(b.set_head_ext(h, &hand.frame.head_ext, &inf).is_err());
    assert!(
        b.set_head_ext(GnmHandle(3), &hand.frame.head_ext, &hand.frame.joint_world)
            .is_err()
    );
    assert!(b.read_vertices(GnmHandle(3)).is_err());
    b.encode(&mut CpuEncoder::default()).unwrap();
    let p = b.read_vertices(h).unwrap();
    assert!((p.positions[0][0] - hand.expected[0]).abs() <= 1e-6);
    assert_eq!(p.normals, vec![[0.0; 3]]);
    assert!(b.bytes() >= hand.pack.byte_len());
}

#[test]
fn before_any_frame_a_head_poses_at_rest() {
    let inputs = GnmInputs::new(&mien_cpu::conformance::gnm::GnmCase {
        shape: mien_core::testing::gnm::GnmShape {
            vertices: 20,
            coeffs: 7,
            regions: 2,
            joints: 3,
            seam: true,
        },
        seed: 11,
        frames: 1,
    });
    let pack = &inputs.pack;
    let mut b = CpuGnmBackend::new();
    let h = b.upload_gnm(pack).unwrap();
    b.encode(&mut CpuEncoder::default()).unwrap();
    let rest = GnmFrameInput {
        head_ext: vec![0.0; pack.coeff_count() + 4],
        joint_world: pack
            .rest_world
            .iter()
            .map(forward::from_row_major)
            .collect(),
    };
    let want = gnm_reference(pack, std::slice::from_ref(&rest)).unwrap();
    assert_eq!(b.read_vertices(h).unwrap().positions, want[0]);
}

proptest! {
    #![proptest_config(config(32))]

    /// The tiled basis (`mien_core::gnm::tiled`) holds every half of the pack at its documented
    /// place `(t, e, 3j + a)` for vertex `v = t·TV + j`, and zero halves past the last vertex.
    #[test]
    fn the_tiled_basis_is_the_pack_basis_permuted(case in gnm_cases(70, 12), tv in 1usize..40) {
        let pack = &GnmInputs::new(&case).pack;
        let (v_n, e_n) = (pack.vertex_count(), pack.coeff_count());
        let tiles = mien_core::gnm::tiled::BasisTiles::new(pack, tv);
        prop_assert_eq!(tiles.tile_count(), v_n.div_ceil(tv));
        prop_assert_eq!(tiles.halves.len(), tiles.tile_count() * e_n * 3 * tv);
        let mut seen = 0usize;
        for t in 0..tiles.tile_count() {
            let tile = tiles.tile(t);
            for e in 0..e_n {
                for j in 0..tv {
                    for a in 0..3 {
                        let got = half::f16::from_bits(tile[e * 3 * tv + 3 * j + a]).to_f32();
                        let v = t * tv + j;
                        if v < v_n {
                            prop_assert_eq!(got.to_bits(), pack.half_at((v * e_n + e) * 3 + a).to_bits());
                            seen += 1;
                        } else {
                            prop_assert_eq!(got.to_bits(), 0);
                        }
                    }
                }
            }
        }
        prop_assert_eq!(seen, v_n * e_n * 3);
        prop_assert!(tiles.tile(tiles.tile_count()).is_empty());
    }
}

/// 40 heads of one pack (the per-head steps on rayon's pool, over the 32-head threshold) pose as
/// the reference bit for bit.
#[test]
fn a_batch_of_forty_is_the_reference_bit_for_bit() {
    let case = mien_cpu::conformance::gnm::GnmCase {
        shape: mien_core::testing::gnm::GnmShape {
            vertices: 300,
            coeffs: 40,
            regions: 3,
            joints: 5,
            seam: true,
        },
        seed: 17,
        frames: 40,
    };
    let input = GnmBatchInput::new(&case);
    let r = check_batch(&mut Cpu, std::slice::from_ref(&input)).unwrap();
    assert_eq!(r.max_abs, 0.0, "{r:?}");
}

/// The fast path really fuses where the CPU can: on a CPU with FMA, 40 heads of 383 coefficients
/// (every term non-zero) differ from the reference's bits somewhere, yet stay within the bound (a
/// fast path that silently fell back to the exact loop would fail the first assertion).
#[test]
fn the_fast_path_fuses_where_the_cpu_has_fma() {
    let case = mien_cpu::conformance::gnm::GnmCase {
        shape: mien_core::testing::gnm::GnmShape {
            vertices: 300,
            coeffs: 383,
            regions: 3,
            joints: 5,
            seam: true,
        },
        seed: 29,
        frames: 40,
    };
    let input = GnmBatchInput::new(&case);
    let exact = run_uploads(Precision::Exact, std::slice::from_ref(&input)).unwrap();
    let fast = run_uploads(Precision::Fast, std::slice::from_ref(&input)).unwrap();
    let r = check_batch(&mut FastCpu, std::slice::from_ref(&input)).unwrap();
    assert!(r.max_ratio <= 1.0, "{r:?}");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("f16c") {
        assert_ne!(exact, fast, "the fast path rounded as the exact one");
        assert!(r.max_abs > 0.0, "{r:?}");
        return;
    }
    println!("notice: this CPU has no FMA + F16C; the fast path runs the exact loop");
    assert_eq!(exact, fast);
}

/// Vertex tiles whose every vertex follows joint 0 alone with no eye (the fast path's one-transform
/// tiles) stay within the bound, next to tiles that do not (the first 200 vertices rigid, the
/// rest as generated; a seam on every vertex), for batches of 1 to 20 heads.
#[test]
fn fast_rigid_tiles_are_within_the_bound() {
    for (seed, heads) in [(3u64, 1u32), (5, 6), (7, 20)] {
        let case = mien_cpu::conformance::gnm::GnmCase {
            shape: mien_core::testing::gnm::GnmShape {
                vertices: 400,
                coeffs: 30,
                regions: 3,
                joints: 5,
                seam: true,
            },
            seed,
            frames: heads,
        };
        let mut input = GnmBatchInput::new(&case);
        let v_n = input.pack.vertex_count();
        for v in 0..200 {
            input.pack.skin_index[v] = [0, 3, 1, 2];
            input.pack.skin_weight[v] = [1.0, 0.0, 0.0, 0.0];
            input.pack.eye_weights[v] = 0.0;
            input.pack.eye_weights[v_n + v] = 0.0;
        }
        let exact = check_batch(&mut Cpu, std::slice::from_ref(&input)).unwrap();
        assert_eq!(exact.max_abs, 0.0, "{exact:?}");
        let fast = check_batch(&mut FastCpu, std::slice::from_ref(&input)).unwrap();
        assert!(fast.max_ratio <= 1.0, "{fast:?}");
    }
}
