//! `mien-vulkan`: mien's rig backend, debug lift and splat sink on raw Vulkan (ash 0.38), running the
//! SPIR-V that `mien-shaders` compiles from the same WGSL the wgpu backend uses, equal to the CPU
//! reference within the conformance bound of `mien_cpu::conformance`.
//!
//! Two layers (STYLE 5): [`raw`] is the thin unsafe layer — direct ash calls with their
//! preconditions stated; the rest is the safe layer, whose handles free themselves in `Drop`
//! ([`Buffer`], descriptor pools, the context's pipelines, pool and cache) and whose submissions keep
//! every resource they use alive until their fence signals.
//!
//! A frame: [`VulkanContext::begin`] (or [`VulkanEncoder::from_raw`] on an engine's command buffer),
//! [`VulkanRigBackend`]'s `encode` (morph, barrier, skin, barrier), [`VulkanDebugLift`]'s `encode`,
//! then [`VulkanContext::submit`] (or the engine's own submit) — one command buffer, one submission.
//! Nothing is allocated per frame; readback only on request. Linear heads (`.aosrig` packs) pose
//! through [`VulkanGnmBackend`] ([`mien_core::gnm::GnmBackend`]): the GNM forward pass, a barrier,
//! the same skin kernel, a barrier.
//!
//! Errors are typed ([`Error`]): no loader, no suitable device, missing features, out of memory,
//! device lost, and a bounded wait ([`device::WAIT_LIMIT`]) instead of a hang.

mod buffer;
pub mod device;
mod device_buffers;
mod encoder;
mod error;
mod gnm;
mod lift;
mod memory;
mod pipelines;
pub mod raw;
mod rig;
mod sink;
mod timing;

pub use ash;
pub use buffer::Buffer;
pub use device::{ContextOptions, VulkanContext};
pub use encoder::VulkanEncoder;
pub use error::{Error, Result};
pub use gnm::VulkanGnmBackend;
pub use lift::{PosedPart, VulkanDebugLift};
pub use memory::{Allocation, DedicatedAllocator, MemoryAllocator, MemoryLocation};
pub use rig::VulkanRigBackend;
pub use sink::VulkanSplatSink;
pub use timing::{Stage, StageTimes};

/// Whether GPU tests must find a device: `MIEN_REQUIRE_GPU=1` (set by `.ci/run`) turns "no device"
/// from a skip into a failure.
pub fn gpu_required() -> bool {
    std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1")
}
