//! The decoder's typed errors: each names the file (or the environment variable), the tensor and
//! the index where there is one.

use std::path::PathBuf;

/// The environment variable naming the ONNX Runtime shared library ([`crate::OrtRuntime::load`]).
pub const ORT_DYLIB_PATH: &str = "ORT_DYLIB_PATH";

/// What can go wrong loading ONNX Runtime, loading a decoder, or running one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `ORT_DYLIB_PATH` is not set (or not valid UTF-8).
    #[error(
        "{var} is not set: point it at ONNX Runtime's shared library, version 1.{need}.0 or newer (`pip install onnxruntime`, then `{var}=$(python3 -c 'import onnxruntime, pathlib; print(next((pathlib.Path(onnxruntime.__file__).parent / \"capi\").glob(\"libonnxruntime.so*\")))')`)"
    )]
    OrtUnset {
        /// The variable, [`ORT_DYLIB_PATH`].
        var: &'static str,
        /// The oldest minor version accepted (1.x).
        need: u32,
    },
    /// The path the variable names is not a file.
    #[error("{var}={path}: no such file (it must name ONNX Runtime's shared library, libonnxruntime.so, version 1.{need}.0 or newer)", path = .path.display())]
    OrtMissing {
        /// The variable.
        var: &'static str,
        /// What it names.
        path: PathBuf,
        /// The oldest minor version accepted.
        need: u32,
    },
    /// The library could not be loaded or is not ONNX Runtime.
    #[error("{var}={path}: cannot load ONNX Runtime from it: {reason}", path = .path.display())]
    OrtLoad {
        /// The variable (or `"path"` when given in code).
        var: &'static str,
        /// The library.
        path: PathBuf,
        /// The loader's reason.
        reason: String,
    },
    /// The library is ONNX Runtime, but older than mien needs.
    #[error("{var}={path}: ONNX Runtime {found} is too old; mien needs 1.{need}.0 or newer (pip install -U onnxruntime)", path = .path.display())]
    OrtVersion {
        /// The variable.
        var: &'static str,
        /// The library.
        path: PathBuf,
        /// The version it reports.
        found: String,
        /// The oldest minor version accepted.
        need: u32,
    },
    /// A second library asked for after one is loaded (a process holds one ONNX Runtime).
    #[error("ONNX Runtime is already loaded from {loaded}; {asked} cannot be loaded beside it in one process", loaded = .loaded.display(), asked = .asked.display())]
    OrtTwice {
        /// The library in use.
        loaded: PathBuf,
        /// The one asked for.
        asked: PathBuf,
    },
    /// ONNX Runtime refused something (the environment, a session option).
    #[error("ONNX Runtime: {0}")]
    Ort(String),
    /// A model file ONNX Runtime cannot read.
    #[error("{file}: not a model ONNX Runtime can load: {reason}")]
    Model {
        /// The model file.
        file: String,
        /// ONNX Runtime's reason.
        reason: String,
    },
    /// A model whose inputs or outputs do not fit the decoder contract: every problem named.
    #[error("{file}: does not fit the decoder contract (docs/decoders.md): {}", .problems.join("; "))]
    Contract {
        /// The model file.
        file: String,
        /// Each problem, naming the input or output.
        problems: Vec<String>,
    },
    /// Inputs handed to [`crate::Decoder::decode`] that do not fit the model.
    #[error("{file}: input `{input}`: {reason}")]
    Input {
        /// The model file.
        file: String,
        /// The input's name.
        input: String,
        /// What is wrong.
        reason: String,
    },
    /// An output that is not what the contract promises (its shape, a non-finite value).
    #[error("{file}: output `{output}`{}: {reason}", .index.map(|i| format!(" row {i}")).unwrap_or_default())]
    Output {
        /// The model file.
        file: String,
        /// The output's name.
        output: String,
        /// The first row at fault.
        index: Option<usize>,
        /// What is wrong.
        reason: String,
    },
    /// A run ONNX Runtime failed.
    #[error("{file}: the run failed: {reason}")]
    Run {
        /// The model file.
        file: String,
        /// ONNX Runtime's reason.
        reason: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
