//! The CPU backend under the harness: `mien_cpu` rigs and heads (rayon over the global pool), the
//! CPU lift and sink; the copy baseline is a host memcpy split over the same pool in 1 MiB chunks.

use std::sync::Arc;
use std::time::Instant;

use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{RigBackend, RigHandle};
use mien_core::sink::SplatSink;
use mien_cpu::{
    CpuBoundLift, CpuDebugLift, CpuEncoder, CpuGnmBackend, CpuRigBackend, CpuSplatSink, Precision,
};
use rayon::prelude::*;

use crate::harness::{Bench, Case, CaseError, CopyResult, LiftMode, StageMs};
use crate::workloads::{Frames, Model, Workload};

/// The CPU backend at one [`Precision`] (`cpu`: exact, `cpu-fast`: fused multiply-adds).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBench {
    /// How its rigs and heads round.
    pub precision: Precision,
}

impl CpuBench {
    /// The exact reference (`cpu`).
    pub const EXACT: Self = Self {
        precision: Precision::Exact,
    };
    /// The fast path (`cpu-fast`).
    pub const FAST: Self = Self {
        precision: Precision::Fast,
    };
}

/// A case's lifts, one per character.
enum CpuLifts {
    Debug(Vec<CpuDebugLift>),
    Bound(Vec<CpuBoundLift>),
}

struct RigCase {
    w: Arc<Workload>,
    backend: CpuRigBackend,
    handles: Vec<RigHandle>,
    sink: CpuSplatSink,
    lifts: CpuLifts,
    enc: CpuEncoder,
}

impl Case for RigCase {
    fn frame(&mut self, frame: u64) -> anyhow::Result<()> {
        let Frames::Rig(f) = &self.w.frames else {
            anyhow::bail!("a rig case needs rig frames");
        };
        for (c, h) in self.handles.iter().enumerate() {
            self.backend
                .set_controls(*h, &f[self.w.ring_index(c as u32, frame)])?;
        }
        self.backend.encode(&mut self.enc)?;
        match &mut self.lifts {
            CpuLifts::Debug(ls) => {
                for l in ls {
                    l.encode(&mut self.enc, &self.backend, &mut self.sink)?;
                }
            }
            CpuLifts::Bound(ls) => {
                for l in ls {
                    l.encode(&mut self.enc, &self.backend, &mut self.sink)?;
                }
            }
        }
        Ok(())
    }

    fn gpu_times(&mut self, _frame: u64) -> anyhow::Result<Option<StageMs>> {
        Ok(None)
    }
}

struct GnmCase {
    w: Arc<Workload>,
    backend: CpuGnmBackend,
    handles: Vec<GnmHandle>,
    sink: CpuSplatSink,
    lifts: CpuLifts,
    zeros: Vec<[f32; 3]>,
    enc: CpuEncoder,
}

impl Case for GnmCase {
    fn frame(&mut self, frame: u64) -> anyhow::Result<()> {
        let Frames::Gnm(f) = &self.w.frames else {
            anyhow::bail!("a GNM case needs GNM frames");
        };
        for (c, h) in self.handles.iter().enumerate() {
            let input = &f[self.w.ring_index(c as u32, frame)];
            self.backend
                .set_head_ext(*h, &input.head_ext, &input.joint_world)?;
        }
        self.backend.encode(&mut self.enc)?;
        // A linear head poses no normals: zeros (the bound lift's fallback frame then takes +z).
        match &mut self.lifts {
            CpuLifts::Debug(ls) => {
                for (l, h) in ls.iter_mut().zip(&self.handles) {
                    let posed = self.backend.posed(*h)?;
                    l.encode_posed(&mut self.enc, posed, &self.zeros, &mut self.sink)?;
                }
            }
            CpuLifts::Bound(ls) => {
                for (l, h) in ls.iter_mut().zip(&self.handles) {
                    let posed = self.backend.posed(*h)?;
                    l.encode_posed(&mut self.enc, posed, &self.zeros, &mut self.sink)?;
                }
            }
        }
        Ok(())
    }

    fn gpu_times(&mut self, _frame: u64) -> anyhow::Result<Option<StageMs>> {
        Ok(None)
    }
}

/// A sink of `batch · slots` slots (one slot when the lift is off) and its ranges, one per
/// instance.
fn sink_for(
    batch: u32,
    slots: u32,
    lift: LiftMode,
) -> Result<(CpuSplatSink, Vec<mien_core::sink::SlotRange>), CaseError> {
    let on = lift != LiftMode::Off;
    let total = u64::from(batch) * u64::from(slots);
    let total = u32::try_from(total).map_err(|_| {
        CaseError::NotApplicable(format!("{total} splat slots do not fit one sink"))
    })?;
    let mut sink = CpuSplatSink::new(if on { total } else { 1 });
    let ranges = if on {
        (0..batch)
            .map(|_| sink.allocate(slots))
            .collect::<mien_core::Result<_>>()?
    } else {
        Vec::new()
    };
    Ok((sink, ranges))
}

/// The workload's surface setup, or why the surface rows are n/a.
pub(crate) fn surface_of(w: &Workload) -> Result<Arc<mien_core::lift::BoundSetup>, CaseError> {
    w.surface().ok_or_else(|| {
        CaseError::NotApplicable(format!(
            "the surface lift cannot be built on {} (no triangles)",
            w.id
        ))
    })
}

impl Bench for CpuBench {
    fn name(&self) -> &'static str {
        match self.precision {
            Precision::Exact => "cpu",
            Precision::Fast => "cpu-fast",
        }
    }

    fn device(&self) -> String {
        format!(
            "{} ({} rayon threads)",
            crate::machine::cpu_model(),
            rayon::current_num_threads()
        )
    }

    fn case(
        &self,
        w: &Arc<Workload>,
        batch: u32,
        lift: LiftMode,
    ) -> Result<Box<dyn Case>, CaseError> {
        let v = w.vertices();
        let setup = match lift {
            LiftMode::Surface => Some(surface_of(w)?),
            _ => None,
        };
        let (sink, ranges) = sink_for(batch, w.slots(lift), lift)?;
        let bound = |rig: Option<&[RigHandle]>| -> Result<CpuLifts, CaseError> {
            let Some(setup) = &setup else {
                unreachable!("only the surface lift binds")
            };
            Ok(CpuLifts::Bound(
                ranges
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        CpuBoundLift::new(rig.map(|h| h[i]), v, Arc::clone(setup), &sink, *r)
                    })
                    .collect::<mien_core::Result<_>>()?,
            ))
        };
        match &w.model {
            Model::Rig(rig) => {
                let mut backend = CpuRigBackend::new();
                backend.set_precision(self.precision);
                let handles = backend.upload_batch(rig, batch)?;
                let lifts = match lift {
                    LiftMode::Surface => bound(Some(&handles))?,
                    _ => CpuLifts::Debug(
                        handles
                            .iter()
                            .zip(&ranges)
                            .map(|(h, r)| {
                                CpuDebugLift::new(&backend, *h, &sink, DebugLiftParams::new(*r, v))
                            })
                            .collect::<mien_core::Result<_>>()?,
                    ),
                };
                Ok(Box::new(RigCase {
                    w: w.clone(),
                    backend,
                    handles,
                    sink,
                    lifts,
                    enc: CpuEncoder::default(),
                }))
            }
            Model::Gnm(pack) => {
                let mut backend = CpuGnmBackend::new();
                backend.set_precision(self.precision);
                let handles = backend.upload_gnm_batch(pack, batch)?;
                let lifts = match lift {
                    LiftMode::Surface => bound(None)?,
                    _ => CpuLifts::Debug(
                        ranges
                            .iter()
                            .map(|r| {
                                CpuDebugLift::for_vertices(
                                    v,
                                    Vec::new(),
                                    &sink,
                                    DebugLiftParams::new(*r, v),
                                )
                            })
                            .collect::<mien_core::Result<_>>()?,
                    ),
                };
                Ok(Box::new(GnmCase {
                    w: w.clone(),
                    backend,
                    handles,
                    sink,
                    lifts,
                    zeros: vec![[0.0; 3]; v as usize],
                    enc: CpuEncoder::default(),
                }))
            }
        }
    }

    fn copy_limit(&self) -> u64 {
        1 << 30
    }

    fn copy(&self, bytes: u64, copies: u32) -> anyhow::Result<CopyResult> {
        let n = bytes as usize;
        let src: Vec<u8> = (0..n).map(|i| i as u8).collect();
        let mut dst = vec![0u8; n];
        let run = |dst: &mut [u8]| {
            dst.par_chunks_mut(1 << 20)
                .zip(src.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s));
        };
        run(&mut dst);
        let start = Instant::now();
        for _ in 0..copies {
            run(std::hint::black_box(&mut dst));
        }
        let t = start.elapsed().as_secs_f64() / f64::from(copies.max(1));
        anyhow::ensure!(dst == src, "the host copy did not copy");
        Ok(CopyResult {
            bytes,
            copies,
            us_per_copy: t * 1e6,
            gb_per_s: 2.0 * bytes as f64 / t / 1e9,
        })
    }
}
