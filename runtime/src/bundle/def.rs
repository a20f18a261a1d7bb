//! The bundle blocks of a character file as written (seed 000's `CharacterManifest`: `rig`,
//! `expression_space`, `branches`, `decoders`, `arkit_to_rig`, `pose_anchors`).

use std::collections::BTreeMap;

use serde::Deserialize;

/// `rig`: which rig drives the branches (seed 000 `RigManifest`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigDef {
    /// `gnm` (a linear head pack), `orl` (a MetaHuman DNA through rig logic) or `none` (the
    /// character file's `model`, posed by its own skin and morph targets).
    pub backend: String,
    /// The `.aosrig` pack (`gnm`).
    #[serde(default)]
    pub pack: Option<String>,
    /// The `.dna` file (`orl`).
    #[serde(default)]
    pub dna: Option<String>,
    /// The rig's control names in its own order (head_ext for `gnm`, raw controls for `orl`);
    /// checked against the rig's when given.
    #[serde(default)]
    pub control_names: Vec<String>,
    /// Vertices the rig outputs; 0: not stated.
    #[serde(default)]
    pub vertex_count: u64,
}

/// `expression_space`: what the animation layer sends (seed 000 `ExpressionSpace`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceDef {
    /// `arkit52`, `gnm` or `gnm68`.
    pub kind: String,
    /// Vector width.
    pub dim: usize,
    /// One name per slot, or none.
    #[serde(default)]
    pub names: Vec<String>,
    /// Named runs of slots.
    #[serde(default)]
    pub segments: Vec<SegmentDef>,
    /// For a `gnm`/`gnm68` space driven from ARKit-52: the head_ext slot each ARKit channel drives
    /// (gain 1), or −1; 52 entries in ARKit-52 order. Replaces the pack's own ARKit table.
    #[serde(default)]
    pub arkit_map: Option<Vec<i64>>,
}

/// A named run of slots.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SegmentDef {
    /// Its name (`left_eye`, `lower_face`, …).
    pub name: String,
    /// First slot.
    pub start: usize,
    /// Slots.
    pub count: usize,
}

/// One branch: a named region of the rig's output with its own mesh, slot range and decoders.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchDef {
    /// Unique name (`head`, `eyes`, `teeth`).
    pub name: String,
    /// The branch's mesh: an OBJ over exactly the rig vertices `vertices` (same order), giving
    /// the branch's polygons and texture coordinates. Its positions must match the rig's rest.
    pub mesh: String,
    /// `[first, end)` rig vertices the mesh covers (default: all of them).
    #[serde(default)]
    pub vertices: Option<[u64; 2]>,
    /// The mesh's units: `m`, `cm`, `mm`, or `auto` (default: the one that matches the rig).
    #[serde(default)]
    pub units: Option<String>,
    /// How its gaussians sit on the surface (default: the texel lift at 256²).
    #[serde(default)]
    pub lift: Option<BranchLiftDef>,
    /// Flat display colour (sRGB, 0–1) where no decoder colours it (default mid grey).
    #[serde(default)]
    pub color: Option<[f32; 3]>,
    /// The decoders it runs (names of `decoders`), in order; each output written by one.
    #[serde(default)]
    pub decoders: Vec<String>,
}

/// A branch's lift.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchLiftDef {
    /// `texel` (one gaussian per UV texel; needs the mesh's texture coordinates) or `surface`.
    pub kind: String,
    /// Texel raster side (texel lift), 16 to 8192.
    #[serde(default)]
    pub resolution: Option<u32>,
    /// Gaussians (surface lift).
    #[serde(default)]
    pub target: Option<u32>,
}

/// An appearance decoder (docs/decoders.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecoderDef {
    /// The ONNX model.
    pub file: String,
    /// Its fp16-internal sibling, preferred when present (seed 000 `preferFp16`).
    #[serde(default)]
    pub fp16: Option<String>,
    /// Per-vertex features `(V_branch, F)`, a float32 `.npy` (interpolated to each gaussian by
    /// its barycentrics); needed when the model takes `features`.
    #[serde(default)]
    pub features: Option<String>,
}

/// `arkit_to_rig`: ARKit-52 onto an `orl` rig's controls about a rest (seed 000 `arkitToRig`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArkitToRigDef {
    /// The rest configuration `(R,)`, one value per raw control: ARKit's contribution is added to
    /// it, and the controls ARKit cannot reach hold it.
    pub rest: Vec<f32>,
    /// Per-control trained-domain limits `(R, 2)` the result is clamped to (counted).
    #[serde(default)]
    pub range: Option<Vec<[f32; 2]>>,
}

/// `pose_anchors`: the bundle's baked per-pose head anchors (seed 000; off by default).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseAnchorsDef {
    /// A `mien-pose-anchors` JSON file: `poses` `(P, C)` control vectors and `anchors` `(P, 12)`
    /// row-major 3×4 rigid transforms.
    pub file: String,
    /// Apply them (default false: a blink can move the head, seed 000).
    #[serde(default)]
    pub enabled: bool,
}

/// All the bundle blocks of one character file.
#[derive(Clone, Debug, Default)]
pub struct BundleDefs<'a> {
    /// `rig`.
    pub rig: Option<&'a RigDef>,
    /// `expression_space`.
    pub space: Option<&'a SpaceDef>,
    /// `branches`.
    pub branches: &'a [BranchDef],
    /// `decoders`.
    pub decoders: Option<&'a BTreeMap<String, DecoderDef>>,
    /// `arkit_to_rig`.
    pub arkit_to_rig: Option<&'a ArkitToRigDef>,
    /// `pose_anchors`.
    pub pose_anchors: Option<&'a PoseAnchorsDef>,
}
