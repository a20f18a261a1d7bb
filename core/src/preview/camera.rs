//! The preview camera: a perspective pinhole framed on a bounding sphere, and splat bounds.
//!
//! Conventions: world +Y up, the character looks toward +Z (glTF), so the default camera stands on
//! +Z looking toward −Z. Camera space is right-handed with x right, y up and the view along −z
//! (glTF camera convention); depth `d = −z_cam`. Pixel `(i, j)` covers `[i, i+1) × [j, j+1)` with
//! its centre at `(i + 0.5, j + 0.5)`; rows go down; the principal point is the image centre
//! `(W/2, H/2)`; pixels are square, focal length `f = (H/2) / tan(fov_y/2)` pixels.

use glam::{DMat3, DVec3};

use crate::error::{Error, Result};
use crate::sink::{SlotRange, SplatBuffers};

/// Largest preview side accepted, pixels (bounds the image allocation).
pub const MAX_IMAGE_SIDE: u32 = 16_384;

/// Margin of [`Camera::framing`]: the sphere's radius is enlarged by this factor before fitting.
pub const FRAMING_MARGIN: f64 = 1.1;

/// A perspective pinhole camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position, metres (world).
    pub eye: DVec3,
    /// The point looked at, metres (world); it projects to the image centre.
    pub target: DVec3,
    /// World up hint (not parallel to the view direction).
    pub up: DVec3,
    /// Vertical field of view, radians, in `(0, π)`.
    pub fov_y: f64,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Gaussians whose centre is nearer than this depth, metres, are skipped.
    pub near: f64,
}

impl Camera {
    /// A camera looking at `center` from distance `D` such that a sphere of `radius` (metres),
    /// enlarged by [`FRAMING_MARGIN`], fits inside both the vertical and the horizontal field of
    /// view: `D = margin·radius / sin(min(fov_y, fov_x) / 2)`. The eye sits at
    /// `center + D·(sin yaw, 0, cos yaw)`: `yaw = 0` is in front of the character (+Z), positive
    /// `yaw` (radians) swings toward +X, the character's left. `near = D / 1000`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `center` or `radius` is not finite, `radius ≤ 0`, `fov_y` is not in
    /// `(0, π)`, `yaw` is not finite, or a side is 0; [`Error::Limit`] when a side exceeds
    /// [`MAX_IMAGE_SIDE`].
    pub fn framing(
        center: DVec3,
        radius: f64,
        width: u32,
        height: u32,
        fov_y: f64,
        yaw: f64,
    ) -> Result<Camera> {
        let invalid = |what: &str, reason: String| Error::Invalid {
            what: what.into(),
            reason,
        };
        if !center.is_finite() {
            return Err(invalid(
                "camera framing centre",
                format!("{center} is not finite"),
            ));
        }
        if !(radius.is_finite() && radius > 0.0) {
            return Err(invalid(
                "camera framing radius",
                format!("{radius} is not a positive length"),
            ));
        }
        if !(fov_y > 0.0 && fov_y < std::f64::consts::PI) {
            return Err(invalid(
                "camera fov_y",
                format!("{fov_y} rad is outside (0, π)"),
            ));
        }
        if !yaw.is_finite() {
            return Err(invalid("camera yaw", format!("{yaw} is not finite")));
        }
        check_size(width, height)?;
        let tan_y = (fov_y / 2.0).tan();
        let half_x = (tan_y * f64::from(width) / f64::from(height)).atan();
        let half = half_x.min(fov_y / 2.0);
        let dist = FRAMING_MARGIN * radius / half.sin();
        let eye = center + dist * DVec3::new(yaw.sin(), 0.0, yaw.cos());
        Ok(Camera {
            eye,
            target: center,
            up: DVec3::Y,
            fov_y,
            width,
            height,
            near: dist * 1e-3,
        })
    }

    /// A camera on the yaw circle around `bounds` (see [`Camera::framing`] for the yaw convention)
    /// at the smallest distance at which every corner of the box projects inside the image with a
    /// 6 % margin on each side — tighter than [`Camera::framing`], which fits the box's bounding
    /// sphere. For a corner at lateral offsets `(x, y)` and depth offset `z` toward the camera the
    /// pinhole needs `d ≥ z + |x|·m / tan(fov_x/2)` and `d ≥ z + |y|·m / tan(fov_y/2)`.
    ///
    /// # Errors
    /// As [`Camera::framing`]; a box that is not finite is refused.
    pub fn framing_box(
        bounds: Aabb,
        width: u32,
        height: u32,
        fov_y: f64,
        yaw: f64,
    ) -> Result<Camera> {
        let (center, radius) = bounds.sphere();
        let mut cam = Camera::framing(center, radius, width, height, fov_y, yaw)?;
        let back = DVec3::new(yaw.sin(), 0.0, yaw.cos());
        let right = DVec3::new(yaw.cos(), 0.0, -yaw.sin());
        let tan_y = (fov_y / 2.0).tan();
        let tan_x = tan_y * f64::from(width) / f64::from(height);
        let m = 1.0 / (1.0 - 2.0 * 0.06);
        let mut dist = 0.0f64;
        let mut depth = 0.0f64;
        for i in 0..8 {
            let c = DVec3::new(
                if i & 1 == 0 {
                    bounds.min.x
                } else {
                    bounds.max.x
                },
                if i & 2 == 0 {
                    bounds.min.y
                } else {
                    bounds.max.y
                },
                if i & 4 == 0 {
                    bounds.min.z
                } else {
                    bounds.max.z
                },
            ) - center;
            let (x, y, z) = (c.dot(right), c.y, c.dot(back));
            dist = dist
                .max(z + x.abs() * m / tan_x)
                .max(z + y.abs() * m / tan_y);
            depth = depth.max(z);
        }
        // Never inside the box, even for a flat one seen edge-on.
        let dist = dist.max(depth + 1e-3 * radius.max(1e-3));
        cam.eye = center + dist * back;
        cam.near = dist * 1e-3;
        Ok(cam)
    }

    /// Check the fields: positions finite, `eye ≠ target`, `fov_y` in `(0, π)`, `near` finite and
    /// ≥ 0, image sides in `1..=MAX_IMAGE_SIDE`.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the field, or [`Error::Limit`] for an oversized image.
    pub fn validate(&self) -> Result<()> {
        let invalid = |what: &str, reason: &str| Error::Invalid {
            what: what.into(),
            reason: reason.into(),
        };
        if !(self.eye.is_finite() && self.target.is_finite() && self.up.is_finite()) {
            return Err(invalid("camera eye/target/up", "not finite"));
        }
        if self.eye == self.target {
            return Err(invalid("camera eye", "equals the target"));
        }
        if !(self.fov_y > 0.0 && self.fov_y < std::f64::consts::PI) {
            return Err(invalid("camera fov_y", "outside (0, π)"));
        }
        if !(self.near.is_finite() && self.near >= 0.0) {
            return Err(invalid("camera near", "not a finite length ≥ 0"));
        }
        check_size(self.width, self.height)
    }

    /// Focal length in pixels, `(H/2) / tan(fov_y/2)`.
    pub fn focal(&self) -> f64 {
        0.5 * f64::from(self.height) / (0.5 * self.fov_y).tan()
    }

    /// The world → camera rotation `W` (rows: right, up, back) and translation `t`, so
    /// `p_cam = W·p + t` (a look-at view matrix).
    pub fn view(&self) -> (DMat3, DVec3) {
        let back = (self.eye - self.target).normalize_or(DVec3::Z);
        let right = self.up.cross(back).normalize_or(DVec3::X);
        let up = back.cross(right);
        let w = DMat3::from_cols(right, up, back).transpose();
        (w, -(w * self.eye))
    }

    /// Pixel coordinates `(u, v)` (continuous, see the module docs) and depth (metres) of a world
    /// point, or `None` when it is not in front of the near plane.
    pub fn project(&self, p: DVec3) -> Option<(f64, f64, f64)> {
        let (w, t) = self.view();
        let c = w * p + t;
        let d = -c.z;
        if d.is_nan() || d < self.near {
            return None;
        }
        let f = self.focal();
        Some((
            0.5 * f64::from(self.width) + f * c.x / d,
            0.5 * f64::from(self.height) - f * c.y / d,
            d,
        ))
    }
}

/// Check image sides: both > 0 and at most [`MAX_IMAGE_SIDE`].
///
/// # Errors
/// [`Error::Invalid`] for a zero side, [`Error::Limit`] for one too large.
pub(crate) fn check_size(width: u32, height: u32) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::Invalid {
            what: "image size".into(),
            reason: format!("{width}×{height} has a zero side"),
        });
    }
    let side = width.max(height);
    if side > MAX_IMAGE_SIDE {
        let limit = u64::from(MAX_IMAGE_SIDE);
        return Err(Error::Limit {
            what: "image side, pixels".into(),
            limit,
            found: u64::from(side),
        });
    }
    Ok(())
}

/// An axis-aligned box, metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: DVec3,
    /// Upper corner.
    pub max: DVec3,
}

impl Aabb {
    /// The smallest box holding both.
    pub fn union(self, other: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The sphere around the box: centre at its middle, radius half its diagonal (at least 1 mm,
    /// so a single point can still be framed).
    pub fn sphere(self) -> (DVec3, f64) {
        (
            0.5 * (self.min + self.max),
            (0.5 * (self.max - self.min).length()).max(1e-3),
        )
    }
}

/// The box around the visible splats of `ranges`: for each slot with a non-zero opacity byte and
/// a finite centre and covariance, the centre ± `3·√c_kk` per axis (the ellipsoid's 3σ extent
/// along axis k). `None` when no slot qualifies.
///
/// # Errors
/// As the range check of the PLY writer: [`Error::Mismatch`] for buffers of different lengths,
/// [`Error::Slots`] for a range outside them.
pub fn splat_bounds(buffers: &SplatBuffers, ranges: &[SlotRange]) -> Result<Option<Aabb>> {
    buffers.check_ranges(ranges)?;
    let mut out: Option<Aabb> = None;
    for r in ranges {
        for i in r.offset as usize..r.end() as usize {
            if buffers.color[i] >> 24 == 0 {
                continue;
            }
            let c = buffers.center[i];
            let cov = buffers.covariance(i);
            let centre = DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]));
            let ext = DVec3::new(
                f64::from(cov[0][0]),
                f64::from(cov[1][1]),
                f64::from(cov[2][2]),
            )
            .max(DVec3::ZERO);
            let ext = 3.0 * DVec3::new(ext.x.sqrt(), ext.y.sqrt(), ext.z.sqrt());
            if !(centre.is_finite() && ext.is_finite()) {
                continue;
            }
            let b = Aabb {
                min: centre - ext,
                max: centre + ext,
            };
            out = Some(out.map_or(b, |o| o.union(b)));
        }
    }
    Ok(out)
}
