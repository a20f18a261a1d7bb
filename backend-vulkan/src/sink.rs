//! The Vulkan splat sink: the four buffers in device memory, indexed by absolute slot.

use ash::vk;
use mien_core::sink::{BYTES_PER_SLOT, SlotAllocator, SlotRange, SplatBuffers, SplatSink};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;

/// [`SplatSink`] on Vulkan: `center`, `cov_a`, `cov_b` as `vec4<f32>` per slot and `color` as
/// `u32` per slot (DESIGN.md "Splat sink"). New and freed slots are zero (opacity 0).
pub struct VulkanSplatSink {
    ctx: VulkanContext,
    slots: SlotAllocator,
    pub(crate) center: Buffer,
    pub(crate) color: Buffer,
    pub(crate) cov_a: Buffer,
    pub(crate) cov_b: Buffer,
    sphere: ([f32; 3], f32),
    changed: bool,
}

impl std::fmt::Debug for VulkanSplatSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanSplatSink")
            .field("capacity", &self.slots.capacity())
            .finish()
    }
}

impl Drop for VulkanSplatSink {
    fn drop(&mut self) {
        let _ = self.ctx.wait();
    }
}

impl VulkanSplatSink {
    /// A sink of `capacity` slots, cleared.
    ///
    /// # Errors
    /// Out of memory; device loss.
    pub fn new(ctx: &VulkanContext, capacity: u32) -> mien_core::Result<Self> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let n = u64::from(capacity.max(1));
        let make =
            |what: &str, stride: u64| ctx.buffer(what, n * stride, usage, MemoryLocation::GpuOnly);
        let sink = VulkanSplatSink {
            ctx: ctx.clone(),
            slots: SlotAllocator::new(capacity),
            center: make("the sink centres", 16)?,
            color: make("the sink colours", 4)?,
            cov_a: make("the sink covariances", 16)?,
            cov_b: make("the sink covariances", 16)?,
            sphere: ([0.0; 3], 0.0),
            changed: false,
        };
        sink.fill_range(0, capacity.max(1), 0)?;
        Ok(sink)
    }

    fn fill_range(&self, offset: u32, count: u32, word: u32) -> Result<()> {
        let mut enc = self.ctx.begin()?;
        let (o, n) = (u64::from(offset), u64::from(count));
        for (b, stride) in [
            (&self.center, 16),
            (&self.color, 4),
            (&self.cov_a, 16),
            (&self.cov_b, 16),
        ] {
            // SAFETY: enc recording; the range lies in the buffer and is a multiple of 4 bytes.
            unsafe {
                self.ctx.device().cmd_fill_buffer(
                    enc.raw(),
                    b.handle(),
                    o * stride,
                    n * stride,
                    word,
                )
            };
            enc.keep(b);
        }
        // SAFETY: enc recording.
        unsafe { crate::raw::compute_barrier(self.ctx.device(), enc.raw()) };
        self.ctx.submit(enc)?;
        self.ctx.wait()
    }

    /// The allocator.
    pub fn slots(&self) -> &SlotAllocator {
        &self.slots
    }

    /// Fill every slot of every buffer with `word` (a test aid: poison before a run).
    ///
    /// # Errors
    /// Device errors.
    pub fn fill(&self, word: u32) -> mien_core::Result<()> {
        Ok(self.fill_range(0, self.slots.capacity().max(1), word)?)
    }

    /// Read slots `range` back to the host (tests, export; one submission and a wait).
    ///
    /// # Errors
    /// A range outside the sink; device errors.
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
        let data = self.ctx.read(&[
            (&self.center, o * 16, n * 16),
            (&self.color, o * 4, n * 4),
            (&self.cov_a, o * 16, n * 16),
            (&self.cov_b, o * 16, n * 16),
        ])?;
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

impl SplatSink for VulkanSplatSink {
    fn capacity(&self) -> u32 {
        self.slots.capacity()
    }

    fn allocate(&mut self, count: u32) -> mien_core::Result<SlotRange> {
        self.slots.allocate(count)
    }

    fn free(&mut self, range: SlotRange) -> mien_core::Result<()> {
        self.slots.free(range)?;
        self.fill_range(range.offset, range.count, 0)
            .map_err(|e: Error| e.into())
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
