//! The ground foot placement stands on ([`crate::anim::foot`]): what a ray straight down meets.
//!
//! World space, metres, +Y up. Every shape answers [`Ground::probe`]: a ray from `origin` straight
//! down (−Y) for at most `max` metres, the first surface it meets, with its upward unit normal.
//! Sources: seed 003 "Foot placement" (the ground closure, flat / step / slope grounds); a height
//! field sampled bilinearly; a triangle mesh by the Möller–Trumbore ray–triangle test (Möller and
//! Trumbore, "Fast, Minimum Storage Ray/Triangle Intersection", 1997).

use glam::DVec3;

use crate::error::{Error, Result};

/// Where a downward ray met the ground.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundHit {
    /// The point, world metres.
    pub point: DVec3,
    /// The surface's upward unit normal (`normal.y > 0`).
    pub normal: DVec3,
}

/// Largest height field, samples (4096 × 4096).
pub const MAX_FIELD_SAMPLES: usize = 1 << 24;
/// Most triangles of a ground mesh.
pub const MAX_GROUND_TRIANGLES: usize = 1 << 20;

/// A ground (module doc).
#[derive(Clone, Debug, PartialEq)]
pub enum Ground {
    /// No ground: every probe misses (feet are left as animated, reported ungrounded).
    None,
    /// The plane `y = height`.
    Flat {
        /// Metres.
        height: f64,
    },
    /// A step: `low` before the edge, `high` from it on. The edge is the line through `edge`
    /// (a point, x and z) across `direction` (horizontal, toward the high side).
    Step {
        /// A point of the edge, `[x, z]` metres.
        edge: [f64; 2],
        /// Toward the high side, `[x, z]` (normalised on use; not zero).
        direction: [f64; 2],
        /// Height before the edge, metres.
        low: f64,
        /// Height from the edge on, metres.
        high: f64,
    },
    /// A plane rising `degrees` (−89 to 89) toward `direction` (horizontal `[x, z]`), through
    /// height `height` at `origin` (`[x, z]`).
    Slope {
        /// A point of the plane, `[x, z]`.
        origin: [f64; 2],
        /// Its height there, metres.
        height: f64,
        /// Uphill, `[x, z]` (normalised on use; not zero).
        direction: [f64; 2],
        /// Rise angle, degrees.
        degrees: f64,
    },
    /// Heights on a regular grid: sample `(i, j)` (column `i` along +X, row `j` along +Z) at
    /// `origin + (i·cell, j·cell)`, bilinear between samples; outside the grid, no ground.
    HeightField {
        /// The grid's first sample, `[x, z]` metres.
        origin: [f64; 2],
        /// Sample spacing, metres (> 0).
        cell: f64,
        /// Samples along X (≥ 2).
        cols: usize,
        /// Samples along Z (≥ 2).
        rows: usize,
        /// `(rows · cols)` heights, metres, row-major.
        heights: Vec<f32>,
    },
    /// A triangle soup (either winding; normals are turned up).
    Mesh {
        /// Triangles, world metres.
        triangles: Vec<[DVec3; 3]>,
    },
}

impl Ground {
    /// Parse the short form of a ground (`mien animate --ground`, a scenario's `ground` step):
    /// `flat` or `flat:H` (the plane `y = H`), `slope:DEG` (rising `DEG` degrees toward +Z through
    /// the origin), `step:H` or `step:H:Z` (0 before `z = Z`, `H` from it on; `Z` default 0.2 m),
    /// `none` (no ground). Numbers are metres or degrees within ±10 000, then [`Ground::check`].
    ///
    /// # Errors
    /// The text and what it should be, or the check's refusal.
    pub fn parse(s: &str) -> std::result::Result<Ground, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |x: &str| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && v.abs() <= 1e4)
                .ok_or_else(|| {
                    format!("`{x}` is not a finite number within ±10000 (metres or degrees)")
                })
        };
        let g = match parts.as_slice() {
            ["none"] => Ground::None,
            ["flat"] => Ground::Flat { height: 0.0 },
            ["flat", h] => Ground::Flat { height: num(h)? },
            ["slope", d] => Ground::Slope {
                origin: [0.0, 0.0],
                height: 0.0,
                direction: [0.0, 1.0],
                degrees: num(d)?,
            },
            ["step", h] | ["step", h, _] => Ground::Step {
                edge: [0.0, parts.get(2).map_or(Ok(0.2), |z| num(z))?],
                direction: [0.0, 1.0],
                low: 0.0,
                high: num(h)?,
            },
            _ => {
                return Err(format!(
                    "`{s}` is not none, flat[:HEIGHT], slope:DEGREES or step:HEIGHT[:Z]"
                ));
            }
        };
        g.check().map_err(|e| e.to_string())?;
        Ok(g)
    }

    /// Check the shape's numbers: finite, directions not zero, a slope within ±89°, a height
    /// field of ≥ 2 × 2 samples that match its size and fit [`MAX_FIELD_SAMPLES`], a mesh of at
    /// most [`MAX_GROUND_TRIANGLES`] finite triangles.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the field.
    pub fn check(&self) -> Result<()> {
        let bad = |what: &str, reason: String| {
            Err(Error::Invalid {
                what: format!("ground {what}"),
                reason,
            })
        };
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let dir = |d: [f64; 2]| finite(&d) && d[0].hypot(d[1]) > 1e-9;
        match self {
            Ground::None => Ok(()),
            Ground::Flat { height } if !height.is_finite() => {
                bad("flat height", format!("{height} is not finite"))
            }
            Ground::Flat { .. } => Ok(()),
            Ground::Step {
                edge,
                direction,
                low,
                high,
            } => {
                if !(finite(edge) && finite(&[*low, *high])) {
                    bad("step", "a number is not finite".into())
                } else if !dir(*direction) {
                    bad(
                        "step direction",
                        format!("{direction:?} is not a direction"),
                    )
                } else {
                    Ok(())
                }
            }
            Ground::Slope {
                origin,
                height,
                direction,
                degrees,
            } => {
                if !(finite(origin) && height.is_finite()) {
                    bad("slope", "a number is not finite".into())
                } else if !dir(*direction) {
                    bad(
                        "slope direction",
                        format!("{direction:?} is not a direction"),
                    )
                } else if !(degrees.is_finite() && degrees.abs() <= 89.0) {
                    bad("slope degrees", format!("{degrees} is not within ±89"))
                } else {
                    Ok(())
                }
            }
            Ground::HeightField {
                origin,
                cell,
                cols,
                rows,
                heights,
            } => {
                if !(finite(origin) && cell.is_finite() && *cell > 0.0) {
                    bad(
                        "height field",
                        "origin or cell is not a finite length".into(),
                    )
                } else if *cols < 2 || *rows < 2 {
                    bad(
                        "height field",
                        format!("{cols} × {rows}: at least 2 × 2 samples"),
                    )
                } else if cols.saturating_mul(*rows) > MAX_FIELD_SAMPLES {
                    bad(
                        "height field",
                        format!("{cols} × {rows} samples, over {MAX_FIELD_SAMPLES}"),
                    )
                } else if heights.len() != cols * rows {
                    bad(
                        "height field",
                        format!("{} heights for {cols} × {rows} samples", heights.len()),
                    )
                } else if let Some(i) = heights.iter().position(|h| !h.is_finite()) {
                    bad("height field", format!("height {i} is not finite"))
                } else {
                    Ok(())
                }
            }
            Ground::Mesh { triangles } => {
                if triangles.len() > MAX_GROUND_TRIANGLES {
                    bad(
                        "mesh",
                        format!("{} triangles, over {MAX_GROUND_TRIANGLES}", triangles.len()),
                    )
                } else if let Some(i) = triangles
                    .iter()
                    .position(|t| !t.iter().all(|v| v.is_finite()))
                {
                    bad("mesh", format!("triangle {i} is not finite"))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// The first surface a ray from `origin` straight down meets within `max` metres (module
    /// doc); `None` when it meets none (or a number is not finite).
    pub fn probe(&self, origin: DVec3, max: f64) -> Option<GroundHit> {
        if !(origin.is_finite() && max.is_finite() && max >= 0.0) {
            return None;
        }
        let plane = |y: f64, normal: DVec3| {
            let d = origin.y - y;
            (0.0..=max).contains(&d).then_some(GroundHit {
                point: DVec3::new(origin.x, y, origin.z),
                normal,
            })
        };
        match self {
            Ground::None => None,
            Ground::Flat { height } => plane(*height, DVec3::Y),
            Ground::Step {
                edge,
                direction,
                low,
                high,
            } => {
                let d = horizontal(*direction);
                let s = (origin.x - edge[0]) * d.x + (origin.z - edge[1]) * d.z;
                plane(if s >= 0.0 { *high } else { *low }, DVec3::Y)
            }
            Ground::Slope {
                origin: o,
                height,
                direction,
                degrees,
            } => {
                let d = horizontal(*direction);
                let tan = degrees.to_radians().tan();
                let s = (origin.x - o[0]) * d.x + (origin.z - o[1]) * d.z;
                let normal = (DVec3::Y - d * tan).normalize();
                plane(height + s * tan, normal)
            }
            Ground::HeightField {
                origin: o,
                cell,
                cols,
                rows,
                heights,
            } => {
                let fx = (origin.x - o[0]) / cell;
                let fz = (origin.z - o[1]) / cell;
                if !(fx >= 0.0 && fz >= 0.0 && fx <= (cols - 1) as f64 && fz <= (rows - 1) as f64) {
                    return None;
                }
                let i = (fx.floor() as usize).min(cols - 2);
                let j = (fz.floor() as usize).min(rows - 2);
                let (u, v) = (fx - i as f64, fz - j as f64);
                let h = |i: usize, j: usize| f64::from(heights[j * cols + i]);
                let (h00, h10, h01, h11) = (h(i, j), h(i + 1, j), h(i, j + 1), h(i + 1, j + 1));
                let y = h00 * (1.0 - u) * (1.0 - v)
                    + h10 * u * (1.0 - v)
                    + h01 * (1.0 - u) * v
                    + h11 * u * v;
                // The bilinear patch's gradient: dy/dx, dy/dz.
                let dx = ((h10 - h00) * (1.0 - v) + (h11 - h01) * v) / cell;
                let dz = ((h01 - h00) * (1.0 - u) + (h11 - h10) * u) / cell;
                plane(y, DVec3::new(-dx, 1.0, -dz).normalize())
            }
            Ground::Mesh { triangles } => {
                let mut best: Option<GroundHit> = None;
                for t in triangles {
                    if let Some(d) = ray_down(origin, t)
                        && d <= max
                        && best.is_none_or(|b| origin.y - b.point.y > d)
                    {
                        let mut n = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
                        if n.y < 0.0 {
                            n = -n;
                        }
                        best = Some(GroundHit {
                            point: DVec3::new(origin.x, origin.y - d, origin.z),
                            normal: n,
                        });
                    }
                }
                best
            }
        }
    }
}

fn horizontal(d: [f64; 2]) -> DVec3 {
    DVec3::new(d[0], 0.0, d[1]).normalize()
}

/// Distance along −Y from `o` to triangle `t` (Möller–Trumbore), `None` when missed or behind.
fn ray_down(o: DVec3, t: &[DVec3; 3]) -> Option<f64> {
    let dir = DVec3::NEG_Y;
    let e1 = t[1] - t[0];
    let e2 = t[2] - t[0];
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-15 {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - t[0];
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let d = e2.dot(q) * inv;
    (d >= 0.0).then_some(d)
}
