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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Animate a character and write splat frames (.ply), a PNG contact sheet and report.json.
    ///
    /// With no arguments: the built-in sample head (52 ARKit morph targets) performs a few seconds of
    /// speech, blinks, a smile and gaze, written to ./mien-out/.
    Animate(AnimateArgs),
    /// Show what a character (.glb/.gltf) or animation file (Live Link Face .csv) holds.
    Inspect(InspectArgs),
}

/// Where the rig runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// The CPU reference backend (rayon-parallel).
    Cpu,
    /// wgpu compute (Vulkan on Linux); a software adapter (lavapipe) is accepted when asked for.
    Wgpu,
    /// A real GPU when one is present, else the CPU; the report says why.
    Auto,
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

/// `mien animate` arguments.
#[derive(Debug, Args)]
pub struct AnimateArgs {
    /// Character: a glTF 2.0 file (.glb or .gltf) with morph targets and/or a skin.
    /// Default: the built-in sample head.
    #[arg(short, long, value_name = "FILE", help_heading = "Character")]
    pub character: Option<PathBuf>,

    /// Drive the face with an ARKit-52 weight stream (Live Link Face .csv). Channels are mapped onto
    /// the character's morph targets by name; unmatched channels are listed in the report.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "clip",
        help_heading = "Animation"
    )]
    pub arkit: Option<PathBuf>,

    /// Play one of the character's own clips, by name or by index (`--clip 0`; real files often
    /// leave clips unnamed), or `all` of them together. Default: the first clip together with the
    /// other clips of its take (exporters split one take into `node|Take 001|BaseLayer` clips), or
    /// the built-in performance for the sample head.
    #[arg(long, value_name = "NAME|INDEX", help_heading = "Animation")]
    pub clip: Option<String>,

    /// Frames per second, sampled on the media clock.
    #[arg(
        long,
        default_value_t = 30.0,
        value_name = "N",
        help_heading = "Timeline"
    )]
    pub fps: f64,

    /// Number of frames. Default: enough to cover the whole animation.
    #[arg(long, value_name = "N", help_heading = "Timeline")]
    pub frames: Option<u32>,

    /// Media time of the first frame, seconds.
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "SECONDS",
        help_heading = "Timeline"
    )]
    pub start: f64,

    /// Output folder (created if missing). Its `frames/`, `preview.png` and `report.json` are
    /// replaced only when the run succeeds.
    #[arg(
        short,
        long,
        default_value = "mien-out",
        value_name = "DIR",
        help_heading = "Output"
    )]
    pub out: PathBuf,

    /// Layout of the per-frame splat files.
    #[arg(long, value_enum, default_value_t = PlyLayout::Dc, help_heading = "Output")]
    pub ply: PlyLayout,

    /// Frames shown in the preview contact sheet (evenly spaced over the run; 0 = no preview).
    #[arg(long, default_value_t = 12, value_name = "N", help_heading = "Output")]
    pub sheet: u32,

    /// Width and height of one contact-sheet cell, pixels.
    #[arg(
        long,
        default_value_t = 320,
        value_name = "PX",
        help_heading = "Output"
    )]
    pub cell: u32,

    /// Gaussian standard deviation, metres. Default: 0.6 × the median triangle edge of the character.
    #[arg(long, value_name = "METRES", help_heading = "Splats")]
    pub sigma: Option<f32>,

    /// Gaussian colouring.
    #[arg(long, value_enum, default_value_t = Shading::Auto, help_heading = "Splats")]
    pub shading: Shading,

    /// Where the rig runs.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, help_heading = "Backend")]
    pub backend: BackendChoice,

    /// Hide the progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `mien inspect` arguments.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A character (.glb, .gltf) or an animation stream (.csv Live Link Face export).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}
