//! What the GNM kernel reads, checked on the CPU: the vertex-range plan covers every vertex once and
//! keeps every binding under the limit (and is as coarse as the limit allows), each chunk's basis
//! slice holds the pack's halves verbatim at `first_half`, the skin conversion renormalises like the
//! reference, a batch's per-frame arrays hold each instance's frame in its own slice (WGSL layout),
//! and the lane and dispatch choices cover every vertex.

use glam::{Mat4, Vec3};
use mien_core::gnm::GnmFrame;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack, random_head_ext, random_joint_world};
use mien_shaders::data::gnm::{
    GNM_OUTPUT_BYTES, GNM_STATIC_BYTES, GnmBatchFrames, gnm_chunk_arrays, gnm_skin, plan_gnm_chunks,
};
use mien_shaders::{GnmFrameHeader, JointMatrices, WORKGROUP_SIZE, gnm_dispatch, gnm_lanes};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// Fixed seed (STYLE 9) unless `PROPTEST_RNG_SEED` asks for another.
fn config() -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: 64,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// Bytes of the basis words chunk `(v0, count)` binds.
fn basis_bytes(v0: u32, count: u32, coeffs: u32) -> u64 {
    let n = 3 * u64::from(coeffs);
    let (h0, h1) = (u64::from(v0) * n, u64::from(v0 + count) * n);
    (h1.div_ceil(2) - h0 / 2) * 4
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_plan_covers_every_vertex_within_the_limit(v in 1u32..5000, e in 1u32..400, n in 1u32..40, limit in 256u64..100_000) {
        let per_vertex = GNM_STATIC_BYTES.max(GNM_OUTPUT_BYTES * u64::from(n));
        match plan_gnm_chunks(v, e, n, limit) {
            Ok(plan) => {
                let mut next = 0;
                for (i, &(v0, count)) in plan.iter().enumerate() {
                    prop_assert_eq!(v0, next);
                    prop_assert!(count > 0);
                    prop_assert!(basis_bytes(v0, count, e) <= limit, "chunk {} basis {} > {}", i, basis_bytes(v0, count, e), limit);
                    prop_assert!(u64::from(count) * GNM_STATIC_BYTES <= limit);
                    prop_assert!(u64::from(count) * GNM_OUTPUT_BYTES * u64::from(n) <= limit);
                    // As coarse as the limit allows: one more vertex would not fit.
                    if i + 1 < plan.len() {
                        prop_assert!(basis_bytes(v0, count + 1, e) > limit || u64::from(count + 1) * per_vertex > limit);
                    }
                    next = v0 + count;
                }
                prop_assert_eq!(next, v);
            }
            Err(r) => {
                let need = basis_bytes(r.vertex, 1, e).max(per_vertex);
                prop_assert!(need > limit, "refused vertex {} of {} bytes under {}", r.vertex, r.bytes, limit);
                prop_assert_eq!(r.bytes, need);
            }
        }
    }

    #[test]
    fn chunk_arrays_hold_the_pack_verbatim(v in 1u32..200, e in 1u32..24, joints in 1u32..6, seam: bool, seed: u64, rows in 1u64..40) {
        let pack = random_gnm_pack(seed, GnmShape { vertices: v, coeffs: e, regions: 3, joints, seam });
        let limit = (6 * u64::from(e) + 8) * rows + 256;
        let plan = plan_gnm_chunks(v, e, 1, limit).unwrap();
        let n = 3 * e as usize;
        let half = |words: &[u32], i: usize| (words[i / 2] >> (16 * (i % 2))) as u16;
        for (v0, count) in plan {
            let a = gnm_chunk_arrays(&pack, v0, count);
            prop_assert_eq!(a.first_half as usize, (v0 as usize * n) % 2);
            prop_assert_eq!(a.statics.len(), 2 * count as usize);
            for l in 0..count as usize {
                let g = v0 as usize + l;
                for k in 0..n {
                    let want = half(&pack.basis, g * n + k);
                    prop_assert_eq!(half(a.basis, a.first_half as usize + l * n + k), want);
                    prop_assert_eq!(half::f16::from_bits(want).to_f32().to_bits(), pack.basis_at(g, k / 3, k % 3).to_bits());
                }
                let (s0, s1) = (a.statics[2 * l], a.statics[2 * l + 1]);
                prop_assert_eq!([s0[0], s0[1], s0[2]], pack.neutral[g]);
                prop_assert_eq!(s0[3], pack.eye_weights[g]);
                prop_assert_eq!(s1[3], pack.eye_weights[v as usize + g]);
                prop_assert_eq!([s1[0], s1[1], s1[2]], pack.seam.as_ref().map_or([0.0; 3], |s| s[g]));
                prop_assert_eq!((a.joints[l], a.weights[l]), gnm_skin(&pack, g));
            }
        }
    }

    #[test]
    fn skin_weights_are_renormalised_and_bare_vertices_use_bind(v in 1u32..300, joints in 1u32..6, seed: u64) {
        let pack = random_gnm_pack(seed, GnmShape { vertices: v, coeffs: 2, regions: 1, joints, seam: false });
        for i in 0..v as usize {
            let (j, w) = gnm_skin(&pack, i);
            let total: f32 = pack.skin_weight[i].iter().sum();
            if total > 0.0 {
                let sum: f32 = w.iter().sum();
                prop_assert!((sum - 1.0).abs() <= 4.0 * f32::EPSILON, "weights sum to {}", sum);
                for k in 0..4 {
                    prop_assert!(j[k] < joints, "palette index {} of {} joints", j[k], joints);
                    if pack.skin_weight[i][k] != 0.0 {
                        prop_assert_eq!(j[k], u32::from(pack.skin_index[i][k]));
                    }
                }
            } else {
                prop_assert_eq!((j, w), ([joints, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]));
            }
        }
    }

    #[test]
    fn batch_frames_hold_each_instance_in_its_own_slice(e in 1u32..50, joints in 1u32..6, n in 1usize..5, seed: u64) {
        let pack = random_gnm_pack(seed, GnmShape { vertices: 3, coeffs: e, regions: 2, joints, seam: true });
        let rest = GnmFrame::new(&pack);
        let mut batch = GnmBatchFrames::new(&rest, n);
        prop_assert_eq!((batch.instances(), batch.palette_len(), batch.coeff_count()), (n, joints as usize + 1, e as usize));
        // Instance k gets its own frame; the others keep theirs.
        let mut frames = vec![rest.clone(); n];
        for (k, f) in frames.iter_mut().enumerate() {
            let s = seed.wrapping_add(k as u64 + 1);
            f.set(&random_head_ext(s, &pack), &random_joint_world(s, &pack)).unwrap();
            batch.write(k, f);
        }
        let (ue, up) = (e as usize, joints as usize + 1);
        for (k, frame) in frames.iter().enumerate() {
            let header = batch.heads[k];
            for c in 0..3 {
                let col = frame.eye_rotation[0].col(c);
                prop_assert_eq!(header.eye_rot_l[c], [col.x, col.y, col.z, 0.0]);
                let col = frame.eye_rotation[1].col(c);
                prop_assert_eq!(header.eye_rot_r[c], [col.x, col.y, col.z, 0.0]);
            }
            prop_assert_eq!(&header.eye_centre_l[..3], &pack.eye_positions[0][..]);
            prop_assert_eq!(&header.eye_centre_r[..3], &pack.eye_positions[1][..]);
            prop_assert_eq!(&batch.scaled[k * ue..(k + 1) * ue], &frame.scaled[..]);
            let palette = &batch.palette[k * up..(k + 1) * up];
            prop_assert_eq!(palette[joints as usize].m, frame.bind.to_cols_array());
            for (p, m) in palette.iter().zip(&frame.skin) {
                prop_assert_eq!(p.m, m.to_cols_array());
            }
            // The byte ranges the backends write for instance k.
            let [(ho, hl), (so, sl), (po, pl)] = batch.ranges(k);
            prop_assert_eq!((ho, hl), (128 * k as u64, 128));
            prop_assert_eq!((so, sl), (4 * (k * ue) as u64, 4 * ue as u64));
            let jb = std::mem::size_of::<JointMatrices>() as u64;
            prop_assert_eq!((po, pl), (jb * (k * up) as u64, jb * up as u64));
        }
        prop_assert_eq!(std::mem::size_of::<GnmFrameHeader>(), 128);
    }
}

#[test]
fn lanes_follow_the_coefficient_count() {
    // ⌈3E/2⌉ words / 4 per lane, a power of two in 1..=64.
    assert_eq!(gnm_lanes(383), 64);
    assert_eq!(gnm_lanes(57), 32);
    assert_eq!(gnm_lanes(4), 2);
    assert_eq!(gnm_lanes(1), 1);
    assert_eq!(gnm_lanes(4096), 64);
    for e in 1..2000 {
        let l = gnm_lanes(e);
        assert!(l.is_power_of_two() && WORKGROUP_SIZE % l == 0, "E={e}: {l}");
    }
}

#[test]
fn the_dispatch_covers_every_vertex() {
    // Hand-worked: 26 700 vertices at 64 lanes → one vertex per workgroup → 26 700 groups in a row.
    assert_eq!(gnm_dispatch(26_700, 64, 65_535), Some((26_700, 1, 26_700)));
    // 100 000 at 64 lanes → 2 rows of 65 535 (the second partly idle).
    assert_eq!(gnm_dispatch(100_000, 64, 65_535), Some((65_535, 2, 65_535)));
    // 10 vertices at 2 lanes → 32 per group → 1 group.
    assert_eq!(gnm_dispatch(10, 2, 65_535), Some((1, 1, 1)));
    assert_eq!(gnm_dispatch(10, 64, 3), None);
    for (count, lanes) in [(1u32, 1u32), (63, 2), (64, 4), (65, 64), (4_194_304, 64)] {
        let (x, y, row) = gnm_dispatch(count, lanes, 65_535).unwrap();
        assert_eq!(row, x);
        assert!(u64::from(x) * u64::from(y) * u64::from(64 / lanes) >= u64::from(count));
    }
}

#[test]
fn the_rest_frame_skins_with_bind() {
    let pack = random_gnm_pack(
        7,
        GnmShape {
            vertices: 4,
            coeffs: 3,
            regions: 1,
            joints: 4,
            seam: false,
        },
    );
    let frame = GnmFrame::new(&pack);
    assert!(frame.scaled.iter().all(|x| *x == 0.0));
    for m in &frame.skin {
        // world = rest, so rest · rest⁻¹ · bind = bind up to rounding.
        let p = Vec3::new(0.1, -0.2, 0.05);
        assert!(
            (m.transform_point3(p) - frame.bind.transform_point3(p))
                .abs()
                .max_element()
                < 1e-5
        );
    }
    assert_ne!(frame.bind, Mat4::IDENTITY);
}
