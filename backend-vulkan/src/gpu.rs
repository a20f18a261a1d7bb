//! The device layer on Vulkan: [`mien_gpu::GpuDevice`] for [`VulkanContext`], over the safe layer
//! (buffers freed in `Drop`, submissions that keep what they use alive until their fence) and the
//! raw layer's calls. Bind groups are descriptor sets of their own pool, kept alive by every
//! encoder that dispatches them.

use std::sync::Arc;

use ash::vk;
use mien_gpu::{Bind, Caps, Dispatch, Entry, GpuDevice, Stage, StageTimes, Usage};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;

/// A kernel's bindings: a descriptor set, and what must outlive every submission that uses it
/// (its pool and its buffers).
pub struct VulkanBindGroup {
    set: vk::DescriptorSet,
    keep: Arc<BindKeep>,
    /// The context it was made on (its address, compared in `record`).
    owner: usize,
}

struct BindKeep {
    _pool: DescriptorPool,
    _buffers: Vec<Buffer>,
}

impl std::fmt::Debug for VulkanBindGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanBindGroup")
            .field("set", &self.set)
            .finish()
    }
}

const STORAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::STORAGE_BUFFER;

fn usage(u: Usage) -> vk::BufferUsageFlags {
    match u {
        Usage::Uniform => vk::BufferUsageFlags::UNIFORM_BUFFER,
        Usage::Storage => STORAGE | vk::BufferUsageFlags::TRANSFER_SRC,
    }
}

impl VulkanContext {
    /// `b` was made on this context and `offset .. offset + len` lies inside it.
    fn check_owned(&self, what: &str, b: &Buffer, offset: u64, len: u64) -> Result<()> {
        if !b.belongs_to(&self.inner.shared) {
            return Err(Error::WrongContext {
                what: format!("a buffer ({what})"),
            });
        }
        <Self as GpuDevice>::check_range(what, b, offset, len)
    }
}

/// Zero-sized bindings are invalid: an empty array becomes one zero word.
fn contents(data: &[u8]) -> &[u8] {
    if data.is_empty() { &[0; 4] } else { data }
}

impl GpuDevice for VulkanContext {
    type Buffer = Buffer;
    type BindGroup = VulkanBindGroup;
    type Encoder = VulkanEncoder;
    type Error = Error;

    const NAME: &'static str = "vulkan";

    fn caps(&self) -> &Caps {
        &self.inner.caps
    }

    fn over_limits(what: String, limit_name: &'static str, limit: u64, needed: u64) -> Error {
        Error::OverLimits {
            what,
            limit_name,
            limit,
            needed,
        }
    }

    fn range_error(what: &str, offset: u64, len: u64, size: u64) -> Error {
        Error::Range {
            what: what.into(),
            offset,
            len,
            size,
        }
    }

    /// Every pipeline was made with the context (the features they need were checked then), the
    /// tensor-core GNM kernel's only where the device has what it needs ([`Caps::coop_gnm`]).
    fn supports(&self, entry: Entry) -> Result<()> {
        if entry.needs_coop() && !self.inner.caps.coop_gnm {
            return Err(Error::Unsupported {
                what: "the tensor-core kernels (gnm_coop.wgsl)".into(),
                reason: "the device has no 16×16×16 fp16 → fp32 cooperative-matrix shape at \
                         subgroup scope with subgroups of 32 (VK_KHR_cooperative_matrix), or \
                         mien did not create the device"
                    .into(),
            });
        }
        Ok(())
    }

    fn size(buffer: &Buffer) -> u64 {
        buffer.size()
    }

    fn upload(&self, what: &str, u: Usage, data: &[u8]) -> Result<Buffer> {
        VulkanContext::upload(self, what, contents(data), usage(u))
    }

    fn output(&self, what: &str, size: u64) -> Result<Buffer> {
        let flags =
            STORAGE | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        self.buffer(
            what,
            size.next_multiple_of(4),
            flags,
            MemoryLocation::GpuOnly,
        )
    }

    /// Device-local memory the kernels read at full speed, rewritten per frame through the
    /// staging ring (`crate::staging`).
    fn frame_buffer(&self, what: &str, u: Usage, data: &[u8]) -> Result<Buffer> {
        let flags = usage(u) | vk::BufferUsageFlags::TRANSFER_SRC;
        self.upload_as(what, contents(data), flags, true)
    }

    /// The bytes go into the staging ring's current region and a copy into `buffer` is queued
    /// for the next submission; waits only when the region is still in use by the frame
    /// [`mien_gpu::FRAMES_IN_FLIGHT`] back.
    fn write(&self, buffer: &Buffer, offset: u64, data: &[u8]) -> Result<()> {
        self.check_owned("a per-frame write", buffer, offset, data.len() as u64)?;
        if !buffer.is_frame_buffer() {
            return Err(Error::NotHostVisible {
                what: "a per-frame write".into(),
            });
        }
        self.stage_write(buffer, offset, data)
    }

    fn fill(&self, parts: &[(&Buffer, u64, u64)], word: u32) -> Result<()> {
        for &(b, offset, size) in parts {
            self.check_owned("a fill", b, offset, size)?;
        }
        let mut enc = self.begin()?;
        for &(b, offset, size) in parts.iter().filter(|p| p.2 > 0) {
            // SAFETY: enc recording; the range lies in the buffer and is a multiple of 4 bytes.
            unsafe {
                self.device()
                    .cmd_fill_buffer(enc.raw(), b.handle(), offset, size, word)
            };
            enc.keep(b);
        }
        // SAFETY: enc recording.
        unsafe { raw::compute_barrier(self.device(), enc.raw()) };
        VulkanContext::submit(self, enc)?;
        self.wait()
    }

    fn read(&self, what: &str, parts: &[(&Buffer, u64, u64)]) -> Result<Vec<Vec<u8>>> {
        for &(b, offset, size) in parts {
            self.check_owned(what, b, offset, size)?;
        }
        VulkanContext::read(self, parts)
    }

    fn bind(&self, entry: Entry, binds: &[Bind<'_, Buffer>]) -> Result<VulkanBindGroup> {
        for b in binds {
            let len = b.size.unwrap_or(b.buffer.size().saturating_sub(b.offset));
            self.check_owned(entry.label(), b.buffer, b.offset, len)?;
        }
        let storage = binds.len().saturating_sub(1) as u32;
        let pool = DescriptorPool::new(self, 1, 1, storage)?;
        let (layout, _) = self.inner.pipelines.get(entry);
        let set = pool.allocate(layout.set)?;
        let ranges: Vec<(vk::Buffer, u64, u64)> = binds
            .iter()
            .map(|b| {
                (
                    b.buffer.handle(),
                    b.offset,
                    b.size.unwrap_or(vk::WHOLE_SIZE),
                )
            })
            .collect();
        // SAFETY: the set is fresh (no pending use); the handles are live; binding 0 is the
        // uniform and the rest storage, as every entry's slots (`Entry::slots`) and layout.
        unsafe { raw::write_set(self.device(), set, &ranges) };
        Ok(VulkanBindGroup {
            set,
            keep: Arc::new(BindKeep {
                _pool: pool,
                _buffers: binds.iter().map(|b| b.buffer.clone()).collect(),
            }),
            owner: Arc::as_ptr(&self.inner) as usize,
        })
    }

    /// The stage's begin timestamp, the dispatches, the end timestamp, and a compute → compute /
    /// transfer barrier. Each of mien's encoders takes a query pool of its own at its first pass
    /// (reset there) and every pass writes the next two queries ([`mien_gpu::PassTimes`]), so
    /// frames in flight and stages recorded in several passes are all timed. An engine's command
    /// buffer carries no timestamps (the engine times its own submission); the staging ring's
    /// queued copies are recorded into it in front of mien's first pass.
    fn record(
        &self,
        enc: &mut VulkanEncoder,
        stage: Stage,
        dispatches: &mut dyn Iterator<Item = Dispatch<'_, Self>>,
    ) -> Result<()> {
        self.check()?;
        if enc.owner().is_some_and(|o| !Arc::ptr_eq(o, &self.inner)) {
            return Err(Error::WrongContext {
                what: "the encoder".into(),
            });
        }
        if !enc.is_mien_owned() {
            self.flush_into_engine(enc)?;
        }
        let d = self.device();
        let cmd = enc.raw();
        let bind = vk::PipelineBindPoint::COMPUTE;
        let ts = match (&self.inner.timestamps, enc.is_mien_owned()) {
            (Some(t), true) => {
                if enc.queries.is_none() {
                    // SAFETY: enc recording on this device, outside a render pass.
                    enc.queries = Some(unsafe { t.take_pool(d, cmd) }?);
                }
                enc.queries
                    .as_mut()
                    .and_then(|q| q.passes.begin(stage).map(|i| (q.pool, i)))
            }
            _ => None,
        };
        let stamp = |pool, q| {
            // SAFETY: enc recording; query q of the encoder's pool was reset at its first pass
            // and is written once.
            unsafe { d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, pool, q) }
        };
        if let Some((pool, q)) = ts {
            stamp(pool, q);
        }
        // SAFETY: enc is recording on this device (VulkanEncoder's contract); every handle bound
        // below is alive and kept in `enc` until the submission completes.
        unsafe {
            let mut bound = None;
            for x in dispatches {
                if x.group.owner != Arc::as_ptr(&self.inner) as usize {
                    // The pass so far is recorded; the encoder must not be submitted.
                    return Err(Error::WrongContext {
                        what: format!("a bind group of {}", x.entry.label()),
                    });
                }
                let (layout, pipeline) = self.inner.pipelines.get(x.entry);
                if bound != Some(x.entry) {
                    d.cmd_bind_pipeline(cmd, bind, pipeline);
                    bound = Some(x.entry);
                }
                d.cmd_bind_descriptor_sets(cmd, bind, layout.pipeline, 0, &[x.group.set], &[]);
                let [gx, gy, gz] = x.groups;
                d.cmd_dispatch(cmd, gx, gy, gz);
                enc.keep_any(x.group.keep.clone());
            }
            if let Some((pool, q)) = ts {
                stamp(pool, q + 1);
            }
            raw::compute_barrier(d, cmd);
        }
        Ok(())
    }

    fn copy(&self, enc: &mut VulkanEncoder, src: &Buffer, dst: &Buffer, size: u64) -> Result<()> {
        self.check_owned("a copy's source", src, 0, size)?;
        self.check_owned("a copy's destination", dst, 0, size)?;
        if enc.owner().is_some_and(|o| !Arc::ptr_eq(o, &self.inner)) {
            return Err(Error::WrongContext {
                what: "the encoder".into(),
            });
        }
        let region = [vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size,
        }];
        // SAFETY: enc is recording outside a render pass; both buffers are live with TRANSFER_SRC
        // | TRANSFER_DST usage and at least `size` bytes (`output`), and kept in `enc`.
        unsafe {
            self.device()
                .cmd_copy_buffer(enc.raw(), src.handle(), dst.handle(), &region)
        };
        enc.keep(src);
        enc.keep(dst);
        Ok(())
    }

    fn begin(&self) -> Result<VulkanEncoder> {
        VulkanContext::begin(self)
    }

    /// Marks the frame's timestamps for [`GpuDevice::completed_times`].
    fn end_frame(&self, encoder: &mut VulkanEncoder) {
        if let Some(q) = encoder.queries.as_mut() {
            q.frame = true;
        }
    }

    fn submit(&self, encoder: VulkanEncoder) -> Result<()> {
        VulkanContext::submit(self, encoder)
    }

    fn wait(&self) -> Result<()> {
        VulkanContext::wait(self)
    }

    fn completed_times(&self) -> Result<Vec<StageTimes>> {
        VulkanContext::completed_times(self)
    }

    fn check(&self) -> Result<()> {
        VulkanContext::check(self)
    }

    /// Vulkan's calls fail at once: nothing is deferred.
    fn scoped<T>(&self, _what: &str, f: impl FnOnce() -> T) -> Result<T> {
        Ok(f())
    }

    /// Buffers are destroyed when their last reference goes; wait so an engine that submitted
    /// mien's passes itself is not left with freed handles.
    fn release(&self) {
        let _ = VulkanContext::wait(self);
    }

    fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
