//! `mien-runtime`: the character runtime of mien. Load a character once ([`Asset`]: glTF/GLB, a
//! linear head pack `.aosrig`, or the built-in head), open a device ([`Device`]: the CPU, wgpu or
//! Vulkan — yours or mien's), create a [`Runtime`] of N instances, attach drivers to each
//! ([`InstanceMut`]: an ARKit-52 stream, the character's clips, speech with its media-clock
//! transport, the face driver), then call [`Runtime::update`] with the media time every frame: it
//! poses and lifts every instance in one submission. Read back what you need — splats
//! ([`Runtime::splats`]), posed vertices ([`Runtime::posed`]), the GPU buffers themselves
//! ([`Runtime::sink`]), the per-frame report ([`Runtime::last_frame`]) and memory
//! ([`Runtime::memory`]).
//!
//! ```no_run
//! use mien_runtime::{Asset, Backend, Device, Runtime, RuntimeOptions};
//! # fn main() -> mien_runtime::Result<()> {
//! let asset = Asset::builtin();
//! let (device, why) = Device::open(Backend::Auto)?;
//! println!("posing on {} ({why})", device.name());
//! let mut rt = Runtime::new(asset.into(), &device, &RuntimeOptions::default())?;
//! rt.instance_mut(0)?.play_livelink_csv("take.csv")?;
//! rt.update(0.5)?;
//! let splats = rt.splats(0)?; // instance 0's G gaussians (the surface lift by default)
//! println!("{} splats", splats.len());
//! # Ok(()) }
//! ```
//!
//! Units everywhere: metres, radians, seconds on the media clock (f64). The backends are chosen
//! at build time by the `wgpu` and `vulkan` features and at run time by [`Backend`]; every backend
//! poses the same math as the CPU reference (`mien-cpu`), within the bounds its tests state.

pub mod appearance;
pub mod asset;
pub mod bake;
pub mod body;
pub mod bundle;
pub mod capture;
pub mod character;
pub mod curves;
pub mod device;
pub mod dynamics;
pub mod engine;
pub mod error;
pub mod face;
pub mod face_rules;
mod head_motion;
pub mod inspect;
pub mod instance;
pub mod lift;
pub mod live;
mod memory;
pub mod posed;
pub mod retarget;
pub mod runtime;
pub mod scenario;
pub mod space;
pub mod speech;
pub mod take;
pub mod text;
mod vrm;

pub use appearance::{AppearanceStats, CAMERA_EPSILON_M, Camera};
pub use asset::{Asset, Model};
pub use body::BodyReport;
pub use bundle::{Bundle, BundleMemory, BundleOptions};
pub use character::{CharacterDef, LoadedCharacter};
pub use device::{Backend, Device, DeviceOptions};
pub use engine::{SinkRef, Times};
pub use error::{Error, Result};
pub use face::{Event, FaceDriver, FaceSources, Script};
pub use instance::{FootPlacement, HeadMotionReport, Instance, InstanceMut, InstanceTotals};
pub use memory::HOST_BYTES_PER_VERTEX;
pub use mien_core::anim::head::HeadJointNames;
pub use mien_cpu::Precision;
/// Appearance decoders through ONNX Runtime ([`mien_decoder`]), as the bundle loader uses them.
pub use mien_decoder as decoder;
pub use runtime::{
    FrameReport, InstanceFrame, LiftInfo, LiftKind, LiftOptions, MAX_INSTANCES, MemoryReport,
    Runtime, RuntimeOptions, Shading,
};
pub use space::ExpressionSpace;
pub use speech::{Sampler, Speech, SpeechOptions};

/// A node's name, or `node <i>`.
pub fn node_label(ch: &mien_core::rig::Character, i: usize) -> String {
    ch.nodes
        .get(i)
        .and_then(|n| n.name.clone())
        .unwrap_or_else(|| format!("node {i}"))
}
