//! The one error enum of `mien-wgpu`.

/// What can go wrong on the wgpu backend.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No adapter could be found (no GPU, no Vulkan driver, or only adapters the options exclude).
    #[error("no GPU adapter: {reason}")]
    NoAdapter {
        /// What was tried.
        reason: String,
    },
    /// The adapter refused to create a device.
    #[error("the adapter `{adapter}` refused a device: {reason}")]
    NoDevice {
        /// Adapter name.
        adapter: String,
        /// wgpu's message.
        reason: String,
    },
    /// A rig, sink or lift needs more than the device allows.
    #[error(
        "{what} needs {} but the device allows {} ({limit_name})",
        mien_core::error::limit_amount(limit_name, *needed),
        mien_core::error::limit_amount(limit_name, *limit)
    )]
    OverLimits {
        /// What was being created.
        what: String,
        /// The wgpu limit's name (`max_storage_buffer_binding_size`).
        limit_name: &'static str,
        /// The device's value.
        limit: u64,
        /// What was needed.
        needed: u64,
    },
    /// The device ran out of memory while creating `what`.
    #[error("out of GPU memory while creating {what}")]
    OutOfMemory {
        /// What was being created.
        what: String,
    },
    /// The device was lost (driver reset, GPU removed, or destroyed); create a new context.
    #[error("the GPU device was lost: {reason}")]
    DeviceLost {
        /// wgpu's reason.
        reason: String,
    },
    /// wgpu reported an error mien did not expect (a bug in mien; the message says where).
    #[error("unexpected wgpu error in {what}: {message}")]
    Internal {
        /// What was being done.
        what: String,
        /// wgpu's message.
        message: String,
    },
    /// Mapping a buffer for readback failed.
    #[error("reading back {what} failed: {reason}")]
    Readback {
        /// What was read.
        what: String,
        /// Why.
        reason: String,
    },
    /// A byte range outside its buffer.
    #[error("{what}: bytes {offset}..{offset}+{len} lie outside a buffer of {size} bytes")]
    Range {
        /// What was being done.
        what: String,
        /// First byte.
        offset: u64,
        /// Bytes.
        len: u64,
        /// The buffer's size, bytes.
        size: u64,
    },
    /// Per-frame data written into a buffer that copies cannot write (not made by
    /// `frame_buffer`).
    #[error("{what}: the buffer cannot be written (write per-frame data into a frame buffer)")]
    NotWritable {
        /// What was being written.
        what: String,
    },
    /// The device cannot run a kernel (a missing capability); the other kernels still work.
    #[error("this device cannot run {what}: {reason}")]
    Unsupported {
        /// The kernel.
        what: String,
        /// Why (the missing capability, or wgpu's message).
        reason: String,
    },
}

impl From<Error> for mien_core::Error {
    fn from(e: Error) -> Self {
        mien_core::Error::Backend {
            backend: "wgpu",
            source: Box::new(e),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
