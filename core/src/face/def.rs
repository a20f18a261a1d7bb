//! The face definition: expressions, visemes, blink, gaze and clamping of one character — a
//! `mien-face` JSON file (docs/schemas/face.schema.json) or the built-in defaults for ARKit rigs.
//!
//! Source: seed 003 "Face" (`FaceDef`: expressions and visemes map names to {morph target: weight};
//! blink lid targets, interval range, duration, close fraction, seed; look: eye bones with forward
//! and up axes in the bone's own frame, limits, speed, optional look morphs; expression speed).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::speech::face::{VisemeMap, VisemeMapKind};
use crate::speech::viseme::{VISEME_COUNT, VISEME_NAMES, Viseme};

/// A named expression: targets and weights at full strength.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Expression {
    /// Its name (`smile`).
    pub name: String,
    /// (target, weight) at expression weight 1.
    pub targets: Vec<(String, f32)>,
}

/// Blinking.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BlinkDef {
    /// Lid targets and their closed weights.
    pub targets: Vec<(String, f32)>,
    /// Seconds of one blink (close + open), > 0.
    pub duration: f64,
    /// Fraction of the duration spent closing, in (0, 1).
    pub close_fraction: f64,
    /// Seed of the blink timing generator (SplitMix64).
    pub seed: u64,
    /// Fixed interval range between blinks `[min, max]` seconds; `None` takes the avatar state's
    /// range from the animation config.
    pub interval: Option<(f64, f64)>,
}

/// How the eyes turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum LookMode {
    /// Eye joints when the character has them, else `eyeLook*` morphs.
    Auto,
    /// Rotate the eye joints.
    Joints,
    /// Drive the `eyeLook*` morph targets.
    Morphs,
}

/// Gaze.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LookDef {
    /// Joints or morphs.
    pub mode: LookMode,
    /// Eye joint node names `(left, right)`; `None` finds them by name.
    pub joints: Option<(String, String)>,
    /// Eye centres in the character's rest frame, metres `(left, right)`; `None` derives them.
    pub centers: Option<([f32; 3], [f32; 3])>,
    /// The eye joints' forward axis in their own frame; `None`: the character's forward (+Z) as the
    /// joint sees it at rest.
    pub forward: Option<[f32; 3]>,
    /// The eye joints' up axis in their own frame; `None`: the character's up (+Y) at rest.
    pub up: Option<[f32; 3]>,
    /// Largest yaw either way, radians.
    pub yaw_limit: f32,
    /// Largest pitch either way, radians.
    pub pitch_limit: f32,
    /// Largest angular speed of an eye, radians per second.
    pub max_speed: f32,
    /// Radians of eye rotation per unit of an `eyeLook*` weight (ARKit: about 20°).
    pub radians_per_unit: f32,
}

impl Default for LookDef {
    fn default() -> Self {
        LookDef {
            mode: LookMode::Auto,
            joints: None,
            centers: None,
            forward: None,
            up: None,
            yaw_limit: 35f32.to_radians(),
            pitch_limit: 25f32.to_radians(),
            max_speed: 600f32.to_radians(),
            radians_per_unit: 20f32.to_radians(),
        }
    }
}

/// Which targets end clamped to [0, 1].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Clamp {
    /// Every target the face controller drives (expressions, blink, gaze, visemes, overrides).
    Driven,
    /// Every target of the mesh.
    All,
    /// None.
    None,
    /// These targets.
    Targets(Vec<String>),
}

/// A character's face definition.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FaceDef {
    /// Viseme map, or `None` for the character's built-in (`viseme_*`, else ARKit).
    pub visemes: Option<VisemeMap>,
    /// Named expressions.
    pub expressions: Vec<Expression>,
    /// How fast an expression's weight follows its target, weight per second (> 0).
    pub expression_speed: f32,
    /// Blinking.
    pub blink: BlinkDef,
    /// Gaze.
    pub look: LookDef,
    /// Final clamping to [0, 1].
    pub clamp: Clamp,
}

/// The built-in ARKit expressions (name: targets at full strength):
///
/// | expression | targets |
/// |---|---|
/// | smile | mouthSmileLeft/Right .8, cheekSquintLeft/Right .4, eyeSquintLeft/Right .2 |
/// | frown | mouthFrownLeft/Right .7, browDownLeft/Right .4 |
/// | surprise | browInnerUp .8, browOuterUpLeft/Right .7, eyeWideLeft/Right .6, jawOpen .25 |
/// | angry | browDownLeft/Right .8, noseSneerLeft/Right .4, mouthPressLeft/Right .4 |
/// | sad | browInnerUp .6, mouthFrownLeft/Right .5, mouthLowerDownLeft/Right .2 |
/// | thinking | browDownLeft .4, browOuterUpRight .4, mouthPressLeft/Right .3, mouthLeft .2 |
/// | listening | browInnerUp .25, eyeWideLeft/Right .15 |
pub const ARKIT_EXPRESSIONS: [(&str, &[(&str, f32)]); 7] = [
    (
        "smile",
        &[
            ("mouthSmileLeft", 0.8),
            ("mouthSmileRight", 0.8),
            ("cheekSquintLeft", 0.4),
            ("cheekSquintRight", 0.4),
            ("eyeSquintLeft", 0.2),
            ("eyeSquintRight", 0.2),
        ],
    ),
    (
        "frown",
        &[
            ("mouthFrownLeft", 0.7),
            ("mouthFrownRight", 0.7),
            ("browDownLeft", 0.4),
            ("browDownRight", 0.4),
        ],
    ),
    (
        "surprise",
        &[
            ("browInnerUp", 0.8),
            ("browOuterUpLeft", 0.7),
            ("browOuterUpRight", 0.7),
            ("eyeWideLeft", 0.6),
            ("eyeWideRight", 0.6),
            ("jawOpen", 0.25),
        ],
    ),
    (
        "angry",
        &[
            ("browDownLeft", 0.8),
            ("browDownRight", 0.8),
            ("noseSneerLeft", 0.4),
            ("noseSneerRight", 0.4),
            ("mouthPressLeft", 0.4),
            ("mouthPressRight", 0.4),
        ],
    ),
    (
        "sad",
        &[
            ("browInnerUp", 0.6),
            ("mouthFrownLeft", 0.5),
            ("mouthFrownRight", 0.5),
            ("mouthLowerDownLeft", 0.2),
            ("mouthLowerDownRight", 0.2),
        ],
    ),
    (
        "thinking",
        &[
            ("browDownLeft", 0.4),
            ("browOuterUpRight", 0.4),
            ("mouthPressLeft", 0.3),
            ("mouthPressRight", 0.3),
            ("mouthLeft", 0.2),
        ],
    ),
    (
        "listening",
        &[
            ("browInnerUp", 0.25),
            ("eyeWideLeft", 0.15),
            ("eyeWideRight", 0.15),
        ],
    ),
];

impl FaceDef {
    /// The built-in definition for ARKit rigs: the expressions above, blink on `eyeBlinkLeft/Right`
    /// (0.2 s, a 40 % closing phase, seed 1, intervals from the avatar state), gaze with the
    /// [`LookDef`] defaults, the built-in viseme map, clamping of driven targets.
    pub fn arkit_default() -> Self {
        FaceDef {
            visemes: None,
            expressions: ARKIT_EXPRESSIONS
                .iter()
                .map(|(n, t)| Expression {
                    name: (*n).into(),
                    targets: t.iter().map(|(a, w)| ((*a).into(), *w)).collect(),
                })
                .collect(),
            expression_speed: 4.0,
            blink: BlinkDef {
                targets: vec![("eyeBlinkLeft".into(), 1.0), ("eyeBlinkRight".into(), 1.0)],
                duration: 0.2,
                close_fraction: 0.4,
                seed: 1,
                interval: None,
            },
            look: LookDef::default(),
            clamp: Clamp::Driven,
        }
    }

    /// The built-in definition for a VRM avatar ([`crate::vrm`]): the built-in expression names
    /// on its preset expressions, blink on `blink` (else `blinkLeft` + `blinkRight`), gaze left
    /// to the VRM's lookAt (the runtime feeds it the look-at point; [`LookMode::Morphs`] here so
    /// the controller turns no eye itself), the VRM viseme map ([`crate::speech::VisemeMap::vrm`]
    /// through the speech layer), clamping of driven expressions:
    ///
    /// | expression | VRM expressions |
    /// |---|---|
    /// | smile | happy 1 |
    /// | frown | sad .6, angry .2 |
    /// | surprise | surprised 1 |
    /// | angry | angry 1 |
    /// | sad | sad 1 |
    /// | thinking | angry .25 |
    /// | listening | relaxed .3 |
    pub fn vrm_default(vrm: &crate::vrm::Vrm) -> Self {
        let table: [(&str, &[(&str, f32)]); 7] = [
            ("smile", &[("happy", 1.0)]),
            ("frown", &[("sad", 0.6), ("angry", 0.2)]),
            ("surprise", &[("surprised", 1.0)]),
            ("angry", &[("angry", 1.0)]),
            ("sad", &[("sad", 1.0)]),
            ("thinking", &[("angry", 0.25)]),
            ("listening", &[("relaxed", 0.3)]),
        ];
        let mut def = Self::arkit_default();
        def.expressions = table
            .iter()
            .map(|(n, t)| Expression {
                name: (*n).into(),
                targets: t.iter().map(|(a, w)| ((*a).into(), *w)).collect(),
            })
            .collect();
        def.blink.targets = if vrm.expression("blink").is_some() {
            vec![("blink".into(), 1.0)]
        } else {
            vec![("blinkLeft".into(), 1.0), ("blinkRight".into(), 1.0)]
        };
        def.look.mode = LookMode::Morphs;
        def
    }

    /// [`FaceDef::vrm_default`] for a VRM avatar, else [`FaceDef::arkit_default`].
    pub fn for_character(character: &crate::rig::Character) -> Self {
        match &character.vrm {
            Some(v) => Self::vrm_default(v),
            None => Self::arkit_default(),
        }
    }

    /// Parse a `mien-face` file (docs/schemas/face.schema.json). Sections it omits take the
    /// [`FaceDef::arkit_default`] values. Strict: unknown keys anywhere, unknown viseme names,
    /// non-finite numbers, weights outside ±2, and out-of-range timing or limits are refused.
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the JSON pointer of the first problem.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let raw: FaceFile = crate::io::read::json_strict(text, file)?;
        raw.resolve(file)
    }
}

fn weight_list(file: &str, base: &str, m: BTreeMap<String, f64>) -> Result<Vec<(String, f32)>> {
    m.into_iter()
        .map(|(t, w)| {
            if w.is_finite() && w.abs() <= 2.0 {
                Ok((t, w as f32))
            } else {
                Err(Error::format(
                    file,
                    format!("{base}/{t}"),
                    format!("{w} is not a weight in [-2, 2]"),
                ))
            }
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaceFile {
    format: String,
    version: u64,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    visemes: Option<BTreeMap<String, BTreeMap<String, f64>>>,
    #[serde(default)]
    expressions: Option<BTreeMap<String, BTreeMap<String, f64>>>,
    #[serde(default)]
    expression_speed: Option<f64>,
    #[serde(default)]
    blink: Option<BlinkFile>,
    #[serde(default)]
    look: Option<LookFile>,
    #[serde(default)]
    clamp: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlinkFile {
    #[serde(default)]
    targets: Option<BTreeMap<String, f64>>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    close_fraction: Option<f64>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    interval: Option<[f64; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LookFile {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    joints: Option<[String; 2]>,
    #[serde(default)]
    centers: Option<[[f32; 3]; 2]>,
    #[serde(default)]
    forward: Option<[f32; 3]>,
    #[serde(default)]
    up: Option<[f32; 3]>,
    #[serde(default)]
    yaw_limit_deg: Option<f32>,
    #[serde(default)]
    pitch_limit_deg: Option<f32>,
    #[serde(default)]
    max_speed_deg: Option<f32>,
    #[serde(default)]
    degrees_per_unit: Option<f32>,
}

impl FaceFile {
    fn resolve(self, file: &str) -> Result<FaceDef> {
        if self.format != "mien-face" {
            return Err(Error::format(file, "/format", "must be \"mien-face\""));
        }
        if self.version != 1 {
            return Err(Error::format(file, "/version", "must be 1"));
        }
        let mut def = FaceDef::arkit_default();
        if let Some(v) = self.visemes {
            let mut shapes = vec![Vec::new(); VISEME_COUNT];
            for (name, targets) in v {
                let vis = Viseme::from_name(&name).ok_or_else(|| {
                    Error::format(
                        file,
                        format!("/visemes/{name}"),
                        format!("not a viseme (one of {})", VISEME_NAMES.join(" ")),
                    )
                })?;
                shapes[vis.index()] = weight_list(file, &format!("/visemes/{name}"), targets)?;
            }
            def.visemes = Some(VisemeMap {
                kind: VisemeMapKind::File,
                shapes,
            });
        }
        if let Some(e) = self.expressions {
            def.expressions = e
                .into_iter()
                .map(|(name, t)| {
                    Ok(Expression {
                        targets: weight_list(file, &format!("/expressions/{name}"), t)?,
                        name,
                    })
                })
                .collect::<Result<_>>()?;
        }
        if let Some(s) = self.expression_speed {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::format(
                    file,
                    "/expression_speed",
                    format!("{s} is not a positive speed (weight per second)"),
                ));
            }
            def.expression_speed = s as f32;
        }
        if let Some(b) = self.blink {
            if let Some(t) = b.targets {
                def.blink.targets = weight_list(file, "/blink/targets", t)?;
            }
            if let Some(d) = b.duration {
                if !(d.is_finite() && d > 0.0 && d <= 2.0) {
                    return Err(Error::format(
                        file,
                        "/blink/duration",
                        format!("{d} s is not in (0, 2]"),
                    ));
                }
                def.blink.duration = d;
            }
            if let Some(c) = b.close_fraction {
                if !(c > 0.0 && c < 1.0) {
                    return Err(Error::format(
                        file,
                        "/blink/close_fraction",
                        format!("{c} is not in (0, 1)"),
                    ));
                }
                def.blink.close_fraction = c;
            }
            if let Some(s) = b.seed {
                def.blink.seed = s;
            }
            if let Some([lo, hi]) = b.interval {
                if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi) {
                    return Err(Error::format(
                        file,
                        "/blink/interval",
                        format!("[{lo}, {hi}] is not a range 0 < min ≤ max"),
                    ));
                }
                def.blink.interval = Some((lo, hi));
            }
        }
        if let Some(l) = self.look {
            let d = &mut def.look;
            if let Some(m) = l.mode {
                d.mode = match m.as_str() {
                    "auto" => LookMode::Auto,
                    "joints" => LookMode::Joints,
                    "morphs" => LookMode::Morphs,
                    other => {
                        return Err(Error::format(
                            file,
                            "/look/mode",
                            format!("`{other}` is not auto, joints or morphs"),
                        ));
                    }
                };
            }
            d.joints = l.joints.map(|[a, b]| (a, b));
            d.centers = l.centers.map(|[a, b]| (a, b));
            let unit = |v: [f32; 3], what: &str| -> Result<[f32; 3]> {
                let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                if n.is_finite() && n > 0.0 {
                    Ok(v.map(|x| x / n))
                } else {
                    Err(Error::format(
                        file,
                        format!("/look/{what}"),
                        "must be a non-zero finite axis",
                    ))
                }
            };
            if let Some(f) = l.forward {
                d.forward = Some(unit(f, "forward")?);
            }
            if let Some(u) = l.up {
                d.up = Some(unit(u, "up")?);
            }
            let deg = |v: Option<f32>, what: &str, max: f32, out: &mut f32| -> Result<()> {
                if let Some(x) = v {
                    if !(x.is_finite() && x > 0.0 && x <= max) {
                        return Err(Error::format(
                            file,
                            format!("/look/{what}"),
                            format!("{x}° is not in (0, {max}]"),
                        ));
                    }
                    *out = x.to_radians();
                }
                Ok(())
            };
            deg(l.yaw_limit_deg, "yaw_limit_deg", 90.0, &mut d.yaw_limit)?;
            deg(
                l.pitch_limit_deg,
                "pitch_limit_deg",
                90.0,
                &mut d.pitch_limit,
            )?;
            deg(l.max_speed_deg, "max_speed_deg", 5000.0, &mut d.max_speed)?;
            deg(
                l.degrees_per_unit,
                "degrees_per_unit",
                90.0,
                &mut d.radians_per_unit,
            )?;
        }
        if let Some(c) = self.clamp {
            def.clamp = match &c {
                serde_json::Value::String(s) if s == "driven" => Clamp::Driven,
                serde_json::Value::String(s) if s == "all" => Clamp::All,
                serde_json::Value::String(s) if s == "none" => Clamp::None,
                serde_json::Value::Array(a) if a.iter().all(|x| x.is_string()) => Clamp::Targets(
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect(),
                ),
                _ => {
                    return Err(Error::format(
                        file,
                        "/clamp",
                        "must be \"driven\", \"all\", \"none\" or a list of target names",
                    ));
                }
            };
        }
        Ok(def)
    }
}
