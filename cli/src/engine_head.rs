//! Engines that pose a linear head (`.aosrig`): per frame a head_ext vector and joint world
//! matrices in, posed vertices out, lifted into splats as the rig engines do.

use std::sync::Arc;
#[cfg(any(feature = "wgpu", feature = "vulkan"))]
use std::time::Instant;

#[cfg(any(feature = "wgpu", feature = "vulkan"))]
use anyhow::Context as _;
#[cfg(feature = "vulkan")]
use anyhow::ensure;
use anyhow::{Result, bail};
use glam::Mat4;
use mien_core::gnm::{GnmBackend, GnmHandle, GnmPack};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, RigControls};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_cpu::{CpuDebugLift, CpuEncoder, CpuGnmBackend, CpuSplatSink};

use crate::args::BackendChoice;
use crate::engine::{Engine, EngineTimes};

/// The CPU engine for a linear head: [`mien_cpu::CpuGnmBackend`] (the reference's per-vertex
/// arithmetic, vertex chunks in parallel).
pub struct CpuHeadEngine {
    backend: CpuGnmBackend,
    head: GnmHandle,
    /// A pack has no normals and none are recomputed (as on the GPU): zero normals make the
    /// debug lift's normal shading use the centroid direction.
    nrm: Vec<[f32; 3]>,
    sink: Option<(CpuSplatSink, CpuDebugLift, SlotRange)>,
    enc: CpuEncoder,
}

impl CpuHeadEngine {
    fn new(pack: &GnmPack) -> Result<Self> {
        let mut backend = CpuGnmBackend::new();
        let head = backend.upload_gnm(pack)?;
        Ok(CpuHeadEngine {
            backend,
            head,
            nrm: vec![[0.0; 3]; pack.vertex_count()],
            sink: None,
            enc: CpuEncoder::default(),
        })
    }
}

impl Engine for CpuHeadEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn adapter(&self) -> Option<String> {
        None
    }
    fn set_controls(&mut self, _controls: &RigControls) -> Result<ControlStats> {
        bail!("a linear head takes head_ext coefficients, not morph weights")
    }
    fn set_head_ext(&mut self, head_ext: &[f32], joint_world: &[Mat4]) -> Result<()> {
        Ok(self
            .backend
            .set_head_ext(self.head, head_ext, joint_world)?)
    }
    fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
        self.backend.encode(&mut self.enc)?;
        Ok(self.backend.posed(self.head)?.to_vec())
    }
    fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
        let nv = self.backend.vertex_count(self.head);
        let mut sink = CpuSplatSink::new(nv);
        let range = sink.allocate(nv)?;
        crate::engine::check_lift_range(range, &params, nv)?;
        let lift = CpuDebugLift::for_vertices(nv, Vec::new(), &sink, params)?;
        self.sink = Some((sink, lift, range));
        Ok(())
    }
    fn frame(&mut self) -> Result<()> {
        let Some((sink, lift, _)) = &mut self.sink else {
            bail!("no lift attached")
        };
        self.backend.encode(&mut self.enc)?;
        let pos = self.backend.posed(self.head)?;
        lift.encode_posed(&mut self.enc, pos, &self.nrm, sink)?;
        Ok(())
    }
    fn splats(&mut self) -> Result<SplatBuffers> {
        let Some((sink, _, r)) = &self.sink else {
            bail!("no lift attached")
        };
        Ok(crate::engine::copy_range(sink, *r))
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
mod wgpu_head {
    use super::*;
    use mien_wgpu::{WgpuContext, WgpuDebugLift, WgpuGnmBackend, WgpuSplatSink};

    /// A linear head on wgpu: the GNM forward and skin passes and the lift, one submission a frame.
    pub struct WgpuHeadEngine {
        ctx: WgpuContext,
        backend: WgpuGnmBackend,
        head: GnmHandle,
        sink: Option<(WgpuSplatSink, WgpuDebugLift, SlotRange)>,
        times: EngineTimes,
    }

    impl WgpuHeadEngine {
        pub(super) fn new(ctx: WgpuContext, pack: &GnmPack) -> Result<Self> {
            let mut backend = WgpuGnmBackend::new(&ctx);
            let head = backend.upload_gnm(pack)?;
            Ok(WgpuHeadEngine {
                ctx,
                backend,
                head,
                sink: None,
                times: EngineTimes::default(),
            })
        }
    }

    impl Engine for WgpuHeadEngine {
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
        fn set_controls(&mut self, _controls: &RigControls) -> Result<ControlStats> {
            bail!("a linear head takes head_ext coefficients, not morph weights")
        }
        fn set_head_ext(&mut self, head_ext: &[f32], joint_world: &[Mat4]) -> Result<()> {
            Ok(self
                .backend
                .set_head_ext(self.head, head_ext, joint_world)?)
        }
        fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
            let mut enc = self
                .ctx
                .device()
                .create_command_encoder(&Default::default());
            self.backend.encode(&mut enc)?;
            self.ctx.submit(enc);
            Ok(self.backend.read_vertices(self.head)?.positions)
        }
        fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
            let nv = self.backend.vertex_count(self.head);
            let mut sink = WgpuSplatSink::new(&self.ctx, nv)?;
            let range = sink.allocate(nv)?;
            crate::engine::check_lift_range(range, &params, nv)?;
            let parts = self.backend.posed_parts(self.head)?;
            let lift = WgpuDebugLift::from_parts(&self.ctx, nv, &parts, &sink, params)?;
            self.sink = Some((sink, lift, range));
            Ok(())
        }
        fn frame(&mut self) -> Result<()> {
            let Some((sink, lift, _)) = &mut self.sink else {
                bail!("no lift attached")
            };
            let t0 = Instant::now();
            let mut enc = self
                .ctx
                .device()
                .create_command_encoder(&Default::default());
            self.backend.encode(&mut enc)?;
            let t1 = Instant::now();
            lift.record(&mut enc, sink)?;
            self.ctx.submit(enc);
            self.times.rig += t1 - t0;
            self.times.lift += t1.elapsed();
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
}

#[cfg(feature = "vulkan")]
mod vulkan_head {
    use super::*;
    use mien_vulkan::{VulkanContext, VulkanDebugLift, VulkanGnmBackend, VulkanSplatSink};

    /// A linear head on raw Vulkan: one command buffer and one submission a frame.
    pub struct VulkanHeadEngine {
        ctx: VulkanContext,
        backend: VulkanGnmBackend,
        head: GnmHandle,
        sink: Option<(VulkanSplatSink, VulkanDebugLift, SlotRange)>,
        times: EngineTimes,
    }

    impl VulkanHeadEngine {
        pub(super) fn new(ctx: VulkanContext, pack: &GnmPack) -> Result<Self> {
            let mut backend = VulkanGnmBackend::new(&ctx);
            let head = backend.upload_gnm(pack)?;
            Ok(VulkanHeadEngine {
                ctx,
                backend,
                head,
                sink: None,
                times: EngineTimes::default(),
            })
        }

        fn check_validation(&self) -> Result<()> {
            let m = self.ctx.take_validation_messages();
            ensure!(
                m.is_empty(),
                "the Vulkan validation layer reported:\n{}",
                m.join("\n")
            );
            Ok(())
        }
    }

    impl Engine for VulkanHeadEngine {
        fn name(&self) -> &'static str {
            "vulkan"
        }
        fn adapter(&self) -> Option<String> {
            Some(self.ctx.name().to_string())
        }
        fn set_controls(&mut self, _controls: &RigControls) -> Result<ControlStats> {
            bail!("a linear head takes head_ext coefficients, not morph weights")
        }
        fn set_head_ext(&mut self, head_ext: &[f32], joint_world: &[Mat4]) -> Result<()> {
            Ok(self
                .backend
                .set_head_ext(self.head, head_ext, joint_world)?)
        }
        fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
            let mut enc = self.ctx.begin()?;
            self.backend.encode(&mut enc)?;
            self.ctx.submit(enc)?;
            let p = self.backend.read_vertices(self.head)?.positions;
            self.check_validation()?;
            Ok(p)
        }
        fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
            let nv = self.backend.vertex_count(self.head);
            let mut sink = VulkanSplatSink::new(&self.ctx, nv)?;
            let range = sink.allocate(nv)?;
            crate::engine::check_lift_range(range, &params, nv)?;
            let parts = self.backend.posed_parts(self.head)?;
            let lift = VulkanDebugLift::from_parts(&self.ctx, nv, &parts, &sink, params)?;
            self.sink = Some((sink, lift, range));
            Ok(())
        }
        fn frame(&mut self) -> Result<()> {
            let Some((sink, lift, _)) = &mut self.sink else {
                bail!("no lift attached")
            };
            let t0 = Instant::now();
            let mut enc = self.ctx.begin()?;
            self.backend.encode(&mut enc)?;
            let t1 = Instant::now();
            lift.record(&mut enc, sink)?;
            self.ctx.submit(enc)?;
            self.times.rig += t1 - t0;
            self.times.lift += t1.elapsed();
            self.check_validation()
        }
        fn splats(&mut self) -> Result<SplatBuffers> {
            let Some((sink, _, r)) = &self.sink else {
                bail!("no lift attached")
            };
            Ok(sink.read(*r)?)
        }
        fn finish(&mut self) -> Result<()> {
            self.ctx.wait()?;
            self.check_validation()
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
}

/// Choose and build the engine that poses `pack` for `choice`; returns it and why.
///
/// # Errors
/// `--backend wgpu|vulkan` without a device (or without fp16 shader support); upload failures.
pub fn choose(choice: BackendChoice, pack: &Arc<GnmPack>) -> Result<(Box<dyn Engine>, String)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuHeadEngine::new(pack)?), "asked for".into())),
        #[cfg(feature = "wgpu")]
        BackendChoice::Wgpu => {
            let ctx = mien_wgpu::WgpuContext::new(&Default::default()).context("--backend wgpu")?;
            let why = software_note(ctx.is_software());
            Ok((Box::new(wgpu_head::WgpuHeadEngine::new(ctx, pack)?), why))
        }
        #[cfg(feature = "vulkan")]
        BackendChoice::Vulkan => {
            let ctx =
                crate::engine_vulkan::VulkanEngine::context(true).context("--backend vulkan")?;
            let why = software_note(ctx.is_software());
            Ok((
                Box::new(vulkan_head::VulkanHeadEngine::new(ctx, pack)?),
                why,
            ))
        }
        #[cfg(feature = "wgpu")]
        BackendChoice::Auto => match mien_wgpu::WgpuContext::new(&Default::default()) {
            Ok(ctx) if !ctx.is_software() => {
                let why = format!("found the GPU `{}`", ctx.info().name);
                Ok((Box::new(wgpu_head::WgpuHeadEngine::new(ctx, pack)?), why))
            }
            Ok(ctx) => Ok((
                Box::new(CpuHeadEngine::new(pack)?),
                format!(
                    "the only adapter, `{}`, is a software rasteriser and slower than the CPU backend",
                    ctx.info().name
                ),
            )),
            Err(e) => Ok((Box::new(CpuHeadEngine::new(pack)?), format!("no GPU: {e}"))),
        },
        #[cfg(not(feature = "wgpu"))]
        BackendChoice::Auto => Ok((
            Box::new(CpuHeadEngine::new(pack)?),
            "this build has no GPU backend".into(),
        )),
        #[allow(unreachable_patterns)]
        other => bail!(
            "--backend {}: this build of mien has no such backend",
            format!("{other:?}").to_lowercase()
        ),
    }
}

#[allow(dead_code)]
fn software_note(software: bool) -> String {
    if software {
        "asked for; a software device: expect it to be slower than --backend cpu".into()
    } else {
        "asked for".into()
    }
}
