//! The one error enum of `mien-core`.
//!
//! Every variant carries structured fields (file, field, index, limit, found) so a caller can act on
//! the failure and the CLI can print a message that names what is wrong and where. Validation
//! collects all problems before failing ([`Error::Many`]).

use std::path::PathBuf;

/// Everything that can go wrong in `mien-core`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed at the operating-system level.
    #[error("{path}: {source}")]
    Io {
        /// The file being read or written.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },

    /// A file's contents are malformed or violate its format's rules.
    ///
    /// `field` is a JSON-pointer-like path inside the file (`accessors[12].sparse.indices`) or a
    /// column/record name; `index` is the element, row or byte offset when one applies.
    #[error("{file}: {field}{}: {reason}", index.map(|i| format!(" [{i}]")).unwrap_or_default())]
    Format {
        /// The file (path or a short label such as `<built-in>`).
        file: String,
        /// Where in the file.
        field: String,
        /// The element / row / byte offset, when one applies.
        index: Option<usize>,
        /// What is wrong.
        reason: String,
    },

    /// A count exceeds a documented limit.
    #[error("{what}: {found} exceeds the limit of {limit}")]
    Limit {
        /// What was counted.
        what: String,
        /// The documented limit.
        limit: u64,
        /// What the input asked for.
        found: u64,
    },

    /// Two things that must agree do not (vertex counts, weight counts, control counts).
    #[error("{what}: expected {expected}, found {found}")]
    Mismatch {
        /// What was compared.
        what: String,
        /// The value that was required.
        expected: u64,
        /// The value that was given.
        found: u64,
    },

    /// A splat-slot operation was refused (exhaustion, overlap, double free, out of range).
    #[error("slot allocator: {reason} (offset {offset}, count {count}, capacity {capacity})")]
    Slots {
        /// What went wrong.
        reason: &'static str,
        /// First slot of the range involved.
        offset: u32,
        /// Slot count of the range involved.
        count: u32,
        /// The allocator's capacity.
        capacity: u32,
    },

    /// An argument is out of its documented domain (a NaN sigma, a zero frame rate).
    #[error("{what}: {reason}")]
    Invalid {
        /// The argument.
        what: String,
        /// Why it was refused.
        reason: String,
    },

    /// A GPU backend failed: no adapter, a rig over the device's limits, device lost, out of
    /// memory. The source is the backend's own typed error.
    #[error("{backend} backend: {source}")]
    Backend {
        /// `wgpu` or `vulkan`.
        backend: &'static str,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },

    /// Several problems found by one validation pass, in the order they were found.
    ///
    /// Displayed as a list, one problem per item: identical messages are shown once with `(×N)`,
    /// and a nested list (a `Many` inside a `Many`) is indented under its item.
    #[error("{}", many_text(.0))]
    Many(Vec<Error>),
}

/// The text of [`Error::Many`]: `N problems:` (N distinct messages), then one `  - ` item per
/// distinct message in first-seen order, suffixed `(×k)` when it was reported k > 1 times; the
/// continuation lines of a multi-line item (a nested list) are indented four more spaces so that
/// they sit under the item's text.
fn many_text(problems: &[Error]) -> String {
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for e in problems {
        let text = e.to_string();
        match index.get(&text) {
            Some(&k) => order[k].1 += 1,
            None => {
                index.insert(text.clone(), order.len());
                order.push((text, 1));
            }
        }
    }
    let n = order.len();
    let mut out = format!("{n} problem{}:", if n == 1 { "" } else { "s" });
    for (text, times) in &order {
        let mut lines = text.lines();
        out.push_str("\n  - ");
        out.push_str(lines.next().unwrap_or(""));
        if *times > 1 {
            out.push_str(&format!(" (×{times})"));
        }
        for line in lines {
            out.push_str("\n    ");
            out.push_str(line);
        }
    }
    out
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A [`Error::Format`] without an index.
    pub fn format(
        file: impl Into<String>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Error::Format {
            file: file.into(),
            field: field.into(),
            index: None,
            reason: reason.into(),
        }
    }

    /// A [`Error::Format`] at element `index`.
    pub fn format_at(
        file: impl Into<String>,
        field: impl Into<String>,
        index: usize,
        reason: impl Into<String>,
    ) -> Self {
        Error::Format {
            file: file.into(),
            field: field.into(),
            index: Some(index),
            reason: reason.into(),
        }
    }

    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Fold a list of problems: `Ok` when empty, the single error when there is one or when all have
    /// the same message (one problem reported from several places, such as a compressed buffer
    /// view that every accessor on it failed to decode), [`Error::Many`] otherwise.
    pub fn collect(mut problems: Vec<Error>) -> Result<()> {
        match problems.len() {
            0 => Ok(()),
            1 => Err(problems.remove(0)),
            _ => {
                let first = problems[0].to_string();
                if problems[1..].iter().all(|e| e.to_string() == first) {
                    Err(problems.remove(0))
                } else {
                    Err(Error::Many(problems))
                }
            }
        }
    }
}

/// A device limit's value in words: bytes (with MiB or GiB) when the limit's name says it is a size
/// or range (`max_storage_buffer_binding_size`, `maxStorageBufferRange`, `max_buffer_size`),
/// else the plain count (workgroups, instances). For the backends' over-limit errors.
pub fn limit_amount(limit_name: &str, value: u64) -> String {
    let lower = limit_name.to_ascii_lowercase();
    if !(lower.contains("size") || lower.contains("range") || lower.contains("bytes")) {
        return value.to_string();
    }
    let v = value as f64;
    if value >= 1 << 30 {
        format!("{value} bytes ({:.1} GiB)", v / f64::from(1u32 << 30))
    } else if value >= 1 << 20 {
        format!("{value} bytes ({:.1} MiB)", v / f64::from(1u32 << 20))
    } else {
        format!("{value} bytes")
    }
}

/// `x` in short form for messages: plain for everyday magnitudes, scientific beyond
/// (`1e308`, not 309 digits).
pub(crate) fn short(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() || a == 0.0 || (1e-4..1e7).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}
