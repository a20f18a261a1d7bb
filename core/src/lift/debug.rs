//! The debug vertex lift: one isotropic gaussian per posed vertex (CPU reference math).
//!
//! Source: DESIGN.md "Debug vertex lift" and seed 000 `DebugVertexLift` / `DebugLiftParams`:
//! centre `A·v` for a row-major 3×4 affine `A`; covariance `σ²·L·Lᵀ` with `L` the linear part of
//! `A`; colour from a per-vertex tint, the normal direction, or flat; slots of the range past the
//! vertex count are written with opacity 0, never left stale.

use crate::error::{Error, Result};
use crate::sink::{SlotRange, pack4x8unorm};

/// How the lift colours a gaussian.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum DebugShading {
    /// The vertex's packed tint (`pack4x8unorm`; its alpha is ignored, the lift's opacity is used).
    #[default]
    Tint,
    /// `0.5 + 0.5·n` of the object-space unit normal (the direction from `centroid` when the
    /// normal is zero).
    Normal,
    /// The flat colour for every gaussian.
    Flat,
}

/// Everything the debug lift needs besides the vertices. `#[repr(C)]` mirrors the GPU uniform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DebugLiftParams {
    /// Rig → object affine, row-major 3×4: `x' = A[0..4]·(x,y,z,1)` etc.
    pub transform: [f32; 12],
    /// Gaussian standard deviation in rig space before `A`, metres (> 0, finite).
    pub sigma: f32,
    /// Opacity of every gaussian, `[0,1]`.
    pub opacity: f32,
    /// Colour source.
    pub shading: DebugShading,
    /// Object-space centre the fallback normal shading points away from, metres.
    pub centroid: [f32; 3],
    /// Colour for [`DebugShading::Flat`] (and tint fallback), linear `[0,1]` RGB.
    pub flat_color: [f32; 3],
    /// The slots this lift owns.
    pub range: SlotRange,
    /// Vertices read; slots `range.offset + vertex_count ..` of the range are cleared.
    pub vertex_count: u32,
}

/// The identity row-major 3×4.
pub const IDENTITY_3X4: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];

impl DebugLiftParams {
    /// Defaults of seed 000: identity transform, σ = 2 mm, opacity 1, tint shading.
    pub fn new(range: SlotRange, vertex_count: u32) -> Self {
        DebugLiftParams {
            transform: IDENTITY_3X4,
            sigma: 0.002,
            opacity: 1.0,
            shading: DebugShading::Tint,
            centroid: [0.0; 3],
            flat_color: [0.8, 0.8, 0.8],
            range,
            vertex_count,
        }
    }

    /// Check the domain.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the range is smaller than the vertex count (which would silently draw
    /// part of a head), σ is not finite and positive, the opacity is outside `[0,1]`, or the
    /// transform is not finite.
    pub fn validate(&self) -> Result<()> {
        if self.range.count < self.vertex_count {
            return Err(Error::Invalid {
                what: "debug lift range".into(),
                reason: format!(
                    "{} slots for {} vertices",
                    self.range.count, self.vertex_count
                ),
            });
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0) {
            return Err(Error::Invalid {
                what: "debug lift sigma".into(),
                reason: format!("{} is not a positive finite length", self.sigma),
            });
        }
        if !(0.0..=1.0).contains(&self.opacity) {
            return Err(Error::Invalid {
                what: "debug lift opacity".into(),
                reason: format!("{} is outside [0, 1]", self.opacity),
            });
        }
        if !self
            .transform
            .iter()
            .chain(&self.centroid)
            .all(|x| x.is_finite())
        {
            return Err(Error::Invalid {
                what: "debug lift transform".into(),
                reason: "not finite".into(),
            });
        }
        Ok(())
    }

    /// The covariance `σ²·L·Lᵀ`, the same for every gaussian: `(cov_a, cov_b)`.
    pub fn covariance(&self) -> ([f32; 4], [f32; 4]) {
        let a = &self.transform;
        let l = [[a[0], a[1], a[2]], [a[4], a[5], a[6]], [a[8], a[9], a[10]]];
        let s2 = self.sigma * self.sigma;
        let c =
            |i: usize, j: usize| s2 * (l[i][0] * l[j][0] + l[i][1] * l[j][1] + l[i][2] * l[j][2]);
        (
            [c(0, 0), c(0, 1), c(0, 2), c(1, 1)],
            [c(1, 2), c(2, 2), 0.0, 0.0],
        )
    }
}

/// One lifted gaussian: the four sink values of a slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiftedSplat {
    /// Centre xyz metres, w = 0.
    pub center: [f32; 4],
    /// `pack4x8unorm(r, g, b, opacity)`.
    pub color: u32,
    /// `(c00, c01, c02, c11)`.
    pub cov_a: [f32; 4],
    /// `(c12, c22, 0, 0)`.
    pub cov_b: [f32; 4],
}

/// What a slot the range owns but does not use holds: everything zero, opacity 0.
pub const CLEARED_SPLAT: LiftedSplat = LiftedSplat {
    center: [0.0; 4],
    color: 0,
    cov_a: [0.0; 4],
    cov_b: [0.0; 4],
};

/// Lift one posed vertex (`position` metres, unit `normal`, packed `tint`) with `cov` from
/// [`DebugLiftParams::covariance`].
#[inline]
pub fn lift_vertex(
    p: &DebugLiftParams,
    cov: ([f32; 4], [f32; 4]),
    position: [f32; 3],
    normal: [f32; 3],
    tint: u32,
) -> LiftedSplat {
    let a = &p.transform;
    let x = position;
    let c = [
        a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3],
        a[4] * x[0] + a[5] * x[1] + a[6] * x[2] + a[7],
        a[8] * x[0] + a[9] * x[1] + a[10] * x[2] + a[11],
    ];
    let rgb = match p.shading {
        DebugShading::Tint => {
            let t = crate::sink::unpack4x8unorm(tint);
            [t[0], t[1], t[2]]
        }
        DebugShading::Flat => p.flat_color,
        DebugShading::Normal => {
            let n = [
                a[0] * normal[0] + a[1] * normal[1] + a[2] * normal[2],
                a[4] * normal[0] + a[5] * normal[1] + a[6] * normal[2],
                a[8] * normal[0] + a[9] * normal[1] + a[10] * normal[2],
            ];
            let away = [
                c[0] - p.centroid[0],
                c[1] - p.centroid[1],
                c[2] - p.centroid[2],
            ];
            let d = crate::rig::morph::normalize_or(
                n,
                crate::rig::morph::normalize_or(away, [0.0, 0.0, 1.0]),
            );
            [0.5 + 0.5 * d[0], 0.5 + 0.5 * d[1], 0.5 + 0.5 * d[2]]
        }
    };
    LiftedSplat {
        center: [c[0], c[1], c[2], 0.0],
        color: pack4x8unorm([rgb[0], rgb[1], rgb[2], p.opacity]),
        cov_a: cov.0,
        cov_b: cov.1,
    }
}
