//! `mien-vulkan`: mien's GPU pipeline on raw Vulkan (ash 0.38) — the device layer of `mien-gpu`
//! ([`mien_gpu::GpuDevice`] for [`VulkanContext`], in `gpu.rs`) under the stages `mien-gpu` writes
//! once — running the SPIR-V that `mien-shaders` compiles from the same WGSL the wgpu backend
//! uses, equal to the CPU reference within the conformance bound of `mien_cpu::conformance`.
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
mod frames;
mod gpu;
mod memory;
mod pipelines;
pub mod raw;
mod staging;
mod timing;

pub use ash;
pub use buffer::Buffer;
pub use device::{ContextOptions, VulkanContext};
pub use encoder::VulkanEncoder;
pub use error::{Error, Result};
pub use gpu::VulkanBindGroup;
pub use memory::{Allocation, DedicatedAllocator, MemoryAllocator, MemoryLocation};
pub use mien_gpu::{Stage, StageTimes};

/// [`mien_core::rig::RigBackend`] on Vulkan: [`mien_gpu::GpuRigBackend`] over [`VulkanContext`].
pub type VulkanRigBackend = mien_gpu::GpuRigBackend<VulkanContext>;
/// [`mien_core::gnm::GnmBackend`] on Vulkan: [`mien_gpu::GpuGnmBackend`] over [`VulkanContext`].
pub type VulkanGnmBackend = mien_gpu::GpuGnmBackend<VulkanContext>;
/// The debug lift on Vulkan: [`mien_gpu::GpuDebugLift`] over [`VulkanContext`].
pub type VulkanDebugLift = mien_gpu::GpuDebugLift<VulkanContext>;
/// The splat sink on Vulkan: [`mien_gpu::GpuSplatSink`] over [`VulkanContext`].
pub type VulkanSplatSink = mien_gpu::GpuSplatSink<VulkanContext>;
/// A lift's posed input on Vulkan ([`mien_gpu::PosedPart`]).
pub type PosedPart<'a> = mien_gpu::PosedPart<'a, VulkanContext>;

/// Whether GPU tests must find a device: `MIEN_REQUIRE_GPU=1` (set by `.ci/run`) turns "no device"
/// from a skip into a failure.
pub fn gpu_required() -> bool {
    mien_gpu::gpu_required()
}
