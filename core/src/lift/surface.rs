//! The surface lift: gaussians spread over every triangle, bound to it ([`super::bound`]).
//!
//! **Placement.** A triangle of area `a` is cut into `m²` congruent sub-triangles (each edge into
//! `m` parts) and one gaussian sits at each sub-triangle's centroid — exact barycentrics, an even
//! cover, no randomness. `m = round(√(w·a / s))` with `w` the triangle's density weight (1, or
//! [`SurfaceOptions::face_density`] on the face: [`surface_lift_weighted`]) and `s = Σ w·a /
//! target` the weighted area per gaussian, so density follows area and the face gets more; on a
//! textured triangle `m` is also at most `⌈√texels⌉` for the texels its UVs cover (more gaussians
//! than texels add nothing), so density follows texture resolution too. A long thin triangle is
//! split at least `⌈L / 2ℓ⌉` times (`L` its longest edge, `ℓ = √(4s/√3)` the side of an
//! equilateral triangle of area `s`), so no gaussian is more than twice as long as its
//! neighbours' spacing (one gaussian on a sliver would reach past the sliver's ends and flare out
//! of the silhouette); when that pushes the total more than 5 % past the target, `s` grows until
//! it does not. `m` is clamped to `[1, max_split]`: every triangle gets at least one gaussian.
//!
//! **Shape.** A uniform triangle with vertices `qᵢ` about its centroid has covariance
//! `C = (1/12)·Σ qᵢqᵢᵀ` (the second moment of the uniform distribution on a triangle); a
//! sub-triangle has `C/m²` (all `m²` are translates or point reflections of one another, which
//! leaves `C` unchanged). The gaussian takes that in-plane covariance scaled by `spread²` (a
//! gaussian with exactly the triangle's covariance leaves gaps at the corners, where six
//! neighbours meet; `spread` 2.5 closes them: strict coverage — alpha ≥ 0.99 — 0.9998 on a
//! zoomed-in posed face in `core/tests/lift_coverage.rs`, where 2 leaves 12 % of the pixels letting
//! 1–5 % through, a lattice wherever something darker lies behind the surface), a thickness along
//! the normal of `thickness × σ₁` (the
//! larger in-plane σ), and each σ floored at `10⁻³·k` — flat along the surface, never
//! zero. Its rotation is the in-plane eigenbasis as a turn about the normal.
//!
//! **Colour.** The mean of four samples of [`SurfaceColors`] over the sub-triangle (its centroid
//! and the midpoints between the centroid and its corners); a gaussian whose opacity is 0 (a
//! MASK material's cut-out) is skipped.
//!
//! Sources: seed 000 (surface lift); GaussianAvatars (Qian et al. 2024) §3.2 for the triangle
//! frame; the triangle second moment from any probability text (e.g. `Var = (a²+b²+c²)/12` for
//! centred vertices, per axis).

use super::bound::{BoundGaussian, K_MIN, triangle_frame};
use super::color::{ColorReport, SurfaceColors};
use crate::error::{Error, Result};
use crate::sink::pack4x8unorm;

/// Most gaussians one lift builds (16 Mi: 800 MB of sink); a larger request is refused before
/// anything is allocated.
pub const MAX_GAUSSIANS: u64 = 1 << 24;

/// Surface lift settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SurfaceOptions {
    /// Gaussians wanted over the whole surface (the result differs: at least one per triangle,
    /// fewer where textures are coarse).
    pub target: u32,
    /// In-plane σ as a multiple of the sub-triangle's own (≥ 1).
    pub spread: f32,
    /// Thickness along the normal as a fraction of the larger in-plane σ (0 < t ≤ 1).
    pub thickness: f32,
    /// Largest split of one triangle's edges (`m`), so one huge triangle cannot take the budget.
    pub max_split: u32,
    /// Density weight of the head's triangles (those the head joint and the joints below it move,
    /// [`face_triangles`]) against 1 elsewhere, 1 to 64 ([`surface_lift_weighted`]): a full-body
    /// avatar's face, a few per cent of its area, is what users look at.
    pub face_density: f32,
}

impl Default for SurfaceOptions {
    /// 100 000 gaussians, spread 2.5, thickness 0.1, at most 64 × 64 per triangle, the head 4× as
    /// dense.
    fn default() -> Self {
        SurfaceOptions {
            target: 100_000,
            spread: 2.5,
            thickness: 0.1,
            max_split: 64,
            face_density: 4.0,
        }
    }
}

impl SurfaceOptions {
    /// Check the domain.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the field out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, reason: String| {
            Err(Error::Invalid {
                what: format!("surface lift {what}"),
                reason,
            })
        };
        if self.target == 0 || u64::from(self.target) > MAX_GAUSSIANS {
            return bad(
                "target",
                format!("{}: must be 1 to {MAX_GAUSSIANS}", self.target),
            );
        }
        check_shape("surface lift", self.spread, self.thickness)?;
        if !(1..=1024).contains(&self.max_split) {
            return bad(
                "max_split",
                format!("{}: must be 1 to 1024", self.max_split),
            );
        }
        if !(self.face_density.is_finite() && (1.0..=64.0).contains(&self.face_density)) {
            return bad(
                "face_density",
                format!("{}: must be 1 to 64", self.face_density),
            );
        }
        Ok(())
    }
}

/// The shape settings the surface and texel lifts share: `spread` 1 to 8 (σ as a multiple of the
/// element's own), `thickness` in (0, 1] (a fraction of the larger in-plane σ).
///
/// # Errors
/// [`Error::Invalid`] naming `lift`'s field out of range.
pub(crate) fn check_shape(lift: &str, spread: f32, thickness: f32) -> Result<()> {
    if !(spread.is_finite() && (1.0..=8.0).contains(&spread)) {
        return Err(Error::Invalid {
            what: format!("{lift} spread"),
            reason: format!("{spread}: must be 1 to 8"),
        });
    }
    if !(thickness.is_finite() && thickness > 0.0 && thickness <= 1.0) {
        return Err(Error::Invalid {
            what: format!("{lift} thickness"),
            reason: format!("{thickness}: must be in (0, 1]"),
        });
    }
    Ok(())
}

/// What a bound lift built.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BoundReport {
    /// Which lift (`surface`, `texel`, `bound`).
    pub lift: String,
    /// Gaussians built.
    pub gaussians: u64,
    /// Triangles read.
    pub triangles: u64,
    /// Triangles whose rest frame used the fallback normal (near-zero area).
    pub fallback_frames: u64,
    /// Gaussians skipped because their opacity was 0 (MASK cut-outs).
    pub transparent_skipped: u64,
    /// Texel lift: triangles whose texel gaussians were capped at the triangle's own shape (UVs
    /// squeezed so one texel spans much of the triangle).
    pub stretched_capped: u64,
    /// How colour was found.
    pub colors: ColorReport,
}

/// A built lift: the embedding and what it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundLift {
    /// Gaussians `(G,)` bound to the triangles they name.
    pub gaussians: Vec<BoundGaussian>,
    /// Triangles `(T,3)` the gaussians index (the rig's).
    pub triangles: Vec<[u32; 3]>,
    /// What was built.
    pub report: BoundReport,
}

fn sub3(a: [f32; 3], b: [f32; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| f64::from(a[i]) - f64::from(b[i]))
}

/// How much longer than the spacing of its neighbours one gaussian of a sliver may be (the sliver
/// rule, module docs).
const SLIVER_LENGTH: f64 = 2.0;

/// The sub-triangle split of each triangle (`m` per triangle), and the total `Σ m²`; `density`
/// `(T,)` weights each triangle's area (empty: all 1).
fn splits(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    colors: &SurfaceColors,
    density: &[f32],
    opts: &SurfaceOptions,
) -> (Vec<u32>, u64) {
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let (areas, longest): (Vec<f64>, Vec<f64>) = triangles
        .iter()
        .map(|t| {
            let e1 = sub3(positions[t[1] as usize], positions[t[0] as usize]);
            let e2 = sub3(positions[t[2] as usize], positions[t[0] as usize]);
            let e3 = sub3(positions[t[2] as usize], positions[t[1] as usize]);
            let c = [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ];
            (0.5 * norm(c), norm(e1).max(norm(e2)).max(norm(e3)))
        })
        .unzip();
    let weight = |i: usize| density.get(i).map_or(1.0, |&w| f64::from(w));
    let total: f64 = areas
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_finite())
        .map(|(i, a)| a * weight(i))
        .sum();
    let split = |per: f64| -> (Vec<u32>, u64) {
        let mut sum = 0u64;
        let max = f64::from(opts.max_split);
        let m: Vec<u32> = areas
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let w = weight(i);
                let mut m = if per > 0.0 && a.is_finite() {
                    (a * w / per).sqrt().round().clamp(1.0, max) as u32
                } else {
                    1
                };
                if let Some(tx) = colors.texels_covered(i as u32) {
                    m = m.min(tx.sqrt().ceil().max(1.0) as u32);
                }
                // A sliver is split along its length whatever its area (module docs).
                let side = SLIVER_LENGTH * (4.0 * per / w.max(1e-12) / 3f64.sqrt()).sqrt();
                if side > 0.0 && longest[i].is_finite() {
                    m = m.max((longest[i] / side).ceil().clamp(1.0, max) as u32);
                }
                sum += u64::from(m) * u64::from(m);
                m
            })
            .collect();
        (m, sum)
    };
    // The sliver rule adds gaussians: widen the area per gaussian (bisection on its scale, 40
    // steps) until the total is within 5 % of the target — or as close as one per triangle gets.
    let per = total / f64::from(opts.target);
    let first = split(per);
    let goal = (f64::from(opts.target) * 1.05) as u64;
    if first.1 <= goal || per <= 0.0 {
        return first;
    }
    let (mut lo, mut hi) = (1.0f64, 1.0f64);
    let mut best = first;
    while best.1 > goal && hi < 1e12 {
        lo = hi;
        hi *= 4.0;
        best = split(per * hi);
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        let s = split(per * mid);
        if s.1 > goal {
            lo = mid;
        } else {
            hi = mid;
            best = s;
        }
    }
    best
}

/// The gaussian centroids of an `m`-split: `m²` barycentric pairs `(β1, β2)`.
pub fn split_points(m: u32) -> impl Iterator<Item = [f32; 2]> {
    let mf = m as f32;
    (0..m).flat_map(move |i| {
        (0..m - i).flat_map(move |j| {
            let up = [(i as f32 + 1.0 / 3.0) / mf, (j as f32 + 1.0 / 3.0) / mf];
            let down = (i + j + 2 <= m)
                .then(|| [(i as f32 + 2.0 / 3.0) / mf, (j as f32 + 2.0 / 3.0) / mf]);
            std::iter::once(up).chain(down)
        })
    })
}

/// In-plane covariance of a uniform triangle `p` `(3,3)` in the frame axes `t, b`: `[c00, c01, c11]`.
pub fn triangle_covariance_2d(p: [[f32; 3]; 3], t: [f32; 3], b: [f32; 3]) -> [f64; 3] {
    let c: [f64; 3] =
        [0, 1, 2].map(|k| (f64::from(p[0][k]) + f64::from(p[1][k]) + f64::from(p[2][k])) / 3.0);
    let mut out = [0.0f64; 3];
    for v in p {
        let q = [0, 1, 2].map(|k| f64::from(v[k]) - c[k]);
        let x = q[0] * f64::from(t[0]) + q[1] * f64::from(t[1]) + q[2] * f64::from(t[2]);
        let y = q[0] * f64::from(b[0]) + q[1] * f64::from(b[1]) + q[2] * f64::from(b[2]);
        out[0] += x * x / 12.0;
        out[1] += x * y / 12.0;
        out[2] += y * y / 12.0;
    }
    out
}

/// The rotation (a turn by θ about the frame's normal) and log-scales (units of `k`) of an
/// in-plane covariance `[c00, c01, c11]` (m²) with the given thickness fraction.
pub fn flat_shape(c: [f64; 3], k: f32, thickness: f32) -> ([f32; 4], [f32; 3]) {
    let (a, b, d) = (c[0], c[1], c[2]);
    let tr = 0.5 * (a + d);
    let disc = (0.25 * (a - d) * (a - d) + b * b).sqrt();
    let (l1, l2) = (tr + disc, (tr - disc).max(0.0));
    let theta = 0.5 * (2.0 * b).atan2(a - d);
    let k = f64::from(k.max(K_MIN));
    let floor = 1e-3 * k;
    let s1 = l1.max(0.0).sqrt().max(floor);
    let s2 = l2.sqrt().max(floor);
    let sn = (f64::from(thickness) * s1).max(floor);
    let (sin, cos) = (0.5 * theta).sin_cos();
    (
        [cos as f32, 0.0, 0.0, sin as f32],
        [
            (s1 / k).ln() as f32,
            (s2 / k).ln() as f32,
            (sn / k).ln() as f32,
        ],
    )
}

/// Build the surface lift of a mesh at rest: `positions` `(V,3)` metres (the rest pose the
/// gaussians are shaped in), `normals` `(V,3)` (for the fallback frame), `triangles` `(T,3)`.
///
/// ```
/// use mien_core::lift::{BoundSetup, SurfaceColors, SurfaceOptions, surface_lift};
/// // A 1 m square of two triangles, no material: coloured by its normal.
/// let pos = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
/// let nrm = [[0.0, 0.0, 1.0]; 4];
/// let tris = [[0, 1, 2], [0, 2, 3]];
/// let colors = SurfaceColors::untextured(&tris, &nrm, None);
/// let opts = SurfaceOptions { target: 800, ..Default::default() };
/// let lift = surface_lift(&pos, &nrm, &tris, &colors, &opts)?;
/// assert_eq!(lift.gaussians.len(), 800); // 20² per triangle
/// // Pose every gaussian on the vertices moved 1 m up: centres follow, shapes stay.
/// let setup = BoundSetup::new(&lift.gaussians, lift.triangles)?;
/// let moved = pos.map(|p| [p[0], p[1], p[2] + 1.0]);
/// let s = setup.pose(0, &moved, &nrm);
/// assert!((s.center[2] - 1.0).abs() < 1e-6);
/// # Ok::<(), mien_core::Error>(())
/// ```
///
/// # Errors
/// Out-of-domain options; [`Error::Invalid`] for a triangle index past the vertices or a
/// non-finite position; [`Error::Limit`] when the split would build more than [`MAX_GAUSSIANS`].
pub fn surface_lift(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    triangles: &[[u32; 3]],
    colors: &SurfaceColors,
    opts: &SurfaceOptions,
) -> Result<BoundLift> {
    surface_lift_weighted(positions, normals, triangles, colors, &[], opts)
}

/// Which triangles `(T,)` are the head: those with a vertex whose dominant palette entry
/// (`dominant` `(V,)`, [`crate::rig::RigData::dominant_palette`]) is marked in `head` `(P,)` —
/// the head joint and the joints below it (eyes, jaw), or a rigid head node. A character whose
/// every triangle is the head (a head on its own) or none gets no emphasis from the density.
pub fn face_triangles(triangles: &[[u32; 3]], dominant: &[u32], head: &[bool]) -> Vec<bool> {
    let on_head = |v: u32| {
        dominant
            .get(v as usize)
            .and_then(|&p| head.get(p as usize))
            .copied()
            .unwrap_or(false)
    };
    triangles
        .iter()
        .map(|t| t.iter().any(|&v| on_head(v)))
        .collect()
}

/// [`surface_lift`] with a density weight per triangle: `density` `(T,)` (each ≥ 0; empty: all
/// 1) multiplies the triangle's area in the split rule (module docs) — the runtime passes
/// [`SurfaceOptions::face_density`] on [`face_triangles`] and 1 elsewhere.
///
/// # Errors
/// As [`surface_lift`]; [`Error::Mismatch`] for a `density` of another length than `triangles`;
/// [`Error::Invalid`] for a negative or non-finite weight.
pub fn surface_lift_weighted(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    triangles: &[[u32; 3]],
    colors: &SurfaceColors,
    density: &[f32],
    opts: &SurfaceOptions,
) -> Result<BoundLift> {
    opts.validate()?;
    check_mesh(positions, normals, triangles)?;
    if !density.is_empty() && density.len() != triangles.len() {
        return Err(Error::Mismatch {
            what: "surface lift density weights".into(),
            expected: triangles.len() as u64,
            found: density.len() as u64,
        });
    }
    if let Some(i) = density.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(Error::Invalid {
            what: format!("surface lift density weight {i}"),
            reason: format!("{}: must be a finite weight ≥ 0", density[i]),
        });
    }
    let (m, total) = splits(positions, triangles, colors, density, opts);
    if total > MAX_GAUSSIANS {
        return Err(Error::Limit {
            what: "surface lift gaussians".into(),
            limit: MAX_GAUSSIANS,
            found: total,
        });
    }
    let mut out = Vec::with_capacity(total as usize);
    let mut report = BoundReport {
        lift: "surface".into(),
        triangles: triangles.len() as u64,
        ..Default::default()
    };
    for (ti, (t, &m)) in triangles.iter().zip(&m).enumerate() {
        let p = t.map(|v| positions[v as usize]);
        let n = t.map(|v| normals[v as usize]);
        let f = triangle_frame(p, n);
        report.fallback_frames += u64::from(f.fallback);
        let c = triangle_covariance_2d(p, f.axes[0], f.axes[1]);
        let s2 = f64::from(opts.spread).powi(2) / f64::from(m * m);
        let (rotation, log_scale) = flat_shape(c.map(|x| x * s2), f.k, opts.thickness);
        let h = 1.0 / (3.0 * m as f32);
        for [b1, b2] in split_points(m) {
            // Four samples: the centroid and halfway to each corner of the sub-triangle (whose
            // corners lie 2h from the centroid along the barycentric axes, up or down).
            let b0 = 1.0 - b1 - b2;
            let mut rgba = [0.0f32; 4];
            let centroid = [b0, b1, b2];
            for q in 0..4 {
                let mut bc = centroid;
                if q > 0 {
                    // Move h toward corner q−1 of the parent triangle, staying inside it.
                    for (k, x) in bc.iter_mut().enumerate() {
                        *x += if k == q - 1 { h } else { -0.5 * h };
                    }
                    bc = bc.map(|x| x.max(0.0));
                    let s: f32 = bc.iter().sum();
                    bc = bc.map(|x| x / s);
                }
                let c = colors.color(ti as u32, bc);
                for k in 0..4 {
                    rgba[k] += 0.25 * c[k];
                }
            }
            if rgba[3] <= 0.0 {
                report.transparent_skipped += 1;
                continue;
            }
            out.push(BoundGaussian {
                triangle: ti as u32,
                bary: [b1, b2],
                offset: 0.0,
                rotation,
                log_scale,
                color: pack4x8unorm(rgba),
            });
        }
    }
    report.gaussians = out.len() as u64;
    report.colors = colors.report.clone();
    Ok(BoundLift {
        gaussians: out,
        triangles: triangles.to_vec(),
        report,
    })
}

/// Indices inside the vertices, positions finite, one normal per vertex.
pub(crate) fn check_mesh(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    triangles: &[[u32; 3]],
) -> Result<()> {
    if normals.len() != positions.len() {
        return Err(Error::Mismatch {
            what: "lift rest normals".into(),
            expected: positions.len() as u64,
            found: normals.len() as u64,
        });
    }
    if let Some(i) = positions
        .iter()
        .position(|p| !p.iter().all(|x| x.is_finite()))
    {
        return Err(Error::Invalid {
            what: format!("lift rest vertex {i}"),
            reason: "position not finite".into(),
        });
    }
    if let Some((i, t)) = triangles
        .iter()
        .enumerate()
        .find(|(_, t)| t.iter().any(|&v| v as usize >= positions.len()))
    {
        return Err(Error::Invalid {
            what: format!("lift triangle {i}"),
            reason: format!("vertex indices {t:?} past the {} vertices", positions.len()),
        });
    }
    Ok(())
}
