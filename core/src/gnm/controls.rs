//! ARKit-52 controls for a linear head. A linear head has no morph targets to bind animation to by
//! name, so it is driven through a *control character*: one node whose one-vertex mesh carries the
//! 52 ARKit targets (all deltas zero). Clips, weight streams, speech and the animator pose that
//! character exactly as they pose a glTF face; each frame its 52 weights go through the pack's
//! [`ArkitGnmMap`] into head_ext.
//!
//! Source: seed 000 (`ExpressionSpace` of kind `gnm`: the animator produces ARKit-52 and the
//! space's `map` turns it into the rig vector every frame).

use super::arkit::{ArkitGnmMap, DEFAULT_CLAMP};
use super::pack::GnmPack;
use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::error::{Error, Result};
use crate::rig::{
    Character, DenseTarget, Hierarchy, Mesh, MeshId, MorphSet, Node, NodeId, Pose, Primitive,
};

/// Name of the control character's node.
pub const CONTROL_NODE: &str = "gnm_controls";

/// The control character of a linear head loaded from `source`: one node [`CONTROL_NODE`] with a
/// one-vertex mesh whose 52 targets are named [`ARKIT_52`] in canonical order (deltas zero).
///
/// # Errors
/// None expected; a validation failure of the built character is returned as is.
pub fn control_character(source: &str) -> Result<Character> {
    character_with(source, ARKIT_52.iter().map(|s| (*s).to_owned()).collect())
}

/// What one target of a head's control character drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlTarget {
    /// ARKit-52 channel (canonical index): through the pack's table.
    Arkit(usize),
    /// One coefficient (absolute head_ext slot) directly, gain 1: a shape no ARKit channel drives.
    Coefficient(usize),
}

/// The control character of `pack`: a target for each ARKit-52 channel that drives something — a
/// term of the pack's table, or an `eyeLook*` channel (gaze) — in canonical order, then one per
/// coefficient no term reaches, named as the pack names it (so `--face` and clips can reach a
/// shape like ICT's `cheekRaiser_L`). A channel that drives nothing has no target, so stream
/// binding, speech and face files report it as missing instead of pretending to drive it.
/// Without a table or names: the 52 channels (the pack refuses to be driven by them anyway).
///
/// # Errors
/// None expected; a validation failure of the built character is returned as is.
pub fn head_control_character(
    pack: &GnmPack,
    source: &str,
) -> Result<(Character, Vec<ControlTarget>)> {
    let Some(table) = &pack.header.arkit else {
        let targets = (0..ARKIT_COUNT).map(ControlTarget::Arkit).collect();
        return Ok((control_character(source)?, targets));
    };
    let layout = &pack.header.head_ext;
    let mut reached = vec![false; layout.expr_dim()];
    let mut driving = [false; ARKIT_COUNT];
    for (channel, terms) in table {
        if let Some(i) = crate::anim::arkit::arkit_index(channel) {
            driving[i] |= !terms.is_empty();
        }
        for t in terms {
            if let Some(r) = layout.slice(&t.region) {
                if let Some(x) = reached.get_mut(r.start + t.index) {
                    *x = true;
                }
            }
        }
    }
    for i in super::arkit::GAZE_CHANNELS {
        driving[i] = true;
    }
    let mut targets: Vec<ControlTarget> = (0..ARKIT_COUNT)
        .filter(|&i| driving[i])
        .map(ControlTarget::Arkit)
        .collect();
    let mut names: Vec<String> = targets
        .iter()
        .map(|t| match t {
            ControlTarget::Arkit(i) => ARKIT_52[*i].to_owned(),
            ControlTarget::Coefficient(_) => String::new(),
        })
        .collect();
    for (slot, name) in pack.header.names.iter().enumerate() {
        let clash = names.iter().any(|n| n.eq_ignore_ascii_case(name))
            || crate::anim::arkit::arkit_index(name).is_some();
        if !reached.get(slot).copied().unwrap_or(true) && !clash && !name.is_empty() {
            targets.push(ControlTarget::Coefficient(slot));
            names.push(name.clone());
        }
    }
    Ok((character_with(source, names)?, targets))
}

/// One node [`CONTROL_NODE`] whose one-vertex mesh has a zero-delta target per name.
fn character_with(source: &str, target_names: Vec<String>) -> Result<Character> {
    let n = target_names.len();
    let morph = MorphSet::from_dense(1, &vec![DenseTarget::default(); n])?;
    let mesh = Mesh {
        name: Some(CONTROL_NODE.into()),
        primitives: vec![Primitive {
            positions: vec![[0.0; 3]],
            normals: vec![[0.0, 0.0, 1.0]],
            morph,
            ..Default::default()
        }],
        target_names,
        default_weights: vec![0.0; n],
    };
    let nodes = vec![Node {
        name: Some(CONTROL_NODE.into()),
        mesh: Some(MeshId(0)),
        ..Default::default()
    }];
    let hierarchy = Hierarchy::new(source, &nodes)?;
    let ch = Character {
        source: source.into(),
        nodes,
        hierarchy,
        scene_roots: vec![NodeId(0)],
        meshes: vec![mesh],
        ..Default::default()
    };
    ch.validate()?;
    Ok(ch)
}

/// Per-frame ARKit → head_ext for one pack: the resolved map and the head_ext buffer it fills.
#[derive(Clone, Debug)]
pub struct GnmDriver {
    /// The resolved map.
    pub map: ArkitGnmMap,
    arkit: [f32; ARKIT_COUNT],
    head_ext: Vec<f32>,
    /// What each control-character target drives (the 52 channels in order by default).
    targets: Vec<ControlTarget>,
}

impl GnmDriver {
    /// Resolve the pack's baked ARKit table (or `table` when given) with `clamp` (default
    /// [`DEFAULT_CLAMP`]) and gaze on.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `file` when neither the pack nor the caller has a table — ARKit
    /// input to a linear head without a map is refused, never guessed — and every
    /// [`ArkitGnmMap::build`] error.
    pub fn new(
        pack: &GnmPack,
        table: Option<&super::arkit::ArkitGnmTable>,
        clamp: Option<f32>,
        file: &str,
    ) -> Result<Self> {
        let table = table.or(pack.header.arkit.as_ref()).ok_or_else(|| Error::Invalid {
            what: format!("{file}: ARKit → GNM map"),
            reason: "the pack has no baked ARKit table and none was given; cannot drive its coefficients from ARKit weights (re-bake it with `mien pack`, or pass a map)".into(),
        })?;
        let map = ArkitGnmMap::build(
            &pack.header.head_ext,
            table,
            clamp.unwrap_or(DEFAULT_CLAMP),
            true,
        )?;
        let head_ext = vec![0.0; map.dim];
        Ok(GnmDriver {
            map,
            arkit: [0.0; ARKIT_COUNT],
            head_ext,
            targets: (0..ARKIT_COUNT).map(ControlTarget::Arkit).collect(),
        })
    }

    /// Read the control character's weights as `targets` (from [`head_control_character`])
    /// instead of the 52 channels in order.
    #[must_use]
    pub fn with_targets(mut self, targets: Vec<ControlTarget>) -> Self {
        self.targets = targets;
        self
    }

    /// Map the control character's pose to head_ext `(E+4,)`: its node-0 weights are the 52
    /// ARKit channels. Allocates nothing.
    pub fn head_ext(&mut self, pose: &Pose) -> &[f32] {
        self.head_ext_counting(pose, &mut 0)
    }

    /// [`head_ext`](Self::head_ext), counting clamped coefficients into `clamped`.
    pub fn head_ext_counting(&mut self, pose: &Pose, clamped: &mut u64) -> &[f32] {
        self.arkit.fill(0.0);
        let w = pose.weights.first().map_or(&[][..], Vec::as_slice);
        for (t, x) in self.targets.iter().zip(w) {
            if let ControlTarget::Arkit(i) = t {
                self.arkit[*i] = *x;
            }
        }
        *clamped += u64::from(self.map.map(&self.arkit, &mut self.head_ext));
        for (t, x) in self.targets.iter().zip(w) {
            if let ControlTarget::Coefficient(slot) = t {
                if let Some(o) = self.head_ext.get_mut(*slot) {
                    *o += *x;
                    if o.abs() > self.map.clamp {
                        *o = o.clamp(-self.map.clamp, self.map.clamp);
                        *clamped += 1;
                    }
                }
            }
        }
        &self.head_ext
    }

    /// The last frame's ARKit weights.
    pub fn arkit(&self) -> &[f32; ARKIT_COUNT] {
        &self.arkit
    }
}
