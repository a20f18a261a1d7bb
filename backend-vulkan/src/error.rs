//! The one error enum of `mien-vulkan`.

use ash::vk;

/// What can go wrong on the Vulkan backend. Each message says what a user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Vulkan loader (`libvulkan.so.1`) could not be loaded.
    #[error(
        "no Vulkan loader: {reason} (install the Vulkan loader, e.g. `apt-get install libvulkan1`, and a driver such as mesa-vulkan-drivers)"
    )]
    NoLoader {
        /// The loader's error.
        reason: String,
    },
    /// No physical device can run mien's kernels.
    #[error("no suitable Vulkan device: {reason}")]
    NoDevice {
        /// What was found and why it was rejected.
        reason: String,
    },
    /// The kernels need a device feature the device lacks.
    #[error("the device `{device}` lacks {feature}, which the kernels need")]
    MissingFeature {
        /// Device name.
        device: String,
        /// The feature (`shaderFloat16`, `storageBuffer16BitAccess`).
        feature: &'static str,
    },
    /// A kernel cannot run on this device (an optional capability it needs is missing).
    #[error("{what} cannot run here: {reason}")]
    Unsupported {
        /// The kernel.
        what: String,
        /// What is missing.
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
        /// The Vulkan limit's name.
        limit_name: &'static str,
        /// The device's value.
        limit: u64,
        /// What was needed.
        needed: u64,
    },
    /// The device ran out of memory.
    #[error("out of {kind} memory while creating {what}")]
    OutOfMemory {
        /// `device` or `host`.
        kind: &'static str,
        /// What was being created.
        what: String,
    },
    /// The device was lost (driver reset, GPU removed); create a new context.
    #[error("the Vulkan device was lost during {what}")]
    DeviceLost {
        /// What was being done.
        what: String,
    },
    /// The GPU did not finish within the wait limit (a hang is reported, never waited on forever).
    #[error("the GPU did not finish {what} within {seconds} s")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The limit.
        seconds: u64,
    },
    /// A buffer or encoder of another context was handed to this one.
    #[error("{what} belongs to another Vulkan context (make it on the context that uses it)")]
    WrongContext {
        /// What was handed over.
        what: String,
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
    /// Per-frame data written into a buffer not made for it (not made by `frame_buffer`).
    #[error("{what}: the buffer is not a frame buffer (write per-frame data into one)")]
    NotHostVisible {
        /// What was being written.
        what: String,
    },
    /// A Vulkan call failed unexpectedly.
    #[error("{call} failed: {result}")]
    Vk {
        /// The Vulkan function.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
}

impl From<Error> for mien_core::Error {
    fn from(e: Error) -> Self {
        mien_core::Error::Backend {
            backend: "vulkan",
            source: Box::new(e),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Map a failed Vulkan call to a typed error: out-of-memory and device-lost codes get their own
/// variants, everything else names the call.
pub(crate) fn vk_error(call: &'static str, what: &str, result: vk::Result) -> Error {
    match result {
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => Error::OutOfMemory {
            kind: "device",
            what: what.into(),
        },
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => Error::OutOfMemory {
            kind: "host",
            what: what.into(),
        },
        vk::Result::ERROR_DEVICE_LOST => Error::DeviceLost { what: what.into() },
        _ => Error::Vk { call, result },
    }
}

/// `.map_err(vk_error(...))` as an extension.
pub(crate) trait VkResultExt<T> {
    fn vk(self, call: &'static str, what: &str) -> Result<T>;
}

impl<T> VkResultExt<T> for std::result::Result<T, vk::Result> {
    fn vk(self, call: &'static str, what: &str) -> Result<T> {
        self.map_err(|r| vk_error(call, what, r))
    }
}
