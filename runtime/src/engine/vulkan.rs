//! The Vulkan engine: one command buffer and one submission per frame (the rig or linear-head
//! passes, then every instance's lift between one pair of barriers). With validation on, every
//! message the layer reports fails the call that follows it ([`Error::Validation`]).

use std::time::Instant;

use glam::Mat4;
use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, PosedVertices, RigBackend, RigControls, RigHandle};
use mien_core::sink::{SplatBuffers, SplatSink};
use mien_vulkan::{
    PosedPart, VulkanContext, VulkanDebugLift, VulkanEncoder, VulkanGnmBackend, VulkanRigBackend,
    VulkanSplatSink,
};

use super::cpu::handle;
use super::{Engine, SinkRef, Times, params_for, sink_slots, slot_range, wrong_model};
use crate::asset::Model;
use crate::error::{Context as _, Error, Result};

enum Poser {
    Rig(VulkanRigBackend, Vec<RigHandle>),
    Head(VulkanGnmBackend, Vec<GnmHandle>),
}

/// N instances on a Vulkan device.
pub(crate) struct VulkanEngine {
    ctx: VulkanContext,
    poser: Poser,
    v: u32,
    sink: Option<(VulkanSplatSink, Vec<VulkanDebugLift>)>,
    times: Times,
}

impl VulkanEngine {
    pub(crate) fn new(ctx: &VulkanContext, model: &Model, n: u32) -> Result<Self> {
        let (poser, v) = match model {
            Model::Rig(rig) => {
                let mut b = VulkanRigBackend::new(ctx);
                let hs = b.upload_batch(rig, n)?;
                let v = b.vertex_count(hs[0]);
                (Poser::Rig(b, hs), v)
            }
            Model::Head { pack, .. } => {
                let mut b = VulkanGnmBackend::new(ctx);
                let hs = b.upload_gnm_batch(pack, n)?;
                let v = b.vertex_count(hs[0]);
                (Poser::Head(b, hs), v)
            }
        };
        let e = VulkanEngine {
            ctx: ctx.clone(),
            poser,
            v,
            sink: None,
            times: Times {
                gpu_ms: ctx.has_timestamps().then_some([0.0; 3]),
                ..Default::default()
            },
        };
        e.check_validation()?;
        Ok(e)
    }

    fn check_validation(&self) -> Result<()> {
        let messages = self.ctx.take_validation_messages();
        if messages.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation { messages })
        }
    }

    fn encode_rig(&mut self, enc: &mut VulkanEncoder) -> Result<()> {
        match &mut self.poser {
            Poser::Rig(b, _) => b.encode(enc)?,
            Poser::Head(b, _) => b.encode(enc)?,
        }
        Ok(())
    }

    fn n(&self) -> usize {
        match &self.poser {
            Poser::Rig(_, hs) => hs.len(),
            Poser::Head(_, hs) => hs.len(),
        }
    }
}

/// The lifts of `n` instances whose instance i goes to slots `i·v ..`: batched lifts
/// (`from_parts_batch`, every instance of a group in the same dispatches), as few as the binding
/// limit allows ([`super::lift_groups`]); a group the device refuses anyway is lifted one
/// instance at a time.
fn make_lifts<'b>(
    ctx: &VulkanContext,
    v: u32,
    n: usize,
    template: &DebugLiftParams,
    sink: &VulkanSplatSink,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b>>>,
) -> Result<Vec<VulkanDebugLift>> {
    let single = |i: usize| {
        let p = params_for(template, i, v);
        parts(i)
            .and_then(|parts| VulkanDebugLift::from_parts(ctx, v, &parts, sink, p))
            .with_context(|| format!("lifting instance {i}"))
    };
    let mut out = Vec::new();
    for (first, count) in super::lift_groups(
        n,
        v,
        ctx.binding_limit(),
        ctx.properties().limits.max_compute_work_group_count[2],
    ) {
        if count > 1 {
            let p = params_for(template, first, v);
            let batch =
                VulkanDebugLift::from_parts_batch(ctx, v, &parts(first)?, count as u32, v, sink, p);
            if let Ok(l) = batch {
                out.push(l);
                continue;
            }
        }
        for i in first..first + count {
            out.push(single(i)?);
        }
    }
    Ok(out)
}

impl Engine for VulkanEngine {
    fn set_rig(&mut self, controls: &[RigControls], stats: &mut [ControlStats]) -> Result<()> {
        let Poser::Rig(b, hs) = &mut self.poser else {
            return Err(wrong_model("morph controls"));
        };
        b.set_controls_batch(hs, controls, &|k| k, stats)?;
        Ok(())
    }

    fn set_head(&mut self, head_ext: &[Vec<f32>], joints: &[Vec<Mat4>]) -> Result<()> {
        let Poser::Head(b, hs) = &mut self.poser else {
            return Err(wrong_model("head_ext"));
        };
        b.set_head_ext_batch(hs, &|k| (&head_ext[k][..], &joints[k][..]))?;
        Ok(())
    }

    fn pose_and_read(&mut self, i: usize) -> Result<PosedVertices> {
        let mut enc = self.ctx.begin()?;
        self.encode_rig(&mut enc)?;
        self.ctx.submit(enc)?;
        let p = self.read_posed(i)?;
        self.check_validation()?;
        Ok(p)
    }

    fn read_posed(&mut self, i: usize) -> Result<PosedVertices> {
        Ok(match &self.poser {
            Poser::Rig(b, hs) => b.read_vertices(*handle(hs, i)?)?,
            Poser::Head(b, hs) => b.read_vertices(*handle(hs, i)?)?,
        })
    }

    fn attach_lift(&mut self, template: DebugLiftParams) -> Result<()> {
        let (v, n) = (self.v, self.n());
        let mut sink = VulkanSplatSink::new(&self.ctx, sink_slots(n as u32, v)?)?;
        for i in 0..n {
            let r = sink.allocate(v)?;
            debug_assert_eq!(r, slot_range(i, v));
        }
        let lifts = match &self.poser {
            Poser::Rig(b, hs) => {
                make_lifts(&self.ctx, v, n, &template, &sink, &|i| b.posed_parts(hs[i]))?
            }
            Poser::Head(b, hs) => {
                make_lifts(&self.ctx, v, n, &template, &sink, &|i| b.posed_parts(hs[i]))?
            }
        };
        self.sink = Some((sink, lifts));
        self.check_validation()
    }

    fn frame(&mut self) -> Result<()> {
        let t0 = Instant::now();
        let mut enc = self.ctx.begin()?;
        self.encode_rig(&mut enc)?;
        let t1 = Instant::now();
        if let Some((sink, lifts)) = &mut self.sink {
            VulkanDebugLift::record_batch(lifts, &mut enc, sink)?;
        }
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

    fn splats(&mut self, i: usize) -> Result<SplatBuffers> {
        let Some((sink, _)) = &self.sink else {
            return Err(Error::invalid("splats", "the runtime has no lift attached"));
        };
        super::check_instance(i, self.n())?;
        let s = sink.read(slot_range(i, self.v))?;
        self.check_validation()?;
        Ok(s)
    }

    fn finish(&mut self) -> Result<()> {
        self.ctx.wait()?;
        self.check_validation()
    }

    fn times(&self) -> Times {
        self.times
    }

    fn bytes(&self) -> (u64, u64) {
        let rig = match &self.poser {
            Poser::Rig(b, _) => b.bytes(),
            Poser::Head(b, _) => b.bytes(),
        };
        (rig, self.sink.as_ref().map_or(0, |s| s.0.bytes()))
    }

    fn sink(&self) -> SinkRef<'_> {
        self.sink
            .as_ref()
            .map_or(SinkRef::None, |(s, _)| SinkRef::Vulkan(s))
    }
}
