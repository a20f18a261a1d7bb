//! The texel lift: one gaussian per texel of a UV raster of the mesh (FlashAvatar, Xiang et al.
//! 2024, §3.1: gaussians on a UV grid, bound to the mesh), bound to the texel's triangle by its
//! barycentrics ([`super::bound`]) and coloured by the texture at the texel's centre.
//!
//! **Raster.** Texel `(i, j)` of an `R × R` raster has its centre at `((i + ½)/R, (j + ½)/R)` in
//! UV space; every triangle rasterises the texel centres inside its own UV triangle (UVs outside
//! `[0, 1]` simply reach texels of other tiles, so tiling and mirrored charts need no wrapping).
//! A texel belongs to every triangle whose UV triangle holds its centre, so two charts that share
//! texture space (a mirrored face) both get their gaussians.
//!
//! **Seams.** A texel whose centre lies outside the triangle but whose square overlaps it, across
//! an edge no other triangle shares in both UV and position (a chart boundary, where no neighbour
//! takes the centre), is kept with its barycentrics clamped to the triangle's closest point — so
//! the surface along a UV seam has no crack. Across a shared edge the neighbour owns the centre
//! (one exactly on it goes to the lower-numbered triangle).
//!
//! **Outside any texel.** A triangle whose UV triangle holds no texel centre (tiny in UV, or of
//! zero UV area) still gets one gaussian at its centroid shaped as the surface lift's, so small
//! triangles leave no holes.
//!
//! **Shape.** The texel's square maps to the surface through the triangle's UV → position
//! Jacobian `J = E·A⁻¹` (`E` the position edges, `A` the UV edges); a uniform square of side `1/R`
//! has covariance `I / (12 R²)`, so the gaussian takes `spread² · J·Jᵀ / (12 R²)` in the plane
//! (`spread` 2.5: coverage 1.000 of a zoomed-in posed face at 512², 0.986 at 2),
//! flat along the normal as the surface lift's ([`super::surface::flat_shape`]). Where a chart is
//! squeezed so one texel spans much of a triangle, the gaussian is capped at the triangle's own
//! shape (counted in [`BoundReport::stretched_capped`]).

use super::bound::{BoundGaussian, triangle_frame};
use super::color::SurfaceColors;
use super::surface::{
    BoundLift, BoundReport, MAX_GAUSSIANS, check_mesh, flat_shape, triangle_covariance_2d,
};
use crate::error::{Error, Result};
use crate::sink::pack4x8unorm;
use std::collections::HashMap;

/// Texel lift settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TexelOptions {
    /// Raster side `R` (texels per UV unit), 16 to 8192.
    pub resolution: u32,
    /// In-plane σ as a multiple of the texel square's own (≥ 1).
    pub spread: f32,
    /// Thickness along the normal as a fraction of the larger in-plane σ (0 < t ≤ 1).
    pub thickness: f32,
}

impl Default for TexelOptions {
    /// 256², spread 2.5, thickness 0.1.
    fn default() -> Self {
        TexelOptions {
            resolution: 256,
            spread: 2.5,
            thickness: 0.1,
        }
    }
}

impl TexelOptions {
    /// Check the domain.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the field out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, reason: String| {
            Err(Error::Invalid {
                what: format!("texel lift {what}"),
                reason,
            })
        };
        if !(16..=8192).contains(&self.resolution) {
            return bad(
                "resolution",
                format!("{}: must be 16 to 8192", self.resolution),
            );
        }
        super::surface::check_shape("texel lift", self.spread, self.thickness)
    }
}

/// An edge endpoint's key: its UV and position, quantised (1e-6 UV units, 1 µm). Two triangles
/// share an edge of a chart when both endpoints agree in both — mirrored charts share UVs but not
/// positions, seams share positions but not UVs.
type EndKey = [i64; 5];

fn end_key(uvs: &[[f32; 2]], positions: &[[f32; 3]], v: u32) -> EndKey {
    let u = uvs[v as usize];
    let p = positions[v as usize];
    [
        (f64::from(u[0]) * 1e6).round() as i64,
        (f64::from(u[1]) * 1e6).round() as i64,
        (f64::from(p[0]) * 1e6).round() as i64,
        (f64::from(p[1]) * 1e6).round() as i64,
        (f64::from(p[2]) * 1e6).round() as i64,
    ]
}

/// Chart edges keyed by their endpoints (order-free): how many triangles have each, and the
/// lowest such triangle (which takes texel centres lying exactly on a shared edge).
fn uv_edge_counts(
    triangles: &[[u32; 3]],
    uvs: &[[f32; 2]],
    positions: &[[f32; 3]],
) -> HashMap<[EndKey; 2], (u32, usize)> {
    let q = |v: u32| end_key(uvs, positions, v);
    let mut m: HashMap<[EndKey; 2], (u32, usize)> = HashMap::new();
    for (i, t) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (q(t[k]), q(t[(k + 1) % 3]));
            let key = if a <= b { [a, b] } else { [b, a] };
            let e = m.entry(key).or_insert((0, i));
            e.0 += 1;
        }
    }
    m
}

/// Closest point of the triangle `p` (2-D) to `x`, as barycentrics.
fn closest_bary(p: [[f64; 2]; 3], x: [f64; 2]) -> [f64; 3] {
    // Inside → its own barycentrics; else the closest point over the three edges.
    let mut best = (f64::MAX, [1.0 / 3.0; 3]);
    for k in 0..3 {
        let (a, b) = (p[k], p[(k + 1) % 3]);
        let d = [b[0] - a[0], b[1] - a[1]];
        let l2 = d[0] * d[0] + d[1] * d[1];
        let s = if l2 > 0.0 {
            (((x[0] - a[0]) * d[0] + (x[1] - a[1]) * d[1]) / l2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = [a[0] + s * d[0], a[1] + s * d[1]];
        let dist = (c[0] - x[0]).powi(2) + (c[1] - x[1]).powi(2);
        if dist < best.0 {
            let mut bc = [0.0; 3];
            bc[k] = 1.0 - s;
            bc[(k + 1) % 3] = s;
            best = (dist, bc);
        }
    }
    best.1
}

/// Whether the axis-aligned square of centre `c` and half side `h` overlaps the triangle `p`
/// with positive area (separating-axis test on the square's axes and the triangle's edge
/// normals, strict).
fn square_overlaps(p: [[f64; 2]; 3], c: [f64; 2], h: f64) -> bool {
    let eps = 1e-12;
    for axis in 0..2 {
        let lo = p.iter().map(|v| v[axis]).fold(f64::MAX, f64::min);
        let hi = p.iter().map(|v| v[axis]).fold(f64::MIN, f64::max);
        if hi <= c[axis] - h + eps || lo >= c[axis] + h - eps {
            return false;
        }
    }
    for k in 0..3 {
        let (a, b, o) = (p[k], p[(k + 1) % 3], p[(k + 2) % 3]);
        let n = [-(b[1] - a[1]), b[0] - a[0]];
        let side = (o[0] - a[0]) * n[0] + (o[1] - a[1]) * n[1];
        let sign = if side >= 0.0 { 1.0 } else { -1.0 };
        // The square's most inward corner along the normal.
        let r = h * (n[0].abs() + n[1].abs());
        let centre = ((c[0] - a[0]) * n[0] + (c[1] - a[1]) * n[1]) * sign;
        if centre + r <= eps {
            return false;
        }
    }
    true
}

/// Build the texel lift of a mesh at rest: `positions` `(V,3)` metres, `normals` `(V,3)`,
/// `triangles` `(T,3)`, `uvs` `(V,2)` (the UVs the raster is laid over, TEXCOORD_0).
///
/// # Errors
/// Out-of-domain options; as the surface lift for the mesh; [`Error::Mismatch`] for UVs of another
/// length; [`Error::Limit`] when the raster would build more than [`MAX_GAUSSIANS`] (counted from
/// the UV areas before anything is allocated).
pub fn texel_lift(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    triangles: &[[u32; 3]],
    uvs: &[[f32; 2]],
    colors: &SurfaceColors,
    opts: &TexelOptions,
) -> Result<BoundLift> {
    opts.validate()?;
    check_mesh(positions, normals, triangles)?;
    if uvs.len() != positions.len() {
        return Err(Error::Mismatch {
            what: "texel lift UVs".into(),
            expected: positions.len() as u64,
            found: uvs.len() as u64,
        });
    }
    if let Some(i) = uvs.iter().position(|u| !u.iter().all(|x| x.is_finite())) {
        return Err(Error::Invalid {
            what: format!("texel lift UV {i}"),
            reason: "not finite".into(),
        });
    }
    let r = f64::from(opts.resolution);
    let uv_of = |t: &[u32; 3]| t.map(|v| uvs[v as usize].map(|x| f64::from(x) * r));
    // An upper bound of the count: each triangle's UV bounding box in texels.
    let estimate: u64 = triangles
        .iter()
        .map(|t| {
            let p = uv_of(t);
            let w = p.iter().map(|v| v[0]).fold(f64::MIN, f64::max)
                - p.iter().map(|v| v[0]).fold(f64::MAX, f64::min);
            let h = p.iter().map(|v| v[1]).fold(f64::MIN, f64::max)
                - p.iter().map(|v| v[1]).fold(f64::MAX, f64::min);
            ((w + 2.0) * (h + 2.0)).min(1e18) as u64
        })
        .fold(0u64, u64::saturating_add);
    // The bounding boxes overcount by about 2×; refuse only what cannot fit.
    if estimate / 2 > MAX_GAUSSIANS {
        return Err(Error::Limit {
            what: format!("texel lift gaussians at {0}×{0}", opts.resolution),
            limit: MAX_GAUSSIANS,
            found: estimate / 2,
        });
    }
    let edges = uv_edge_counts(triangles, uvs, positions);
    // (whether edge k of t is a chart boundary, the lowest triangle sharing it)
    let edge_info = |t: &[u32; 3], k: usize| {
        let q = |v: u32| end_key(uvs, positions, v);
        let (a, b) = (q(t[k]), q(t[(k + 1) % 3]));
        let key = if a <= b { [a, b] } else { [b, a] };
        let (n, first) = edges.get(&key).copied().unwrap_or((0, usize::MAX));
        (n < 2, first)
    };
    let mut out = Vec::new();
    let mut report = BoundReport {
        lift: "texel".into(),
        triangles: triangles.len() as u64,
        ..Default::default()
    };
    for (ti, t) in triangles.iter().enumerate() {
        let p3 = t.map(|v| positions[v as usize]);
        let f = triangle_frame(p3, t.map(|v| normals[v as usize]));
        report.fallback_frames += u64::from(f.fallback);
        let uv = uv_of(t);
        let a = [
            [uv[1][0] - uv[0][0], uv[2][0] - uv[0][0]],
            [uv[1][1] - uv[0][1], uv[2][1] - uv[0][1]],
        ];
        let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
        let mut placed = 0u64;
        let mut push =
            |out: &mut Vec<BoundGaussian>, bary: [f64; 3], shape: ([f32; 4], [f32; 3])| {
                let b = bary.map(|x| x as f32);
                let c = colors.color(ti as u32, b);
                if c[3] <= 0.0 {
                    report.transparent_skipped += 1;
                    return;
                }
                out.push(BoundGaussian {
                    triangle: ti as u32,
                    bary: [b[1], b[2]],
                    offset: 0.0,
                    rotation: shape.0,
                    log_scale: shape.1,
                    color: pack4x8unorm(c),
                });
            };
        if det.abs() > 1e-9 {
            // J = E·A⁻¹ (positions per texel); texel covariance spread²·J·Jᵀ/12 in the plane.
            let inv = [
                [a[1][1] / det, -a[0][1] / det],
                [-a[1][0] / det, a[0][0] / det],
            ];
            let e = [0, 1, 2].map(|k| {
                [
                    f64::from(p3[1][k]) - f64::from(p3[0][k]),
                    f64::from(p3[2][k]) - f64::from(p3[0][k]),
                ]
            });
            let j: [[f64; 2]; 3] = e.map(|row| {
                [
                    row[0] * inv[0][0] + row[1] * inv[1][0],
                    row[0] * inv[0][1] + row[1] * inv[1][1],
                ]
            });
            let proj = |axis: [f32; 3], col: usize| {
                (0..3).map(|k| f64::from(axis[k]) * j[k][col]).sum::<f64>()
            };
            let (jt, jb) = (
                [proj(f.axes[0], 0), proj(f.axes[0], 1)],
                [proj(f.axes[1], 0), proj(f.axes[1], 1)],
            );
            let s = f64::from(opts.spread).powi(2) / 12.0;
            let c2 = [
                s * (jt[0] * jt[0] + jt[1] * jt[1]),
                s * (jt[0] * jb[0] + jt[1] * jb[1]),
                s * (jb[0] * jb[0] + jb[1] * jb[1]),
            ];
            // A triangle whose UVs are squeezed (a stretched chart) would map one texel over
            // much of its surface: its gaussians are capped at the triangle's own shape (the
            // surface lift's m = 1), never larger.
            let own = triangle_covariance_2d(p3, f.axes[0], f.axes[1])
                .map(|x| x * f64::from(opts.spread).powi(2));
            let lmax = |c: [f64; 3]| {
                0.5 * (c[0] + c[2]) + (0.25 * (c[0] - c[2]).powi(2) + c[1] * c[1]).sqrt()
            };
            let c2 = if lmax(c2) > lmax(own) {
                report.stretched_capped += 1;
                own
            } else {
                c2
            };
            let shape = flat_shape(c2, f.k, opts.thickness);
            let (x0, x1) = (
                uv.iter().map(|v| v[0]).fold(f64::MAX, f64::min).floor() as i64 - 1,
                uv.iter().map(|v| v[0]).fold(f64::MIN, f64::max).ceil() as i64 + 1,
            );
            let (y0, y1) = (
                uv.iter().map(|v| v[1]).fold(f64::MAX, f64::min).floor() as i64 - 1,
                uv.iter().map(|v| v[1]).fold(f64::MIN, f64::max).ceil() as i64 + 1,
            );
            for y in y0..y1 {
                for x in x0..x1 {
                    let c = [x as f64 + 0.5, y as f64 + 0.5];
                    let d = [c[0] - uv[0][0], c[1] - uv[0][1]];
                    let b1 = inv[0][0] * d[0] + inv[0][1] * d[1];
                    let b2 = inv[1][0] * d[0] + inv[1][1] * d[1];
                    let bc = [1.0 - b1 - b2, b1, b2];
                    // A centre on an edge shared in UV space goes to the lowest triangle sharing
                    // it, so the two sides do not both place a gaussian there.
                    let on_shared_edge_of_another = (0..3).any(|k| {
                        let (boundary, first) = edge_info(t, k);
                        bc[(k + 2) % 3].abs() <= 1e-9 && !boundary && first != ti
                    });
                    if bc.iter().all(|&v| v >= -1e-9) {
                        if !on_shared_edge_of_another {
                            push(&mut out, bc.map(|v| v.max(0.0)), shape);
                            placed += 1;
                        }
                        continue;
                    }
                    // Outside: a seam texel when every edge it lies beyond is a chart boundary
                    // (edge k is opposite vertex (k + 2) % 3) and its square overlaps.
                    let beyond_boundary = (0..3)
                        .filter(|&k| bc[(k + 2) % 3] < 0.0)
                        .all(|k| edge_info(t, k).0);
                    if beyond_boundary && square_overlaps(uv, c, 0.5) {
                        push(&mut out, closest_bary(uv, c), shape);
                        placed += 1;
                    }
                }
            }
        }
        if placed == 0 {
            // No texel: one gaussian at the centroid, shaped as the surface lift's m = 1.
            let c = triangle_covariance_2d(p3, f.axes[0], f.axes[1]);
            let s2 = f64::from(opts.spread).powi(2);
            let shape = flat_shape(c.map(|x| x * s2), f.k, opts.thickness);
            push(&mut out, [1.0 / 3.0; 3], shape);
        }
        if out.len() as u64 > MAX_GAUSSIANS {
            return Err(Error::Limit {
                what: format!("texel lift gaussians at {0}×{0}", opts.resolution),
                limit: MAX_GAUSSIANS,
                found: out.len() as u64,
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
