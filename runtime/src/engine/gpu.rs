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
    GpuBoundData, GpuBoundLift, GpuDebugLift, GpuDevice, GpuGnmBackend, GpuHairData, GpuHairLift,
    GpuRigBackend, GpuSplatSink, PosedPart, Typed, Usage,
};

use super::cpu::handle;
use super::{
    Engine, Extras, LiftSpec, SinkRef, Times, params_for, sink_slots, slot_range, wrong_model,
};
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
    /// Per instance: the cloth's simulated vertices `(Vc,6)` (position then normal), written
    /// by [`Engine::set_cloth`] and read by the cloth's bound lift (one of [`Lifts::Bound`]).
    cloth: Vec<Typed<G, [f32; 6]>>,
    /// The strands of every instance (one batched lift, or one per instance when a batch does
    /// not fit one binding).
    hair: Vec<GpuHairLift<G>>,
    /// Instances per hair lift.
    hair_batch: usize,
    scratch: Vec<[f32; 6]>,
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
            cloth: Vec::new(),
            hair: Vec::new(),
            hair_batch: 1,
            scratch: Vec::new(),
            times: Times {
                gpu_ms: g.caps().timestamps.then_some([0.0; 3]),
                ..Default::default()
            },
        };
        e.g.validation()?;
        Ok(e)
    }

    /// Add the GPU stage times of the frames completed since the last call (never waits).
    fn gather_gpu_times(&mut self) -> Result<()> {
        if let Some(acc) = self.times.gpu_ms.as_mut() {
            let done = self
                .g
                .completed_times()
                .map_err(G::error)
                .context("reading GPU timestamps")?;
            for t in done {
                acc[0] += t.morph_ms;
                acc[1] += t.skin_ms;
                acc[2] += t.lift_ms + t.hair_ms;
            }
        }
        Ok(())
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
/// sink's pages allow ([`super::page_groups`]); a group the device refuses anyway is lifted one
/// instance at a time.
fn make_lifts<'b, G: GpuDevice>(
    g: &G,
    v: u32,
    per: u32,
    n: usize,
    template: &DebugLiftParams,
    sink: &GpuSplatSink<G>,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b, G>>>,
) -> Result<Vec<GpuDebugLift<G>>> {
    let single = |i: usize| {
        let p = params_for(template, i, v, per);
        parts(i)
            .and_then(|parts| GpuDebugLift::from_parts(g, v, &parts, sink, p))
            .with_context(|| format!("lifting instance {i}"))
    };
    let mut out = Vec::new();
    for (first, count) in super::page_groups(n, per, sink.page_slots(), g.caps().max_groups_z) {
        if count > 1 {
            let p = params_for(template, first, v, per);
            let batch =
                GpuDebugLift::from_parts_batch(g, v, &parts(first)?, count as u32, per, sink, p);
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
    /// The sink of `n` instances of `per` slots each, every instance's range allocated.
    fn make_sink(&self, n: usize, per: u32) -> Result<GpuSplatSink<G>> {
        let mut sink = GpuSplatSink::paged(&self.g, sink_slots(n as u32, per)?, per)?;
        for i in 0..n {
            let r = sink.allocate(per)?;
            debug_assert_eq!(r, slot_range(i, per));
        }
        Ok(sink)
    }

    /// The bound lift: the setup uploaded once, the instances' lifts over their posed vertices
    /// into the first `body` of each one's `per` slots — batched ([`GpuBoundLift::new_batch`]:
    /// one dispatch for as many instances as one sink binding holds) where the instances' posed
    /// vertices lie evenly spaced in one buffer (a batch upload), else one lift per instance.
    fn bound_lifts(
        &self,
        setup: std::sync::Arc<mien_core::lift::BoundSetup>,
        sink: &GpuSplatSink<G>,
        per: u32,
    ) -> Result<Vec<GpuBoundLift<G>>> {
        let (v, n) = (self.v, self.n());
        let body = setup.slots();
        let data = GpuBoundData::upload(&self.g, setup)?;
        let parts = |i: usize| match &self.poser {
            Poser::Rig(b, hs) => b.posed_parts(hs[i]),
            Poser::Head(b, hs) => b.posed_parts(hs[i]),
        };
        let range = |i: usize| mien_core::sink::SlotRange {
            offset: i as u32 * per,
            count: body,
        };
        // Instance i's vertices at first₀ + i·stride of one buffer (one part each).
        let firsts: Vec<Option<u32>> = (0..n)
            .map(|i| parts(i).ok().filter(|p| p.len() == 1).map(|p| p[0].first))
            .collect();
        let stride = match (firsts.first(), firsts.get(1)) {
            (Some(Some(a)), Some(Some(b))) if b > a => Some(b - a),
            _ => None,
        };
        let even = stride.is_some_and(|s| {
            firsts
                .iter()
                .enumerate()
                .all(|(i, f)| *f == Some(firsts[0].unwrap_or(0) + i as u32 * s))
        });
        let mut lifts = Vec::with_capacity(n);
        if let (true, Some(stride)) = (even, stride) {
            let mut all = true;
            for (first, count) in
                super::page_groups(n, per, sink.page_slots(), self.g.caps().max_groups_z)
            {
                let made = parts(first).and_then(|p| {
                    GpuBoundLift::new_batch(
                        &self.g,
                        v,
                        &p,
                        count as u32,
                        stride,
                        std::sync::Arc::clone(&data),
                        sink,
                        range(first),
                        per,
                    )
                });
                match made {
                    Ok(l) => lifts.push(l),
                    Err(_) => {
                        all = false;
                        break;
                    }
                }
            }
            if all {
                return Ok(lifts);
            }
            lifts.clear();
        }
        for i in 0..n {
            let lift = parts(i).and_then(|p| {
                GpuBoundLift::new(&self.g, v, &p, std::sync::Arc::clone(&data), sink, range(i))
            });
            lifts.push(lift.with_context(|| format!("lifting instance {i}"))?);
        }
        Ok(lifts)
    }

    /// One bound lift per instance over its own writable copy of the records
    /// ([`GpuBoundData::upload_writable`]): lift `i` is instance `i`'s.
    fn own_bound_lifts(
        &self,
        setup: std::sync::Arc<mien_core::lift::BoundSetup>,
        sink: &GpuSplatSink<G>,
        per: u32,
    ) -> Result<Vec<GpuBoundLift<G>>> {
        let (v, n) = (self.v, self.n());
        let body = setup.slots();
        let mut lifts = Vec::with_capacity(n);
        for i in 0..n {
            let data = GpuBoundData::upload_writable(&self.g, std::sync::Arc::clone(&setup))?;
            let p = match &self.poser {
                Poser::Rig(b, hs) => b.posed_parts(hs[i]),
                Poser::Head(b, hs) => b.posed_parts(hs[i]),
            };
            let range = mien_core::sink::SlotRange {
                offset: i as u32 * per,
                count: body,
            };
            let lift = p.and_then(|p| GpuBoundLift::new(&self.g, v, &p, data, sink, range));
            lifts.push(lift.with_context(|| format!("lifting instance {i}"))?);
        }
        Ok(lifts)
    }

    /// The extras' lifts: per instance a cloth buffer `(Vc,6)` and a bound lift over it after the
    /// body's slots; the strands after the cloth's, batched over as many instances as fit.
    fn extra_lifts(
        &mut self,
        extras: &Extras,
        sink: &GpuSplatSink<G>,
        body: u32,
        per: u32,
        lifts: &mut Vec<GpuBoundLift<G>>,
    ) -> Result<()> {
        let n = self.n();
        let (cloth_slots, _) = extras.slots();
        self.cloth.clear();
        if let Some((setup, vc)) = &extras.cloth {
            let data = GpuBoundData::upload(&self.g, std::sync::Arc::clone(setup))?;
            let zero = vec![[0.0f32; 6]; *vc as usize];
            for i in 0..n {
                let buf = Typed::frame(&self.g, "cloth vertices", Usage::Storage, &zero)
                    .map_err(G::error)?;
                let part = PosedPart {
                    v0: 0,
                    count: *vc,
                    first: 0,
                    posed: buf.raw(),
                    tint: buf.raw(),
                };
                let range = mien_core::sink::SlotRange {
                    offset: i as u32 * per + body,
                    count: cloth_slots,
                };
                let l = GpuBoundLift::new(
                    &self.g,
                    *vc,
                    &[part],
                    std::sync::Arc::clone(&data),
                    sink,
                    range,
                )
                .with_context(|| format!("the cloth of instance {i}"))?;
                lifts.push(l);
                self.cloth.push(buf);
            }
        }
        self.hair.clear();
        if let Some(groom) = &extras.hair {
            let data = GpuHairData::upload(&self.g, std::sync::Arc::clone(groom))?;
            let range = |i: usize| mien_core::sink::SlotRange {
                offset: i as u32 * per + body + cloth_slots,
                count: data.slots(),
            };
            let all = GpuHairLift::new(&self.g, data.clone(), sink, range(0), n as u32, per);
            match all {
                Ok(l) => {
                    self.hair.push(l);
                    self.hair_batch = n;
                }
                Err(_) => {
                    for i in 0..n {
                        let l = GpuHairLift::new(&self.g, data.clone(), sink, range(i), 1, per)
                            .with_context(|| format!("the hair of instance {i}"))?;
                        self.hair.push(l);
                    }
                    self.hair_batch = 1;
                }
            }
        }
        Ok(())
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

    fn attach_lift(&mut self, spec: LiftSpec, extras: Extras) -> Result<()> {
        let (v, n) = (self.v, self.n());
        let body = spec.slots(v);
        let (cloth_slots, hair_slots) = extras.slots();
        let per = body
            .checked_add(cloth_slots)
            .and_then(|x| x.checked_add(hair_slots))
            .ok_or_else(|| Error::invalid("slots", "more than a 32-bit slot index holds"))?;
        let sink = self.make_sink(n, per)?;
        let mut lifts = match spec {
            LiftSpec::Debug(template) => Lifts::Debug(match &self.poser {
                Poser::Rig(b, hs) => make_lifts(&self.g, v, per, n, &template, &sink, &|i| {
                    b.posed_parts(hs[i])
                })?,
                Poser::Head(b, hs) => make_lifts(&self.g, v, per, n, &template, &sink, &|i| {
                    b.posed_parts(hs[i])
                })?,
            }),
            LiftSpec::Bound(setup) => Lifts::Bound(self.bound_lifts(setup, &sink, per)?),
            LiftSpec::BoundPerInstance(setup) => {
                Lifts::Bound(self.own_bound_lifts(setup, &sink, per)?)
            }
        };
        let mut cloth_lifts = Vec::new();
        self.extra_lifts(&extras, &sink, body, per, &mut cloth_lifts)?;
        if !cloth_lifts.is_empty() {
            match &mut lifts {
                Lifts::Bound(l) => l.extend(cloth_lifts),
                Lifts::Debug(_) => {
                    return Err(Error::invalid(
                        "cloth",
                        "the cloth is drawn by a bound lift; the debug lift draws the rig's vertices",
                    ));
                }
            }
        }
        self.per = per;
        self.sink = Some((sink, lifts));
        self.g.validation()
    }

    fn set_cloth(&mut self, i: usize, pos: &[[f32; 3]], nrm: &[[f32; 3]]) -> Result<()> {
        let Some(buf) = self.cloth.get(i) else {
            return Ok(());
        };
        if pos.len() != buf.len() || nrm.len() != buf.len() {
            return Err(Error::invalid(
                format!("cloth of instance {i}"),
                format!("{} vertices for a cloth of {}", pos.len(), buf.len()),
            ));
        }
        self.scratch.clear();
        self.scratch.extend(
            pos.iter()
                .zip(nrm)
                .map(|(p, n)| [p[0], p[1], p[2], n[0], n[1], n[2]]),
        );
        buf.write(&self.g, 0, &self.scratch).map_err(G::error)
    }

    fn set_hair(&mut self, i: usize, guides: &[[f32; 3]]) -> Result<()> {
        if self.hair.is_empty() {
            return Ok(());
        }
        let (l, z) = (i / self.hair_batch, i % self.hair_batch);
        match self.hair.get_mut(l) {
            Some(h) => Ok(h.set_guides(z as u32, guides)?),
            None => Err(super::no_instance(i, self.n())),
        }
    }

    fn set_bound_records(
        &mut self,
        i: usize,
        first: u32,
        records: &[mien_core::lift::PackedBound],
    ) -> Result<()> {
        match &self.sink {
            Some((_, Lifts::Bound(l))) => match l.get(i) {
                Some(l) if l.instances() == 1 => {
                    Ok(l.data().write_records(&self.g, first as usize, records)?)
                }
                _ => Err(Error::invalid(
                    format!("instance {i}"),
                    "has no bound lift of its own to rewrite",
                )),
            },
            _ => Err(Error::invalid(
                format!("instance {i}"),
                "has no bound lift to rewrite",
            )),
        }
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
        if let Some((sink, _)) = &mut self.sink {
            GpuHairLift::record_batch(&mut self.hair, &mut enc, sink)?;
        }
        self.g.end_frame(&mut enc);
        self.g.submit(enc).map_err(G::error)?;
        self.times.rig += t1 - t0;
        self.times.lift += t1.elapsed();
        // Frames in flight: no wait here. The GPU times of the frames that completed meanwhile
        // are added now; `finish` adds the rest.
        self.gather_gpu_times()?;
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
        self.gather_gpu_times()?;
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
