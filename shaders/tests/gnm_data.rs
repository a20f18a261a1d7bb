//! What the GNM kernel reads, checked on the CPU: the vertex-range plan covers every vertex once and
//! keeps every binding under the limit in whole tiles (and is as coarse as the limit allows), each
//! chunk's basis holds the pack's halves at their tiled places, the skin conversion renormalises
//! like the reference, a batch's per-frame arrays hold each instance's frame in its own slice (WGSL
//! layout), and the dispatch covers every tile and instance.

use glam::{Mat4, Vec3};
use mien_core::gnm::GnmFrame;
use mien_core::gnm::tiled::BasisTiles;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack, random_head_ext, random_joint_world};
use mien_shaders::data::gnm::{
    GNM_OUTPUT_BYTES, GNM_STATIC_BYTES, GnmBatchFrames, gnm_chunk_arrays, gnm_skin, plan_gnm_chunks,
};
use mien_shaders::{
    GNM_INSTANCE_BLOCK, GNM_TILE_VERTICES, GnmFrameHeader, JointMatrices, gnm_dispatch,
};
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

const TV: u64 = GNM_TILE_VERTICES as u64;

/// Bytes of the tiled basis chunk `(v0, count)` binds: whole tiles of `6·E·64` bytes.
fn basis_bytes(count: u32, coeffs: u32) -> u64 {
    u64::from(count).div_ceil(TV) * 6 * u64::from(coeffs) * TV
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_plan_covers_every_vertex_within_the_limit(v in 1u32..50_000, e in 1u32..400, n in 1u32..40, limit in 256u64..1_000_000) {
        let per_vertex = GNM_STATIC_BYTES.max(GNM_OUTPUT_BYTES * u64::from(n));
        match plan_gnm_chunks(v, e, n, limit) {
            Ok(plan) => {
                let mut next = 0;
                for (i, &(v0, count)) in plan.iter().enumerate() {
                    prop_assert_eq!(v0, next);
                    prop_assert_eq!(u64::from(v0) % TV, 0, "chunk {} starts inside a tile", i);
                    prop_assert!(count > 0);
                    prop_assert!(basis_bytes(count, e) <= limit, "chunk {} basis {} > {}", i, basis_bytes(count, e), limit);
                    prop_assert!(u64::from(count).div_ceil(TV) * TV * per_vertex <= limit);
                    // As coarse as the limit allows: one more tile would not fit.
                    if i + 1 < plan.len() {
                        let more = u64::from(count) + TV;
                        prop_assert!(more.div_ceil(TV) * 6 * u64::from(e) * TV > limit || more * per_vertex > limit);
                    }
                    next = v0 + count;
                }
                prop_assert_eq!(next, v);
            }
            Err(r) => {
                let need = (6 * u64::from(e) * TV).max(TV * per_vertex);
                prop_assert!(need > limit, "refused a tile of {} bytes under {}", r.bytes, limit);
                prop_assert_eq!(r.bytes, need);
            }
        }
    }

    #[test]
    fn chunk_arrays_hold_the_tiled_basis(v in 1u32..400, e in 1u32..24, joints in 1u32..6, seam: bool, seed: u64, tiles in 1u64..4) {
        let pack = random_gnm_pack(seed, GnmShape { vertices: v, coeffs: e, regions: 3, joints, seam });
        let limit = 6 * u64::from(e) * TV * tiles;
        let plan = plan_gnm_chunks(v, e, 1, limit.max(TV * 32)).unwrap();
        let all = BasisTiles::new(&pack, TV as usize);
        let width = 3 * TV as usize;
        let half = |words: &[u32], i: usize| (words[i / 2] >> (16 * (i % 2))) as u16;
        for (v0, count) in plan {
            let a = gnm_chunk_arrays(&pack, &all, v0, count);
            prop_assert_eq!(a.basis.len() as u64 * 4, basis_bytes(count, e));
            prop_assert_eq!(a.statics.len(), 2 * count as usize);
            for l in 0..count as usize {
                let g = v0 as usize + l;
                let (t, j) = (l / TV as usize, l % TV as usize);
                for k in 0..3 * e as usize {
                    let (c, axis) = (k / 3, k % 3);
                    let got = half(&a.basis, (t * e as usize + c) * width + 3 * j + axis);
                    prop_assert_eq!(half::f16::from_bits(got).to_f32().to_bits(), pack.basis_at(g, c, axis).to_bits());
                }
                let (s0, s1) = (a.statics[2 * l], a.statics[2 * l + 1]);
                prop_assert_eq!([s0[0], s0[1], s0[2]], pack.neutral[g]);
                prop_assert_eq!(s0[3], pack.eye_weights[g]);
                prop_assert_eq!(s1[3], pack.eye_weights[v as usize + g]);
                prop_assert_eq!([s1[0], s1[1], s1[2]], pack.seam.as_ref().map_or([0.0; 3], |s| s[g]));
                prop_assert_eq!((a.joints[l], a.weights[l]), gnm_skin(&pack, g));
            }
            // Padding past the chunk's last vertex is zero.
            let last = count as usize % TV as usize;
            if last != 0 {
                let t = count as usize / TV as usize;
                for c in 0..e as usize {
                    for x in 3 * last..width {
                        prop_assert_eq!(half(&a.basis, (t * e as usize + c) * width + x), 0);
                    }
                }
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
fn the_dispatch_covers_every_tile_and_instance() {
    // Hand-worked: W4's 17,821 vertices → ⌈17,821 / 64⌉ = 279 tiles; 256 instances → 32 blocks of 8.
    assert_eq!(gnm_dispatch(17_821, 256, 65_535), Some((32, 279)));
    assert_eq!(gnm_dispatch(17_821, 1, 65_535), Some((1, 279)));
    assert_eq!(gnm_dispatch(64, 9, 65_535), Some((2, 1)));
    assert_eq!(gnm_dispatch(65, 8, 65_535), Some((1, 2)));
    assert_eq!(gnm_dispatch(10_000, 1, 100), None);
    assert_eq!(gnm_dispatch(64, 801, 100), None);
    for (count, n) in [(1u32, 1u32), (63, 7), (64, 8), (4_194_240, 65_535)] {
        let (x, y) = gnm_dispatch(count, n, 65_535).unwrap();
        assert!(u64::from(x) * u64::from(GNM_INSTANCE_BLOCK) >= u64::from(n));
        assert!(u64::from(y) * TV >= u64::from(count));
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
