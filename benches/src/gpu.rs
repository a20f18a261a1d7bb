//! The GPU backends under the harness, written once over the device layer
//! ([`mien_gpu::GpuDevice`]): one encoder per frame (rig pass, then every lift as one pass), one
//! submission, a blocking wait (the latency) — or none, frames in flight (the throughput). GPU stage times come from the device's timestamp queries of one
//! extra frame. The copy baseline is a buffer-to-buffer copy between two device buffers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_gpu::{
    GpuBoundData, GpuBoundLift, GpuDebugLift, GpuDevice, GpuGnmBackend, GpuRigBackend,
    GpuSplatSink, PosedPart,
};

use crate::harness::{Bench, Case, CaseError, CopyResult, HostTime, LiftMode, StageMs};
use crate::workloads::{Frames, Model, Workload};

/// What the harness needs of a device beyond the device layer: opening one and describing it.
pub trait BenchDevice: GpuDevice {
    /// Open the best device (software devices accepted only with `allow_software`).
    ///
    /// # Errors
    /// No device; only a software device when not allowed.
    fn open(allow_software: bool) -> anyhow::Result<Self>;
    /// The device in words (name, driver, API).
    fn describe(&self) -> String;
}

#[cfg(feature = "wgpu")]
impl BenchDevice for mien_wgpu::WgpuContext {
    fn open(allow_software: bool) -> anyhow::Result<Self> {
        let ctx = mien_wgpu::WgpuContext::new(&mien_wgpu::ContextOptions {
            allow_software,
            ..Default::default()
        })?;
        anyhow::ensure!(
            allow_software || !ctx.is_software(),
            "only a software adapter ({}) is present (--allow-software accepts it, for trying the harness)",
            ctx.info().name
        );
        Ok(ctx)
    }

    fn describe(&self) -> String {
        let i = self.info();
        format!(
            "{} ({:?}, driver {} {})",
            i.name, i.backend, i.driver, i.driver_info
        )
    }
}

#[cfg(feature = "vulkan")]
impl BenchDevice for mien_vulkan::VulkanContext {
    fn open(allow_software: bool) -> anyhow::Result<Self> {
        let ctx = mien_vulkan::VulkanContext::new(&mien_vulkan::ContextOptions {
            allow_software,
            ..Default::default()
        })?;
        anyhow::ensure!(
            allow_software || !ctx.is_software(),
            "only a software Vulkan device ({}) is present (--allow-software accepts it, for trying the harness)",
            ctx.name()
        );
        Ok(ctx)
    }

    fn describe(&self) -> String {
        use mien_vulkan::ash::vk;
        let p = self.properties();
        format!(
            "{} (Vulkan {}.{}, driver version {:#x})",
            self.name(),
            vk::api_version_major(p.api_version),
            vk::api_version_minor(p.api_version),
            p.driver_version
        )
    }
}

/// A GPU backend on one device.
#[derive(Clone, Debug)]
pub struct GpuBench<G: BenchDevice> {
    g: G,
}

/// The wgpu backend under the harness.
#[cfg(feature = "wgpu")]
pub type WgpuBench = GpuBench<mien_wgpu::WgpuContext>;
/// The raw Vulkan backend under the harness.
#[cfg(feature = "vulkan")]
pub type VulkanBench = GpuBench<mien_vulkan::VulkanContext>;

impl<G: BenchDevice> GpuBench<G> {
    /// Open the best device (software devices accepted only with `allow_software`).
    ///
    /// # Errors
    /// No device; only a software device when not allowed.
    pub fn new(allow_software: bool) -> anyhow::Result<Self> {
        Ok(GpuBench {
            g: G::open(allow_software)?,
        })
    }

    /// The device.
    pub fn context(&self) -> &G {
        &self.g
    }
}

/// A case's lifts: debug lifts (batched where they fit one binding) or one bound lift per
/// character over one uploaded setup.
enum GpuLifts<G: GpuDevice> {
    Debug(Vec<GpuDebugLift<G>>),
    Bound(Vec<GpuBoundLift<G>>),
}

impl<G: GpuDevice> GpuLifts<G> {
    fn is_empty(&self) -> bool {
        match self {
            GpuLifts::Debug(l) => l.is_empty(),
            GpuLifts::Bound(l) => l.is_empty(),
        }
    }
}

enum Poser<G: GpuDevice> {
    Rig(GpuRigBackend<G>, Vec<RigHandle>),
    Gnm(GpuGnmBackend<G>, Vec<GnmHandle>),
}

struct GpuCase<G: GpuDevice> {
    g: G,
    w: Arc<Workload>,
    poser: Poser<G>,
    sink: GpuSplatSink<G>,
    lifts: GpuLifts<G>,
    /// `set_controls_batch`'s counts, one per instance (allocated once).
    stats: Vec<ControlStats>,
    /// Host time since the last `host_time` (begin, set, encode, submit), and its frames.
    host: [Duration; 4],
    /// Frames in `host`.
    host_frames: u32,
}

fn device_error<G: GpuDevice>(e: G::Error) -> anyhow::Error {
    anyhow::Error::from(Into::<mien_core::Error>::into(e))
}

impl<G: GpuDevice> GpuCase<G> {
    fn record(&mut self, frame: u64, timestamps: bool, wait: bool) -> anyhow::Result<()> {
        let t0 = Instant::now();
        let t1;
        let mut enc = self.g.begin().map_err(device_error::<G>)?;
        let tb = Instant::now();
        match (&mut self.poser, &self.w.frames) {
            (Poser::Rig(b, hs), Frames::Rig(f)) => {
                // Every instance at once (the backend's parallel batch path).
                let w = &self.w;
                let which = |c: usize| w.ring_index(c as u32, frame);
                b.set_controls_batch(hs, f, &which, &mut self.stats)?;
                t1 = Instant::now();
                b.encode(&mut enc)?;
            }
            (Poser::Gnm(b, hs), Frames::Gnm(f)) => {
                let w = &self.w;
                let input = |c: usize| {
                    let i = &f[w.ring_index(c as u32, frame)];
                    (&i.head_ext[..], &i.joint_world[..])
                };
                b.set_head_ext_batch(hs, &input)?;
                t1 = Instant::now();
                b.encode(&mut enc)?;
            }
            _ => anyhow::bail!("model and frames disagree"),
        }
        match &mut self.lifts {
            GpuLifts::Debug(l) => GpuDebugLift::record_batch(l, &mut enc, &mut self.sink)?,
            GpuLifts::Bound(l) => GpuBoundLift::record_batch(l, &mut enc, &mut self.sink)?,
        }
        if timestamps {
            self.g.end_frame(&mut enc);
        }
        let t2 = Instant::now();
        self.g.submit(enc).map_err(device_error::<G>)?;
        let spans = [tb - t0, t1 - tb, t2 - t1, t2.elapsed()];
        for (h, d) in self.host.iter_mut().zip(spans) {
            *h += d;
        }
        self.host_frames += 1;
        if wait {
            self.g.wait().map_err(device_error::<G>)?;
        }
        Ok(())
    }
}

impl<G: GpuDevice> Case for GpuCase<G> {
    fn frame(&mut self, frame: u64) -> anyhow::Result<()> {
        self.record(frame, false, true)
    }

    fn submit(&mut self, frame: u64) -> anyhow::Result<()> {
        self.record(frame, false, false)
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        self.g.wait().map_err(device_error::<G>)
    }

    fn host_time(&mut self) -> Option<HostTime> {
        let [begin, set, encode, submit] = std::mem::take(&mut self.host);
        let n = std::mem::take(&mut self.host_frames).max(1);
        Some(HostTime {
            begin: begin / n,
            set: set / n,
            encode: encode / n,
            submit: submit / n,
        })
    }

    fn gpu_times(&mut self, frame: u64) -> anyhow::Result<Option<StageMs>> {
        if !self.g.caps().timestamps {
            return Ok(None);
        }
        // Drop the times of earlier frames, then time one frame on its own.
        self.g.completed_times().map_err(device_error::<G>)?;
        self.record(frame, true, true)?;
        let t = self.g.stage_times().map_err(device_error::<G>)?;
        Ok(t.map(|t| StageMs {
            morph: Some(t.morph_ms),
            skin: Some(t.skin_ms),
            lift: (!self.lifts.is_empty()).then_some(t.lift_ms),
        }))
    }
}

/// The lifts of a batch whose instance i goes to `ranges[i]`: bound lifts over `data` when given
/// (one per instance), else debug lifts ([`make_lifts`]).
fn lifts_for<'b, G: GpuDevice>(
    g: &G,
    v: u32,
    ranges: &[SlotRange],
    sink: &GpuSplatSink<G>,
    data: Option<&Arc<GpuBoundData<G>>>,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b, G>>>,
) -> Result<GpuLifts<G>, CaseError> {
    match data {
        None => Ok(GpuLifts::Debug(make_lifts(g, v, ranges, sink, parts)?)),
        Some(d) => {
            // One dispatch for the batch where its instances' vertices are evenly spaced in one
            // buffer and its ranges evenly spaced (a batch upload and a fresh sink): the runtime's
            // path; else one lift per instance.
            // One batch per page of the sink (its pages hold whole characters).
            let k = (sink.page_slots() / ranges.first().map_or(1, |r| r.count.max(1))).max(1);
            let mut lifts = Vec::new();
            for (c, chunk) in ranges.chunks(k as usize).enumerate() {
                let at = c * k as usize;
                match bound_batch(g, v, chunk, sink, d, &|i| parts(at + i)) {
                    Some(l) => lifts.push(l),
                    None => {
                        lifts.clear();
                        break;
                    }
                }
            }
            if !lifts.is_empty() {
                return Ok(GpuLifts::Bound(lifts));
            }
            Ok(GpuLifts::Bound(
                ranges
                    .iter()
                    .enumerate()
                    .map(|(i, r)| GpuBoundLift::new(g, v, &parts(i)?, Arc::clone(d), sink, *r))
                    .collect::<mien_core::Result<_>>()?,
            ))
        }
    }
}

/// The batch's bound lifts as one [`GpuBoundLift::new_batch`], when its instances' posed vertices
/// and ranges are evenly spaced and the span fits one binding.
fn bound_batch<'b, G: GpuDevice>(
    g: &G,
    v: u32,
    ranges: &[SlotRange],
    sink: &GpuSplatSink<G>,
    data: &Arc<GpuBoundData<G>>,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b, G>>>,
) -> Option<GpuBoundLift<G>> {
    if ranges.len() < 2 {
        let p0 = parts(0).ok()?;
        return GpuBoundLift::new(g, v, &p0, Arc::clone(data), sink, *ranges.first()?).ok();
    }
    let first = |i: usize| parts(i).ok().filter(|p| p.len() == 1).map(|p| p[0].first);
    let (f0, f1) = (first(0)?, first(1)?);
    let stride = f1.checked_sub(f0)?;
    let slots = ranges[1].offset.checked_sub(ranges[0].offset)?;
    let even = (0..ranges.len()).all(|i| {
        first(i) == Some(f0 + i as u32 * stride)
            && ranges[i].offset == ranges[0].offset + i as u32 * slots
            && ranges[i].count == ranges[0].count
    });
    if !even {
        return None;
    }
    let p0 = parts(0).ok()?;
    GpuBoundLift::new_batch(
        g,
        v,
        &p0,
        ranges.len() as u32,
        stride,
        Arc::clone(data),
        sink,
        ranges[0],
        slots,
    )
    .ok()
}

/// The debug lifts of a batch whose instance i goes to `ranges[i]` (consecutive ranges of `v` slots): one
/// batched lift (`from_parts_batch`, every instance in the same dispatches) where its slots fit one
/// binding, else one lift per instance (a later instance the backend refuses makes the row n/a).
fn make_lifts<'b, G: GpuDevice>(
    g: &G,
    v: u32,
    ranges: &[SlotRange],
    sink: &GpuSplatSink<G>,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b, G>>>,
) -> Result<Vec<GpuDebugLift<G>>, CaseError> {
    let Some(first) = ranges.first() else {
        return Ok(Vec::new());
    };
    let n = ranges.len() as u32;
    let params = |r: SlotRange| DebugLiftParams::new(r, v);
    if let Ok(l) = GpuDebugLift::from_parts_batch(g, v, &parts(0)?, n, v, sink, params(*first)) {
        return Ok(vec![l]);
    }
    let mut lifts = Vec::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        let made = parts(i).and_then(|p| GpuDebugLift::from_parts(g, v, &p, sink, params(*r)));
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

impl<G: BenchDevice> Bench for GpuBench<G> {
    fn name(&self) -> &'static str {
        G::NAME
    }

    fn device(&self) -> String {
        self.g.describe()
    }

    fn case(
        &self,
        w: &Arc<Workload>,
        batch: u32,
        lift: LiftMode,
    ) -> Result<Box<dyn Case>, CaseError> {
        let v = w.vertices();
        let data = match lift {
            LiftMode::Surface => Some(GpuBoundData::upload(&self.g, crate::cpu::surface_of(w)?)?),
            _ => None,
        };
        let slots = w.slots(lift);
        let total = u32::try_from(u64::from(batch) * u64::from(slots)).map_err(|_| {
            CaseError::NotApplicable(format!("{batch} × {slots} splat slots do not fit one sink"))
        })?;
        let on = lift != LiftMode::Off;
        // Pages of whole characters, so a sink larger than one allocation still holds each
        // character's slots in one buffer.
        let mut sink = GpuSplatSink::paged(&self.g, if on { total } else { 1 }, slots.max(1))?;
        let ranges: Vec<SlotRange> = if on {
            (0..batch)
                .map(|_| sink.allocate(slots))
                .collect::<mien_core::Result<_>>()?
        } else {
            Vec::new()
        };
        let (poser, lifts) = match &w.model {
            Model::Rig(rig) => {
                let mut b = GpuRigBackend::new(&self.g);
                let hs = b.upload_batch(rig, batch)?;
                let lifts = lifts_for(&self.g, v, &ranges, &sink, data.as_ref(), &|i| {
                    b.posed_parts(hs[i])
                })?;
                (Poser::Rig(b, hs), lifts)
            }
            Model::Gnm(pack) => {
                let mut b = GpuGnmBackend::new(&self.g);
                let hs = b.upload_gnm_batch(pack, batch)?;
                let lifts = lifts_for(&self.g, v, &ranges, &sink, data.as_ref(), &|i| {
                    b.posed_parts(hs[i])
                })?;
                (Poser::Gnm(b, hs), lifts)
            }
        };
        Ok(Box::new(GpuCase {
            g: self.g.clone(),
            w: w.clone(),
            poser,
            sink,
            lifts,
            stats: vec![ControlStats::default(); batch as usize],
            host: [Duration::ZERO; 4],
            host_frames: 0,
        }))
    }

    fn copy_limit(&self) -> u64 {
        self.g.caps().max_buffer.min(1 << 30)
    }

    fn copy(&self, bytes: u64, copies: u32) -> anyhow::Result<CopyResult> {
        let g = &self.g;
        let a = g
            .output("a copy source", bytes)
            .map_err(device_error::<G>)?;
        let b = g
            .output("a copy destination", bytes)
            .map_err(device_error::<G>)?;
        let once = || -> anyhow::Result<()> {
            let mut enc = g.begin().map_err(device_error::<G>)?;
            g.copy(&mut enc, &a, &b, bytes).map_err(device_error::<G>)?;
            g.submit(enc).map_err(device_error::<G>)?;
            g.wait().map_err(device_error::<G>)
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
