//! Strands as gaussians (issue 27 item 4, the CPU reference): every segment of every child strand
//! becomes one elongated gaussian — centred on the segment's midpoint, its long axis along the
//! segment, its two narrow axes the strand's thickness there — coloured root → tip.
//!
//! For segment `k` of a strand of `S` segments, from `a` to `b` (`t = (k + ½)/S` along it):
//! - centre `(a + b)/2`;
//! - covariance `Σ = σ∥²·uuᵀ + σ⊥²·(I − uuᵀ)` with `u = (b − a)/|b − a|`, `σ∥ = |b − a| / 2` (the
//!   segment spans ±1σ, so neighbours overlap into a continuous strand) and `σ⊥ = w(t) / 2`,
//!   `w(t)` the thickness interpolated root → tip (the strand's width spans ±1σ);
//! - colour `lerp(root, tip, t) × tint`, clamped to `[0, 1]`, opaque.
//!
//! A degenerate segment (zero length) gets a round gaussian of the thickness. Slots: strand `c`'s
//! segment `k` is slot `c·S + k` of the range written.
//!
//! The GPU kernel (`mien-shaders` `hair.wgsl`) evaluates the same points in f32 and the gaussian in
//! f32 where this reference takes f64; [`splat_bounds`] is the derived bound between the two.

use glam::{DMat3, DVec3};

use super::groom::Groom;
use crate::error::{Error, Result};
use crate::sink::{SplatBuffers, pack4x8unorm};

/// The gaussian of one segment `a → b` of a strand of thickness `width` (metres): its centre and
/// its covariance `(c00, c01, c02, c11, c12, c22)`, m² (module doc).
pub fn segment_gaussian(a: DVec3, b: DVec3, width: f64) -> (DVec3, [f64; 6]) {
    let d = b - a;
    let len = d.length();
    let perp = (width / 2.0).powi(2);
    let m = if len > 0.0 {
        let u = d / len;
        let along = (len / 2.0).powi(2);
        let uu = DMat3::from_cols(u * u.x, u * u.y, u * u.z);
        uu * along + (DMat3::IDENTITY - uu) * perp
    } else {
        DMat3::IDENTITY * perp
    };
    (
        (a + b) / 2.0,
        [
            m.x_axis.x, m.y_axis.x, m.z_axis.x, m.y_axis.y, m.z_axis.y, m.z_axis.z,
        ],
    )
}

/// Write the gaussians of every child strand of `groom`, given the guides' current points
/// `guides` (`(G·(S+1), 3)`, world or character metres), into `out` from slot `offset`:
/// `C·S` slots (module doc).
///
/// # Errors
/// [`Error::Mismatch`] for `guides` of the wrong length; [`Error::Invalid`] when the slots do not
/// fit `out`.
pub fn strand_splats(
    groom: &Groom,
    guides: &[[f32; 3]],
    out: &mut SplatBuffers,
    offset: usize,
) -> Result<usize> {
    if guides.len() != groom.guides.len() {
        return Err(Error::Mismatch {
            what: "hair guide points".into(),
            expected: groom.guides.len() as u64,
            found: guides.len() as u64,
        });
    }
    let s = groom.segments;
    let n = groom.child_count() * s;
    if offset.checked_add(n).is_none_or(|end| end > out.len()) {
        return Err(Error::Invalid {
            what: "hair splat slots".into(),
            reason: format!("{n} slots from {offset} do not fit a sink of {}", out.len()),
        });
    }
    let mut pts = vec![[0.0f32; 3]; s + 1];
    let [root, tip] = groom.colour;
    for c in 0..groom.child_count() {
        groom.child_points(guides, c, &mut pts);
        let tint = groom.child_tint[c];
        for k in 0..s {
            let t = (k as f64 + 0.5) / s as f64;
            let width = f64::from(groom.thickness[0])
                + (f64::from(groom.thickness[1]) - f64::from(groom.thickness[0])) * t;
            let a = DVec3::from(pts[k].map(f64::from));
            let b = DVec3::from(pts[k + 1].map(f64::from));
            let (centre, cov) = segment_gaussian(a, b, width);
            let i = offset + c * s + k;
            out.center[i] = [centre.x as f32, centre.y as f32, centre.z as f32, 0.0];
            out.cov_a[i] = [cov[0] as f32, cov[1] as f32, cov[2] as f32, cov[3] as f32];
            out.cov_b[i] = [cov[4] as f32, cov[5] as f32, 0.0, 0.0];
            let col = |j: usize| ((root[j] + (tip[j] - root[j]) * t as f32) * tint).clamp(0.0, 1.0);
            out.color[i] = pack4x8unorm([col(0), col(1), col(2), 1.0]);
        }
    }
    Ok(n)
}

/// The unit roundoff of f32, `2⁻²⁴`.
const U32: f64 = 5.960_464_477_539_063e-8;

/// `γₙ = n·u / (1 − n·u)` (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1) for f32.
fn gamma(n: u32) -> f64 {
    let nu = f64::from(n) * U32;
    nu / (1.0 - nu)
}

/// How far an f32 evaluation of [`strand_splats`] (the GPU kernel's) may lie from the reference,
/// per slot: `(centre, covariance)` — the largest difference of any centre coordinate (metres) and
/// of any covariance entry (m²) — for slot `c·S + k`. Colours may differ by one unit of
/// `pack4x8unorm` (1/255) where a channel lies at a rounding boundary.
///
/// Derivation (Higham §3): both sides compute child point `pₖ` in f32 by the expression of
/// [`Groom::child_points`]; with `M` the largest coordinate magnitude of the child's three guides,
/// `W = Σ|wᵢ|`, `P = W·M` (a bound on `|bₖ|`), `Q = 2M + 2P` (on `|own − (bₖ − b₀)|`) and
/// `τ = clump·k/S`, each side's point lies within `εₖ = γ₄·P + γ₁₀·τ·Q` of the exact one (the
/// weighted sum γ₃, the differences and the clump product one rounding each; a fused multiply-add
/// only removes roundings), so the two sides' points differ by at most `2εₖ` per coordinate.
/// Then for the segment `a → b` with `d = b − a`, `δ = √3·(2εₖ + 2εₖ₊₁) + γ₁·√3·|d|` bounds the
/// change of `d` (both sides' points and the f32 subtraction); the covariance
/// `Σ(d) = ddᵀ/4 + σ⊥²·(I − ddᵀ/|d|²)` changes by at most `(|d|/2)·δ + δ²/4` through its first term
/// and `min(2σ⊥²·2δ/|d|, 2σ⊥²)` through its second (`ddᵀ/|d|²` has entries of magnitude ≤ 1 and
/// derivative ≤ 2/|d|), and the f32 evaluation of `Σ` from `d` (length, unit vector, products and
/// the thickness lerp) adds `γ₁₆·(|d|²/4 + σ⊥²)`, the final rounding of the f64 reference to f32
/// included. The centre `(a + b)/2` differs by `εₖ + εₖ₊₁` plus `γ₂·|centre|`.
///
/// # Errors
/// [`Error::Mismatch`] for `guides` of the wrong length.
pub fn splat_bounds(groom: &Groom, guides: &[[f32; 3]]) -> Result<Vec<(f64, f64)>> {
    if guides.len() != groom.guides.len() {
        return Err(Error::Mismatch {
            what: "hair guide points".into(),
            expected: groom.guides.len() as u64,
            found: guides.len() as u64,
        });
    }
    let s = groom.segments;
    let s1 = s + 1;
    let mut out = Vec::with_capacity(groom.child_count() * s);
    let mut pts = vec![[0.0f32; 3]; s1];
    for c in 0..groom.child_count() {
        let g = groom.child_guides[c];
        let m = g
            .iter()
            .flat_map(|&i| guides[i as usize * s1..(i as usize + 1) * s1].iter())
            .flat_map(|p| p.iter())
            .fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
        let w: f64 = groom.child_weights[c]
            .iter()
            .map(|x| f64::from(*x).abs())
            .sum();
        let (p, q) = (w * m, 2.0 * m + 2.0 * w * m);
        let eps = |k: usize| {
            let tau = f64::from(groom.clump.abs()) * k as f64 / s as f64;
            gamma(4) * p + gamma(10) * tau * q
        };
        groom.child_points(guides, c, &mut pts);
        for k in 0..s {
            let a = DVec3::from(pts[k].map(f64::from));
            let b = DVec3::from(pts[k + 1].map(f64::from));
            let t = (k as f64 + 0.5) / s as f64;
            let width = f64::from(groom.thickness[0])
                + (f64::from(groom.thickness[1]) - f64::from(groom.thickness[0])) * t;
            let perp = (width / 2.0).powi(2);
            let dl = (b - a).length();
            let (ea, eb) = (eps(k), eps(k + 1));
            let delta = 3f64.sqrt() * (2.0 * ea + 2.0 * eb) + gamma(1) * 3f64.sqrt() * dl;
            let first = dl / 2.0 * delta + delta * delta / 4.0;
            let second = if dl > 0.0 {
                (2.0 * perp * 2.0 * delta / dl).min(2.0 * perp)
            } else {
                2.0 * perp
            };
            let cov = first + second + gamma(16) * (dl * dl / 4.0 + perp);
            let centre = ea + eb + gamma(2) * ((a + b) / 2.0).abs().max_element();
            out.push((centre, cov));
        }
    }
    Ok(out)
}
