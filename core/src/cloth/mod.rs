//! Character cloth (issue 27 item 1, seed 003 "Character cloth"): a sheet that follows a skinned
//! mesh — its pinned vertices exactly, its free ones within a maximum distance of their skinned
//! places — simulated with XPBD in small steps (Macklin, Storey, Lu, Terdiman, Chentanez, Jeschke
//! and Müller, "Small Steps in Physics Simulation", SCA 2019: many substeps of one iteration beat
//! many iterations of one step at equal cost, with far less stretch).
//!
//! [`Cloth::update`] walks the frame in `motion_steps × substeps` XPBD substeps of
//! `h = dt / (motion_steps·substeps)`, with the skinned places and the capsules interpolated
//! between the last frame and this one at every substep (so a fast arm does not pass through the
//! cloth: an arm sweeping through a cape at 5 m/s leaves none of it behind, where one step of one
//! substep does):
//! 1. predict `p = x + h·v + h²·(g + drag·(wind − v))` for free vertices; pinned ones are set to
//!    their skinned places;
//! 2. stretch constraints on every edge and bend constraints across every inner edge (the
//!    distance between the two opposite vertices), each `C = |pᵢ − pⱼ| − L`, solved once per
//!    substep with compliance: `Δλ = −C / (wᵢ + wⱼ + α/h²)`, `pᵢ += wᵢ·Δλ·n`, `pⱼ −= wⱼ·Δλ·n`;
//! 3. capsules push vertices out to their radius plus the thickness, the tangential motion along
//!    the surface reduced by the friction factor;
//! 4. a free vertex farther than its maximum distance from its skinned place is put back on that
//!    sphere (the distance grows from `max_distance_near` just below the pins to
//!    `max_distance_far` at the hem, by height in the bind pose);
//! 5. `v = (p − x)/h`, damped by `e^(−damping·h)`.
//!
//! A pin jump past `teleport_distance` in one frame carries the whole cloth along by the pins'
//! mean displacement (no stretch, no whip). No self-collision.

use glam::DVec3;

use crate::error::{Error, Result};

pub mod cape;
pub mod def;

pub use cape::{CapeDef, add_cape};
pub use def::{ClothDef, ClothMaterialDef};

/// Most motion steps per update.
pub const MAX_MOTION_STEPS: u32 = 8;
/// Most substeps per motion step.
pub const MAX_SUBSTEPS: u32 = 64;
/// Most constraint iterations per substep.
pub const MAX_ITERATIONS: u32 = 8;

/// The cloth's material and solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClothMaterial {
    /// Mass of each free vertex, kg (> 0).
    pub vertex_mass: f64,
    /// Stretch compliance, m/N (≥ 0; 0 is inextensible).
    pub stretch_compliance: f64,
    /// Bend compliance, m/N (≥ 0).
    pub bend_compliance: f64,
    /// Velocity damping, 1/s (≥ 0).
    pub damping: f64,
    /// XPBD substeps per motion step (1 to [`MAX_SUBSTEPS`]).
    pub substeps: u32,
    /// Constraint iterations per substep (1 to [`MAX_ITERATIONS`]; 1 is the small-steps rule).
    pub iterations: u32,
    /// Motion steps per update (1 to [`MAX_MOTION_STEPS`]).
    pub motion_steps: u32,
    /// Distance kept from colliders, metres (≥ 0).
    pub thickness: f64,
    /// Tangential motion kept on contact, fraction lost (0–1).
    pub friction: f64,
    /// Gravity, m/s².
    pub gravity: DVec3,
    /// Wind drag, 1/s (≥ 0): the acceleration `drag·(wind − v)`.
    pub wind_drag: f64,
    /// A pin jump farther than this in one update carries the cloth along, metres (> 0).
    pub teleport_distance: f64,
}

impl Default for ClothMaterial {
    fn default() -> Self {
        ClothMaterial {
            vertex_mass: 0.01,
            stretch_compliance: 0.0,
            bend_compliance: 1e-3,
            damping: 1.0,
            substeps: 8,
            iterations: 1,
            motion_steps: 4,
            thickness: 0.01,
            friction: 0.3,
            gravity: DVec3::new(0.0, -9.81, 0.0),
            wind_drag: 1.0,
            teleport_distance: 1.0,
        }
    }
}

/// A capsule collider: the segment `a`–`b` swept by `radius`, metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClothCapsule {
    /// One end.
    pub a: DVec3,
    /// The other end.
    pub b: DVec3,
    /// Radius.
    pub radius: f64,
}

impl ClothCapsule {
    /// The capsule `t` of the way from `self` to `other` (both ends and the radius).
    pub fn lerp(&self, other: &ClothCapsule, t: f64) -> ClothCapsule {
        ClothCapsule {
            a: self.a.lerp(other.a, t),
            b: self.b.lerp(other.b, t),
            radius: self.radius + (other.radius - self.radius) * t,
        }
    }

    /// The nearest point of the axis to `p`, and `p`'s distance from it.
    fn nearest(&self, p: DVec3) -> (DVec3, f64) {
        let ab = self.b - self.a;
        let t = if ab.length_squared() > 0.0 {
            ((p - self.a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = self.a + ab * t;
        (c, p.distance(c))
    }
}

/// A distance constraint between two vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Link {
    i: u32,
    j: u32,
    rest: f64,
    bend: bool,
}

/// What one update did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ClothReport {
    /// XPBD substeps run.
    pub substeps: u32,
    /// The pins jumped past the teleport distance: the cloth was carried along.
    pub teleported: bool,
    /// Largest stretch of an edge over its rest length after the update (`|e| / L − 1`).
    pub max_stretch: f64,
    /// Vertex contacts with colliders in the update.
    pub contacts: usize,
}

/// A simulated sheet (module doc).
#[derive(Clone, Debug)]
pub struct Cloth {
    material: ClothMaterial,
    links: Vec<Link>,
    pinned: Vec<bool>,
    max_distance: Vec<f64>,
    x: Vec<DVec3>,
    v: Vec<DVec3>,
    last_places: Option<Vec<DVec3>>,
    last_colliders: Vec<ClothCapsule>,
}

impl Cloth {
    /// A cloth over `rest` (bind-pose vertices `(V,3)`, metres) and `triangles` (`(T,3)` vertex
    /// indices): vertices within `pin_height` of the highest are pinned; free vertices may stray
    /// from their skinned places by `max_distance[0]` just below the pins up to `max_distance[1]`
    /// at the lowest vertex (linear in height).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty mesh, an index out of range, a degenerate edge, no pinned
    /// vertex, or a material out of range (each named).
    pub fn new(
        rest: &[[f32; 3]],
        triangles: &[[u32; 3]],
        pin_height: f64,
        max_distance: [f64; 2],
        material: ClothMaterial,
    ) -> Result<Self> {
        let bad = |what: &str, reason: String| Error::Invalid {
            what: format!("cloth {what}"),
            reason,
        };
        let m = material;
        let fine = m.vertex_mass.is_finite()
            && m.vertex_mass > 0.0
            && [
                m.stretch_compliance,
                m.bend_compliance,
                m.damping,
                m.thickness,
                m.wind_drag,
            ]
            .iter()
            .all(|x| x.is_finite() && *x >= 0.0)
            && (0.0..=1.0).contains(&m.friction)
            && m.gravity.is_finite()
            && m.teleport_distance.is_finite()
            && m.teleport_distance > 0.0;
        if !fine {
            return Err(bad("material", "masses > 0; compliances, damping, thickness and drag ≥ 0; friction 0–1; a teleport distance > 0".into()));
        }
        if !(1..=MAX_SUBSTEPS).contains(&m.substeps)
            || !(1..=MAX_MOTION_STEPS).contains(&m.motion_steps)
            || !(1..=MAX_ITERATIONS).contains(&m.iterations)
        {
            return Err(bad(
                "material",
                format!(
                    "substeps {} (1–{MAX_SUBSTEPS}), iterations {} (1–{MAX_ITERATIONS}) and motion steps {} (1–{MAX_MOTION_STEPS})",
                    m.substeps, m.iterations, m.motion_steps
                ),
            ));
        }
        let limits_ok = pin_height.is_finite()
            && pin_height >= 0.0
            && max_distance.iter().all(|d| d.is_finite() && *d >= 0.0);
        if !limits_ok {
            return Err(bad(
                "limits",
                "pin height and maximum distances must be ≥ 0".into(),
            ));
        }
        let n = rest.len();
        if n == 0 || triangles.is_empty() {
            return Err(bad("mesh", "no vertices or no triangles".into()));
        }
        let x: Vec<DVec3> = rest.iter().map(|p| DVec3::from(p.map(f64::from))).collect();
        if let Some(i) = x.iter().position(|p| !p.is_finite()) {
            return Err(bad("mesh", format!("vertex {i} is not finite")));
        }
        // Edges (stretch) and, across each inner edge, the two opposite vertices (bend).
        let mut edges: std::collections::BTreeMap<(u32, u32), Vec<u32>> = Default::default();
        for (t, tri) in triangles.iter().enumerate() {
            if let Some(k) = tri.iter().find(|k| **k as usize >= n) {
                return Err(bad("mesh", format!("triangle {t} names vertex {k} of {n}")));
            }
            for e in 0..3 {
                let (a, b, o) = (tri[e], tri[(e + 1) % 3], tri[(e + 2) % 3]);
                edges.entry((a.min(b), a.max(b))).or_default().push(o);
            }
        }
        let mut links = Vec::new();
        for ((a, b), opp) in &edges {
            let rest = x[*a as usize].distance(x[*b as usize]);
            if rest <= 0.0 {
                return Err(bad("mesh", format!("edge {a}–{b} has zero length")));
            }
            links.push(Link {
                i: *a,
                j: *b,
                rest,
                bend: false,
            });
            if let [o1, o2] = opp[..] {
                let r = x[o1 as usize].distance(x[o2 as usize]);
                if r > 0.0 {
                    links.push(Link {
                        i: o1,
                        j: o2,
                        rest: r,
                        bend: true,
                    });
                }
            }
        }
        let top = x.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max);
        let low = x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        let pinned: Vec<bool> = x.iter().map(|p| p.y >= top - pin_height).collect();
        if !pinned.iter().any(|p| *p) {
            return Err(bad("pins", "no vertex is pinned".into()));
        }
        let below = top - pin_height;
        let span = (below - low).max(1e-9);
        let max_distance = x
            .iter()
            .map(|p| {
                let t = ((below - p.y) / span).clamp(0.0, 1.0);
                max_distance[0] + (max_distance[1] - max_distance[0]) * t
            })
            .collect();
        Ok(Cloth {
            material,
            links,
            pinned,
            max_distance,
            v: vec![DVec3::ZERO; n],
            x,
            last_places: None,
            last_colliders: Vec::new(),
        })
    }

    /// The vertices as last simulated `(V,3)`, world metres.
    pub fn positions(&self) -> &[DVec3] {
        &self.x
    }

    /// Whether each vertex is pinned `(V,)`.
    pub fn pinned(&self) -> &[bool] {
        &self.pinned
    }

    /// The velocities `(V,3)`, m/s.
    pub fn velocities(&self) -> &[DVec3] {
        &self.v
    }

    /// Forget the last frame: the next [`Cloth::update`] puts the cloth on its skinned places,
    /// still (a cut: a seek, a gap, a new shot).
    pub fn reset(&mut self) {
        self.last_places = None;
    }

    /// The largest edge stretch now, `|e| / L − 1`.
    pub fn max_stretch(&self) -> f64 {
        self.links
            .iter()
            .filter(|l| !l.bend)
            .map(|l| self.x[l.i as usize].distance(self.x[l.j as usize]) / l.rest - 1.0)
            .fold(0.0, f64::max)
    }

    /// Advance by `dt` seconds to a frame whose skinned places are `places` (`(V,3)`, world
    /// metres: where the skin puts each vertex this frame) and whose colliders are `colliders`
    /// (the same capsules every frame, moved), with `wind` (m/s) blowing.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a `dt` not finite and ≥ 0, places of the wrong count or not finite,
    /// a collider count that changed, non-finite wind.
    pub fn update(
        &mut self,
        dt: f64,
        places: &[DVec3],
        colliders: &[ClothCapsule],
        wind: DVec3,
    ) -> Result<ClothReport> {
        let bad = |what: &str, reason: String| Error::Invalid {
            what: format!("cloth update {what}"),
            reason,
        };
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(bad("dt", format!("{dt} is not a time step ≥ 0")));
        }
        if places.len() != self.x.len() || !places.iter().all(|p| p.is_finite()) {
            return Err(bad(
                "places",
                format!(
                    "{} finite places needed, {} given",
                    self.x.len(),
                    places.len()
                ),
            ));
        }
        if !wind.is_finite() {
            return Err(bad("wind", "not finite".into()));
        }
        let mut report = ClothReport::default();
        let Some(last) = self.last_places.take() else {
            // First frame: the cloth on its skinned places, still.
            self.x.copy_from_slice(places);
            self.v.fill(DVec3::ZERO);
            self.last_places = Some(places.to_vec());
            self.last_colliders = colliders.to_vec();
            return Ok(report);
        };
        if self.last_colliders.len() != colliders.len() {
            self.last_places = Some(last);
            return Err(bad(
                "colliders",
                format!(
                    "{} capsules, {} last frame",
                    colliders.len(),
                    self.last_colliders.len()
                ),
            ));
        }
        // A pin jump past the teleport distance: carry everything along.
        let pins: Vec<usize> = (0..self.x.len()).filter(|i| self.pinned[*i]).collect();
        let shift = pins.iter().map(|&i| places[i] - last[i]).sum::<DVec3>() / pins.len() as f64;
        let last = if shift.length() > self.material.teleport_distance {
            for p in &mut self.x {
                *p += shift;
            }
            report.teleported = true;
            places.to_vec()
        } else {
            last
        };
        let m = self.material;
        let pieces = m.motion_steps;
        let h = dt / f64::from(pieces * m.substeps);
        if h > 0.0 {
            let w = 1.0 / m.vertex_mass;
            let mut prev = vec![DVec3::ZERO; self.x.len()];
            let mut anchors = vec![DVec3::ZERO; self.x.len()];
            let mut caps = vec![
                ClothCapsule {
                    a: DVec3::ZERO,
                    b: DVec3::ZERO,
                    radius: 0.0
                };
                colliders.len()
            ];
            for s in 1..=pieces * m.substeps {
                // The places and capsules where they are at this substep's time.
                let f = f64::from(s) / f64::from(pieces * m.substeps);
                for (a, (p0, p1)) in anchors.iter_mut().zip(last.iter().zip(places)) {
                    *a = p0.lerp(*p1, f);
                }
                for (c, (c0, c1)) in caps
                    .iter_mut()
                    .zip(self.last_colliders.iter().zip(colliders))
                {
                    *c = c0.lerp(c1, f);
                }
                prev.copy_from_slice(&self.x);
                for i in 0..self.x.len() {
                    if self.pinned[i] {
                        self.x[i] = anchors[i];
                    } else {
                        let a = m.gravity + (wind - self.v[i]) * m.wind_drag;
                        self.x[i] += self.v[i] * h + a * (h * h);
                    }
                }
                for l in (0..m.iterations).flat_map(|_| &self.links) {
                    let (i, j) = (l.i as usize, l.j as usize);
                    let (wi, wj) = (
                        if self.pinned[i] { 0.0 } else { w },
                        if self.pinned[j] { 0.0 } else { w },
                    );
                    let d = self.x[i] - self.x[j];
                    let len = d.length();
                    if len <= 0.0 || wi + wj == 0.0 {
                        continue;
                    }
                    let alpha = if l.bend {
                        m.bend_compliance
                    } else {
                        m.stretch_compliance
                    };
                    let dl = -(len - l.rest) / (wi + wj + alpha / (h * h));
                    let n = d / len;
                    self.x[i] += n * (wi * dl);
                    self.x[j] -= n * (wj * dl);
                }
                for i in 0..self.x.len() {
                    if self.pinned[i] {
                        continue;
                    }
                    for c in &caps {
                        let (axis, dist) = c.nearest(self.x[i]);
                        let r = c.radius + m.thickness;
                        if dist < r {
                            let n = if dist > 1e-12 {
                                (self.x[i] - axis) / dist
                            } else {
                                (c.b - c.a).any_orthonormal_vector()
                            };
                            let out = axis + n * r;
                            // Friction: keep part of the motion along the surface.
                            let mv = out - prev[i];
                            let tangential = mv - n * mv.dot(n);
                            self.x[i] = out - tangential * m.friction;
                            report.contacts += 1;
                        }
                    }
                    let d = self.x[i] - anchors[i];
                    let r = self.max_distance[i];
                    if d.length() > r {
                        self.x[i] = anchors[i] + d.normalize_or(DVec3::ZERO) * r;
                    }
                }
                let keep = (-m.damping * h).exp();
                for i in 0..self.x.len() {
                    self.v[i] = if self.pinned[i] {
                        DVec3::ZERO
                    } else {
                        (self.x[i] - prev[i]) / h * keep
                    };
                }
                report.substeps += 1;
            }
        }
        self.last_places = Some(places.to_vec());
        self.last_colliders = colliders.to_vec();
        report.max_stretch = self.max_stretch();
        Ok(report)
    }
}
