//! The CPU splat sink: the four arrays on the host plus the slot allocator.

use mien_core::Result;
use mien_core::sink::{BYTES_PER_SLOT, SlotAllocator, SlotRange, SplatBuffers, SplatSink};

/// [`SplatSink`] whose buffers are host vectors ([`SplatBuffers`]). New slots are cleared (opacity 0).
#[derive(Clone, Debug)]
pub struct CpuSplatSink {
    slots: SlotAllocator,
    buffers: SplatBuffers,
    sphere: ([f32; 3], f32),
    changed: bool,
}

impl CpuSplatSink {
    /// A sink of `capacity` slots, all cleared.
    pub fn new(capacity: u32) -> Self {
        CpuSplatSink {
            slots: SlotAllocator::new(capacity),
            buffers: SplatBuffers::new(capacity),
            sphere: ([0.0; 3], 0.0),
            changed: false,
        }
    }

    /// The four arrays, indexed by absolute slot.
    pub fn buffers(&self) -> &SplatBuffers {
        &self.buffers
    }

    /// Mutable access for lifts.
    pub fn buffers_mut(&mut self) -> &mut SplatBuffers {
        &mut self.buffers
    }

    /// The allocator (free blocks and live ranges, for the memory report).
    pub fn slots(&self) -> &SlotAllocator {
        &self.slots
    }
}

impl SplatSink for CpuSplatSink {
    fn capacity(&self) -> u32 {
        self.slots.capacity()
    }

    fn allocate(&mut self, count: u32) -> Result<SlotRange> {
        self.slots.allocate(count)
    }

    fn free(&mut self, range: SlotRange) -> Result<()> {
        self.slots.free(range)?;
        // Freed slots are cleared so a stale gaussian can never be drawn.
        let r = range.offset as usize..range.end() as usize;
        self.buffers.center[r.clone()].fill([0.0; 4]);
        self.buffers.color[r.clone()].fill(0);
        self.buffers.cov_a[r.clone()].fill([0.0; 4]);
        self.buffers.cov_b[r].fill([0.0; 4]);
        Ok(())
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
