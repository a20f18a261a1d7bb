//! The wgpu splat sink: the four buffers on the device, indexed by absolute slot.

use mien_core::sink::{BYTES_PER_SLOT, SlotAllocator, SlotRange, SplatBuffers, SplatSink};

use crate::context::WgpuContext;
use crate::error::Error;

/// [`SplatSink`] whose buffers live on the GPU: `center` and `cov_a`/`cov_b` as `vec4<f32>` per slot,
/// `color` as `u32` per slot (DESIGN.md "Splat sink"). New and freed slots are zero (opacity 0).
pub struct WgpuSplatSink {
    ctx: WgpuContext,
    slots: SlotAllocator,
    /// `array<vec4<f32>>`: xyz centre metres, w unused.
    pub center: wgpu::Buffer,
    /// `array<u32>`: pack4x8unorm(r, g, b, opacity).
    pub color: wgpu::Buffer,
    /// `array<vec4<f32>>`: (c00, c01, c02, c11).
    pub cov_a: wgpu::Buffer,
    /// `array<vec4<f32>>`: (c12, c22, 0, 0).
    pub cov_b: wgpu::Buffer,
    sphere: ([f32; 3], f32),
    changed: bool,
}

impl std::fmt::Debug for WgpuSplatSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuSplatSink")
            .field("capacity", &self.slots.capacity())
            .finish()
    }
}

impl WgpuSplatSink {
    /// A sink of `capacity` slots.
    ///
    /// # Errors
    /// [`Error::OverLimits`] when a buffer would exceed `max_buffer_size`; out of memory.
    pub fn new(ctx: &WgpuContext, capacity: u32) -> mien_core::Result<Self> {
        let needed = u64::from(capacity.max(1)) * 16;
        if needed > ctx.limits().max_buffer_size {
            return Err(Error::OverLimits {
                what: format!("a sink of {capacity} slots"),
                limit_name: "max_buffer_size",
                limit: ctx.limits().max_buffer_size,
                needed,
            }
            .into());
        }
        let make = |label: &str, stride: u64| {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: u64::from(capacity.max(1)) * stride,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (center, color, cov_a, cov_b) = ctx.scoped("the splat sink", || {
            (
                make("mien sink center", 16),
                make("mien sink color", 4),
                make("mien sink cov_a", 16),
                make("mien sink cov_b", 16),
            )
        })?;
        Ok(WgpuSplatSink {
            ctx: ctx.clone(),
            slots: SlotAllocator::new(capacity),
            center,
            color,
            cov_a,
            cov_b,
            sphere: ([0.0; 3], 0.0),
            changed: false,
        })
    }

    /// The allocator.
    pub fn slots(&self) -> &SlotAllocator {
        &self.slots
    }

    /// Fill every slot of every buffer with `word` (a test aid: poison before a run).
    pub fn fill(&self, word: u32) {
        for b in [&self.center, &self.color, &self.cov_a, &self.cov_b] {
            let words = vec![word; (b.size() / 4) as usize];
            self.ctx
                .queue()
                .write_buffer(b, 0, bytemuck::cast_slice(&words));
        }
    }

    /// Read slots `range` back to the host (tests, export; one submission and a wait).
    ///
    /// # Errors
    /// A range outside the sink; readback failures.
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
        let data = self.ctx.read_buffers("the splat sink", &parts)?;
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

impl SplatSink for WgpuSplatSink {
    fn capacity(&self) -> u32 {
        self.slots.capacity()
    }

    fn allocate(&mut self, count: u32) -> mien_core::Result<SlotRange> {
        self.slots.allocate(count)
    }

    fn free(&mut self, range: SlotRange) -> mien_core::Result<()> {
        self.slots.free(range)?;
        // Freed slots are cleared so a stale gaussian can never be drawn.
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("mien sink free"),
            });
        let (o, n) = (u64::from(range.offset), u64::from(range.count));
        enc.clear_buffer(&self.center, o * 16, Some(n * 16));
        enc.clear_buffer(&self.color, o * 4, Some(n * 4));
        enc.clear_buffer(&self.cov_a, o * 16, Some(n * 16));
        enc.clear_buffer(&self.cov_b, o * 16, Some(n * 16));
        self.ctx.submit(enc);
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
