//! The backend a run poses with, behind one small interface: CPU (the reference), wgpu or Vulkan
//! (`engine_vulkan.rs`).

use std::time::Duration;
#[cfg(feature = "wgpu")]
use std::time::Instant;

#[cfg(any(feature = "wgpu", feature = "vulkan"))]
use anyhow::Context as _;
use anyhow::{Result, bail, ensure};
use glam::Mat4;
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{ControlStats, RigBackend, RigControls, RigData, RigHandle};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};

use mien_cpu::{CpuDebugLift, CpuEncoder, CpuRigBackend, CpuSplatSink};

use crate::args::BackendChoice;

/// Wall and GPU time a run spent posing.
#[derive(Clone, Copy, Debug, Default)]
pub struct EngineTimes {
    /// Rig passes (CPU: the work; GPU: recording and submitting).
    pub rig: Duration,
    /// Lift passes (likewise).
    pub lift: Duration,
    /// GPU time per stage from timestamp queries, summed over frames, ms: morph, skin, lift.
    pub gpu_ms: Option<[f64; 3]>,
}

/// One character posed and lifted per frame.
pub trait Engine {
    /// `cpu` or `wgpu`.
    fn name(&self) -> &'static str;
    /// The adapter, for the report (`None` on the CPU).
    fn adapter(&self) -> Option<String>;
    /// Set the next frame's controls (rig engines).
    fn set_controls(&mut self, controls: &RigControls) -> Result<ControlStats>;
    /// Set the next frame of a linear head (head engines): `head_ext` `(E+4,)` — coefficients,
    /// then pitch/yaw of each eye in radians — and joint world matrices `(J,)`, metres.
    fn set_head_ext(&mut self, _head_ext: &[f32], _joint_world: &[Mat4]) -> Result<()> {
        bail!("this engine poses a rig's morph targets and skins, not a linear head")
    }
    /// The last frame's posed positions `(V,3)`, metres, when the engine holds them on the CPU
    /// (no readback); `None` on GPU engines.
    fn posed(&self) -> Option<&[[f32; 3]]> {
        None
    }
    /// Pose the rig alone and read the posed positions back (the rest pose, before the lift exists).
    fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>>;
    /// Create a sink of exactly the rig's vertex count and the lift into it; `params.range` must be
    /// `0..V` (what a fresh sink allocates first).
    fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()>;
    /// Record rig and lift into one submission.
    fn frame(&mut self) -> Result<()>;
    /// The lift's slots of the last frame (a readback on the GPU).
    fn splats(&mut self) -> Result<SplatBuffers>;
    /// Wait for outstanding work.
    fn finish(&mut self) -> Result<()>;
    /// Times so far.
    fn times(&self) -> EngineTimes;
    /// Bytes of the rig backend and of the sink.
    fn bytes(&self) -> (u64, u64);
}

/// The CPU engine.
pub struct CpuEngine {
    backend: CpuRigBackend,
    handle: RigHandle,
    sink: Option<(CpuSplatSink, CpuDebugLift, SlotRange)>,
    enc: CpuEncoder,
}

impl CpuEngine {
    fn new(rig: &RigData) -> Result<Self> {
        let mut backend = CpuRigBackend::new();
        let handle = backend.upload(rig)?;
        Ok(CpuEngine {
            backend,
            handle,
            sink: None,
            enc: CpuEncoder::default(),
        })
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn adapter(&self) -> Option<String> {
        None
    }
    fn set_controls(&mut self, controls: &RigControls) -> Result<ControlStats> {
        Ok(self.backend.set_controls(self.handle, controls)?)
    }
    fn posed(&self) -> Option<&[[f32; 3]]> {
        Some(self.backend.posed(self.handle).0)
    }
    fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
        self.backend.encode(&mut CpuEncoder::default())?;
        Ok(self.backend.posed(self.handle).0.to_vec())
    }
    fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
        let nv = self.backend.vertex_count(self.handle);
        let mut sink = CpuSplatSink::new(nv);
        let range = sink.allocate(nv)?;
        crate::engine::check_lift_range(range, &params, nv)?;
        let lift = CpuDebugLift::new(&self.backend, self.handle, &sink, params)?;
        self.sink = Some((sink, lift, range));
        Ok(())
    }
    fn frame(&mut self) -> Result<()> {
        let Some((sink, lift, _)) = &mut self.sink else {
            bail!("no lift attached")
        };
        self.backend.encode(&mut self.enc)?;
        lift.encode(&mut self.enc, &self.backend, sink)?;
        Ok(())
    }
    fn splats(&mut self) -> Result<SplatBuffers> {
        let Some((sink, _, r)) = &self.sink else {
            bail!("no lift attached")
        };
        Ok(copy_range(sink, *r))
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    fn times(&self) -> EngineTimes {
        EngineTimes {
            rig: self.enc.rig,
            lift: self.enc.lift,
            gpu_ms: None,
        }
    }
    fn bytes(&self) -> (u64, u64) {
        (
            self.backend.bytes(),
            self.sink.as_ref().map_or(0, |s| s.0.bytes()),
        )
    }
}

#[cfg(feature = "wgpu")]
pub use gpu::WgpuEngine;

#[cfg(feature = "wgpu")]
mod gpu {
    use super::*;
    use mien_wgpu::{Timestamps, WgpuContext, WgpuDebugLift, WgpuRigBackend, WgpuSplatSink};

    /// The wgpu engine.
    pub struct WgpuEngine {
        ctx: WgpuContext,
        backend: WgpuRigBackend,
        handle: RigHandle,
        sink: Option<(WgpuSplatSink, WgpuDebugLift, SlotRange)>,
        times: EngineTimes,
    }

    impl WgpuEngine {
        pub(super) fn new(ctx: WgpuContext, rig: &RigData) -> Result<Self> {
            let mut backend = WgpuRigBackend::new(&ctx);
            let handle = backend.upload(rig)?;
            let gpu_ms = ctx.timestamps().map(|_| [0.0; 3]);
            Ok(WgpuEngine {
                ctx,
                backend,
                handle,
                sink: None,
                times: EngineTimes {
                    gpu_ms,
                    ..Default::default()
                },
            })
        }
    }

    impl Engine for WgpuEngine {
        fn name(&self) -> &'static str {
            "wgpu"
        }
        fn adapter(&self) -> Option<String> {
            let i = self.ctx.info();
            Some(format!(
                "{} ({:?}, {:?}, {} {})",
                i.name, i.device_type, i.backend, i.driver, i.driver_info
            ))
        }
        fn set_controls(&mut self, controls: &RigControls) -> Result<ControlStats> {
            Ok(self.backend.set_controls(self.handle, controls)?)
        }
        fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
            let mut enc = self
                .ctx
                .device()
                .create_command_encoder(&Default::default());
            self.backend.encode(&mut enc)?;
            self.ctx.submit(enc);
            Ok(self.backend.read_vertices(self.handle)?.positions)
        }
        fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
            let nv = self.backend.vertex_count(self.handle);
            let mut sink = WgpuSplatSink::new(&self.ctx, nv)?;
            let range = sink.allocate(nv)?;
            crate::engine::check_lift_range(range, &params, nv)?;
            let lift = WgpuDebugLift::new(&self.backend, self.handle, &sink, params)?;
            self.sink = Some((sink, lift, range));
            Ok(())
        }
        fn frame(&mut self) -> Result<()> {
            let Some((sink, lift, _)) = &mut self.sink else {
                bail!("no lift attached")
            };
            let t0 = Instant::now();
            let mut enc = self.ctx.device().create_command_encoder(&wgpu_label());
            self.backend.encode(&mut enc)?;
            let t1 = Instant::now();
            lift.encode(&mut enc, &self.backend, sink)?;
            if let Some(ts) = self.ctx.timestamps() {
                ts.resolve(&mut enc);
            }
            self.ctx.submit(enc);
            self.times.rig += t1 - t0;
            self.times.lift += t1.elapsed();
            if let (Some(ts), Some(acc)) = (self.ctx.timestamps(), self.times.gpu_ms.as_mut()) {
                let (buf, period) = ts.resolved();
                let bytes = self
                    .ctx
                    .read_buffers("timestamps", &[(buf, 0, buf.size())])
                    .context("reading GPU timestamps")?;
                let t = Timestamps::decode(&bytes[0], period);
                acc[0] += t.morph_ms;
                acc[1] += t.skin_ms;
                acc[2] += t.lift_ms;
            }
            Ok(())
        }
        fn splats(&mut self) -> Result<SplatBuffers> {
            let Some((sink, _, r)) = &self.sink else {
                bail!("no lift attached")
            };
            Ok(sink.read(*r)?)
        }
        fn finish(&mut self) -> Result<()> {
            Ok(self.ctx.wait()?)
        }
        fn times(&self) -> EngineTimes {
            self.times
        }
        fn bytes(&self) -> (u64, u64) {
            (
                self.backend.bytes(),
                self.sink.as_ref().map_or(0, |s| s.0.bytes()),
            )
        }
    }

    fn wgpu_label() -> mien_wgpu::wgpu::CommandEncoderDescriptor<'static> {
        mien_wgpu::wgpu::CommandEncoderDescriptor {
            label: Some("mien frame"),
        }
    }
}

/// A fresh sink's first `nv` slots, as allocated, must be the range the lift parameters name.
///
/// # Errors
/// A caller whose parameters name another range.
pub fn check_lift_range(range: SlotRange, params: &DebugLiftParams, nv: u32) -> Result<()> {
    ensure!(
        range == params.range,
        "the lift's range {:?} is not the sink's first {nv} slots",
        params.range
    );
    Ok(())
}

/// The slots `r` of a CPU sink, copied.
pub fn copy_range(sink: &CpuSplatSink, r: SlotRange) -> SplatBuffers {
    let b = sink.buffers();
    let s = r.offset as usize..r.end() as usize;
    SplatBuffers {
        center: b.center[s.clone()].to_vec(),
        color: b.color[s.clone()].to_vec(),
        cov_a: b.cov_a[s.clone()].to_vec(),
        cov_b: b.cov_b[s].to_vec(),
    }
}

pub use crate::engine_head::choose as choose_head;

/// Choose and build the engine for `choice`; returns it and why it was chosen.
///
/// # Errors
/// `--backend wgpu|vulkan` without a device; upload failures.
pub fn choose(choice: BackendChoice, rig: &RigData) -> Result<(Box<dyn Engine>, String)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuEngine::new(rig)?), "asked for".into())),
        #[cfg(feature = "wgpu")]
        BackendChoice::Wgpu => {
            let ctx = mien_wgpu::WgpuContext::new(&Default::default()).context("--backend wgpu")?;
            let why = if ctx.is_software() {
                "asked for; a software adapter: expect it to be slower than --backend cpu"
            } else {
                "asked for"
            };
            Ok((Box::new(WgpuEngine::new(ctx, rig)?), why.into()))
        }
        #[cfg(not(feature = "wgpu"))]
        BackendChoice::Wgpu => bail!(
            "--backend wgpu: this build of mien has no wgpu backend (build with the `wgpu` feature)"
        ),
        #[cfg(feature = "vulkan")]
        BackendChoice::Vulkan => {
            let ctx =
                crate::engine_vulkan::VulkanEngine::context(true).context("--backend vulkan")?;
            let why = if ctx.is_software() {
                "asked for; a software device: expect it to be slower than --backend cpu"
            } else {
                "asked for"
            };
            Ok((
                Box::new(crate::engine_vulkan::VulkanEngine::new(ctx, rig)?),
                why.into(),
            ))
        }
        #[cfg(not(feature = "vulkan"))]
        BackendChoice::Vulkan => bail!(
            "--backend vulkan: this build of mien has no Vulkan backend (build with the `vulkan` feature)"
        ),
        BackendChoice::Auto => auto(rig),
    }
}

#[cfg(feature = "wgpu")]
fn auto(rig: &RigData) -> Result<(Box<dyn Engine>, String)> {
    match mien_wgpu::WgpuContext::new(&Default::default()) {
        Ok(ctx) if !ctx.is_software() => {
            let why = format!("found the GPU `{}`", ctx.info().name);
            Ok((Box::new(WgpuEngine::new(ctx, rig)?), why))
        }
        Ok(ctx) => Ok((
            Box::new(CpuEngine::new(rig)?),
            format!(
                "the only adapter, `{}`, is a software rasteriser and slower than the CPU backend",
                ctx.info().name
            ),
        )),
        Err(e) => Ok((Box::new(CpuEngine::new(rig)?), format!("no GPU: {e}"))),
    }
}

#[cfg(not(feature = "wgpu"))]
fn auto(rig: &RigData) -> Result<(Box<dyn Engine>, String)> {
    Ok((
        Box::new(CpuEngine::new(rig)?),
        "this build has no GPU backend".into(),
    ))
}
