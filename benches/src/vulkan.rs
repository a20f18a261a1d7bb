//! The raw Vulkan backend under the harness: one command buffer per frame (rig pass, then one lift
//! per instance), one submission, a fence wait. GPU stage times are the context's timestamps of the
//! last completed frame. The copy baseline is `vkCmdCopyBuffer` between two device-local buffers.

use std::sync::Arc;
use std::time::Instant;

use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_vulkan::ash::vk;
use mien_vulkan::{
    ContextOptions, PosedPart, VulkanContext, VulkanDebugLift, VulkanGnmBackend, VulkanRigBackend,
    VulkanSplatSink,
};

use crate::harness::{Bench, Case, CaseError, CopyResult, StageMs};
use crate::workloads::{Frames, Model, Workload};

/// The Vulkan backend on one device.
#[derive(Clone, Debug)]
pub struct VulkanBench {
    ctx: VulkanContext,
}

impl VulkanBench {
    /// Open the best device (software devices accepted only with `allow_software`).
    ///
    /// # Errors
    /// No loader or device; a software device when not allowed.
    pub fn new(allow_software: bool) -> anyhow::Result<Self> {
        let ctx = VulkanContext::new(&ContextOptions {
            allow_software,
            ..Default::default()
        })?;
        anyhow::ensure!(
            allow_software || !ctx.is_software(),
            "only a software Vulkan device ({}) is present (--allow-software accepts it, for trying the harness)",
            ctx.name()
        );
        Ok(VulkanBench { ctx })
    }
}

enum Poser {
    Rig(VulkanRigBackend, Vec<RigHandle>),
    Gnm(VulkanGnmBackend, Vec<GnmHandle>),
}

struct VulkanCase {
    ctx: VulkanContext,
    w: Arc<Workload>,
    poser: Poser,
    sink: VulkanSplatSink,
    lifts: Vec<VulkanDebugLift>,
    /// `set_controls_batch`'s counts, one per instance (allocated once).
    stats: Vec<ControlStats>,
}

impl Case for VulkanCase {
    fn frame(&mut self, frame: u64) -> anyhow::Result<()> {
        let mut enc = self.ctx.begin()?;
        match (&mut self.poser, &self.w.frames) {
            (Poser::Rig(b, hs), Frames::Rig(f)) => {
                // Every instance at once (the backend's parallel batch path).
                let w = &self.w;
                let which = |c: usize| w.ring_index(c as u32, frame);
                b.set_controls_batch(hs, f, &which, &mut self.stats)?;
                b.encode(&mut enc)?;
                VulkanDebugLift::record_batch(&mut self.lifts, &mut enc, &mut self.sink)?;
            }
            (Poser::Gnm(b, hs), Frames::Gnm(f)) => {
                let w = &self.w;
                let input = |c: usize| {
                    let i = &f[w.ring_index(c as u32, frame)];
                    (&i.head_ext[..], &i.joint_world[..])
                };
                b.set_head_ext_batch(hs, &input)?;
                b.encode(&mut enc)?;
                VulkanDebugLift::record_batch(&mut self.lifts, &mut enc, &mut self.sink)?;
            }
            _ => anyhow::bail!("model and frames disagree"),
        }
        self.ctx.submit(enc)?;
        self.ctx.wait()?;
        Ok(())
    }

    fn gpu_times(&mut self, frame: u64) -> anyhow::Result<Option<StageMs>> {
        if !self.ctx.has_timestamps() {
            return Ok(None);
        }
        self.frame(frame)?;
        Ok(self.ctx.stage_times().map(|t| StageMs {
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
    ctx: &VulkanContext,
    v: u32,
    ranges: &[SlotRange],
    sink: &VulkanSplatSink,
    parts: &dyn Fn(usize) -> mien_core::Result<Vec<PosedPart<'b>>>,
) -> Result<Vec<VulkanDebugLift>, CaseError> {
    let Some(first) = ranges.first() else {
        return Ok(Vec::new());
    };
    let n = ranges.len() as u32;
    let params = |r: SlotRange| DebugLiftParams::new(r, v);
    if let Ok(l) = VulkanDebugLift::from_parts_batch(ctx, v, &parts(0)?, n, v, sink, params(*first))
    {
        return Ok(vec![l]);
    }
    let mut lifts = Vec::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        let made = parts(i).and_then(|p: Vec<PosedPart<'b>>| {
            VulkanDebugLift::from_parts(ctx, v, &p, sink, params(*r))
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
    sink: &mut VulkanSplatSink,
    batch: u32,
    v: u32,
    lift: bool,
) -> mien_core::Result<Vec<SlotRange>> {
    if !lift {
        return Ok(Vec::new());
    }
    (0..batch).map(|_| sink.allocate(v)).collect()
}

impl Bench for VulkanBench {
    fn name(&self) -> &'static str {
        "vulkan"
    }

    fn device(&self) -> String {
        let p = self.ctx.properties();
        format!(
            "{} (Vulkan {}.{}, driver version {:#x})",
            self.ctx.name(),
            vk::api_version_major(p.api_version),
            vk::api_version_minor(p.api_version),
            p.driver_version
        )
    }

    fn case(&self, w: &Arc<Workload>, batch: u32, lift: bool) -> Result<Box<dyn Case>, CaseError> {
        let v = w.vertices();
        let mut sink = VulkanSplatSink::new(&self.ctx, if lift { batch * v } else { 1 })?;
        let ranges = ranges(&mut sink, batch, v, lift)?;
        let (poser, lifts) = match &w.model {
            Model::Rig(rig) => {
                let mut b = VulkanRigBackend::new(&self.ctx);
                let hs = b.upload_batch(rig, batch)?;
                let lifts = make_lifts(&self.ctx, v, &ranges, &sink, &|i| b.posed_parts(hs[i]))?;
                (Poser::Rig(b, hs), lifts)
            }
            Model::Gnm(pack) => {
                let mut b = VulkanGnmBackend::new(&self.ctx);
                let hs = b.upload_gnm_batch(pack, batch)?;
                let lifts = make_lifts(&self.ctx, v, &ranges, &sink, &|i| b.posed_parts(hs[i]))?;
                (Poser::Gnm(b, hs), lifts)
            }
        };
        Ok(Box::new(VulkanCase {
            ctx: self.ctx.clone(),
            w: w.clone(),
            poser,
            sink,
            lifts,
            stats: vec![ControlStats::default(); batch as usize],
        }))
    }

    fn copy_limit(&self) -> u64 {
        1 << 30
    }

    fn copy(&self, bytes: u64, copies: u32) -> anyhow::Result<CopyResult> {
        let a = self.ctx.transfer_buffer(bytes)?;
        let b = self.ctx.transfer_buffer(bytes)?;
        let once = || -> anyhow::Result<()> {
            let enc = self.ctx.begin()?;
            let region = [vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: bytes,
            }];
            // SAFETY: `enc` is recording (from `begin`), outside a render pass; both buffers are
            // live device buffers of `bytes` bytes with TRANSFER_SRC | TRANSFER_DST usage, and
            // they outlive the submission because `wait` returns before they can be dropped.
            unsafe {
                self.ctx
                    .device()
                    .cmd_copy_buffer(enc.raw(), a.handle(), b.handle(), &region);
            }
            self.ctx.submit(enc)?;
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
