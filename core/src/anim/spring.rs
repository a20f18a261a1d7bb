//! Spring bones: the bone chains avatars carry (hair, skirts, ribbons), simulated and written back
//! as bone rotations so everything skinned to them sways.
//!
//! Sources: VRMC_springBone-1.0 (`springs`, `joints`, `colliders`, `colliderGroups`, `center`;
//! the joint update: inertia `(current − prev)·(1 − dragForce)`, the stiffness pull along the
//! bone's rest direction under its current parent `stiffness·dt`, gravity `gravityDir ·
//! gravityPower·dt`, the tail kept at the bone's length from its head, pushed out of each collider
//! and back to length, the bone turned from its rest direction to the tail), VRM 0.x
//! `secondaryAnimation` (bone groups whose every descendant is a joint, a leaf's tail 7 cm along
//! its own offset, sphere colliders whose offset `z` is flipped), VRMC_springBone_extended_collider
//! -1.0 (plane, inside sphere, inside capsule; it replaces the base shape), and seed 003 "Simulated
//! bone chains" (teleport reset). Beyond them, from users' reports: a **fixed internal step**
//! ([`STEP_S`]) with the animated pose interpolated across each frame and the output interpolated
//! between steps, so a chain at 30, 60 and 165 Hz sways alike (Godot #103229, UniVRM #425); a
//! **teleport** (a spring's root moving farther than [`SpringOptions::teleport_m`] in one frame)
//! resets the chain to its animated pose instead of whipping it.
//!
//! World space, metres, seconds. Deterministic: fixed step count from the summed frame times, no
//! clock, no randomness.

use std::collections::BTreeSet;

use glam::{DMat3, DMat4, DQuat, DVec3, Quat};
use serde_json::{Map, Value};

use super::retarget::{World, dquat, dvec};
use crate::error::{Error, Result};
use crate::rig::{Character, ImportNote, NodeId, Pose, Transform};

/// The simulation's fixed step, seconds (120 Hz).
pub const STEP_S: f64 = 1.0 / 120.0;
/// Most steps one update runs (a longer gap is a cut: the chains are reset).
pub const MAX_STEPS: u32 = 240;
/// Most joints one avatar's springs may hold.
pub const MAX_JOINTS: usize = 4096;

/// A collider's shape, in its node's space (metres).
#[derive(Clone, Debug, PartialEq)]
pub enum ColliderShape {
    /// A sphere at `offset`; `inside` keeps joints inside it.
    Sphere {
        /// Centre.
        offset: DVec3,
        /// Radius.
        radius: f64,
        /// Keep joints inside instead of outside.
        inside: bool,
    },
    /// A capsule from `offset` to `tail`.
    Capsule {
        /// One end.
        offset: DVec3,
        /// The other end.
        tail: DVec3,
        /// Radius.
        radius: f64,
        /// Keep joints inside instead of outside.
        inside: bool,
    },
    /// A plane through `offset`; joints stay on the side `normal` points to.
    Plane {
        /// A point of the plane.
        offset: DVec3,
        /// Its normal (unit on use).
        normal: DVec3,
    },
}

/// A collider on a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    /// The node it follows.
    pub node: NodeId,
    /// Its shape.
    pub shape: ColliderShape,
}

/// Where a joint's tail is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tail {
    /// At a child node.
    Child(NodeId),
    /// At a fixed offset in the joint's own space (a leaf: VRM 0.x's 7 cm).
    Local(DVec3),
}

/// One simulated bone.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// The bone turned.
    pub node: NodeId,
    /// Its tail.
    pub tail: Tail,
    /// Collision radius of the tail, metres.
    pub hit_radius: f64,
    /// Pull back to the rest direction, 1/s (VRM `stiffness`).
    pub stiffness: f64,
    /// Gravity strength, m/s (VRM `gravityPower`).
    pub gravity_power: f64,
    /// Gravity direction (unit on use).
    pub gravity_dir: DVec3,
    /// Velocity lost per step, 0–1 (VRM `dragForce`).
    pub drag: f64,
    /// How much of [`SpringOptions::wind`] moves it (1 for VRM joints; a chain's
    /// `wind_response`).
    pub wind_response: f64,
}

/// One chain: joints root first, the collider groups it meets, its center node.
#[derive(Clone, Debug, PartialEq)]
pub struct Spring {
    /// The file's name, or `spring N`.
    pub name: String,
    /// Indices into [`SpringBones::joints`], parents before children.
    pub joints: Vec<usize>,
    /// Indices into [`SpringBones::collider_groups`].
    pub collider_groups: Vec<usize>,
    /// The node whose space the inertia lives in (walking does not fling the chain), if any.
    pub center: Option<NodeId>,
}

/// An avatar's spring bones, imported (VRM 0.x `secondaryAnimation` or `VRMC_springBone`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpringBones {
    /// Where they came from: `VRMC_springBone` or `VRM.secondaryAnimation`.
    pub source: String,
    /// Every simulated joint.
    pub joints: Vec<Joint>,
    /// Every collider.
    pub colliders: Vec<Collider>,
    /// Collider groups: indices into `colliders`.
    pub collider_groups: Vec<Vec<usize>>,
    /// The chains.
    pub springs: Vec<Spring>,
}

struct Reader<'a> {
    file: &'a str,
    nodes: usize,
    notes: &'a mut Vec<ImportNote>,
}

impl Reader<'_> {
    fn err(&self, field: &str, reason: impl Into<String>) -> Error {
        Error::format(self.file, field, reason)
    }
    fn note(&mut self, field: &str, message: impl Into<String>) {
        self.notes.push(ImportNote {
            field: field.to_string(),
            message: message.into(),
        });
    }
    fn num(&self, v: Option<&Value>, field: &str, default: f64) -> Result<f64> {
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(x) => x
                .as_f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| self.err(field, "not a finite number")),
        }
    }
    fn vec3(&self, v: Option<&Value>, field: &str, default: DVec3) -> Result<DVec3> {
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Array(a)) if a.len() == 3 => {
                let mut out = [0.0; 3];
                for (i, x) in a.iter().enumerate() {
                    out[i] = self.num(Some(x), &format!("{field}[{i}]"), 0.0)?;
                }
                Ok(DVec3::from_array(out))
            }
            Some(Value::Object(o)) => Ok(DVec3::new(
                self.num(o.get("x"), &format!("{field}.x"), 0.0)?,
                self.num(o.get("y"), &format!("{field}.y"), 0.0)?,
                self.num(o.get("z"), &format!("{field}.z"), 0.0)?,
            )),
            Some(_) => Err(self.err(field, "not three numbers")),
        }
    }
    fn node(&self, v: Option<&Value>, field: &str) -> Result<NodeId> {
        let i = v
            .and_then(Value::as_u64)
            .ok_or_else(|| self.err(field, "missing or not a node index"))?;
        if i as usize >= self.nodes {
            return Err(self.err(
                field,
                format!("node {i} does not exist (the file has {})", self.nodes),
            ));
        }
        Ok(NodeId(i as u32))
    }
    fn index(&self, v: &Value, field: &str, len: usize, what: &str) -> Result<usize> {
        let i = v
            .as_u64()
            .ok_or_else(|| self.err(field, format!("not a {what} index")))?;
        if i as usize >= len {
            return Err(self.err(
                field,
                format!("{what} {i} does not exist (there are {len})"),
            ));
        }
        Ok(i as usize)
    }
    fn array<'v>(&self, v: Option<&'v Value>, field: &str) -> Result<&'v [Value]> {
        match v {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(self.err(field, "not an array")),
        }
    }
    /// Keys of `o` outside `known`, noted (unknown fields are reported, never fatal).
    fn unknown(&mut self, o: &Map<String, Value>, known: &[&str], field: &str) {
        for k in o.keys() {
            if !known.contains(&k.as_str()) {
                self.note(&format!("{field}.{k}"), "unknown field, ignored");
            }
        }
    }
}

/// Read an avatar's spring bones from a glTF's root `extensions` (`VRMC_springBone`, else the
/// VRM 0.x `VRM.secondaryAnimation`); `None` when it has neither (or no joint). `children` gives
/// each node's children, `rest` each node's rest transform (a 0.x leaf's tail).
///
/// # Errors
/// [`Error::Format`] naming the field: a node, collider, collider group or joint index that does
/// not exist, a number that is not finite, a negative radius, a drag outside 0–1, more than
/// [`MAX_JOINTS`] joints. Unknown fields (an extension's `angleLimit`) are noted, not refused.
pub fn read_spring_bones(
    ext: &Map<String, Value>,
    file: &str,
    children: &[Vec<NodeId>],
    rest: &[Transform],
    notes: &mut Vec<ImportNote>,
) -> Result<Option<SpringBones>> {
    let mut r = Reader {
        file,
        nodes: children.len(),
        notes,
    };
    let sb = if let Some(v) = ext.get("VRMC_springBone") {
        v1(&mut r, v)?
    } else if let Some(v) = ext.get("VRM").and_then(|v| v.get("secondaryAnimation")) {
        v0(&mut r, v, children, rest)?
    } else {
        return Ok(None);
    };
    if sb.joints.len() > MAX_JOINTS {
        return Err(r.err(
            "springs",
            format!("{} joints, over the limit of {MAX_JOINTS}", sb.joints.len()),
        ));
    }
    Ok((!sb.joints.is_empty()).then_some(sb))
}

fn joint_settings(
    r: &Reader,
    j: &Map<String, Value>,
    f: &str,
) -> Result<(f64, f64, f64, DVec3, f64)> {
    let hit = r.num(j.get("hitRadius"), &format!("{f}.hitRadius"), 0.0)?;
    let stiff = r.num(j.get("stiffness"), &format!("{f}.stiffness"), 1.0)?;
    let gp = r.num(j.get("gravityPower"), &format!("{f}.gravityPower"), 0.0)?;
    let gd = r.vec3(
        j.get("gravityDir"),
        &format!("{f}.gravityDir"),
        DVec3::NEG_Y,
    )?;
    let drag = r.num(j.get("dragForce"), &format!("{f}.dragForce"), 0.5)?;
    if hit < 0.0 {
        return Err(r.err(&format!("{f}.hitRadius"), format!("{hit} is negative")));
    }
    if !(0.0..=1.0).contains(&drag) {
        return Err(r.err(&format!("{f}.dragForce"), format!("{drag} is not in 0–1")));
    }
    Ok((hit, stiff, gp, gd, drag))
}

fn v1(r: &mut Reader, v: &Value) -> Result<SpringBones> {
    let base = "extensions.VRMC_springBone";
    let root = v
        .as_object()
        .ok_or_else(|| r.err(base, "not a JSON object"))?;
    let mut sb = SpringBones {
        source: "VRMC_springBone".into(),
        ..Default::default()
    };
    for (i, c) in r
        .array(root.get("colliders"), &format!("{base}.colliders"))?
        .iter()
        .enumerate()
    {
        let f = format!("{base}.colliders[{i}]");
        let c = c
            .as_object()
            .ok_or_else(|| r.err(&f, "not a JSON object"))?;
        let node = r.node(c.get("node"), &format!("{f}.node"))?;
        let ex = c
            .get("extensions")
            .and_then(|e| e.get("VRMC_springBone_extended_collider"))
            .and_then(|e| e.get("shape"));
        let shape = match ex {
            Some(s) => shape(
                r,
                s,
                &format!("{f}.extensions.VRMC_springBone_extended_collider.shape"),
                true,
            )?,
            None => match c.get("shape") {
                Some(s) => shape(r, s, &format!("{f}.shape"), false)?,
                None => None,
            },
        };
        match shape {
            Some(shape) => sb.colliders.push(Collider { node, shape }),
            None => {
                r.note(&f, "no shape mien reads: the collider is skipped");
                // Keep the indices of later colliders: an inert sphere of radius 0 far away.
                sb.colliders.push(Collider {
                    node,
                    shape: ColliderShape::Sphere {
                        offset: DVec3::splat(1e9),
                        radius: 0.0,
                        inside: false,
                    },
                });
            }
        }
    }
    for (i, g) in r
        .array(
            root.get("colliderGroups"),
            &format!("{base}.colliderGroups"),
        )?
        .iter()
        .enumerate()
    {
        let f = format!("{base}.colliderGroups[{i}].colliders");
        let list = r.array(g.get("colliders"), &f)?;
        let mut out = Vec::new();
        for (k, c) in list.iter().enumerate() {
            out.push(r.index(c, &format!("{f}[{k}]"), sb.colliders.len(), "collider")?);
        }
        sb.collider_groups.push(out);
    }
    for (i, s) in r
        .array(root.get("springs"), &format!("{base}.springs"))?
        .iter()
        .enumerate()
    {
        let f = format!("{base}.springs[{i}]");
        let s = s
            .as_object()
            .ok_or_else(|| r.err(&f, "not a JSON object"))?;
        let joints = r.array(s.get("joints"), &format!("{f}.joints"))?;
        let mut groups = Vec::new();
        for (k, g) in r
            .array(s.get("colliderGroups"), &format!("{f}.colliderGroups"))?
            .iter()
            .enumerate()
        {
            groups.push(r.index(
                g,
                &format!("{f}.colliderGroups[{k}]"),
                sb.collider_groups.len(),
                "collider group",
            )?);
        }
        let center = match s.get("center") {
            None | Some(Value::Null) => None,
            c => Some(r.node(c, &format!("{f}.center"))?),
        };
        let mut ids = Vec::new();
        // Each joint with the next one as its tail; the last only ends the chain.
        for (k, pair) in joints.windows(2).enumerate() {
            let jf = format!("{f}.joints[{k}]");
            let j = pair[0]
                .as_object()
                .ok_or_else(|| r.err(&jf, "not a JSON object"))?;
            if let Some(e) = j.get("extensions").and_then(Value::as_object) {
                for (name, x) in e {
                    if let Some(o) = x.as_object() {
                        r.unknown(o, &["specVersion"], &format!("{jf}.extensions.{name}"));
                    }
                }
            }
            let node = r.node(j.get("node"), &format!("{jf}.node"))?;
            let tail = r.node(pair[1].get("node"), &format!("{f}.joints[{}].node", k + 1))?;
            let (hit, stiff, gp, gd, drag) = joint_settings(r, j, &jf)?;
            ids.push(sb.joints.len());
            sb.joints.push(Joint {
                node,
                tail: Tail::Child(tail),
                hit_radius: hit,
                stiffness: stiff,
                gravity_power: gp,
                gravity_dir: gd,
                drag,
                wind_response: 1.0,
            });
        }
        sb.springs.push(Spring {
            name: s
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("spring {i}"), str::to_string),
            joints: ids,
            collider_groups: groups,
            center,
        });
    }
    Ok(sb)
}

fn shape(r: &mut Reader, s: &Value, f: &str, extended: bool) -> Result<Option<ColliderShape>> {
    let Some(o) = s.as_object() else {
        return Err(r.err(f, "not a JSON object"));
    };
    let inside = |r: &Reader, x: &Map<String, Value>, ff: &str| -> Result<bool> {
        match x.get("inside") {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) if extended => Ok(*b),
            Some(Value::Bool(_)) => Ok(false),
            Some(_) => Err(r.err(&format!("{ff}.inside"), "not a boolean")),
        }
    };
    if let Some(x) = o.get("sphere").and_then(Value::as_object) {
        let ff = format!("{f}.sphere");
        let radius = r.num(x.get("radius"), &format!("{ff}.radius"), 0.0)?;
        if radius < 0.0 {
            return Err(r.err(&format!("{ff}.radius"), format!("{radius} is negative")));
        }
        return Ok(Some(ColliderShape::Sphere {
            offset: r.vec3(x.get("offset"), &format!("{ff}.offset"), DVec3::ZERO)?,
            radius,
            inside: inside(r, x, &ff)?,
        }));
    }
    if let Some(x) = o.get("capsule").and_then(Value::as_object) {
        let ff = format!("{f}.capsule");
        let radius = r.num(x.get("radius"), &format!("{ff}.radius"), 0.0)?;
        if radius < 0.0 {
            return Err(r.err(&format!("{ff}.radius"), format!("{radius} is negative")));
        }
        return Ok(Some(ColliderShape::Capsule {
            offset: r.vec3(x.get("offset"), &format!("{ff}.offset"), DVec3::ZERO)?,
            tail: r.vec3(x.get("tail"), &format!("{ff}.tail"), DVec3::ZERO)?,
            radius,
            inside: inside(r, x, &ff)?,
        }));
    }
    if extended && let Some(x) = o.get("plane").and_then(Value::as_object) {
        let ff = format!("{f}.plane");
        let normal = r.vec3(x.get("normal"), &format!("{ff}.normal"), DVec3::Z)?;
        if normal.length() < 1e-12 {
            return Err(r.err(&format!("{ff}.normal"), "a zero normal"));
        }
        return Ok(Some(ColliderShape::Plane {
            offset: r.vec3(x.get("offset"), &format!("{ff}.offset"), DVec3::ZERO)?,
            normal,
        }));
    }
    Ok(None)
}

fn v0(
    r: &mut Reader,
    v: &Value,
    children: &[Vec<NodeId>],
    rest: &[Transform],
) -> Result<SpringBones> {
    let base = "extensions.VRM.secondaryAnimation";
    let mut sb = SpringBones {
        source: "VRM.secondaryAnimation".into(),
        ..Default::default()
    };
    for (i, g) in r
        .array(v.get("colliderGroups"), &format!("{base}.colliderGroups"))?
        .iter()
        .enumerate()
    {
        let f = format!("{base}.colliderGroups[{i}]");
        let node = r.node(g.get("node"), &format!("{f}.node"))?;
        let mut group = Vec::new();
        for (k, c) in r
            .array(g.get("colliders"), &format!("{f}.colliders"))?
            .iter()
            .enumerate()
        {
            let cf = format!("{f}.colliders[{k}]");
            let mut offset = r.vec3(c.get("offset"), &format!("{cf}.offset"), DVec3::ZERO)?;
            offset.z = -offset.z; // VRM 0.x stores z flipped
            let radius = r.num(c.get("radius"), &format!("{cf}.radius"), 0.0)?;
            if radius < 0.0 {
                return Err(r.err(&format!("{cf}.radius"), format!("{radius} is negative")));
            }
            group.push(sb.colliders.len());
            sb.colliders.push(Collider {
                node,
                shape: ColliderShape::Sphere {
                    offset,
                    radius,
                    inside: false,
                },
            });
        }
        sb.collider_groups.push(group);
    }
    for (i, g) in r
        .array(v.get("boneGroups"), &format!("{base}.boneGroups"))?
        .iter()
        .enumerate()
    {
        let f = format!("{base}.boneGroups[{i}]");
        let o = g
            .as_object()
            .ok_or_else(|| r.err(&f, "not a JSON object"))?;
        // 0.x spells it `stiffiness`.
        let mut settings = o.clone();
        if let Some(s) = o.get("stiffiness") {
            settings.insert("stiffness".into(), s.clone());
        }
        let (hit, stiff, gp, gd, drag) = joint_settings(r, &settings, &f)?;
        let center = match o.get("center").and_then(Value::as_i64) {
            Some(c) if c >= 0 => Some(r.node(o.get("center"), &format!("{f}.center"))?),
            _ => None,
        };
        let mut groups = Vec::new();
        for (k, c) in r
            .array(o.get("colliderGroups"), &format!("{f}.colliderGroups"))?
            .iter()
            .enumerate()
        {
            groups.push(r.index(
                c,
                &format!("{f}.colliderGroups[{k}]"),
                sb.collider_groups.len(),
                "collider group",
            )?);
        }
        for (k, b) in r
            .array(o.get("bones"), &format!("{f}.bones"))?
            .iter()
            .enumerate()
        {
            let root = r.node(Some(b), &format!("{f}.bones[{k}]"))?;
            let mut ids = Vec::new();
            // Depth first from the root: every descendant is a joint.
            let mut stack = vec![root];
            let mut seen = BTreeSet::new();
            while let Some(n) = stack.pop() {
                if !seen.insert(n.index()) {
                    continue;
                }
                let tail = match children[n.index()].first() {
                    Some(c) => Tail::Child(*c),
                    None => {
                        Tail::Local(dvec(rest[n.index()].translation).normalize_or_zero() * 0.07)
                    }
                };
                ids.push(sb.joints.len());
                sb.joints.push(Joint {
                    node: n,
                    tail,
                    hit_radius: hit,
                    stiffness: stiff,
                    gravity_power: gp,
                    gravity_dir: gd,
                    drag,
                    wind_response: 1.0,
                });
                stack.extend(children[n.index()].iter().rev().copied());
            }
            let label = o
                .get("comment")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map_or_else(|| format!("boneGroups[{i}]"), str::to_string);
            sb.springs.push(Spring {
                name: format!("{label} #{k}"),
                joints: ids,
                collider_groups: groups.clone(),
                center,
            });
        }
    }
    Ok(sb)
}

impl SpringBones {
    /// These bones with `other`'s appended (indices shifted): a VRM avatar's springs and a
    /// character file's chains in one solver.
    pub fn merged(mut self, other: &SpringBones) -> SpringBones {
        let (j0, c0, g0) = (
            self.joints.len(),
            self.colliders.len(),
            self.collider_groups.len(),
        );
        self.joints.extend(other.joints.iter().cloned());
        self.colliders.extend(other.colliders.iter().cloned());
        self.collider_groups.extend(
            other
                .collider_groups
                .iter()
                .map(|g| g.iter().map(|c| c + c0).collect()),
        );
        self.springs.extend(other.springs.iter().map(|s| Spring {
            name: s.name.clone(),
            joints: s.joints.iter().map(|j| j + j0).collect(),
            collider_groups: s.collider_groups.iter().map(|g| g + g0).collect(),
            center: s.center,
        }));
        if self.source.is_empty() {
            self.source.clone_from(&other.source);
        } else if !other.source.is_empty() && other.source != self.source {
            self.source = format!("{} + {}", self.source, other.source);
        }
        self
    }
}

/// A simulated bone chain (`mien-chain` JSON; seed 003 "Simulated bone chains"): bones root
/// first (each the child of the one before), a tip length for the last bone, stiffness from
/// root to tip, damping, gravity, wind response, a collision margin and capsule colliders on
/// bones. Converted into [`SpringBones`] ([`ChainDef::to_spring_bones`]), so chains and VRM
/// spring bones run in one solver; the fixed internal step ([`STEP_S`]) replaces the seed's
/// per-chain substeps.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainDef {
    /// Always `mien-chain`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// The chain's name (reports).
    #[serde(default)]
    pub name: Option<String>,
    /// Node names, root first, each the child of the one before.
    pub bones: Vec<String>,
    /// The last bone's length along its own offset from its parent, metres (> 0).
    pub tip_length: f64,
    /// Stiffness at the root and at the tip (1/s, VRM units), interpolated along the chain.
    pub stiffness: [f64; 2],
    /// Velocity lost per step, 0–1.
    pub damping: f64,
    /// Gravity: direction times strength (m/s, VRM `gravityDir · gravityPower`).
    pub gravity: [f64; 3],
    /// How much wind moves it (0–10).
    #[serde(default)]
    pub wind_response: f64,
    /// Each joint's collision radius, metres (≥ 0).
    #[serde(default)]
    pub collision_margin: f64,
    /// Capsules on bones: `{bone, offset, tail, radius}` in the bone's space.
    #[serde(default)]
    pub colliders: Vec<CapsuleDef>,
}

/// A capsule collider on a bone.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapsuleDef {
    /// The node it follows.
    pub bone: String,
    /// One end, in the bone's space.
    pub offset: [f64; 3],
    /// The other end.
    pub tail: [f64; 3],
    /// Radius, metres (≥ 0).
    pub radius: f64,
}

impl ChainDef {
    /// Parse a `mien-chain` file (strict).
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the JSON pointer.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        crate::io::read::json_strict(text, file)
    }

    /// The chain as spring bones on `ch`.
    ///
    /// # Errors
    /// Every problem at once ([`Error::Many`]), each naming `file` and the field: format or
    /// version, fewer than one bone, a bone `ch` lacks, a bone that is not the child of the one
    /// before, numbers out of range (a tip length ≤ 0, damping outside 0–1, negative radii).
    pub fn to_spring_bones(&self, ch: &Character, file: &str) -> Result<SpringBones> {
        let mut p = Vec::new();
        let bad = |p: &mut Vec<Error>, f: &str, r: String| p.push(Error::format(file, f, r));
        if self.format != "mien-chain" {
            bad(
                &mut p,
                "/format",
                format!("`{}` is not `mien-chain`", self.format),
            );
        }
        if self.version != 1 {
            bad(
                &mut p,
                "/version",
                format!("version {} (mien reads 1)", self.version),
            );
        }
        if self.bones.is_empty() {
            bad(&mut p, "/bones", "no bone".into());
        }
        let find = |n: &str| ch.nodes.iter().position(|x| x.name.as_deref() == Some(n));
        let mut nodes = Vec::new();
        for (i, b) in self.bones.iter().enumerate() {
            match find(b) {
                None => bad(
                    &mut p,
                    &format!("/bones/{i}"),
                    format!("{} has no node `{b}`", ch.source),
                ),
                Some(n) => {
                    if let Some(&prev) = nodes.last()
                        && ch.nodes[n].parent.map(NodeId::index) != Some(prev)
                    {
                        bad(
                            &mut p,
                            &format!("/bones/{i}"),
                            format!("`{b}` is not a child of `{}`", self.bones[i - 1]),
                        );
                    }
                    nodes.push(n);
                }
            }
        }
        let num = |v: f64, lo: f64, hi: f64| v.is_finite() && v >= lo && v <= hi;
        if !(num(self.tip_length, 1e-6, 100.0)) {
            bad(
                &mut p,
                "/tip_length",
                format!("{} is not a length in (0, 100] m", self.tip_length),
            );
        }
        if !self.stiffness.iter().all(|s| num(*s, 0.0, 1e4)) {
            bad(
                &mut p,
                "/stiffness",
                format!("{:?}: two values from 0 to 1e4", self.stiffness),
            );
        }
        if !num(self.damping, 0.0, 1.0) {
            bad(
                &mut p,
                "/damping",
                format!("{} is not in 0–1", self.damping),
            );
        }
        if !self.gravity.iter().all(|g| num(*g, -1e3, 1e3)) {
            bad(
                &mut p,
                "/gravity",
                format!("{:?} is out of range", self.gravity),
            );
        }
        if !num(self.wind_response, 0.0, 10.0) {
            bad(
                &mut p,
                "/wind_response",
                format!("{} is not in 0–10", self.wind_response),
            );
        }
        if !num(self.collision_margin, 0.0, 10.0) {
            bad(
                &mut p,
                "/collision_margin",
                format!("{} is not in 0–10 m", self.collision_margin),
            );
        }
        let mut colliders = Vec::new();
        for (i, c) in self.colliders.iter().enumerate() {
            let f = format!("/colliders/{i}");
            let ok = c.offset.iter().chain(&c.tail).all(|v| num(*v, -1e3, 1e3))
                && num(c.radius, 0.0, 100.0);
            if !ok {
                bad(
                    &mut p,
                    &f,
                    "offset, tail and radius must be finite metres (radius ≥ 0)".into(),
                );
            }
            match find(&c.bone) {
                None => bad(
                    &mut p,
                    &format!("{f}/bone"),
                    format!("{} has no node `{}`", ch.source, c.bone),
                ),
                Some(n) => colliders.push(Collider {
                    node: NodeId(n as u32),
                    shape: ColliderShape::Capsule {
                        offset: DVec3::from_array(c.offset),
                        tail: DVec3::from_array(c.tail),
                        radius: c.radius,
                        inside: false,
                    },
                }),
            }
        }
        Error::collect(p)?;
        let g = DVec3::from_array(self.gravity);
        let k = nodes.len();
        let joints = nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let s = if k > 1 {
                    i as f64 / (k - 1) as f64
                } else {
                    0.0
                };
                let tail = match nodes.get(i + 1) {
                    Some(&c) => Tail::Child(NodeId(c as u32)),
                    None => Tail::Local(
                        dvec(ch.nodes[n].rest.translation).normalize_or(DVec3::Y) * self.tip_length,
                    ),
                };
                Joint {
                    node: NodeId(n as u32),
                    tail,
                    hit_radius: self.collision_margin,
                    stiffness: self.stiffness[0] + (self.stiffness[1] - self.stiffness[0]) * s,
                    gravity_power: g.length(),
                    gravity_dir: g.normalize_or(DVec3::NEG_Y),
                    drag: self.damping,
                    wind_response: self.wind_response,
                }
            })
            .collect();
        let groups = if colliders.is_empty() {
            Vec::new()
        } else {
            vec![(0..colliders.len()).collect()]
        };
        Ok(SpringBones {
            source: "mien-chain".into(),
            joints,
            springs: vec![Spring {
                name: self.name.clone().unwrap_or_else(|| self.bones[0].clone()),
                joints: (0..k).collect(),
                collider_groups: (0..groups.len()).collect(),
                center: None,
            }],
            colliders,
            collider_groups: groups,
        })
    }
}

/// How a [`SpringSim`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringOptions {
    /// A spring whose root moves farther than this in one update is reset (metres, > 0;
    /// default 3, seed 003).
    pub teleport_m: f64,
    /// Wind, m/s² (added like gravity; default none).
    pub wind: DVec3,
}

impl Default for SpringOptions {
    fn default() -> Self {
        SpringOptions {
            teleport_m: 3.0,
            wind: DVec3::ZERO,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct JointState {
    /// Tail now and one step ago, in the spring's center space.
    cur: DVec3,
    prev: DVec3,
    /// The step before (for output interpolation).
    before: DVec3,
    /// Rest local rotation and the rest tail direction in the joint's space.
    rest_rot: DQuat,
    axis: DVec3,
    length: f64,
    /// The joint node's parent.
    parent: Option<usize>,
}

/// What one update did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SpringReport {
    /// Fixed steps run.
    pub steps: u32,
    /// Springs reset this update (a teleport or a cut), by name.
    pub reset: Vec<String>,
}

/// The simulation of an avatar's spring bones (module doc).
#[derive(Clone, Debug)]
pub struct SpringSim {
    bones: SpringBones,
    options: SpringOptions,
    state: Vec<JointState>,
    /// Time not yet stepped, seconds.
    left: f64,
    /// The last update's animated pose and placement (the start of the next frame's
    /// interpolation).
    last: Option<(Vec<Transform>, DMat4)>,
    started: bool,
    /// Per joint: its node and every descendant, parents first (what a turn of it moves).
    subtree: Vec<Vec<usize>>,
}

impl SpringSim {
    /// A simulation of `bones` on `ch`, at rest.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a teleport distance that is not finite and > 0, or wind that is not
    /// finite; a joint whose node is not a node of `ch`.
    pub fn new(bones: &SpringBones, ch: &Character, options: SpringOptions) -> Result<Self> {
        if !(options.teleport_m.is_finite() && options.teleport_m > 0.0) {
            return Err(Error::Invalid {
                what: "spring teleport distance".into(),
                reason: format!("{} is not a distance > 0 m", options.teleport_m),
            });
        }
        if !options.wind.is_finite() {
            return Err(Error::Invalid {
                what: "spring wind".into(),
                reason: "not finite".into(),
            });
        }
        let n = ch.nodes.len();
        if let Some(j) = bones.joints.iter().find(|j| j.node.index() >= n) {
            return Err(Error::Invalid {
                what: "spring joint".into(),
                reason: format!("node {} is not a node of {}", j.node.index(), ch.source),
            });
        }
        let rest = ch.rest_pose();
        let w = World::of(ch, &rest.locals);
        let mut state = Vec::with_capacity(bones.joints.len());
        for j in &bones.joints {
            let i = j.node.index();
            let local_tail = match j.tail {
                Tail::Child(c) => dvec(rest.locals[c.index()].translation),
                Tail::Local(v) => v,
            };
            let tail_w = w.mat[i].transform_point3(local_tail);
            state.push(JointState {
                cur: tail_w,
                prev: tail_w,
                before: tail_w,
                rest_rot: dquat(rest.locals[i].rotation),
                axis: local_tail.normalize_or_zero(),
                length: (tail_w - w.pos(i)).length(),
                parent: ch.nodes[i].parent.map(NodeId::index),
            });
        }
        let below = |n: usize, anc: usize| {
            let mut c = Some(n);
            while let Some(x) = c {
                if x == anc {
                    return true;
                }
                c = ch.nodes[x].parent.map(NodeId::index);
            }
            false
        };
        let subtree = bones
            .joints
            .iter()
            .map(|j| {
                ch.hierarchy
                    .order()
                    .iter()
                    .map(|n| n.index())
                    .filter(|&n| below(n, j.node.index()))
                    .collect()
            })
            .collect();
        let mut sim = SpringSim {
            bones: bones.clone(),
            options,
            state,
            left: 0.0,
            last: None,
            started: false,
            subtree,
        };
        // Tails in each spring's center space.
        for s in 0..sim.bones.springs.len() {
            sim.reset_spring(s, &w);
        }
        Ok(sim)
    }

    /// The simulation's state as numbers (each joint's current and previous tail), for state
    /// hashes.
    pub fn state_bits(&self) -> impl Iterator<Item = f64> + '_ {
        self.state
            .iter()
            .flat_map(|s| s.cur.to_array().into_iter().chain(s.prev.to_array()))
    }

    /// The imported bones.
    pub fn bones(&self) -> &SpringBones {
        &self.bones
    }

    /// The options it runs with.
    pub fn options(&self) -> SpringOptions {
        self.options
    }

    /// Change the wind from the next step on, m/s² (world space; each joint takes its
    /// `wind_response` share of it, as gravity).
    ///
    /// # Errors
    /// [`Error::Invalid`] for wind that is not finite.
    pub fn set_wind(&mut self, wind: DVec3) -> Result<()> {
        if !wind.is_finite() {
            return Err(Error::Invalid {
                what: "spring wind".into(),
                reason: format!("{wind} is not finite"),
            });
        }
        self.options.wind = wind;
        Ok(())
    }

    fn center(&self, s: usize, w: &World) -> DMat4 {
        self.bones.springs[s]
            .center
            .map_or(DMat4::IDENTITY, |c| w.mat[c.index()])
    }

    /// Put spring `s`'s tails where pose `w` (animated, not yet simulated) has them: each along
    /// its rest direction under its animated parent.
    fn reset_spring(&mut self, s: usize, w: &World) {
        let to_center = self.center(s, w).inverse();
        for j in self.bones.springs[s].joints.clone() {
            let i = self.bones.joints[j].node.index();
            let st = self.state[j];
            let parent = st.parent.map_or(DQuat::IDENTITY, |p| w.rot[p]);
            let tail = w.pos(i) + parent * st.rest_rot * st.axis * st.length;
            let p = to_center.transform_point3(tail);
            let st = &mut self.state[j];
            st.cur = p;
            st.prev = p;
            st.before = p;
        }
    }

    /// Advance by `dt` seconds and write the joints' rotations into `pose` (the animated pose of
    /// `ch`, changed in place). `to_world` places the character.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a `dt` that is not finite and ≥ 0 or a pose of another node count.
    pub fn update(
        &mut self,
        dt: f64,
        ch: &Character,
        pose: &mut Pose,
        to_world: DMat4,
    ) -> Result<SpringReport> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::Invalid {
                what: "spring dt".into(),
                reason: format!("{dt} is not a time step in seconds ≥ 0"),
            });
        }
        if pose.locals.len() != ch.nodes.len() {
            return Err(Error::Invalid {
                what: "spring pose".into(),
                reason: format!(
                    "{} nodes for a character of {}",
                    pose.locals.len(),
                    ch.nodes.len()
                ),
            });
        }
        let mut report = SpringReport::default();
        let world = |locals: &[Transform], to_world: DMat4| {
            let mut w = World::of(ch, locals);
            let r = DQuat::from_mat3(&DMat3::from_mat4(to_world)).normalize();
            for i in 0..w.mat.len() {
                w.mat[i] = to_world * w.mat[i];
                w.rot[i] = (r * w.rot[i]).normalize();
            }
            w
        };
        let now = world(&pose.locals, to_world);
        let (prev_locals, prev_to_world) = self
            .last
            .clone()
            .unwrap_or_else(|| (pose.locals.clone(), to_world));
        let before = world(&prev_locals, prev_to_world);
        // Teleports (and the first update) reset their springs; so does a gap too long to step.
        self.left += dt;
        let steps = (self.left / STEP_S + 1e-9).floor();
        let cut = steps > f64::from(MAX_STEPS);
        for s in 0..self.bones.springs.len() {
            let Some(&j0) = self.bones.springs[s].joints.first() else {
                continue;
            };
            let i = self.bones.joints[j0].node.index();
            if !self.started
                || cut
                || (now.pos(i) - before.pos(i)).length() > self.options.teleport_m
            {
                self.reset_spring(s, &now);
                if self.started {
                    report.reset.push(self.bones.springs[s].name.clone());
                }
            }
        }
        if cut {
            self.left = self.left.rem_euclid(STEP_S);
        }
        // After a reset the frame is not interpolated from the old place.
        let (prev_locals, prev_to_world) = if report.reset.is_empty() {
            (prev_locals, prev_to_world)
        } else {
            (pose.locals.clone(), to_world)
        };
        let steps = if cut { 0 } else { steps as u32 };
        self.left -= f64::from(steps) * STEP_S;
        // Each step on the animated pose interpolated across the frame.
        let mut sub = pose.clone();
        for k in 0..steps {
            let frac = if dt > 0.0 {
                ((dt - self.left - f64::from(steps - 1 - k) * STEP_S) / dt).clamp(0.0, 1.0)
            } else {
                1.0
            };
            for (n, (a, b)) in sub
                .locals
                .iter_mut()
                .zip(prev_locals.iter().zip(&pose.locals))
            {
                *n = Transform {
                    translation: a.translation.lerp(b.translation, frac as f32),
                    rotation: a.rotation.slerp(b.rotation, frac as f32),
                    scale: a.scale.lerp(b.scale, frac as f32),
                };
            }
            let placed = lerp_placement(prev_to_world, to_world, frac);
            self.step(ch, &mut sub, &|l: &[Transform]| world(l, placed));
        }
        report.steps = steps;
        // The output: between the last two steps by the time left over.
        let alpha = if steps > 0 || self.started {
            1.0 - self.left / STEP_S
        } else {
            1.0
        };
        self.write(
            ch,
            pose,
            &|l: &[Transform]| world(l, to_world),
            alpha.clamp(0.0, 1.0),
        );
        self.last = Some((pose_locals_animated(pose, &now, self), to_world));
        self.started = true;
        Ok(report)
    }

    /// One fixed step on `pose` (joints written into it as they are solved, parents first).
    fn step(&mut self, ch: &Character, pose: &mut Pose, world: &dyn Fn(&[Transform]) -> World) {
        let h = STEP_S;
        let mut w = world(&pose.locals);
        for s in 0..self.bones.springs.len() {
            let spring = self.bones.springs[s].clone();
            for &j in &spring.joints {
                let center = self.center(s, &w);
                let jd = self.bones.joints[j].clone();
                let i = jd.node.index();
                let head = w.pos(i);
                let parent_rot = ch.nodes[i]
                    .parent
                    .map_or(DQuat::IDENTITY, |p| w.rot[p.index()]);
                let st = self.state[j];
                let rest_dir = (parent_rot * st.rest_rot * st.axis).normalize_or_zero();
                let cur_w = center.transform_point3(st.cur);
                let inertia = center.transform_vector3(st.cur - st.prev) * (1.0 - jd.drag);
                let mut next = cur_w
                    + inertia
                    + rest_dir * (jd.stiffness * h)
                    + jd.gravity_dir.normalize_or_zero() * (jd.gravity_power * h)
                    + self.options.wind * (jd.wind_response * h);
                next = head + (next - head).normalize_or_zero() * st.length;
                for &g in &spring.collider_groups {
                    for &c in &self.bones.collider_groups[g] {
                        let col = &self.bones.colliders[c];
                        if let Some(push) =
                            collide(&col.shape, w.mat[col.node.index()], next, jd.hit_radius)
                        {
                            next += push;
                            next = head + (next - head).normalize_or_zero() * st.length;
                        }
                    }
                }
                let to_center = center.inverse();
                let stm = &mut self.state[j];
                stm.before = stm.prev;
                stm.prev = stm.cur;
                stm.cur = to_center.transform_point3(next);
                // Turn the joint toward the tail; its subtree's worlds follow.
                let old = pose.locals[i];
                pose.locals[i].rotation =
                    joint_rotation(parent_rot, st.rest_rot, st.axis, next - head);
                refresh(ch, &pose.locals, &mut w, &self.subtree[j], &old);
            }
        }
    }

    /// Write each joint's rotation toward its tail interpolated between the last two steps.
    fn write(
        &self,
        ch: &Character,
        pose: &mut Pose,
        world: &dyn Fn(&[Transform]) -> World,
        alpha: f64,
    ) {
        let mut w = world(&pose.locals);
        for s in 0..self.bones.springs.len() {
            for &j in &self.bones.springs[s].joints {
                let center = self.center(s, &w);
                let jd = &self.bones.joints[j];
                let i = jd.node.index();
                let st = &self.state[j];
                let tail = center.transform_point3(st.prev + (st.cur - st.prev) * alpha);
                let parent_rot = ch.nodes[i]
                    .parent
                    .map_or(DQuat::IDENTITY, |p| w.rot[p.index()]);
                let old = pose.locals[i];
                pose.locals[i].rotation =
                    joint_rotation(parent_rot, st.rest_rot, st.axis, tail - w.pos(i));
                refresh(ch, &pose.locals, &mut w, &self.subtree[j], &old);
            }
        }
    }

    /// The world positions of every joint's tail as last solved (for tests and reports).
    pub fn tails(&self, ch: &Character, pose: &Pose, to_world: DMat4) -> Vec<DVec3> {
        let mut w = World::of(ch, &pose.locals);
        for m in &mut w.mat {
            *m = to_world * *m;
        }
        let mut out = Vec::with_capacity(self.state.len());
        for s in 0..self.bones.springs.len() {
            let center = self.center(s, &w);
            for &j in &self.bones.springs[s].joints {
                out.push((j, center.transform_point3(self.state[j].cur)));
            }
        }
        out.sort_by_key(|(j, _)| *j);
        out.into_iter().map(|(_, p)| p).collect()
    }
}

/// The animated pose to remember for the next frame's interpolation: `pose` before the springs
/// turned its joints (their rest rotations restored).
fn pose_locals_animated(pose: &Pose, _w: &World, sim: &SpringSim) -> Vec<Transform> {
    let mut l = pose.locals.clone();
    for (j, st) in sim.bones.joints.iter().zip(&sim.state) {
        l[j.node.index()].rotation = to_quat(st.rest_rot);
    }
    l
}

/// Recompute the world matrices of `nodes` (a joint and its descendants, parents first) after the
/// joint's local transform changed from `old`; the joint's parent (or, for a scene root, its
/// placement, recovered from its old world and `old`) is unchanged.
fn refresh(ch: &Character, locals: &[Transform], w: &mut World, nodes: &[usize], old: &Transform) {
    let Some(&first) = nodes.first() else {
        return;
    };
    let local = |l: &Transform| {
        let r = dquat(l.rotation);
        (
            r,
            DMat4::from_scale_rotation_translation(dvec(l.scale), r, dvec(l.translation)),
        )
    };
    let (old_r, old_m) = local(old);
    let root = match ch.nodes[first].parent {
        Some(p) => (w.rot[p.index()], w.mat[p.index()]),
        None => (
            (w.rot[first] * old_r.inverse()).normalize(),
            w.mat[first] * old_m.inverse(),
        ),
    };
    for &n in nodes {
        let (pr, pm) = match ch.nodes[n].parent {
            Some(p) if n != first => (w.rot[p.index()], w.mat[p.index()]),
            _ => root,
        };
        let (r, m) = local(&locals[n]);
        w.rot[n] = (pr * r).normalize();
        w.mat[n] = pm * m;
    }
}

/// A placement between `a` (at 0) and `b` (at 1): translations and scales lerped, rotations
/// slerped.
fn lerp_placement(a: DMat4, b: DMat4, s: f64) -> DMat4 {
    if s >= 1.0 || a == b {
        return b;
    }
    let (sa, ra, ta) = a.to_scale_rotation_translation();
    let (sb, rb, tb) = b.to_scale_rotation_translation();
    DMat4::from_scale_rotation_translation(sa.lerp(sb, s), ra.slerp(rb, s), ta.lerp(tb, s))
}

fn to_quat(q: DQuat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32).normalize()
}

/// The joint's local rotation that turns its rest tail direction `axis` (under its rest local
/// rotation and its parent's world rotation) toward `to` (world).
fn joint_rotation(parent: DQuat, rest: DQuat, axis: DVec3, to: DVec3) -> Quat {
    let frame = (parent * rest).normalize();
    let local_to = (frame.inverse() * to).normalize_or_zero();
    if local_to == DVec3::ZERO || axis == DVec3::ZERO {
        return to_quat(rest);
    }
    to_quat(rest * DQuat::from_rotation_arc(axis, local_to))
}

/// The push that takes a tail at `p` (radius `r`) out of (or back into) a collider with node
/// matrix `m`; `None` when it does not touch.
pub fn collide(shape: &ColliderShape, m: DMat4, p: DVec3, r: f64) -> Option<DVec3> {
    match *shape {
        ColliderShape::Sphere {
            offset,
            radius,
            inside,
        } => {
            let c = m.transform_point3(offset);
            sphere_push(p - c, radius, r, inside)
        }
        ColliderShape::Capsule {
            offset,
            tail,
            radius,
            inside,
        } => {
            let a = m.transform_point3(offset);
            let b = m.transform_point3(tail);
            let ab = b - a;
            let t = if ab.length_squared() > 0.0 {
                ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
            } else {
                0.0
            };
            sphere_push(p - (a + ab * t), radius, r, inside)
        }
        ColliderShape::Plane { offset, normal } => {
            let o = m.transform_point3(offset);
            let n = (DMat3::from_mat4(m).inverse().transpose() * normal).normalize();
            let d = (p - o).dot(n) - r;
            (d < 0.0).then_some(-n * d)
        }
    }
}

/// `v` from the shape's nearest point to the tail; the push for an outside (or inside) sphere.
fn sphere_push(v: DVec3, radius: f64, r: f64, inside: bool) -> Option<DVec3> {
    let len = v.length();
    let d = if inside {
        radius - r - len
    } else {
        len - r - radius
    };
    if d >= 0.0 || len < 1e-12 {
        return None;
    }
    let dir = v / len;
    Some(if inside { dir * d } else { -dir * d })
}
