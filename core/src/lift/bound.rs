//! Gaussians bound to triangles: the embedding every mesh-bound lift shares (the surface lift, the
//! texel lift, captured splats bound to a rig) and its posing — the CPU reference the GPU kernel
//! `lift_bound.wgsl` mirrors operation for operation.
//!
//! Each gaussian lives in its **triangle's frame** (GaussianAvatars, Qian et al. 2024, §3.2; the
//! barycentric + normal-offset embedding of SplattingAvatar, Shao et al. 2024, §3.1; seed 000's
//! surface lift): for posed vertices `p0, p1, p2`
//!
//! - **scale** `k = max(K_MIN, (|p1−p0| + |p2−p1| + |p0−p2|) / 3)` — the mean edge length, which never
//!   exceeds the triangle's extent (a sliver gives a small `k`, never a huge splat) and is floored
//!   at [`K_MIN`] (a collapsed triangle gives a micron-sized splat, never a zero covariance);
//! - **normal** `n = normalize((p1−p0) × (p2−p0))` when `|(p1−p0) × (p2−p0)| > AREA_EPS·k²`
//!   ([`AREA_EPS`]); otherwise (a near-zero-area triangle, whose cross product points anywhere) the
//!   **fallback** `normalize(n0 + n1 + n2)` of the posed vertex normals, else `+z`;
//! - **tangent** `t = normalize(e − (e·n)·n)` for the first edge `e = p1 − p0` (then the second edge
//!   `p2 − p0`, then any unit vector ⟂ `n`, when the projection is shorter than `1e-6·k`);
//!   **bitangent** `b = n × t`; the frame `R = [t b n]` (columns) is a proper rotation.
//!
//! A gaussian with barycentrics `(1 − β1 − β2, β1, β2)`, normal offset `d` (units of `k`), rotation
//! `q` and log-scales `s` (units of `k`) in that frame poses as
//!
//! ```text
//! centre      μ = (1 − β1 − β2)·p0 + β1·p1 + β2·p2 + d·k·n
//! covariance  Σ = k²·R·S·Rᵀ,   S = Rq·diag(exp(2s))·Rqᵀ   (S precomputed: `local_cov`)
//! ```
//!
//! so a rigid motion of the triangle moves the gaussian rigidly, and a uniform scaling of the
//! triangle scales it. The lift's 3×4 affine (rig → object, as the debug lift's) is applied to
//! the posed vertices first.

use crate::error::{Error, Result};
use crate::lift::LiftedSplat;
use crate::sink::SlotRange;

/// Smallest triangle scale `k`, metres: a collapsed triangle poses micron-sized splats.
pub const K_MIN: f32 = 1e-6;
/// A triangle whose `|e1 × e2|` is at most `AREA_EPS·k²` (an area under `5·10⁻⁵·k²`) takes the
/// fallback normal.
pub const AREA_EPS: f32 = 1e-4;

/// One gaussian bound to a triangle, as a user sees it (the kernel reads [`PackedBound`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct BoundGaussian {
    /// Index into the rig's triangles `(T,3)`.
    pub triangle: u32,
    /// Barycentric weights of the triangle's second and third vertex (the first is `1 − β1 − β2`).
    pub bary: [f32; 2],
    /// Offset along the posed unit normal, in units of the triangle scale `k`.
    pub offset: f32,
    /// Unit quaternion `(w, x, y, z)` in the triangle frame `[t b n]`.
    pub rotation: [f32; 4],
    /// Natural log of the standard deviations along the rotated axes, in units of `k`.
    pub log_scale: [f32; 3],
    /// `pack4x8unorm(r, g, b, opacity)`, display (sRGB-encoded) colour.
    pub color: u32,
}

/// The kernel's record of a [`BoundGaussian`]: three `vec4`s, 48 bytes.
///
/// `a = (bitcast triangle, β1, β2, d)`, `b = (S00, S01, S02, S11)`, `c = (S12, S22, bitcast color, 0)`
/// with `S` the local covariance `Rq·diag(exp(2s))·Rqᵀ` (units of `k²`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PackedBound {
    /// `(triangle bits, β1, β2, offset)`.
    pub a: [f32; 4],
    /// `(S00, S01, S02, S11)`.
    pub b: [f32; 4],
    /// `(S12, S22, color bits, 0)`.
    pub c: [f32; 4],
}

impl BoundGaussian {
    /// The kernel record: `S` composed in f64 ([`crate::io::ply::gaussian::compose_covariance`]),
    /// rounded once to f32.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite field, a zero quaternion, or a covariance that
    /// overflows f32.
    pub fn pack(&self) -> Result<PackedBound> {
        let bad = |reason: &str| Error::Invalid {
            what: format!("bound gaussian on triangle {}", self.triangle),
            reason: reason.into(),
        };
        if !self
            .bary
            .iter()
            .chain([&self.offset])
            .all(|x| x.is_finite())
        {
            return Err(bad("barycentrics or offset not finite"));
        }
        let s = crate::io::ply::gaussian::compose_covariance(
            self.log_scale.map(f64::from),
            self.rotation.map(f64::from),
        )
        .ok_or_else(|| bad("rotation or log-scale not finite, or a zero quaternion"))?;
        let s = [s[0][0], s[0][1], s[0][2], s[1][1], s[1][2], s[2][2]].map(|x| x as f32);
        if !s.iter().all(|x| x.is_finite()) {
            return Err(bad("local covariance overflows f32"));
        }
        Ok(PackedBound {
            a: [
                f32::from_bits(self.triangle),
                self.bary[0],
                self.bary[1],
                self.offset,
            ],
            b: [s[0], s[1], s[2], s[3]],
            c: [s[4], s[5], f32::from_bits(self.color), 0.0],
        })
    }
}

impl PackedBound {
    /// The triangle index.
    pub fn triangle(&self) -> u32 {
        self.a[0].to_bits()
    }
    /// The packed colour.
    pub fn color(&self) -> u32 {
        self.c[2].to_bits()
    }
}

/// A posed triangle's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleFrame {
    /// Columns `t, b, n` (unit, orthogonal, right-handed).
    pub axes: [[f32; 3]; 3],
    /// Scale `k`, metres.
    pub k: f32,
    /// Whether the fallback normal was used.
    pub fallback: bool,
}

#[inline]
fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline]
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline]
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
#[inline]
fn len(a: [f32; 3]) -> f32 {
    dot(a, a).sqrt()
}
#[inline]
fn scale(a: [f32; 3], s: f32) -> [f32; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// The frame of the triangle `p` `(3,3)` metres with posed vertex normals `n` `(3,3)` (unit or
/// zero; read only for the fallback normal). See the module docs for the rules.
pub fn triangle_frame(p: [[f32; 3]; 3], n: [[f32; 3]; 3]) -> TriangleFrame {
    let e1 = sub(p[1], p[0]);
    let e2 = sub(p[2], p[0]);
    let k = ((len(e1) + len(sub(p[2], p[1])) + len(e2)) / 3.0).max(K_MIN);
    let c = cross(e1, e2);
    let lc = len(c);
    let (normal, fallback) = if lc > AREA_EPS * k * k {
        (scale(c, 1.0 / lc), false)
    } else {
        let s = [
            n[0][0] + n[1][0] + n[2][0],
            n[0][1] + n[1][1] + n[2][1],
            n[0][2] + n[1][2] + n[2][2],
        ];
        let ls = len(s);
        (
            if ls > 1e-6 {
                scale(s, 1.0 / ls)
            } else {
                [0.0, 0.0, 1.0]
            },
            true,
        )
    };
    let project = |e: [f32; 3]| sub(e, scale(normal, dot(e, normal)));
    let mut t = project(e1);
    if len(t) <= 1e-6 * k {
        t = project(e2);
    }
    if len(t) <= 1e-6 * k {
        // Any unit vector ⟂ n: cross with the axis n is least aligned with.
        let a = if normal[0].abs() < 0.9 {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 1.0, 0.0]
        };
        t = cross(a, normal);
    }
    let t = scale(t, 1.0 / len(t));
    let b = cross(normal, t);
    TriangleFrame {
        axes: [t, b, normal],
        k,
        fallback,
    }
}

/// Apply the row-major 3×4 affine `a` to a point.
#[inline]
pub fn affine_point(a: &[f32; 12], x: [f32; 3]) -> [f32; 3] {
    [
        a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3],
        a[4] * x[0] + a[5] * x[1] + a[6] * x[2] + a[7],
        a[8] * x[0] + a[9] * x[1] + a[10] * x[2] + a[11],
    ]
}

/// Pose one bound gaussian on its triangle's posed (already transformed) vertices `p` and
/// normals `n`: the [`LiftedSplat`] the sink stores. The exact operation order of
/// `lift_bound.wgsl`.
pub fn pose_bound(g: &PackedBound, p: [[f32; 3]; 3], n: [[f32; 3]; 3]) -> LiftedSplat {
    let f = triangle_frame(p, n);
    let (b1, b2, d) = (g.a[1], g.a[2], g.a[3]);
    let b0 = 1.0 - b1 - b2;
    let [t, b, nn] = f.axes;
    let off = d * f.k;
    let mu = [0, 1, 2].map(|i| b0 * p[0][i] + b1 * p[1][i] + b2 * p[2][i] + off * nn[i]);
    // Σ = k²·R·S·Rᵀ with R = [t b n] (columns): Σij = k²·Σab R[i][a]·S[a][b]·R[j][b].
    let s = [
        [g.b[0], g.b[1], g.b[2]],
        [g.b[1], g.b[3], g.c[0]],
        [g.b[2], g.c[0], g.c[1]],
    ];
    let r = |i: usize| [t[i], b[i], nn[i]];
    // M = R·S (rows of R times S), then Σ = k²·M·Rᵀ.
    let m: [[f32; 3]; 3] = std::array::from_fn(|i| {
        let ri = r(i);
        std::array::from_fn(|j| ri[0] * s[0][j] + ri[1] * s[1][j] + ri[2] * s[2][j])
    });
    let k2 = f.k * f.k;
    let c = |i: usize, j: usize| k2 * dot(m[i], r(j));
    LiftedSplat {
        center: [mu[0], mu[1], mu[2], 0.0],
        color: g.color(),
        cov_a: [c(0, 0), c(0, 1), c(0, 2), c(1, 1)],
        cov_b: [c(1, 2), c(2, 2), 0.0, 0.0],
    }
}

/// A bound lift ready for a backend: the kernel records, the triangles they index and the rig →
/// object affine. Shared (`Arc`) by every instance of a runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundSetup {
    /// Kernel records `(G,)`.
    pub gaussians: Vec<PackedBound>,
    /// Triangles `(T,3)` in posed-vertex indices.
    pub triangles: Vec<[u32; 3]>,
    /// Rig → object affine, row-major 3×4, applied to the posed vertices (and the linear part to
    /// the normals) before [`pose_bound`].
    pub transform: [f32; 12],
}

impl BoundSetup {
    /// Pack `gaussians` for `triangles` with the identity transform.
    ///
    /// # Errors
    /// As [`BoundGaussian::pack`].
    pub fn new(gaussians: &[BoundGaussian], triangles: Vec<[u32; 3]>) -> Result<Self> {
        Ok(BoundSetup {
            gaussians: gaussians
                .iter()
                .map(BoundGaussian::pack)
                .collect::<Result<_>>()?,
            triangles,
            transform: crate::lift::debug::IDENTITY_3X4,
        })
    }

    /// Slots one instance needs (one per gaussian).
    pub fn slots(&self) -> u32 {
        self.gaussians.len() as u32
    }

    /// Pose gaussian `i` on posed positions `pos` `(V,3)` and normals `nrm` `(V,3)`: the transform,
    /// then [`pose_bound`].
    pub fn pose(&self, i: usize, pos: &[[f32; 3]], nrm: &[[f32; 3]]) -> LiftedSplat {
        let g = &self.gaussians[i];
        let t = self.triangles[g.triangle() as usize];
        let a = &self.transform;
        let p = t.map(|v| affine_point(a, pos[v as usize]));
        let n = t.map(|v| {
            let x = nrm[v as usize];
            [
                a[0] * x[0] + a[1] * x[1] + a[2] * x[2],
                a[4] * x[0] + a[5] * x[1] + a[6] * x[2],
                a[8] * x[0] + a[9] * x[1] + a[10] * x[2],
            ]
        });
        pose_bound(g, p, n)
    }
}

/// The embedding's checks before anything is uploaded: every triangle index below
/// `triangle_count`, every triangle's vertices below `vertex_count`, every record finite, and the
/// range holding every gaussian.
///
/// # Errors
/// [`Error::Invalid`] naming the first gaussian or triangle that fails.
pub fn check_bound(
    gaussians: &[PackedBound],
    triangles: &[[u32; 3]],
    vertex_count: u32,
    range: SlotRange,
) -> Result<()> {
    if (range.count as usize) < gaussians.len() {
        return Err(Error::Invalid {
            what: "bound lift range".into(),
            reason: format!("{} slots for {} gaussians", range.count, gaussians.len()),
        });
    }
    if let Some((i, t)) = triangles
        .iter()
        .enumerate()
        .find(|(_, t)| t.iter().any(|&v| v >= vertex_count))
    {
        return Err(Error::Invalid {
            what: format!("bound lift triangle {i}"),
            reason: format!("vertex indices {t:?} past the {vertex_count} posed vertices"),
        });
    }
    for (i, g) in gaussians.iter().enumerate() {
        if g.triangle() as usize >= triangles.len() {
            return Err(Error::Invalid {
                what: format!("bound gaussian {i}"),
                reason: format!(
                    "triangle {} past the {} triangles",
                    g.triangle(),
                    triangles.len()
                ),
            });
        }
        let finite = [g.a[1], g.a[2], g.a[3]]
            .iter()
            .chain(&g.b)
            .chain(&g.c[..2])
            .all(|x| x.is_finite());
        if !finite {
            return Err(Error::Invalid {
                what: format!("bound gaussian {i}"),
                reason: "a non-finite barycentric, offset or covariance".into(),
            });
        }
    }
    Ok(())
}
