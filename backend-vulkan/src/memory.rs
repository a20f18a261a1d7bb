//! Device memory: the allocator seam (an engine plugs in its own) and the default one, which gives
//! every buffer its own `vkAllocateMemory` (mien creates few, large buffers).

use std::ptr::NonNull;

use ash::vk;

use crate::error::{Error, Result, VkResultExt};

/// Where a buffer's memory should live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryLocation {
    /// Read and written by the GPU only: device-local (host-visible too when the device offers
    /// such a type, so uploads need no staging).
    GpuOnly,
    /// Written by the host every frame, read by the GPU: host-visible and coherent, device-local
    /// when available.
    CpuToGpu,
    /// Written by the GPU, read by the host: host-visible, cached when available.
    GpuToCpu,
}

/// A piece of device memory bound to one buffer.
#[derive(Debug)]
pub struct Allocation {
    /// The memory object.
    pub memory: vk::DeviceMemory,
    /// Offset of the buffer inside it, bytes.
    pub offset: u64,
    /// Size, bytes.
    pub size: u64,
    /// The host address of `offset` when the memory is mapped.
    pub mapped: Option<NonNull<u8>>,
    /// Whether host writes need no flush.
    pub coherent: bool,
}

// SAFETY: the mapped pointer is only dereferenced through `&mut` access to the owning buffer or
// while no GPU work uses the range; Vulkan memory objects may be used from any thread.
unsafe impl Send for Allocation {}
// SAFETY: as above; shared access never writes through the pointer.
unsafe impl Sync for Allocation {}

/// The allocator seam: an engine with its own allocator (VMA, gpu-allocator) implements this.
pub trait MemoryAllocator: Send + Sync {
    /// Allocate memory satisfying `requirements` for `location` and map it when host-visible.
    ///
    /// # Safety
    /// `device` is the live device the requirements came from.
    ///
    /// # Errors
    /// Out of memory, or no memory type fits.
    unsafe fn allocate(
        &self,
        device: &ash::Device,
        requirements: vk::MemoryRequirements,
        location: MemoryLocation,
        what: &str,
    ) -> Result<Allocation>;

    /// Free `allocation`.
    ///
    /// # Safety
    /// `allocation` came from this allocator on `device` and no pending GPU work uses it.
    unsafe fn free(&self, device: &ash::Device, allocation: &Allocation);
}

/// One `vkAllocateMemory` per buffer, host-visible memory persistently mapped.
#[derive(Debug)]
pub struct DedicatedAllocator {
    props: vk::PhysicalDeviceMemoryProperties,
}

impl DedicatedAllocator {
    /// An allocator for a device with memory properties `props`.
    pub fn new(props: vk::PhysicalDeviceMemoryProperties) -> Self {
        DedicatedAllocator { props }
    }

    /// The best memory type in `bits` for `location`: required flags first, then preferred.
    pub fn pick(&self, bits: u32, location: MemoryLocation) -> Option<u32> {
        use vk::MemoryPropertyFlags as F;
        let (required, preferred) = match location {
            MemoryLocation::GpuOnly => (F::DEVICE_LOCAL, F::HOST_VISIBLE | F::HOST_COHERENT),
            MemoryLocation::CpuToGpu => (F::HOST_VISIBLE | F::HOST_COHERENT, F::DEVICE_LOCAL),
            MemoryLocation::GpuToCpu => (F::HOST_VISIBLE, F::HOST_CACHED | F::HOST_COHERENT),
        };
        let types = &self.props.memory_types[..self.props.memory_type_count as usize];
        let ok = |i: usize, f: F| bits & (1 << i) != 0 && types[i].property_flags.contains(f);
        (0..types.len())
            .filter(|&i| ok(i, required))
            .max_by_key(|&i| (types[i].property_flags & preferred).as_raw().count_ones())
            .or_else(|| {
                (location == MemoryLocation::GpuOnly)
                    .then(|| (0..types.len()).find(|&i| ok(i, F::empty())))
                    .flatten()
            })
            .map(|i| i as u32)
    }
}

impl MemoryAllocator for DedicatedAllocator {
    unsafe fn allocate(
        &self,
        device: &ash::Device,
        req: vk::MemoryRequirements,
        location: MemoryLocation,
        what: &str,
    ) -> Result<Allocation> {
        let ty = self
            .pick(req.memory_type_bits, location)
            .ok_or_else(|| Error::NoDevice {
                reason: format!("no memory type for {what} ({location:?})"),
            })?;
        let flags = self.props.memory_types[ty as usize].property_flags;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(ty);
        // SAFETY: `device` is live (caller); the type index is one of the device's.
        let memory = unsafe { device.allocate_memory(&info, None) }.vk("vkAllocateMemory", what)?;
        let mapped = if flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE) {
            // SAFETY: host-visible memory just allocated, not mapped yet.
            match unsafe {
                device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            } {
                Ok(p) => NonNull::new(p.cast::<u8>()),
                Err(r) => {
                    // SAFETY: unused memory of this device.
                    unsafe { device.free_memory(memory, None) };
                    return Err(crate::error::vk_error("vkMapMemory", what, r));
                }
            }
        } else {
            None
        };
        Ok(Allocation {
            memory,
            offset: 0,
            size: req.size,
            mapped,
            coherent: flags.contains(vk::MemoryPropertyFlags::HOST_COHERENT),
        })
    }

    unsafe fn free(&self, device: &ash::Device, allocation: &Allocation) {
        // SAFETY: caller's contract; freeing implicitly unmaps.
        unsafe { device.free_memory(allocation.memory, None) };
    }
}
