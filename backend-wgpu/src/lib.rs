//! `mien-wgpu`: mien's GPU pipeline on wgpu compute — the device layer of `mien-gpu`
//! ([`mien_gpu::GpuDevice`] for [`WgpuContext`]) under the stages `mien-gpu` writes once, from the
//! shared WGSL kernels of `mien-shaders`, equal to the CPU reference (`mien-cpu`) within the
//! conformance bound.
//!
//! A frame is recorded into one command encoder — `WgpuRigBackend::encode`
//! ([`mien_core::rig::RigBackend::encode`]: morph pass, skin pass for every uploaded rig) then
//! [`WgpuDebugLift::record`] for each lift — and submitted once by the caller; nothing is
//! allocated per frame and nothing is read back unless asked
//! ([`mien_core::rig::RigBackend::read_vertices`], [`WgpuSplatSink::read`]).
//!
//! Linear heads (`.aosrig` packs) pose through [`WgpuGnmBackend`] ([`mien_core::gnm::GnmBackend`]):
//! the GNM forward pass, then the same skin kernel, into the caller's encoder.
//!
//! ```no_run
//! use mien_core::lift::{DebugLiftParams, Lift};
//! use mien_core::rig::RigBackend;
//! use mien_core::sink::SplatSink;
//! # fn demo(rig: &mien_core::rig::RigData, controls: &mien_core::rig::RigControls) -> mien_core::Result<()> {
//! let ctx = mien_wgpu::WgpuContext::new(&Default::default())?;
//! let mut backend = mien_wgpu::WgpuRigBackend::new(&ctx);
//! let h = backend.upload(rig)?;
//! let mut sink = mien_wgpu::WgpuSplatSink::new(&ctx, 100_000)?;
//! let range = sink.allocate(backend.vertex_count(h))?;
//! let mut lift = mien_wgpu::WgpuDebugLift::new(&backend, h, &sink, DebugLiftParams::new(range, range.count))?;
//! backend.set_controls(h, controls)?;
//! let mut enc = ctx.device().create_command_encoder(&Default::default());
//! backend.encode(&mut enc)?;
//! lift.encode(&mut enc, &backend, &mut sink)?;
//! ctx.submit(enc);
//! # Ok(()) }
//! ```

mod context;
mod device;
mod error;
mod timing;

pub use context::{ContextOptions, WgpuContext};
pub use error::{Error, Result};
pub use mien_gpu::{Stage, StageTimes};
pub use timing::Timestamps;
/// The wgpu this crate is built on (an engine sharing its device must use the same version).
pub use wgpu;

/// [`mien_core::rig::RigBackend`] on wgpu: [`mien_gpu::GpuRigBackend`] over [`WgpuContext`].
pub type WgpuRigBackend = mien_gpu::GpuRigBackend<WgpuContext>;
/// [`mien_core::gnm::GnmBackend`] on wgpu: [`mien_gpu::GpuGnmBackend`] over [`WgpuContext`].
pub type WgpuGnmBackend = mien_gpu::GpuGnmBackend<WgpuContext>;
/// The debug lift on wgpu: [`mien_gpu::GpuDebugLift`] over [`WgpuContext`].
pub type WgpuDebugLift = mien_gpu::GpuDebugLift<WgpuContext>;
/// The splat sink on wgpu: [`mien_gpu::GpuSplatSink`] over [`WgpuContext`].
pub type WgpuSplatSink = mien_gpu::GpuSplatSink<WgpuContext>;
/// A lift's posed input on wgpu ([`mien_gpu::PosedPart`]).
pub type PosedPart<'a> = mien_gpu::PosedPart<'a, WgpuContext>;

/// Whether GPU tests must find an adapter: `MIEN_REQUIRE_GPU=1` (set by `.ci/run`) turns "no
/// adapter" from a skip into a failure.
pub fn gpu_required() -> bool {
    mien_gpu::gpu_required()
}
