//! The cloth definition (`mien-cloth`, docs/schemas/cloth.schema.json; seed 003 "Character
//! cloth"): which skinned mesh is the cloth (a mesh of the model by name, or a cape generated on
//! its shoulders, [`super::cape`]), how it hangs (pin height, maximum distance from the pins to the
//! hem), its material and solver settings, and the capsules on bones it collides with.
//!
//! ```json
//! { "format": "mien-cloth", "version": 1, "cape": { "length": 0.8 },
//!   "pin_height": 0.03, "max_distance": [0.02, 0.3],
//!   "material": { "bend_compliance": 0.001, "substeps": 8, "motion_steps": 4 },
//!   "colliders": [ { "bone": "Spine", "offset": [0, 0, 0], "tail": [0, 0.3, 0], "radius": 0.14 } ] }
//! ```

use serde::{Deserialize, Serialize};

use super::{ClothMaterial, MAX_ITERATIONS, MAX_MOTION_STEPS, MAX_SUBSTEPS, cape::CapeDef};
use crate::anim::spring::CapsuleDef;
use crate::error::{Error, Result, short};

/// The format name.
pub const FORMAT: &str = "mien-cloth";

/// Largest maximum distance, pin height and collider size, metres.
pub const MAX_DISTANCE_M: f64 = 10.0;

/// Most capsules one cloth collides with.
pub const MAX_COLLIDERS: usize = 64;

/// Largest damping and wind drag, 1/s (as the hair's `MAX_RATE`).
pub const MAX_RATE: f64 = 10_000.0;

/// Largest collision thickness, metres.
pub const MAX_THICKNESS_M: f64 = 0.5;

/// The material block: every field optional, defaults from [`ClothMaterial::default`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClothMaterialDef {
    /// Mass of each free vertex, kg (> 0; default 0.01).
    #[serde(default)]
    pub vertex_mass: Option<f64>,
    /// Stretch compliance, m/N (≥ 0; default 0, inextensible).
    #[serde(default)]
    pub stretch_compliance: Option<f64>,
    /// Bend compliance, m/N (≥ 0; default 0.001).
    #[serde(default)]
    pub bend_compliance: Option<f64>,
    /// Velocity damping, 1/s (≥ 0; default 1).
    #[serde(default)]
    pub damping: Option<f64>,
    /// XPBD substeps per motion step (1–64; default 8).
    #[serde(default)]
    pub substeps: Option<u32>,
    /// Constraint iterations per substep (1–8; default 1).
    #[serde(default)]
    pub iterations: Option<u32>,
    /// Motion steps per frame (1–8; default 4): colliders and pins interpolated across them.
    #[serde(default)]
    pub motion_steps: Option<u32>,
    /// Distance kept from colliders, metres (≥ 0; default 0.01).
    #[serde(default)]
    pub thickness: Option<f64>,
    /// Tangential motion lost on contact (0–1; default 0.3).
    #[serde(default)]
    pub friction: Option<f64>,
    /// Gravity, m/s² (default `[0, −9.81, 0]`).
    #[serde(default)]
    pub gravity: Option<[f64; 3]>,
    /// Wind drag, 1/s (≥ 0; default 1).
    #[serde(default)]
    pub wind_drag: Option<f64>,
}

/// A cloth definition (module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClothDef {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The skinned mesh that is the cloth: a mesh (or its node) of the model by name. Exactly one
    /// of `mesh` and `cape`.
    #[serde(default)]
    pub mesh: Option<String>,
    /// A cape generated on the model's shoulders ([`super::cape`]).
    #[serde(default)]
    pub cape: Option<CapeDef>,
    /// Vertices within this height of the cloth's top are pinned to their skinned places, metres
    /// (≥ 0; default 0.02).
    #[serde(default = "d_pin")]
    pub pin_height: f64,
    /// How far a free vertex may stray from its skinned place just below the pins and at the
    /// hem, metres (each ≥ 0; linear in height between).
    pub max_distance: [f64; 2],
    /// Material and solver settings.
    #[serde(default)]
    pub material: ClothMaterialDef,
    /// A pin jump farther than this in one frame carries the cloth along, metres (> 0;
    /// default 1).
    #[serde(default = "d_teleport")]
    pub teleport_distance: f64,
    /// Capsules on bones (at most [`MAX_COLLIDERS`]).
    #[serde(default)]
    pub colliders: Vec<CapsuleDef>,
}

fn d_pin() -> f64 {
    0.02
}
fn d_teleport() -> f64 {
    1.0
}

impl ClothDef {
    /// Parse a `mien-cloth` file's text (strict: unknown keys refused, naming the JSON pointer).
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the pointer.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        crate::io::read::json_strict(text, file)
    }

    /// The material with the defaults filled in, checked.
    ///
    /// # Errors
    /// Every problem of the definition at once ([`Error::Many`], or the one), each an
    /// [`Error::Format`] naming `file` and the field: format or version, not exactly one of `mesh`
    /// and `cape`, numbers out of range (with the range), too many colliders.
    pub fn check(&self, file: &str) -> Result<ClothMaterial> {
        let mut p: Vec<Error> = Vec::new();
        let mut bad = |field: &str, reason: String| p.push(Error::format(file, field, reason));
        if self.format != FORMAT {
            bad("/format", format!("`{}` is not `{FORMAT}`", self.format));
        }
        if self.version != 1 {
            bad("/version", format!("{} (mien reads 1)", self.version));
        }
        match (&self.mesh, &self.cape) {
            (Some(_), Some(_)) => bad("/mesh", "give `mesh` or `cape`, not both".into()),
            (None, None) => bad(
                "/mesh",
                "name the cloth's skinned mesh, or generate a `cape`".into(),
            ),
            (None, Some(c)) => {
                if let Err(e) = c.check() {
                    bad("/cape", e);
                }
            }
            _ => {}
        }
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        if !nonneg(self.pin_height) {
            bad(
                "/pin_height",
                format!("{} is not a height ≥ 0", self.pin_height),
            );
        }
        let [near, far] = self.max_distance;
        if !self
            .max_distance
            .iter()
            .all(|d| nonneg(*d) && *d <= MAX_DISTANCE_M)
        {
            bad(
                "/max_distance",
                format!("[{near}, {far}]: each must be from 0 to {MAX_DISTANCE_M} metres"),
            );
        } else if near > far {
            bad(
                "/max_distance",
                format!("[{near}, {far}]: the hem's distance must be at least the pins'"),
            );
        }
        if !(self.teleport_distance.is_finite() && self.teleport_distance > 0.0) {
            bad(
                "/teleport_distance",
                format!("{} is not a distance > 0", self.teleport_distance),
            );
        }
        if self.colliders.len() > MAX_COLLIDERS {
            bad(
                "/colliders",
                format!(
                    "{} capsules exceed the limit of {MAX_COLLIDERS}",
                    self.colliders.len()
                ),
            );
        }
        for (i, c) in self.colliders.iter().enumerate() {
            if !c
                .offset
                .iter()
                .chain(&c.tail)
                .all(|x| x.is_finite() && x.abs() <= MAX_DISTANCE_M)
            {
                bad(
                    &format!("/colliders/{i}"),
                    format!(
                        "offset and tail must be finite and within {MAX_DISTANCE_M} m of the bone"
                    ),
                );
            }
            if !(nonneg(c.radius) && c.radius <= MAX_DISTANCE_M) {
                bad(
                    &format!("/colliders/{i}/radius"),
                    format!(
                        "{} is not a radius from 0 to {MAX_DISTANCE_M} m",
                        short(c.radius)
                    ),
                );
            }
        }
        let d = ClothMaterial::default();
        let m = &self.material;
        let mut num =
            |field: &str, v: Option<f64>, dflt: f64, ok: &dyn Fn(f64) -> bool, range: &str| {
                let x = v.unwrap_or(dflt);
                if !(x.is_finite() && ok(x)) {
                    bad(
                        &format!("/material/{field}"),
                        format!("{} is outside {range}", short(x)),
                    );
                }
                x
            };
        let vertex_mass = num(
            "vertex_mass",
            m.vertex_mass,
            d.vertex_mass,
            &|x| x > 0.0,
            "(0, ∞) kg",
        );
        let stretch_compliance = num(
            "stretch_compliance",
            m.stretch_compliance,
            d.stretch_compliance,
            &|x| x >= 0.0,
            "[0, ∞) m/N",
        );
        let bend_compliance = num(
            "bend_compliance",
            m.bend_compliance,
            d.bend_compliance,
            &|x| x >= 0.0,
            "[0, ∞) m/N",
        );
        let damping = num(
            "damping",
            m.damping,
            d.damping,
            &|x| (0.0..=MAX_RATE).contains(&x),
            "[0, 10000] 1/s",
        );
        let thickness = num(
            "thickness",
            m.thickness,
            d.thickness,
            &|x| (0.0..=MAX_THICKNESS_M).contains(&x),
            "[0, 0.5] m",
        );
        let friction = num(
            "friction",
            m.friction,
            d.friction,
            &|x| (0.0..=1.0).contains(&x),
            "[0, 1]",
        );
        let wind_drag = num(
            "wind_drag",
            m.wind_drag,
            d.wind_drag,
            &|x| (0.0..=MAX_RATE).contains(&x),
            "[0, 10000] 1/s",
        );
        let mut int = |field: &str, v: Option<u32>, dflt: u32, max: u32| {
            let x = v.unwrap_or(dflt);
            if !(1..=max).contains(&x) {
                bad(
                    &format!("/material/{field}"),
                    format!("{x} is outside 1–{max}"),
                );
            }
            x
        };
        let substeps = int("substeps", m.substeps, d.substeps, MAX_SUBSTEPS);
        let iterations = int("iterations", m.iterations, d.iterations, MAX_ITERATIONS);
        let motion_steps = int(
            "motion_steps",
            m.motion_steps,
            d.motion_steps,
            MAX_MOTION_STEPS,
        );
        let gravity = m.gravity.map_or(d.gravity, glam::DVec3::from);
        if !(gravity.is_finite() && gravity.length() <= 1000.0) {
            bad(
                "/material/gravity",
                "must be finite and at most 1000 m/s²".into(),
            );
        }
        match p.len() {
            0 => Ok(ClothMaterial {
                vertex_mass,
                stretch_compliance,
                bend_compliance,
                damping,
                substeps,
                iterations,
                motion_steps,
                thickness,
                friction,
                gravity,
                wind_drag,
                teleport_distance: self.teleport_distance,
            }),
            1 => Err(p.remove(0)),
            _ => Err(Error::Many(p)),
        }
    }
}
