//! A DNA character's per-frame step: the control node's weights (ARKit-52, then the raw controls)
//! → raw controls → [`RigLogic`] → blend-shape channel weights on the head meshes' morph targets and
//! joint deltas on the joints' local transforms — seed 000's ORL backend over mien's own pose, so
//! every backend poses it with its morph blend and skin.
//!
//! **The control node** (named [`CONTROL_NODE_NAME`]) is a geometry-less mesh node the DNA
//! importer appends (as VRM's expression node): its morph targets are the 52 ARKit names, then
//! every raw control's name. Every driver that binds by target name — Live Link streams, speech
//! visemes, the face controller's blink and gaze, `set_controls`, clips — therefore writes the
//! control node, never the face directly. Per frame ([`RigLogicCharacter::evaluate`]):
//!
//! 1. raw = [`ArkitBoardMap::apply`] of the ARKit part (rest + ARKit terms, reached controls
//!    clamped to [0, 1]; unreached controls keep their rest value);
//! 2. a raw-control target with a non-zero weight adds it: `raw[c] = clamp(raw[c] + w, 0, 1)`
//!    (the DNA's own raw-control space, seed 000 `setRig`);
//! 3. [`RigLogicInstance::calculate`] at the character's LOD;
//! 4. each blend-shape channel's weight is **assigned** to its morph target on every head mesh
//!    (what the drivers wrote there is replaced: RigLogic owns the face's targets);
//! 5. each joint's Euler delta is **composed onto** the joint's local transform as the drivers left
//!    it (rest, or a head motion): translation `+= units(Δt)`, rotation `= rotation · R(Δr)`
//!    (the ICT rig README's `R_neutral · R_delta`), scale `*= 1 + Δs`, on mien's axes.

use std::sync::Arc;

use glam::Vec3;

use super::arkit::ArkitBoardMap;
use super::{RigLogic, RigLogicInstance};
use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::io::dna::convert::Units;
use crate::rig::{NodeId, Pose};

/// Name of the control node (and its mesh) a DNA character carries.
pub const CONTROL_NODE_NAME: &str = "DNA controls";

/// The control node's target names: the 52 ARKit names, then `raw_names`.
pub fn control_target_names(raw_names: &[String]) -> Vec<String> {
    ARKIT_52
        .iter()
        .map(|s| s.to_string())
        .chain(raw_names.iter().cloned())
        .collect()
}

/// A DNA character's rig logic, attached to its [`crate::rig::Character`] (`rig_logic`).
#[derive(Clone, Debug)]
pub struct RigLogicCharacter {
    /// The compiled behaviour (Euler joint output).
    pub logic: Arc<RigLogic>,
    /// The LOD evaluated (the one the character's meshes were built for).
    pub lod: usize,
    /// Raw control names `(R,)`, in DNA order.
    pub raw_names: Vec<String>,
    /// ARKit-52 onto the raw controls, with the rest vector.
    pub arkit: ArkitBoardMap,
    /// The control node.
    pub control_node: NodeId,
    /// Per blend-shape channel `(B,)`: the (mesh node, target index) pairs it drives.
    pub channel_targets: Vec<Vec<(NodeId, u32)>>,
    /// Per DNA joint `(J,)`: its node.
    pub joint_nodes: Vec<NodeId>,
    /// The DNA's units and axes.
    pub units: Units,
}

/// What one [`RigLogicCharacter::evaluate`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RigLogicStats {
    /// Reached raw controls clamped into [0, 1] this frame.
    pub clamped: u32,
}

impl RigLogicCharacter {
    /// A fresh per-instance state at this character's LOD.
    pub fn instance(&self) -> RigLogicInstance {
        let mut s = RigLogicInstance::new(&self.logic);
        // The LOD was checked when the character was built.
        let _ = s.set_lod(&self.logic, self.lod);
        s
    }

    /// Steps 1–5 of the module docs on `pose` (the character's pose after its drivers).
    /// `direct` `(R,)`, when given, replaces step 1 (the raw controls set in the DNA's own space,
    /// seed 000 `setRig`); step 2 still adds on top. `raw` is scratch `(R,)`.
    pub fn evaluate(
        &self,
        state: &mut RigLogicInstance,
        pose: &mut Pose,
        direct: Option<&[f32]>,
        raw: &mut Vec<f32>,
    ) -> RigLogicStats {
        let r = self.raw_names.len();
        raw.resize(r, 0.0);
        let mut stats = RigLogicStats::default();
        let mut arkit = [0.0f32; ARKIT_COUNT];
        let w = pose.weights.get(self.control_node.index());
        if let Some(w) = w {
            for (a, v) in arkit.iter_mut().zip(w) {
                *a = if v.is_finite() { *v } else { 0.0 };
            }
        }
        match direct {
            Some(d) if d.len() == r => raw.copy_from_slice(d),
            _ => stats.clamped = self.arkit.apply(&arkit, raw),
        }
        if let Some(w) = w {
            for (c, &d) in w.iter().skip(ARKIT_COUNT).take(r).enumerate() {
                if d != 0.0 && d.is_finite() {
                    raw[c] = (raw[c] + d).clamp(0.0, 1.0);
                }
            }
        }
        // Lengths match by construction (R controls, finite values).
        let _ = state.set_raw(&self.logic, raw);
        state.calculate(&self.logic);

        for (c, targets) in self.channel_targets.iter().enumerate() {
            let v = state.blend_shapes()[c];
            for &(node, t) in targets {
                if let Some(w) = pose
                    .weights
                    .get_mut(node.index())
                    .and_then(|w| w.get_mut(t as usize))
                {
                    *w = v;
                }
            }
        }
        let j = state.joints();
        for (k, node) in self.joint_nodes.iter().enumerate() {
            let d = &j[k * 9..k * 9 + 9];
            if d.iter().all(|&v| v == 0.0) {
                continue;
            }
            let Some(l) = pose.locals.get_mut(node.index()) else {
                continue;
            };
            l.translation += Vec3::from(self.units.position([d[0], d[1], d[2]]));
            if d[3] != 0.0 || d[4] != 0.0 || d[5] != 0.0 {
                l.rotation = (l.rotation * self.units.rotation([d[3], d[4], d[5]])).normalize();
            }
            // Scale deltas follow the axes they name, without the axis map's signs.
            let mut s = Vec3::ONE;
            for (k, col) in self.units.axes.columns.iter().enumerate() {
                if let Some(i) = col.iter().position(|&c| c != 0.0) {
                    s[i] += d[6 + k];
                }
            }
            l.scale *= s;
        }
        stats
    }
}
