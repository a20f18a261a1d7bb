//! Property tests of the rig kernels and invariants DESIGN.md promises: CSR morph apply equals a
//! dense apply computed in f64, untouched vertices are bit-identical, the active limit keeps the
//! strongest weights with ties to the lower index, skinning at the rest pose is the identity, and
//! the slot allocator never overlaps and coalesces back to one block.

use glam::{Mat4, Quat, Vec3};
use mien_core::rig::morph::{DenseTarget, LimitStats, MorphLimiter, MorphSet, MorphVertex};
use mien_core::rig::skin::{InfluenceFixes, merge_influences, normal_matrix, skin_vertex};
use mien_core::sink::{SlotAllocator, SlotRange};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// Fixed seed (STYLE 9) unless `PROPTEST_RNG_SEED` asks for another.
fn config() -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: 96,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// `(V, targets, weights, base positions, base normals)`.
type MorphCase = (
    usize,
    Vec<DenseTarget>,
    Vec<f32>,
    Vec<[f32; 3]>,
    Vec<[f32; 3]>,
);

/// A random sparse morph set: `(V, T, per-target optional deltas)` where each target touches a
/// random subset of vertices.
fn morph_case() -> impl Strategy<Value = MorphCase> {
    (1usize..40, 0usize..12).prop_flat_map(|(nv, nt)| {
        let target = (
            proptest::collection::vec(
                proptest::option::weighted(0.3, [-0.05f32..0.05, -0.05f32..0.05, -0.05f32..0.05]),
                nv,
            ),
            any::<bool>(),
        )
            .prop_map(move |(cells, with_normals)| {
                let position: Vec<[f32; 3]> = cells.iter().map(|c| c.unwrap_or([0.0; 3])).collect();
                let normal = with_normals.then(|| {
                    cells
                        .iter()
                        .map(|c| c.map_or([0.0; 3], |d| [d[2], d[0], d[1]]))
                        .collect()
                });
                DenseTarget {
                    position: Some(position),
                    normal,
                    tangent: None,
                }
            });
        let weight = prop_oneof![Just(0.0f32), -2.0f32..2.0, Just(1.0f32), Just(-1.0f32)];
        (
            Just(nv),
            proptest::collection::vec(target, nt),
            proptest::collection::vec(weight, nt),
            proptest::collection::vec([-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0], nv),
            proptest::collection::vec([-1.0f32..1.0, -1.0f32..1.0, 0.1f32..1.0], nv),
        )
    })
}

fn norm64(v: [f64; 3]) -> [f64; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / l, v[1] / l, v[2] / l]
}

proptest! {
    #![proptest_config(config())]

    /// CSR apply equals `base + Σ w·δ` summed densely in f64, within f32 rounding of the largest
    /// magnitude involved; normals are the normalised dense sums; untouched vertices are bit-identical.
    #[test]
    fn csr_apply_equals_dense_f64((nv, targets, weights, base, normals) in morph_case()) {
        let set = MorphSet::from_dense(nv, &targets).unwrap();
        let normals: Vec<[f32; 3]> = normals.iter().map(|n| {
            let u = norm64(n.map(f64::from));
            [u[0] as f32, u[1] as f32, u[2] as f32]
        }).collect();
        let (p, n, _) = set.apply(&weights, &base, &normals, &[]).unwrap();
        let any_normals = targets.iter().any(|t| t.normal.is_some());
        for v in 0..nv {
            let mut exp = base[v].map(f64::from);
            let mut expn = normals[v].map(f64::from);
            let mut touched = false;
            for (t, tgt) in targets.iter().enumerate() {
                let w = f64::from(weights[t]);
                let d = tgt.position.as_ref().unwrap()[v];
                let dn = tgt.normal.as_ref().map_or([0.0; 3], |nn| nn[v]);
                if w != 0.0 && (d != [0.0; 3] || dn != [0.0; 3]) {
                    touched = true;
                }
                for k in 0..3 {
                    exp[k] += w * f64::from(d[k]);
                    expn[k] += w * f64::from(dn[k]);
                }
            }
            if !touched {
                prop_assert_eq!(p[v], base[v], "untouched vertex {} must be bit-identical", v);
                prop_assert_eq!(n[v], normals[v], "untouched normal {} must be bit-identical", v);
                continue;
            }
            let scale = 1.0 + exp.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            for k in 0..3 {
                prop_assert!((f64::from(p[v][k]) - exp[k]).abs() <= 1e-6 * scale * (targets.len() as f64 + 1.0),
                    "vertex {} axis {}: {} vs {}", v, k, p[v][k], exp[k]);
            }
            let len = (expn[0] * expn[0] + expn[1] * expn[1] + expn[2] * expn[2]).sqrt();
            if any_normals && len > 1e-3 {
                let u = norm64(expn);
                for k in 0..3 {
                    prop_assert!((f64::from(n[v][k]) - u[k]).abs() <= 1e-4, "normal {} axis {}: {} vs {}", v, k, n[v][k], u[k]);
                }
            }
        }
    }

    /// The limiter keeps exactly the `limit` largest |w| (after clamping to ±2), ties to the lower
    /// index, and reports every dropped index; non-zero kept weights are unchanged.
    #[test]
    fn active_limit_keeps_strongest(
        weights in proptest::collection::vec(prop_oneof![Just(0.0f32), Just(0.5f32), Just(-0.5f32), -3.0f32..3.0], 0..80),
        limit in 0usize..40,
    ) {
        let mut w = weights.clone();
        let mut stats = LimitStats::default();
        MorphLimiter::new().limit(&mut w, limit, &mut stats);
        let clamped: Vec<f32> = weights.iter().map(|x| x.clamp(-2.0, 2.0)).collect();
        prop_assert_eq!(stats.clamped as usize, weights.iter().filter(|x| x.abs() > 2.0).count());
        // Independent reference: rank by (|w| desc, index asc).
        let mut idx: Vec<usize> = (0..clamped.len()).filter(|&i| clamped[i] != 0.0).collect();
        idx.sort_by(|&a, &b| clamped[b].abs().partial_cmp(&clamped[a].abs()).unwrap().then(a.cmp(&b)));
        let keep: std::collections::BTreeSet<usize> = idx.iter().take(limit).copied().collect();
        let mut dropped: Vec<u32> = idx.iter().skip(limit).map(|&i| i as u32).collect();
        dropped.sort_unstable();
        prop_assert_eq!(&stats.dropped, &dropped);
        for i in 0..w.len() {
            let want = if keep.contains(&i) { clamped[i] } else { 0.0 };
            prop_assert_eq!(w[i], want, "weight {}", i);
        }
    }

    /// Skinning with every joint matrix = world · inverse(world) (the rest pose) returns the input
    /// position and normal, for random hierarchies of transforms and random 1–4 influences.
    #[test]
    fn skinning_at_rest_is_identity(
        joints in proptest::collection::vec(([-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0], [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, 0.1f32..1.0], 0.7f32..1.4), 1..8),
        verts in proptest::collection::vec(([-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0], [0usize..8, 0usize..8, 0usize..8, 0usize..8], [0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0], 1usize..5), 1..30),
    ) {
        // Chain hierarchy: world[i] = world[i-1] · local[i].
        let mut world = Vec::new();
        for (i, (t, q, s)) in joints.iter().enumerate() {
            let local = Mat4::from_scale_rotation_translation(Vec3::splat(*s), Quat::from_array(*q).normalize(), Vec3::from(*t));
            world.push(if i == 0 { local } else { world[i - 1] * local });
        }
        // Inverse bind matrices as a file would carry them: the rest world inverted (in f64).
        let inv: Vec<Mat4> = world.iter().map(|w| w.as_dmat4().inverse().as_mat4()).collect();
        let palette: Vec<Mat4> = world.iter().zip(&inv).map(|(w, i)| *w * *i).collect();
        // f32 rounding bound: the product W·W⁻¹ and the point transform each lose a few ulp of
        // |W|·|W⁻¹| (largest entries, times 4 for the 4-term dot products).
        let maxabs = |m: &Mat4| m.to_cols_array().iter().fold(0.0f32, |a, x| a.max(x.abs()));
        let kappa = world.iter().zip(&inv).map(|(w, i)| 4.0 * maxabs(w) * maxabs(i)).fold(1.0f32, f32::max);
        let tol = 8.0 * f32::EPSILON * kappa * 4.0;
        let normals: Vec<_> = palette.iter().map(normal_matrix).collect();
        for (p, js, ws, used) in verts {
            let nj = joints.len();
            let j: Vec<u32> = js.iter().take(used).map(|&x| (x % nj) as u32).collect();
            let w: Vec<f32> = ws.iter().take(used).map(|x| x + 0.01).collect();
            let (jj, ww) = merge_influences(&j, &w, &mut InfluenceFixes::default());
            let n = [0.0f32, 0.6, 0.8];
            let (po, no) = skin_vertex(p, n, jj, ww, &palette, &normals);
            for k in 0..3 {
                prop_assert!((po[k] - p[k]).abs() <= tol, "position {:?} -> {:?} (tol {})", p, po, tol);
                prop_assert!((no[k] - n[k]).abs() <= tol, "normal -> {:?} (tol {})", no, tol);
            }
        }
    }

    /// Random allocate/free sequences: live ranges never overlap and stay inside the capacity,
    /// `available` is the capacity minus live slots, and freeing everything coalesces back to one
    /// block.
    #[test]
    fn slot_allocator_never_overlaps(capacity in 1u32..5000, ops in proptest::collection::vec((any::<bool>(), 1u32..700, any::<prop::sample::Index>()), 1..200)) {
        let mut a = SlotAllocator::new(capacity);
        let mut live: Vec<SlotRange> = Vec::new();
        for (alloc, count, pick) in ops {
            if alloc || live.is_empty() {
                let free_max = a.blocks().iter().map(|b| b.count).max().unwrap_or(0);
                match a.allocate(count) {
                    Ok(r) => {
                        prop_assert!(count <= free_max);
                        prop_assert!(r.end() <= u64::from(capacity));
                        for l in &live {
                            prop_assert!(r.end() <= u64::from(l.offset) || l.end() <= u64::from(r.offset), "{:?} overlaps {:?}", r, l);
                        }
                        // First fit: no lower free block could hold it.
                        live.push(r);
                    }
                    Err(_) => prop_assert!(count > free_max, "refused {} with a block of {}", count, free_max),
                }
            } else {
                let r = live.swap_remove(pick.index(live.len()));
                a.free(r).unwrap();
                prop_assert!(a.free(r).is_err(), "double free must be refused");
            }
            let used: u32 = live.iter().map(|r| r.count).sum();
            prop_assert_eq!(a.available(), capacity - used);
        }
        for r in live.drain(..) {
            a.free(r).unwrap();
        }
        prop_assert_eq!(a.blocks(), vec![SlotRange { offset: 0, count: capacity }]);
    }
}

#[test]
fn slot_allocator_is_first_fit_and_refuses_bad_frees() {
    let mut a = SlotAllocator::new(100);
    let r1 = a.allocate(30).unwrap();
    let r2 = a.allocate(30).unwrap();
    let r3 = a.allocate(30).unwrap();
    assert_eq!((r1.offset, r2.offset, r3.offset), (0, 30, 60));
    a.free(r2).unwrap();
    // First fit reuses the hole at 30.
    assert_eq!(
        a.allocate(10).unwrap(),
        SlotRange {
            offset: 30,
            count: 10
        }
    );
    assert!(
        a.allocate(41).is_err(),
        "no block of 41 exists (20 + 10 split)"
    );
    assert!(a.allocate(0).is_err());
    assert!(
        a.free(SlotRange {
            offset: 95,
            count: 10
        })
        .is_err(),
        "outside capacity"
    );
    assert!(
        a.free(SlotRange {
            offset: 0,
            count: 10
        })
        .is_err(),
        "part of a live range is not a live range"
    );
    assert!(
        a.free(SlotRange {
            offset: 45,
            count: 10
        })
        .is_err(),
        "overlaps free slots"
    );
}

#[test]
fn morph_vertex_hand_worked() {
    // Two targets on one vertex: base (1,2,3) + 0.5·(2,0,0) + (−1)·(0,1,0) = (2,1,3).
    let targets = vec![
        DenseTarget {
            position: Some(vec![[2.0, 0.0, 0.0]]),
            normal: Some(vec![[0.0, 0.0, 0.0]]),
            tangent: None,
        },
        DenseTarget {
            position: Some(vec![[0.0, 1.0, 0.0]]),
            normal: Some(vec![[0.0, 0.0, 1.0]]),
            tangent: None,
        },
    ];
    let set = MorphSet::from_dense(1, &targets).unwrap();
    assert_eq!(set.entry_count(), 2);
    let out = set.apply_vertex(
        0,
        &[0.5, -1.0],
        MorphVertex {
            position: [1.0, 2.0, 3.0],
            normal: [1.0, 0.0, 0.0],
            tangent: [0.0; 4],
        },
    );
    assert_eq!(out.position, [2.0, 1.0, 3.0]);
    // normal (1,0,0) + (−1)(0,0,1) = (1,0,−1) → (1/√2, 0, −1/√2)
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(
        (out.normal[0] - h).abs() < 1e-6
            && out.normal[1] == 0.0
            && (out.normal[2] + h).abs() < 1e-6
    );
    // Non-finite deltas are refused with the target and vertex named.
    let bad = vec![DenseTarget {
        position: Some(vec![[f32::NAN, 0.0, 0.0]]),
        normal: None,
        tangent: None,
    }];
    let e = MorphSet::from_dense(1, &bad).unwrap_err().to_string();
    assert!(
        e.contains("morph target 0") && e.contains("vertex 0"),
        "{e}"
    );
}

/// `RigData::validate` refuses a row whose targets are not strictly ascending (a repeat or a step
/// back), naming the array and the entry — the GPU's active-target walk relies on row order being
/// target order.
#[test]
fn rows_must_hold_strictly_ascending_targets() {
    use mien_core::testing::{RigShape, random_rig};
    let rig = random_rig(
        5,
        RigShape {
            vertices: 12,
            targets: 8,
            density: 0.9,
            joints: 1,
        },
    );
    rig.validate().unwrap();
    // The first row with at least two entries.
    let v = (0..12)
        .find(|&v| rig.morph_offsets[v + 1] - rig.morph_offsets[v] >= 2)
        .unwrap();
    let e = rig.morph_offsets[v] as usize + 1;
    for bad in [
        rig.morph_target[e - 1],
        rig.morph_target[e - 1].saturating_sub(1),
    ] {
        let mut r = rig.clone();
        r.morph_target[e] = bad;
        let msg = r.validate().unwrap_err().to_string();
        assert!(
            msg.contains("morph_target")
                && msg.contains(&format!("[{e}]"))
                && msg.contains("ascending"),
            "{msg}"
        );
    }
}

/// The merge rule for more than four influences (glTF JOINTS_1/WEIGHTS_1 in use) against an f64
/// reference written here from DESIGN.md "Skin": drop zero weights, add up the weights of a joint
/// named twice (in the slot of its first appearance), keep the 4 strongest (ties → the earlier
/// slot), strongest first, divided by their own sum; all-zero binds rigidly to the first joint.
fn merge_reference(joints: &[u32], weights: &[f32]) -> Vec<(u32, f64)> {
    let mut pairs = merge_reference_untruncated(joints, weights);
    if pairs.is_empty() {
        return vec![(joints[0], 1.0)];
    }
    pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
    pairs.truncate(4);
    let sum: f64 = pairs.iter().map(|p| p.1).sum();
    pairs.into_iter().map(|(j, w)| (j, w / sum)).collect()
}

proptest! {
    #![proptest_config(config())]

    /// 5–8 influences (joints 0–9, so some are named twice; about one weight in six zero) merge
    /// to the f64 reference within 1e-6 per weight. Joints are compared where the reference's
    /// order is decided by more than 1e-5 (a nearer tie may fall either way in f32); the counts
    /// of `InfluenceFixes` are checked against the reference's own.
    #[test]
    fn more_than_four_influences_merge_to_an_f64_reference(
        infl in proptest::collection::vec((0u32..10, prop_oneof![1 => Just(0.0f32), 5 => 0.001f32..1.0]), 5..=8),
    ) {
        let (j, w): (Vec<u32>, Vec<f32>) = infl.into_iter().unzip();
        let mut fixes = InfluenceFixes::default();
        let (jj, ww) = merge_influences(&j, &w, &mut fixes);
        let want = merge_reference(&j, &w);
        // Before truncation: the distinct joints with weight, and whether one was named twice.
        let mut seen: Vec<u32> = Vec::new();
        let mut duplicate = false;
        for (&a, &b) in j.iter().zip(&w) {
            if b != 0.0 {
                if seen.contains(&a) { duplicate = true } else { seen.push(a) }
            }
        }
        prop_assert_eq!(fixes.truncated, u32::from(seen.len() > 4));
        prop_assert_eq!(fixes.duplicate_joints, u32::from(duplicate));
        prop_assert_eq!(fixes.zero_sum, u32::from(seen.is_empty()));
        for k in 0..4 {
            let (wj, wv) = want.get(k).copied().unwrap_or((0, 0.0));
            prop_assert!((f64::from(ww[k]) - wv).abs() <= 1e-6, "slot {}: {:?} {:?} vs {:?}", k, jj, ww, want);
            let decided = |a: Option<&(u32, f64)>, b: Option<&(u32, f64)>| match (a, b) {
                (Some(a), Some(b)) => (a.1 - b.1).abs() > 1e-5,
                _ => true,
            };
            // Slot k's joint is decided when its weight is apart from both neighbours' (and, for
            // slot 3, from the strongest one dropped: recomputed without truncation).
            let mut all = merge_reference_untruncated(&j, &w);
            all.sort_by(|a, b| b.1.total_cmp(&a.1));
            if k < want.len()
                && decided(all.get(k), all.get(k + 1))
                && (k == 0 || decided(all.get(k - 1), all.get(k)))
            {
                prop_assert_eq!(jj[k], wj, "slot {}: {:?} {:?} vs {:?}", k, jj, ww, want);
            }
        }
        let sum: f64 = ww.iter().map(|&x| f64::from(x)).sum();
        prop_assert!((sum - 1.0).abs() <= 1e-6, "{:?}", ww);
    }
}

/// The summed weights per joint (zero weights dropped), unnormalised and untruncated.
fn merge_reference_untruncated(joints: &[u32], weights: &[f32]) -> Vec<(u32, f64)> {
    let mut pairs: Vec<(u32, f64)> = Vec::new();
    for (&j, &w) in joints.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        match pairs.iter_mut().find(|p| p.0 == j) {
            Some(p) => p.1 += f64::from(w),
            None => pairs.push((j, f64::from(w))),
        }
    }
    pairs
}
