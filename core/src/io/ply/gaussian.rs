//! The per-gaussian conventions of the INRIA 3D Gaussian Splatting PLY: colour as a degree-0
//! spherical-harmonic coefficient, opacity as a logit, covariance as log-scales plus a rotation
//! quaternion.
//!
//! Source: Kerbl et al. 2023, "3D Gaussian Splatting for Real-Time Radiance Field Rendering", §4
//! (`Σ = R·S·Sᵀ·Rᵀ`), and the reference implementation `graphdeco-inria/gaussian-splatting`:
//! `utils/sh_utils.py` (`RGB2SH`, `SH2RGB`, `C0`), `scene/gaussian_model.py`
//! (`opacity_activation = sigmoid`, `scaling_activation = exp`, `rotation_activation =
//! normalize`) and `utils/general_utils.py` (`build_rotation`, quaternion `(w, x, y, z)` =
//! `rot_0..rot_3`).

use nalgebra::{Matrix3, Quaternion, Rotation3, SymmetricEigen, UnitQuaternion, Vector3};

/// The degree-0 real spherical-harmonic constant `1 / (2·√π)` (INRIA `sh_utils.py` `C0`).
pub const SH_C0: f64 = 0.28209479177387814;

/// Linear opacities are clamped to `[OPACITY_EPS, 1 − OPACITY_EPS]` before the logit, so opacity
/// 1 is stored as `logit(1 − 1e-6) ≈ 13.8` instead of +∞.
pub const OPACITY_EPS: f64 = 1e-6;

/// The smallest variance written, m²: `σ = 1e-7 m` (0.1 µm, `scale = ln σ ≈ −16.1`). Eigenvalues
/// below it (zero, or negative from rounding of a flat covariance) are raised to it and counted.
/// It is far below any splat a face needs (the debug lift's default σ is 2 mm) and far above
/// what underflows `exp(2·scale)` in f32.
pub const SIGMA2_FLOOR: f64 = 1e-14;

/// Iteration cap for the symmetric eigen-solver; a 3×3 converges in a few dozen sweeps.
const EIGEN_MAX_ITER: usize = 1000;

/// Colour channel in `[0,1]` → its `f_dc` coefficient: `(c − 0.5) / C0` (INRIA `RGB2SH`).
#[inline]
pub fn rgb_to_sh_dc(c: f64) -> f64 {
    (c - 0.5) / SH_C0
}

/// `f_dc` coefficient → colour channel: `0.5 + C0·f` (INRIA `SH2RGB`; renderers clamp below at 0).
#[inline]
pub fn sh_dc_to_rgb(f: f64) -> f64 {
    0.5 + SH_C0 * f
}

/// Inverse sigmoid `ln(a / (1 − a))` of `a` clamped to `[OPACITY_EPS, 1 − OPACITY_EPS]`; the flag
/// says whether the clamp changed `a`.
#[inline]
pub fn opacity_to_logit(a: f64) -> (f64, bool) {
    let c = a.clamp(OPACITY_EPS, 1.0 - OPACITY_EPS);
    ((c / (1.0 - c)).ln(), c != a)
}

/// Sigmoid `1 / (1 + e^(−x))`, the INRIA opacity activation.
#[inline]
pub fn logit_to_opacity(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// A covariance as the PLY stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleRotation {
    /// `scale_i = ln σ_i`, metres, largest first: `σ_i²` are the covariance's eigenvalues.
    pub log_scale: [f64; 3],
    /// Unit quaternion `(w, x, y, z)` with `w ≥ 0` of the proper rotation `R` (det +1) whose
    /// columns are the eigenvectors, so `Σ = R·diag(σ²)·Rᵀ`.
    pub rotation: [f64; 4],
    /// How many eigenvalues were raised to [`SIGMA2_FLOOR`] (0–3).
    pub clamped: u32,
}

/// Decompose a symmetric 3×3 covariance (row-major, m²) into log-scales and a rotation.
///
/// Uses nalgebra's `SymmetricEigen` on the f64 matrix (only its lower triangle is read).
/// Eigenpairs are sorted by decreasing eigenvalue (ties by solver order); each eigenvector's
/// largest-magnitude component (the first on ties) is made positive, then the third is negated
/// when the matrix of eigenvectors has determinant −1 — sign changes leave `R·D·Rᵀ` unchanged and
/// make the output deterministic (an axis-aligned `diag(4, 1, 9)·10⁻⁶` gives `R = [e_z e_x e_y]`,
/// `q = (½, −½, −½, −½)`). Eigenvalues below
/// [`SIGMA2_FLOOR`] are clamped to it and counted. Returns `None` when an entry is not finite or
/// the solver does not converge (never for finite input in practice).
pub fn decompose_covariance(cov: [[f64; 3]; 3]) -> Option<ScaleRotation> {
    if !cov.iter().flatten().all(|x| x.is_finite()) {
        return None;
    }
    let m = Matrix3::from_fn(|r, c| cov[r][c]);
    let eig = SymmetricEigen::try_new(m, f64::EPSILON, EIGEN_MAX_ITER)?;
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| {
        eig.eigenvalues[b]
            .total_cmp(&eig.eigenvalues[a])
            .then(a.cmp(&b))
    });

    let mut r = Matrix3::from_columns(&order.map(|k| {
        let v = eig.eigenvectors.column(k).into_owned();
        let big = v.iamax();
        if v[big] < 0.0 { -v } else { v }
    }));
    if r.determinant() < 0.0 {
        r.set_column(2, &(-r.column(2)));
    }
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r));
    let q = q.quaternion();
    let sign = if q.w < 0.0 { -1.0 } else { 1.0 };

    let mut clamped = 0;
    let log_scale = order.map(|k| {
        let mut v = eig.eigenvalues[k];
        if v.is_nan() || v < SIGMA2_FLOOR {
            v = SIGMA2_FLOOR;
            clamped += 1;
        }
        0.5 * v.ln()
    });
    Some(ScaleRotation {
        log_scale,
        rotation: [sign * q.w, sign * q.i, sign * q.j, sign * q.k],
        clamped,
    })
}

/// The covariance `R·diag(exp(2·scale))·Rᵀ` (row-major, m²) of log-scales and a quaternion
/// `(w, x, y, z)`, normalised first as INRIA `rotation_activation` does. `None` when an input is
/// not finite, the quaternion has zero length, or the result overflows.
pub fn compose_covariance(log_scale: [f64; 3], rotation: [f64; 4]) -> Option<[[f64; 3]; 3]> {
    if !log_scale.iter().chain(&rotation).all(|x| x.is_finite()) {
        return None;
    }
    let [w, x, y, z] = rotation;
    let q = Quaternion::new(w, x, y, z);
    let norm = q.norm();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    let r = UnitQuaternion::from_quaternion(q)
        .to_rotation_matrix()
        .into_inner();
    let d = Vector3::from(log_scale.map(|s| (2.0 * s).exp()));
    let cov = r * Matrix3::from_diagonal(&d) * r.transpose();
    let out: [[f64; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| cov[(i, j)]));
    out.iter().flatten().all(|v| v.is_finite()).then_some(out)
}
