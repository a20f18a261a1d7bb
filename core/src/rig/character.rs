//! A character: the imported scene (nodes, meshes, skins, clips) and its per-frame pose.

use glam::{Mat4, Quat, Vec3};

use super::ids::{ClipId, MeshId, NodeId};
use super::mesh::Mesh;
use super::skeleton::{Hierarchy, Node, Transform};
use super::skin::Skin;
use crate::anim::clip::{Clip, Property};
use crate::error::{Error, Result};

/// Something the importer changed or ignored, for the report (never silent).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ImportNote {
    /// Where (`meshes[2].extras.targetNames`, `meshes[0].primitives[1].WEIGHTS_0`).
    pub field: String,
    /// What was done.
    pub message: String,
}

/// A character as imported: a node forest, meshes, skins and clips, validated together.
#[derive(Clone, Debug, Default)]
pub struct Character {
    /// Where it came from (a path or `<built-in>`), for messages.
    pub source: String,
    /// All nodes.
    pub nodes: Vec<Node>,
    /// Parent-first order of `nodes`.
    pub hierarchy: Hierarchy,
    /// The nodes of the displayed scene's roots; only meshes under them are posed.
    pub scene_roots: Vec<NodeId>,
    /// All meshes.
    pub meshes: Vec<Mesh>,
    /// All skins.
    pub skins: Vec<Skin>,
    /// All clips.
    pub clips: Vec<Clip>,
    /// Extensions the file requires (glTF `extensionsRequired`), for `mien inspect`.
    pub required_extensions: Vec<String>,
    /// What the importer changed or ignored.
    pub notes: Vec<ImportNote>,
    /// A VRM avatar's expressions, humanoid map and lookAt (`None` for other characters); its
    /// expression control node is the last node ([`crate::vrm`]).
    pub vrm: Option<crate::vrm::Vrm>,
    /// A VRM Animation file's humanoid map (`None` for other files).
    pub vrm_animation: Option<crate::vrm::VrmAnimation>,
    /// Spring bones (`VRMC_springBone`, or a VRM 0.x `secondaryAnimation`), `None` when the file
    /// has none ([`crate::anim::spring`]).
    pub spring_bones: Option<crate::anim::spring::SpringBones>,
    /// A MetaHuman DNA character's rig logic (`None` for other characters): its control node is
    /// driven like any mesh's targets and [`crate::rig::riglogic::RigLogicCharacter::evaluate`]
    /// turns it into the face's morph weights and joint deltas each frame.
    pub rig_logic: Option<std::sync::Arc<crate::rig::riglogic::RigLogicCharacter>>,
    /// glTF materials (base colour only), indexed by [`crate::rig::Primitive::material`].
    pub materials: Vec<crate::rig::material::Material>,
    /// Images `(I,)` by glTF image index: the encoded bytes, or `None` when they could not be
    /// read (a note says why; colour falls back to the factor).
    pub images: Vec<Option<crate::rig::material::EncodedImage>>,
}

/// The animated state of a character at one instant: every node's local transform and every
/// mesh node's morph weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pose {
    /// Local transform per node `(N,)`.
    pub locals: Vec<Transform>,
    /// Morph weights per node `(N,)`: `(target_count,)` of the node's mesh, empty for a node
    /// without a mesh.
    pub weights: Vec<Vec<f32>>,
}

impl Character {
    /// Check cross-references: node mesh/skin indices, skin joints and inverse-bind counts, node
    /// weight counts, primitive invariants, clip channel targets and widths.
    ///
    /// # Errors
    /// Every problem found, each naming the field and index.
    pub fn validate(&self) -> Result<()> {
        let f = self.source.as_str();
        let mut problems = Vec::new();
        let nn = self.nodes.len();
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(m) = n.mesh {
                match self.meshes.get(m.index()) {
                    None => problems.push(Error::format(
                        f,
                        format!("nodes[{i}].mesh"),
                        format!("mesh {m} does not exist"),
                    )),
                    Some(mesh) => {
                        if let Some(w) = &n.weights
                            && w.len() != mesh.target_count()
                        {
                            problems.push(Error::format(
                                f,
                                format!("nodes[{i}].weights"),
                                format!(
                                    "{} weights for a mesh with {} morph targets",
                                    w.len(),
                                    mesh.target_count()
                                ),
                            ));
                        }
                    }
                }
            } else if n.weights.is_some() {
                problems.push(Error::format(
                    f,
                    format!("nodes[{i}].weights"),
                    "weights on a node without a mesh",
                ));
            }
            if let Some(s) = n.skin
                && s.index() >= self.skins.len()
            {
                problems.push(Error::format(
                    f,
                    format!("nodes[{i}].skin"),
                    format!("skin {s} does not exist"),
                ));
            }
        }
        for (i, s) in self.skins.iter().enumerate() {
            if s.joints.len() != s.inverse_bind.len() {
                problems.push(Error::format(
                    f,
                    format!("skins[{i}].inverseBindMatrices"),
                    format!(
                        "{} matrices for {} joints",
                        s.inverse_bind.len(),
                        s.joints.len()
                    ),
                ));
            }
            if let Some(j) = s.joints.iter().position(|j| j.index() >= nn) {
                problems.push(Error::format_at(
                    f,
                    format!("skins[{i}].joints"),
                    j,
                    "joint node does not exist",
                ));
            }
        }
        for (mi, m) in self.meshes.iter().enumerate() {
            if m.default_weights.len() != m.target_count() {
                problems.push(Error::format(
                    f,
                    format!("meshes[{mi}].weights"),
                    format!(
                        "{} weights for {} morph targets",
                        m.default_weights.len(),
                        m.target_count()
                    ),
                ));
            }
            for (pi, p) in m.primitives.iter().enumerate() {
                let label = format!("meshes[{mi}].primitives[{pi}]");
                if p.morph.target_count() != m.target_count() {
                    problems.push(Error::format(
                        f,
                        format!("{label}.targets"),
                        format!(
                            "{} targets, the mesh has {}",
                            p.morph.target_count(),
                            m.target_count()
                        ),
                    ));
                }
                if let Err(e) = p.validate(f, &label) {
                    problems.push(e);
                }
            }
        }
        for (ci, c) in self.clips.iter().enumerate() {
            for (hi, ch) in c.channels.iter().enumerate() {
                let field = format!("animations[{ci}].channels[{hi}]");
                let Some(node) = self.nodes.get(ch.node.index()) else {
                    problems.push(Error::format(
                        f,
                        format!("{field}.target.node"),
                        format!("node {} does not exist", ch.node),
                    ));
                    continue;
                };
                let want = match ch.property {
                    Property::Translation | Property::Scale => 3,
                    Property::Rotation => 4,
                    Property::Weights => match node.mesh.and_then(|m| self.meshes.get(m.index())) {
                        Some(m) => m.target_count(),
                        None => {
                            problems.push(Error::format(
                                f,
                                format!("{field}.target"),
                                "animates weights of a node without morph targets",
                            ));
                            continue;
                        }
                    },
                };
                if ch.sampler.width() != want {
                    problems.push(Error::format(
                        f,
                        format!("{field}.sampler"),
                        format!(
                            "{} floats per key, {:?} needs {want}",
                            ch.sampler.width(),
                            ch.property
                        ),
                    ));
                }
            }
        }
        Error::collect(problems)
    }

    /// Nodes that are drawn: nodes with a mesh under [`Character::scene_roots`], in parent-first
    /// order.
    pub fn mesh_nodes(&self) -> Vec<NodeId> {
        let mut in_scene = vec![false; self.nodes.len()];
        for r in &self.scene_roots {
            if let Some(x) = in_scene.get_mut(r.index()) {
                *x = true;
            }
        }
        let mut out = Vec::new();
        for &id in self.hierarchy.order() {
            let i = id.index();
            if let Some(p) = self.nodes[i].parent
                && in_scene[p.index()]
            {
                in_scene[i] = true;
            }
            if in_scene[i] && self.nodes[i].mesh.is_some() {
                out.push(id);
            }
        }
        out
    }

    /// The node's mesh, if any.
    pub fn node_mesh(&self, node: NodeId) -> Option<(MeshId, &Mesh)> {
        let m = self.nodes.get(node.index())?.mesh?;
        Some((m, self.meshes.get(m.index())?))
    }

    /// The humanoid map as roles (VRM 1.0 bone names, [`crate::anim::retarget::names::ROLES`]) and
    /// nodes: a VRM avatar's (0.x thumbs renamed to 1.0's) or a VRM Animation's; `None` for other
    /// characters (their roles come from bone names). Unknown bone names are left out.
    pub fn humanoid(&self) -> Option<Vec<(&'static str, NodeId)>> {
        use crate::anim::retarget::names::canonical_vrm;
        if let Some(v) = &self.vrm {
            let v0 = v.version == crate::vrm::VrmVersion::V0;
            return Some(
                v.humanoid
                    .iter()
                    .filter_map(|b| canonical_vrm(&b.bone, v0).map(|r| (r, b.node)))
                    .collect(),
            );
        }
        self.vrm_animation.as_ref().map(|a| {
            a.humanoid
                .iter()
                .filter_map(|b| canonical_vrm(&b.bone, false).map(|r| (r, b.node)))
                .collect()
        })
    }

    /// The rest pose: every node's file transform; weights from the node, else the mesh's defaults,
    /// else zeros.
    pub fn rest_pose(&self) -> Pose {
        let locals = self.nodes.iter().map(|n| n.rest).collect();
        let weights = self
            .nodes
            .iter()
            .map(
                |n| match (n.mesh.and_then(|m| self.meshes.get(m.index())), &n.weights) {
                    (Some(_), Some(w)) => w.clone(),
                    (Some(m), None) => m.default_weights.clone(),
                    (None, _) => Vec::new(),
                },
            )
            .collect();
        Pose { locals, weights }
    }

    /// Find a clip by name, or by index when `key` is a decimal number (`"0"`) and no clip has that
    /// name.
    ///
    /// # Errors
    /// [`Error::Invalid`] listing the clips the character has.
    pub fn find_clip(&self, key: &str) -> Result<ClipId> {
        if let Some(i) = self
            .clips
            .iter()
            .position(|c| c.name.as_deref() == Some(key))
        {
            return Ok(ClipId(i as u32));
        }
        if let Ok(i) = key.parse::<usize>()
            && i < self.clips.len()
        {
            return Ok(ClipId(i as u32));
        }
        let names: Vec<String> = self
            .clips
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{i}: {}", c.name.as_deref().unwrap_or("(unnamed)")))
            .collect();
        let hint = if key == "rest" {
            " (the rest pose is not a clip: a runtime instance without a drive is at rest; `InstanceMut::rest()` returns one to it)"
        } else {
            ""
        };
        Err(Error::Invalid {
            what: format!("clip `{key}`"),
            reason: if names.is_empty() {
                format!("the character has no clips{hint}")
            } else {
                format!("no such clip; it has [{}]{hint}", names.join(", "))
            },
        })
    }

    /// The clips of the same take as `clip`, `clip` first: exporters that split one recorded take
    /// into a clip per node name them `<node>|<take>|<layer>` (FBX2glTF, Face Cap: `Key|Take
    /// 001|BaseLayer`, `grp_eyeLeft|Take 001|BaseLayer`); every clip whose name has the same text
    /// after its first `|` belongs to the take. A clip without `|` in its name is a take of its own.
    ///
    /// # Panics
    /// When `clip` is out of range.
    pub fn take_of(&self, clip: ClipId) -> Vec<ClipId> {
        let suffix = |c: &Clip| {
            c.name
                .as_deref()
                .and_then(|n| n.split_once('|'))
                .map(|(_, rest)| rest.to_owned())
        };
        let mut out = vec![clip];
        if let Some(take) = suffix(&self.clips[clip.index()]) {
            for (i, c) in self.clips.iter().enumerate() {
                if i != clip.index() && suffix(c).as_deref() == Some(take.as_str()) {
                    out.push(ClipId(i as u32));
                }
            }
        }
        out
    }

    /// Overwrite the properties `clip` animates with their values at media time `t` seconds
    /// (clamped to the clip's keys). `pose` must come from [`Character::rest_pose`] of this
    /// character. Allocation-free.
    ///
    /// # Panics
    /// When `clip` is out of range.
    pub fn apply_clip(&self, clip: ClipId, t: f64, pose: &mut Pose) {
        for ch in &self.clips[clip.index()].channels {
            let i = ch.node.index();
            match ch.property {
                Property::Translation => {
                    let mut v = [0.0; 3];
                    ch.sampler.sample(t, &mut v);
                    pose.locals[i].translation = Vec3::from(v);
                }
                Property::Scale => {
                    let mut v = [0.0; 3];
                    ch.sampler.sample(t, &mut v);
                    pose.locals[i].scale = Vec3::from(v);
                }
                Property::Rotation => pose.locals[i].rotation = ch.sampler.sample_rotation(t),
                Property::Weights => ch.sampler.sample(t, &mut pose.weights[i]),
            }
        }
    }

    /// World matrices of every node for `pose` (`(N,)`, column-major), into `out`.
    pub fn world_matrices(&self, pose: &Pose, locals_scratch: &mut Vec<Mat4>, out: &mut Vec<Mat4>) {
        locals_scratch.clear();
        locals_scratch.extend(pose.locals.iter().map(Transform::matrix));
        self.hierarchy
            .world_matrices(&self.nodes, locals_scratch, out);
    }

    /// Decompose a glTF node matrix into TRS (glTF 2.0 §3.5.3 allows a matrix instead of TRS; it
    /// must be decomposable). Returns `None` when it is not finite or has a zero scale axis.
    pub fn decompose(m: Mat4) -> Option<Transform> {
        if !m.is_finite() {
            return None;
        }
        let (scale, rotation, translation): (Vec3, Quat, Vec3) = m.to_scale_rotation_translation();
        if !scale.is_finite() || scale.abs().min_element() == 0.0 || !rotation.is_finite() {
            return None;
        }
        Some(Transform {
            translation,
            rotation: rotation.normalize(),
            scale,
        })
    }
}
