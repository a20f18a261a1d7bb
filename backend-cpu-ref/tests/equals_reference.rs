//! The CPU backend against an independent f64 reference: random batches of rigs (up to 2k vertices,
//! 64 targets of random sparsity, weights in [-2.5, 2.5] with zeros and ties, 1–4 influences), and
//! the debug lift with poisoned sink buffers so an unwritten slot fails.
//!
//! Tolerance: every element within `1e-5 · max(1, largest |value| of that array)` — f32 keeps 24 bits
//! (6e-8 relative); a CSR row of up to 64 terms and a 4-joint LBS lose at most ~100 ulp of the largest
//! magnitude, well inside 1e-5.

use glam::{DMat3, DMat4, DVec3};
use mien_core::lift::{DebugLiftParams, DebugShading, Lift};
use mien_core::rig::{ACTIVE_MORPH_LIMIT, RigBackend, RigControls, RigData};
use mien_core::sink::{SplatSink, unpack4x8unorm};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_cpu::{CpuDebugLift, CpuEncoder, CpuRigBackend, CpuSplatSink};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: cases_from_env(cases),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// The weight rules, re-derived: clamp to ±2, keep the 32 largest |w| (ties → lower index).
/// The weight rules, written out: a target without deltas (no CSR entry) is 0, the rest clamped
/// to ±2, the 32 largest |w| kept (ties to the lower index).
fn limited(weights: &[f32], rig: &RigData) -> Vec<f64> {
    let c: Vec<f64> = weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if rig.morph_target.contains(&(i as u32)) {
                f64::from(w.clamp(-2.0, 2.0))
            } else {
                0.0
            }
        })
        .collect();
    let mut idx: Vec<usize> = (0..c.len()).filter(|&i| c[i] != 0.0).collect();
    idx.sort_by(|&a, &b| c[b].abs().partial_cmp(&c[a].abs()).unwrap().then(a.cmp(&b)));
    let mut out = vec![0.0; c.len()];
    for &i in idx.iter().take(ACTIVE_MORPH_LIMIT) {
        out[i] = c[i];
    }
    out
}

/// f64 reference of one vertex: morph then LBS with inverse-transpose normal matrices.
fn reference(rig: &RigData, controls: &RigControls, w: &[f64], v: usize) -> (DVec3, DVec3) {
    let mut p = DVec3::from(rig.positions[v].map(f64::from));
    let mut n = DVec3::from(rig.normals[v].map(f64::from));
    let mut touched = false;
    for e in rig.morph_offsets[v] as usize..rig.morph_offsets[v + 1] as usize {
        let wt = w[rig.morph_target[e] as usize];
        if wt != 0.0 {
            touched = true;
            p += wt * DVec3::from(rig.morph_position[e].map(f64::from));
            n += wt * DVec3::from(rig.morph_normal[e].map(f64::from));
        }
    }
    if touched {
        n = n
            .try_normalize()
            .unwrap_or(DVec3::from(rig.normals[v].map(f64::from)));
    } else {
        n = DVec3::from(rig.normals[v].map(f64::from));
    }
    let (mut po, mut no) = (DVec3::ZERO, DVec3::ZERO);
    for k in 0..4 {
        let wk = f64::from(rig.weights[v][k]);
        if wk == 0.0 {
            continue;
        }
        let m: DMat4 = controls.palette[rig.joints[v][k] as usize].as_dmat4();
        po += wk * m.transform_point3(p);
        no += wk * (DMat3::from_mat4(m).inverse().transpose() * n);
    }
    (po, no.normalize_or_zero())
}

fn check(what: &str, got: &[[f32; 3]], want: &[DVec3]) -> Result<(), TestCaseError> {
    let scale = want
        .iter()
        .fold(1.0f64, |a, v| a.max(v.abs().max_element()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        for k in 0..3 {
            let g = f64::from(g[k]);
            prop_assert!(!g.is_nan(), "{} [{}] is NaN", what, i);
            prop_assert!(
                (g - w[k]).abs() <= 1e-5 * scale,
                "{} [{}].{}: {} vs reference {} (bound {})",
                what,
                i,
                k,
                g,
                w[k],
                1e-5 * scale
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn batch_of_random_rigs_equals_f64_reference(
        shapes in proptest::collection::vec((1u32..2000, 0u32..64, 0.0f32..0.6, 1u32..24, any::<u64>()), 1..4),
    ) {
        let mut backend = CpuRigBackend::new();
        let mut cases = Vec::new();
        for (v, t, d, j, seed) in shapes {
            let rig = random_rig(seed, RigShape { vertices: v, targets: t, density: d, joints: j });
            let controls = random_controls(seed, &rig);
            let h = backend.upload(&rig).unwrap();
            let stats = backend.set_controls(h, &controls).unwrap();
            prop_assert_eq!(stats.clamped as usize, controls.weights.iter().filter(|w| w.abs() > 2.0).count());
            cases.push((h, rig, controls));
        }
        // One encode poses the whole batch.
        backend.encode(&mut CpuEncoder::default()).unwrap();
        for (h, rig, controls) in &cases {
            let w = limited(&controls.weights, rig);
            let want: Vec<(DVec3, DVec3)> = (0..rig.vertex_count()).map(|v| reference(rig, controls, &w, v)).collect();
            let got = backend.read_vertices(*h).unwrap();
            check("position", &got.positions, &want.iter().map(|x| x.0).collect::<Vec<_>>())?;
            check("normal", &got.normals, &want.iter().map(|x| x.1).collect::<Vec<_>>())?;
        }
    }

    #[test]
    fn debug_lift_writes_every_slot_of_its_range(
        (nv, extra, seed, sigma, shading) in (1u32..1500, 0u32..300, any::<u64>(), 0.0005f32..0.01, 0u8..3),
    ) {
        let rig = random_rig(seed, RigShape { vertices: nv, targets: 4, density: 0.3, joints: 3 });
        let controls = random_controls(seed, &rig);
        let mut backend = CpuRigBackend::new();
        let h = backend.upload(&rig).unwrap();
        backend.set_controls(h, &controls).unwrap();
        let mut sink = CpuSplatSink::new(nv + extra + 17);
        let pad = sink.allocate(17).unwrap();
        let range = sink.allocate(nv + extra).unwrap();
        // Poison every slot so an unwritten one cannot pass.
        {
            let b = sink.buffers_mut();
            b.center.fill([f32::NAN; 4]);
            b.color.fill(0xDEAD_BEEF);
            b.cov_a.fill([f32::NAN; 4]);
            b.cov_b.fill([f32::NAN; 4]);
        }
        let mut params = DebugLiftParams::new(range, nv);
        params.sigma = sigma;
        params.shading = [DebugShading::Tint, DebugShading::Normal, DebugShading::Flat][shading as usize];
        params.transform = [0.0, -1.0, 0.0, 0.1, 2.0, 0.0, 0.0, -0.2, 0.0, 0.0, 0.5, 0.3];
        let mut lift = CpuDebugLift::new(&backend, h, &sink, params).unwrap();
        let mut enc = CpuEncoder::default();
        backend.encode(&mut enc).unwrap();
        lift.encode(&mut enc, &backend, &mut sink).unwrap();
        prop_assert!(sink.take_changed());
        let posed = backend.read_vertices(h).unwrap();
        let b = sink.buffers();
        let a = params.transform.map(f64::from);
        // Σ = σ² L Lᵀ in f64.
        let l = [[a[0], a[1], a[2]], [a[4], a[5], a[6]], [a[8], a[9], a[10]]];
        let s2 = f64::from(sigma).powi(2);
        let cov = |i: usize, j: usize| s2 * (0..3).map(|k| l[i][k] * l[j][k]).sum::<f64>();
        for s in 0..range.count as usize {
            let slot = range.offset as usize + s;
            if s >= nv as usize {
                prop_assert_eq!(b.color[slot], 0, "slot {} past the vertices must have opacity 0", slot);
                prop_assert_eq!(b.center[slot], [0.0; 4]);
                continue;
            }
            let x = posed.positions[s].map(f64::from);
            for r in 0..3 {
                let want = a[4 * r] * x[0] + a[4 * r + 1] * x[1] + a[4 * r + 2] * x[2] + a[4 * r + 3];
                prop_assert!((f64::from(b.center[slot][r]) - want).abs() <= 1e-6, "slot {} centre", slot);
            }
            let want_cov = [cov(0, 0), cov(0, 1), cov(0, 2), cov(1, 1), cov(1, 2), cov(2, 2)];
            let got_cov = [b.cov_a[slot][0], b.cov_a[slot][1], b.cov_a[slot][2], b.cov_a[slot][3], b.cov_b[slot][0], b.cov_b[slot][1]];
            for k in 0..6 {
                prop_assert!((f64::from(got_cov[k]) - want_cov[k]).abs() <= 1e-6 * want_cov[0].abs().max(want_cov[3].abs()).max(want_cov[5].abs()), "slot {} cov {}", slot, k);
            }
            let rgba = unpack4x8unorm(b.color[slot]);
            prop_assert_eq!(rgba[3], 1.0, "opacity");
            let want_rgb = match params.shading {
                DebugShading::Tint => [rig.colors[s][0], rig.colors[s][1], rig.colors[s][2]],
                DebugShading::Flat => params.flat_color,
                DebugShading::Normal => {
                    let n = posed.normals[s].map(f64::from);
                    let m = [0, 1, 2].map(|r| a[4 * r] * n[0] + a[4 * r + 1] * n[1] + a[4 * r + 2] * n[2]);
                    let len = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
                    [0, 1, 2].map(|k| (0.5 + 0.5 * m[k] / len) as f32)
                }
            };
            for k in 0..3 {
                prop_assert!((rgba[k] - want_rgb[k]).abs() <= 0.5 / 255.0 + 1e-6, "slot {} colour {}: {} vs {}", slot, k, rgba[k], want_rgb[k]);
            }
        }
        // The neighbouring range was not touched.
        prop_assert_eq!(b.color[pad.offset as usize], 0xDEAD_BEEF);
    }
}

#[test]
fn controls_of_the_wrong_shape_are_refused() {
    let rig = random_rig(
        7,
        RigShape {
            vertices: 10,
            targets: 3,
            density: 0.5,
            joints: 2,
        },
    );
    let mut backend = CpuRigBackend::new();
    let h = backend.upload(&rig).unwrap();
    let mut c = random_controls(7, &rig);
    c.weights.pop();
    assert!(
        backend
            .set_controls(h, &c)
            .unwrap_err()
            .to_string()
            .contains("morph weights")
    );
    let mut c = random_controls(7, &rig);
    c.palette[0].x_axis.x = f32::INFINITY;
    assert!(
        backend
            .set_controls(h, &c)
            .unwrap_err()
            .to_string()
            .contains("palette[0]")
    );
    let mut bad = rig.clone();
    bad.morph_target[0] = 99;
    assert!(
        backend.upload(&bad).is_err(),
        "a rig whose CSR names a missing weight slot must be refused"
    );
}

/// `cases`, or `$MIEN_PROPTEST_CASES` when set (more cases on a fast machine).
fn cases_from_env(cases: u32) -> u32 {
    std::env::var("MIEN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases)
}
