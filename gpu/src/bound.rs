//! Bound gaussians (the surface, texel and captured-splat lifts) posed on the GPU, written once:
//! `lift_bound.wgsl` over one instance's posed vertices, one dispatch per instance covering its slot
//! range (slots past the gaussian count cleared). The CPU reference is
//! [`mien_core::lift::BoundSetup::pose`].

use std::sync::Arc;

use mien_core::lift::BoundSetup;
use mien_core::lift::bound::check_bound;
use mien_core::sink::{SlotRange, SplatSink};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::{BoundParams, dispatch_size};

use crate::device::{Bind, Dispatch, GpuDevice, Usage};
use crate::kernel::Entry;
use crate::lift::{PosedPart, check_disjoint, range_binding};
use crate::sink::GpuSplatSink;
use crate::timing::Stage;
use crate::typed::Typed;

/// A [`BoundSetup`] on the device: its triangles `(T,3)` u32 and gaussian records `(G,3)` vec4,
/// uploaded once and shared (`Arc`) by every instance's [`GpuBoundLift`].
pub struct GpuBoundData<G: GpuDevice> {
    setup: Arc<BoundSetup>,
    /// The records live in a frame buffer ([`GpuBoundData::upload_writable`]).
    writable: bool,
    triangles: Typed<G, [u32; 3]>,
    gaussians: Typed<G, mien_core::lift::PackedBound>,
}

impl<G: GpuDevice> std::fmt::Debug for GpuBoundData<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBoundData")
            .field("gaussians", &self.setup.gaussians.len())
            .field("triangles", &self.setup.triangles.len())
            .finish()
    }
}

impl<G: GpuDevice> GpuBoundData<G> {
    /// Upload `setup`.
    ///
    /// # Errors
    /// The device's over-limits error when the gaussians or triangles do not fit one binding;
    /// device errors.
    pub fn upload(g: &G, setup: Arc<BoundSetup>) -> mien_core::Result<Arc<Self>> {
        Self::upload_as(g, setup, false)
    }

    /// Upload `setup` with its records in a buffer [`GpuBoundData::write_records`] rewrites (one
    /// instance's own records: an appearance decoder's outputs).
    ///
    /// # Errors
    /// As [`GpuBoundData::upload`].
    pub fn upload_writable(g: &G, setup: Arc<BoundSetup>) -> mien_core::Result<Arc<Self>> {
        Self::upload_as(g, setup, true)
    }

    /// Rewrite records `first .. first + records.len()` (they land before the next submit).
    ///
    /// # Errors
    /// [`mien_core::Error::Invalid`] for data not uploaded writable, a run past the records or a
    /// record naming a triangle past the setup's; device errors.
    pub fn write_records(
        &self,
        g: &G,
        first: usize,
        records: &[mien_core::lift::PackedBound],
    ) -> mien_core::Result<()> {
        let bad = |reason: String| mien_core::Error::Invalid {
            what: "bound lift records".into(),
            reason,
        };
        if !self.writable {
            return Err(bad(
                "uploaded read-only (GpuBoundData::upload_writable makes writable records)".into(),
            ));
        }
        let n = self.setup.gaussians.len();
        if first.checked_add(records.len()).is_none_or(|e| e > n) {
            return Err(bad(format!(
                "{} records from {first} past the {n} held",
                records.len()
            )));
        }
        let t = self.setup.triangles.len() as u32;
        if let Some(i) = records.iter().position(|r| r.triangle() >= t) {
            return Err(bad(format!(
                "record {} names triangle {} of {t}",
                first + i,
                records[i].triangle()
            )));
        }
        self.gaussians.write(g, first, records).map_err(Into::into)
    }

    fn upload_as(g: &G, setup: Arc<BoundSetup>, writable: bool) -> mien_core::Result<Arc<Self>> {
        let caps = g.caps();
        for (what, bytes) in [
            ("bound lift gaussians", setup.gaussians.len() as u64 * 48),
            ("bound lift triangles", setup.triangles.len() as u64 * 12),
        ] {
            if bytes > caps.binding_limit {
                return Err(G::over_limits(
                    what.into(),
                    caps.binding_limit_name,
                    caps.binding_limit,
                    bytes,
                )
                .into());
            }
        }
        // Empty arrays still bind a buffer (a zero-sized binding is invalid).
        let tris: &[[u32; 3]] = if setup.triangles.is_empty() {
            &[[0; 3]]
        } else {
            &setup.triangles
        };
        let gs: &[mien_core::lift::PackedBound] = if setup.gaussians.is_empty() {
            &[mien_core::lift::PackedBound {
                a: [0.0; 4],
                b: [0.0; 4],
                c: [0.0; 4],
            }]
        } else {
            &setup.gaussians
        };
        let triangles =
            Typed::upload(g, "bound lift triangles", Usage::Storage, tris).map_err(Into::into)?;
        let gaussians = if writable {
            Typed::frame(g, "bound lift gaussians", Usage::Storage, gs)
        } else {
            Typed::upload(g, "bound lift gaussians", Usage::Storage, gs)
        }
        .map_err(Into::into)?;
        Ok(Arc::new(GpuBoundData {
            setup,
            writable,
            triangles,
            gaussians,
        }))
    }

    /// The setup.
    pub fn setup(&self) -> &BoundSetup {
        &self.setup
    }
}

/// One instance's bound lift into a slot range of a [`GpuSplatSink`] — or a batch of instances
/// that share one posed buffer at evenly spaced vertices and write evenly spaced ranges
/// ([`GpuBoundLift::new_batch`]), one dispatch for all of them.
pub struct GpuBoundLift<G: GpuDevice> {
    g: G,
    data: Arc<GpuBoundData<G>>,
    /// Instance 0's range.
    range: SlotRange,
    /// Instances in the dispatch (z) and the slots between their ranges.
    instances: u32,
    slot_stride: u32,
    _uniform: Typed<G, BoundParams>,
    group: G::BindGroup,
    groups: (u32, u32),
    checked: u64,
}

impl<G: GpuDevice> std::fmt::Debug for GpuBoundLift<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBoundLift")
            .field("device", &G::NAME)
            .field("range", &self.range)
            .field("data", &self.data)
            .finish()
    }
}

impl<G: GpuDevice> Drop for GpuBoundLift<G> {
    fn drop(&mut self) {
        self.g.release();
    }
}

/// `range` moved `k · stride` slots on.
fn shifted(range: SlotRange, k: u64, stride: u32) -> SlotRange {
    SlotRange {
        offset: (u64::from(range.offset) + k * u64::from(stride)) as u32,
        count: range.count,
    }
}

fn unallocated(range: SlotRange) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: format!("bound lift of slots {}..{}", range.offset, range.end()),
        reason:
            "the slots are not (or no longer) allocated in the sink: allocate the range before \
                 making a lift, and make a new lift after freeing it"
                .into(),
    }
}

impl<G: GpuDevice> GpuBoundLift<G> {
    /// A lift of `vertex_count` posed vertices held in `parts` (which must be one part holding
    /// them all: a bound gaussian reads any vertex of its triangle) into `range` of `sink`.
    ///
    /// # Errors
    /// [`mien_core::Error::Invalid`] for several parts, a part that does not hold every vertex or
    /// reads past its buffer, a setup that does not fit the vertices or the range
    /// ([`check_bound`]), a range outside the sink or not allocated in it; device errors.
    pub fn new(
        g: &G,
        vertex_count: u32,
        parts: &[PosedPart<'_, G>],
        data: Arc<GpuBoundData<G>>,
        sink: &GpuSplatSink<G>,
        range: SlotRange,
    ) -> mien_core::Result<Self> {
        Self::new_batch(g, vertex_count, parts, 1, 0, data, sink, range, 0)
    }

    /// The lifts of `instances` instances in one dispatch (z = instance): instance `k` reads its
    /// vertices from `posed_stride · k` vertices past `parts`' (instance 0's) first vertex in the
    /// same buffer — a batch upload's posed buffer, [`crate::GpuRigBackend::posed_parts`] /
    /// [`crate::GpuGnmBackend::posed_parts`] — and writes `range` shifted by `slot_stride · k`
    /// slots. The same gaussians as [`GpuBoundLift::new`] for each instance (the same kernel
    /// arithmetic), one dispatch instead of `instances`, and one binding of the sink spanning every
    /// instance's range (so the span must fit the binding limit).
    ///
    /// # Errors
    /// As [`GpuBoundLift::new`] for every instance; `instances` 0 or over the device's z limit;
    /// ranges that overlap (`slot_stride` < the range's count for 2 instances or more).
    #[allow(clippy::too_many_arguments)]
    pub fn new_batch(
        g: &G,
        vertex_count: u32,
        parts: &[PosedPart<'_, G>],
        instances: u32,
        posed_stride: u32,
        data: Arc<GpuBoundData<G>>,
        sink: &GpuSplatSink<G>,
        range: SlotRange,
        slot_stride: u32,
    ) -> mien_core::Result<Self> {
        let invalid = |reason: String| mien_core::Error::Invalid {
            what: "bound lift".into(),
            reason,
        };
        if !g.same(sink.context()) {
            return Err(invalid("the sink lives on another device".into()));
        }
        let [part] = parts else {
            return Err(invalid(format!(
                "the posed vertices come in {} parts: a bound lift needs one instance's vertices in \
                 one buffer (a rig split into chunks by the binding limit is lifted by the debug lift)",
                parts.len()
            )));
        };
        if part.v0 != 0 || part.count != vertex_count {
            return Err(invalid(format!(
                "the part holds vertices {}..{} of {vertex_count}",
                part.v0,
                part.v0 + part.count
            )));
        }
        let caps = g.caps();
        if instances == 0 || instances > caps.max_groups_z {
            return Err(G::over_limits(
                "the instances of a bound lift".into(),
                caps.max_groups_z_name,
                u64::from(caps.max_groups_z),
                u64::from(instances),
            )
            .into());
        }
        let last = u64::from(instances - 1);
        if instances > 1 && slot_stride < range.count {
            return Err(invalid(format!(
                "instances {slot_stride} slots apart overlap ranges of {} slots",
                range.count
            )));
        }
        let last_first = u64::from(part.first) + last * u64::from(posed_stride);
        if (last_first + u64::from(part.count)) * VERTEX_BYTES > G::size(part.posed) {
            return Err(invalid("the part reads past its posed buffer".into()));
        }
        let setup = &data.setup;
        check_bound(&setup.gaussians, &setup.triangles, vertex_count, range)?;
        let span_end = range.end() + last * u64::from(slot_stride);
        if span_end > u64::from(sink.capacity()) {
            return Err(invalid(format!(
                "range ends at {span_end} past the sink's {} slots",
                sink.capacity()
            )));
        }
        for k in 0..=last {
            let r = shifted(range, k, slot_stride);
            if !sink.is_allocated(u64::from(r.offset), r.end()) {
                return Err(unallocated(r));
            }
        }
        let count = range.count;
        let (gx, gy, row_width) = dispatch_size(count, caps.max_groups_xy).ok_or_else(|| {
            G::over_limits(
                format!("a bound lift dispatch of {count} slots"),
                caps.max_groups_xy_name,
                u64::from(caps.max_groups_xy),
                u64::from(count.div_ceil(64)),
            )
            .into()
        })?;
        let align = caps.offset_alignment.max(4);
        let span = span_end - u64::from(range.offset);
        if span * 16 + align.max(256) > caps.binding_limit {
            return Err(G::over_limits(
                format!("a bound lift of {span} slots"),
                caps.binding_limit_name,
                caps.binding_limit,
                span * 16,
            )
            .into());
        }
        let a = &setup.transform;
        type Built<G> = (Typed<G, BoundParams>, <G as GpuDevice>::BindGroup);
        let (page, local) = sink.locate(u64::from(range.offset), span)?;
        let build = || -> Result<Built<G>, G::Error> {
            let n = span;
            let (center, b16) = range_binding::<G>(&page.center, local, n, 16, align);
            let (color, b4) = range_binding::<G>(&page.color, local, n, 4, align);
            let (cov_a, _) = range_binding::<G>(&page.cov_a, local, n, 16, align);
            let (cov_b, _) = range_binding::<G>(&page.cov_b, local, n, 16, align);
            let params = BoundParams {
                rows: [
                    [a[0], a[1], a[2], a[3]],
                    [a[4], a[5], a[6], a[7]],
                    [a[8], a[9], a[10], a[11]],
                ],
                gaussians: setup.gaussians.len() as u32,
                count,
                row_width,
                slot_base_vec4: b16,
                slot_base_color: b4,
                posed_base: part.first,
                posed_stride,
                slot_stride,
            };
            let uniform = Typed::frame(g, "bound lift parameters", Usage::Uniform, &[params])?;
            let group = g.bind(
                Entry::LiftBound,
                &[
                    uniform.bind(),
                    Bind::whole(part.posed),
                    data.triangles.bind(),
                    data.gaussians.bind(),
                    center,
                    color,
                    cov_a,
                    cov_b,
                ],
            )?;
            Ok((uniform, group))
        };
        let (uniform, group) = g
            .scoped("a bound lift", build)
            .map_err(Into::into)?
            .map_err(Into::into)?;
        Ok(GpuBoundLift {
            g: g.clone(),
            data,
            range,
            instances,
            slot_stride,
            _uniform: uniform,
            group,
            groups: (gx, gy),
            checked: sink.frees(),
        })
    }

    /// The setup on the device this lift reads (shared by every lift made over it).
    pub fn data(&self) -> &Arc<GpuBoundData<G>> {
        &self.data
    }

    /// The slots written: instance 0's range (a batch writes it shifted by
    /// [`GpuBoundLift::slot_stride`] per instance).
    pub fn range(&self) -> SlotRange {
        self.range
    }

    /// Instances in the dispatch.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// Slots between consecutive instances' ranges.
    pub fn slot_stride(&self) -> u32 {
        self.slot_stride
    }

    /// Every instance's range.
    fn ranges(&self) -> impl Iterator<Item = SlotRange> + '_ {
        (0..u64::from(self.instances)).map(|k| shifted(self.range, k, self.slot_stride))
    }

    /// Record several bound lifts into `encoder` as one pass (their slot ranges must not overlap:
    /// checked). Nothing is recorded for an empty slice.
    ///
    /// # Errors
    /// A lost device; lifts on another device than the sink's; freed or overlapping ranges.
    pub fn record_batch(
        lifts: &mut [GpuBoundLift<G>],
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
                what: "bound lift batch".into(),
                reason: "every lift of one recording must live on the sink's device".into(),
            });
        }
        for l in lifts.iter_mut().filter(|l| l.checked != sink.frees()) {
            for r in l.ranges() {
                if !sink.is_allocated(u64::from(r.offset), r.end()) {
                    return Err(unallocated(r));
                }
            }
            l.checked = sink.frees();
        }
        if lifts.len() > 1 || lifts.iter().any(|l| l.instances > 1) {
            let ranges: Vec<(u64, u64)> = lifts
                .iter()
                .flat_map(|l| l.ranges())
                .map(|r| (u64::from(r.offset), r.end()))
                .collect();
            check_disjoint("bound lift batch", &ranges)?;
        }
        let mut dispatches = lifts.iter().map(|l| Dispatch {
            entry: Entry::LiftBound,
            group: &l.group,
            groups: [l.groups.0, l.groups.1, l.instances],
        });
        g.record(encoder, Stage::Lift, &mut dispatches)
            .map_err(Into::into)?;
        sink.mark_changed();
        Ok(())
    }
}
