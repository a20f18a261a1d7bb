//! The backend a runtime poses with, behind one small interface: N instances of one rig or one
//! linear head, uploaded once (`upload_batch` / `upload_gnm_batch`), set in one batch call, posed
//! and lifted into one splat sink in one submission per frame: `cpu`, and `gpu` written once over
//! the device layer (`mien_gpu::GpuDevice`) for wgpu and Vulkan.

pub(crate) mod cpu;
#[cfg(any(feature = "wgpu", feature = "vulkan"))]
pub(crate) mod gpu;

use std::time::Duration;

use glam::Mat4;
use std::sync::Arc;

use mien_core::hair::Groom;
use mien_core::lift::{BoundSetup, DebugLiftParams};
use mien_core::rig::{ControlStats, PosedVertices, RigControls};
use mien_core::sink::{SlotRange, SplatBuffers};

use crate::asset::Model;
use crate::device::Device;
use crate::error::{Error, Result};

/// Wall and GPU time spent posing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Times {
    /// Rig passes (CPU: the work; GPU: recording and submitting).
    pub rig: Duration,
    /// Lift passes (likewise).
    pub lift: Duration,
    /// The cloth and hair simulations on the host, every instance ([`crate::dynamics`]; run in
    /// parallel over instances from 8). Zero without cloth or hair.
    pub dynamics: Duration,
    /// GPU time per stage from timestamp queries, summed over frames, ms: morph (or the linear
    /// head's forward pass), skin, lift (with the cloth's lift and the hair strands). `None` on the CPU or without timestamp queries.
    pub gpu_ms: Option<[f64; 3]>,
}

impl Times {
    /// `self − earlier` (for times since a snapshot), saturating at zero.
    pub fn since(&self, earlier: &Times) -> Times {
        Times {
            rig: self.rig.saturating_sub(earlier.rig),
            lift: self.lift.saturating_sub(earlier.lift),
            dynamics: self.dynamics.saturating_sub(earlier.dynamics),
            gpu_ms: self.gpu_ms.map(|t| {
                let w = earlier.gpu_ms.unwrap_or([0.0; 3]);
                [t[0] - w[0], t[1] - w[1], t[2] - w[2]]
            }),
        }
    }
}

/// The splat sink a runtime writes, for a caller that renders it where it lies: the CPU's arrays,
/// or the GPU buffers themselves (four storage buffers indexed by absolute slot, DESIGN "Splat
/// sink"). Instance `i`'s splats are the slots [`crate::Runtime::sink_range`]`(i)`.
#[non_exhaustive]
pub enum SinkRef<'a> {
    /// No lift was attached.
    None,
    /// The CPU sink.
    Cpu(&'a mien_cpu::CpuSplatSink),
    /// The wgpu sink (its buffers live on the runtime's wgpu device).
    #[cfg(feature = "wgpu")]
    Wgpu(&'a mien_wgpu::WgpuSplatSink),
    /// The Vulkan sink.
    #[cfg(feature = "vulkan")]
    Vulkan(&'a mien_vulkan::VulkanSplatSink),
}

/// Which lift an engine attaches.
#[derive(Clone, Debug)]
pub(crate) enum LiftSpec {
    /// One gaussian per posed vertex.
    Debug(DebugLiftParams),
    /// Gaussians bound to triangles (surface, texel, captured splats), shared by the instances.
    Bound(Arc<BoundSetup>),
    /// Bound gaussians whose records each instance rewrites ([`Engine::set_bound_records`]: a
    /// bundle's decoded appearance): every instance its own copy.
    BoundPerInstance(Arc<BoundSetup>),
}

/// What an engine draws besides the body's lift ([`crate::dynamics`]): the cloth's bound
/// gaussians over its own `Vc` vertices (posed on the simulated vertices [`Engine::set_cloth`]
/// stages) and the groom's strands (from the guides [`Engine::set_hair`] stages). An instance's
/// slots are `[body | cloth | hair]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extras {
    /// The cloth's setup and vertex count `Vc`.
    pub cloth: Option<(Arc<BoundSetup>, u32)>,
    /// The groom.
    pub hair: Option<Arc<Groom>>,
}

impl Extras {
    /// Slots one instance's cloth and hair take.
    pub(crate) fn slots(&self) -> (u32, u32) {
        (
            self.cloth.as_ref().map_or(0, |(s, _)| s.slots()),
            self.hair
                .as_ref()
                .map_or(0, |g| (g.child_count() * g.segments) as u32),
        )
    }
}

impl LiftSpec {
    /// Slots one instance of `v` vertices takes.
    pub(crate) fn slots(&self, v: u32) -> u32 {
        match self {
            LiftSpec::Debug(_) => v,
            LiftSpec::Bound(b) | LiftSpec::BoundPerInstance(b) => b.slots(),
        }
    }
}

/// N instances posed and lifted per frame.
pub(crate) trait Engine: Send {
    /// Set every instance's controls (rig models): `controls` `(N,)`, counts into `stats` `(N,)`.
    fn set_rig(&mut self, controls: &[RigControls], stats: &mut [ControlStats]) -> Result<()>;
    /// Set every instance's head_ext `(N,)` of `(E+4,)` and joint worlds `(N,)` of `(J,)`
    /// (linear heads).
    fn set_head(&mut self, head_ext: &[Vec<f32>], joints: &[Vec<Mat4>]) -> Result<()>;
    /// The last frame's posed positions of instance `i` `(V,3)` when held on the CPU.
    fn posed_cpu(&self, _i: usize) -> Option<&[[f32; 3]]> {
        None
    }
    /// Pose every instance without the lift (one submission) and read instance `i` back.
    fn pose_and_read(&mut self, i: usize) -> Result<PosedVertices>;
    /// Read instance `i`'s last posed vertices (a readback on a GPU).
    fn read_posed(&mut self, i: usize) -> Result<PosedVertices>;
    /// Create the sink (`N × S` slots for `S = spec.slots(V)` plus the extras' slots) and the
    /// lifts: instance `i` into slots `i·S .. (i+1)·S` — the debug lift with `template`'s σ,
    /// shading, centroid and transform, or the bound gaussians of a setup — then its cloth and
    /// hair ([`Extras`]).
    fn attach_lift(&mut self, spec: LiftSpec, extras: Extras) -> Result<()>;
    /// Stage instance `i`'s cloth vertices and normals `(Vc,3)` each (character space) for the
    /// next frame; nothing when no cloth is attached.
    fn set_cloth(&mut self, i: usize, positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Result<()>;
    /// Stage instance `i`'s guide points `(G·(S+1),3)` (character space) for the next frame;
    /// nothing when no hair is attached.
    fn set_hair(&mut self, i: usize, guides: &[[f32; 3]]) -> Result<()>;
    /// Record the rig pass and (when attached) the lifts into one submission.
    fn frame(&mut self) -> Result<()>;
    /// Rewrite instance `i`'s bound records `first ..` (a [`LiftSpec::BoundPerInstance`] lift);
    /// they take effect from the next [`Engine::frame`].
    fn set_bound_records(
        &mut self,
        i: usize,
        first: u32,
        records: &[mien_core::lift::PackedBound],
    ) -> Result<()>;
    /// Instance `i`'s slots of the last frame (a readback on a GPU).
    fn splats(&mut self, i: usize) -> Result<SplatBuffers>;
    /// Wait for outstanding work.
    fn finish(&mut self) -> Result<()>;
    /// Times so far.
    fn times(&self) -> Times;
    /// Bytes of the rig (or pack) backend and of the sink.
    fn bytes(&self) -> (u64, u64);
    /// The sink.
    fn sink(&self) -> SinkRef<'_>;
    /// How the rig pass rounds ([`mien_cpu::Precision`]); the CPU engine only.
    fn set_precision(&mut self, _precision: mien_cpu::Precision) -> Result<()> {
        Err(Error::invalid(
            "precision",
            "a CPU device's setting: a GPU device's rounding is chosen when its context opens \
             (ContextOptions::cooperative_matrix of mien-wgpu and mien-vulkan)",
        ))
    }
}

/// The refusal of an instance index `i` a runtime of `n` instances does not have.
pub(crate) fn no_instance(i: usize, n: usize) -> Error {
    Error::invalid(
        format!("instance {i}"),
        format!("the runtime has {n} instance(s)"),
    )
}

/// `Ok` when `i < n`, else [`no_instance`].
#[cfg(any(feature = "wgpu", feature = "vulkan"))]
pub(crate) fn check_instance(i: usize, n: usize) -> Result<()> {
    if i < n {
        Ok(())
    } else {
        Err(no_instance(i, n))
    }
}

/// Instance `i`'s slots: `i·V .. (i+1)·V`.
pub(crate) fn slot_range(i: usize, v: u32) -> SlotRange {
    SlotRange {
        offset: i as u32 * v,
        count: v,
    }
}

/// The sink's capacity for `n` instances of `v` vertices.
///
/// # Errors
/// [`Error::Invalid`] when `n × v` does not fit a 32-bit slot index.
pub(crate) fn sink_slots(n: u32, v: u32) -> Result<u32> {
    n.checked_mul(v).ok_or_else(|| {
        Error::invalid(
            format!("{n} instances of {v} vertices"),
            "more splats than a 32-bit slot index holds; use fewer instances per runtime",
        )
    })
}

/// `template` for instance `i` of `v` vertices whose slots start every `per` slots.
pub(crate) fn params_for(
    template: &DebugLiftParams,
    i: usize,
    v: u32,
    per: u32,
) -> DebugLiftParams {
    let mut p = *template;
    p.range = SlotRange {
        offset: i as u32 * per,
        count: v,
    };
    p.vertex_count = v;
    p
}

/// The refusal of a rig call on a linear head (and the reverse).
pub(crate) fn wrong_model(what: &str) -> Error {
    Error::invalid(
        "backend",
        format!("{what}: this runtime poses the other kind of model"),
    )
}

/// Build the engine for `model` × `instances` on `device`.
///
/// # Errors
/// Upload failures (a model over the device's limits, out of memory).
pub(crate) fn build(device: &Device, model: &Model, instances: u32) -> Result<Box<dyn Engine>> {
    if instances == 0 {
        return Err(Error::invalid(
            "instances",
            "0: a runtime poses at least one",
        ));
    }
    match device {
        Device::Cpu => Ok(Box::new(cpu::CpuEngine::new(model, instances)?)),
        #[cfg(feature = "wgpu")]
        Device::Wgpu(ctx) => Ok(Box::new(gpu::GpuEngine::new(ctx, model, instances)?)),
        #[cfg(feature = "vulkan")]
        Device::Vulkan(ctx) => Ok(Box::new(gpu::GpuEngine::new(ctx, model, instances)?)),
    }
}

/// Groups `(first, count)` of `n` instances of `per` slots each, in order, that one batched lift
/// covers: the instances in one page of the sink (`page_slots`, a whole number of instances:
/// `GpuSplatSink::paged`), at most `max_z` (a dispatch's z dimension), at least one.
#[cfg(any(feature = "wgpu", feature = "vulkan", test))]
pub(crate) fn page_groups(n: usize, per: u32, page_slots: u32, max_z: u32) -> Vec<(usize, usize)> {
    let k = (page_slots / per.max(1)).clamp(1, max_z.max(1)) as usize;
    (0..n).step_by(k).map(|i| (i, k.min(n - i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_groups_cover_every_instance_in_order_within_a_page() {
        // 4368 slots per instance, pages of 1920 instances.
        let g = page_groups(2600, 4368, 1920 * 4368, 65_535);
        assert_eq!(g, vec![(0, 1920), (1920, 680)]);
        assert_eq!(page_groups(5, 10, 1 << 20, 65_535), vec![(0, 5)]);
        // The dispatch dimension caps a group; a page smaller than an instance gives groups of 1.
        assert_eq!(page_groups(5, 10, 1 << 20, 2), vec![(0, 2), (2, 2), (4, 1)]);
        assert_eq!(
            page_groups(3, 1 << 24, 1 << 20, 65_535),
            vec![(0, 1), (1, 1), (2, 1)]
        );
        assert!(page_groups(0, 10, 100, 8).is_empty());
    }
}
