//! Buffers of the safe layer: created with their memory, destroyed in `Drop`, shareable (an `Arc`) so
//! a submission can keep one alive until its fence signals.

use std::any::Any;
use std::sync::Arc;

use ash::vk;

use crate::device::DeviceShared;
use crate::error::{Result, VkResultExt};
use crate::memory::{Allocation, MemoryLocation};

pub(crate) struct BufferInner {
    shared: Arc<DeviceShared>,
    buffer: vk::Buffer,
    alloc: Allocation,
    size: u64,
    /// Where it was asked to live.
    location: MemoryLocation,
    /// A frame buffer: device-local, rewritten per frame through the staging ring
    /// (`crate::staging`).
    pub(crate) frame: bool,
}

impl BufferInner {
    /// Create a buffer and bind fresh memory.
    ///
    /// # Safety
    /// `shared.device` is live.
    pub(crate) unsafe fn new(
        shared: &Arc<DeviceShared>,
        what: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<Self> {
        let d = &shared.device;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: d is live (caller).
        let buffer = unsafe { d.create_buffer(&info, None) }.vk("vkCreateBuffer", what)?;
        // SAFETY: buffer was just created on d.
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        // SAFETY: d is the device the requirements came from.
        let alloc = match unsafe { shared.allocator.allocate(d, req, location, what) } {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unused buffer.
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(e);
            }
        };
        // SAFETY: fresh buffer and memory of a type it accepts.
        if let Err(r) = unsafe { d.bind_buffer_memory(buffer, alloc.memory, alloc.offset) } {
            // SAFETY: both unused.
            unsafe {
                d.destroy_buffer(buffer, None);
                shared.allocator.free(d, &alloc);
            }
            return Err(crate::error::vk_error("vkBindBufferMemory", what, r));
        }
        Ok(BufferInner {
            shared: shared.clone(),
            buffer,
            alloc,
            size,
            location,
            frame: false,
        })
    }
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        // SAFETY: the last reference is gone, so no submission in flight uses the buffer (a
        // submission holds a reference until its fence signals).
        unsafe {
            self.shared.device.destroy_buffer(self.buffer, None);
            self.shared.allocator.free(&self.shared.device, &self.alloc);
        }
    }
}

/// A device buffer (cheap to clone; freed when the last clone and every submission using it are
/// gone).
#[derive(Clone)]
pub struct Buffer(pub(crate) Arc<BufferInner>);

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("size", &self.0.size)
            .finish()
    }
}

impl Buffer {
    /// The Vulkan handle.
    pub fn handle(&self) -> vk::Buffer {
        self.0.buffer
    }

    /// Size, bytes.
    pub fn size(&self) -> u64 {
        self.0.size
    }

    /// Whether it was made on the device `shared` holds.
    pub(crate) fn belongs_to(&self, shared: &Arc<DeviceShared>) -> bool {
        Arc::ptr_eq(&self.0.shared, shared)
    }

    /// Whether it was made for the host to write per frame (a frame buffer).
    pub(crate) fn is_frame_buffer(&self) -> bool {
        self.0.frame
    }

    /// Where it was asked to live.
    #[allow(dead_code)]
    pub(crate) fn location(&self) -> MemoryLocation {
        self.0.location
    }

    /// Whether its memory is host-visible (mapped).
    pub fn is_mapped(&self) -> bool {
        self.0.alloc.mapped.is_some()
    }

    /// A reference that keeps the buffer alive (for a submission's keep list).
    pub fn keep_alive(&self) -> Arc<dyn Any + Send + Sync> {
        self.0.clone()
    }

    /// Copy `bytes` into the mapped memory at `offset` (the caller ensures no submission in
    /// flight reads or writes that range: a staging region is rewritten only after the
    /// submission that read it completed).
    pub(crate) fn write(&self, offset: u64, bytes: &[u8]) {
        let Some(p) = self.0.alloc.mapped else { return };
        let n = bytes.len().min(self.0.size.saturating_sub(offset) as usize);
        // SAFETY: the mapping covers the whole allocation (≥ size); `offset + n ≤ size`; no GPU work
        // touches the range (caller); the source does not overlap device memory.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.as_ptr().add(offset as usize), n);
        }
        if !self.0.alloc.coherent {
            let range = [vk::MappedMemoryRange::default()
                .memory(self.0.alloc.memory)
                .offset(0)
                .size(vk::WHOLE_SIZE)];
            // SAFETY: the memory is mapped.
            let _ = unsafe { self.0.shared.device.flush_mapped_memory_ranges(&range) };
        }
    }

    /// The first `n` bytes of mapped memory (after the GPU finished writing it).
    pub(crate) fn read(&self, n: usize) -> Vec<u8> {
        let Some(p) = self.0.alloc.mapped else {
            return Vec::new();
        };
        if !self.0.alloc.coherent {
            let range = [vk::MappedMemoryRange::default()
                .memory(self.0.alloc.memory)
                .offset(0)
                .size(vk::WHOLE_SIZE)];
            // SAFETY: the memory is mapped.
            let _ = unsafe { self.0.shared.device.invalidate_mapped_memory_ranges(&range) };
        }
        let n = n.min(self.0.size as usize);
        // SAFETY: the mapping covers ≥ size bytes; the GPU finished (caller waited on the fence).
        unsafe { std::slice::from_raw_parts(p.as_ptr(), n) }.to_vec()
    }
}
