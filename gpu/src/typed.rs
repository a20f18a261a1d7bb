//! Typed buffers: a device buffer that knows its element type and count.

use std::marker::PhantomData;

use bytemuck::Pod;

use crate::device::{Bind, GpuDevice, Usage};

/// A device buffer of `len` elements of `T` (`bytemuck::Pod`, laid out as the kernels read it).
pub struct Typed<G: GpuDevice, T: Pod> {
    buffer: G::Buffer,
    len: usize,
    _t: PhantomData<fn() -> T>,
}

impl<G: GpuDevice, T: Pod> std::fmt::Debug for Typed<G, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typed")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .finish()
    }
}

fn elem<T>() -> u64 {
    std::mem::size_of::<T>() as u64
}

impl<G: GpuDevice, T: Pod> Typed<G, T> {
    /// `data`, device-local, read by kernels ([`GpuDevice::upload`]).
    ///
    /// # Errors
    /// Out of memory.
    pub fn upload(g: &G, what: &str, usage: Usage, data: &[T]) -> Result<Self, G::Error> {
        Ok(Typed {
            buffer: g.upload(what, usage, bytemuck::cast_slice(data))?,
            len: data.len(),
            _t: PhantomData,
        })
    }

    /// `len` elements kernels write ([`GpuDevice::output`]).
    ///
    /// # Errors
    /// Out of memory.
    pub fn output(g: &G, what: &str, len: usize) -> Result<Self, G::Error> {
        Ok(Typed {
            buffer: g.output(what, len as u64 * elem::<T>())?,
            len,
            _t: PhantomData,
        })
    }

    /// `data`, rewritten per frame ([`GpuDevice::frame_buffer`]).
    ///
    /// # Errors
    /// Out of memory.
    pub fn frame(g: &G, what: &str, usage: Usage, data: &[T]) -> Result<Self, G::Error> {
        Ok(Typed {
            buffer: g.frame_buffer(what, usage, bytemuck::cast_slice(data))?,
            len: data.len(),
            _t: PhantomData,
        })
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element (the buffer still has one word).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer's size, bytes (at least 4).
    pub fn bytes(&self) -> u64 {
        G::size(&self.buffer)
    }

    /// The device buffer.
    pub fn raw(&self) -> &G::Buffer {
        &self.buffer
    }

    /// The whole buffer as a binding.
    pub fn bind(&self) -> Bind<'_, G::Buffer> {
        Bind::whole(&self.buffer)
    }

    /// Write `data` from element `first` of a frame buffer; writes nothing past the end (the
    /// callers size frame data from the same plan as the buffer).
    ///
    /// # Errors
    /// As [`GpuDevice::write`].
    pub fn write(&self, g: &G, first: usize, data: &[T]) -> Result<(), G::Error> {
        let n = data.len().min(self.len.saturating_sub(first));
        if n == 0 {
            return Ok(());
        }
        g.write(
            &self.buffer,
            first as u64 * elem::<T>(),
            bytemuck::cast_slice(&data[..n]),
        )
    }

    /// Elements `first .. first + count` of `len` read back (`count` clamped to the buffer).
    ///
    /// # Errors
    /// As [`GpuDevice::read`].
    pub fn read(&self, g: &G, what: &str, first: usize, count: usize) -> Result<Vec<T>, G::Error> {
        let count = count.min(self.len.saturating_sub(first));
        let bytes = g.read(
            what,
            &[(
                &self.buffer,
                first as u64 * elem::<T>(),
                count as u64 * elem::<T>(),
            )],
        )?;
        Ok(bytes
            .first()
            .map(|b| {
                b.chunks_exact(elem::<T>() as usize)
                    .map(bytemuck::pod_read_unaligned)
                    .collect()
            })
            .unwrap_or_default())
    }
}
