//! Frames of the safe layer: a command pool and its one command buffer per encoder (reused after
//! the pool's reset), submissions with reused fences, the resources each keeps alive until its
//! fence signals, frames in flight ([`FRAMES_IN_FLIGHT`]: the staging ring's copies submitted in
//! front of a frame, each frame's own timestamp queries, a submission beyond the limit waiting
//! for the oldest), and the bounded wait ([`crate::device::WAIT_LIMIT`]).

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ash::vk;
use mien_gpu::{FRAMES_IN_FLIGHT, StageTimes};

use crate::buffer::Buffer;
use crate::device::{ContextInner, VulkanContext, WAIT_LIMIT};
use crate::encoder::VulkanEncoder;
use crate::error::{Error, Result, VkResultExt};
use crate::memory::MemoryLocation;
use crate::timing::FrameQueries;

/// A submission in flight: its fence, the pool and command buffer to give back when it signals
/// (and the staging copies' one, when it had any), its timestamp queries, and what its commands
/// use.
pub(crate) struct InFlight {
    pub(crate) fence: vk::Fence,
    pub(crate) pool: vk::CommandPool,
    pub(crate) cmd: vk::CommandBuffer,
    /// Submission order.
    pub(crate) serial: u64,
    pub(crate) pre: Option<(vk::CommandPool, vk::CommandBuffer)>,
    pub(crate) queries: Option<FrameQueries>,
    pub(crate) _keep: Vec<Arc<dyn Any + Send + Sync>>,
}

fn poisoned(what: &str) -> Error {
    Error::DeviceLost {
        what: format!("a poisoned {what}"),
    }
}

impl ContextInner {
    /// Reset `pool` (nothing of it pending) and keep it with its command buffer for the next
    /// encoder; a pool that cannot be reset or kept is destroyed.
    pub(crate) fn give_back(&self, pool: vk::CommandPool, cmd: vk::CommandBuffer) {
        let d = &self.shared.device;
        // SAFETY: no command buffer of `pool` is pending (callers: a failed begin, an encoder
        // dropped or refused before submission, or a retired submission whose fence signalled).
        let reset = unsafe { d.reset_command_pool(pool, vk::CommandPoolResetFlags::empty()) };
        match (reset, self.pools.lock()) {
            (Ok(()), Ok(mut p)) => p.push((pool, cmd)),
            // SAFETY: as above.
            _ => unsafe { d.destroy_command_pool(pool, None) },
        }
    }
}

impl VulkanContext {
    fn mark(&self, e: Error) -> Error {
        if matches!(e, Error::DeviceLost { .. }) {
            self.inner.lost.store(true, Ordering::Relaxed);
        }
        e
    }

    /// A command buffer from mien's pool, begun for one submission.
    ///
    /// # Errors
    /// Out of memory, device loss.
    pub fn begin(&self) -> Result<VulkanEncoder> {
        self.check()?;
        self.retire()?;
        let (pool, cmd) = self.command_buffer()?;
        // SAFETY: cmd is recording, on this device, from a compute family pool owned by the encoder.
        Ok(unsafe { VulkanEncoder::new(cmd, Some((pool, self.inner.clone()))) })
    }

    /// A command buffer (and its pool) from mien's free list or new, begun for one submission.
    fn command_buffer(&self) -> Result<(vk::CommandPool, vk::CommandBuffer)> {
        let d = self.device();
        let (pool, cmd) = match self.inner.pools.lock().ok().and_then(|mut p| p.pop()) {
            Some(x) => x,
            None => {
                let info = vk::CommandPoolCreateInfo::default()
                    .queue_family_index(self.inner.family)
                    .flags(vk::CommandPoolCreateFlags::TRANSIENT);
                // SAFETY: d is live.
                let pool = unsafe { d.create_command_pool(&info, None) }
                    .vk("vkCreateCommandPool", "a frame")?;
                let info = vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1);
                // SAFETY: `pool` is new and this thread's alone.
                match unsafe { d.allocate_command_buffers(&info) } {
                    Ok(c) => (pool, c[0]),
                    Err(r) => {
                        // SAFETY: nothing of the pool is in use.
                        unsafe { d.destroy_command_pool(pool, None) };
                        return Err(crate::error::vk_error(
                            "vkAllocateCommandBuffers",
                            "a frame",
                            r,
                        ));
                    }
                }
            }
        };
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: cmd is in the initial state (new, or its pool was reset) and not pending.
        if let Err(r) = unsafe { d.begin_command_buffer(cmd, &begin) } {
            self.inner.give_back(pool, cmd);
            return Err(crate::error::vk_error("vkBeginCommandBuffer", "a frame", r));
        }
        Ok((pool, cmd))
    }

    /// Put `data` into the staging ring's current region and queue its copy into the frame
    /// buffer `dst` at `offset` ([`crate::staging`]); a region consumed by the submission
    /// [`FRAMES_IN_FLIGHT`] back waits for it first.
    ///
    /// # Errors
    /// Out of memory (a region growing), device loss, a timeout.
    pub(crate) fn stage_write(&self, dst: &Buffer, offset: u64, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut st = self
            .inner
            .staging
            .lock()
            .map_err(|_| poisoned("staging ring"))?;
        let cur = st.current;
        let make = |size| {
            self.inner.staging_chunks.fetch_add(1, Ordering::Relaxed);
            self.buffer(
                "a staging region",
                size,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
            )
        };
        if st.regions[cur].consumed {
            // Normally done already: `submit` keeps fewer frames in flight than regions.
            if let Some(serial) = st.regions[cur].busy {
                self.wait_serial(serial)?;
            }
            st.regions[cur].restart(make)?;
        }
        let region = &mut st.regions[cur];
        let len = data.len() as u64;
        let (chunk, at) = region.reserve(len, make)?;
        region.chunks[chunk].write(at, data);
        region.queue(chunk, at, dst, offset, len);
        Ok(())
    }

    /// Record the current region's queued copies into `cmd` (recording) and move the ring on:
    /// what the copies use is kept by `keep`; the region is marked consumed by `serial` (`None`:
    /// an engine's command buffer). Returns whether there were any.
    fn record_staged(
        &self,
        st: &mut crate::staging::Staging,
        cmd: vk::CommandBuffer,
        keep: &mut Vec<Arc<dyn Any + Send + Sync>>,
        serial: Option<u64>,
    ) -> bool {
        let cur = st.current;
        let region = &mut st.regions[cur];
        if region.copies.is_empty() {
            return false;
        }
        // SAFETY: cmd recording outside a render pass on this device; the chunks and
        // destinations are live (kept below), the ranges checked when queued.
        unsafe { crate::raw::staging_copies(self.device(), cmd, &region.batches()) };
        keep.extend(region.copies.drain(..).map(|c| c.dst.keep_alive()));
        keep.extend(region.chunks.iter().map(Buffer::keep_alive));
        region.consumed = true;
        region.busy = serial;
        st.current = (cur + 1) % st.regions.len();
        true
    }

    /// Record the queued per-frame copies into an engine's command buffer (in front of mien's
    /// first pass into it): an engine's submission of a frame must complete before the
    /// [`FRAMES_IN_FLIGHT`]-th next frame's writes (mien cannot see an engine's fences).
    pub(crate) fn flush_into_engine(&self, enc: &mut VulkanEncoder) -> Result<()> {
        let mut st = self
            .inner
            .staging
            .lock()
            .map_err(|_| poisoned("staging ring"))?;
        let mut keep = Vec::new();
        self.record_staged(&mut st, enc.raw(), &mut keep, None);
        for k in keep {
            enc.keep_any(k);
        }
        Ok(())
    }

    /// End and submit `encoder` (from [`VulkanContext::begin`]); the resources it used stay alive
    /// until its fence signals.
    ///
    /// # Errors
    /// Device loss, out of memory.
    pub fn submit(&self, mut encoder: VulkanEncoder) -> Result<()> {
        let d = self.device();
        let cmd = encoder.raw();
        let Some((pool, owner)) = encoder.take_pool() else {
            return Err(Error::Vk {
                call: "VulkanContext::submit (an engine's command buffer: the engine submits it)",
                result: vk::Result::ERROR_INITIALIZATION_FAILED,
            });
        };
        if !Arc::ptr_eq(&owner, &self.inner) {
            // Not pending: its own context takes the pool back.
            owner.give_back(pool, cmd);
            return Err(Error::WrongContext {
                what: "the encoder".into(),
            });
        }
        // SAFETY: cmd is recording (begun by `begin`).
        if let Err(r) = unsafe { d.end_command_buffer(cmd) } {
            self.inner.give_back(pool, cmd);
            return Err(self.mark(crate::error::vk_error("vkEndCommandBuffer", "a frame", r)));
        }
        let mut st = match self.inner.staging.lock() {
            Ok(st) => st,
            Err(_) => {
                self.inner.give_back(pool, cmd);
                return Err(poisoned("staging ring"));
            }
        };
        let serial = self.inner.serial.fetch_add(1, Ordering::Relaxed);
        let mut keep = encoder.take_resources();
        // The staging ring's copies go in a command buffer of their own submitted in front, so
        // every write made before this submission lands before it (as wgpu's write_buffer).
        let pre = if st.regions[st.current].copies.is_empty() {
            None
        } else {
            let (ppool, pcmd) = match self.command_buffer() {
                Ok(x) => x,
                Err(e) => {
                    self.inner.give_back(pool, cmd);
                    return Err(e);
                }
            };
            self.record_staged(&mut st, pcmd, &mut keep, Some(serial));
            // SAFETY: pcmd recording (begun by `command_buffer`).
            if let Err(r) = unsafe { d.end_command_buffer(pcmd) } {
                self.inner.give_back(pool, cmd);
                self.inner.give_back(ppool, pcmd);
                return Err(self.mark(crate::error::vk_error("vkEndCommandBuffer", "a frame", r)));
            }
            Some((ppool, pcmd))
        };
        let reused = self.inner.fences.lock().ok().and_then(|mut f| f.pop());
        let fence = match reused {
            Some(f) => f,
            // SAFETY: d live.
            None => unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
                .vk("vkCreateFence", "a frame")?,
        };
        let cmds: Vec<vk::CommandBuffer> = pre.iter().map(|p| p.1).chain([cmd]).collect();
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let queue = self.inner.queue.lock().map_err(|_| poisoned("queue"))?;
        // SAFETY: queue locked; the command buffers ended; fence unsignalled (new, or reset when
        // retired).
        if let Err(r) = unsafe { d.queue_submit(*queue, &submit, fence) } {
            // SAFETY: the fence was never submitted.
            unsafe { d.destroy_fence(fence, None) };
            self.inner.give_back(pool, cmd);
            if let Some((p, c)) = pre {
                self.inner.give_back(p, c);
            }
            return Err(self.mark(crate::error::vk_error("vkQueueSubmit", "a frame", r)));
        }
        drop(queue);
        drop(st);
        let queries = encoder.queries.take();
        let oldest = {
            let mut f = self
                .inner
                .in_flight
                .lock()
                .map_err(|_| poisoned("submission list"))?;
            f.push(InFlight {
                fence,
                pool,
                cmd,
                serial,
                pre,
                queries,
                _keep: keep,
            });
            (f.len() >= FRAMES_IN_FLIGHT)
                .then(|| f.iter().map(|s| s.serial).min())
                .flatten()
        };
        // At most FRAMES_IN_FLIGHT − 1 submissions stay in flight while the host records the
        // next frame into the last of the FRAMES_IN_FLIGHT staging regions: wait for the oldest.
        if let Some(s) = oldest {
            self.wait_serial(s)?;
        }
        Ok(())
    }

    /// Wait (at most [`WAIT_LIMIT`]) for the submission `serial` when it is still in flight, then
    /// free the completed ones.
    ///
    /// # Errors
    /// [`Error::Timeout`], [`Error::DeviceLost`].
    fn wait_serial(&self, serial: u64) -> Result<()> {
        {
            let f = self
                .inner
                .in_flight
                .lock()
                .map_err(|_| poisoned("submission list"))?;
            if let Some(s) = f.iter().find(|s| s.serial == serial) {
                self.wait_fences(&[s.fence])?;
            }
        }
        self.retire()
    }

    /// Wait for `fences` (live while the caller holds the submission list).
    fn wait_fences(&self, fences: &[vk::Fence]) -> Result<()> {
        // SAFETY: the fences are live while the caller holds the list.
        match unsafe {
            self.device()
                .wait_for_fences(fences, true, WAIT_LIMIT.as_nanos() as u64)
        } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => Err(Error::Timeout {
                what: "a frame".into(),
                seconds: WAIT_LIMIT.as_secs(),
            }),
            Err(r) => Err(self.mark(crate::error::vk_error("vkWaitForFences", "a frame", r))),
        }
    }

    /// Per-stage times of every frame completed since the last call, oldest first, without
    /// waiting (empty without timestamps).
    ///
    /// # Errors
    /// Device loss.
    pub fn completed_times(&self) -> Result<Vec<StageTimes>> {
        self.retire()?;
        Ok(self
            .inner
            .timestamps
            .as_ref()
            .map(crate::timing::Timestamps::take)
            .unwrap_or_default())
    }

    /// Free the submissions whose fences have signalled.
    fn retire(&self) -> Result<()> {
        let d = self.device();
        let mut done = Vec::new();
        {
            let mut f = self.inner.in_flight.lock().map_err(|_| Error::DeviceLost {
                what: "a poisoned submission list".into(),
            })?;
            let mut i = 0;
            while i < f.len() {
                // SAFETY: fence is live.
                match unsafe { d.get_fence_status(f[i].fence) } {
                    Ok(true) => done.push(f.swap_remove(i)),
                    Ok(false) => i += 1,
                    Err(r) => {
                        return Err(self.mark(crate::error::vk_error(
                            "vkGetFenceStatus",
                            "a frame",
                            r,
                        )));
                    }
                }
            }
        }
        done.sort_by_key(|s| s.serial);
        for mut s in done {
            if let (Some(q), Some(t)) = (s.queries.take(), self.inner.timestamps.as_ref()) {
                // SAFETY: the frame's fence signalled.
                unsafe { t.retire(d, q) };
            }
            if let Some((p, c)) = s.pre.take() {
                self.inner.give_back(p, c);
            }
            // A fence that resets goes back to the free list, one that does not is destroyed.
            // SAFETY: signalled: the fence and the pool's command buffer are no longer in use.
            let reset = unsafe { d.reset_fences(&[s.fence]) };
            match (reset, self.inner.fences.lock()) {
                (Ok(()), Ok(mut f)) => f.push(s.fence),
                // SAFETY: as above, and the fence is in no list.
                _ => unsafe { d.destroy_fence(s.fence, None) },
            }
            self.inner.give_back(s.pool, s.cmd);
        }
        Ok(())
    }

    /// Wait (at most [`WAIT_LIMIT`]) for every submission and free them.
    ///
    /// # Errors
    /// [`Error::Timeout`], [`Error::DeviceLost`].
    pub fn wait(&self) -> Result<()> {
        {
            // Hold the list while waiting so no other thread retires (destroys) these fences.
            let f = self.inner.in_flight.lock().map_err(|_| Error::DeviceLost {
                what: "a poisoned submission list".into(),
            })?;
            let fences: Vec<vk::Fence> = f.iter().map(|s| s.fence).collect();
            if !fences.is_empty() {
                self.wait_fences(&fences)?;
            }
        }
        self.retire()
    }
}
