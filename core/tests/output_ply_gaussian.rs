//! Covariance ↔ (log-scale, quaternion) conversion of the 3DGS PLY, checked against an f64
//! reference written here: `Σ = R·diag(σ²)·Rᵀ` with `R` from the textbook quaternion formula.

mod support;

use mien_core::io::ply::gaussian::{
    OPACITY_EPS, SH_C0, SIGMA2_FLOOR, compose_covariance, decompose_covariance, logit_to_opacity,
    opacity_to_logit, rgb_to_sh_dc, sh_dc_to_rgb,
};
use proptest::prelude::*;

type M3 = [[f64; 3]; 3];

/// Rotation matrix of a unit quaternion `(w, x, y, z)` (Shoemake 1985).
fn quat_to_matrix([w, x, y, z]: [f64; 4]) -> M3 {
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// `R·diag(d)·Rᵀ`.
fn rdr(r: &M3, d: [f64; 3]) -> M3 {
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = (0..3).map(|k| r[i][k] * d[k] * r[j][k]).sum();
        }
    }
    out
}

fn det(m: &M3) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

fn frob(a: &M3, b: &M3) -> f64 {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

fn norm(a: &M3) -> f64 {
    frob(a, &[[0.0; 3]; 3])
}

/// A unit quaternion from four components in [-1, 1] (rejecting near-zero ones).
fn unit_quat() -> impl Strategy<Value = [f64; 4]> {
    prop::array::uniform4(-1.0f64..1.0)
        .prop_filter("non-degenerate", |q| {
            q.iter().map(|v| v * v).sum::<f64>() > 1e-3
        })
        .prop_map(|q| {
            let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            q.map(|v| v / n)
        })
}

proptest! {
    #![proptest_config(support::proptest_config(2000))]

    /// Σ built from a random rotation and random σ (0.1 mm – 10 cm) decomposes into a unit
    /// quaternion with w ≥ 0, a proper rotation, scales that are the sorted ln σ, and a
    /// reconstruction equal to Σ.
    #[test]
    fn decomposition_reconstructs_covariance(q in unit_quat(), ls in prop::array::uniform3(-9.2f64..-2.3)) {
        let r = quat_to_matrix(q);
        let sigma = rdr(&r, ls.map(|s| (2.0 * s).exp()));
        let out = decompose_covariance(sigma).expect("finite input decomposes");
        prop_assert_eq!(out.clamped, 0);

        let qn: f64 = out.rotation.iter().map(|v| v * v).sum::<f64>().sqrt();
        prop_assert!((qn - 1.0).abs() < 1e-12, "|q| = {qn}");
        prop_assert!(out.rotation[0] >= 0.0);
        let r2 = quat_to_matrix(out.rotation);
        prop_assert!((det(&r2) - 1.0).abs() < 1e-12, "det = {}", det(&r2));

        let mut want = ls;
        want.sort_by(|a, b| b.total_cmp(a));
        for (got, w) in out.log_scale.iter().zip(want) {
            prop_assert!((got - w).abs() < 1e-6, "scale {got} vs {w}");
        }

        let back = rdr(&r2, out.log_scale.map(|s| (2.0 * s).exp()));
        prop_assert!(frob(&back, &sigma) <= 1e-10 * norm(&sigma), "relative error {}", frob(&back, &sigma) / norm(&sigma));

        let composed = compose_covariance(out.log_scale, out.rotation).expect("finite");
        prop_assert!(frob(&composed, &sigma) <= 1e-10 * norm(&sigma));
    }

    /// compose normalises the quaternion: scaling it changes nothing.
    #[test]
    fn compose_normalises_quaternion(q in unit_quat(), ls in prop::array::uniform3(-9.2f64..-2.3), k in 0.01f64..100.0) {
        let a = compose_covariance(ls, q).expect("finite");
        let b = compose_covariance(ls, q.map(|v| v * k)).expect("finite");
        let want = rdr(&quat_to_matrix(q), ls.map(|s| (2.0 * s).exp()));
        prop_assert!(frob(&a, &want) <= 1e-12 * norm(&want));
        prop_assert!(frob(&b, &want) <= 1e-12 * norm(&want));
    }
}

#[test]
fn axis_aligned_covariance_by_hand() {
    // diag(4, 1, 9)·1e-6: eigenvalues sorted 9e-6 (z), 4e-6 (x), 1e-6 (y); R = [e_z e_x e_y]
    // (det +1, a −120° turn about (1,1,1)/√3): q = (cos 60°, −sin 60°/√3 · (1,1,1)) = (½,−½,−½,−½).
    let sigma = [[4e-6, 0.0, 0.0], [0.0, 1e-6, 0.0], [0.0, 0.0, 9e-6]];
    let out = decompose_covariance(sigma).unwrap();
    let want_scale = [0.003f64.ln(), 0.002f64.ln(), 0.001f64.ln()];
    for (got, want) in out.log_scale.iter().zip(want_scale) {
        assert!((got - want).abs() < 1e-12, "{:?}", out.log_scale);
    }
    for (got, want) in out.rotation.iter().zip([0.5, -0.5, -0.5, -0.5]) {
        assert!((got - want).abs() < 1e-12, "{:?}", out.rotation);
    }
    assert_eq!(out.clamped, 0);
}

#[test]
fn degenerate_covariances_are_floored_and_counted() {
    let zero = decompose_covariance([[0.0; 3]; 3]).unwrap();
    assert_eq!(zero.clamped, 3);
    for s in zero.log_scale {
        assert!((s - 0.5 * SIGMA2_FLOOR.ln()).abs() < 1e-12);
    }
    // A flat covariance with a slightly negative third eigenvalue (rounding): one clamp.
    let flat =
        decompose_covariance([[1e-6, 0.0, 0.0], [0.0, 2e-6, 0.0], [0.0, 0.0, -1e-13]]).unwrap();
    assert_eq!(flat.clamped, 1);
    assert!((flat.log_scale[0] - 0.5 * 2e-6f64.ln()).abs() < 1e-12);
    assert!((flat.log_scale[2] - 0.5 * SIGMA2_FLOOR.ln()).abs() < 1e-12);
    assert!(decompose_covariance([[f64::NAN, 0.0, 0.0], [0.0; 3], [0.0; 3]]).is_none());
    assert!(compose_covariance([0.0; 3], [0.0; 4]).is_none());
    assert!(compose_covariance([1000.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]).is_none());
}

#[test]
fn colour_and_opacity_conventions() {
    // C0 = 1/(2√π).
    assert!((SH_C0 - 0.5 / std::f64::consts::PI.sqrt()).abs() < 1e-16);
    assert!((rgb_to_sh_dc(1.0) - std::f64::consts::PI.sqrt()).abs() < 1e-12);
    assert!((rgb_to_sh_dc(0.5)).abs() < 1e-15);
    assert!((sh_dc_to_rgb(rgb_to_sh_dc(0.3)) - 0.3).abs() < 1e-15);
    let (l, clamped) = opacity_to_logit(0.8);
    assert!((l - 4f64.ln()).abs() < 1e-12 && !clamped);
    let (l, clamped) = opacity_to_logit(0.0);
    assert!(clamped && (l - (OPACITY_EPS / (1.0 - OPACITY_EPS)).ln()).abs() < 1e-12);
    let (l, clamped) = opacity_to_logit(1.0);
    assert!(clamped && (logit_to_opacity(l) - (1.0 - OPACITY_EPS)).abs() < 1e-12);
    assert!((logit_to_opacity(0.0) - 0.5).abs() < 1e-15);
}
