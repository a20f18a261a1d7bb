//! The context's buffers: creation, uploads through a staging buffer when device memory is not
//! host-visible, and readback — each kept alive until the submissions that use it finish.

use std::sync::Arc;

use ash::vk;

use crate::buffer::{Buffer, BufferInner};
use crate::device::VulkanContext;
use crate::error::Result;
use crate::memory::MemoryLocation;
use crate::raw;

impl VulkanContext {
    /// Create a buffer of `size` bytes for `usage` in `location`.
    ///
    /// # Errors
    /// Out of memory, or no memory type fits.
    pub(crate) fn buffer(
        &self,
        what: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<Buffer> {
        // SAFETY: the device is live; BufferInner frees what it creates.
        unsafe { BufferInner::new(&self.inner.shared, what, size.max(4), usage, location) }
            .map(|b| Buffer(Arc::new(b)))
    }

    /// A device-local buffer of `size` bytes usable as a copy source and destination, for a caller's
    /// own transfers (the benchmark's copy baseline records `vkCmdCopyBuffer` between two of these
    /// into [`crate::VulkanEncoder::raw`]). Freed when the last clone is dropped; the caller waits for the
    /// submissions that use it first.
    ///
    /// # Errors
    /// Out of memory, or no device-local memory type fits.
    pub fn transfer_buffer(&self, size: u64) -> Result<Buffer> {
        self.buffer(
            "a transfer buffer",
            size,
            vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuOnly,
        )
    }

    /// A device-local storage buffer holding `bytes` (staged through a host buffer when the device
    /// memory is not host-visible).
    ///
    /// # Errors
    /// Out of memory, device loss.
    pub(crate) fn upload(
        &self,
        what: &str,
        bytes: &[u8],
        usage: vk::BufferUsageFlags,
    ) -> Result<Buffer> {
        self.upload_as(what, bytes, usage, false)
    }

    /// [`VulkanContext::upload`], marked as a frame buffer (rewritten per frame through the
    /// staging ring) when `frame`.
    pub(crate) fn upload_as(
        &self,
        what: &str,
        bytes: &[u8],
        usage: vk::BufferUsageFlags,
        frame: bool,
    ) -> Result<Buffer> {
        let size = (bytes.len() as u64).max(4);
        let usage = usage | vk::BufferUsageFlags::TRANSFER_DST;
        // SAFETY: the device is live; BufferInner frees what it creates.
        let mut inner = unsafe {
            BufferInner::new(
                &self.inner.shared,
                what,
                size,
                usage,
                MemoryLocation::GpuOnly,
            )
        }?;
        inner.frame = frame;
        let b = Buffer(Arc::new(inner));
        if b.is_mapped() {
            b.write(0, bytes);
            return Ok(b);
        }
        let staging = self.buffer(
            "a staging buffer",
            bytes.len() as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        staging.write(0, bytes);
        let mut enc = self.begin()?;
        let region = [vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size: bytes.len().max(4) as u64,
        }];
        // SAFETY: enc is recording; both buffers are live and large enough.
        unsafe {
            self.device()
                .cmd_copy_buffer(enc.raw(), staging.handle(), b.handle(), &region)
        };
        enc.keep(&staging);
        enc.keep(&b);
        self.submit(enc)?;
        self.wait()?;
        Ok(b)
    }

    /// Copy `(buffer, offset, size)` ranges to the host: one submission and one wait.
    ///
    /// # Errors
    /// Out of memory, device loss, timeout.
    pub(crate) fn read(&self, parts: &[(&Buffer, u64, u64)]) -> Result<Vec<Vec<u8>>> {
        let mut enc = self.begin()?;
        // SAFETY: enc recording: make every earlier shader write visible to the copies.
        unsafe { raw::compute_barrier(self.device(), enc.raw()) };
        let mut staging = Vec::new();
        for (b, offset, size) in parts {
            let s = self.buffer(
                "a readback buffer",
                *size,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
            )?;
            if *size > 0 {
                let region = [vk::BufferCopy {
                    src_offset: *offset,
                    dst_offset: 0,
                    size: *size,
                }];
                // SAFETY: enc recording; ranges inside both buffers.
                unsafe {
                    self.device()
                        .cmd_copy_buffer(enc.raw(), b.handle(), s.handle(), &region)
                };
            }
            enc.keep(b);
            enc.keep(&s);
            staging.push(s);
        }
        // SAFETY: enc recording: the copies' writes become visible to the host.
        unsafe { raw::compute_barrier(self.device(), enc.raw()) };
        self.submit(enc)?;
        self.wait()?;
        Ok(staging
            .iter()
            .zip(parts)
            .map(|(s, (_, _, size))| s.read(*size as usize))
            .collect())
    }
}
