//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// mien drives character faces from real animation input and turns the posed geometry into 3D
/// Gaussian splats.
#[derive(Debug, Parser)]
#[command(name = "mien", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Exit codes of `mien animate` (its `--help` and the README list them).
pub const EXIT_CODES: &str = "Exit codes:
  0    the run succeeded; the output folder holds its results
  1    mien refused an input or flag, or a step failed (the message names the file or flag);
       the output folder is as it was
  2    the command line could not be parsed (an unknown flag, a missing or malformed value)
  130  stopped by Ctrl-C or SIGTERM; the output folder is as it was";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Animate a character and write splat frames (.spz; --format ply|glb), a PNG contact sheet
    /// and report.json.
    ///
    /// With no arguments: the built-in body (its character file: a face with 52 ARKit morph
    /// targets, locomotion, spring bones, a simulated cape and an 11,200-strand groom) walks and
    /// talks for a few seconds, written to ./mien-out/; `--character builtin` is the built-in head.
    #[command(after_help = EXIT_CODES)]
    Animate(AnimateArgs),
    /// Show what a character (.glb/.gltf/.vrm/.aosrig/.dna), ARKit stream (.csv Live Link Face, .json
    /// Audio2Face or MediaPipe, .pbtxt), speech timing or splat file (.ply, .spz, KHR_gaussian_splatting
    /// .glb) holds.
    Inspect(InspectArgs),
    /// Bake a real head into a linear-head pack (.aosrig): a folder of blendshape OBJs (a neutral
    /// plus one full mesh per shape) or a glTF/GLB mesh with morph targets.
    ///
    /// Deltas (shape − neutral) become an fp16 basis with one scale per shape; coefficients are
    /// grouped into regions by name (left_eye, right_eye, brows, lower_face, tongue, pupils, other)
    /// and an ARKit-52 table is generated from the names. The pack stores metres. See
    /// docs/formats/aosrig.md.
    Pack(PackArgs),
    /// Fit a per-channel stream calibration from a neutral take (the face at rest): each channel's
    /// median becomes its offset (gain 1, clamp 0–1), written as mien-calibration JSON for
    /// `mien animate --calibration`. Edit the gains for channels a tracker barely moves.
    Calibrate(CalibrateArgs),
    /// Bind a captured splat cloud (.ply, SuperSplat compressed .ply, .spz) to a character's mesh,
    /// so it animates with the character's morph targets and skin: each gaussian is embedded in
    /// its nearest triangle of the rest pose. Writes a .ply every viewer opens as the capture, with
    /// the embedding beside it; play it with `mien animate --character … --capture FILE`.
    Bind(crate::bind::BindArgs),
    /// Bake a take into the character's own GLB: the meshes, skin and morph targets unchanged, one
    /// animation appended with LINEAR keys at --fps for the morph weights mien poses with (after
    /// the per-frame rules) and every joint the take moves. Deterministic bytes.
    #[command(after_help = BAKE_HELP)]
    Bake(crate::bake::BakeArgs),
    /// Retarget a clip from another skeleton onto a character and bake it into the character's
    /// own GLB: bones mapped by humanoid role (VRM/VRMA humanoid maps, else bone names) or by a
    /// `mien-retarget` map, each target bone turned as its source bone turns relative to its
    /// reference pose (rest, or an automatic T-pose), the hips moving by the hip-height ratio.
    #[command(after_help = crate::retarget::HELP)]
    Retarget(crate::retarget::RetargetArgs),
    /// Drive a character live from Live Link Face over UDP: packets decoded (v6), filtered by
    /// subject, ordered by a jitter buffer and posed as they fall due; malformed, late and
    /// duplicate packets are counted, never fatal. Stops at --duration, at the end of a
    /// --replay, or on Ctrl-C — each writes the --record take and prints the report.
    #[command(after_help = LIVE_HELP)]
    Live(LiveArgs),
    /// Run a strict, headless scenario (docs/scenarios.md): steps on the media clock, assertions,
    /// hashes checked by a second run from scratch, captures.
    Scenario(crate::scenario::ScenarioArgs),
    /// Time the benchmark workloads (W1–W6, benches/README.md) on the CPU and GPU backends against
    /// a copy baseline measured in the same run; print a table, write bench.json with --out, or
    /// export the arrays the peer scripts read with --export.
    Bench(crate::bench::BenchArgs),
}

/// Where the rig runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// The CPU reference backend (rayon-parallel).
    Cpu,
    /// wgpu compute (Vulkan on Linux); a software adapter (lavapipe) is accepted when asked for.
    Wgpu,
    /// Raw Vulkan (ash), the same kernels as SPIR-V; `MIEN_VK_VALIDATION=1` runs it under the
    /// Khronos validation layer and fails on any message.
    Vulkan,
    /// A real GPU when one is present, else the CPU; the report says why.
    Auto,
}

impl BackendChoice {
    /// The flag's value: `cpu`, `wgpu`, `vulkan`, `auto`.
    pub fn name(self) -> &'static str {
        mien_runtime::Backend::from(self).name()
    }
}

impl From<BackendChoice> for mien_runtime::Backend {
    fn from(b: BackendChoice) -> Self {
        match b {
            BackendChoice::Cpu => mien_runtime::Backend::Cpu,
            BackendChoice::Wgpu => mien_runtime::Backend::Wgpu,
            BackendChoice::Vulkan => mien_runtime::Backend::Vulkan,
            BackendChoice::Auto => mien_runtime::Backend::Auto,
        }
    }
}

/// Which lift turns the posed character into gaussians.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LiftChoice {
    /// Gaussians spread over every triangle, flat along the surface, coloured by the character's
    /// textures (`--gaussians` of them).
    Surface,
    /// One gaussian per covered texel of a UV raster (`--texel-res` per side; at least one per
    /// triangle), coloured by that texel.
    Texel,
    /// One round gaussian per vertex (`--sigma`, `--shading`): shows the mesh's vertices.
    Debug,
}

impl LiftChoice {
    /// `surface`, `texel` or `debug`.
    pub fn name(self) -> &'static str {
        match self {
            LiftChoice::Surface => "surface",
            LiftChoice::Texel => "texel",
            LiftChoice::Debug => "debug",
        }
    }
}

/// How each gaussian is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shading {
    /// Vertex colours when the character has them, else normals.
    Auto,
    /// The character's vertex colours (COLOR_0); light grey where it has none.
    Tint,
    /// 0.5 + 0.5·normal: shows the surface shape of any character.
    Normal,
    /// One flat light grey.
    Flat,
}

/// Whether the animator runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnimatorChoice {
    /// For the built-in head, or when a face, look-at or state script is given.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

/// Whether spring bones run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SpringsChoice {
    /// When the character has spring bones.
    Auto,
    /// Always (refused for a character without them).
    On,
    /// Never: the chains stay as animated.
    Off,
}

/// Parse `X,Y,Z` (three finite numbers, each within ±1e6 m: the rule of scenarios and state
/// scripts).
fn parse_point(s: &str) -> Result<[f32; 3], String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|x| x.trim().parse::<f32>().map_err(|e| format!("`{x}`: {e}")))
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        [x, y, z] if v.iter().all(|c| c.is_finite()) => {
            mien_runtime::face_rules::point([*x, *y, *z])?;
            Ok([*x, *y, *z])
        }
        _ => Err(format!("`{s}` is not three finite numbers X,Y,Z")),
    }
}

/// Parse `--ground` ([`mien_core::anim::ground::Ground::parse`]).
fn parse_ground(s: &str) -> Result<mien_core::anim::ground::Ground, String> {
    mien_core::anim::ground::Ground::parse(s)
}

/// Parse `LEFT,RIGHT`: two non-empty names.
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once(',') {
        Some((l, r)) if !l.is_empty() && !r.is_empty() && !r.contains(',') => {
            Ok((l.to_string(), r.to_string()))
        }
        _ => Err(format!("`{s}` is not two joint names LEFT,RIGHT")),
    }
}

/// How speech timings become viseme weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Sampler {
    /// Each viseme held at full weight over its half-open interval.
    Held,
    /// Attack / hold / release envelopes, overlaps scaled to sum ≤ 1.
    Envelope,
}

/// Property layout of the written `.ply` files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlyLayout {
    /// The INRIA 3DGS properties with degree-0 colour: x y z nx ny nz f_dc_0..2 opacity
    /// scale_0..2 rot_0..3 (17 floats per splat). SuperSplat, antimatter15/splat, gsplat and most
    /// viewers that read the header open it.
    Dc,
    /// The same plus 45 zero `f_rest_*` (62 floats per splat, 3.6× larger), for INRIA's SIBR
    /// viewer, which reads fixed-size records.
    Sh3,
    /// Write no .ply files (preview and report only).
    None,
}

/// The per-frame splat file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FrameFormat {
    /// 3DGS `.ply` (the layout `--ply` picks): SuperSplat plays `frame_00000.ply …` as a sequence.
    Ply,
    /// Niantic's SPZ version 3 (gzip, about 10× smaller than `.ply`): Spark and the SPZ tools
    /// read it.
    Spz,
    /// glTF binary with Khronos' KHR_gaussian_splatting (linear scales, activated opacity, a
    /// COLOR_0 fallback): Babylon.js, PlayCanvas and Cesium read it; other viewers show points.
    Glb,
}

/// `--speech` and its flags: what `mien animate` and `mien bake` share.
#[derive(Debug, Args)]
pub struct SpeechArgs {
    /// Lip-sync from a speech timing file: Montreal Forced Aligner TextGrid, Gentle JSON, Rhubarb
    /// Lip Sync TSV/JSON, Amazon Polly speech marks, Azure viseme events or mien's own utterance JSON
    /// (recognised by content). The speech owns the mouth; a clip or --arkit stream keeps the rest.
    /// A bake records its label, duration and every interval.
    #[arg(long, value_name = "FILE", help_heading = "Speech")]
    pub speech: Option<PathBuf>,

    /// Force the speech file's format instead of detecting it.
    #[arg(long, value_name = "FORMAT", requires = "speech", value_parser = ["textgrid", "gentle", "rhubarb-tsv", "rhubarb-json", "polly", "azure", "mien"], help_heading = "Speech")]
    pub speech_format: Option<String>,

    /// Media time at which the utterance starts (where its audio starts on the clock), seconds
    /// (-1e6 to 1e6).
    #[arg(
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        requires = "speech",
        help_heading = "Speech"
    )]
    pub audio_offset: f64,

    /// How visemes follow the timings: `held` holds each one at full weight over its interval
    /// (caller-aligned, exact); `envelope` rises before each sound and releases after it (attack
    /// 0.07 s, release 0.09 s, lead 0.03 s), overlaps scaled to sum ≤ 1.
    #[arg(long, value_enum, default_value_t = Sampler::Held, requires = "speech", help_heading = "Speech")]
    pub sampler: Sampler,

    /// With `--sampler envelope` only: hold every kept mouth shape at least this long, 0–1 s
    /// (0 = off). A shorter shape borrows time from a neighbour that can spare it, else merges
    /// with its shorter neighbour (the shortest first; the longer shape shows), so the shape
    /// changes at most 1/SECONDS times a second: 0.125 s allows 8 (stops sub-100 ms chattering).
    #[arg(
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        requires = "speech",
        help_heading = "Speech"
    )]
    pub min_hold: f64,
}

/// `mien animate` arguments.
#[derive(Debug, Args)]
pub struct AnimateArgs {
    /// Character: a glTF 2.0 file (.glb or .gltf) with morph targets and/or a skin, a VRM avatar
    /// (.vrm, 0.x or 1.0: its expressions driven through ARKit → VRM presets, visemes → aa ih ou
    /// ee oh, blink and lookAt), a linear head pack (.aosrig, from `mien pack`) driven through
    /// its baked ARKit-52 map, a MetaHuman DNA (.dna, 2.1–2.8: posed at LOD 0 by its own
    /// RigLogic, ARKit onto its face board), or a character file (`*.character.json`: a model with its face,
    /// foot placement, spring bones, borrowed clips, locomotion, cloth, hair and hidden parts;
    /// docs/characters/, docs/hair.md). `builtin` is the built-in sample head, `builtin-body`
    /// the built-in body. Default: the built-in body.
    #[arg(short, long, value_name = "FILE", help_heading = "Character")]
    pub character: Option<PathBuf>,

    /// Drive the face with an ARKit-52 weight stream: a Live Link Face .csv, or an Audio2Face
    /// blendshape export .json. Channels are mapped onto the character's morph targets by name;
    /// unmatched channels are listed in the report with the nearest target names, and every
    /// channel's value range is reported.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "clip",
        help_heading = "Animation"
    )]
    pub arkit: Option<PathBuf>,

    /// The speech flags (shared with `mien bake`).
    #[command(flatten)]
    pub speech: SpeechArgs,

    /// A face definition (`mien-face` JSON, docs/schemas/face.schema.json): expressions, visemes,
    /// blink, gaze and clamping. Default: built-in ARKit expressions and blink, and the character's
    /// `viseme_*` targets, else ARKit combinations, for speech. Turns the animator on.
    #[arg(long, value_name = "FILE", help_heading = "Face")]
    pub face: Option<PathBuf>,

    /// Look at a point, metres in the character's world (`X,Y,Z`, each within ±1e6; +Z is in
    /// front of a glTF character). Turns the animator on.
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true, value_parser = parse_point, help_heading = "Face")]
    pub look_at: Option<[f32; 3]>,

    /// A state script (`mien-state-script` JSON): avatar-state signals, expressions, look-at and
    /// blinks at media times. Turns the animator on.
    #[arg(long, value_name = "FILE", help_heading = "Face")]
    pub state_script: Option<PathBuf>,

    /// The animator (blinks, gaze, expressions, avatar state): `auto` runs it for the built-in head
    /// and whenever --face, --look-at or --state-script is given; a character's own capture or an
    /// ARKit stream already carries blinks and gaze.
    #[arg(long, value_enum, default_value_t = AnimatorChoice::Auto, help_heading = "Face")]
    pub animator: AnimatorChoice,

    /// Play one of the character's own clips, by name or by index (`--clip 0`; real files often
    /// leave clips unnamed), `all` of them together, or `rest` for the rest pose (what a capture
    /// for `mien bind` is made in). Default: the first clip together with the other clips of its
    /// take (exporters split one take into `node|Take 001|BaseLayer` clips), or the built-in
    /// performance for the sample head.
    #[arg(long, value_name = "NAME|INDEX", help_heading = "Animation")]
    pub clip: Option<String>,

    /// Calibrate the --arkit stream per channel before it is bound: a mien-calibration JSON file
    /// (neutral offset, gain, clamp per channel; `mien calibrate` fits the offsets from a neutral
    /// take). Every value the clamp changes is counted in the report.
    #[arg(
        long,
        value_name = "FILE",
        requires = "arkit",
        help_heading = "Animation"
    )]
    pub calibration: Option<PathBuf>,

    /// The joint an --arkit stream's HeadYaw/HeadPitch/HeadRoll turn, by exact name. Default: found
    /// by standard name (`head`, `Head`, `mixamorig:Head`, `J_Bip_C_Head`, `CC_Base_Head`…; for a
    /// rigid export whose eyes are not below the head, the node that carries head and eyes).
    #[arg(
        long,
        value_name = "NAME",
        requires = "arkit",
        help_heading = "Animation"
    )]
    pub head_joint: Option<String>,

    /// The neck joint, by exact name (with a head, each takes half of every head angle). Default:
    /// found by standard name (`neck`, `mixamorig:Neck`, `J_Bip_C_Neck`…).
    #[arg(
        long,
        value_name = "NAME",
        requires = "arkit",
        help_heading = "Animation"
    )]
    pub neck_joint: Option<String>,

    /// The eye joints the stream's eye angles turn, by exact name: `LEFT,RIGHT`. Default: found by
    /// standard name (`LeftEye`, `eye_L`, `eyeLeft`, `J_Adj_L_FaceEye`…).
    #[arg(long, value_name = "LEFT,RIGHT", requires = "arkit", value_parser = parse_pair, help_heading = "Animation")]
    pub eye_joints: Option<(String, String)>,

    /// Leave the stream's head and eye angles unapplied (they are applied by default).
    #[arg(long, requires = "arkit", help_heading = "Animation")]
    pub no_head_motion: bool,

    /// Play a clip of another skeleton, retargeted onto the character (docs/retarget.md): any
    /// glTF/GLB, VRM or VRM Animation file. Bones are matched by humanoid role unless
    /// --retarget-map names them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["arkit", "clip"], help_heading = "Body")]
    pub retarget: Option<PathBuf>,

    /// The --retarget source's clip, by name or index (default: its first).
    #[arg(
        long,
        value_name = "NAME|INDEX",
        requires = "retarget",
        help_heading = "Body"
    )]
    pub retarget_clip: Option<String>,

    /// A `mien-retarget` bone map for --retarget (default: the automatic map).
    #[arg(
        long,
        value_name = "FILE",
        requires = "retarget",
        help_heading = "Body"
    )]
    pub retarget_map: Option<PathBuf>,

    /// The pose each skeleton's retargeting is relative to: `rest` or `t-pose` (an A-pose and a
    /// T-pose character then agree).
    #[arg(long, value_enum, default_value_t = crate::retarget::ReferenceArg::Rest, requires = "retarget", help_heading = "Body")]
    pub reference: crate::retarget::ReferenceArg,

    /// Place the feet on the --ground: `auto` (legs found by humanoid role) or a `mien-foot-ik`
    /// definition file.
    #[arg(long, value_name = "auto|FILE", help_heading = "Body")]
    pub foot_ik: Option<String>,

    /// The ground the feet stand on (--foot-ik's, or a character file's foot placement):
    /// `flat[:HEIGHT]`, `slope:DEGREES` (rising along +Z, level at the origin; −89 to 89),
    /// `step:HEIGHT[:Z]` (up by HEIGHT from z = Z, default 0.2 m ahead) or `none`. Metres, within
    /// ±10,000.
    #[arg(long, value_name = "SHAPE", value_parser = parse_ground, help_heading = "Body")]
    pub ground: Option<mien_core::anim::ground::Ground>,

    /// A character file's locomotion speed, m/s (0–100): 0 idles, its walk speed walks at 1×;
    /// the character walks the way it faces. Default 0, and for the built-in body (no
    /// --character) its walk speed (about 1.2 m/s). Frames stay in the character's own space;
    /// where it walked to is in report.json (`body.final_placement`).
    #[arg(
        long,
        value_name = "M/S",
        allow_negative_numbers = true,
        help_heading = "Body"
    )]
    pub speed: Option<f64>,

    /// Spring bones (VRM `VRMC_springBone` / 0.x `secondaryAnimation`): `auto` simulates them
    /// when the character has them.
    #[arg(long, value_enum, default_value_t = SpringsChoice::Auto, help_heading = "Body")]
    pub springs: SpringsChoice,

    /// Frames per second, sampled on the media clock (0.1–1000).
    #[arg(
        long,
        default_value_t = 30.0,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Timeline"
    )]
    pub fps: f64,

    /// Number of frames (1–100000). Default: enough to cover the animation from --start to its
    /// end.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::validate::MAX_FRAMES)),
        help_heading = "Timeline"
    )]
    pub frames: Option<u32>,

    /// Media time of the first frame, seconds (at most the animation's end unless --frames is
    /// given).
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        help_heading = "Timeline"
    )]
    pub start: f64,

    /// Output folder, created if missing. A run's result is the whole folder: it is replaced
    /// only when the run succeeds (Ctrl-C or an error leave it as it was). It must be new or hold
    /// only mien's report.json, preview.png and frames/.
    #[arg(
        short,
        long,
        default_value = "mien-out",
        value_name = "DIR",
        help_heading = "Output"
    )]
    pub out: PathBuf,

    /// Format of the per-frame splat files (`frames/frame_00000.spz`, `.ply` or `.glb`, numbered
    /// so viewers play them as a sequence). SPZ by default: the built-in head's 181 frames of
    /// 105,000 gaussians are about 100 MB as SPZ, 1.2 GB as `.ply` (`--format ply`).
    #[arg(long, value_enum, default_value_t = FrameFormat::Spz, help_heading = "Output")]
    pub format: FrameFormat,

    /// Layout of the per-frame `.ply` files with `--format ply` (`none`: no frame files in any
    /// format).
    #[arg(long, value_enum, default_value_t = PlyLayout::Dc, help_heading = "Output")]
    pub ply: PlyLayout,

    /// Frames shown in the preview contact sheet (evenly spaced over the run; 0 = no preview; at
    /// most 64, fewer for large characters: the frames kept for it hold at most 16 M splats).
    #[arg(
        long,
        default_value_t = 12,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(u32).range(0..=i64::from(crate::validate::MAX_SHEET)),
        help_heading = "Output"
    )]
    pub sheet: u32,

    /// Width and height of one contact-sheet cell, pixels (16–4096; the whole sheet at most
    /// 16384).
    #[arg(
        long,
        default_value_t = 320,
        value_name = "PX",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(u32).range(
            i64::from(crate::validate::CELL_RANGE.0)..=i64::from(crate::validate::CELL_RANGE.1)
        ),
        help_heading = "Output"
    )]
    pub cell: u32,

    /// The lift: `surface` (textured gaussians over the surface; the default), `texel` (one per
    /// covered texel of a UV raster) or `debug` (one per vertex). A character bundle's branches
    /// (with their decoders) are its lift when this is left out.
    #[arg(long, value_enum, help_heading = "Splats")]
    pub lift: Option<LiftChoice>,

    /// The camera a bundle's view-dependent decoders see: its eye `X,Y,Z` in metres in the
    /// character's space, looking at the centre of the rest pose (default: in front of the
    /// character at three times its height).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_xyz, help_heading = "Splats")]
    pub camera: Option<[f64; 3]>,

    /// A bundle's fp16 decoder siblings: `auto` (on the CUDA provider only: on the CPU they run
    /// slower), `on`, `off`.
    #[arg(long, value_enum, default_value_t = Toggle::Auto, help_heading = "Splats")]
    pub fp16: Toggle,

    /// A bundle's pose anchors: `auto` (as its file says; off by default, seed 000), `on`, `off`.
    #[arg(long, value_enum, default_value_t = Toggle::Auto, help_heading = "Splats")]
    pub pose_anchors: Toggle,

    /// Surface lift: gaussians wanted over the whole character (at least one per triangle; fewer
    /// where textures are coarse). 1 to 16,777,216 [default: 100000].
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Splats"
    )]
    pub gaussians: Option<u32>,

    /// A captured splat cloud bound to the character by `mien bind`: played instead of a lift.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Splats",
        conflicts_with_all = ["lift", "gaussians", "texel_res", "sigma", "shading"]
    )]
    pub capture: Option<PathBuf>,

    /// Texel lift: the UV raster's side, texels (16 to 8192) [default: 256].
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Splats"
    )]
    pub texel_res: Option<u32>,

    /// Debug lift: gaussian standard deviation, metres (more than 0, at most 1000). Default: 0.6 ×
    /// the median triangle edge of the character's rest pose.
    #[arg(
        long,
        value_name = "METRES",
        allow_negative_numbers = true,
        help_heading = "Splats"
    )]
    pub sigma: Option<f64>,

    /// Debug lift: gaussian colouring [default: auto: vertex colours when the character has them,
    /// else normals].
    #[arg(long, value_enum, help_heading = "Splats")]
    pub shading: Option<Shading>,

    /// Where the rig runs.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, help_heading = "Backend")]
    pub backend: BackendChoice,

    /// Hide the progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `mien bake`'s extra help: examples and exit codes.
pub const BAKE_HELP: &str = "Examples:
  mien bake --character avatar.glb --arkit take.csv --out baked.glb
  mien bake --character avatar.vrm --speech line.TextGrid --sampler envelope --min-hold 0.125 --out line.glb
  mien bake --verify baked.glb                     check a baked file and print its timing records

Exit codes:
  0    baked (or verified)
  1    mien refused an input or flag, or the baked file does not verify (the message names the
       file, take or flag); nothing was written
  2    the command line could not be parsed
  A bake stopped by a signal writes nothing: every output is replaced atomically at the end.";

/// `mien live`'s extra help.
pub const LIVE_HELP: &str = "Examples:
  mien live -c avatar.vrm --record take.csv        listen on UDP 11111 until Ctrl-C
  mien live --replay take.gesichter --port 0       replay a recording over loopback (a test)

Exit codes: 0 the session ran (however it ended); 1 a refused input or flag (a port in use,
an unreadable recording); 2 the command line could not be parsed.";

/// `mien live` arguments.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Character (.glb, .gltf, .vrm, .aosrig). Default: the built-in sample head.
    #[arg(short, long, value_name = "FILE")]
    pub character: Option<PathBuf>,
    /// UDP port to listen on (the app's default is 11111; 0 picks a free port, for --replay).
    #[arg(long, allow_negative_numbers = true, default_value_t = 11111)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0", value_name = "IP")]
    pub bind: std::net::IpAddr,
    /// Only play packets of this subject name (the app's "Subject Name").
    #[arg(long, value_name = "NAME")]
    pub subject: Option<String>,
    /// Jitter-buffer delay, milliseconds: a packet is posed this long after its frame time.
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = 50.0,
        value_name = "MS"
    )]
    pub delay_ms: f64,
    /// At most this many pose updates per second (each packet is posed as it falls due; a
    /// faster sender's packets in between are skipped and counted).
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = 120.0,
        value_name = "N"
    )]
    pub fps: f64,
    /// Stop after this many seconds (default: at the end of a --replay, else on Ctrl-C).
    #[arg(long, allow_negative_numbers = true, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Save every accepted packet, in frame order, as a Live Link CSV take (read back by
    /// `mien animate --arkit`), written when the session ends.
    #[arg(long, value_name = "FILE.csv")]
    pub record: Option<PathBuf>,
    /// Send this recording (.gesichter: gzip of length-prefixed v6 packets) to the listening
    /// port over loopback at its own frame rate, and stop when it has played.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Replay speed (2 sends twice as fast).
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = 1.0,
        value_name = "X"
    )]
    pub replay_speed: f64,
    /// Where the rig runs.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// Write the session report (counts, latency percentiles) here as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
}

/// `mien calibrate` arguments.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The neutral take: an ARKit-52 stream (.csv Live Link Face; .json Audio2Face or MediaPipe;
    /// .pbtxt MediaPipe) of the face at rest.
    #[arg(value_name = "NEUTRAL")]
    pub neutral: PathBuf,

    /// The calibration file to write (replaced atomically).
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
}

/// `mien inspect` arguments.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A character (.glb, .gltf, .vrm), a linear head pack (.aosrig), an ARKit-52 stream (.csv Live
    /// Link Face; .json Audio2Face or MediaPipe; .pbtxt MediaPipe), a speech timing file (Gentle,
    /// MFA TextGrid, Rhubarb, Polly, Azure, mien utterance) or a splat file (.ply, SuperSplat
    /// compressed .ply, .spz, KHR_gaussian_splatting .glb).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The unit of the source positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnitsChoice {
    /// OBJ: the neutral's largest bounding-box side below 5 → metres, 5 to 100 → centimetres,
    /// above → refused (pass a unit); glTF: metres (the glTF specification's unit).
    Auto,
    /// Metres.
    M,
    /// Centimetres (× 0.01).
    Cm,
    /// Millimetres (× 0.001).
    Mm,
}

/// Parse `auto`, `none` or `FIRST-LAST` (zero-based vertex indices, inclusive).
fn parse_eyeballs(s: &str) -> Result<mien_core::gnm::bake::EyeSource, String> {
    use mien_core::gnm::bake::EyeSource;
    match s {
        "auto" => Ok(EyeSource::Auto),
        "none" => Ok(EyeSource::None),
        _ => {
            let (a, b) = s
                .split_once('-')
                .ok_or_else(|| format!("`{s}` is not auto, none or FIRST-LAST"))?;
            let first: u32 = a
                .trim()
                .parse()
                .map_err(|_| format!("`{a}` is not a vertex index"))?;
            let last: u32 = b
                .trim()
                .parse()
                .map_err(|_| format!("`{b}` is not a vertex index"))?;
            if first > last {
                return Err(format!(
                    "{first}-{last}: the first vertex is after the last"
                ));
            }
            Ok(EyeSource::Range { first, last })
        }
    }
}

/// `mien pack` arguments.
#[derive(Debug, Args)]
pub struct PackArgs {
    /// A folder of blendshape OBJs (one neutral, one full mesh per shape, each named after its
    /// shape) or a .glb/.gltf with morph targets.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    /// The pack to write (written atomically: a temporary file, then a rename).
    #[arg(short, long, value_name = "FILE.aosrig")]
    pub out: PathBuf,

    /// The unit of the source positions; the pack always stores metres.
    #[arg(long, value_enum, default_value_t = UnitsChoice::Auto)]
    pub units: UnitsChoice,

    /// OBJ folder: the neutral's file name (default: the one .obj with `neutral` in its name).
    #[arg(long, value_name = "FILE")]
    pub neutral: Option<String>,

    /// glTF: the mesh to bake, by name or index (default: the mesh with the most morph targets).
    #[arg(long, value_name = "NAME|INDEX")]
    pub mesh: Option<String>,

    /// The eyeball vertices, for eye rotation centres and weights: `auto` (ICT-FaceKit's
    /// documented range when the folder is ICT-FaceKit's, else none), `none`, or `FIRST-LAST`
    /// (zero-based, inclusive; split into left and right by the sign of x).
    #[arg(long, value_name = "auto|none|FIRST-LAST", default_value = "auto", value_parser = parse_eyeballs)]
    pub eyeballs: mien_core::gnm::bake::EyeSource,

    /// Also write the full bake report (every shape's scale, largest delta and fp16 error) as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,

    /// Hide the progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `X,Y,Z`: three finite numbers.
fn parse_xyz(s: &str) -> std::result::Result<[f64; 3], String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>().map_err(|e| format!("`{x}`: {e}")))
        .collect::<std::result::Result<_, _>>()?;
    match v.as_slice() {
        [x, y, z] if v.iter().all(|a| a.is_finite()) => Ok([*x, *y, *z]),
        _ => Err(format!("`{s}` is not three finite numbers X,Y,Z")),
    }
}

/// `auto`, `on` or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Toggle {
    /// The default rule.
    Auto,
    /// On.
    On,
    /// Off.
    Off,
}

impl Toggle {
    /// `None` for auto.
    pub fn get(self) -> Option<bool> {
        match self {
            Toggle::Auto => None,
            Toggle::On => Some(true),
            Toggle::Off => Some(false),
        }
    }
}
