//! `mien-gpu`: mien's GPU pipeline written once over a small device layer.
//!
//! [`GpuDevice`] is the layer: typed buffers ([`Typed`]), uploads and read-backs, a compute pass
//! that binds a pipeline made from the shared WGSL/SPIR-V (`mien-shaders`, [`Entry`]) and
//! dispatches, barriers, timestamps, submissions and the waits for frames in flight, limits and
//! optional features ([`Caps`]). `mien-wgpu` implements it on wgpu, `mien-vulkan` on ash (over its
//! raw + safe layers). The stages are written once over it:
//!
//! - [`GpuRigBackend`] ([`mien_core::rig::RigBackend`]): morph tiles, skin, tangents; batches of N
//!   instances; chunk planning under the binding limit; per-frame staging and the batch setters;
//! - [`GpuGnmBackend`] ([`mien_core::gnm::GnmBackend`]): the linear head's tiles and chunks, then
//!   the same skin kernel;
//! - [`GpuDebugLift`] ([`mien_core::lift::Lift`]) and [`GpuSplatSink`]
//!   ([`mien_core::sink::SplatSink`]);
//! - [`GpuBoundData`] / [`GpuBoundLift`]: bound gaussians (surface, texel, capture lifts);
//! - [`GpuHairData`] / [`GpuHairLift`]: hair strands interpolated from uploaded guides and drawn
//!   as gaussians.
//!
//! `mien_wgpu::WgpuRigBackend` is `GpuRigBackend<WgpuContext>`, `mien_vulkan::VulkanRigBackend`
//! is `GpuRigBackend<VulkanContext>`, and so on: a new kernel needs one host-side implementation
//! here to run on both.

mod bound;
mod device;
mod gnm;
mod hair;
mod handles;
mod kernel;
mod lift;
mod rig;
mod sink;
mod timing;
mod typed;

pub use bound::{GpuBoundData, GpuBoundLift};
pub use device::{Bind, Caps, Dispatch, FRAMES_IN_FLIGHT, GpuDevice, Usage};
pub use gnm::{COOP_MIN_BATCH, GpuGnmBackend};
pub use hair::{GpuHairData, GpuHairLift};
pub use kernel::{Entry, Slot};
pub use lift::{GpuDebugLift, PosedPart};
pub use rig::{GpuRigBackend, Vertex};
pub use sink::{GpuSplatSink, SinkPage};
pub use timing::{PassTimes, QUERIES, Stage, StageTimes};
pub use typed::Typed;

/// Whether GPU tests must find a device: `MIEN_REQUIRE_GPU=1` (set by `.ci/run`) turns "no
/// device" from a skip into a failure.
pub fn gpu_required() -> bool {
    std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1")
}
