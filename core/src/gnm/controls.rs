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
    let morph = MorphSet::from_dense(1, &vec![DenseTarget::default(); ARKIT_COUNT])?;
    let mesh = Mesh {
        name: Some(CONTROL_NODE.into()),
        primitives: vec![Primitive {
            positions: vec![[0.0; 3]],
            normals: vec![[0.0, 0.0, 1.0]],
            morph,
            ..Default::default()
        }],
        target_names: ARKIT_52.iter().map(|s| (*s).to_owned()).collect(),
        default_weights: vec![0.0; ARKIT_COUNT],
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
        })
    }

    /// Map the control character's pose to head_ext `(E+4,)`: its node-0 weights are the 52
    /// ARKit channels. Allocates nothing.
    pub fn head_ext(&mut self, pose: &Pose) -> &[f32] {
        self.head_ext_counting(pose, &mut 0)
    }

    /// [`head_ext`](Self::head_ext), counting clamped coefficients into `clamped`.
    pub fn head_ext_counting(&mut self, pose: &Pose, clamped: &mut u64) -> &[f32] {
        if let Some(w) = pose.weights.first() {
            for (a, x) in self.arkit.iter_mut().zip(w) {
                *a = *x;
            }
        }
        *clamped += u64::from(self.map.map(&self.arkit, &mut self.head_ext));
        &self.head_ext
    }

    /// The last frame's ARKit weights.
    pub fn arkit(&self) -> &[f32; ARKIT_COUNT] {
        &self.arkit
    }
}
