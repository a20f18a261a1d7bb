//! The command buffer a frame is recorded into: mien's own (from `VulkanContext::begin`) or an
//! engine's, plus the resources its commands use.

use std::any::Any;
use std::sync::Arc;

use ash::vk;

use crate::buffer::Buffer;
use crate::device::ContextInner;
use crate::timing::FrameQueries;

/// A command buffer in the recording state and the resources recorded commands use. Submitting it
/// through [`crate::VulkanContext::submit`] keeps those resources alive until its fence signals; an
/// engine submitting it itself takes them with [`VulkanEncoder::take_resources`].
///
/// An encoder from `begin` that is dropped without being submitted gives its command pool back.
pub struct VulkanEncoder {
    cmd: vk::CommandBuffer,
    keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The command pool mien allocated `cmd` from and the context it belongs to (`None` for an
    /// engine's command buffer, or once submitted).
    pool: Option<(vk::CommandPool, Arc<ContextInner>)>,
    /// This frame's timestamp queries (mien's encoders on a device with timestamps, from the
    /// first pass on).
    pub(crate) queries: Option<FrameQueries>,
}

impl Drop for VulkanEncoder {
    fn drop(&mut self) {
        if let Some((pool, ctx)) = self.pool.take() {
            // Never submitted: nothing of the pool is pending.
            ctx.give_back(pool, self.cmd);
            if let (Some(q), Some(t)) = (self.queries.take(), ctx.timestamps.as_ref()) {
                t.give_back(q.pool);
            }
        }
    }
}

impl std::fmt::Debug for VulkanEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanEncoder")
            .field("cmd", &self.cmd)
            .field("kept", &self.keep.len())
            .finish()
    }
}

impl VulkanEncoder {
    /// Wrap a command buffer.
    ///
    /// # Safety
    /// `cmd` is in the recording state, belongs to the context's device and a pool of a queue
    /// family with compute (`pool`, owned by this encoder, when mien allocated it), and is submitted
    /// only after mien has finished recording into it.
    pub(crate) unsafe fn new(
        cmd: vk::CommandBuffer,
        pool: Option<(vk::CommandPool, Arc<ContextInner>)>,
    ) -> Self {
        VulkanEncoder {
            cmd,
            keep: Vec::new(),
            pool,
            queries: None,
        }
    }

    /// Record mien's passes into an engine's command buffer.
    ///
    /// # Safety
    /// `cmd` is in the recording state, outside a render pass, allocated on the context's device from
    /// a pool whose queue family supports compute; the engine submits it and keeps the resources
    /// [`VulkanEncoder::take_resources`] returns (or mien's backend, lift and sink) alive until that
    /// submission completes.
    pub unsafe fn from_raw(cmd: vk::CommandBuffer) -> Self {
        // SAFETY: forwarded contract.
        unsafe { Self::new(cmd, None) }
    }

    /// The command buffer.
    pub fn raw(&self) -> vk::CommandBuffer {
        self.cmd
    }

    /// Whether mien allocated the command buffer.
    pub fn is_mien_owned(&self) -> bool {
        self.pool.is_some()
    }

    /// The context whose pool `cmd` came from (`None` for an engine's command buffer).
    pub(crate) fn owner(&self) -> Option<&Arc<ContextInner>> {
        self.pool.as_ref().map(|(_, c)| c)
    }

    /// Take the pool for a submission (the encoder no longer gives it back when dropped).
    pub(crate) fn take_pool(&mut self) -> Option<(vk::CommandPool, Arc<ContextInner>)> {
        self.pool.take()
    }

    pub(crate) fn keep(&mut self, b: &Buffer) {
        self.keep.push(b.keep_alive());
    }

    pub(crate) fn keep_any(&mut self, a: Arc<dyn Any + Send + Sync>) {
        self.keep.push(a);
    }

    /// The resources recorded commands use; keep them until the submission completes.
    pub fn take_resources(&mut self) -> Vec<Arc<dyn Any + Send + Sync>> {
        std::mem::take(&mut self.keep)
    }
}
