//! `mien`: drive character faces from real animation input and lift the posed geometry into 3D
//! Gaussian splats, on the CPU, wgpu or raw Vulkan. This facade re-exports the crates a user
//! embeds:
//!
//! - the character runtime ([`runtime`], its main types at the root: [`Asset`], [`Device`],
//!   [`Runtime`], …): load a character, attach drivers, [`Runtime::update`] every frame, read
//!   splats, posed vertices, GPU buffers and reports;
//! - the data model, formats, animation signals and CPU reference math ([`core`]);
//! - the backends ([`backends`]: `cpu` always, `wgpu` and `vulkan` behind the features of the same
//!   names, both on by default).
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
//! let splats = rt.splats(0)?; // centres (V,4) m, colours, covariances
//! # let _ = splats; Ok(()) }
//! ```
//!
//! The `mien` command-line tool (`mien animate`, `inspect`, `pack`, `scenario`, `bench`) is built
//! on this API; `examples/` shows it in use.

pub use mien_core as core;
pub use mien_cpu as cpu;
pub use mien_runtime as runtime;

pub use mien_runtime::{
    Asset, Backend, Device, DeviceOptions, Error, FaceDriver, FaceSources, FrameReport, Instance,
    InstanceFrame, InstanceMut, LiftOptions, MemoryReport, Model, Result, Runtime,
    RuntimeOptions, Sampler, Script, Shading, SinkRef, Speech, SpeechOptions, Times,
};

/// The backends: `cpu` (the reference), and `wgpu` / `vulkan` behind their features.
pub mod backends {
    pub use mien_cpu as cpu;
    #[cfg(feature = "vulkan")]
    pub use mien_vulkan as vulkan;
    #[cfg(feature = "wgpu")]
    pub use mien_wgpu as wgpu;
}
