//! The wgpu backend under the harness: one command encoder per frame (rig pass, then one lift per
//! instance), one submission, a blocking wait. GPU stage times come from the context's timestamp
//! queries, resolved in one extra frame and read back. The copy baseline is
//! `copy_buffer_to_buffer` between two device buffers.

use std::sync::Arc;
use std::time::Instant;

use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_wgpu::{
    ContextOptions, PosedPart, Timestamps, WgpuContext, WgpuDebugLift, WgpuGnmBackend,
    WgpuRigBackend, WgpuSplatSink,
};

use crate::harness::{Bench, Case, CaseError, CopyResult, StageMs};
use crate::workloads::{Frames, Model, Workload};

/// The wgpu backend on one device.
#[derive(Clone, Debug)]
pub struct WgpuBench {
    ctx: WgpuContext,
}

impl WgpuBench {
    /// Open the best adapter (software adapters accepted only with `allow_software`).
    ///
    /// # Errors
    /// No adapter.
    pub fn new(allow_software: bool) -> anyhow::Result<Self> {
        let ctx = WgpuContext::new(&ContextOptions {
            allow_software,
            ..Default::default()
        })?;
        Ok(WgpuBench { ctx })
    }

    /// The context.
    pub fn context(&self) -> &WgpuContext {
        &self.ctx
    }
}

enum Poser {
    Rig(WgpuRigBackend, Vec<RigHandle>),
    Gnm(WgpuGnmBackend, Vec<GnmHandle>),
}

struct WgpuCase {
    ctx: WgpuContext,
    w: Arc<Workload>,
    poser: Poser,
    sink: WgpuSplatSink,
    lifts: Vec<WgpuDebugLift>,
    /// `set_controls_batch`'s counts, one per instance (allocated once).
    stats: Vec<ControlStats>,
}

impl WgpuCase {
    fn record(&mut self, frame: u64, timestamps: bool) -> anyhow::Result<()> {
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&Default::default());
        match (&mut self.poser, &self.w.frames) {
            (Poser::Rig(b, hs), Frames::Rig(f)) => {
                // Every instance at once (the backend's parallel batch path).
                let w = &self.w;
                let which = |c: usize| w.ring_index(c as u32, frame);
                b.set_controls_batch(hs, f, &which, &mut self.stats)?;
                b.encode(&mut enc)?;
            }
            (Poser::Gnm(b, hs), Frames::Gnm(f)) => {
                let w = &self.w;
                let input = |c: usize| {
                    let i = &f[w.ring_index(c as u32, frame)];
                    (&i.head_ext[..], &i.joint_world[..])
                };
                b.set_head_ext_batch(hs, &input)?;
                b.encode(&mut enc)?;
            }
            _ => anyhow::bail!("model and frames disagree"),
        }
        for l in &mut self.lifts {
            l.record(&mut enc, &mut self.sink)?;
        }
        if timestamps && let Some(ts) = self.ctx.timestamps() {
            ts.resolve(&mut enc);
        }
        self.ctx.submit(enc);
        self.ctx.wait()?;
        Ok(())
    }
}

impl Case for WgpuCase {
    fn frame(&mut self, frame: u64) -> anyhow::Result<()> {
        self.record(frame, false)
    }

    fn gpu_times(&mut self, frame: u64) -> anyhow::Result<Option<StageMs>> {
        if self.ctx.timestamps().is_none() {
            return Ok(None);
        }
        self.record(frame, true)?;
        let Some((buf, period)) = self.ctx.timestamps().map(Timestamps::resolved) else {
            return Ok(None);
        };
        let bytes = self
            .ctx
            .read_buffers("timestamps", &[(buf, 0, buf.size())])?;
        let t = Timestamps::decode(bytes.first().map_or(&[][..], |b| b), period);
        Ok(Some(StageMs {
            morph: Some(t.morph_ms),
            skin: Some(t.skin_ms),
            lift: (!self.lifts.is_empty()).then_some(t.lift_ms),
        }))
    }
}

/// The lifts of a batch whose instance i goes to `ranges[i]` (consecutive ranges of `v` slots): one
/// batched lift (`from_parts_batch`, every instance in the same dispatches) where its slots fit one
/// binding, else one lift per instance (a later instance the backend refuses makes the row n/a).
fn make_lifts<'b>(
    ctx: &WgpuContext,
    v: u32,
    ranges: &[SlotRange],
    sink: &WgpuSplatSink,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b>>>,
) -> Result<Vec<WgpuDebugLift>, CaseError> {
    let Some(first) = ranges.first() else {
        return Ok(Vec::new());
    };
    let n = ranges.len() as u32;
    let params = |r: SlotRange| DebugLiftParams::new(r, v);
    if let Ok(l) = WgpuDebugLift::from_parts_batch(ctx, v, &parts(0)?, n, v, sink, params(*first)) {
        return Ok(vec![l]);
    }
    let mut lifts = Vec::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        let made = parts(i).and_then(|p: Vec<PosedPart<'b>>| {
            WgpuDebugLift::from_parts(ctx, v, &p, sink, params(*r))
        });
        match made {
            Ok(l) => lifts.push(l),
            Err(e) if i > 0 => {
                return Err(CaseError::NotApplicable(format!(
                    "lifting instance {i} of a batch: {e}"
                )));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(lifts)
}

fn ranges(
    sink: &mut WgpuSplatSink,
    batch: u32,
    v: u32,
    lift: bool,
) -> mien_core::Result<Vec<SlotRange>> {
    if !lift {
        return Ok(Vec::new());
    }
    (0..batch).map(|_| sink.allocate(v)).collect()
}

impl Bench for WgpuBench {
    fn name(&self) -> &'static str {
        "wgpu"
    }

    fn device(&self) -> String {
        let i = self.ctx.info();
        format!(
            "{} ({:?}, driver {} {})",
            i.name, i.backend, i.driver, i.driver_info
        )
    }

    fn case(&self, w: &Arc<Workload>, batch: u32, lift: bool) -> Result<Box<dyn Case>, CaseError> {
        let v = w.vertices();
        let mut sink = WgpuSplatSink::new(&self.ctx, if lift { batch * v } else { 1 })?;
        let ranges = ranges(&mut sink, batch, v, lift)?;
        let (poser, lifts) = match &w.model {
            Model::Rig(rig) => {
                let mut b = WgpuRigBackend::new(&self.ctx);
                let hs = b.upload_batch(rig, batch)?;
                let lifts = make_lifts(&self.ctx, v, &ranges, &sink, &|i| b.posed_parts(hs[i]))?;
                (Poser::Rig(b, hs), lifts)
            }
            Model::Gnm(pack) => {
                let mut b = WgpuGnmBackend::new(&self.ctx);
                let hs = b.upload_gnm_batch(pack, batch)?;
                let lifts = make_lifts(&self.ctx, v, &ranges, &sink, &|i| b.posed_parts(hs[i]))?;
                (Poser::Gnm(b, hs), lifts)
            }
        };
        Ok(Box::new(WgpuCase {
            ctx: self.ctx.clone(),
            w: w.clone(),
            poser,
            sink,
            lifts,
            stats: vec![ControlStats::default(); batch as usize],
        }))
    }

    fn copy_limit(&self) -> u64 {
        self.ctx.limits().max_buffer_size
    }

    fn copy(&self, bytes: u64, copies: u32) -> anyhow::Result<CopyResult> {
        let d = self.ctx.device();
        let make = |label| {
            d.create_buffer(&mien_wgpu::wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: mien_wgpu::wgpu::BufferUsages::COPY_SRC
                    | mien_wgpu::wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (a, b) = (make("mien bench copy src"), make("mien bench copy dst"));
        let once = || -> anyhow::Result<()> {
            let mut enc = d.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&a, 0, &b, 0, bytes);
            self.ctx.submit(enc);
            self.ctx.wait()?;
            Ok(())
        };
        once()?;
        let start = Instant::now();
        for _ in 0..copies {
            once()?;
        }
        let t = start.elapsed().as_secs_f64() / f64::from(copies.max(1));
        Ok(CopyResult {
            bytes,
            copies,
            us_per_copy: t * 1e6,
            gb_per_s: 2.0 * bytes as f64 / t / 1e9,
        })
    }
}
