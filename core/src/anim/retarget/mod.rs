//! Retargeting: a clip made for one skeleton played by another.
//!
//! Source: seed 003 "Retargeting" (the definition, the rest-pose correction, translate bones and
//! the hip-height ratio, the limits, the one-to-one map and its report), and the reference poses of
//! production retargeters (a pose per skeleton the transfer is relative to; [`Reference`]).
//!
//! **Method.** Every skeleton is read in glTF world space (+Y up, metres; the nodes above the
//! skeleton — an `Armature`, a `Z_UP` node — included). For each mapped bone `s → t`, with `Rₛ`,
//! `Rₜ` the world rotations of the two reference poses and `Wₛ` the source's animated world
//! rotation:
//!
//! ```text
//!   Δ  = M · (Wₛ · Rₛ⁻¹) · M⁻¹        the source bone's world rotation relative to its reference
//!   Wₜ = Δ · Rₜ                       applied to the target bone's own reference orientation
//!   local rotation of t = (world rotation of t's parent, as posed)⁻¹ · Wₜ
//! ```
//!
//! so the source at its reference gives the target its reference exactly, and T-pose and A-pose
//! skeletons agree on "arm raised 60°" once both references are T-poses. `M` is the model rotation:
//! [`RetargetDef::model_rotation`], else the turn about +Y that takes the source's facing onto the
//! target's (VRM 0.x avatars face −Z, VRM 1.0 and VRM Animation +Z by their specs; any other
//! skeleton's facing is found from its left and right upper legs or arms, and a turn within 10° of a
//! multiple of 90° is snapped to it). Bone lengths never change: a target bone keeps its rest translation, except a
//! translate bone (the hips), placed at
//!
//! ```text
//!   pₜ = Pₜ + k · M · (pₛ − Pₛ)        P: the bone's world position in the reference pose
//! ```
//!
//! with `k` the hip-height ratio (the target translate bone's height above its skeleton's lowest
//! node over the source's, both in the reference poses) or [`RetargetDef::scale`]; `k` scales root
//! motion alike. Target bones the map leaves out keep their rest local transform (they follow
//! their parents); all are listed in the [`RetargetReport`].
//!
//! **Limits.** A clip is baked at a rate in [1, [`MAX_RETARGET_FPS`]] keys per second into at most
//! [`MAX_RETARGET_POSES`] poses (`⌈duration · fps⌉ + 1`); anything else is refused with the numbers
//! before anything is allocated.

pub mod names;
mod reference;

use std::collections::{BTreeMap, BTreeSet};

use glam::{DMat4, DQuat, DVec3, Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::anim::clip::{Channel, Clip, Interpolation, Property, Sampler};
use crate::error::{Error, Result};
use crate::rig::{Character, ClipId, NodeId, Pose, Transform};

pub use reference::t_pose;

/// Highest key rate a clip is retargeted at, keys per second (seed 003).
pub const MAX_RETARGET_FPS: f64 = 240.0;
/// Most poses one retargeted clip may hold (seed 003).
pub const MAX_RETARGET_POSES: u64 = 20_000;
/// A key rotation within this angle of the target reference's local rotation is written as that
/// rotation, radians (f32 rounding of the f64 composition stays far below it).
pub const SNAP_RAD: f64 = 1e-6;
/// A translate bone's key within this distance of its reference translation is written as it,
/// metres.
pub const SNAP_M: f64 = 1e-7;
/// The `format` field of a retarget definition.
pub const FORMAT: &str = "mien-retarget";

/// A retarget definition (`mien-retarget` JSON, `docs/schemas/retarget.schema.json`): which
/// source bone drives which target bone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetargetDef {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The bone map, one to one: no source or target named twice.
    pub bones: Vec<BoneMap>,
    /// The translate bones' scale (> 0, ≤ 1000); default the hip-height ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// Source world → target world, a unit quaternion `[x, y, z, w]`; default the turn about +Y
    /// between the two skeletons' facings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_rotation: Option<[f64; 4]>,
}

/// One mapped bone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoneMap {
    /// The source skeleton's node name.
    pub source: String,
    /// The target skeleton's node name.
    pub target: String,
    /// Whether the bone carries translation (the hips; root motion).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub translate: bool,
}

/// The pose a skeleton's transfer is relative to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Reference {
    /// The skeleton's rest (bind-file) pose: a clip at the source's rest leaves the target at its
    /// rest (seed 003).
    #[default]
    Rest,
    /// An automatic T-pose ([`t_pose`]): the arm chains turned level toward each side, the legs
    /// straight down. An A-pose and a T-pose rest of one character then reach the same pose.
    TPose,
    /// A frame of one of the skeleton's own clips, seconds into it.
    ClipFrame(ClipId, f64),
}

impl Reference {
    /// `rest`, `t-pose`, or `clip <i> at <t> s`.
    pub fn name(&self) -> String {
        match self {
            Reference::Rest => "rest".into(),
            Reference::TPose => "t-pose".into(),
            Reference::ClipFrame(c, t) => format!("clip {} at {t} s", c.index()),
        }
    }
}

/// How a [`Retargeter`] is built.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RetargetOptions {
    /// The source skeleton's reference pose.
    pub source_reference: Reference,
    /// The target skeleton's reference pose.
    pub target_reference: Reference,
    /// Refuse any unmapped bone of either skeleton (seed 003 `require_complete`).
    pub strict: bool,
}

/// One mapped bone in a report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MappedBone {
    /// The source node's name.
    pub source: String,
    /// The target node's name.
    pub target: String,
    /// The humanoid role both stand for, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Whether it carries translation.
    pub translate: bool,
}

/// What a [`Retargeter`] mapped and left out (seed 003's report).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RetargetReport {
    /// Mapped bones in target order.
    pub mapped: Vec<MappedBone>,
    /// Target bones no source bone drives (they keep their rest local transform).
    pub unmapped_target: Vec<String>,
    /// Source bones no target bone follows.
    pub unmapped_source: Vec<String>,
    /// The translate bones' scale.
    pub scale: f64,
    /// `definition` or `hip height` (the ratio of the two translate bones' heights).
    pub scale_from: String,
    /// The model rotation `[x, y, z, w]`.
    pub model_rotation: [f64; 4],
    /// Its angle about +Y, degrees, when it is a turn about +Y (else the full angle).
    pub model_rotation_deg: f64,
    /// `definition`, `facing` (found from both skeletons' sides) or `identity` (a skeleton's sides
    /// unknown; noted).
    pub model_rotation_from: String,
    /// The two reference poses.
    pub source_reference: String,
    /// See `source_reference`.
    pub target_reference: String,
    /// Things worth knowing (a side not found, a role claimed twice).
    pub notes: Vec<String>,
}

/// A skeleton as the retargeter reads it: the character's nodes, their humanoid roles, the bones
/// worth reporting.
struct Skel<'a> {
    ch: &'a Character,
    /// Role → node.
    roles: BTreeMap<&'static str, NodeId>,
    /// Skin joints, humanoid nodes and animated nodes, in node order.
    bones: BTreeSet<usize>,
}

impl<'a> Skel<'a> {
    fn new(ch: &'a Character, notes: &mut Vec<String>) -> Self {
        let mut roles: BTreeMap<&'static str, NodeId> = BTreeMap::new();
        let label = &ch.source;
        if let Some(h) = ch.humanoid() {
            for (bone, node) in h {
                roles.entry(bone).or_insert(node);
            }
        } else {
            // By name, parents first (the first bone of a role wins); only skin joints when the
            // file has a skin (a mesh node `EyeLeft` is not the joint `LeftEye`).
            let joints: BTreeSet<usize> = ch
                .skins
                .iter()
                .flat_map(|s| s.joints.iter().map(|j| j.index()))
                .collect();
            for &id in ch.hierarchy.order() {
                if !joints.is_empty() && !joints.contains(&id.index()) {
                    continue;
                }
                let Some(name) = ch.nodes[id.index()].name.as_deref() else {
                    continue;
                };
                if let Some(role) = names::role_of(name) {
                    if let Some(prev) = roles.get(role) {
                        notes.push(format!(
                            "{label}: `{name}` and `{}` both read as `{role}`: the first is used",
                            node_name(ch, *prev)
                        ));
                    } else {
                        roles.insert(role, id);
                    }
                }
            }
        }
        let mut bones = BTreeSet::new();
        for s in &ch.skins {
            bones.extend(s.joints.iter().map(|j| j.index()));
        }
        bones.extend(roles.values().map(|n| n.index()));
        // A VRM Animation's other nodes are expression and lookAt tracks, not bones.
        let clips: &[crate::anim::clip::Clip] = if ch.vrm_animation.is_some() {
            &[]
        } else {
            &ch.clips
        };
        for c in clips {
            for chan in &c.channels {
                if chan.property != Property::Weights {
                    bones.insert(chan.node.index());
                }
            }
        }
        Skel { ch, roles, bones }
    }

    fn role_of(&self, node: NodeId) -> Option<&'static str> {
        self.roles
            .iter()
            .find(|(_, n)| **n == node)
            .map(|(r, _)| *r)
    }

    fn find(&self, name: &str) -> Option<NodeId> {
        self.ch
            .nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name))
            .map(|i| NodeId(i as u32))
    }
}

/// The way a character faces in its rest pose, a horizontal unit vector in model space: a VRM's by
/// its spec (VRM 0.x: −Z; VRM 1.0: +Z), else `left × up` from its left and right upper legs (else
/// upper arms, shoulders, feet) found by humanoid role; `None` when no such pair is found.
/// Locomotion walks a character along it; foot placement bends knees toward it.
pub fn facing_of(ch: &Character) -> Option<DVec3> {
    let skel = Skel::new(ch, &mut Vec::new());
    let w = World::of(ch, &ch.rest_pose().locals);
    facing(&skel, &w)
}

/// A skeleton's humanoid roles and nodes: its VRM / VRM Animation humanoid map, else read from its
/// joint names ([`names`]; only skin joints when it has a skin; the first joint of a role wins).
pub fn roles(ch: &Character) -> Vec<(&'static str, NodeId)> {
    Skel::new(ch, &mut Vec::new()).roles.into_iter().collect()
}

fn node_name(ch: &Character, n: NodeId) -> String {
    ch.nodes[n.index()]
        .name
        .clone()
        .unwrap_or_else(|| format!("node {}", n.index()))
}

impl RetargetDef {
    /// Parse a `mien-retarget` file. Strict: unknown keys, a wrong `format` or `version`, an
    /// empty map, a non-finite or out-of-range scale, a model rotation that is not a unit
    /// quaternion (within 1e-3), a bone named twice on either side are refused.
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the JSON pointer of each problem ([`Error::Many`]
    /// when several).
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let def: RetargetDef = crate::io::read::json_strict(text, file)?;
        def.check(file)?;
        Ok(def)
    }

    /// The definition as `mien-retarget` JSON (pretty, keys in schema order).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The rules of [`RetargetDef::from_json`] on a definition built in code.
    ///
    /// # Errors
    /// As [`RetargetDef::from_json`].
    pub fn check(&self, file: &str) -> Result<()> {
        let mut problems = Vec::new();
        if self.format != FORMAT {
            problems.push(Error::format(
                file,
                "/format",
                format!("`{}` is not `{FORMAT}`", self.format),
            ));
        }
        if self.version != 1 {
            problems.push(Error::format(
                file,
                "/version",
                format!("version {} (mien reads 1)", self.version),
            ));
        }
        if self.bones.is_empty() {
            problems.push(Error::format(file, "/bones", "no bone is mapped"));
        }
        let mut sources = BTreeMap::new();
        let mut targets = BTreeMap::new();
        for (i, b) in self.bones.iter().enumerate() {
            for (side, name, seen) in [
                ("source", &b.source, &mut sources),
                ("target", &b.target, &mut targets),
            ] {
                if name.is_empty() {
                    problems.push(Error::format(
                        file,
                        format!("/bones/{i}/{side}"),
                        "an empty name",
                    ));
                } else if let Some(j) = seen.insert(name.clone(), i) {
                    problems.push(Error::format(
                        file,
                        format!("/bones/{i}/{side}"),
                        format!(
                            "`{name}` is mapped twice (also /bones/{j}): the map is one to one"
                        ),
                    ));
                }
            }
        }
        if let Some(k) = self.scale
            && !(k.is_finite() && k > 0.0 && k <= 1000.0)
        {
            problems.push(Error::format(
                file,
                "/scale",
                format!("{k} is not a scale in (0, 1000]"),
            ));
        }
        if let Some(q) = self.model_rotation {
            let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
            if !(q.iter().all(|c| c.is_finite()) && (n - 1.0).abs() <= 1e-3) {
                problems.push(Error::format(
                    file,
                    "/model_rotation",
                    format!("{q:?} is not a unit quaternion [x, y, z, w] (length {n})"),
                ));
            }
        }
        Error::collect(problems)
    }

    /// The automatic map (seed 003 `RetargetDef::auto`): every humanoid role both skeletons have
    /// (from a VRM / VRM Animation humanoid map, else from bone names: [`names`]), the hips as
    /// the translate bone.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the two skeletons share no role (naming what each has).
    pub fn auto(source: &Character, target: &Character) -> Result<Self> {
        let mut notes = Vec::new();
        let s = Skel::new(source, &mut notes);
        let t = Skel::new(target, &mut notes);
        let mut bones = Vec::new();
        for role in names::ROLES {
            if let (Some(&a), Some(&b)) = (s.roles.get(role), t.roles.get(role)) {
                bones.push(BoneMap {
                    source: node_name(source, a),
                    target: node_name(target, b),
                    translate: *role == "hips",
                });
            }
        }
        if bones.is_empty() {
            let list = |k: &Skel| {
                if k.roles.is_empty() {
                    "no humanoid bone".to_string()
                } else {
                    k.roles.keys().copied().collect::<Vec<_>>().join(", ")
                }
            };
            return Err(Error::Invalid {
                what: format!("retarget {} → {}", source.source, target.source),
                reason: format!(
                    "no humanoid bone found in both skeletons (source: {}; target: {}): write a \
                     mien-retarget map (docs/retarget.md)",
                    list(&s),
                    list(&t)
                ),
            });
        }
        Ok(RetargetDef {
            format: FORMAT.into(),
            version: 1,
            description: Some(format!(
                "automatic map {} → {}",
                source.source, target.source
            )),
            bones,
            scale: None,
            model_rotation: None,
        })
    }
}

/// World rotations and positions of every node of a pose, f64.
#[derive(Clone, Debug, Default)]
pub(crate) struct World {
    pub rot: Vec<DQuat>,
    pub mat: Vec<DMat4>,
}

impl World {
    pub(crate) fn of(ch: &Character, locals: &[Transform]) -> Self {
        let n = ch.nodes.len();
        let mut w = World {
            rot: vec![DQuat::IDENTITY; n],
            mat: vec![DMat4::IDENTITY; n],
        };
        for &id in ch.hierarchy.order() {
            let i = id.index();
            let l = &locals[i];
            let lr = dquat(l.rotation);
            let lm = DMat4::from_scale_rotation_translation(dvec(l.scale), lr, dvec(l.translation));
            (w.rot[i], w.mat[i]) = match ch.nodes[i].parent {
                Some(p) => ((w.rot[p.index()] * lr).normalize(), w.mat[p.index()] * lm),
                None => (lr, lm),
            };
        }
        w
    }

    pub(crate) fn pos(&self, i: usize) -> DVec3 {
        self.mat[i].w_axis.truncate()
    }
}

pub(crate) fn dquat(q: Quat) -> DQuat {
    DQuat::from_xyzw(
        f64::from(q.x),
        f64::from(q.y),
        f64::from(q.z),
        f64::from(q.w),
    )
    .normalize()
}

pub(crate) fn dvec(v: Vec3) -> DVec3 {
    DVec3::new(f64::from(v.x), f64::from(v.y), f64::from(v.z))
}

/// One mapped pair, resolved.
#[derive(Clone, Copy, Debug)]
struct Pair {
    source: usize,
    target: usize,
    translate: bool,
}

/// A source skeleton mapped onto a target skeleton (module doc): poses and clips retargeted.
#[derive(Clone, Debug)]
pub struct Retargeter {
    /// Pairs in target hierarchy order.
    pairs: Vec<Pair>,
    /// Per target node: the index into `pairs`, if mapped.
    target_pair: Vec<Option<usize>>,
    source_ref: World,
    target_ref: World,
    /// The target reference pose's locals: a key within [`SNAP_RAD`] / [`SNAP_M`] of them is
    /// written as them, bit for bit.
    target_ref_locals: Vec<Transform>,
    target_rest: Vec<Transform>,
    target_order: Vec<NodeId>,
    target_parents: Vec<Option<usize>>,
    model: DQuat,
    scale: f64,
    /// Why the scale is unknown (a clip translating a translate bone is refused with this).
    unknown_scale: Option<String>,
    report: RetargetReport,
}

impl Retargeter {
    /// Resolve `def` against the two skeletons and measure the references, the scale and the
    /// model rotation.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming every problem at once ([`Error::Many`]): a bone name neither
    /// skeleton has (with the near names it has), a definition that breaks
    /// [`RetargetDef::check`], a reference clip or time the skeleton lacks, a T-pose reference
    /// of a skeleton whose arms or legs cannot be found, and with [`RetargetOptions::strict`]
    /// every unmapped bone. (A translate bone at no height above its skeleton's lowest joint
    /// leaves the scale unknown: reported, and refused by [`Retargeter::retarget_clip`] only for a
    /// clip that translates it.)
    pub fn new(
        def: &RetargetDef,
        source: &Character,
        target: &Character,
        options: &RetargetOptions,
    ) -> Result<Self> {
        def.check("retarget definition")?;
        let mut notes = Vec::new();
        let mut s = Skel::new(source, &mut notes);
        let mut t = Skel::new(target, &mut notes);
        let mut problems = Vec::new();
        let mut pairs = Vec::new();
        for (i, b) in def.bones.iter().enumerate() {
            // A name the skeleton lacks that reads as a humanoid role the skeleton has stands for
            // that role's bone (a map written with one skeleton's names carries to another);
            // noted, and refused in strict mode.
            let mut by_role = |side: &str, name: &str, skel: &Skel<'_>| {
                skel.find(name).or_else(|| {
                    if options.strict {
                        return None;
                    }
                    // An optional spine bone the skeleton lacks falls to the one below it, as
                    // the VRM humanoid's optional bones do (upperChest → chest → spine).
                    let mut role = names::role_of(name)?;
                    while !skel.roles.contains_key(role) {
                        role = match role {
                            "upperChest" => "chest",
                            "chest" => "spine",
                            _ => return None,
                        };
                    }
                    let n = *skel.roles.get(role)?;
                    notes.push(format!(
                        "bones[{i}].{side} `{name}`: {} has no node of that name; its `{role}` is `{}`",
                        skel.ch.source,
                        node_name(skel.ch, n)
                    ));
                    Some(n)
                })
            };
            let a = by_role("source", &b.source, &s);
            let c = by_role("target", &b.target, &t);
            for (side, name, found, skel) in
                [("source", &b.source, a, &s), ("target", &b.target, c, &t)]
            {
                if found.is_none() {
                    problems.push(Error::Invalid {
                        what: format!("retarget bones[{i}].{side}"),
                        reason: format!(
                            "{} has no node named `{name}`{}",
                            skel.ch.source,
                            near_names(skel.ch, name)
                        ),
                    });
                }
            }
            if let (Some(a), Some(c)) = (a, c) {
                pairs.push(Pair {
                    source: a.index(),
                    target: c.index(),
                    translate: b.translate,
                });
            }
        }
        // Doubtful maps are noted: more than one translate bone, a left bone driving a right one.
        let translates = def.bones.iter().filter(|b| b.translate).count();
        if translates > 1 {
            notes.push(format!(
                "{translates} bones carry translation (translate: true); usually only the hips do"
            ));
        }
        let side = |r: &str| {
            if r.starts_with("left") {
                Some("left")
            } else if r.starts_with("right") {
                Some("right")
            } else {
                None
            }
        };
        for p in &pairs {
            let (a, c) = (NodeId(p.source as u32), NodeId(p.target as u32));
            if let (Some(x), Some(y)) = (s.role_of(a).and_then(side), t.role_of(c).and_then(side))
                && x != y
            {
                notes.push(format!(
                    "`{}` (a {x} bone) drives `{}` (a {y} bone): left and right swapped?",
                    node_name(source, a),
                    node_name(target, c)
                ));
            }
        }
        // A bone mapped to a bone of known role takes that role (a map from a skeleton whose
        // names say nothing, like CesiumMan's, still finds its facing and its T-pose chains).
        for p in &pairs {
            let (a, c) = (NodeId(p.source as u32), NodeId(p.target as u32));
            if let (None, Some(r)) = (s.role_of(a), t.role_of(c)) {
                s.roles.entry(r).or_insert(a);
            }
            if let (Some(r), None) = (s.role_of(a), t.role_of(c)) {
                t.roles.entry(r).or_insert(c);
            }
        }
        let references = [
            ("source", &s, options.source_reference),
            ("target", &t, options.target_reference),
        ];
        let mut worlds = Vec::new();
        let mut ref_locals = Vec::new();
        for (side, skel, r) in references {
            let l = match reference_locals(skel, r) {
                Ok(l) => l,
                Err(e) => {
                    problems.push(Error::Invalid {
                        what: format!("retarget {side} reference ({})", r.name()),
                        reason: e.to_string(),
                    });
                    skel.ch.rest_pose().locals
                }
            };
            worlds.push(World::of(skel.ch, &l));
            ref_locals.push(l);
        }
        let target_ref_locals = ref_locals.pop().unwrap_or_default();
        let target_ref = worlds.pop().unwrap_or_default();
        let source_ref = worlds.pop().unwrap_or_default();

        // The translate bones' scale: the first translate pair's height ratio.
        let mut unknown_scale = None;
        let (scale, scale_from) = match (def.scale, pairs.iter().find(|p| p.translate)) {
            (Some(k), _) => (k, "definition".to_string()),
            (None, None) => (1.0, "none (no translate bone)".to_string()),
            (None, Some(p)) => {
                let hs = height(source, &source_ref, p.source);
                let ht = height(target, &target_ref, p.target);
                if hs > 1e-4 && ht > 1e-4 && (ht / hs).is_finite() {
                    (ht / hs, "hip height".to_string())
                } else {
                    // Only a clip that translates the bone needs the scale: refused there.
                    unknown_scale = Some(format!(
                        "the translate bones stand {hs:.4} m ({}) and {ht:.4} m ({}) above their \
                         skeletons' lowest joints, so the hip-height ratio is unknown: give \
                         `scale` in the definition",
                        node_name(source, NodeId(p.source as u32)),
                        node_name(target, NodeId(p.target as u32))
                    ));
                    (
                        1.0,
                        "unknown (a clip that translates the hips is refused)".to_string(),
                    )
                }
            }
        };

        let (model, model_from) = match def.model_rotation {
            Some([x, y, z, w]) => (DQuat::from_xyzw(x, y, z, w).normalize(), "definition"),
            None => match (facing(&s, &source_ref), facing(&t, &target_ref)) {
                (Some(a), Some(b)) => {
                    let mut ang = b.z.atan2(b.x) - a.z.atan2(a.x);
                    // Characters face along an axis: a measured turn within 10° of a multiple of
                    // 90° is that multiple (asymmetric joints tilt the measurement a little).
                    let quarter = std::f64::consts::FRAC_PI_2;
                    let snapped = (ang / quarter).round() * quarter;
                    if (ang - snapped).abs() <= 10f64.to_radians() {
                        ang = snapped;
                    } else {
                        notes.push(format!(
                            "the skeletons face {:.1}° apart (not along one axis): turned by that",
                            ang.to_degrees()
                        ));
                    }
                    // Turning a onto b about +Y: rotation by -ang (x→z is a negative turn about +Y).
                    (DQuat::from_rotation_y(-ang), "facing")
                }
                (a, b) => {
                    for (side, f, skel) in [("source", a, &s), ("target", b, &t)] {
                        if f.is_none() {
                            notes.push(format!(
                                "{side} {}: no left/right arm or leg roles to find its facing; the model rotation is the identity",
                                skel.ch.source
                            ));
                        }
                    }
                    (DQuat::IDENTITY, "identity")
                }
            },
        };

        let mut target_pair = vec![None; target.nodes.len()];
        let order: Vec<NodeId> = target.hierarchy.order().to_vec();
        let rank: BTreeMap<usize, usize> = order
            .iter()
            .enumerate()
            .map(|(r, n)| (n.index(), r))
            .collect();
        pairs.sort_by_key(|p| rank.get(&p.target).copied().unwrap_or(usize::MAX));
        for (k, p) in pairs.iter().enumerate() {
            target_pair[p.target] = Some(k);
        }
        let mapped_s: BTreeSet<usize> = pairs.iter().map(|p| p.source).collect();
        let unmapped_target: Vec<String> = t
            .bones
            .iter()
            .filter(|i| target_pair[**i].is_none())
            .map(|&i| node_name(target, NodeId(i as u32)))
            .collect();
        let unmapped_source: Vec<String> = s
            .bones
            .iter()
            .filter(|i| !mapped_s.contains(i))
            .map(|&i| node_name(source, NodeId(i as u32)))
            .collect();
        if options.strict {
            for (side, list) in [("target", &unmapped_target), ("source", &unmapped_source)] {
                if !list.is_empty() {
                    problems.push(Error::Invalid {
                        what: format!("retarget (strict) {side}"),
                        reason: format!("unmapped bones: {}", list.join(", ")),
                    });
                }
            }
        }
        Error::collect(problems)?;

        let mapped = pairs
            .iter()
            .map(|p| {
                let rs = s.role_of(NodeId(p.source as u32));
                let rt = t.role_of(NodeId(p.target as u32));
                MappedBone {
                    source: node_name(source, NodeId(p.source as u32)),
                    target: node_name(target, NodeId(p.target as u32)),
                    role: rt.or(rs).map(str::to_string),
                    translate: p.translate,
                }
            })
            .collect();
        let (axis, angle) = model.to_axis_angle();
        let report = RetargetReport {
            mapped,
            unmapped_target,
            unmapped_source,
            scale,
            scale_from,
            model_rotation: [model.x, model.y, model.z, model.w],
            model_rotation_deg: if axis.y < 0.0 { -angle } else { angle }.to_degrees(),
            model_rotation_from: model_from.into(),
            source_reference: options.source_reference.name(),
            target_reference: options.target_reference.name(),
            notes,
        };
        Ok(Retargeter {
            pairs,
            target_pair,
            source_ref,
            target_ref,
            target_ref_locals,
            target_rest: target.rest_pose().locals,
            target_parents: target
                .nodes
                .iter()
                .map(|n| n.parent.map(NodeId::index))
                .collect(),
            target_order: order,
            model,
            scale,
            unknown_scale,
            report,
        })
    }

    /// What was mapped and left out.
    pub fn report(&self) -> &RetargetReport {
        &self.report
    }

    /// The target's local transforms `(N_target,)` for the source's local transforms
    /// `(N_source,)` (module doc). Unmapped target nodes keep their rest transforms.
    ///
    /// # Panics
    /// When `source_locals` is not the source skeleton's node count.
    pub fn retarget_locals(
        &self,
        source: &Character,
        source_locals: &[Transform],
    ) -> Vec<Transform> {
        assert_eq!(source_locals.len(), source.nodes.len(), "source pose size");
        let sw = World::of(source, source_locals);
        let mut out = self.target_rest.clone();
        let n = out.len();
        let mut rot = vec![DQuat::IDENTITY; n];
        let mut mat = vec![DMat4::IDENTITY; n];
        let m_inv = self.model.inverse();
        for &id in &self.target_order {
            let i = id.index();
            let parent = self.target_parents[i];
            let (prot, pmat) = match parent {
                Some(p) => (rot[p], mat[p]),
                None => (DQuat::IDENTITY, DMat4::IDENTITY),
            };
            let mut local_r = dquat(out[i].rotation);
            let mut local_t = dvec(out[i].translation);
            if let Some(k) = self.target_pair[i] {
                let p = self.pairs[k];
                let delta = self.model
                    * (sw.rot[p.source] * self.source_ref.rot[p.source].inverse())
                    * m_inv;
                let world = (delta * self.target_ref.rot[i]).normalize();
                local_r = (prot.inverse() * world).normalize();
                if p.translate {
                    let moved = sw.pos(p.source) - self.source_ref.pos(p.source);
                    let want = self.target_ref.pos(i) + self.scale * (self.model * moved);
                    local_t = pmat.inverse().transform_point3(want);
                }
                // At the reference (within rounding), the reference's own values, bit for bit:
                // a clip at the source's reference leaves the target exactly at its reference.
                let reference = &self.target_ref_locals[i];
                let rr = dquat(reference.rotation);
                if local_r.dot(rr).abs() >= (SNAP_RAD / 2.0).cos() {
                    local_r = rr;
                    out[i].rotation = reference.rotation;
                } else {
                    out[i].rotation = Quat::from_xyzw(
                        local_r.x as f32,
                        local_r.y as f32,
                        local_r.z as f32,
                        local_r.w as f32,
                    )
                    .normalize();
                }
                if p.translate {
                    if local_t.distance(dvec(reference.translation)) <= SNAP_M {
                        local_t = dvec(reference.translation);
                        out[i].translation = reference.translation;
                    } else {
                        out[i].translation = local_t.as_vec3();
                    }
                }
            }
            let lm = DMat4::from_scale_rotation_translation(dvec(out[i].scale), local_r, local_t);
            rot[i] = (prot * local_r).normalize();
            mat[i] = pmat * lm;
        }
        out
    }

    /// Bake `clips` of `source` (played together, as [`crate::anim::drive::Drive::Clips`] plays
    /// them) into one target clip named `name`: LINEAR keys at `fps` from the clips' first key
    /// to their last (the last key at the end), a rotation channel per mapped target bone and a
    /// translation channel per translate bone.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an `fps` outside [1, [`MAX_RETARGET_FPS`]] or a bake of more than
    /// [`MAX_RETARGET_POSES`] poses (with the numbers), an unknown clip, clips that move
    /// nothing (no key), or clips that translate a translate bone when the scale is unknown (a
    /// translate bone at no height above its skeleton's lowest joint and no `scale` given).
    pub fn retarget_clip(
        &self,
        source: &Character,
        clips: &[ClipId],
        fps: f64,
        name: &str,
    ) -> Result<Clip> {
        let what = || format!("retarget clip `{name}`");
        if !(fps.is_finite() && (1.0..=MAX_RETARGET_FPS).contains(&fps)) {
            return Err(Error::Invalid {
                what: what(),
                reason: format!("{fps} keys per second is outside 1 to {MAX_RETARGET_FPS}"),
            });
        }
        if clips.is_empty() {
            return Err(Error::Invalid {
                what: what(),
                reason: "no source clip given".into(),
            });
        }
        for c in clips {
            if c.index() >= source.clips.len() {
                return Err(Error::Invalid {
                    what: what(),
                    reason: format!(
                        "{} has no clip {} (it has {})",
                        source.source,
                        c.index(),
                        source.clips.len()
                    ),
                });
            }
        }
        let used: Vec<&Clip> = clips.iter().map(|c| &source.clips[c.index()]).collect();
        if let Some(why) = &self.unknown_scale {
            let moved = used.iter().flat_map(|c| &c.channels).any(|ch| {
                ch.property == Property::Translation
                    && self
                        .pairs
                        .iter()
                        .any(|p| p.translate && p.source == ch.node.index())
            });
            if moved {
                return Err(Error::Invalid {
                    what: what(),
                    reason: format!("the clip translates the hips, but {why}"),
                });
            }
        }
        if used.iter().all(|c| c.channels.is_empty()) {
            return Err(Error::Invalid {
                what: what(),
                reason: "the source clips have no channels".into(),
            });
        }
        let start = used.iter().map(|c| c.start()).fold(f64::INFINITY, f64::min);
        let end = used
            .iter()
            .map(|c| c.end())
            .fold(f64::NEG_INFINITY, f64::max);
        let duration = (end - start).max(0.0);
        let poses = (duration * fps).ceil() + 1.0;
        if !(poses.is_finite() && poses <= MAX_RETARGET_POSES as f64) {
            return Err(Error::Invalid {
                what: what(),
                reason: format!(
                    "{duration:.3} s at {fps} keys per second is {poses} poses, over the limit of \
                     {MAX_RETARGET_POSES}: lower the rate"
                ),
            });
        }
        let poses = poses as usize;
        let mut times = Vec::with_capacity(poses);
        for k in 0..poses {
            let t = if k + 1 == poses {
                end.max(start)
            } else {
                start + k as f64 / fps
            };
            times.push(t);
        }
        let rest = source.rest_pose();
        let mut pose: Pose = rest.clone();
        let mut rot_keys: Vec<Vec<f32>> = vec![Vec::with_capacity(poses * 4); self.pairs.len()];
        let mut pos_keys: Vec<Vec<f32>> = vec![Vec::new(); self.pairs.len()];
        for &t in &times {
            pose.clone_from(&rest);
            for c in clips {
                source.apply_clip(*c, t, &mut pose);
            }
            let out = self.retarget_locals(source, &pose.locals);
            for (k, p) in self.pairs.iter().enumerate() {
                let l = &out[p.target];
                rot_keys[k].extend_from_slice(&l.rotation.to_array());
                if p.translate {
                    pos_keys[k].extend_from_slice(&l.translation.to_array());
                }
            }
        }
        let mut key_times: Vec<f32> = times.iter().map(|&t| t as f32).collect();
        // The last key sits at the end; a key before it that f32 cannot tell apart is dropped.
        let mut dropped = None;
        if key_times.len() >= 2 && key_times[key_times.len() - 2] >= key_times[key_times.len() - 1]
        {
            dropped = Some(key_times.len() - 2);
            key_times.remove(key_times.len() - 2);
        }
        let file = format!("retargeted `{name}`");
        let mut channels = Vec::new();
        if let Some(d) = dropped {
            for k in 0..self.pairs.len() {
                rot_keys[k].drain(d * 4..d * 4 + 4);
                if self.pairs[k].translate {
                    pos_keys[k].drain(d * 3..d * 3 + 3);
                }
            }
        }
        let poses = key_times.len();
        for (k, p) in self.pairs.iter().enumerate() {
            // Consecutive quaternions in one hemisphere, so slerp takes the short way.
            let keys = &mut rot_keys[k];
            for j in 1..poses {
                let (a, b) = keys.split_at_mut(j * 4);
                let prev = &a[(j - 1) * 4..];
                let cur = &mut b[..4];
                if prev.iter().zip(cur.iter()).map(|(x, y)| x * y).sum::<f32>() < 0.0 {
                    cur.iter_mut().for_each(|c| *c = -*c);
                }
            }
            channels.push(Channel {
                node: NodeId(p.target as u32),
                property: Property::Rotation,
                sampler: Sampler::new(
                    &file,
                    "rotation",
                    Interpolation::Linear,
                    key_times.clone(),
                    std::mem::take(keys),
                    4,
                )?,
            });
            if p.translate {
                channels.push(Channel {
                    node: NodeId(p.target as u32),
                    property: Property::Translation,
                    sampler: Sampler::new(
                        &file,
                        "translation",
                        Interpolation::Linear,
                        key_times.clone(),
                        std::mem::take(&mut pos_keys[k]),
                        3,
                    )?,
                });
            }
        }
        Ok(Clip {
            name: Some(name.to_string()),
            channels,
        })
    }
}

/// The local transforms of a skeleton's reference pose.
fn reference_locals(skel: &Skel, r: Reference) -> Result<Vec<Transform>> {
    match r {
        Reference::Rest => Ok(skel.ch.rest_pose().locals),
        Reference::TPose => t_pose(skel.ch, &skel.roles),
        Reference::ClipFrame(c, t) => {
            if c.index() >= skel.ch.clips.len() {
                return Err(Error::Invalid {
                    what: format!("reference clip {}", c.index()),
                    reason: format!("{} has {} clips", skel.ch.source, skel.ch.clips.len()),
                });
            }
            let clip = &skel.ch.clips[c.index()];
            if !(t.is_finite() && t >= clip.start() && t <= clip.end()) {
                return Err(Error::Invalid {
                    what: format!("reference time {t} s"),
                    reason: format!(
                        "outside the clip's keys ({} to {} s)",
                        clip.start(),
                        clip.end()
                    ),
                });
            }
            let mut pose = skel.ch.rest_pose();
            skel.ch.apply_clip(c, t, &mut pose);
            Ok(pose.locals)
        }
    }
}

/// A node's height above the skeleton's lowest bone, metres, in pose `w`.
fn height(ch: &Character, w: &World, node: usize) -> f64 {
    let mut low = w.pos(node).y;
    let mut bones: BTreeSet<usize> = ch
        .skins
        .iter()
        .flat_map(|s| s.joints.iter().map(|j| j.index()))
        .collect();
    if bones.is_empty() {
        bones = (0..ch.nodes.len()).collect();
    }
    for i in bones {
        low = low.min(w.pos(i).y);
    }
    w.pos(node).y - low
}

/// The skeleton's facing: a VRM's or VRM Animation's by its spec, else the horizontal unit vector
/// `left × up` from its left and right upper legs (else upper arms, shoulders, feet) in pose `w` —
/// the hip joints first, as arms in an A-pose may lean forward.
fn facing(skel: &Skel, w: &World) -> Option<DVec3> {
    // VRM files say their facing (VRM 0.x: −Z; VRMC_vrm-1.0 and VRMC_vrm_animation-1.0: +Z), as
    // three-vrm reads them, whatever their rest pose looks like.
    if let Some(v) = &skel.ch.vrm {
        return Some(if v.version == crate::vrm::VrmVersion::V0 {
            DVec3::NEG_Z
        } else {
            DVec3::Z
        });
    }
    if skel.ch.vrm_animation.is_some() {
        return Some(DVec3::Z);
    }
    for (l, r) in [
        ("leftUpperLeg", "rightUpperLeg"),
        ("leftUpperArm", "rightUpperArm"),
        ("leftShoulder", "rightShoulder"),
        ("leftFoot", "rightFoot"),
    ] {
        if let (Some(a), Some(b)) = (skel.roles.get(l), skel.roles.get(r)) {
            let mut left = w.pos(a.index()) - w.pos(b.index());
            left.y = 0.0;
            if left.length() > 1e-6 {
                return Some(left.normalize().cross(DVec3::Y).normalize());
            }
        }
    }
    None
}

/// ` (near: a, b, c)` — up to three node names sharing the most with `name`, for messages.
fn near_names(ch: &Character, name: &str) -> String {
    // A node of the same humanoid role is the nearest of all.
    if let Some(role) = names::role_of(name) {
        let same: Vec<&str> = ch
            .nodes
            .iter()
            .filter_map(|n| n.name.as_deref())
            .filter(|n| names::role_of(n) == Some(role))
            .take(3)
            .collect();
        if !same.is_empty() {
            return format!(" (near: {}, read as `{role}`)", same.join(", "));
        }
    }
    let lower = name.to_ascii_lowercase();
    // A typo: names within two edits (case ignored).
    let typo: Vec<&str> = ch
        .nodes
        .iter()
        .filter_map(|n| n.name.as_deref())
        .filter(|n| edit_distance(&n.to_ascii_lowercase(), &lower) <= 2)
        .take(3)
        .collect();
    if !typo.is_empty() {
        return format!(" (near: {})", typo.join(", "));
    }
    let core = names::split_side(name).1.to_ascii_lowercase();
    // Containing the name's core, else sharing its first three letters; within each, the most
    // letters in common in order (the longest common subsequence).
    let mut scored: Vec<(usize, usize, &str)> = ch
        .nodes
        .iter()
        .filter_map(|n| n.name.as_deref())
        .map(|n| {
            let l = n.to_ascii_lowercase();
            let score = if l.contains(&core) || core.contains(&l) {
                2
            } else {
                usize::from(l.chars().take(3).eq(lower.chars().take(3)))
            };
            (score, common_subsequence(&l, &lower), n)
        })
        .filter(|(s, _, _)| *s > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    let scored: Vec<(usize, &str)> = scored.into_iter().map(|(s, _, n)| (s, n)).collect();
    let v: Vec<&str> = scored.iter().take(3).map(|(_, n)| *n).collect();
    if v.is_empty() {
        String::new()
    } else {
        format!(" (near: {})", v.join(", "))
    }
}

/// Length of the longest common subsequence of `a` and `b` (names: at most a few dozen letters;
/// longer ones are cut to 64).
fn common_subsequence(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) =
        (a.chars().take(64).collect(), b.chars().take(64).collect());
    let mut row = vec![0usize; b.len() + 1];
    for x in &a {
        let mut diag = 0;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
            diag = up;
        }
    }
    row[b.len()]
}

/// Levenshtein distance (insertions, deletions, substitutions), for near-name suggestions; stops
/// early past 3.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 3 {
        return 4;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
