//! Per-frame writes with frames in flight: a staging ring of [`FRAMES_IN_FLIGHT`] regions of
//! host-visible memory. [`GpuDevice::write`](mien_gpu::GpuDevice::write) copies the bytes into the
//! current region and queues a buffer copy into the device-local frame buffer; the copies are
//! recorded in a command buffer submitted in front of the next submission (or, for an engine's
//! command buffer, in front of mien's first pass recorded into it). A region is written again only
//! after the submission that consumed it completed, so a write never waits for the frame in
//! flight, only — when the host is [`FRAMES_IN_FLIGHT`] frames ahead — for the oldest.
//!
//! A region grows by chunks while a frame writes more than it holds; when it comes round again its
//! chunks are replaced by one of their whole size, so in steady state nothing is allocated per
//! frame (a chunk kept from a growing round could be too small for the next round, which then
//! allocated again every frame: measured on the H200 as +450 µs per frame for W1 at batch 256).

use ash::vk;
use mien_gpu::FRAMES_IN_FLIGHT;

use crate::buffer::Buffer;

/// The smallest chunk, bytes.
const MIN_CHUNK: u64 = 64 << 10;

/// One queued copy: `len` bytes at `src` of chunk `chunk` into `dst` at `dst_offset`.
pub(crate) struct Copy {
    pub chunk: usize,
    pub src: u64,
    pub dst: Buffer,
    pub dst_offset: u64,
    pub len: u64,
    /// An earlier copy of this frame overlaps part of the destination: a transfer barrier goes
    /// in front of this one so the later write wins.
    pub after: bool,
}

/// One region of the ring.
#[derive(Default)]
pub(crate) struct Region {
    pub chunks: Vec<Buffer>,
    /// Bytes used in the last chunk.
    pub used: u64,
    /// Bytes used in every chunk but the last (for the merge).
    pub before: u64,
    pub copies: Vec<Copy>,
    /// Its copies were recorded (into a submission or an engine's command buffer): the region
    /// starts over ([`Region::restart`]) before the next write, once `busy` completed.
    pub consumed: bool,
    /// The serial of the submission that consumed this region's copies (`None`: free, or
    /// consumed by an engine's command buffer, whose completion mien cannot see).
    pub busy: Option<u64>,
}

/// The ring.
pub(crate) struct Staging {
    pub regions: Vec<Region>,
    pub current: usize,
}

impl Default for Staging {
    fn default() -> Self {
        Staging {
            regions: (0..FRAMES_IN_FLIGHT).map(|_| Region::default()).collect(),
            current: 0,
        }
    }
}

impl Region {
    /// Room for `len` more bytes: `(chunk, offset)`, making a chunk with `make(size)` when the
    /// last one is full.
    pub(crate) fn reserve(
        &mut self,
        len: u64,
        make: impl FnOnce(u64) -> crate::error::Result<Buffer>,
    ) -> crate::error::Result<(usize, u64)> {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| self.used + len <= c.size());
        if !fits {
            let total = self.before + self.used;
            let size = (2 * total).max(len).max(MIN_CHUNK).next_multiple_of(4);
            let c = make(size)?;
            self.before = total;
            self.used = 0;
            self.chunks.push(c);
        }
        let at = (self.chunks.len() - 1, self.used);
        // Copies of 4-byte multiples keep every source offset aligned.
        self.used += len.next_multiple_of(4);
        Ok(at)
    }

    /// Start the region over (its last submission completed): no copies, and when the last round
    /// needed several chunks, one chunk of the round's whole size in their place (made with
    /// `make`; dropping the old ones frees them: nothing pending uses them), so a steady stream
    /// of frames allocates nothing.
    ///
    /// # Errors
    /// Out of memory making the merged chunk.
    pub(crate) fn restart(
        &mut self,
        make: impl FnOnce(u64) -> crate::error::Result<Buffer>,
    ) -> crate::error::Result<()> {
        self.busy = None;
        self.consumed = false;
        self.copies.clear();
        let total = self.before + self.used;
        self.used = 0;
        self.before = 0;
        if self.chunks.len() > 1 {
            self.chunks.clear();
            self.chunks
                .push(make(total.max(MIN_CHUNK).next_multiple_of(4))?);
        }
        Ok(())
    }

    /// Queue a copy into `dst`: a pending copy it covers entirely is dropped (the same range
    /// written twice in a frame: the later bytes win); one it overlaps in part is kept and the new
    /// copy ordered after it.
    pub(crate) fn queue(
        &mut self,
        chunk: usize,
        src: u64,
        dst: &Buffer,
        dst_offset: u64,
        len: u64,
    ) {
        let end = dst_offset + len;
        let same = |c: &Copy| c.dst.handle() == dst.handle();
        self.copies
            .retain(|c| !(same(c) && c.dst_offset >= dst_offset && c.dst_offset + c.len <= end));
        let after = self
            .copies
            .iter()
            .any(|c| same(c) && c.dst_offset < end && dst_offset < c.dst_offset + c.len);
        self.copies.push(Copy {
            chunk,
            src,
            dst: dst.clone(),
            dst_offset,
            len,
            after,
        });
    }

    /// The copies grouped into `vkCmdCopyBuffer` calls: `(barrier in front, src chunk, dst,
    /// regions)`.
    pub(crate) fn batches(&self) -> Vec<(bool, vk::Buffer, vk::Buffer, Vec<vk::BufferCopy>)> {
        let mut out: Vec<(bool, vk::Buffer, vk::Buffer, Vec<vk::BufferCopy>)> = Vec::new();
        for c in &self.copies {
            let (src, dst) = (self.chunks[c.chunk].handle(), c.dst.handle());
            let r = vk::BufferCopy {
                src_offset: c.src,
                dst_offset: c.dst_offset,
                size: c.len,
            };
            match out.last_mut() {
                Some((_, s, d, rs)) if !c.after && *s == src && *d == dst => rs.push(r),
                _ => out.push((c.after, src, dst, vec![r])),
            }
        }
        out
    }
}
