//! The character file (`mien-character` JSON, `docs/schemas/character.schema.json`; seed 003 "The
//! character"): a model and the parts that make it a whole character — a face, foot placement,
//! its spring bones, clips borrowed from other skeletons (retargeted), and locomotion (an idle and
//! a walk blended by speed). Paths are relative to the file.
//!
//! [`CharacterDef::load`] reads the file and everything it names and checks the parts against each
//! other, naming every problem at once (a missing file, a clip its source lacks, a map that does
//! not fit, a face target or a leg the model lacks, a locomotion clip the file does not define).
//! [`LoadedCharacter::apply`] puts the parts on a runtime instance; the instance's update order is
//! seed 003's: clips (locomotion: idle and walk blended by speed, the walk played at 1× below its
//! walk speed and faster above — see [`crate::body`] for why not slower), morph clips, face, the morph limit, foot placement, chains (spring bones), the skin
//! palette. [`crate::Instance::state_hash`] covers pose, weights (face included) and chains.
//!
//! ```json
//! {
//!   "format": "mien-character", "version": 1,
//!   "model": "avatar.glb",
//!   "face": "face.json",
//!   "foot_ik": "auto",
//!   "spring_bones": true,
//!   "clips": {
//!     "walk": { "source": "knight.glb", "clip": "HumanArmature|Walking", "reference": "t-pose" },
//!     "idle": { "source": "rpm_idle.glb" }
//!   },
//!   "locomotion": { "idle": "idle", "walk": "walk", "walk_speed": "auto" }
//! }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mien_core::anim::foot::FootIkDef;
use mien_core::anim::retarget::{Reference, RetargetDef, RetargetOptions};
use mien_core::face::FaceDef;
use mien_core::rig::ClipId;
use serde::Deserialize;

use crate::asset::Asset;
use crate::error::{Error, Result};
use crate::instance::{FootPlacement, InstanceMut};
use crate::retarget::{RetargetRequest, load_source, retarget};

mod problems;
use problems::problem_items;

/// The `format` field of a character file.
pub const FORMAT: &str = "mien-character";
/// The `model` that names the built-in sample head ([`Asset::builtin`]).
pub const BUILTIN_HEAD: &str = "builtin";
/// The `model` that names the built-in body ([`Asset::builtin_body`]).
pub const BUILTIN_BODY: &str = "builtin-body";
/// The groom named `builtin-body` in a character file's `hair.groom`: the built-in body's
/// (`docs/grooms/builtin_body.groom.json`).
pub const BUILTIN_BODY_GROOM: &str = include_str!("../../../docs/grooms/builtin_body.groom.json");
/// The built-in body's character file (`docs/characters/builtin_body.character.json`): what
/// `mien animate` runs with no arguments ([`CharacterDef::builtin_body`]).
pub const BUILTIN_BODY_FILE: &str =
    include_str!("../../../docs/characters/builtin_body.character.json");

/// Largest part file read (a definition, a map, a face), bytes.
const MAX_TEXT: u64 = 1 << 24;

/// A character file as written (module doc).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CharacterDef {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The model: a .glb, .gltf or .vrm path, or [`BUILTIN_HEAD`] / [`BUILTIN_BODY`]; empty when a
    /// `rig` block names the model (its pack or DNA).
    #[serde(default)]
    pub model: String,
    /// A `mien-face` file.
    #[serde(default)]
    pub face: Option<String>,
    /// Foot placement: `"auto"` (legs found by humanoid role), a `mien-foot-ik` file, or the
    /// definition inline.
    #[serde(default)]
    pub foot_ik: Option<serde_json::Value>,
    /// Simulate the model's spring bones (default: when it has them).
    #[serde(default)]
    pub spring_bones: Option<bool>,
    /// Simulated bone chains (`mien-chain` files or inline definitions,
    /// [`mien_core::anim::spring::ChainDef`]), run in the same solver as the spring bones.
    #[serde(default)]
    pub chains: Vec<serde_json::Value>,
    /// Clips by the name the character gives them.
    #[serde(default)]
    pub clips: BTreeMap<String, ClipDef>,
    /// Locomotion.
    #[serde(default)]
    pub locomotion: Option<LocomotionDef>,
    /// Cloth: a `mien-cloth` file or the definition inline ([`mien_core::cloth::ClothDef`]).
    #[serde(default)]
    pub cloth: Option<serde_json::Value>,
    /// Hair.
    #[serde(default)]
    pub hair: Option<HairDef>,
    /// Parts of the model left out of the splats ([`Asset::with_hidden`]): its own hair mesh
    /// under a groom, a ponytail.
    #[serde(default)]
    pub hide: Option<HideDef>,
    /// Bundle: the rig backend and its file ([`crate::bundle`]).
    #[serde(default)]
    pub rig: Option<crate::bundle::RigDef>,
    /// Bundle: the expression space the animation layer sends.
    #[serde(default)]
    pub expression_space: Option<crate::bundle::SpaceDef>,
    /// Bundle: named regions of the rig's output with their meshes, slots and decoders.
    #[serde(default)]
    pub branches: Vec<crate::bundle::BranchDef>,
    /// Bundle: appearance decoders by name.
    #[serde(default)]
    pub decoders: Option<BTreeMap<String, crate::bundle::DecoderDef>>,
    /// Bundle: ARKit-52 onto an orl rig about a rest (seed 000 `arkitToRig`).
    #[serde(default)]
    pub arkit_to_rig: Option<crate::bundle::ArkitToRigDef>,
    /// Bundle: per-pose head anchors (off by default).
    #[serde(default)]
    pub pose_anchors: Option<crate::bundle::PoseAnchorsDef>,
}

/// What a character file hides (`"hide"`, [`Asset::with_hidden`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HideDef {
    /// Mesh nodes (a node's or its mesh's name) whose every vertex is hidden.
    #[serde(default)]
    pub meshes: Vec<String>,
    /// Joints: a vertex whose skin weights on them sum to at least one half is hidden.
    #[serde(default)]
    pub joints: Vec<String>,
}

/// A character's hair: a groom (a `mien-groom` file or inline definition, or a TressFX file),
/// its simulation settings and capsules on bones.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HairDef {
    /// A `mien-groom` file, or the definition inline ([`mien_core::hair::GroomDef`]). Exactly one
    /// of `groom` and `tfx`.
    #[serde(default)]
    pub groom: Option<serde_json::Value>,
    /// A TressFX `.tfx` file as the groom, read with `tfx_options`.
    #[serde(default)]
    pub tfx: Option<String>,
    /// How the `.tfx` becomes a groom.
    #[serde(default)]
    pub tfx_options: Option<mien_core::hair::TfxGroomOptions>,
    /// Simulation settings.
    #[serde(default)]
    pub simulation: mien_core::hair::HairSimDef,
    /// Capsules on bones the guides collide with.
    #[serde(default)]
    pub colliders: Vec<mien_core::anim::spring::CapsuleDef>,
}

/// A definition given as a file path (relative to the character file) or inline: the parsed
/// definition and the name its errors use.
fn file_or_inline<T>(
    v: &serde_json::Value,
    dir: &Path,
    file: &str,
    field: &str,
    parse: impl Fn(&str, &str) -> mien_core::Result<T>,
) -> Result<T> {
    match v {
        serde_json::Value::String(p) => {
            let path = dir.join(p);
            let name = path.display().to_string();
            Ok(parse(&read_text(&path)?, &name)?)
        }
        other => Ok(parse(&other.to_string(), &format!("{file}{field}"))?),
    }
}

/// A clip of the character: one of the model's own, or another skeleton's retargeted.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipDef {
    /// The file holding it (default: the model itself).
    #[serde(default)]
    pub source: Option<String>,
    /// Its name or index there (default: the first clip): a string, or a whole number.
    #[serde(default, deserialize_with = "name_or_index")]
    pub clip: Option<String>,
    /// A `mien-retarget` map (default: the automatic map).
    #[serde(default)]
    pub map: Option<String>,
    /// `rest` (default) or `t-pose`.
    #[serde(default)]
    pub reference: Option<String>,
}

/// Locomotion: an idle and a walk blended by speed.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LocomotionDef<S = String> {
    /// The idle clip (a key of `clips`).
    pub idle: S,
    /// The walk clip (a key of `clips`).
    pub walk: S,
    /// The speed the walk clip is made for, m/s (> 0): at it the walk plays at 1×; or `"auto"`,
    /// measured from the clip's stance feet ([`mien_core::anim::gait::stride_speed`]).
    pub walk_speed: WalkSpeed,
}

/// A locomotion's walk speed: given, or measured from the walk clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WalkSpeed {
    /// m/s, in (0, 100].
    Given(f64),
    /// `"auto"`.
    Measured(AutoWord),
}

/// The word `auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AutoWord {
    /// `"auto"`.
    Auto,
}

impl<'de> Deserialize<'de> for WalkSpeed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => n
                .as_f64()
                .map(WalkSpeed::Given)
                .ok_or_else(|| serde::de::Error::custom(format!("{n} is not a speed"))),
            serde_json::Value::String(s) if s == "auto" => Ok(WalkSpeed::Measured(AutoWord::Auto)),
            v => Err(serde::de::Error::custom(format!(
                "{v} is neither a speed in m/s nor \"auto\""
            ))),
        }
    }
}

/// A clip named or numbered: a string, or a whole number read as its decimal index.
fn name_or_index<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s)),
        Some(serde_json::Value::Number(n)) if n.as_u64().is_some() => Ok(Some(n.to_string())),
        Some(v) => Err(serde::de::Error::custom(format!(
            "{v} is neither a clip name nor a clip index (a whole number)"
        ))),
    }
}

/// A character file loaded and checked.
#[derive(Clone, Debug)]
pub struct LoadedCharacter {
    /// The model with the character's clips appended (named by the file's keys).
    pub asset: Asset,
    /// The clips by name.
    pub clips: BTreeMap<String, ClipId>,
    /// The face definition and its file.
    pub face: Option<(FaceDef, String)>,
    /// Foot placement.
    pub foot: FootPlacement,
    /// The model's spring bones on.
    pub spring_bones: bool,
    /// The springs the instance simulates: the model's (when on) and the file's chains, merged.
    pub springs: Option<mien_core::anim::spring::SpringBones>,
    /// Locomotion, resolved.
    pub locomotion: Option<Locomotion>,
    /// Each retargeted clip's report, by name.
    pub retarget: BTreeMap<String, crate::retarget::RetargetReport>,
    /// The bundle, when the file has bundle blocks (branches, decoders): its lift is
    /// [`LoadedCharacter::lift_options`].
    pub bundle: Option<std::sync::Arc<crate::bundle::Bundle>>,
}

/// Resolved locomotion ([`LocomotionDef`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Locomotion {
    /// The idle clip.
    pub idle: ClipId,
    /// The walk clip.
    pub walk: ClipId,
    /// m/s.
    pub walk_speed: f64,
    /// The walk clip's own ground speed as measured from its stance feet, m/s, when it could be
    /// ([`mien_core::anim::gait::stride_speed`]).
    pub stride_speed: Option<f64>,
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = mien_core::io::read::read_file_capped(path, MAX_TEXT)?;
    String::from_utf8(bytes)
        .map_err(|_| Error::invalid(path.display().to_string(), "not UTF-8 text"))
}

impl CharacterDef {
    /// Parse a character file's text (strict: unknown keys refused, naming the JSON pointer).
    ///
    /// # Errors
    /// [`Error::Core`]-wrapped [`mien_core::Error::Format`] naming `file` and the pointer.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let def: CharacterDef = mien_core::io::read::json_strict(text, file)?;
        Ok(def)
    }

    /// The built-in body with its parts ([`BUILTIN_BODY_FILE`]): locomotion (its own idle and
    /// walk), foot placement by humanoid role, its ponytail's spring bones (the ponytail itself
    /// hidden under the groom), a generated 285-vertex cape and the 320-guide, 11,200-strand
    /// groom (`docs/grooms/builtin_body.groom.json`) with their colliders.
    ///
    /// # Errors
    /// None expected (the file is part of mien and loads in the tests).
    pub fn builtin_body() -> Result<LoadedCharacter> {
        let file = "<built-in body character file>";
        Self::from_json(BUILTIN_BODY_FILE, file)?.build_with(
            Path::new(""),
            file,
            &crate::bundle::BundleOptions::default(),
        )
    }

    /// Read `path` and everything it names, and check the parts against each other (module doc).
    ///
    /// # Errors
    /// Every problem at once (one [`Error::Invalid`] listing them), each naming the field and
    /// the file.
    pub fn load(path: impl AsRef<Path>) -> Result<LoadedCharacter> {
        Self::load_with(path, &crate::bundle::BundleOptions::default())
    }

    /// [`CharacterDef::load`] with the bundle's options (fp16 decoders, decoder sessions, pose
    /// anchors).
    ///
    /// # Errors
    /// As [`CharacterDef::load`].
    pub fn load_with(
        path: impl AsRef<Path>,
        options: &crate::bundle::BundleOptions,
    ) -> Result<LoadedCharacter> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let def = Self::from_json(&read_text(path)?, &file)?;
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        def.build_with(&dir, &file, options)
    }

    /// `a` with the hair `h` grown on it.
    fn hair_on(&self, h: &HairDef, a: &Asset, dir: &Path, file: &str) -> Result<Asset> {
        let groom = match (&h.groom, &h.tfx, &h.tfx_options) {
            (Some(serde_json::Value::String(b)), None, None) if b == BUILTIN_BODY => {
                mien_core::hair::GroomDef::from_json(BUILTIN_BODY_GROOM, "<built-in body groom>")?
                    .build()?
            }
            (Some(g), None, None) => file_or_inline(
                g,
                dir,
                file,
                "#/hair/groom",
                mien_core::hair::GroomDef::from_json,
            )?
            .build()?,
            (None, Some(t), Some(o)) => {
                let tfx = mien_core::hair::read_tfx(&dir.join(t))?;
                mien_core::hair::Groom::from_tfx(&tfx, o)?
            }
            (None, Some(_), None) => {
                return Err(Error::invalid(
                    "/hair/tfx_options",
                    "a TressFX groom needs its options (head_bone, segments, children_per_guide, scale, origin, clump, thickness, colour, seed)",
                ));
            }
            _ => {
                return Err(Error::invalid(
                    "/hair",
                    "give exactly one of `groom` (a mien-groom file or definition) and `tfx` (with `tfx_options`)",
                ));
            }
        };
        a.with_hair(groom, h.simulation.options(), &h.colliders, "/hair")
            .map_err(|e| match e {
                // A TressFX groom's head bone is given in its options.
                Error::Invalid { what, reason }
                    if h.tfx.is_some() && what == "/hair/groom/head_bone" =>
                {
                    Error::invalid("/hair/tfx_options/head_bone", reason)
                }
                // The simulation's options are the file's `/hair/simulation` block.
                Error::Core(mien_core::Error::Invalid { what, reason })
                    if what.starts_with("hair simulation ") && what != "hair simulation guides" =>
                {
                    Error::invalid(
                        format!("/hair/simulation/{}", &what["hair simulation ".len()..]),
                        reason,
                    )
                }
                other => other,
            })
    }

    fn build_with(
        &self,
        dir: &Path,
        file: &str,
        options: &crate::bundle::BundleOptions,
    ) -> Result<LoadedCharacter> {
        let mut problems: Vec<String> = Vec::new();
        if self.format != FORMAT {
            problems.push(format!("/format: `{}` is not `{FORMAT}`", self.format));
        }
        if self.version != 1 {
            problems.push(format!("/version: {} (mien reads 1)", self.version));
        }
        let at = |p: &str| dir.join(p);
        // The model (or the rig block's pack or DNA), then the bundle blocks checked against it.
        let (model, bundle) = crate::bundle::model::load(self, dir, file, options, &mut problems);
        let mut asset = model;
        // Cloth before the clips: a generated cape adds a node to the character.
        if let (Some(c), Some(a)) = (&self.cloth, &asset) {
            match file_or_inline(
                c,
                dir,
                file,
                "#/cloth",
                mien_core::cloth::ClothDef::from_json,
            )
            .and_then(|d| {
                let name = match c {
                    serde_json::Value::String(p) => at(p).display().to_string(),
                    _ => format!("{file}#/cloth"),
                };
                a.with_cloth(&d, &name)
            }) {
                Ok(with) => asset = Some(with),
                Err(e) => problems.extend(problem_items("/cloth", file, &e)),
            }
        }
        if let (Some(h), Some(a)) = (&self.hair, &asset) {
            match self.hair_on(h, a, dir, file) {
                Ok(with) => asset = Some(with),
                Err(e) => problems.extend(problem_items("/hair", file, &e)),
            }
        }
        if let (Some(h), Some(a)) = (&self.hide, &asset) {
            match a.with_hidden(&h.meshes, &h.joints, "/hide") {
                Ok(with) => asset = Some(with),
                Err(e) => problems.extend(problem_items("/hide", file, &e)),
            }
        }
        let mut clips = BTreeMap::new();
        let mut reports = BTreeMap::new();
        for (name, c) in &self.clips {
            let Some(a) = &asset else { break };
            let field = format!("/clips/{name}");
            let reference = match c.reference.as_deref() {
                None | Some("rest") => Reference::Rest,
                Some("t-pose") => Reference::TPose,
                Some(other) => {
                    problems.push(format!(
                        "{field}/reference: `{other}` is not rest or t-pose"
                    ));
                    continue;
                }
            };
            match &c.source {
                None => match a.character().find_clip(c.clip.as_deref().unwrap_or("0")) {
                    Ok(id) => {
                        clips.insert(name.clone(), id);
                    }
                    Err(e) => problems.push(format!("{field}/clip: {e}")),
                },
                Some(src) => {
                    let map = match &c.map {
                        Some(m) => match read_text(&at(m)).and_then(|t| {
                            Ok(RetargetDef::from_json(&t, &at(m).display().to_string())?)
                        }) {
                            Ok(d) => Some(d),
                            Err(e) => {
                                problems.push(format!("{field}/map: {}", e.chain_text()));
                                continue;
                            }
                        },
                        None => None,
                    };
                    let source = match load_source(at(src)) {
                        Ok(s) => s,
                        Err(e) => {
                            problems.push(format!("{field}/source: {}", e.chain_text()));
                            continue;
                        }
                    };
                    let req = RetargetRequest {
                        clip: c.clip.clone(),
                        map,
                        options: RetargetOptions {
                            source_reference: reference,
                            target_reference: reference,
                            strict: false,
                        },
                        fps: 60.0,
                        name: Some(name.clone()),
                    };
                    match retarget(&source, a, &req) {
                        Ok(r) => {
                            clips.insert(name.clone(), r.clip);
                            reports.insert(name.clone(), r.report.clone());
                            asset = Some(r.asset);
                        }
                        Err(e) => problems.push(format!("{field}: {}", e.chain_text())),
                    }
                }
            }
        }
        let face = match (&self.face, &asset) {
            (Some(f), Some(a)) => match read_text(&at(f)).and_then(|t| {
                let name = at(f).display().to_string();
                let d = FaceDef::from_json(&t, &name)?;
                // The face controller on this model: refuses targets and eye bones it lacks.
                crate::FaceDriver::new(
                    a.character(),
                    d.clone(),
                    crate::Script::default(),
                    None,
                    0.0,
                    &crate::FaceSources::default(),
                )?;
                Ok((d, name))
            }) {
                Ok(x) => Some(x),
                Err(e) => {
                    problems.push(format!("/face: {}", e.chain_text()));
                    None
                }
            },
            _ => None,
        };
        let foot = match (&self.foot_ik, &asset) {
            (None, _) => FootPlacement::Off,
            (Some(v), Some(a)) => {
                let def = match v {
                    serde_json::Value::String(s) if s == "auto" => {
                        FootIkDef::humanoid(a.character()).map_err(Error::from)
                    }
                    serde_json::Value::String(p) => read_text(&at(p))
                        .and_then(|t| Ok(FootIkDef::from_json(&t, &at(p).display().to_string())?)),
                    other => Ok(FootIkDef::from_json(
                        &other.to_string(),
                        &format!("{file} /foot_ik"),
                    )?),
                };
                match def.and_then(|d| {
                    mien_core::anim::foot::FootPlacer::new(&d, a.character())?;
                    Ok(d)
                }) {
                    Ok(d) => FootPlacement::Def(d),
                    Err(e) => {
                        problems.push(format!("/foot_ik: {}", e.chain_text()));
                        FootPlacement::Off
                    }
                }
            }
            (Some(_), None) => FootPlacement::Off,
        };
        let has_springs = asset
            .as_ref()
            .is_some_and(|a| a.character().spring_bones.is_some());
        let spring_bones = match self.spring_bones {
            Some(true) if !has_springs && asset.is_some() => {
                problems.push("/spring_bones: the model has no spring bones".into());
                false
            }
            Some(b) => b,
            None => has_springs,
        };
        let mut chains: Option<mien_core::anim::spring::SpringBones> = None;
        if let Some(a) = &asset {
            for (i, c) in self.chains.iter().enumerate() {
                let field = format!("/chains/{i}");
                let got = match c {
                    serde_json::Value::String(p) => {
                        let name = at(p).display().to_string();
                        read_text(&at(p)).and_then(|t| {
                            let d = mien_core::anim::spring::ChainDef::from_json(&t, &name)?;
                            Ok(d.to_spring_bones(a.character(), &name)?)
                        })
                    }
                    other => {
                        let name = format!("{file} {field}");
                        mien_core::anim::spring::ChainDef::from_json(&other.to_string(), &name)
                            .and_then(|d| d.to_spring_bones(a.character(), &name))
                            .map_err(Error::from)
                    }
                };
                match got {
                    Ok(sb) => {
                        chains = Some(match chains.take() {
                            Some(prev) => prev.merged(&sb),
                            None => sb,
                        });
                    }
                    Err(e) => problems.push(format!("{field}: {}", e.chain_text())),
                }
            }
        }
        let locomotion = match &self.locomotion {
            None => None,
            Some(l) => {
                let defined: Vec<&String> = self.clips.keys().collect();
                let mut get = |field: &str, n: &str| match clips.get(n) {
                    Some(id) => Some(*id),
                    None if defined.iter().any(|d| *d == n) => {
                        problems.push(format!(
                            "/locomotion/{field}: `{n}` could not be loaded (see /clips/{n})"
                        ));
                        None
                    }
                    None => {
                        problems.push(format!(
                            "/locomotion/{field}: `{n}` is not a clip of this file (it has {})",
                            if clips.is_empty() {
                                "none".to_string()
                            } else {
                                clips.keys().cloned().collect::<Vec<_>>().join(", ")
                            }
                        ));
                        None
                    }
                };
                let (idle, walk) = (get("idle", &l.idle), get("walk", &l.walk));
                // The speed the walk is made for, measured on the feet found by humanoid role.
                let stride = walk.and_then(|w| {
                    let ch = asset.as_ref()?.character();
                    let feet = mien_core::anim::foot::FootIkDef::humanoid(ch).ok()?;
                    let ankles: Vec<_> = feet
                        .legs
                        .iter()
                        .filter_map(|g| {
                            ch.nodes
                                .iter()
                                .position(|n| n.name.as_deref() == Some(g.ankle.as_str()))
                                .map(|i| mien_core::rig::NodeId(i as u32))
                        })
                        .collect();
                    let forward =
                        mien_core::anim::retarget::facing_of(ch).unwrap_or(glam::DVec3::Z);
                    mien_core::anim::gait::stride_speed(ch, w, &ankles, forward)
                });
                let walk_speed = match l.walk_speed {
                    WalkSpeed::Given(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Some(v),
                    WalkSpeed::Given(v) => {
                        problems.push(format!(
                            "/locomotion/walk_speed: {v} is not a speed in (0, 100] m/s"
                        ));
                        None
                    }
                    WalkSpeed::Measured(_) => match stride {
                        Some(v) if v > 0.01 => Some(v.min(100.0)),
                        _ if walk.is_none() => None,
                        _ => {
                            problems.push(
                                "/locomotion/walk_speed: `auto` measures the walk clip's stance feet, and this clip's feet do not walk (no stance moving backward found; give the speed in m/s)".into(),
                            );
                            None
                        }
                    },
                };
                match (idle, walk, walk_speed) {
                    (Some(idle), Some(walk), Some(walk_speed)) => Some(Locomotion {
                        idle,
                        walk,
                        walk_speed,
                        stride_speed: stride,
                    }),
                    _ => None,
                }
            }
        };
        if !problems.is_empty() {
            let n = problems.len();
            return Err(Error::invalid(
                file,
                format!(
                    "{n} problem{}:\n  - {}",
                    if n == 1 { "" } else { "s" },
                    problems.join("\n  - ")
                ),
            ));
        }
        let own = asset
            .as_ref()
            .and_then(|a| a.character().spring_bones.clone())
            .filter(|_| spring_bones);
        let springs = match (own, chains) {
            (Some(a), Some(b)) => Some(a.merged(&b)),
            (a, b) => a.or(b),
        };
        Ok(LoadedCharacter {
            springs,
            asset: asset.unwrap_or_else(Asset::builtin),
            clips,
            face,
            foot,
            spring_bones,
            locomotion,
            retarget: reports,
            bundle,
        })
    }
}

impl LoadedCharacter {
    /// The lift this character asks for: its bundle's branches ([`crate::LiftKind::Bundle`]), else
    /// the default lift.
    pub fn lift_options(&self) -> crate::LiftOptions {
        match &self.bundle {
            Some(b) if !b.branches.is_empty() => crate::LiftOptions {
                kind: crate::LiftKind::Bundle(std::sync::Arc::clone(b)),
                ..Default::default()
            },
            _ => crate::LiftOptions::default(),
        }
    }

    /// Put the parts on an instance of a runtime made from [`LoadedCharacter::asset`]: the face
    /// driver (when the file names a face), foot placement, spring bones, locomotion at speed 0
    /// (the idle; [`InstanceMut::set_speed`] walks).
    ///
    /// # Errors
    /// An instance of another asset; the parts' own refusals.
    pub fn apply(&self, inst: &mut InstanceMut<'_>) -> Result<()> {
        if let Some((def, name)) = &self.face {
            let f = crate::FaceDriver::new(
                inst.asset.character(),
                def.clone(),
                crate::Script::default(),
                None,
                0.0,
                &crate::FaceSources {
                    face: Some(name.clone()),
                    script: None,
                    builtin_script: false,
                },
            )?;
            inst.set_face(Some(f))?;
        }
        inst.set_foot_placement(self.foot.clone())?;
        inst.set_springs(self.springs.as_ref())?;
        if let Some(l) = self.locomotion {
            inst.set_locomotion(Some(l))?;
        }
        Ok(())
    }
}
