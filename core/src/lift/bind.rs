//! Captured splats bound to a character's mesh: each gaussian of a 3DGS capture (a `.ply`, a
//! SuperSplat compressed `.ply`, an SPZ) embedded in its nearest triangle so it follows the
//! character's morph targets and skin ([`super::bound`]).
//!
//! **Embedding** (SplattingAvatar, Shao et al. 2024, §3.1: a triangle, barycentric coordinates
//! and a displacement along the normal; GaussianAvatars, Qian et al. 2024, §3.2: rotation and scale
//! in the triangle's frame). For a gaussian at `x` with covariance `Σ`:
//!
//! - the **triangle** is the nearest one to `x` (exact point–triangle distance, Ericson,
//!   *Real-Time Collision Detection* §5.1.5, over a uniform grid of the triangles' boxes);
//! - its **barycentrics** and **offset** solve `x − p0 = β1·e1 + β2·e2 + d·k·n` exactly (`n` the
//!   frame's normal; barycentrics outside `[0, 1]` when `x` lies beyond an edge), so the rest pose
//!   reproduces `x`; a triangle too thin to solve it takes the closest point and the normal
//!   distance (counted as approximate);
//! - its **rotation and log-scales** decompose `Rᵀ·Σ·R / k²` with `R = [t b n]` the rest frame.
//!
//! At rest, posing returns the capture unchanged (to f32 rounding); a rigid motion of the triangle
//! moves the gaussian rigidly. Colours keep the capture's DC term (`0.5 + C0·f_dc`) and opacity;
//! view-dependent SH bands are not carried (the sink holds one colour) and are counted.

use super::bound::{BoundGaussian, triangle_frame};
use super::surface::{BoundLift, BoundReport, MAX_GAUSSIANS, check_mesh};
use crate::error::{Error, Result};
use crate::io::ply::{SplatCloud, decompose_covariance};
use crate::sink::pack4x8unorm;

/// Largest |coordinate| of a captured gaussian, metres (the rule posed geometry obeys).
pub const MAX_COORDINATE_M: f64 = 1e6;

/// What happens to a captured gaussian farther than [`BindOptions::max_distance_m`] from the
/// surface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FarGaussians {
    /// Bound to its nearest triangle anyway (it follows that triangle at a distance).
    #[default]
    Bind,
    /// Dropped from the embedding.
    Drop,
    /// Left rigid to the joint its nearest surface point follows most (the palette entry with the
    /// largest skin weight at the closest vertex of the nearest triangle; a rigid mesh's node):
    /// bound to that entry's anchor triangle ([`crate::rig::anchor`]).
    Joint,
}

/// How captured splats are bound.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct BindOptions {
    /// Gaussians farther than this from the surface, metres, are counted as far.
    pub max_distance_m: f32,
    /// What happens to the far ones.
    pub far: FarGaussians,
}

impl Default for BindOptions {
    /// 5 cm, far gaussians bound to their nearest triangle anyway (and counted).
    fn default() -> Self {
        BindOptions {
            max_distance_m: 0.05,
            far: FarGaussians::Bind,
        }
    }
}

/// The joint anchors of a rig for [`FarGaussians::Joint`] ([`crate::rig::RigData::with_joint_anchors`]).
#[derive(Clone, Copy, Debug)]
pub struct JointAnchors<'a> {
    /// The triangles before this index are the surface; triangle `first_triangle + p` is palette
    /// entry `p`'s anchor.
    pub first_triangle: u32,
    /// The dominant palette entry of each surface vertex `(V,)`
    /// ([`crate::rig::RigData::dominant_palette`]).
    pub dominant: &'a [u32],
}

/// What binding did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BindReport {
    /// Gaussians in the capture.
    pub splats: u64,
    /// Gaussians bound.
    pub bound: u64,
    /// Gaussians farther than `max_distance_m` from the surface.
    pub far: u64,
    /// Far gaussians dropped ([`FarGaussians::Drop`]).
    pub dropped: u64,
    /// Far gaussians left rigid to a joint ([`FarGaussians::Joint`]).
    pub rigid: u64,
    /// The largest distance to the surface seen, metres.
    pub max_distance_m: f64,
    /// The median distance to the surface, metres.
    pub median_distance_m: f64,
    /// The capture's SH degree (bands above 0 are not carried).
    pub sh_degree_dropped: u8,
    /// Gaussians on triangles too thin to solve the embedding exactly: bound at the closest
    /// point and the normal distance (their rest position is off by the tangential residual).
    pub approximate: u64,
    /// The capture's indices of the gaussians bound, in the embedding's order (all of them
    /// unless far ones were dropped).
    #[serde(skip)]
    pub kept: Vec<usize>,
}

/// The closest point of triangle `(a, b, c)` to `p` as barycentrics `(u, v, w)` (Ericson §5.1.5).
pub fn closest_on_triangle(p: [f64; 3], a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> [f64; 3] {
    let sub = |x: [f64; 3], y: [f64; 3]| [x[0] - y[0], x[1] - y[1], x[2] - y[2]];
    let dot = |x: [f64; 3], y: [f64; 3]| x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let (d1, d2) = (dot(ab, ap), dot(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = sub(p, b);
    let (d3, d4) = (dot(ab, bp), dot(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = sub(p, c);
    let (d5, d6) = (dot(ab, cp), dot(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denom = va + vb + vc;
    if denom.abs() < f64::MIN_POSITIVE {
        return [1.0, 0.0, 0.0];
    }
    let (v, w) = (vb / denom, vc / denom);
    [1.0 - v - w, v, w]
}

/// A uniform grid of triangle boxes for nearest-triangle queries.
struct Grid {
    lo: [f64; 3],
    cell: f64,
    dims: [usize; 3],
    cells: Vec<Vec<u32>>,
}

impl Grid {
    fn new(pos: &[[f64; 3]], tris: &[[u32; 3]]) -> Grid {
        let mut lo = [f64::MAX; 3];
        let mut hi = [f64::MIN; 3];
        for p in pos {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let ext = (0..3)
            .map(|k| (hi[k] - lo[k]).max(1e-9))
            .collect::<Vec<_>>();
        // About two triangles per cell, at most 2²¹ cells.
        let target = (tris.len() as f64 / 2.0).clamp(1.0, 2_097_152.0);
        let cell = ((ext[0] * ext[1] * ext[2]) / target)
            .cbrt()
            .max(ext.iter().fold(0.0f64, |m, &e| m.max(e)) / 128.0);
        let dims = [0, 1, 2].map(|k| ((ext[k] / cell).ceil() as usize).clamp(1, 128));
        let mut cells = vec![Vec::new(); dims[0] * dims[1] * dims[2]];
        for (i, t) in tris.iter().enumerate() {
            let v = t.map(|j| pos[j as usize]);
            let c0 = [0, 1, 2].map(|k| {
                let m = v.iter().map(|p| p[k]).fold(f64::MAX, f64::min);
                (((m - lo[k]) / cell).floor().max(0.0) as usize).min(dims[k] - 1)
            });
            let c1 = [0, 1, 2].map(|k| {
                let m = v.iter().map(|p| p[k]).fold(f64::MIN, f64::max);
                (((m - lo[k]) / cell).floor().max(0.0) as usize).min(dims[k] - 1)
            });
            for z in c0[2]..=c1[2] {
                for y in c0[1]..=c1[1] {
                    for x in c0[0]..=c1[0] {
                        cells[(z * dims[1] + y) * dims[0] + x].push(i as u32);
                    }
                }
            }
        }
        Grid {
            lo,
            cell,
            dims,
            cells,
        }
    }

    /// The nearest triangle to `p`: (triangle, barycentrics of the closest point, distance²).
    fn nearest(&self, p: [f64; 3], pos: &[[f64; 3]], tris: &[[u32; 3]]) -> (u32, [f64; 3], f64) {
        let c = [0, 1, 2].map(|k| {
            ((((p[k] - self.lo[k]) / self.cell).floor()).clamp(0.0, (self.dims[k] - 1) as f64))
                as i64
        });
        // Distance from p to the grid box (a point outside starts that far away).
        let outside: f64 = (0..3)
            .map(|k| {
                let hi = self.lo[k] + self.dims[k] as f64 * self.cell;
                let d = (self.lo[k] - p[k]).max(p[k] - hi).max(0.0);
                d * d
            })
            .sum::<f64>()
            .sqrt();
        let mut best = (0u32, [1.0, 0.0, 0.0], f64::MAX);
        let max_ring = *self.dims.iter().max().unwrap_or(&1) as i64;
        for r in 0..=max_ring {
            // Every point of ring r+1 is at least (r·cell + outside) away.
            let reach = r as f64 * self.cell + outside;
            if best.2 <= reach * reach {
                break;
            }
            for z in (c[2] - r)..=(c[2] + r) {
                for y in (c[1] - r)..=(c[1] + r) {
                    for x in (c[0] - r)..=(c[0] + r) {
                        let on_ring =
                            (x - c[0]).abs() == r || (y - c[1]).abs() == r || (z - c[2]).abs() == r;
                        if !on_ring
                            || x < 0
                            || y < 0
                            || z < 0
                            || x >= self.dims[0] as i64
                            || y >= self.dims[1] as i64
                            || z >= self.dims[2] as i64
                        {
                            continue;
                        }
                        let cell =
                            (z as usize * self.dims[1] + y as usize) * self.dims[0] + x as usize;
                        for &ti in &self.cells[cell] {
                            let t = tris[ti as usize];
                            let (a, b, cc) =
                                (pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
                            let w = closest_on_triangle(p, a, b, cc);
                            let q = [0, 1, 2].map(|k| w[0] * a[k] + w[1] * b[k] + w[2] * cc[k]);
                            let d2 = (0..3).map(|k| (q[k] - p[k]).powi(2)).sum::<f64>();
                            if d2 < best.2 || (d2 == best.2 && ti < best.0) {
                                best = (ti, w, d2);
                            }
                        }
                    }
                }
            }
        }
        best
    }
}

/// Bind every gaussian of `cloud` to the nearest triangle of a mesh at rest: `positions` `(V,3)`
/// metres (the same space as the capture: the character's rest pose in world), `normals` `(V,3)`
/// (for the fallback frame), `triangles` `(T,3)` — with `anchors`, the surface's triangles
/// followed by the anchor triangles, and only the surface is searched.
///
/// # Errors
/// As the surface lift for the mesh; [`Error::Invalid`] for a mesh without triangles, a gaussian
/// whose centre or covariance is not finite or lies beyond ±[`MAX_COORDINATE_M`] (named by
/// index), options out of domain, [`FarGaussians::Joint`] without `anchors` (or anchors that do
/// not fit the mesh), an empty capture, or more than half of the gaussians far whatever the rule
/// (a capture not in the rest pose); [`Error::Limit`] over [`MAX_GAUSSIANS`].
pub fn bind_splats(
    cloud: &SplatCloud,
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    triangles: &[[u32; 3]],
    anchors: Option<JointAnchors<'_>>,
    opts: &BindOptions,
) -> Result<(BoundLift, BindReport)> {
    check_mesh(positions, normals, triangles)?;
    let surface = match anchors {
        Some(a) => {
            let fits = (a.first_triangle as usize) <= triangles.len()
                && a.dominant.len() <= positions.len()
                && triangles[..a.first_triangle as usize]
                    .iter()
                    .flatten()
                    .all(|&v| (v as usize) < a.dominant.len())
                && a.dominant
                    .iter()
                    .all(|&p| (a.first_triangle as u64 + u64::from(p)) < triangles.len() as u64);
            if !fits {
                return Err(Error::Invalid {
                    what: "bind joint anchors".into(),
                    reason: format!(
                        "anchors after triangle {} with {} dominant entries do not fit a mesh of {} vertices and {} triangles",
                        a.first_triangle,
                        a.dominant.len(),
                        positions.len(),
                        triangles.len()
                    ),
                });
            }
            &triangles[..a.first_triangle as usize]
        }
        None if opts.far == FarGaussians::Joint => {
            return Err(Error::Invalid {
                what: "bind".into(),
                reason: "far gaussians left rigid to a joint need the rig's joint anchors".into(),
            });
        }
        None => triangles,
    };
    if surface.is_empty() {
        return Err(Error::Invalid {
            what: "bind".into(),
            reason: "the character has no triangles to bind to".into(),
        });
    }
    if !(opts.max_distance_m.is_finite() && opts.max_distance_m > 0.0) {
        return Err(Error::Invalid {
            what: "bind max distance".into(),
            reason: format!("{} m: must be a positive length", opts.max_distance_m),
        });
    }
    if cloud.is_empty() {
        return Err(Error::Invalid {
            what: "bind".into(),
            reason: "the capture holds no gaussians".into(),
        });
    }
    if cloud.len() as u64 > MAX_GAUSSIANS {
        return Err(Error::Limit {
            what: "bound gaussians".into(),
            limit: MAX_GAUSSIANS,
            found: cloud.len() as u64,
        });
    }
    let pos64: Vec<[f64; 3]> = positions.iter().map(|p| p.map(f64::from)).collect();
    let grid = Grid::new(&pos64, surface);
    let frames: Vec<_> = triangles
        .iter()
        .map(|t| {
            triangle_frame(
                t.map(|v| positions[v as usize]),
                t.map(|v| normals[v as usize]),
            )
        })
        .collect();
    let mut rep = BindReport {
        splats: cloud.len() as u64,
        sh_degree_dropped: cloud.sh_degree(),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(cloud.len());
    let mut dists = Vec::with_capacity(cloud.len());
    for i in 0..cloud.len() {
        let x = cloud.center[i].map(f64::from);
        let cov = cloud.covariance[i].map(|r| r.map(f64::from));
        if !x.iter().chain(cov.iter().flatten()).all(|v| v.is_finite()) {
            return Err(Error::Invalid {
                what: format!("captured gaussian {i}"),
                reason: "centre or covariance not finite".into(),
            });
        }
        if x.iter().any(|v| v.abs() > MAX_COORDINATE_M) {
            return Err(Error::Invalid {
                what: format!("captured gaussian {i}"),
                reason: format!(
                    "centre {x:?} lies beyond ±{MAX_COORDINATE_M} m (the posed geometry's rule)"
                ),
            });
        }
        let (mut ti, w, d2) = grid.nearest(x, &pos64, surface);
        let d = d2.sqrt();
        dists.push(d);
        rep.max_distance_m = rep.max_distance_m.max(d);
        if d > f64::from(opts.max_distance_m) {
            rep.far += 1;
            match (opts.far, anchors) {
                (FarGaussians::Drop, _) => {
                    rep.dropped += 1;
                    continue;
                }
                (FarGaussians::Joint, Some(a)) => {
                    // The closest vertex of the nearest triangle (largest barycentric) names the
                    // joint; the gaussian binds to that joint's anchor triangle.
                    let k = (1..3).fold(0, |b, k| if w[k] > w[b] { k } else { b });
                    let v = surface[ti as usize][k] as usize;
                    ti = a.first_triangle + a.dominant[v];
                    rep.rigid += 1;
                }
                _ => {}
            }
        }
        let t = triangles[ti as usize];
        let f = &frames[ti as usize];
        let [ta, tb, n] = f.axes.map(|a| a.map(f64::from));
        let k = f64::from(f.k);
        let p = t.map(|v| pos64[v as usize]);
        // Solve x − p0 = β1·e1 + β2·e2 + o·n exactly (Cramer's rule): the rest pose then returns
        // x. A triangle too thin for that (its edges and the frame normal nearly coplanar) takes
        // the closest point's barycentrics and the normal distance instead (counted).
        let e1 = [0, 1, 2].map(|c| p[1][c] - p[0][c]);
        let e2 = [0, 1, 2].map(|c| p[2][c] - p[0][c]);
        let q = [0, 1, 2].map(|c| x[c] - p[0][c]);
        let det3 = |a: [f64; 3], b: [f64; 3], c: [f64; 3]| {
            a[0] * (b[1] * c[2] - b[2] * c[1]) - b[0] * (a[1] * c[2] - a[2] * c[1])
                + c[0] * (a[1] * b[2] - a[2] * b[1])
        };
        let d = det3(e1, e2, n);
        let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let (b1, b2, offset) = if d.abs() > 1e-6 * norm(e1) * norm(e2) {
            (
                det3(q, e2, n) / d,
                det3(e1, q, n) / d,
                det3(e1, e2, q) / d / k,
            )
        } else {
            rep.approximate += 1;
            let w = closest_on_triangle(x, p[0], p[1], p[2]);
            let on = [0, 1, 2].map(|c| w[0] * p[0][c] + w[1] * p[1][c] + w[2] * p[2][c]);
            let o = ((x[0] - on[0]) * n[0] + (x[1] - on[1]) * n[1] + (x[2] - on[2]) * n[2]) / k;
            (w[1], w[2], o)
        };
        // S = Rᵀ·Σ·R / k² with R = [t b n] (columns).
        let r = [ta, tb, n];
        let s: [[f64; 3]; 3] = std::array::from_fn(|a| {
            std::array::from_fn(|b| {
                let mut acc = 0.0;
                for i2 in 0..3 {
                    for j2 in 0..3 {
                        acc += r[a][i2] * cov[i2][j2] * r[b][j2];
                    }
                }
                acc / (k * k)
            })
        });
        let sr = decompose_covariance(s).ok_or_else(|| Error::Invalid {
            what: format!("captured gaussian {i}"),
            reason: "its covariance cannot be decomposed".into(),
        })?;
        rep.kept.push(i);
        out.push(BoundGaussian {
            triangle: ti,
            bary: [b1 as f32, b2 as f32],
            offset: offset as f32,
            rotation: sr.rotation.map(|v| v as f32),
            log_scale: sr.log_scale.map(|v| v as f32),
            color: pack4x8unorm(cloud.rgba[i]),
        });
    }
    dists.sort_by(f64::total_cmp);
    rep.median_distance_m = dists.get(dists.len() / 2).copied().unwrap_or(0.0);
    rep.bound = out.len() as u64;
    // Most of a capture far from the surface is a capture not in the rest pose (or in other
    // units, or of something else): bound, dropped or made rigid, it would tear apart when
    // posed — refused whatever the rule.
    if rep.far * 2 > rep.splats {
        return Err(Error::Invalid {
            what: "bind".into(),
            reason: format!(
                "{} of {} gaussians lie beyond {} m of the surface (median {:.4} m): a capture binds in the character's rest pose, in metres; if this capture is meant to be that far, raise the maximum distance (--max-distance)",
                rep.far, rep.splats, opts.max_distance_m, rep.median_distance_m
            ),
        });
    }
    if out.is_empty() {
        return Err(Error::Invalid {
            what: "bind".into(),
            reason: format!(
                "no gaussian is left to bind: {} of {} lie beyond {} m and were dropped",
                rep.dropped, rep.splats, opts.max_distance_m
            ),
        });
    }
    let report = BoundReport {
        lift: "bound".into(),
        gaussians: out.len() as u64,
        triangles: surface.len() as u64,
        fallback_frames: frames.iter().filter(|f| f.fallback).count() as u64,
        ..Default::default()
    };
    Ok((
        BoundLift {
            gaussians: out,
            triangles: triangles.to_vec(),
            report,
        },
        rep,
    ))
}
