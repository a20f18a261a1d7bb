//! A mesh collider for hair as a signed distance field (issue 27 item 3: Sintel's watertight
//! collider): a closed triangle mesh sampled once onto a regular grid — at each grid point the
//! distance to the nearest triangle (Ericson, *Real-Time Collision Detection*, §5.1.5, closest
//! point on a triangle), negative inside, the inside decided by the generalised winding number
//! (Jacobson, Kavan and Sorkine-Hornung, "Robust Inside-Outside Segmentation using Generalized
//! Winding Numbers", SIGGRAPH 2013: the sum of the triangles' solid angles over 4π, by Van
//! Oosterom and Strackee's formula; ½ or more is inside) — then read back by trilinear
//! interpolation, with the gradient by central differences. A point closer than a margin is
//! pushed out along the gradient. Outside the grid the field reads the distance to the grid's box
//! plus its nearest value (never inside).
//!
//! The mesh lives in the head bone's space, so the field moves with the head.

use glam::DVec3;

use crate::error::{Error, Result};

/// Most grid points along one axis.
pub const MAX_SDF_RESOLUTION: usize = 128;
/// Most triangles a collider mesh may have.
pub const MAX_SDF_TRIANGLES: usize = 65_536;

/// A signed distance field sampled on a grid (module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct MeshSdf {
    origin: DVec3,
    cell: f64,
    dims: [usize; 3],
    /// `(nx·ny·nz)` signed distances, metres, x fastest.
    values: Vec<f32>,
}

fn closest_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// The solid angle of triangle `abc` seen from `p`, signed by the triangle's winding.
fn solid_angle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (a, b, c) = (a - p, b - p, c - p);
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let num = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    2.0 * num.atan2(den)
}

impl MeshSdf {
    /// Read a closed mesh from a Wavefront OBJ (its polygons fanned into triangles; metres,
    /// head-bone space — Sintel's `sintel_collider_frostbitten.obj`) and sample it as
    /// [`MeshSdf::from_mesh`] does.
    ///
    /// # Errors
    /// The OBJ reader's refusals (file, line); [`MeshSdf::from_mesh`]'s.
    pub fn from_obj(path: &std::path::Path, resolution: usize, padding: f64) -> Result<Self> {
        use crate::gnm::bake::obj::{ObjParts, read_obj};
        let obj = read_obj(path, ObjParts::All)?;
        let mut tris = Vec::new();
        for i in 0..obj.polygon_count() {
            let p = obj.polygon(i);
            for k in 1..p.len().saturating_sub(1) {
                tris.push([p[0].0, p[k].0, p[k + 1].0]);
            }
        }
        Self::from_mesh(&obj.positions, &tris, resolution, padding)
    }

    /// Sample the closed mesh `vertices` `(V,3)` / `triangles` `(T,3)` (metres, head-bone space)
    /// onto a grid of `resolution` points along its longest side, padded by `padding` metres on
    /// every side.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty mesh, an index out of range, a non-finite vertex, a
    /// resolution outside 4–[`MAX_SDF_RESOLUTION`] or a negative padding; [`Error::Limit`] past
    /// [`MAX_SDF_TRIANGLES`].
    pub fn from_mesh(
        vertices: &[[f64; 3]],
        triangles: &[[u32; 3]],
        resolution: usize,
        padding: f64,
    ) -> Result<Self> {
        let bad = |reason: String| Error::Invalid {
            what: "mesh collider".into(),
            reason,
        };
        if vertices.is_empty() || triangles.is_empty() {
            return Err(bad("no vertices or no triangles".into()));
        }
        if triangles.len() > MAX_SDF_TRIANGLES {
            return Err(Error::Limit {
                what: "mesh collider triangles".into(),
                limit: MAX_SDF_TRIANGLES as u64,
                found: triangles.len() as u64,
            });
        }
        if !(4..=MAX_SDF_RESOLUTION).contains(&resolution) {
            return Err(bad(format!(
                "resolution {resolution} is outside 4–{MAX_SDF_RESOLUTION}"
            )));
        }
        if !(padding.is_finite() && padding >= 0.0) {
            return Err(bad(format!("padding {padding} must be ≥ 0 metres")));
        }
        let v: Vec<DVec3> = vertices.iter().map(|p| DVec3::from(*p)).collect();
        if let Some(i) = v.iter().position(|p| !p.is_finite()) {
            return Err(bad(format!("vertex {i} is not finite")));
        }
        if let Some((t, k)) = triangles.iter().enumerate().find_map(|(t, tri)| {
            tri.iter()
                .find(|k| **k as usize >= v.len())
                .map(|k| (t, *k))
        }) {
            return Err(bad(format!("triangle {t} names vertex {k} of {}", v.len())));
        }
        let lo = v.iter().fold(DVec3::INFINITY, |m, p| m.min(*p)) - DVec3::splat(padding);
        let hi = v.iter().fold(DVec3::NEG_INFINITY, |m, p| m.max(*p)) + DVec3::splat(padding);
        let size = hi - lo;
        let cell = size.max_element() / (resolution - 1) as f64;
        if !(cell > 0.0) {
            return Err(bad("the mesh has no extent".into()));
        }
        let dims = [0, 1, 2].map(|k| ((size[k] / cell).ceil() as usize + 1).max(2));
        let tris: Vec<[DVec3; 3]> = triangles.iter().map(|t| t.map(|k| v[k as usize])).collect();
        let mut values = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    let p = lo + DVec3::new(x as f64, y as f64, z as f64) * cell;
                    let (mut d2, mut w) = (f64::INFINITY, 0.0);
                    for [a, b, c] in &tris {
                        d2 = d2.min(p.distance_squared(closest_on_triangle(p, *a, *b, *c)));
                        w += solid_angle(p, *a, *b, *c);
                    }
                    let inside = (w / (4.0 * std::f64::consts::PI)).abs() >= 0.5;
                    let d = d2.sqrt();
                    values.push(if inside { -d } else { d } as f32);
                }
            }
        }
        Ok(MeshSdf {
            origin: lo,
            cell,
            dims,
            values,
        })
    }

    /// Grid spacing, metres.
    pub fn cell(&self) -> f64 {
        self.cell
    }

    /// Grid points along x, y, z.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    fn at(&self, x: usize, y: usize, z: usize) -> f64 {
        f64::from(self.values[x + self.dims[0] * (y + self.dims[1] * z)])
    }

    /// The signed distance at `p` (head-bone space), metres (module doc).
    pub fn distance(&self, p: DVec3) -> f64 {
        let g = (p - self.origin) / self.cell;
        let max = DVec3::new(
            (self.dims[0] - 1) as f64,
            (self.dims[1] - 1) as f64,
            (self.dims[2] - 1) as f64,
        );
        let c = g.clamp(DVec3::ZERO, max);
        let outside = (g - c).length() * self.cell;
        let i = c.floor().min(max - DVec3::ONE).max(DVec3::ZERO);
        let f = c - i;
        let (x, y, z) = (i.x as usize, i.y as usize, i.z as usize);
        let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
        let c00 = lerp(self.at(x, y, z), self.at(x + 1, y, z), f.x);
        let c10 = lerp(self.at(x, y + 1, z), self.at(x + 1, y + 1, z), f.x);
        let c01 = lerp(self.at(x, y, z + 1), self.at(x + 1, y, z + 1), f.x);
        let c11 = lerp(self.at(x, y + 1, z + 1), self.at(x + 1, y + 1, z + 1), f.x);
        let d = lerp(lerp(c00, c10, f.y), lerp(c01, c11, f.y), f.z);
        if outside > 0.0 {
            d.max(0.0) + outside
        } else {
            d
        }
    }

    /// The field's gradient at `p` (central differences over one cell), not normalised.
    pub fn gradient(&self, p: DVec3) -> DVec3 {
        let h = 0.5 * self.cell;
        let d = |e: DVec3| self.distance(p + e) - self.distance(p - e);
        DVec3::new(d(DVec3::X * h), d(DVec3::Y * h), d(DVec3::Z * h)) / (2.0 * h)
    }

    /// `p` pushed out to `margin` metres from the surface along the gradient, or `None` when it is
    /// already that far out.
    pub fn push_out(&self, p: DVec3, margin: f64) -> Option<DVec3> {
        let mut q = p;
        // The interpolated field is not exactly linear: a few steps reach the margin.
        for _ in 0..4 {
            let d = self.distance(q);
            if d >= margin {
                break;
            }
            let n = self.gradient(q).normalize_or(DVec3::Y);
            q += n * (margin - d + 1e-7);
        }
        (q != p).then_some(q)
    }
}
