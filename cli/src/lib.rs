//! `mien`: drive character faces from real animation input and lift the posed geometry into 3D
//! Gaussian splats, on the CPU, wgpu or raw Vulkan. This facade re-exports the crates a user
//! embeds:
//!
//! - the character runtime ([`runtime`], its main types at the root: [`Asset`], [`Device`],
//!   [`Runtime`], …): load a character, attach drivers, [`Runtime::update`] every frame, read
//!   splats, posed vertices, GPU buffers and reports;
//! - the data model, formats, animation signals and CPU reference math ([`core`]);
//! - the backends ([`backends`]: `cpu` always, `wgpu` and `vulkan` behind the features of the same
//!   names, both on by default);
//! - the benchmark harness `mien bench` runs (`bench`, feature `bench`).
//!
//! ```no_run
//! use mien::{Asset, Backend, Device, Runtime, RuntimeOptions};
//! # fn main() -> mien::Result<()> {
//! let asset = Asset::load("facecap.glb")?;
//! let (device, _why) = Device::open(Backend::Auto)?;
//! let mut rt = Runtime::new(asset.into(), &device, &RuntimeOptions::default())?;
//! rt.instance_mut(0)?.play_livelink_csv("take.csv")?;
//! for frame in 0..90 {
//!     rt.update(frame as f64 / 30.0)?; // media time, seconds
//! }
//! // Instance 0's gaussians (the surface lift, the default): centres (G,4) m, colours (G,),
//! // covariances (G,4) + (G,4) m²; written whole as SPZ (or .ply / .glb by the extension).
//! let splats = rt.splats(0)?;
//! mien::core::io::splat_file::write_splats("frame.spz".as_ref(), &splats, &[splats.all()])?;
//! # Ok(()) }
//! ```
//!
//! The `mien` command-line tool (`mien animate`, `inspect`, `bind`, `bake`, `pack`, `calibrate`,
//! `live`, `scenario`, `bench`) is built on this API; `examples/` shows it in use (`embed`,
//! `splat_files`, `bake_take`, `crowd`, `speech_clock`, `wgpu_device`, `vrm_live`).

pub use mien_core as core;
pub use mien_cpu as cpu;
pub use mien_runtime as runtime;

/// Retargeting a clip from another skeleton onto a character ([`mien_runtime::retarget`]).
pub use mien_runtime::retarget;

/// Character files (`mien-character`: model, face, feet, springs, clips, locomotion, cloth, hair):
/// [`character::CharacterDef::load`], then [`character::LoadedCharacter::apply`] on an instance.
pub use mien_runtime::character;

/// Cloth and hair carried by an asset and simulated per instance ([`mien_runtime::dynamics`]).
pub use mien_runtime::dynamics;

/// Headless, deterministic scenarios (`mien scenario run`): [`scenario::prepare`] a file, then
/// [`scenario::run_twice`] it (docs/scenarios.md).
pub use mien_runtime::scenario;

/// The benchmark harness `mien bench` runs (feature `bench`, on with `cli`): the workloads, the
/// bytes each must move, one harness per backend, the peers' export.
#[cfg(feature = "bench")]
pub use mien_benches as bench;

pub use mien_runtime::{
    AppearanceStats, Asset, Backend, BodyReport, Bundle, BundleMemory, BundleOptions, Camera,
    CharacterDef, Device, DeviceOptions, Error, Event, ExpressionSpace, FaceDriver, FaceSources,
    FootPlacement, FrameReport, HeadJointNames, HeadMotionReport, Instance, InstanceFrame,
    InstanceMut, InstanceTotals, LiftInfo, LiftKind, LiftOptions, MAX_INSTANCES, MemoryReport,
    Model, Precision, Result, Runtime, RuntimeOptions, Sampler, Script, Shading, SinkRef, Speech,
    SpeechOptions, Times, decoder,
};

/// The data types the runtime hands out and takes, from `mien-core`: splats `(G,…)`, posed
/// vertices, a character's pose and node transforms, a weight stream, the rules' counts, a slot
/// range, a speech file's format, the splat file formats and their writer.
pub use mien_core::anim::WeightStream;
pub use mien_core::io::speech::SpeechFormat;
pub use mien_core::io::splat_file::{SplatFileReport, SplatFormat, encode_splats, write_splats};
pub use mien_core::lift::{BoundReport, SurfaceOptions, TexelOptions};
pub use mien_core::rig::{Character, ControlStats, Pose, PosedVertices, Transform};
pub use mien_core::sink::{SlotRange, SplatBuffers};

/// The math types in the API (`Mat4`, `Quat`, `Vec3`): glam 0.30, re-exported so a user needs no
/// version of their own.
pub use glam;

/// The backends: `cpu` (the reference), and `wgpu` / `vulkan` behind their features.
pub mod backends {
    pub use mien_cpu as cpu;
    #[cfg(feature = "vulkan")]
    pub use mien_vulkan as vulkan;
    #[cfg(feature = "wgpu")]
    pub use mien_wgpu as wgpu;
}
