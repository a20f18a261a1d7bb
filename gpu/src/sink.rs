//! The splat sink, written once: the four buffers on the device, indexed by absolute slot.

use mien_core::sink::{BYTES_PER_SLOT, SlotAllocator, SlotRange, SplatBuffers, SplatSink};

use crate::device::GpuDevice;

/// [`SplatSink`] whose buffers live on the GPU: `center` and `cov_a`/`cov_b` as `vec4<f32>` per
/// slot, `color` as `u32` per slot (DESIGN.md "Splat sink"). New and freed slots are zero (opacity
/// 0).
pub struct GpuSplatSink<G: GpuDevice> {
    g: G,
    slots: SlotAllocator,
    /// `(capacity,4)` f32: xyz centre metres, w unused.
    pub center: G::Buffer,
    /// `(capacity,)` u32: pack4x8unorm(r, g, b, opacity).
    pub color: G::Buffer,
    /// `(capacity,4)` f32: (c00, c01, c02, c11), m².
    pub cov_a: G::Buffer,
    /// `(capacity,4)` f32: (c12, c22, 0, 0), m².
    pub cov_b: G::Buffer,
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
    /// A sink of `capacity` slots, zeroed.
    ///
    /// # Errors
    /// The device's over-limits error when a buffer would exceed its largest buffer; out of memory.
    pub fn new(g: &G, capacity: u32) -> mien_core::Result<Self> {
        let n = u64::from(capacity.max(1));
        let caps = g.caps();
        if n * 16 > caps.max_buffer {
            let what = format!("a sink of {capacity} slots");
            return Err(G::over_limits(what, caps.max_buffer_name, caps.max_buffer, n * 16).into());
        }
        let make = || -> Result<_, G::Error> {
            Ok((
                g.output("the sink centres", n * 16)?,
                g.output("the sink colours", n * 4)?,
                g.output("the sink covariances (a)", n * 16)?,
                g.output("the sink covariances (b)", n * 16)?,
            ))
        };
        let (center, color, cov_a, cov_b) = g
            .scoped("the splat sink", make)
            .map_err(Into::into)?
            .map_err(Into::into)?;
        let sink = GpuSplatSink {
            g: g.clone(),
            slots: SlotAllocator::new(capacity),
            center,
            color,
            cov_a,
            cov_b,
            sphere: ([0.0; 3], 0.0),
            changed: false,
            frees: 0,
        };
        sink.fill_range(0, capacity.max(1), 0)?;
        Ok(sink)
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

    fn fill_range(&self, offset: u32, count: u32, word: u32) -> mien_core::Result<()> {
        let (o, n) = (u64::from(offset), u64::from(count));
        let parts = [
            (&self.center, o * 16, n * 16),
            (&self.color, o * 4, n * 4),
            (&self.cov_a, o * 16, n * 16),
            (&self.cov_b, o * 16, n * 16),
        ];
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
        let (o, n) = (u64::from(range.offset), u64::from(range.count));
        let parts = [
            (&self.center, o * 16, n * 16),
            (&self.color, o * 4, n * 4),
            (&self.cov_a, o * 16, n * 16),
            (&self.cov_b, o * 16, n * 16),
        ];
        let data = self.g.read("the splat sink", &parts).map_err(Into::into)?;
        let v4 = |b: &[u8]| -> Vec<[f32; 4]> {
            b.chunks_exact(16)
                .map(bytemuck::pod_read_unaligned::<[f32; 4]>)
                .collect()
        };
        Ok(SplatBuffers {
            center: v4(&data[0]),
            color: data[1]
                .chunks_exact(4)
                .map(bytemuck::pod_read_unaligned::<u32>)
                .collect(),
            cov_a: v4(&data[2]),
            cov_b: v4(&data[3]),
        })
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
