//! The debug vertex lift, written once: one `lift` dispatch per posed part writing its vertices'
//! slots, and `clear` dispatches for the slots of the range past the vertex count, in one pass; a
//! batched lift covers N instances of a batch upload in the same dispatches (z = instance).

use mien_core::lift::parts::{PartExtent, PlannedPiece};
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::{RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::{LiftParams, dispatch_size};

use crate::device::{Bind, Dispatch, GpuDevice, Usage};
use crate::kernel::Entry;
use crate::rig::GpuRigBackend;
use crate::sink::GpuSplatSink;
use crate::timing::Stage;
use crate::typed::Typed;

/// One contiguous vertex range of posed data a lift reads (see [`GpuDebugLift::from_parts`]).
pub struct PosedPart<'a, G: GpuDevice> {
    /// First vertex of the part in the character.
    pub v0: u32,
    /// Vertices in the part.
    pub count: u32,
    /// Where the part's first vertex lies in `posed` (in vertices): instance `i` of a batch starts
    /// `i × count` vertices into its chunk's outputs; 0 for a single upload.
    pub first: u32,
    /// `(first + count, 6)` f32 or more: position (metres) then normal, per vertex.
    pub posed: &'a G::Buffer,
    /// `(count,)` packed RGBA8 vertex tints (the same for every instance).
    pub tint: &'a G::Buffer,
}

impl<G: GpuDevice> Clone for PosedPart<'_, G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: GpuDevice> Copy for PosedPart<'_, G> {}

impl<G: GpuDevice> std::fmt::Debug for PosedPart<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PosedPart")
            .field("v0", &self.v0)
            .field("count", &self.count)
            .field("first", &self.first)
            .finish()
    }
}

/// One dispatch: its uniform, bind group, grid and what it covers.
struct Piece<G: GpuDevice> {
    uniform: Typed<G, LiftParams>,
    group: G::BindGroup,
    groups: (u32, u32),
    params: LiftParams,
    clear: bool,
}

/// [`Lift`] of one rig (or instances of a batch) into a slot range of a [`GpuSplatSink`]:
/// [`mien_core::lift::lift_vertex`] on the GPU. Its sink bindings are ranges of the sink buffers
/// (offsets aligned to the device's storage offset alignment), so a sink larger than the binding
/// limit works.
pub struct GpuDebugLift<G: GpuDevice> {
    g: G,
    params: DebugLiftParams,
    pieces: Vec<Piece<G>>,
    /// Instances lifted by each dispatch (z); 1 for a single lift.
    instances: u32,
    /// The sink's free count when the lift's slots were last found allocated.
    checked: u64,
}

impl<G: GpuDevice> std::fmt::Debug for GpuDebugLift<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDebugLift")
            .field("device", &G::NAME)
            .field("range", &self.params.range)
            .field("dispatches", &self.pieces.len())
            .finish()
    }
}

impl<G: GpuDevice> Drop for GpuDebugLift<G> {
    fn drop(&mut self) {
        self.g.release();
    }
}

/// A binding of `count` elements of `stride` bytes starting at element `first` of `buffer`, with the
/// offset aligned down to `align`; returns the binding and the element index of `first` inside it.
pub(crate) fn range_binding<G: GpuDevice>(
    buffer: &G::Buffer,
    first: u64,
    count: u64,
    stride: u64,
    align: u64,
) -> (Bind<'_, G::Buffer>, u32) {
    let byte = first * stride;
    let offset = byte - byte % align;
    let base = (byte - offset) / stride;
    let size = ((base + count.max(1)) * stride).min(G::size(buffer) - offset);
    (
        Bind {
            buffer,
            offset,
            size: Some(size),
        },
        base as u32,
    )
}

/// Slot ranges `[start, end)` of the lifts of one recording do not overlap (their order would
/// decide the slots).
///
/// # Errors
/// [`mien_core::Error::Invalid`] naming the first two lifts (by index) that overlap.
pub(crate) fn check_disjoint(what: &str, ranges: &[(u64, u64)]) -> mien_core::Result<()> {
    let mut r: Vec<(u64, u64, usize)> = ranges
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| (a, b, i))
        .collect();
    r.sort_unstable();
    match r.windows(2).find(|w| w[1].0 < w[0].1) {
        Some(w) => Err(mien_core::Error::Invalid {
            what: format!("{what}: lifts {} and {}", w[0].2, w[1].2),
            reason: format!(
                "slot ranges [{}, {}) and [{}, {}) overlap; record overlapping lifts separately",
                w[0].0, w[0].1, w[1].0, w[1].1
            ),
        }),
        None => Ok(()),
    }
}

fn unallocated(offset: u32, end: u64) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: format!("debug lift of slots {offset}..{end}"),
        reason:
            "the slots are not (or no longer) allocated in the sink: allocate the range before \
                 making a lift, and make a new lift after freeing it"
                .into(),
    }
}

impl<G: GpuDevice> GpuDebugLift<G> {
    /// A lift of `rig` (any instance of a batch) into `params.range` of `sink` (allocate the range
    /// from the sink first).
    ///
    /// # Errors
    /// Out-of-domain parameters ([`DebugLiftParams::validate`]), a vertex count other than the rig's,
    /// a range outside the sink or not allocated in it, or device errors.
    pub fn new(
        backend: &GpuRigBackend<G>,
        rig: RigHandle,
        sink: &GpuSplatSink<G>,
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
    /// into `params.range` of `sink`. The rig's chunks and a linear head's chunks, of any instance
    /// of a batch ([`GpuRigBackend::posed_parts`], [`crate::GpuGnmBackend::posed_parts`]), all
    /// come in this way.
    ///
    /// # Errors
    /// As [`GpuDebugLift::new`]; [`mien_core::Error::Invalid`] when the parts do not tile
    /// `0..vertex_count` or a part reads past its posed or tint buffer.
    pub fn from_parts(
        g: &G,
        vertex_count: u32,
        parts: &[PosedPart<'_, G>],
        sink: &GpuSplatSink<G>,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        Self::build(g, vertex_count, parts, (1, 0), sink, params)
    }

    /// One lift of `instances` characters of a batch upload in one dispatch per part (z =
    /// instance): `parts` are instance 0's ([`GpuRigBackend::posed_parts`] of the batch's first
    /// handle), instance z reads `z × count` vertices further into each part's buffer and writes
    /// `params.range` moved by `z × slot_stride` slots — the same transform, shading and tints for
    /// every instance, the same slots as `instances` separate lifts. One set of dispatches instead
    /// of one per character: at 256 characters the per-lift dispatches cost more than the lifts.
    ///
    /// # Errors
    /// As [`GpuDebugLift::from_parts`]; [`mien_core::lift::parts::check_batch`]'s refusals
    /// (overlapping or out-of-sink ranges, posed buffers too short for the last instance); a
    /// batch whose slot span does not fit one binding, or more instances than a dispatch holds
    /// along z (the device's over-limits error: lift fewer instances per batch).
    pub fn from_parts_batch(
        g: &G,
        vertex_count: u32,
        parts: &[PosedPart<'_, G>],
        instances: u32,
        slot_stride: u32,
        sink: &GpuSplatSink<G>,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        Self::build(
            g,
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
        g: &G,
        vertex_count: u32,
        parts: &[PosedPart<'_, G>],
        (instances, slot_stride): (u32, u32),
        sink: &GpuSplatSink<G>,
        params: DebugLiftParams,
    ) -> mien_core::Result<Self> {
        use mien_core::lift::parts::{check_batch, check_parts, check_target, plan_pieces};
        if !g.same(sink.context()) {
            return Err(mien_core::Error::Invalid {
                what: "debug lift".into(),
                reason: "the sink lives on another device".into(),
            });
        }
        let nv = vertex_count;
        check_target(&params, nv, sink.capacity())?;
        let extents: Vec<PartExtent> = parts
            .iter()
            .map(|p| PartExtent {
                v0: p.v0,
                count: p.count,
                first: p.first,
                posed_bytes: G::size(p.posed),
                tint_bytes: G::size(p.tint),
            })
            .collect();
        check_parts(nv, &extents, VERTEX_BYTES)?;
        let span = check_batch(
            &params,
            &extents,
            instances,
            slot_stride,
            sink.capacity(),
            VERTEX_BYTES,
        )?;
        let end = params.range.end() + u64::from(instances.max(1) - 1) * u64::from(slot_stride);
        if !sink.is_allocated(u64::from(params.range.offset), end) {
            return Err(unallocated(params.range.offset, end));
        }
        let caps = g.caps();
        if instances > caps.max_groups_z {
            let what = format!("a batched lift of {instances} instances");
            let (limit, needed) = (u64::from(caps.max_groups_z), u64::from(instances));
            return Err(G::over_limits(what, caps.max_groups_z_name, limit, needed).into());
        }
        let align = caps.offset_alignment.max(4);
        // A binding's offset is aligned down, so it may start up to `align` bytes early.
        let slack = align.max(256);
        if instances > 1 && span * 16 + slack > caps.binding_limit {
            let what = format!("a batched lift spanning {span} slots");
            let name = caps.binding_limit_name;
            return Err(G::over_limits(what, name, caps.binding_limit, span * 16 + slack).into());
        }
        // Slots each binding covers beyond a dispatch's own count: the later instances' ranges.
        let extra = span - u64::from(params.range.count);
        // Clears in pieces whose binding fits the device's limit.
        let limit_slots = (caps.binding_limit.saturating_sub(slack) / 16).max(1);
        let plan = plan_pieces(&params, &extents, limit_slots)?;
        // Each piece's slots in one page of the sink.
        let located = plan
            .iter()
            .map(|p| sink.locate(p.slot, u64::from(p.count) + extra))
            .collect::<mien_core::Result<Vec<_>>>()?;
        let build = || -> Result<Vec<Piece<G>>, G::Error> {
            let base = LiftParams::from_debug(&params);
            let max_groups = caps.max_groups_xy;
            let mut pieces = Vec::with_capacity(plan.len());
            for (piece, &(page, local)) in plan.iter().zip(&located) {
                let &PlannedPiece {
                    slot,
                    count,
                    posed_base,
                    posed_stride,
                    part,
                    clear,
                } = piece;
                let (posed, tint) = (parts[part].posed, parts[part].tint);
                let (gx, gy, row_width) = dispatch_size(count, max_groups).ok_or_else(|| {
                    G::over_limits(
                        format!("a lift dispatch of {count} slots"),
                        caps.max_groups_xy_name,
                        u64::from(max_groups),
                        u64::from(count.div_ceil(64)),
                    )
                })?;
                let n = u64::from(count) + extra;
                let _ = slot;
                let (center, b16) = range_binding::<G>(&page.center, local, n, 16, align);
                let (color, b4) = range_binding::<G>(&page.color, local, n, 4, align);
                let (cov_a, _) = range_binding::<G>(&page.cov_a, local, n, 16, align);
                let (cov_b, _) = range_binding::<G>(&page.cov_b, local, n, 16, align);
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
                let uniform = Typed::frame(g, "lift parameters", Usage::Uniform, &[lp])?;
                let entry = if clear { Entry::Clear } else { Entry::Lift };
                let group = g.bind(
                    entry,
                    &[
                        uniform.bind(),
                        Bind::whole(posed),
                        Bind::whole(tint),
                        center,
                        color,
                        cov_a,
                        cov_b,
                    ],
                )?;
                pieces.push(Piece {
                    uniform,
                    group,
                    groups: (gx, gy),
                    params: lp,
                    clear,
                });
            }
            Ok(pieces)
        };
        let pieces = g
            .scoped("a debug lift", build)
            .map_err(Into::into)?
            .map_err(Into::into)?;
        Ok(GpuDebugLift {
            g: g.clone(),
            params,
            pieces,
            instances,
            checked: sink.frees(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &DebugLiftParams {
        &self.params
    }

    /// Change σ, opacity, shading, transform (the range and vertex count stay); written as
    /// per-frame data ([`GpuDevice::write`]: on Vulkan after the frame in flight).
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
            p.uniform
                .write(&self.g, 0, &[p.params])
                .map_err(Into::into)?;
        }
        self.params = params;
        Ok(())
    }

    /// The last slot this lift writes, plus one.
    fn end_slot(&self) -> u64 {
        let stride = self.pieces.first().map_or(0, |p| p.params.slot_stride);
        self.params.range.end() + u64::from(self.instances - 1) * u64::from(stride)
    }

    /// Record the lift's pass into `encoder` (what [`Lift::encode`] does; the posed buffers were
    /// bound at creation, so any posing pass recorded before it is read).
    ///
    /// # Errors
    /// A lost device.
    pub fn record(
        &mut self,
        encoder: &mut G::Encoder,
        sink: &mut GpuSplatSink<G>,
    ) -> mien_core::Result<()> {
        Self::record_batch(std::slice::from_mut(self), encoder, sink)
    }

    /// Record several lifts into `encoder` as one pass: the lifts of a batch read posed vertices
    /// written by an earlier pass and write disjoint slot ranges of `sink` (checked here), so
    /// nothing orders them — one barrier per lift cost ~12 µs of GPU drain each on Vulkan (W1 at
    /// batch 256 on the H200: 3.3 ms of a 3.8 ms frame). The lift timestamps cover all of them.
    /// Nothing is recorded for an empty slice.
    ///
    /// # Errors
    /// A lost device; lifts made on another device than the sink's; a lift whose slots were freed
    /// from the sink since it was made; two lifts whose slot ranges overlap (their order would
    /// decide the slots: record them separately).
    pub fn record_batch(
        lifts: &mut [GpuDebugLift<G>],
        encoder: &mut G::Encoder,
        sink: &mut GpuSplatSink<G>,
    ) -> mien_core::Result<()> {
        if lifts.is_empty() {
            return Ok(());
        }
        let g = sink.context().clone();
        g.check().map_err(Into::into)?;
        if lifts.iter().any(|l| !l.g.same(&g)) {
            return Err(mien_core::Error::Invalid {
                what: "lift batch".into(),
                reason: "every lift of one recording must live on the sink's device".into(),
            });
        }
        // A lift whose slots were freed would draw into slots another owner may hold.
        for l in lifts.iter_mut().filter(|l| l.checked != sink.frees()) {
            let (start, end) = (u64::from(l.params.range.offset), l.end_slot());
            if !sink.is_allocated(start, end) {
                return Err(unallocated(l.params.range.offset, end));
            }
            l.checked = sink.frees();
        }
        // One lift cannot overlap itself: no vector per frame for the usual single batched lift.
        if lifts.len() > 1 {
            let ranges: Vec<(u64, u64)> = lifts
                .iter()
                .map(|l| (u64::from(l.params.range.offset), l.end_slot()))
                .collect();
            check_disjoint("lift batch", &ranges)?;
        }
        let mut dispatches = lifts.iter().flat_map(|l| {
            l.pieces.iter().map(move |p| Dispatch {
                entry: if p.clear { Entry::Clear } else { Entry::Lift },
                group: &p.group,
                groups: [p.groups.0, p.groups.1, l.instances],
            })
        });
        g.record(encoder, Stage::Lift, &mut dispatches)
            .map_err(Into::into)?;
        sink.mark_changed();
        Ok(())
    }
}

impl<G: GpuDevice> Lift<GpuRigBackend<G>, GpuSplatSink<G>> for GpuDebugLift<G> {
    fn range(&self) -> SlotRange {
        self.params.range
    }

    fn encode(
        &mut self,
        encoder: &mut G::Encoder,
        _rig: &GpuRigBackend<G>,
        sink: &mut GpuSplatSink<G>,
    ) -> mien_core::Result<()> {
        self.record(encoder, sink)
    }
}
