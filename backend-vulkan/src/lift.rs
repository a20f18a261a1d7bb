//! The debug vertex lift on Vulkan: `lift` dispatches per rig chunk and `clear` dispatches for the
//! range's slots past the vertex count, recorded after the rig's passes in the same command buffer.

use std::sync::Arc;

use ash::vk;
use mien_core::lift::parts::PlannedPiece;
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::{LiftParams, dispatch_size};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::error::Error;
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;
use crate::rig::VulkanRigBackend;
use crate::sink::VulkanSplatSink;
use crate::timing::Stage;

/// One contiguous vertex range of posed data a lift reads (see [`VulkanDebugLift::from_parts`]).
#[derive(Clone, Copy, Debug)]
pub struct PosedPart<'a> {
    /// First vertex of the part in the character.
    pub v0: u32,
    /// Vertices in the part.
    pub count: u32,
    /// Where the part's first vertex lies in `posed` (in vertices): instance `i` of a batch starts
    /// `i × count` vertices into its chunk's outputs; 0 for a single upload.
    pub first: u32,
    /// `(first + count, 6)` f32 or more: position (metres) then normal, per vertex.
    pub posed: &'a Buffer,
    /// `(count,)` packed RGBA8 vertex tints (the same for every instance).
    pub tint: &'a Buffer,
}

struct Piece {
    uniform: Buffer,
    set: vk::DescriptorSet,
    groups: (u32, u32),
    params: LiftParams,
    clear: bool,
    keep: Vec<Buffer>,
}

/// [`Lift`] of one rig into one slot range of a [`VulkanSplatSink`]: [`mien_core::lift::lift_vertex`]
/// on the GPU. Sink bindings are ranges whose offsets are aligned to
/// `minStorageBufferOffsetAlignment`, so a sink larger than `maxStorageBufferRange` works.
pub struct VulkanDebugLift {
    ctx: VulkanContext,
    params: DebugLiftParams,
    pieces: Vec<Piece>,
    pool: Arc<DescriptorPool>,
    /// Instances lifted by each dispatch (z); 1 for a single lift.
    instances: u32,
}

impl std::fmt::Debug for VulkanDebugLift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanDebugLift")
            .field("range", &self.params.range)
            .field("dispatches", &self.pieces.len())
            .finish()
    }
}

impl Drop for VulkanDebugLift {
    fn drop(&mut self) {
        let _ = self.ctx.wait();
    }
}

/// `(buffer, offset, range)` of `count` elements of `stride` bytes from element `first`, the offset
/// aligned down to `align`; and the element index of `first` inside the binding.
fn range_binding(
    b: &Buffer,
    first: u64,
    count: u64,
    stride: u64,
    align: u64,
) -> ((vk::Buffer, u64, u64), u32) {
    let byte = first * stride;
    let offset = byte - byte % align;
    let base = (byte - offset) / stride;
    let size = ((base + count.max(1)) * stride).min(b.size() - offset);
    ((b.handle(), offset, size), base as u32)
}

impl VulkanDebugLift {
    /// A lift of `rig` (any instance of a batch) into `params.range` of `sink` (allocate the range
    /// first).
    ///
    /// # Errors
    /// Out-of-domain parameters, a vertex count other than the rig's, a range outside the sink,
    /// device errors.
    pub fn new(
        backend: &VulkanRigBackend,
        rig: RigHandle,
        sink: &VulkanSplatSink,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        let parts = backend.posed_parts(rig)?;
        Self::from_parts(
            backend.context(),
            backend.vertex_count(rig),
            &parts,
            sink,
            params,
        )
    }

    /// A lift of `vertex_count` posed vertices held in `parts` (contiguous vertex ranges in order,
    /// each `count` vertices from vertex `first` of a posed buffer in the skin kernel's output
    /// layout — `(…, 6)` f32 position then normal — and a `(count,)` packed RGBA8 tint buffer)
    /// into `params.range` of `sink`. The morph path's chunks and a linear head's chunks, of any
    /// instance of a batch ([`VulkanRigBackend::posed_parts`],
    /// [`crate::VulkanGnmBackend::posed_parts`]), all come in this way.
    ///
    /// # Errors
    /// As [`VulkanDebugLift::new`]; [`mien_core::Error::Invalid`] when the parts do not tile
    /// `0..vertex_count` or a part reads past its posed or tint buffer.
    pub fn from_parts(
        ctx: &VulkanContext,
        vertex_count: u32,
        parts: &[PosedPart<'_>],
        sink: &VulkanSplatSink,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        Self::build(ctx, vertex_count, parts, (1, 0), sink, params)
    }

    /// One lift of `instances` characters of a batch upload in one dispatch per part (z =
    /// instance): `parts` are instance 0's ([`VulkanRigBackend::posed_parts`] of the batch's first
    /// handle), instance z reads `z × count` vertices further into each part's buffer and writes
    /// `params.range` moved by `z × slot_stride` slots — the same transform, shading and tints for
    /// every instance, the same slots as `instances` separate lifts, without a dispatch per
    /// character (at 256 characters those cost more GPU time than the lifting).
    ///
    /// # Errors
    /// As [`VulkanDebugLift::from_parts`]; [`mien_core::lift::parts::check_batch`]'s refusals
    /// (overlapping or out-of-sink ranges, posed buffers too short for the last instance); a
    /// batch whose slot span does not fit one binding, or more instances than a dispatch
    /// dimension holds ([`Error::OverLimits`]: lift fewer instances per batch).
    pub fn from_parts_batch(
        ctx: &VulkanContext,
        vertex_count: u32,
        parts: &[PosedPart<'_>],
        instances: u32,
        slot_stride: u32,
        sink: &VulkanSplatSink,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        Self::build(
            ctx,
            vertex_count,
            parts,
            (instances, slot_stride),
            sink,
            params,
        )
    }

    /// Instances each dispatch lifts (1 for a single lift).
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// One past the last slot this lift writes (the last instance's range end for a batch).
    fn end_slot(&self) -> u64 {
        let stride = self.pieces.first().map_or(0, |p| p.params.slot_stride);
        self.params.range.end() + u64::from(self.instances - 1) * u64::from(stride)
    }

    fn build(
        ctx: &VulkanContext,
        vertex_count: u32,
        parts: &[PosedPart<'_>],
        (instances, slot_stride): (u32, u32),
        sink: &VulkanSplatSink,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        let nv = vertex_count;
        mien_core::lift::parts::check_target(&params, nv, sink.capacity())?;
        let extents: Vec<mien_core::lift::parts::PartExtent> = parts
            .iter()
            .map(|p| mien_core::lift::parts::PartExtent {
                v0: p.v0,
                count: p.count,
                first: p.first,
                posed_bytes: p.posed.size(),
                tint_bytes: p.tint.size(),
            })
            .collect();
        mien_core::lift::parts::check_parts(nv, &extents, VERTEX_BYTES)?;
        let span = mien_core::lift::parts::check_batch(
            &params,
            &extents,
            instances,
            slot_stride,
            sink.capacity(),
            VERTEX_BYTES,
        )?;
        let max_z = ctx.properties().limits.max_compute_work_group_count[2];
        if instances > max_z {
            return Err(Error::OverLimits {
                what: format!("a batched lift of {instances} instances"),
                limit_name: "maxComputeWorkGroupCount[2]",
                limit: u64::from(max_z),
                needed: u64::from(instances),
            }
            .into());
        }
        if instances > 1 && span * 16 + 256 > ctx.binding_limit() {
            return Err(Error::OverLimits {
                what: format!("a batched lift spanning {span} slots"),
                limit_name: "maxStorageBufferRange",
                limit: ctx.binding_limit(),
                needed: span * 16 + 256,
            }
            .into());
        }
        // Slots each binding covers beyond a dispatch's own count: the later instances' ranges.
        let extra = span - u64::from(params.range.count);
        let ctx = ctx.clone();
        let limits = &ctx.properties().limits;
        let align = limits.min_storage_buffer_offset_alignment.max(4);
        let max_groups = limits.max_compute_work_group_count[0];
        let limit_slots = ((ctx.binding_limit() - align) / 16).max(1);
        let plan = mien_core::lift::parts::plan_pieces(&params, &extents, limit_slots)?;
        let k = plan.len() as u32;
        let pool = Arc::new(DescriptorPool::new(&ctx, k, k, 6 * k)?);
        let base = LiftParams::from_debug(&params);
        let mut pieces = Vec::with_capacity(plan.len());
        for piece in plan {
            let PlannedPiece {
                slot,
                count,
                posed_base,
                posed_stride,
                part,
                clear,
            } = piece;
            let (posed, tints) = (parts[part].posed, parts[part].tint);
            let (gx, gy, row_width) =
                dispatch_size(count, max_groups).ok_or_else(|| Error::OverLimits {
                    what: format!("a lift dispatch of {count} slots"),
                    limit_name: "maxComputeWorkGroupCount",
                    limit: u64::from(max_groups),
                    needed: u64::from(count.div_ceil(64)),
                })?;
            let n = u64::from(count) + extra;
            let (center, b16) = range_binding(&sink.center, slot, n, 16, align);
            let (color, b4) = range_binding(&sink.color, slot, n, 4, align);
            let (cov_a, _) = range_binding(&sink.cov_a, slot, n, 16, align);
            let (cov_b, _) = range_binding(&sink.cov_b, slot, n, 16, align);
            let lp = LiftParams {
                count,
                row_width,
                slot_base_vec4: b16,
                slot_base_color: b4,
                posed_base,
                slot_stride,
                posed_stride,
                ..base
            };
            let uniform = ctx.buffer(
                "lift parameters",
                std::mem::size_of::<LiftParams>() as u64,
                vk::BufferUsageFlags::UNIFORM_BUFFER,
                MemoryLocation::CpuToGpu,
            )?;
            uniform.write(0, bytemuck::bytes_of(&lp));
            let set = pool.allocate(ctx.inner.pipelines.lift_layout.set)?;
            let whole = |b: &Buffer| (b.handle(), 0u64, vk::WHOLE_SIZE);
            // SAFETY: fresh set, live handles, 1 uniform + 6 storage bindings as the layout.
            unsafe {
                raw::write_set(
                    ctx.device(),
                    set,
                    &[
                        whole(&uniform),
                        whole(posed),
                        whole(tints),
                        center,
                        color,
                        cov_a,
                        cov_b,
                    ],
                )
            };
            let keep = vec![
                posed.clone(),
                tints.clone(),
                sink.center.clone(),
                sink.color.clone(),
                sink.cov_a.clone(),
                sink.cov_b.clone(),
            ];
            pieces.push(Piece {
                uniform,
                set,
                groups: (gx, gy),
                params: lp,
                clear,
                keep,
            });
        }
        Ok(VulkanDebugLift {
            ctx,
            params,
            pieces,
            pool,
            instances,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &DebugLiftParams {
        &self.params
    }

    /// Change σ, opacity, shading, transform (the range and vertex count stay). Waits for this
    /// context's submissions in flight first.
    ///
    /// # Errors
    /// Out-of-domain parameters, or a different range / vertex count; device errors.
    pub fn set_params(&mut self, params: DebugLiftParams) -> mien_core::Result<()> {
        if params.range != self.params.range || params.vertex_count != self.params.vertex_count {
            return Err(mien_core::Error::Invalid {
                what: "debug lift params".into(),
                reason: "range and vertex count are fixed for a lift's lifetime".into(),
            });
        }
        params.validate()?;
        self.ctx.wait()?;
        let base = LiftParams::from_debug(&params);
        for p in &mut self.pieces {
            p.params = LiftParams {
                count: p.params.count,
                row_width: p.params.row_width,
                slot_base_vec4: p.params.slot_base_vec4,
                slot_base_color: p.params.slot_base_color,
                posed_base: p.params.posed_base,
                slot_stride: p.params.slot_stride,
                posed_stride: p.params.posed_stride,
                ..base
            };
            p.uniform.write(0, bytemuck::bytes_of(&p.params));
        }
        self.params = params;
        Ok(())
    }
}

impl Lift<VulkanRigBackend, VulkanSplatSink> for VulkanDebugLift {
    fn range(&self) -> SlotRange {
        self.params.range
    }

    fn encode(
        &mut self,
        enc: &mut VulkanEncoder,
        _rig: &VulkanRigBackend,
        sink: &mut VulkanSplatSink,
    ) -> mien_core::Result<()> {
        self.record(enc, sink)
    }
}

impl VulkanDebugLift {
    /// Record the lift's dispatches into `enc` after a barrier (what [`Lift::encode`] does; the
    /// posed buffers were bound at creation, so any posing pass recorded before it is read).
    ///
    /// # Errors
    /// A lost device.
    pub fn record(
        &mut self,
        enc: &mut VulkanEncoder,
        sink: &mut VulkanSplatSink,
    ) -> mien_core::Result<()> {
        Self::record_batch(std::slice::from_mut(self), enc, sink)
    }

    /// Record several lifts into `enc` between one pair of barriers: the lifts of a batch read
    /// posed vertices written before the first barrier and write disjoint slot ranges of `sink`
    /// (checked here), so no barrier is needed between them — one
    /// barrier per lift cost ~12 µs of GPU drain each (W1 at batch 256 on the H200: 3.3 ms of a
    /// 3.8 ms frame). The lift timestamps cover all of them. Nothing is recorded for an empty slice.
    ///
    /// # Errors
    /// A lost device; lifts made on another context than the first one's; two lifts whose slot
    /// ranges overlap (their order would decide the slots, which needs a barrier: record them
    /// separately).
    pub fn record_batch(
        lifts: &mut [VulkanDebugLift],
        enc: &mut VulkanEncoder,
        sink: &mut VulkanSplatSink,
    ) -> mien_core::Result<()> {
        let Some(first) = lifts.first() else {
            return Ok(());
        };
        let ctx = first.ctx.clone();
        ctx.check()?;
        if lifts.iter().any(|l| !Arc::ptr_eq(&l.ctx.inner, &ctx.inner)) {
            return Err(mien_core::Error::Invalid {
                what: "lift batch".into(),
                reason: "every lift of one recording must come from the same Vulkan context".into(),
            });
        }
        let mut ranges: Vec<(u64, u64, usize)> = lifts
            .iter()
            .enumerate()
            .map(|(i, l)| (u64::from(l.params.range.offset), l.end_slot(), i))
            .collect();
        ranges.sort_unstable();
        if let Some(w) = ranges.windows(2).find(|w| w[1].0 < w[0].1) {
            return Err(mien_core::Error::Invalid {
                what: format!("lift batch: lifts {} and {}", w[0].2, w[1].2),
                reason: format!(
                    "slot ranges [{}, {}) and [{}, {}) overlap; record overlapping lifts separately",
                    w[0].0, w[0].1, w[1].0, w[1].1
                ),
            });
        }
        let d = ctx.device();
        let p = &ctx.inner.pipelines;
        let ts = ctx.inner.timestamps.as_ref();
        let cmd = enc.raw();
        // SAFETY: enc recording on this device; every bound handle is alive and kept in `enc`.
        unsafe {
            raw::compute_barrier(d, cmd);
            if let Some(t) = ts {
                // Several recordings in one frame: each resets the lift queries, so the report
                // holds the last recording's lifts.
                t.reset_stage(d, cmd, Stage::Lift);
                t.write(d, cmd, Stage::Lift, false);
            }
            for (z, piece) in lifts
                .iter()
                .flat_map(|l| l.pieces.iter().map(move |p| (l.instances, p)))
            {
                d.cmd_bind_pipeline(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    if piece.clear { p.clear } else { p.lift },
                );
                d.cmd_bind_descriptor_sets(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    p.lift_layout.pipeline,
                    0,
                    &[piece.set],
                    &[],
                );
                d.cmd_dispatch(cmd, piece.groups.0, piece.groups.1, z);
            }
            if let Some(t) = ts {
                t.write(d, cmd, Stage::Lift, true);
            }
            raw::compute_barrier(d, cmd);
        }
        for l in lifts.iter() {
            enc.keep_any(l.pool.clone());
            for piece in &l.pieces {
                enc.keep(&piece.uniform);
                for b in &piece.keep {
                    enc.keep(b);
                }
            }
        }
        sink.mark_changed();
        Ok(())
    }
}
