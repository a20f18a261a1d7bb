//! `report.json`: what a run read, did, dropped and wrote.

use serde::Serialize;

/// The whole report.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// `mien <version>`.
    pub tool: String,
    /// The command line.
    pub command: Vec<String>,
    /// What was loaded.
    pub character: CharacterReport,
    /// What drove it.
    pub animation: AnimationReport,
    /// The timeline.
    pub frames: FramesReport,
    /// Gaussian size and colouring.
    pub splats: SplatsReport,
    /// Which backend ran and why.
    pub backend: BackendReport,
    /// Morph weight rules applied.
    pub morphs: MorphReport,
    /// Wall times, milliseconds.
    pub timings_ms: Timings,
    /// Memory: slots and bytes.
    pub memory: MemoryReport,
    /// Files written (relative to the output folder).
    pub outputs: OutputsReport,
    /// The body: the retargeted clip's report, foot placement and spring bones (when any ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// A character bundle's decoders: the camera, decodes, times, memory per branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub appearance: Option<crate::bundle::AppearanceReport>,
}

/// The character.
#[derive(Debug, Default, Serialize)]
pub struct CharacterReport {
    /// Path or `<built-in sample head>`.
    pub source: String,
    /// Meshes drawn (mesh nodes in the scene).
    pub mesh_instances: usize,
    /// Vertices posed per frame.
    pub vertices: usize,
    /// Triangles.
    pub triangles: usize,
    /// Morph targets over all drawn meshes.
    pub morph_targets: usize,
    /// Stored CSR entries.
    pub morph_entries: usize,
    /// Skins and their joint counts.
    pub skin_joints: Vec<usize>,
    /// Clips (name or `(unnamed)`).
    pub clips: Vec<String>,
    /// Required glTF extensions.
    pub required_extensions: Vec<String>,
    /// Bounds of the rest pose, metres: min, max.
    pub bounds_m: [[f32; 3]; 2],
    /// Importer notes (what it changed or ignored).
    pub notes: Vec<String>,
    /// The linear head model, when the character is an `.aosrig` pack.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linear_head: Option<crate::subject::LinearHeadReport>,
    /// A VRM avatar's version, expressions, humanoid bones and lookAt (its expression control
    /// node is one of the mesh nodes and its expressions among the morph targets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vrm: Option<String>,
}

/// The animation source.
#[derive(Debug, Default, Serialize)]
pub struct AnimationReport {
    /// `clip`, `arkit`, `builtin` or `rest`.
    pub kind: String,
    /// Clip name / stream file.
    pub name: String,
    /// Media-time span of the source, seconds.
    pub span_s: [f64; 2],
    /// Channel binding (streams only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<serde_json::Value>,
    /// Per stream channel, bound or not, the values' range and the counts outside `[0, 1]` and
    /// `±2` (streams only; `mien_core::anim::ChannelRange`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_ranges: Option<Vec<mien_core::anim::ChannelRange>>,
    /// Anything worth knowing (e.g. which joints the stream's head and eye angles turn).
    pub notes: Vec<String>,
    /// The speech layer (`--speech`): file, format, conversions, sampler, viseme bindings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speech: Option<serde_json::Value>,
    /// The animator: face, script, avatar states over time, the last frame's state hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animator: Option<serde_json::Value>,
    /// The stream's head and eye angles: channels found, joints turned, whether applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_motion: Option<serde_json::Value>,
}

/// The timeline.
#[derive(Debug, Default, Serialize)]
pub struct FramesReport {
    /// Frames posed.
    pub count: u32,
    /// Frames per second.
    pub fps: f64,
    /// `--start`: media time of the first frame, seconds.
    pub start_s: f64,
    /// Media time of the first and last frame, seconds.
    pub span_s: [f64; 2],
}

/// How each gaussian is sized and coloured.
#[derive(Debug, Default, Serialize)]
pub struct SplatsReport {
    /// The lift (`surface`, `debug`).
    pub lift: String,
    /// Gaussians per frame.
    pub gaussians: u32,
    /// What the surface lift built: triangles, fallback frames, the textures decoded (image,
    /// format, width, height) and any that failed, triangles coloured by texture / plain / normal.
    pub surface: Option<mien_core::lift::BoundReport>,
    /// Surface lift: the `--gaussians` target (the lift places about that many, at least one per
    /// triangle, fewer where textures are coarse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gaussians_requested: Option<u32>,
    /// Texel lift: the raster's side, texels (one gaussian per covered texel, at least one per
    /// triangle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texel_resolution: Option<u32>,
    /// `--capture`: the bound capture played (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureReport>,
    /// Debug lift only (absent otherwise): σ of every gaussian, metres.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigma_m: Option<f32>,
    /// Debug lift only: whether σ was derived from the mesh (no `--sigma`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigma_derived: Option<bool>,
    /// Debug lift only: where σ came from (`--sigma`, or the rule and the median edge it used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigma_rule: Option<String>,
    /// Debug lift only: `--shading` as asked (`auto`, `tint`, `normal`, `flat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shading_requested: Option<String>,
    /// Debug lift only: the shading used (`auto` resolved: `tint` with vertex colours, else
    /// `normal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shading: Option<String>,
}

/// The bound capture a run played.
#[derive(Debug, Default, Serialize)]
pub struct CaptureReport {
    /// The bound-capture file (`--capture`).
    pub file: String,
    /// The character it was bound to (its header's label).
    pub bound_to: String,
    /// Gaussians it holds.
    pub gaussians: u64,
    /// Joint anchors its far gaussians ride (0: none were left rigid to a joint).
    pub joint_anchors: u32,
}

/// The backend.
#[derive(Debug, Default, Serialize)]
pub struct BackendReport {
    /// What was asked (`cpu`, `auto`).
    pub requested: String,
    /// What ran.
    pub used: String,
    /// Why (for `auto`).
    pub reason: String,
    /// The GPU adapter (name, type, backend, driver), when a GPU backend ran.
    pub adapter: Option<String>,
    /// CPU threads (rayon).
    pub threads: usize,
}

/// Weight rules.
#[derive(Debug, Default, Serialize)]
pub struct MorphReport {
    /// Active limit per mesh and frame.
    pub active_limit: usize,
    /// Weights clamped to ±2, all frames.
    pub clamped: u64,
    /// Non-finite weights zeroed, all frames.
    pub non_finite: u64,
    /// (mesh instance, target) pairs dropped by the active limit, all frames.
    pub dropped: u64,
    /// Most non-zero weights one mesh instance had in one frame, before the active limit.
    pub peak_nonzero: u32,
    /// Distinct dropped targets with the first frame each was dropped.
    pub dropped_targets: Vec<DroppedTarget>,
}

/// A target the active limit dropped.
#[derive(Debug, Serialize)]
pub struct DroppedTarget {
    /// Mesh node name or index.
    pub mesh: String,
    /// Target name.
    pub target: String,
    /// First frame it was dropped.
    pub first_frame: u32,
    /// Frames it was dropped in.
    pub frames: u32,
}

/// Wall times, milliseconds.
#[derive(Debug, Default, Serialize)]
pub struct Timings {
    /// Loading and validating inputs.
    pub load: f64,
    /// Sampling the animation and building controls (CPU), all frames.
    pub animate: f64,
    /// Rig passes (morph + skin), all frames.
    pub rig: f64,
    /// Lift passes, all frames.
    pub lift: f64,
    /// Writing .ply files.
    pub ply: f64,
    /// Rasterising and writing the preview.
    pub preview: f64,
    /// The whole run.
    pub total: f64,
    /// Mean rig pass per frame.
    pub rig_per_frame: f64,
    /// Mean lift pass per frame.
    pub lift_per_frame: f64,
    /// The cloth and hair simulations on the host, all frames (0 without cloth or hair).
    pub dynamics: f64,
    /// GPU time per stage from timestamp queries, all frames (GPU backends whose adapter has them).
    pub gpu: Option<GpuTimes>,
}

/// GPU milliseconds per stage, summed over all frames.
#[derive(Debug, Default, Serialize)]
pub struct GpuTimes {
    /// Morph CSR blend passes.
    pub morph: f64,
    /// Skinning passes.
    pub skin: f64,
    /// Lift passes.
    pub lift: f64,
    /// Mean of the three per frame.
    pub per_frame: f64,
}

/// Memory.
#[derive(Debug, Default, Serialize)]
pub struct MemoryReport {
    /// Sink capacity, slots.
    pub sink_slots: u32,
    /// Slots owned by the character's lift.
    pub character_slots: u32,
    /// Bytes the rig backend holds.
    pub rig_bytes: u64,
    /// Bytes the sink's four buffers hold.
    pub sink_bytes: u64,
    /// Bytes of the splat frames kept for the contact sheet (at most 16 Mi splats × 52 bytes).
    pub preview_bytes: u64,
    /// The linear head's pack: file, basis, host bytes and each blob (`.aosrig` characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linear_head: Option<crate::subject::PackMemoryReport>,
}

/// Files written.
#[derive(Debug, Default, Serialize)]
pub struct OutputsReport {
    /// `frames/frame_00000.ply` … (count and first/last name).
    pub ply_files: u32,
    /// First and last .ply file names.
    pub ply_span: Vec<String>,
    /// Bytes of all .ply files.
    pub ply_bytes: u64,
    /// `--ply` layout (`dc`, `sh3`, or `none`: no .ply files).
    pub ply_layout: String,
    /// Splats per .ply.
    pub splats_per_frame: u64,
    /// `preview.png`, when written.
    pub preview: Option<String>,
    /// Frames shown in the preview.
    pub preview_frames: Vec<u32>,
    /// `--sheet`: frames asked for in the preview.
    pub preview_frames_requested: u32,
    /// Why the preview shows fewer frames than asked for (the memory budget), when it does.
    pub preview_note: Option<String>,
    /// How the preview looks at the character (its front; a face close-up row for a full body).
    /// The per-frame file format (`ply`, `spz`); `ply_files`, `ply_bytes` and `ply_span` count
    /// the frame files of either.
    pub frame_format: String,
    /// SPZ frames: log-scales clamped to the format's byte range (σ under 45 µm or over 380 m).
    pub spz_scales_clamped: u64,
    pub preview_view: String,
    /// Raster work of the preview, pixel visits (at most 2·10⁹).
    pub preview_work: u64,
    /// What happened to the output folder's surroundings (stale folders of stopped runs).
    pub notes: Vec<String>,
}
