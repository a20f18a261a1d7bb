//! Frames of the safe layer: a command pool and its one command buffer per encoder (reused after
//! the pool's reset), submissions with reused fences, the resources each keeps alive until its
//! fence signals, and the bounded wait ([`crate::device::WAIT_LIMIT`]).

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ash::vk;

use crate::device::{ContextInner, VulkanContext, WAIT_LIMIT};
use crate::encoder::VulkanEncoder;
use crate::error::{Error, Result, VkResultExt};

/// A submission in flight: its fence, the pool and command buffer to give back when it signals,
/// and what its commands use.
pub(crate) struct InFlight {
    pub(crate) fence: vk::Fence,
    pub(crate) pool: vk::CommandPool,
    pub(crate) cmd: vk::CommandBuffer,
    pub(crate) _keep: Vec<Arc<dyn Any + Send + Sync>>,
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
        // SAFETY: cmd is recording, on this device, from a compute family pool owned by the encoder.
        Ok(unsafe { VulkanEncoder::new(cmd, Some((pool, self.inner.clone()))) })
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
        let reused = self.inner.fences.lock().ok().and_then(|mut f| f.pop());
        let fence = match reused {
            Some(f) => f,
            // SAFETY: d live.
            None => unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
                .vk("vkCreateFence", "a frame")?,
        };
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let queue = self.inner.queue.lock().map_err(|_| Error::DeviceLost {
            what: "a poisoned queue".into(),
        })?;
        // SAFETY: queue locked; cmd ended; fence unsignalled (new, or reset when retired).
        if let Err(r) = unsafe { d.queue_submit(*queue, &submit, fence) } {
            // SAFETY: the fence was never submitted.
            unsafe { d.destroy_fence(fence, None) };
            self.inner.give_back(pool, cmd);
            return Err(self.mark(crate::error::vk_error("vkQueueSubmit", "a frame", r)));
        }
        drop(queue);
        let keep = encoder.take_resources();
        if let Ok(mut f) = self.inner.in_flight.lock() {
            f.push(InFlight {
                fence,
                pool,
                cmd,
                _keep: keep,
            });
        }
        Ok(())
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
        for s in done {
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
                // SAFETY: the fences are live while the lock is held.
                match unsafe {
                    self.device()
                        .wait_for_fences(&fences, true, WAIT_LIMIT.as_nanos() as u64)
                } {
                    Ok(()) => {}
                    Err(vk::Result::TIMEOUT) => {
                        return Err(Error::Timeout {
                            what: "a frame".into(),
                            seconds: WAIT_LIMIT.as_secs(),
                        });
                    }
                    Err(r) => {
                        return Err(self.mark(crate::error::vk_error(
                            "vkWaitForFences",
                            "a frame",
                            r,
                        )));
                    }
                }
            }
        }
        self.retire()
    }
}
