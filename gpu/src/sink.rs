//! The splat sink, written once: the four buffers on the device, indexed by absolute slot.

use mien_core::sink::{BYTES_PER_SLOT, SlotAllocator, SlotRange, SplatBuffers, SplatSink};

use crate::device::GpuDevice;

/// One allocation-sized part of a [`GpuSplatSink`]: slots `first .. first + slots` in four buffers
/// of their own (slot `first + i` is element `i`).
pub struct SinkPage<G: GpuDevice> {
    /// The page's first slot.
    pub first: u32,
    /// Slots in the page.
    pub slots: u32,
    /// `(slots,4)` f32: xyz centre metres, w unused.
    pub center: G::Buffer,
    /// `(slots,)` u32: pack4x8unorm(r, g, b, opacity).
    pub color: G::Buffer,
    /// `(slots,4)` f32: (c00, c01, c02, c11), m².
    pub cov_a: G::Buffer,
    /// `(slots,4)` f32: (c12, c22, 0, 0), m².
    pub cov_b: G::Buffer,
}

/// [`SplatSink`] whose buffers live on the GPU: `center` and `cov_a`/`cov_b` as `vec4<f32>` per
/// slot, `color` as `u32` per slot (DESIGN.md "Splat sink"). New and freed slots are zero (opacity
/// 0). A sink larger than one buffer may be (the device's largest buffer and storage binding, less
/// a margin for offset alignment) is split into pages ([`GpuSplatSink::pages`]) of a whole number
/// of `unit` slots ([`GpuSplatSink::paged`]): a lift's range must lie inside one page, which
/// ranges of `unit` slots allocated one after another always do.
pub struct GpuSplatSink<G: GpuDevice> {
    g: G,
    slots: SlotAllocator,
    pages: Vec<SinkPage<G>>,
    page_slots: u32,
    sphere: ([f32; 3], f32),
    changed: bool,
    /// Ranges freed so far: a lift re-checks that its slots are still allocated when this moved.
    frees: u64,
}

impl<G: GpuDevice> std::fmt::Debug for GpuSplatSink<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSplatSink")
            .field("device", &G::NAME)
            .field("capacity", &self.slots.capacity())
            .finish()
    }
}

impl<G: GpuDevice> Drop for GpuSplatSink<G> {
    fn drop(&mut self) {
        self.g.release();
    }
}

impl<G: GpuDevice> GpuSplatSink<G> {
    /// A sink of `capacity` slots, zeroed, in pages of any whole number of slots
    /// ([`GpuSplatSink::paged`] with a unit of 1).
    ///
    /// # Errors
    /// As [`GpuSplatSink::paged`].
    pub fn new(g: &G, capacity: u32) -> mien_core::Result<Self> {
        Self::paged(g, capacity, 1)
    }

    /// A sink of `capacity` slots, zeroed, split into pages of as many whole `unit`s of slots as
    /// one buffer holds (16 bytes a slot for the largest array; the device's largest buffer and
    /// storage binding, less 4 KiB for offset alignment): with instances of `unit` slots
    /// allocated one after another, no instance's range crosses a page. One page when it fits.
    ///
    /// # Errors
    /// The device's over-limits error when `unit` slots exceed one buffer; out of memory.
    pub fn paged(g: &G, capacity: u32, unit: u32) -> mien_core::Result<Self> {
        Self::with_page_slots(g, capacity, unit, None)
    }

    /// [`GpuSplatSink::paged`] with pages of at most `page_slots` slots (rounded down to whole
    /// `unit`s) when given — smaller than the device needs, so the multi-page path runs on small
    /// sinks (tests).
    ///
    /// # Errors
    /// As [`GpuSplatSink::paged`].
    pub fn with_page_slots(
        g: &G,
        capacity: u32,
        unit: u32,
        page_slots: Option<u32>,
    ) -> mien_core::Result<Self> {
        let n = u64::from(capacity.max(1));
        let caps = g.caps();
        let buffer = caps.max_buffer.min(caps.binding_limit);
        let mut per_page = (buffer.saturating_sub(4096) / 16).min(u64::from(u32::MAX));
        if let Some(p) = page_slots {
            per_page = per_page.min(u64::from(p));
        }
        let unit = u64::from(unit.max(1));
        let page_slots = per_page / unit * unit;
        if page_slots == 0 {
            let what = format!("a sink page of {unit} slots");
            let (name, limit) = if caps.max_buffer <= caps.binding_limit {
                (caps.max_buffer_name, caps.max_buffer)
            } else {
                (caps.binding_limit_name, caps.binding_limit)
            };
            return Err(G::over_limits(what, name, limit, unit * 16 + 4096).into());
        }
        let page_slots = page_slots.min(n);
        let mut pages = Vec::new();
        let mut first = 0u64;
        while first < n {
            let slots = page_slots.min(n - first);
            let make = || -> Result<_, G::Error> {
                Ok((
                    g.output("the sink centres", slots * 16)?,
                    g.output("the sink colours", slots * 4)?,
                    g.output("the sink covariances (a)", slots * 16)?,
                    g.output("the sink covariances (b)", slots * 16)?,
                ))
            };
            let (center, color, cov_a, cov_b) = g
                .scoped("the splat sink", make)
                .map_err(Into::into)?
                .map_err(Into::into)?;
            pages.push(SinkPage {
                first: first as u32,
                slots: slots as u32,
                center,
                color,
                cov_a,
                cov_b,
            });
            first += slots;
        }
        let sink = GpuSplatSink {
            g: g.clone(),
            slots: SlotAllocator::new(capacity),
            pages,
            page_slots: page_slots as u32,
            sphere: ([0.0; 3], 0.0),
            changed: false,
            frees: 0,
        };
        sink.fill_range(0, capacity.max(1), 0)?;
        Ok(sink)
    }

    /// The pages, in slot order (one unless the sink is larger than one buffer).
    pub fn pages(&self) -> &[SinkPage<G>] {
        &self.pages
    }

    /// Slots per page (every page but the last holds this many).
    pub fn page_slots(&self) -> u32 {
        self.page_slots
    }

    /// The first page's centres `(slots,4)` f32 (the whole sink's when it has one page).
    pub fn center(&self) -> &G::Buffer {
        &self.pages[0].center
    }

    /// The first page's colours `(slots,)` u32.
    pub fn color(&self) -> &G::Buffer {
        &self.pages[0].color
    }

    /// The first page's covariances (a) `(slots,4)` f32.
    pub fn cov_a(&self) -> &G::Buffer {
        &self.pages[0].cov_a
    }

    /// The first page's covariances (b) `(slots,4)` f32.
    pub fn cov_b(&self) -> &G::Buffer {
        &self.pages[0].cov_b
    }

    /// The page holding slots `offset .. offset + count` and the offset within it.
    ///
    /// # Errors
    /// [`mien_core::Error::Invalid`] for slots outside the sink or crossing a page boundary.
    pub fn locate(&self, offset: u64, count: u64) -> mien_core::Result<(&SinkPage<G>, u64)> {
        let p = (offset / u64::from(self.page_slots.max(1))) as usize;
        match self.pages.get(p) {
            Some(page)
                if offset + count.max(1) <= u64::from(page.first) + u64::from(page.slots)
                    || (count == 0 && offset <= u64::from(page.first) + u64::from(page.slots)) =>
            {
                Ok((page, offset - u64::from(page.first)))
            }
            _ => Err(mien_core::Error::Invalid {
                what: format!("sink slots {offset}..{}", offset + count),
                reason: format!(
                    "a lift's slots must lie in one page of the sink ({} slots a page, {} pages): \
                     allocate ranges that do not cross a multiple of {}",
                    self.page_slots,
                    self.pages.len(),
                    self.page_slots
                ),
            }),
        }
    }

    /// The device.
    pub fn context(&self) -> &G {
        &self.g
    }

    /// The allocator.
    pub fn slots(&self) -> &SlotAllocator {
        &self.slots
    }

    /// Ranges freed since the sink was made.
    pub(crate) fn frees(&self) -> u64 {
        self.frees
    }

    /// Whether every slot of `start .. end` belongs to an allocated range.
    pub(crate) fn is_allocated(&self, start: u64, end: u64) -> bool {
        end <= u64::from(self.slots.capacity())
            && self.slots.blocks().iter().all(|b| {
                let (o, e) = (u64::from(b.offset), b.end());
                e <= start || o >= end
            })
    }

    /// Every page's part of slots `offset .. offset + count`: `(page, local offset, count)`.
    fn spans(&self, offset: u64, count: u64) -> impl Iterator<Item = (&SinkPage<G>, u64, u64)> {
        let end = offset + count;
        self.pages.iter().filter_map(move |p| {
            let (a, b) = (u64::from(p.first), u64::from(p.first) + u64::from(p.slots));
            let (s, e) = (offset.max(a), end.min(b));
            (s < e).then(|| (p, s - a, e - s))
        })
    }

    fn fill_range(&self, offset: u32, count: u32, word: u32) -> mien_core::Result<()> {
        let mut parts = Vec::new();
        for (p, o, n) in self.spans(u64::from(offset), u64::from(count)) {
            parts.push((&p.center, o * 16, n * 16));
            parts.push((&p.color, o * 4, n * 4));
            parts.push((&p.cov_a, o * 16, n * 16));
            parts.push((&p.cov_b, o * 16, n * 16));
        }
        self.g.fill(&parts, word).map_err(Into::into)
    }

    /// Fill every slot of every buffer with `word` (a test aid: poison before a run).
    ///
    /// # Errors
    /// Device errors.
    pub fn fill(&self, word: u32) -> mien_core::Result<()> {
        self.fill_range(0, self.slots.capacity().max(1), word)
    }

    /// Read slots `range` back to the host (tests, export; one submission and a wait).
    ///
    /// # Errors
    /// A range outside the sink; read-back failures.
    pub fn read(&self, range: SlotRange) -> mien_core::Result<SplatBuffers> {
        if range.end() > u64::from(self.slots.capacity()) {
            return Err(mien_core::Error::Slots {
                reason: "read outside the sink",
                offset: range.offset,
                count: range.count,
                capacity: self.slots.capacity(),
            });
        }
        let mut parts = Vec::new();
        for (p, o, n) in self.spans(u64::from(range.offset), u64::from(range.count)) {
            parts.push((&p.center, o * 16, n * 16));
            parts.push((&p.color, o * 4, n * 4));
            parts.push((&p.cov_a, o * 16, n * 16));
            parts.push((&p.cov_b, o * 16, n * 16));
        }
        let data = self.g.read("the splat sink", &parts).map_err(Into::into)?;
        let v4 = |b: &[u8]| -> Vec<[f32; 4]> {
            b.chunks_exact(16)
                .map(bytemuck::pod_read_unaligned::<[f32; 4]>)
                .collect()
        };
        let mut out = SplatBuffers::default();
        for d in data.chunks_exact(4) {
            out.center.extend(v4(&d[0]));
            out.color.extend(
                d[1].chunks_exact(4)
                    .map(bytemuck::pod_read_unaligned::<u32>),
            );
            out.cov_a.extend(v4(&d[2]));
            out.cov_b.extend(v4(&d[3]));
        }
        Ok(out)
    }
}

impl<G: GpuDevice> SplatSink for GpuSplatSink<G> {
    fn capacity(&self) -> u32 {
        self.slots.capacity()
    }

    fn allocate(&mut self, count: u32) -> mien_core::Result<SlotRange> {
        self.slots.allocate(count)
    }

    fn free(&mut self, range: SlotRange) -> mien_core::Result<()> {
        self.slots.free(range)?;
        self.frees += 1;
        // Freed slots are cleared so a stale gaussian can never be drawn (and a lift of them is
        // refused from now on: `GpuDebugLift::record_batch`).
        self.fill_range(range.offset, range.count, 0)
    }

    fn set_bounding_sphere(&mut self, center: [f32; 3], radius: f32) {
        self.sphere = (center, radius);
    }

    fn bounding_sphere(&self) -> ([f32; 3], f32) {
        self.sphere
    }

    fn mark_changed(&mut self) {
        self.changed = true;
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn bytes(&self) -> u64 {
        u64::from(self.capacity()) * BYTES_PER_SLOT
    }
}
