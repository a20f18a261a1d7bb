//! The Vulkan engine of `mien animate --backend vulkan`.

use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{ControlStats, RigBackend, RigControls, RigData, RigHandle};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_vulkan::{
    ContextOptions, VulkanContext, VulkanDebugLift, VulkanRigBackend, VulkanSplatSink,
};

use crate::engine::{Engine, EngineTimes};

/// One character on raw Vulkan: one command buffer and one submission per frame.
pub struct VulkanEngine {
    ctx: VulkanContext,
    backend: VulkanRigBackend,
    handle: RigHandle,
    sink: Option<(VulkanSplatSink, VulkanDebugLift, SlotRange)>,
    times: EngineTimes,
}

impl VulkanEngine {
    /// Upload `rig` on `ctx`.
    ///
    /// # Errors
    /// Upload failures.
    pub fn new(ctx: VulkanContext, rig: &RigData) -> Result<Self> {
        let mut backend = VulkanRigBackend::new(&ctx);
        let handle = backend.upload(rig)?;
        let gpu_ms = ctx.has_timestamps().then_some([0.0; 3]);
        Ok(VulkanEngine {
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

    /// A context for `mien animate`: validation when `MIEN_VK_VALIDATION=1` (messages fail the
    /// run), software devices accepted when `allow_software`.
    ///
    /// # Errors
    /// No loader, no device.
    pub fn context(allow_software: bool) -> Result<VulkanContext> {
        let validation = std::env::var("MIEN_VK_VALIDATION").is_ok_and(|v| v == "1");
        Ok(VulkanContext::new(&ContextOptions {
            validation,
            require_validation: validation,
            allow_software,
        })?)
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

impl Engine for VulkanEngine {
    fn name(&self) -> &'static str {
        "vulkan"
    }
    fn adapter(&self) -> Option<String> {
        let p = self.ctx.properties();
        Some(format!(
            "{} ({:?}, Vulkan {}.{}.{}, driver {:#x})",
            self.ctx.name(),
            p.device_type,
            mien_vulkan::ash::vk::api_version_major(p.api_version),
            mien_vulkan::ash::vk::api_version_minor(p.api_version),
            mien_vulkan::ash::vk::api_version_patch(p.api_version),
            p.driver_version
        ))
    }
    fn set_controls(&mut self, controls: &RigControls) -> Result<ControlStats> {
        Ok(self.backend.set_controls(self.handle, controls)?)
    }
    fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
        let mut enc = self.ctx.begin()?;
        self.backend.encode(&mut enc)?;
        self.ctx.submit(enc)?;
        let p = self.backend.read_vertices(self.handle)?.positions;
        self.check_validation()?;
        Ok(p)
    }
    fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
        let nv = self.backend.vertex_count(self.handle);
        let mut sink = VulkanSplatSink::new(&self.ctx, nv)?;
        let range = sink.allocate(nv)?;
        crate::engine::check_lift_range(range, &params, nv)?;
        let lift = VulkanDebugLift::new(&self.backend, self.handle, &sink, params)?;
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
        lift.encode(&mut enc, &self.backend, sink)?;
        self.ctx.submit(enc)?;
        self.times.rig += t1 - t0;
        self.times.lift += t1.elapsed();
        if let Some(acc) = self.times.gpu_ms.as_mut() {
            self.ctx.wait().context("waiting for the frame")?;
            if let Some(t) = self.ctx.stage_times() {
                acc[0] += t.morph_ms;
                acc[1] += t.skin_ms;
                acc[2] += t.lift_ms;
            }
        }
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
