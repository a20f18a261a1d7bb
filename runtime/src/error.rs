//! The one error enum of `mien-runtime`.
//!
//! Every variant names what was wrong and where (the file, the instance, the frame and its media
//! time), so a caller can act on it and the CLI can print it as it is. Errors of the layers below
//! (`mien-core`'s readers and rules, the GPU backends' device errors) come through unchanged with
//! [`Error::Context`] saying what the runtime was doing.

/// A failure of the runtime. Its `Debug` form is [`Error::chain_text`] (what `fn main() ->
/// Result<()>` prints): the failure with every cause, not the nested variants.
#[derive(thiserror::Error)]
pub enum Error {
    /// A reader, rule or backend of `mien-core` refused (file, field and index in the inner error).
    #[error(transparent)]
    Core(#[from] mien_core::Error),

    /// The wgpu backend could not open or use its device.
    #[cfg(feature = "wgpu")]
    #[error(transparent)]
    Wgpu(#[from] mien_wgpu::Error),

    /// The Vulkan backend could not open or use its device.
    #[cfg(feature = "vulkan")]
    #[error(transparent)]
    Vulkan(#[from] mien_vulkan::Error),

    /// A backend this build does not contain (the `wgpu` / `vulkan` features of `mien` or
    /// `mien-runtime`).
    #[error(
        "backend {backend}: this build of mien has no {backend} backend (build with the `{feature}` feature)"
    )]
    NotBuilt {
        /// `wgpu` or `vulkan`.
        backend: &'static str,
        /// The cargo feature that adds it.
        feature: &'static str,
    },

    /// An input the runtime refuses: a file of a kind it does not read, a driver that binds to
    /// nothing, an argument out of its documented range.
    #[error("{what}: {reason}")]
    Invalid {
        /// The file, argument or item at fault (`facecap.glb`, `instance 3`, `sigma`).
        what: String,
        /// Why, with the value found and what was expected.
        reason: String,
    },

    /// A posed frame broke the rest pose's rule (finite, within ±10⁶ m): the character file, the
    /// frame, its media time and, where one is to blame, the node.
    #[error("{file}: frame {frame} (media time {time} s): {reason}", time = crate::text::secs(*time_s))]
    Posed {
        /// The character's source file.
        file: String,
        /// The frame index counted by [`crate::Runtime::update`] from 0.
        frame: u64,
        /// The frame's media time, seconds.
        time_s: f64,
        /// What went wrong and where.
        reason: String,
    },

    /// The caller asked the work to stop (a scenario's stop callback said so); nothing was
    /// written.
    #[error("stopped: {what}")]
    Stopped {
        /// What was stopped (`scenario walk.scenario.json at step /steps/4`).
        what: String,
    },

    /// A file could not be read or written (the path, and the system's reason as the source).
    #[error("{path}: {what}")]
    Io {
        /// The file or folder.
        path: String,
        /// What was being done (`cannot write`).
        what: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },

    /// The Vulkan validation layer reported messages (only when validation was asked for).
    #[error("the Vulkan validation layer reported:\n{}", messages.join("\n"))]
    Validation {
        /// The messages, in order.
        messages: Vec<String>,
    },

    /// A failure with what the runtime was doing when it happened. Its text is `what` alone, as
    /// with `anyhow`'s context: the failure is its [`std::error::Error::source`] (print the chain,
    /// or use [`Error::chain_text`]).
    #[error("{what}")]
    Context {
        /// What the runtime was doing (`cannot load character facecap.glb`).
        what: String,
        /// The failure.
        #[source]
        source: Box<Error>,
    },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.chain_text())
    }
}

/// The runtime's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error and its causes on one line, `: `-separated, a cause whose text an earlier one
    /// already contains left out.
    pub fn chain_text(&self) -> String {
        let mut seen: Vec<String> = vec![self.to_string()];
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            let text = c.to_string();
            if !seen.iter().any(|s| s.contains(&text)) {
                seen.push(text);
            }
            cause = c.source();
        }
        seen.join(": ")
    }

    /// [`Error::Invalid`] from anything printable.
    pub fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// Adds what the runtime was doing to a failure ([`Error::Context`]).
pub trait Context<T> {
    /// Wrap the error with `what`.
    ///
    /// # Errors
    /// The wrapped error.
    fn context(self, what: impl Into<String>) -> Result<T>;
    /// Wrap the error with `what()`, computed only on failure.
    ///
    /// # Errors
    /// The wrapped error.
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error::Context {
            what: what.into(),
            source: Box::new(e.into()),
        })
    }
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::Context {
            what: what(),
            source: Box::new(e.into()),
        })
    }
}
