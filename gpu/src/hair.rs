//! Hair strands drawn as gaussians on the GPU, written once: per frame only the guides' points are
//! uploaded; `hair.wgsl` interpolates every child strand from three guides, clumps it and writes one
//! elongated gaussian per segment into the sink. One dispatch covers a batch of instances of one
//! groom (z = instance). The CPU reference is [`mien_core::hair::strand_splats`];
//! [`mien_core::hair::splat_bounds`] is the derived bound the two stay within.

use std::sync::Arc;

use mien_core::hair::Groom;
use mien_core::sink::{SlotRange, SplatSink};
use mien_shaders::{HairChild, HairParams, dispatch_size};

use crate::device::{Dispatch, GpuDevice, Usage};
use crate::kernel::Entry;
use crate::lift::range_binding;
use crate::sink::GpuSplatSink;
use crate::timing::Stage;
use crate::typed::Typed;

/// A [`Groom`]'s child table on the device `(C,)` ([`HairChild`]: three guides, weights, tint),
/// uploaded once and shared (`Arc`) by every [`GpuHairLift`] of that groom.
pub struct GpuHairData<G: GpuDevice> {
    groom: Arc<Groom>,
    children: Typed<G, HairChild>,
}

impl<G: GpuDevice> std::fmt::Debug for GpuHairData<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuHairData")
            .field("guides", &self.groom.guide_count())
            .field("children", &self.groom.child_count())
            .field("segments", &self.groom.segments)
            .finish()
    }
}

fn invalid(reason: String) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: "hair strands on the GPU".into(),
        reason,
    }
}

impl<G: GpuDevice> GpuHairData<G> {
    /// Upload `groom`'s children.
    ///
    /// # Errors
    /// [`mien_core::Error::Invalid`] for a groom without children or segments, or whose child table
    /// names a guide it lacks; the device's over-limits error when the table does not fit one
    /// binding; device errors.
    pub fn upload(g: &G, groom: Arc<Groom>) -> mien_core::Result<Arc<Self>> {
        let c = groom.child_count();
        let s = groom.segments;
        if c == 0 || s == 0 {
            return Err(invalid(format!("a groom of {c} strands × {s} segments")));
        }
        let guides = groom.guide_count();
        if groom.guides.len() != guides * (s + 1) {
            return Err(invalid(format!(
                "{} guide points is not a whole number of {}-point strands",
                groom.guides.len(),
                s + 1
            )));
        }
        if [groom.child_weights.len(), groom.child_tint.len()]
            .iter()
            .any(|&n| n != c)
        {
            return Err(invalid("the child tables differ in length".into()));
        }
        if let Some((i, _)) = groom
            .child_guides
            .iter()
            .enumerate()
            .find(|(_, gs)| gs.iter().any(|&x| x as usize >= guides))
        {
            return Err(invalid(format!(
                "child {i} names a guide past the groom's {guides}"
            )));
        }
        let caps = g.caps();
        let bytes = c as u64 * 32;
        if bytes > caps.binding_limit {
            return Err(G::over_limits(
                "hair children".into(),
                caps.binding_limit_name,
                caps.binding_limit,
                bytes,
            )
            .into());
        }
        let table: Vec<HairChild> = (0..c)
            .map(|i| {
                let [a, b, d] = groom.child_guides[i];
                let [wa, wb, wd] = groom.child_weights[i];
                HairChild {
                    guides: [a, b, d, 0],
                    weights: [wa, wb, wd, groom.child_tint[i]],
                }
            })
            .collect();
        let children =
            Typed::upload(g, "hair children", Usage::Storage, &table).map_err(Into::into)?;
        Ok(Arc::new(GpuHairData { groom, children }))
    }

    /// The groom.
    pub fn groom(&self) -> &Groom {
        &self.groom
    }

    /// Slots one instance takes: `C·S`.
    pub fn slots(&self) -> u32 {
        (self.groom.child_count() * self.groom.segments) as u32
    }
}

/// The strands of `instances` characters sharing one groom, drawn into a [`GpuSplatSink`]:
/// instance `z` uploads its guides with [`GpuHairLift::set_guides`] and its strands land in
/// `range` moved by `z × slot_stride` slots.
pub struct GpuHairLift<G: GpuDevice> {
    g: G,
    data: Arc<GpuHairData<G>>,
    range: SlotRange,
    instances: u32,
    slot_stride: u32,
    /// `(N, G·(S+1))` guide points (w unused), written per frame.
    guides: Typed<G, [f32; 4]>,
    staged: Vec<[f32; 4]>,
    dirty: bool,
    _uniform: Typed<G, HairParams>,
    group: G::BindGroup,
    groups: (u32, u32),
    checked: u64,
}

impl<G: GpuDevice> std::fmt::Debug for GpuHairLift<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuHairLift")
            .field("device", &G::NAME)
            .field("range", &self.range)
            .field("instances", &self.instances)
            .field("data", &self.data)
            .finish()
    }
}

impl<G: GpuDevice> Drop for GpuHairLift<G> {
    fn drop(&mut self) {
        self.g.release();
    }
}

fn unallocated(start: u64, end: u64) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: format!("hair strands of slots {start}..{end}"),
        reason:
            "the slots are not (or no longer) allocated in the sink: allocate the range before \
                 making the hair lift, and make a new one after freeing it"
                .into(),
    }
}

impl<G: GpuDevice> GpuHairLift<G> {
    /// The strands of `instances` characters into `sink`: instance 0's into `range` (exactly
    /// [`GpuHairData::slots`] slots), instance `z`'s `z × slot_stride` slots further. The guides
    /// start at the groom's rest points for every instance.
    ///
    /// # Errors
    /// [`mien_core::Error::Invalid`] for a sink on another device, a range of another size, a
    /// stride shorter than the range (instances would overlap), slots outside the sink or not
    /// allocated in it; the device's over-limits error when the batch's slots or guides do not fit
    /// one binding or the dispatch's limits; device errors.
    pub fn new(
        g: &G,
        data: Arc<GpuHairData<G>>,
        sink: &GpuSplatSink<G>,
        range: SlotRange,
        instances: u32,
        slot_stride: u32,
    ) -> mien_core::Result<Self> {
        if !g.same(sink.context()) {
            return Err(invalid("the sink lives on another device".into()));
        }
        let n = instances.max(1);
        let count = data.slots();
        if range.count != count {
            return Err(invalid(format!(
                "a range of {} slots for a groom of {count} ({} strands × {} segments)",
                range.count,
                data.groom.child_count(),
                data.groom.segments
            )));
        }
        if n > 1 && slot_stride < count {
            return Err(invalid(format!(
                "instances {slot_stride} slots apart overlap {count}-slot ranges"
            )));
        }
        let start = u64::from(range.offset);
        let span = u64::from(n - 1) * u64::from(slot_stride) + u64::from(count);
        let end = start + span;
        if end > u64::from(sink.capacity()) {
            return Err(invalid(format!(
                "slots {start}..{end} run past the sink's {}",
                sink.capacity()
            )));
        }
        if !sink.is_allocated(start, end) {
            return Err(unallocated(start, end));
        }
        let caps = g.caps();
        if n > caps.max_groups_z {
            return Err(G::over_limits(
                format!("hair strands of {n} instances"),
                caps.max_groups_z_name,
                u64::from(caps.max_groups_z),
                u64::from(n),
            )
            .into());
        }
        let (gx, gy, row_width) = dispatch_size(count, caps.max_groups_xy).ok_or_else(|| {
            G::over_limits(
                format!("a hair dispatch of {count} slots"),
                caps.max_groups_xy_name,
                u64::from(caps.max_groups_xy),
                u64::from(count.div_ceil(64)),
            )
            .into()
        })?;
        let align = caps.offset_alignment.max(4);
        let slack = align.max(256);
        let per = data.groom.guides.len();
        for (what, bytes) in [
            ("hair slots", span * 16 + slack),
            ("hair guides", u64::from(n) * per as u64 * 16),
        ] {
            if bytes > caps.binding_limit {
                return Err(G::over_limits(
                    format!("{what} of {n} instances"),
                    caps.binding_limit_name,
                    caps.binding_limit,
                    bytes,
                )
                .into());
            }
        }
        let groom = &data.groom;
        let rest: Vec<[f32; 4]> = (0..n)
            .flat_map(|_| groom.guides.iter().map(|p| [p[0], p[1], p[2], 0.0]))
            .collect();
        type Built<G> = (
            Typed<G, [f32; 4]>,
            Typed<G, HairParams>,
            <G as GpuDevice>::BindGroup,
        );
        let (page, local) = sink.locate(start, span)?;
        let build = || -> Result<Built<G>, G::Error> {
            let (center, b16) = range_binding::<G>(&page.center, local, span, 16, align);
            let (color, b4) = range_binding::<G>(&page.color, local, span, 4, align);
            let (cov_a, _) = range_binding::<G>(&page.cov_a, local, span, 16, align);
            let (cov_b, _) = range_binding::<G>(&page.cov_b, local, span, 16, align);
            let [root, tip] = groom.colour;
            let params = HairParams {
                colour_root: [root[0], root[1], root[2], 0.0],
                colour_tip: [tip[0], tip[1], tip[2], 0.0],
                count,
                row_width,
                segments: groom.segments as u32,
                slot_base_vec4: b16,
                slot_base_color: b4,
                slot_stride: if n > 1 { slot_stride } else { 0 },
                guide_stride: per as u32,
                clump: groom.clump,
                thickness_root: groom.thickness[0],
                thickness_tip: groom.thickness[1],
                _pad0: 0,
                _pad1: 0,
            };
            let guides = Typed::frame(g, "hair guides", Usage::Storage, &rest)?;
            let uniform = Typed::frame(g, "hair parameters", Usage::Uniform, &[params])?;
            let group = g.bind(
                Entry::HairStrands,
                &[
                    uniform.bind(),
                    guides.bind(),
                    data.children.bind(),
                    center,
                    color,
                    cov_a,
                    cov_b,
                ],
            )?;
            Ok((guides, uniform, group))
        };
        let (guides, uniform, group) = g
            .scoped("hair strands", build)
            .map_err(Into::into)?
            .map_err(Into::into)?;
        Ok(GpuHairLift {
            g: g.clone(),
            range,
            instances: n,
            slot_stride,
            guides,
            staged: rest,
            dirty: false,
            _uniform: uniform,
            group,
            groups: (gx, gy),
            checked: sink.frees(),
            data,
        })
    }

    /// Instance 0's slots.
    pub fn range(&self) -> SlotRange {
        self.range
    }

    /// Instances drawn.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// Stage instance `instance`'s guide points `(G·(S+1), 3)` (metres, the sink's frame), written
    /// to the device when the lift is next recorded.
    ///
    /// # Errors
    /// [`mien_core::Error::Mismatch`] for the wrong number of points; [`mien_core::Error::Invalid`]
    /// for an instance past the batch or a non-finite coordinate (named by index).
    pub fn set_guides(&mut self, instance: u32, guides: &[[f32; 3]]) -> mien_core::Result<()> {
        let per = self.data.groom.guides.len();
        if guides.len() != per {
            return Err(mien_core::Error::Mismatch {
                what: "hair guide points".into(),
                expected: per as u64,
                found: guides.len() as u64,
            });
        }
        if instance >= self.instances {
            return Err(invalid(format!(
                "instance {instance} of a batch of {}",
                self.instances
            )));
        }
        if let Some(i) = guides.iter().position(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(invalid(format!("guide point {i} is not finite")));
        }
        let base = instance as usize * per;
        for (d, p) in self.staged[base..base + per].iter_mut().zip(guides) {
            *d = [p[0], p[1], p[2], 0.0];
        }
        self.dirty = true;
        Ok(())
    }

    /// Record several hair lifts into `encoder` as one pass in the lift stage (their slots must not
    /// overlap: checked), writing the guides staged since the last recording first. Nothing is
    /// recorded for an empty slice.
    ///
    /// # Errors
    /// A lost device; lifts on another device than the sink's; freed or overlapping slots.
    pub fn record_batch(
        lifts: &mut [GpuHairLift<G>],
        encoder: &mut G::Encoder,
        sink: &mut GpuSplatSink<G>,
    ) -> mien_core::Result<()> {
        if lifts.is_empty() {
            return Ok(());
        }
        let g = sink.context().clone();
        g.check().map_err(Into::into)?;
        if lifts.iter().any(|l| !l.g.same(&g)) {
            return Err(invalid(
                "every hair lift of one recording must live on the sink's device".into(),
            ));
        }
        let span = |l: &GpuHairLift<G>| {
            let start = u64::from(l.range.offset);
            let len =
                u64::from(l.instances - 1) * u64::from(l.slot_stride) + u64::from(l.range.count);
            (start, start + len)
        };
        for l in lifts.iter_mut().filter(|l| l.checked != sink.frees()) {
            let (a, b) = span(l);
            if !sink.is_allocated(a, b) {
                return Err(unallocated(a, b));
            }
            l.checked = sink.frees();
        }
        if lifts.len() > 1 {
            let ranges: Vec<(u64, u64)> = lifts.iter().map(span).collect();
            crate::lift::check_disjoint("hair lift batch", &ranges)?;
        }
        for l in lifts.iter_mut().filter(|l| l.dirty) {
            l.guides.write(&g, 0, &l.staged).map_err(Into::into)?;
            l.dirty = false;
        }
        let mut dispatches = lifts.iter().map(|l| Dispatch {
            entry: Entry::HairStrands,
            group: &l.group,
            groups: [l.groups.0, l.groups.1, l.instances],
        });
        g.record(encoder, Stage::Hair, &mut dispatches)
            .map_err(Into::into)?;
        sink.mark_changed();
        Ok(())
    }
}
