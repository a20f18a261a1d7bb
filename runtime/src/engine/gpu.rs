//! The GPU engine, written once over the device layer (`mien_gpu::GpuDevice`, implemented by wgpu
//! and Vulkan): one encoder per frame — the rig or linear-head passes, then every instance's lift
//! as one pass (batched lifts where a batch's slots fit one binding) — and one submission. GPU
//! stage times come from the device's timestamp queries when it has them.

use std::time::Instant;

use glam::Mat4;
use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, PosedVertices, RigBackend, RigControls, RigHandle};
use mien_core::sink::{SplatBuffers, SplatSink};
use mien_gpu::{
    GpuBoundData, GpuBoundLift, GpuDebugLift, GpuDevice, GpuGnmBackend, GpuRigBackend,
    GpuSplatSink, PosedPart,
};

use super::cpu::handle;
use super::{Engine, LiftSpec, SinkRef, Times, params_for, sink_slots, slot_range, wrong_model};
use crate::asset::Model;
use crate::error::{Context as _, Error, Result};

/// What the runtime needs of a device beyond the device layer: its error in the runtime's enum,
/// the read-out of its sink, and (Vulkan) the validation layer's messages.
pub(crate) trait EngineDevice: GpuDevice {
    /// The device's error as the runtime's.
    fn error(e: Self::Error) -> Error;
    /// The sink as a [`SinkRef`].
    fn sink_ref(sink: &GpuSplatSink<Self>) -> SinkRef<'_>;
    /// Fail when the validation layer reported anything since the last call.
    fn validation(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(feature = "wgpu")]
impl EngineDevice for mien_wgpu::WgpuContext {
    fn error(e: mien_wgpu::Error) -> Error {
        Error::Wgpu(e)
    }

    fn sink_ref(sink: &GpuSplatSink<Self>) -> SinkRef<'_> {
        SinkRef::Wgpu(sink)
    }
}

/// With validation on, every message the layer reports fails the call that follows it
/// ([`Error::Validation`]).
#[cfg(feature = "vulkan")]
impl EngineDevice for mien_vulkan::VulkanContext {
    fn error(e: mien_vulkan::Error) -> Error {
        Error::Vulkan(e)
    }

    fn sink_ref(sink: &GpuSplatSink<Self>) -> SinkRef<'_> {
        SinkRef::Vulkan(sink)
    }

    fn validation(&self) -> Result<()> {
        let messages = self.take_validation_messages();
        if messages.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation { messages })
        }
    }
}

enum Poser<G: GpuDevice> {
    Rig(GpuRigBackend<G>, Vec<RigHandle>),
    Head(GpuGnmBackend<G>, Vec<GnmHandle>),
}

/// N instances on a GPU device.
pub(crate) struct GpuEngine<G: EngineDevice> {
    g: G,
    poser: Poser<G>,
    v: u32,
    /// Slots per instance (V for the debug lift, the gaussian count for a bound lift).
    per: u32,
    sink: Option<(GpuSplatSink<G>, Lifts<G>)>,
    times: Times,
}

impl<G: EngineDevice> GpuEngine<G> {
    pub(crate) fn new(g: &G, model: &Model, n: u32) -> Result<Self> {
        let (poser, v) = match model {
            Model::Rig(rig) => {
                let mut b = GpuRigBackend::new(g);
                let hs = b.upload_batch(rig, n)?;
                let v = b.vertex_count(hs[0]);
                (Poser::Rig(b, hs), v)
            }
            Model::Head { pack, .. } => {
                let mut b = GpuGnmBackend::new(g);
                let hs = b.upload_gnm_batch(pack, n)?;
                let v = b.vertex_count(hs[0]);
                (Poser::Head(b, hs), v)
            }
        };
        let e = GpuEngine {
            g: g.clone(),
            poser,
            v,
            per: v,
            sink: None,
            times: Times {
                gpu_ms: g.caps().timestamps.then_some([0.0; 3]),
                ..Default::default()
            },
        };
        e.g.validation()?;
        Ok(e)
    }

    fn encode_rig(&mut self, enc: &mut G::Encoder) -> Result<()> {
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
fn make_lifts<'b, G: GpuDevice>(
    g: &G,
    v: u32,
    n: usize,
    template: &DebugLiftParams,
    sink: &GpuSplatSink<G>,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b, G>>>,
) -> Result<Vec<GpuDebugLift<G>>> {
    let single = |i: usize| {
        let p = params_for(template, i, v);
        parts(i)
            .and_then(|parts| GpuDebugLift::from_parts(g, v, &parts, sink, p))
            .with_context(|| format!("lifting instance {i}"))
    };
    let caps = g.caps();
    let mut out = Vec::new();
    for (first, count) in super::lift_groups(n, v, caps.binding_limit, caps.max_groups_z) {
        if count > 1 {
            let p = params_for(template, first, v);
            let batch =
                GpuDebugLift::from_parts_batch(g, v, &parts(first)?, count as u32, v, sink, p);
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

/// The instances' lifts.
enum Lifts<G: GpuDevice> {
    Debug(Vec<GpuDebugLift<G>>),
    Bound(Vec<GpuBoundLift<G>>),
}

impl<G: EngineDevice> GpuEngine<G> {
    /// The bound lift: the setup uploaded once, one lift per instance over its posed vertices.
    fn attach_bound(&mut self, setup: std::sync::Arc<mien_core::lift::BoundSetup>) -> Result<()> {
        let (v, n) = (self.v, self.n());
        let per = setup.slots();
        let mut sink = GpuSplatSink::new(&self.g, sink_slots(n as u32, per)?)?;
        for i in 0..n {
            let r = sink.allocate(per)?;
            debug_assert_eq!(r, slot_range(i, per));
        }
        let data = GpuBoundData::upload(&self.g, setup)?;
        let mut lifts = Vec::with_capacity(n);
        for i in 0..n {
            let range = slot_range(i, per);
            let lift = match &self.poser {
                Poser::Rig(b, hs) => b.posed_parts(hs[i]).and_then(|parts| {
                    GpuBoundLift::new(
                        &self.g,
                        v,
                        &parts,
                        std::sync::Arc::clone(&data),
                        &sink,
                        range,
                    )
                }),
                Poser::Head(b, hs) => b.posed_parts(hs[i]).and_then(|parts| {
                    GpuBoundLift::new(
                        &self.g,
                        v,
                        &parts,
                        std::sync::Arc::clone(&data),
                        &sink,
                        range,
                    )
                }),
            };
            lifts.push(lift.with_context(|| format!("lifting instance {i}"))?);
        }
        self.per = per;
        self.sink = Some((sink, Lifts::Bound(lifts)));
        self.g.validation()
    }
}

impl<G: EngineDevice> Engine for GpuEngine<G> {
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
        let mut enc = self.g.begin().map_err(G::error)?;
        self.encode_rig(&mut enc)?;
        self.g.submit(enc).map_err(G::error)?;
        let p = self.read_posed(i)?;
        self.g.validation()?;
        Ok(p)
    }

    fn read_posed(&mut self, i: usize) -> Result<PosedVertices> {
        Ok(match &self.poser {
            Poser::Rig(b, hs) => b.read_vertices(*handle(hs, i)?)?,
            Poser::Head(b, hs) => b.read_vertices(*handle(hs, i)?)?,
        })
    }

    fn attach_lift(&mut self, spec: LiftSpec) -> Result<()> {
        let template = match spec {
            LiftSpec::Debug(t) => t,
            LiftSpec::Bound(setup) => return self.attach_bound(setup),
        };
        let (v, n) = (self.v, self.n());
        let mut sink = GpuSplatSink::new(&self.g, sink_slots(n as u32, v)?)?;
        for i in 0..n {
            let r = sink.allocate(v)?;
            debug_assert_eq!(r, slot_range(i, v));
        }
        let lifts = match &self.poser {
            Poser::Rig(b, hs) => {
                make_lifts(&self.g, v, n, &template, &sink, &|i| b.posed_parts(hs[i]))?
            }
            Poser::Head(b, hs) => {
                make_lifts(&self.g, v, n, &template, &sink, &|i| b.posed_parts(hs[i]))?
            }
        };
        self.sink = Some((sink, Lifts::Debug(lifts)));
        self.g.validation()
    }

    fn frame(&mut self) -> Result<()> {
        let t0 = Instant::now();
        let mut enc = self.g.begin().map_err(G::error)?;
        self.encode_rig(&mut enc)?;
        let t1 = Instant::now();
        match &mut self.sink {
            Some((sink, Lifts::Debug(lifts))) => GpuDebugLift::record_batch(lifts, &mut enc, sink)?,
            Some((sink, Lifts::Bound(lifts))) => GpuBoundLift::record_batch(lifts, &mut enc, sink)?,
            None => {}
        }
        self.g.end_frame(&mut enc);
        self.g.submit(enc).map_err(G::error)?;
        self.times.rig += t1 - t0;
        self.times.lift += t1.elapsed();
        if let Some(acc) = self.times.gpu_ms.as_mut() {
            self.g
                .wait()
                .map_err(G::error)
                .context("waiting for the frame")?;
            let times = self
                .g
                .stage_times()
                .map_err(G::error)
                .context("reading GPU timestamps")?;
            if let Some(t) = times {
                acc[0] += t.morph_ms;
                acc[1] += t.skin_ms;
                acc[2] += t.lift_ms;
            }
        }
        self.g.validation()
    }

    fn splats(&mut self, i: usize) -> Result<SplatBuffers> {
        let Some((sink, _)) = &self.sink else {
            return Err(Error::invalid("splats", "the runtime has no lift attached"));
        };
        super::check_instance(i, self.n())?;
        let s = sink.read(slot_range(i, self.per))?;
        self.g.validation()?;
        Ok(s)
    }

    fn finish(&mut self) -> Result<()> {
        self.g.wait().map_err(G::error)?;
        self.g.validation()
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
            .map_or(SinkRef::None, |(s, _)| G::sink_ref(s))
    }
}
