//! The command buffer a frame is recorded into: mien's own (from `VulkanContext::begin`) or an
//! engine's, plus the resources its commands use.

use std::any::Any;
use std::sync::Arc;

use ash::vk;

use crate::buffer::Buffer;

/// A command buffer in the recording state and the resources recorded commands use. Submitting it
/// through [`crate::VulkanContext::submit`] keeps those resources alive until its fence signals; an
/// engine submitting it itself takes them with [`VulkanEncoder::take_resources`].
pub struct VulkanEncoder {
    cmd: vk::CommandBuffer,
    keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The command pool mien allocated `cmd` from (`None` for an engine's command buffer).
    pool: Option<vk::CommandPool>,
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
    pub(crate) unsafe fn new(cmd: vk::CommandBuffer, pool: Option<vk::CommandPool>) -> Self {
        VulkanEncoder {
            cmd,
            keep: Vec::new(),
            pool,
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

    pub(crate) fn pool(&self) -> Option<vk::CommandPool> {
        self.pool
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
