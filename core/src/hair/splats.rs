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
