//! The debug vertex lift on wgpu: one `lift` dispatch per rig chunk writing its vertices' slots, and
//! `clear` dispatches for the slots of the range past the vertex count, in one compute pass; a
//! batched lift covers N instances of a batch upload in the same dispatches (z = instance).

use std::num::NonZeroU64;

use mien_core::lift::parts::PlannedPiece;
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::{LiftParams, dispatch_size};
use wgpu::util::DeviceExt;

use crate::context::WgpuContext;
use crate::error::Error;
use crate::pipelines::bind_group;
use crate::rig::WgpuRigBackend;
use crate::sink::WgpuSplatSink;
use crate::timing::Stage;

/// One contiguous vertex range of posed data a lift reads (see [`WgpuDebugLift::from_parts`]).
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
    pub posed: &'a wgpu::Buffer,
    /// `(count,)` packed RGBA8 vertex tints (the same for every instance).
    pub tint: &'a wgpu::Buffer,
}

/// One dispatch: its uniform, bind group, grid and what it covers.
struct Piece {
    uniform: wgpu::Buffer,
    group: wgpu::BindGroup,
    groups: (u32, u32),
    params: LiftParams,
    clear: bool,
}

/// [`Lift`] of one rig into one slot range of a [`WgpuSplatSink`]: [`mien_core::lift::lift_vertex`]
/// on the GPU. Its sink bindings are ranges of the sink buffers (offsets aligned to the device's
/// `min_storage_buffer_offset_alignment`), so a sink larger than the binding limit works.
pub struct WgpuDebugLift {
    ctx: WgpuContext,
    params: DebugLiftParams,
    pieces: Vec<Piece>,
    /// Instances lifted by each dispatch (z); 1 for a single lift.
    instances: u32,
}

impl std::fmt::Debug for WgpuDebugLift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuDebugLift")
            .field("range", &self.params.range)
            .field("dispatches", &self.pieces.len())
            .finish()
    }
}

/// A binding of `count` elements of `stride` bytes starting at element `first` of `buffer`, with the
/// offset aligned down to `align`; returns the binding and the element index of `first` inside it.
fn range_binding(
    buffer: &wgpu::Buffer,
    first: u64,
    count: u64,
    stride: u64,
    align: u64,
) -> (wgpu::BindingResource<'_>, u32) {
    let byte = first * stride;
    let offset = byte - byte % align;
    let base = (byte - offset) / stride;
    let size = ((base + count.max(1)) * stride).min(buffer.size() - offset);
    (
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset,
            size: NonZeroU64::new(size),
        }),
        base as u32,
    )
}

impl WgpuDebugLift {
    /// A lift of `rig` (any instance of a batch) into `params.range` of `sink` (allocate the range
    /// from the sink first).
    ///
    /// # Errors
    /// Out-of-domain parameters ([`DebugLiftParams::validate`]), a vertex count other than the rig's,
    /// a range outside the sink, or device errors.
    pub fn new(
        backend: &WgpuRigBackend,
        rig: RigHandle,
        sink: &WgpuSplatSink,
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
    /// instance of a batch ([`WgpuRigBackend::posed_parts`], [`crate::WgpuGnmBackend::posed_parts`]),
    /// all come in this way.
    ///
    /// # Errors
    /// As [`WgpuDebugLift::new`]; [`mien_core::Error::Invalid`] when the parts do not tile
    /// `0..vertex_count` or a part reads past its posed or tint buffer.
    pub fn from_parts(
        ctx: &WgpuContext,
        vertex_count: u32,
        parts: &[PosedPart<'_>],
        sink: &WgpuSplatSink,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        Self::build(ctx, vertex_count, parts, (1, 0), sink, params)
    }

    /// One lift of `instances` characters of a batch upload in one dispatch per part (z =
    /// instance): `parts` are instance 0's ([`WgpuRigBackend::posed_parts`] of the batch's first
    /// handle), instance z reads `z × count` vertices further into each part's buffer and writes
    /// `params.range` moved by `z × slot_stride` slots — the same transform, shading and tints for
    /// every instance, the same slots as `instances` separate lifts. One pass instead of one per
    /// character: at 256 characters the per-lift passes cost more than the lifts.
    ///
    /// # Errors
    /// As [`WgpuDebugLift::from_parts`]; [`mien_core::lift::parts::check_batch`]'s refusals
    /// (overlapping or out-of-sink ranges, posed buffers too short for the last instance); a
    /// batch whose slot span does not fit one binding, or more instances than a dispatch
    /// dimension holds ([`Error::OverLimits`]: lift fewer instances per batch).
    pub fn from_parts_batch(
        ctx: &WgpuContext,
        vertex_count: u32,
        parts: &[PosedPart<'_>],
        instances: u32,
        slot_stride: u32,
        sink: &WgpuSplatSink,
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

    fn build(
        ctx: &WgpuContext,
        vertex_count: u32,
        parts: &[PosedPart<'_>],
        (instances, slot_stride): (u32, u32),
        sink: &WgpuSplatSink,
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
        let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
        let over = |what: String, limit_name, limit: u64, needed: u64| Error::OverLimits {
            what,
            limit_name,
            limit,
            needed,
        };
        if instances > max_groups {
            let what = format!("a batched lift of {instances} instances");
            let name = "max_compute_workgroups_per_dimension";
            return Err(over(what, name, u64::from(max_groups), u64::from(instances)).into());
        }
        if instances > 1 && span * 16 + 256 > ctx.binding_limit() {
            let what = format!("a batched lift spanning {span} slots");
            let name = "max_storage_buffer_binding_size";
            return Err(over(what, name, ctx.binding_limit(), span * 16 + 256).into());
        }
        // Slots each binding covers beyond a dispatch's own count: the later instances' ranges.
        let extra = span - u64::from(params.range.count);
        let ctx = ctx.clone();
        let chunks = parts;
        // Clears in pieces whose binding fits the device's limit.
        let limit_slots = ((ctx.binding_limit() - 256) / 16).max(1);
        let pieces = ctx.scoped("a debug lift", || -> mien_core::Result<Vec<Piece>> {
            let align = u64::from(ctx.limits().min_storage_buffer_offset_alignment).max(4);
            let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
            let layout = &ctx.pipelines().lift_layout;
            let base = LiftParams::from_debug(&params);
            let mut pieces = Vec::new();
            for piece in mien_core::lift::parts::plan_pieces(&params, &extents, limit_slots)? {
                let PlannedPiece {
                    slot,
                    count,
                    posed_base,
                    posed_stride,
                    part,
                    clear,
                } = piece;
                let (posed, tint) = (chunks[part].posed, chunks[part].tint);
                let (gx, gy, row_width) =
                    dispatch_size(count, max_groups).ok_or_else(|| Error::OverLimits {
                        what: format!("a lift dispatch of {count} slots"),
                        limit_name: "max_compute_workgroups_per_dimension",
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
                let uniform = ctx
                    .device()
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("mien lift params"),
                        contents: bytemuck::bytes_of(&lp),
                        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    });
                let group = bind_group(
                    ctx.device(),
                    "mien lift",
                    layout,
                    &[
                        uniform.as_entire_binding(),
                        posed.as_entire_binding(),
                        tint.as_entire_binding(),
                        center,
                        color,
                        cov_a,
                        cov_b,
                    ],
                );
                pieces.push(Piece {
                    uniform,
                    group,
                    groups: (gx, gy),
                    params: lp,
                    clear,
                });
            }
            Ok(pieces)
        })??;
        Ok(WgpuDebugLift {
            ctx,
            params,
            pieces,
            instances,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &DebugLiftParams {
        &self.params
    }

    /// Change σ, opacity, shading, transform (the range and vertex count stay); written with
    /// `queue.write_buffer`.
    ///
    /// # Errors
    /// Out-of-domain parameters, or a different range / vertex count.
    pub fn set_params(&mut self, params: DebugLiftParams) -> mien_core::Result<()> {
        if params.range != self.params.range || params.vertex_count != self.params.vertex_count {
            return Err(mien_core::Error::Invalid {
                what: "debug lift params".into(),
                reason: "range and vertex count are fixed for a lift's lifetime".into(),
            });
        }
        params.validate()?;
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
            self.ctx
                .queue()
                .write_buffer(&p.uniform, 0, bytemuck::bytes_of(&p.params));
        }
        self.params = params;
        Ok(())
    }
}

impl Lift<WgpuRigBackend, WgpuSplatSink> for WgpuDebugLift {
    fn range(&self) -> SlotRange {
        self.params.range
    }

    fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        _rig: &WgpuRigBackend,
        sink: &mut WgpuSplatSink,
    ) -> mien_core::Result<()> {
        self.record(encoder, sink)
    }
}

impl WgpuDebugLift {
    /// Record the lift's compute pass into `encoder` (what [`Lift::encode`] does; the posed
    /// buffers were bound at creation, so any posing pass recorded before it is read).
    ///
    /// # Errors
    /// A lost device.
    pub fn record(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        sink: &mut WgpuSplatSink,
    ) -> mien_core::Result<()> {
        self.ctx.check()?;
        let p = self.ctx.pipelines();
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("mien lift"),
            timestamp_writes: self.ctx.timestamps().map(|t| t.writes(Stage::Lift)),
        });
        for piece in &self.pieces {
            pass.set_pipeline(if piece.clear { &p.clear } else { &p.lift });
            pass.set_bind_group(0, &piece.group, &[]);
            pass.dispatch_workgroups(piece.groups.0, piece.groups.1, self.instances);
        }
        drop(pass);
        sink.mark_changed();
        Ok(())
    }
}
