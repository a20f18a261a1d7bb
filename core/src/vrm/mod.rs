//! VRM avatars: the `VRM` (0.x) and `VRMC_vrm` (1.0) glTF extensions as a control space mien
//! drives — expressions, the humanoid bone map and lookAt.
//!
//! **Import** ([`parse::read`], called by [`crate::io::gltf`]): both versions become one [`Vrm`].
//! VRM 0.x `blendShapeGroups` take their VRM 1.0 preset names (`a` → `aa`, `joy` → `happy`,
//! `sorrow` → `sad`, `fun` → `relaxed`, `blink_l` → `blinkLeft`, …, [`table::V0_PRESETS`]), their
//! 0–100 bind weights divided by 100, and every node instancing a bound mesh. The expressions
//! become the morph targets of one **expression control node** the importer appends to the
//! character (named [`CONTROL_NODE_NAME`], a mesh without geometry whose target names are the
//! expression names), so every driver that binds by target name — streams, speech visemes, the
//! face controller, `set_controls` — drives expressions exactly as it drives morph targets.
//! A morph bind that moves nothing (a 1.0 bind on a node without a mesh, a target index the mesh
//! lacks) is skipped and reported ([`Vrm::skipped_binds`]); [`parse::ReadOptions::strict`] and
//! [`Vrm::require_all_binds`] refuse such an avatar instead.
//!
//! **Evaluation** ([`Vrm::apply`], once per frame after every driver), VRMC_vrm-1.0
//! `expressions.md` and `lookAt.md`:
//!
//! 1. lookAt of type expression writes `lookLeft/Right/Up/Down` from the gaze's yaw and pitch
//!    through the range maps ([`LookAt::expression_weights`]);
//! 2. every expression's input is clamped to [0, 1] (counted); a binary expression snaps to 1
//!    above 0.5, else 0 (`isBinary`);
//! 3. each procedural group (blink: `blink`, `blinkLeft`, `blinkRight`; lookAt: `lookUp`,
//!    `lookDown`, `lookLeft`, `lookRight`; mouth: `aa`, `ih`, `ou`, `ee`, `oh`) is scaled by
//!    `1 − saturate(Σ amount)` over the expressions *outside* the group that override it, where an
//!    expression's amount is its **snapped** output for `blend` and 1 while that output is above 0
//!    for `block` (so a binary expression below 0.5 blocks nothing); a binary expression of the
//!    group that receives any override is suppressed to 0 ("Interaction between override and
//!    isBinary");
//! 4. each morph bind adds `output × weight` to its target, on top of what the drivers wrote to
//!    the targets directly;
//! 5. lookAt of type bone turns the humanoid `leftEye` / `rightEye`: each eye's yaw and pitch
//!    through its own range maps (`Yaw>0` → left eye outer, right eye inner), scaled by the lookAt
//!    factor of step 3, applied in the lookAt space (the character frame at rest: +Z forward for
//!    1.0, −Z for 0.x) about the eye's pivot and on top of the eye's own rest rotation
//!    ([`LookAt::eye_rotations`]).
//!
//! Material-colour and texture-transform binds are counted and reported as not applied (mien's
//! splats carry no material); they are never an error.

pub mod look_at;
pub mod parse;
pub mod table;

use glam::{Mat4, Quat};

use crate::error::{Error, Result};
use crate::rig::{NodeId, Pose};

pub use look_at::{LookAt, LookAtKind, RangeMap};

/// Name of the expression control node (and its mesh) the importer appends for a VRM.
pub const CONTROL_NODE_NAME: &str = "VRM expressions";

/// Which extension the file carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum VrmVersion {
    /// The `VRM` extension (0.x): binds 0–100 by mesh, lookAt curves, the model faces −Z.
    V0,
    /// `VRMC_vrm` 1.0: binds 0–1 by node, range maps, overrides, the model faces +Z.
    V1,
}

/// How an expression overrides a procedural group (VRMC_vrm-1.0 `expressions.md`, "Procedural
/// override").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Override {
    /// Does nothing.
    #[default]
    None,
    /// The group is held at 0 while this expression's output is above 0.
    Block,
    /// The group is attenuated by this expression's output.
    Blend,
}

/// The procedural group an expression belongs to, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// `blink`, `blinkLeft`, `blinkRight`.
    Blink,
    /// `lookUp`, `lookDown`, `lookLeft`, `lookRight`.
    LookAt,
    /// `aa`, `ih`, `ou`, `ee`, `oh`.
    Mouth,
}

impl Group {
    /// The group of a VRM 1.0 preset name.
    pub fn of_preset(preset: &str) -> Option<Group> {
        match preset {
            "blink" | "blinkLeft" | "blinkRight" => Some(Group::Blink),
            "lookUp" | "lookDown" | "lookLeft" | "lookRight" => Some(Group::LookAt),
            "aa" | "ih" | "ou" | "ee" | "oh" => Some(Group::Mouth),
            _ => None,
        }
    }
}

/// One morph bind of an expression: `weights[node][target] += output × weight`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MorphBind {
    /// The mesh node whose target moves.
    pub node: NodeId,
    /// The morph target index in the node's mesh.
    pub target: usize,
    /// The target's weight at expression output 1, unitless in [0, 1] (0.x files: the 0–100
    /// value ÷ 100; a value above 1 is reported on import and applied as 1).
    pub weight: f32,
}

/// One expression.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Expression {
    /// The control name: the VRM 1.0 preset name, or the custom name.
    pub name: String,
    /// The VRM 1.0 preset name when it is a preset.
    pub preset: Option<String>,
    /// The name in the file (0.x: the group's `name`).
    pub file_name: String,
    /// Output snaps to 0 or 1 at 0.5.
    pub is_binary: bool,
    /// Override of the blink group.
    pub override_blink: Override,
    /// Override of the lookAt group.
    pub override_look_at: Override,
    /// Override of the mouth group.
    pub override_mouth: Override,
    /// Morph binds (repeated binds of one target add up, as the spec's accumulation does).
    pub morph_binds: Vec<MorphBind>,
    /// Material colour binds (0.x `materialValues`), not applied.
    pub material_color_binds: usize,
    /// Texture transform binds, not applied.
    pub texture_transform_binds: usize,
}

impl Expression {
    /// The procedural group this expression belongs to.
    pub fn group(&self) -> Option<Group> {
        self.preset.as_deref().and_then(Group::of_preset)
    }

    fn overrides(&self, g: Group) -> Override {
        match g {
            Group::Blink => self.override_blink,
            Group::LookAt => self.override_look_at,
            Group::Mouth => self.override_mouth,
        }
    }
}

/// One humanoid bone: its VRM name (`head`, `leftEye`, `leftUpperArm`, …) and node.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HumanBone {
    /// The VRM humanoid bone name (1.0 spelling; 0.x uses the same names).
    pub bone: String,
    /// The node.
    pub node: NodeId,
}

/// A VRM avatar's control data, read from its glTF extension.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Vrm {
    /// 0.x or 1.0.
    pub version: VrmVersion,
    /// `specVersion` as written (0.x: `"0.0"`; 1.0: `"1.0"`).
    pub spec_version: String,
    /// The expressions `(X,)`, in control order (the control node's targets).
    pub expressions: Vec<Expression>,
    /// The appended expression control node.
    pub control_node: NodeId,
    /// The humanoid bone map.
    pub humanoid: Vec<HumanBone>,
    /// The lookAt definition.
    pub look_at: LookAt,
    /// Morph binds that move nothing, skipped on import and reported ([`parse`] module doc);
    /// [`Vrm::require_all_binds`] refuses an avatar that has any.
    pub skipped_binds: Vec<SkippedBind>,
}

/// A VRM Animation file's (`.vrma`, VRMC_vrm_animation-1.0) control data: its humanoid map, by
/// which a clip of its nodes is retargeted onto any humanoid ([`crate::anim::retarget`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VrmAnimation {
    /// `specVersion` as written.
    pub spec_version: String,
    /// The humanoid bone map (VRM 1.0 names).
    pub humanoid: Vec<HumanBone>,
}

/// A morph bind skipped on import because it moves nothing (a 1.0 bind on a node without a mesh,
/// a target index the mesh lacks, a 0.x bind of a mesh no node instances).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedBind {
    /// The field, in the importer's dotted form
    /// (`extensions.VRMC_vrm.expressions.preset.happy.morphTargetBinds[0].node`).
    pub field: String,
    /// Why it moves nothing (`node 2 has no mesh`).
    pub reason: String,
}

/// The gaze a frame feeds lookAt, in the lookAt space (VRMC_vrm-1.0 `lookAt.md`): degrees.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Gaze {
    /// Yaw, degrees, positive toward the character's left.
    pub yaw_deg: f32,
    /// Pitch, degrees, positive downward.
    pub pitch_deg: f32,
}

/// What one [`Vrm::apply`] did, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ApplyCounts {
    /// Expression inputs outside [0, 1] clamped this frame.
    pub clamped: u32,
    /// The blink, lookAt and mouth factors of step 3.
    pub factors: [f32; 3],
}

impl Vrm {
    /// The index of the expression named `name`.
    pub fn expression(&self, name: &str) -> Option<usize> {
        self.expressions.iter().position(|e| e.name == name)
    }

    /// The strict reading of [`parse::ReadOptions::strict`], for an avatar already imported: refuse
    /// it when any morph bind was skipped.
    ///
    /// # Errors
    /// [`Error::Format`] naming `file`, the bind's field and why it moves nothing, one per skipped
    /// bind ([`Error::Many`] when several).
    pub fn require_all_binds(&self, file: &str) -> Result<()> {
        Error::collect(
            self.skipped_binds
                .iter()
                .map(|s| {
                    Error::format(
                        file,
                        &s.field,
                        format!(
                            "{}: the bind moves nothing (strict reading refuses it)",
                            s.reason
                        ),
                    )
                })
                .collect(),
        )
    }

    /// Whether a gaze moves anything on this avatar through its lookAt: a lookAt of type
    /// expression with at least one of `lookUp`, `lookDown`, `lookLeft`, `lookRight`, or of type
    /// bone with a humanoid `leftEye` or `rightEye` (VRMC_vrm-1.0 `lookAt.md`). A face driver
    /// whose only job on the avatar is its look-at relies on this.
    pub fn gaze_moves(&self) -> bool {
        match self.look_at.kind {
            LookAtKind::Expression => ["lookUp", "lookDown", "lookLeft", "lookRight"]
                .iter()
                .any(|n| self.expression(n).is_some()),
            LookAtKind::Bone => self.bone("leftEye").is_some() || self.bone("rightEye").is_some(),
        }
    }

    /// A humanoid bone's node.
    pub fn bone(&self, bone: &str) -> Option<NodeId> {
        self.humanoid
            .iter()
            .find(|b| b.bone == bone)
            .map(|b| b.node)
    }

    /// Steps 1–3 of the module doc: `inputs` `(X,)` → `outputs` `(X,)` (both unitless), with
    /// `gaze` feeding a lookAt of type expression. Returns the clamp count and group factors.
    ///
    /// # Panics
    /// When `inputs` or `outputs` is not `(X,)` (a caller bug).
    pub fn evaluate(&self, inputs: &[f32], gaze: Option<Gaze>, outputs: &mut [f32]) -> ApplyCounts {
        let n = self.expressions.len();
        assert!(
            inputs.len() == n && outputs.len() == n,
            "vrm: expression count"
        );
        let mut counts = ApplyCounts::default();
        outputs.copy_from_slice(inputs);
        if let (Some(g), LookAtKind::Expression) = (gaze, self.look_at.kind) {
            let w = self.look_at.expression_weights(g);
            for (name, v) in ["lookUp", "lookDown", "lookLeft", "lookRight"]
                .iter()
                .zip(w)
            {
                if let Some(i) = self.expression(name) {
                    outputs[i] = v;
                }
            }
        }
        for (o, e) in outputs.iter_mut().zip(&self.expressions) {
            if !(0.0..=1.0).contains(o) {
                counts.clamped += 1;
                *o = o.clamp(0.0, 1.0);
            }
            if e.is_binary {
                *o = if *o > 0.5 { 1.0 } else { 0.0 };
            }
        }
        let groups = [Group::Blink, Group::LookAt, Group::Mouth];
        for (k, g) in groups.into_iter().enumerate() {
            let mut amount = 0.0f32;
            for (o, e) in outputs.iter().zip(&self.expressions) {
                if e.group() == Some(g) {
                    continue; // an override of its own group is invalid (spec)
                }
                amount += match e.overrides(g) {
                    Override::None => 0.0,
                    Override::Block => {
                        if *o > 0.0 {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    Override::Blend => *o,
                };
            }
            let factor = 1.0 - amount.clamp(0.0, 1.0);
            counts.factors[k] = factor;
            if factor < 1.0 {
                for (o, e) in outputs.iter_mut().zip(&self.expressions) {
                    if e.group() == Some(g) {
                        *o = if e.is_binary { 0.0 } else { *o * factor };
                    }
                }
            }
        }
        counts
    }

    /// Apply the expressions and lookAt to `pose` (steps 1–5 of the module doc): the control
    /// node's weights are the inputs and become the outputs; each morph bind adds to its target;
    /// a bone lookAt turns the eyes. `rest_world` `(N,)` are the rest pose's world matrices;
    /// `scratch` is reused between frames. Allocation-free once `scratch` has grown.
    pub fn apply(
        &self,
        pose: &mut Pose,
        rest_world: &[Mat4],
        gaze: Option<Gaze>,
        scratch: &mut Vec<f32>,
    ) -> ApplyCounts {
        let c = self.control_node.index();
        let n = self.expressions.len();
        scratch.resize(n, 0.0);
        let Some(inputs) = pose.weights.get(c).filter(|w| w.len() == n) else {
            return ApplyCounts::default();
        };
        let counts = self.evaluate(inputs, gaze, scratch);
        pose.weights[c].copy_from_slice(scratch);
        for (e, &o) in self.expressions.iter().zip(scratch.iter()) {
            if o == 0.0 {
                continue;
            }
            for b in &e.morph_binds {
                if let Some(w) = pose
                    .weights
                    .get_mut(b.node.index())
                    .and_then(|w| w.get_mut(b.target))
                {
                    *w += o * b.weight;
                }
            }
        }
        if let (Some(g), LookAtKind::Bone) = (gaze, self.look_at.kind) {
            let factor = counts.factors[1];
            let g = Gaze {
                yaw_deg: g.yaw_deg * factor,
                pitch_deg: g.pitch_deg * factor,
            };
            let rots = self.look_at.eye_rotations(g, self.version);
            for (bone, q) in ["leftEye", "rightEye"].into_iter().zip(rots) {
                let Some(node) = self.bone(bone) else {
                    continue;
                };
                let (Some(l), Some(w)) = (
                    pose.locals.get_mut(node.index()),
                    rest_world.get(node.index()),
                ) else {
                    continue;
                };
                l.rotation = (l.rotation * crate::anim::head::to_joint_frame(q, w)).normalize();
            }
        }
        counts
    }
}

/// The eye rotation `q` (character frame) as a local rotation on top of a joint whose rest world
/// matrix is `rest_world` (re-exported for tests).
pub fn eye_local(q: Quat, rest_world: &Mat4) -> Quat {
    crate::anim::head::to_joint_frame(q, rest_world)
}
