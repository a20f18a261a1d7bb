//! The CPU engine: [`CpuRigBackend`] / [`CpuGnmBackend`] (the reference math, rayon-parallel over
//! the instances) and one [`CpuDebugLift`] per instance into one [`CpuSplatSink`].

use glam::Mat4;
use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::Lift;
use mien_core::rig::{ControlStats, PosedVertices, RigBackend, RigControls, RigHandle};
use mien_core::sink::{SplatBuffers, SplatSink};
use mien_cpu::{
    CpuBoundLift, CpuDebugLift, CpuEncoder, CpuGnmBackend, CpuRigBackend, CpuSplatSink,
};

use super::{
    Engine, Extras, LiftSpec, SinkRef, Times, params_for, sink_slots, slot_range, wrong_model,
};
use crate::asset::Model;
use crate::error::{Error, Result};

enum Poser {
    Rig(CpuRigBackend, Vec<RigHandle>),
    /// The backend, its handles, and zero normals `(V,3)` (a pack has none; the debug lift's
    /// normal shading then points away from the centroid, as on the GPU).
    Head(CpuGnmBackend, Vec<GnmHandle>, Vec<[f32; 3]>),
}

/// Posed positions and normals `(V,3)` each.
type Posed<'a> = (&'a [[f32; 3]], &'a [[f32; 3]]);

/// One instance's lift.
enum CpuLift {
    Debug(CpuDebugLift),
    Bound(CpuBoundLift),
}

/// N instances on the CPU.
pub(crate) struct CpuEngine {
    poser: Poser,
    v: u32,
    /// Slots per instance (V for the debug lift, the gaussian count for a bound lift).
    per: u32,
    sink: Option<(CpuSplatSink, Vec<CpuLift>)>,
    enc: CpuEncoder,
    /// Slots of the body's lift per instance (the cloth's and the hair's follow).
    body: u32,
    extras: Extras,
    /// Per instance: the cloth's lift and its staged vertices and normals.
    cloth: Vec<(CpuBoundLift, Vec<[f32; 3]>, Vec<[f32; 3]>)>,
    /// Per instance: the staged guide points.
    hair: Vec<Vec<[f32; 3]>>,
}

impl CpuEngine {
    pub(crate) fn new(model: &Model, n: u32) -> Result<Self> {
        let (poser, v) = match model {
            Model::Rig(rig) => {
                let mut b = CpuRigBackend::new();
                let hs = b.upload_batch(rig, n)?;
                let v = b.vertex_count(hs[0]);
                (Poser::Rig(b, hs), v)
            }
            Model::Head { pack, .. } => {
                let mut b = CpuGnmBackend::new();
                let hs = b.upload_gnm_batch(pack, n)?;
                let v = b.vertex_count(hs[0]);
                (Poser::Head(b, hs, vec![[0.0; 3]; v as usize]), v)
            }
        };
        Ok(CpuEngine {
            poser,
            v,
            per: v,
            sink: None,
            enc: CpuEncoder::default(),
            body: v,
            extras: Extras::default(),
            cloth: Vec::new(),
            hair: Vec::new(),
        })
    }

    fn posed(&self, i: usize) -> Result<Posed<'_>> {
        match &self.poser {
            Poser::Rig(b, hs) => Ok(b.posed(*handle(hs, i)?)),
            Poser::Head(b, hs, zero) => Ok((b.posed(*handle(hs, i)?)?, zero)),
        }
    }

    fn encode_rig(&mut self) -> Result<()> {
        match &mut self.poser {
            Poser::Rig(b, _) => b.encode(&mut self.enc)?,
            Poser::Head(b, _, _) => b.encode(&mut self.enc)?,
        }
        Ok(())
    }
}

/// `hs[i]`, or a refusal naming the instance.
pub(crate) fn handle<H>(hs: &[H], i: usize) -> Result<&H> {
    hs.get(i).ok_or_else(|| super::no_instance(i, hs.len()))
}

impl Engine for CpuEngine {
    fn set_precision(&mut self, precision: mien_cpu::Precision) -> Result<()> {
        match &mut self.poser {
            Poser::Rig(b, _) => b.set_precision(precision),
            Poser::Head(b, _, _) => b.set_precision(precision),
        }
        Ok(())
    }

    fn set_rig(&mut self, controls: &[RigControls], stats: &mut [ControlStats]) -> Result<()> {
        let Poser::Rig(b, hs) = &mut self.poser else {
            return Err(wrong_model("morph controls"));
        };
        b.set_controls_batch(hs, controls, &|k| k, stats)?;
        Ok(())
    }

    fn set_head(&mut self, head_ext: &[Vec<f32>], joints: &[Vec<Mat4>]) -> Result<()> {
        let Poser::Head(b, hs, _) = &mut self.poser else {
            return Err(wrong_model("head_ext"));
        };
        b.set_head_ext_batch(hs, &|k| (&head_ext[k][..], &joints[k][..]))?;
        Ok(())
    }

    fn posed_cpu(&self, i: usize) -> Option<&[[f32; 3]]> {
        self.posed(i).ok().map(|p| p.0)
    }

    fn pose_and_read(&mut self, i: usize) -> Result<PosedVertices> {
        self.encode_rig()?;
        self.read_posed(i)
    }

    fn read_posed(&mut self, i: usize) -> Result<PosedVertices> {
        if let Poser::Rig(b, hs) = &self.poser {
            // The backend's own read-out: positions, normals and tangents.
            return Ok(b.read_vertices(*handle(hs, i)?)?);
        }
        let (p, n) = self.posed(i)?;
        Ok(PosedVertices {
            positions: p.to_vec(),
            normals: n.to_vec(),
            tangents: Vec::new(),
        })
    }

    fn attach_lift(&mut self, spec: LiftSpec, extras: Extras) -> Result<()> {
        let (v, n) = match &self.poser {
            Poser::Rig(_, hs) => (self.v, hs.len()),
            Poser::Head(_, hs, _) => (self.v, hs.len()),
        };
        let body = spec.slots(v);
        let (cloth_slots, hair_slots) = extras.slots();
        let per = body
            .checked_add(cloth_slots)
            .and_then(|x| x.checked_add(hair_slots))
            .ok_or_else(|| Error::invalid("slots", "more than a 32-bit slot index holds"))?;
        let mut sink = CpuSplatSink::new(sink_slots(n as u32, per)?);
        let mut lifts = Vec::with_capacity(n);
        let mut cloth = Vec::new();
        for i in 0..n {
            let all = sink.allocate(per)?;
            debug_assert_eq!(all, slot_range(i, per));
            let range = mien_core::sink::SlotRange {
                offset: all.offset,
                count: body,
            };
            let rig = match &self.poser {
                Poser::Rig(_, hs) => Some(hs[i]),
                Poser::Head(..) => None,
            };
            lifts.push(match &spec {
                LiftSpec::Debug(template) => {
                    let p = params_for(template, i, v, per);
                    CpuLift::Debug(match &self.poser {
                        Poser::Rig(b, hs) => CpuDebugLift::new(b, hs[i], &sink, p)?,
                        Poser::Head(..) => CpuDebugLift::for_vertices(v, Vec::new(), &sink, p)?,
                    })
                }
                LiftSpec::Bound(setup) | LiftSpec::BoundPerInstance(setup) => CpuLift::Bound(
                    CpuBoundLift::new(rig, v, std::sync::Arc::clone(setup), &sink, range)?,
                ),
            });
            if let Some((setup, vc)) = &extras.cloth {
                let r = mien_core::sink::SlotRange {
                    offset: all.offset + body,
                    count: cloth_slots,
                };
                let l = CpuBoundLift::new(None, *vc, std::sync::Arc::clone(setup), &sink, r)?;
                cloth.push((l, Vec::new(), Vec::new()));
            }
        }
        self.hair = match &extras.hair {
            Some(g) => vec![g.guides.clone(); n],
            None => Vec::new(),
        };
        self.per = per;
        self.body = body;
        self.cloth = cloth;
        self.extras = extras;
        self.sink = Some((sink, lifts));
        Ok(())
    }

    fn set_cloth(&mut self, i: usize, pos: &[[f32; 3]], nrm: &[[f32; 3]]) -> Result<()> {
        if let Some(c) = self.cloth.get_mut(i) {
            c.1.clear();
            c.1.extend_from_slice(pos);
            c.2.clear();
            c.2.extend_from_slice(nrm);
        }
        Ok(())
    }

    fn set_hair(&mut self, i: usize, guides: &[[f32; 3]]) -> Result<()> {
        if let Some(h) = self.hair.get_mut(i) {
            h.clear();
            h.extend_from_slice(guides);
        }
        Ok(())
    }

    fn set_bound_records(
        &mut self,
        i: usize,
        first: u32,
        records: &[mien_core::lift::PackedBound],
    ) -> Result<()> {
        match self.sink.as_mut().and_then(|(_, l)| l.get_mut(i)) {
            Some(CpuLift::Bound(l)) => Ok(l.set_records(first as usize, records)?),
            _ => Err(Error::invalid(
                format!("instance {i}"),
                "has no bound lift to rewrite",
            )),
        }
    }

    fn frame(&mut self) -> Result<()> {
        self.encode_rig()?;
        let Some((sink, lifts)) = &mut self.sink else {
            return Ok(());
        };
        match &self.poser {
            Poser::Rig(b, _) => {
                for l in lifts.iter_mut() {
                    match l {
                        CpuLift::Debug(l) => l.encode(&mut self.enc, b, sink)?,
                        CpuLift::Bound(l) => l.encode(&mut self.enc, b, sink)?,
                    }
                }
            }
            Poser::Head(b, hs, zero) => {
                for (l, h) in lifts.iter_mut().zip(hs) {
                    let pos = b.posed(*h)?;
                    match l {
                        CpuLift::Debug(l) => l.encode_posed(&mut self.enc, pos, zero, sink)?,
                        CpuLift::Bound(l) => l.encode_posed(&mut self.enc, pos, zero, sink)?,
                    }
                }
            }
        }
        for (l, pos, nrm) in &mut self.cloth {
            if !pos.is_empty() {
                l.encode_posed(&mut self.enc, pos, nrm, sink)?;
            }
        }
        if let Some(g) = &self.extras.hair {
            let start = std::time::Instant::now();
            let (cloth, _) = self.extras.slots();
            for (i, guides) in self.hair.iter().enumerate() {
                let offset = i * self.per as usize + (self.body + cloth) as usize;
                mien_core::hair::strand_splats(g, guides, sink.buffers_mut(), offset)?;
            }
            self.enc.lift += start.elapsed();
        }
        Ok(())
    }

    fn splats(&mut self, i: usize) -> Result<SplatBuffers> {
        let Some((sink, lifts)) = &self.sink else {
            return Err(Error::invalid("splats", "the runtime has no lift attached"));
        };
        handle(lifts, i)?;
        Ok(copy_range(sink, slot_range(i, self.per)))
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }

    fn times(&self) -> Times {
        Times {
            rig: self.enc.rig,
            lift: self.enc.lift,
            dynamics: std::time::Duration::ZERO,
            gpu_ms: None,
        }
    }

    fn bytes(&self) -> (u64, u64) {
        let rig = match &self.poser {
            Poser::Rig(b, _) => b.bytes(),
            Poser::Head(b, _, _) => b.bytes(),
        };
        (rig, self.sink.as_ref().map_or(0, |s| s.0.bytes()))
    }

    fn sink(&self) -> SinkRef<'_> {
        self.sink
            .as_ref()
            .map_or(SinkRef::None, |(s, _)| SinkRef::Cpu(s))
    }
}

/// The slots `r` of a CPU sink, copied.
pub(crate) fn copy_range(sink: &CpuSplatSink, r: mien_core::sink::SlotRange) -> SplatBuffers {
    let b = sink.buffers();
    let s = r.offset as usize..r.end() as usize;
    SplatBuffers {
        center: b.center[s.clone()].to_vec(),
        color: b.color[s.clone()].to_vec(),
        cov_a: b.cov_a[s.clone()].to_vec(),
        cov_b: b.cov_b[s].to_vec(),
    }
}
