//! Learned appearance decoders (seed 000's decoders; the per-gaussian MLP decoders of
//! Gaussian-avatar research — e.g. GaussianAvatars, Qian et al. 2024; 3DGS-Avatar, Qian et al.
//! 2024 — that map per-gaussian features, the rig's controls and the view direction to colour,
//! opacity and geometry): ONNX models run through ONNX Runtime.
//!
//! - [`Ort`]: ONNX Runtime loaded at run time from the library `ORT_DYLIB_PATH` names (the
//!   `onnxruntime` Python wheel ships one); a missing or too old library is an [`Error`] naming the
//!   variable and the version, never an abort.
//! - [`Contract`]: what a decoder may take and give (`docs/decoders.md`), checked against the
//!   model's declared inputs and outputs at load with every problem named.
//! - [`Decoder`]: a checked model in a session; [`Decoder::decode`] runs it.
//!
//! ```no_run
//! use mien_decoder::{DecodeInputs, Decoded, Decoder, DecoderOptions, Ort};
//! # fn main() -> Result<(), mien_decoder::Error> {
//! let ort = Ort::load()?; // ORT_DYLIB_PATH
//! let d = Decoder::load(&ort, "tiny_view_decoder.onnx".as_ref(), &DecoderOptions::default())?;
//! let features = vec![0.0f32; 2 * 16];
//! let view = [[0.0, 0.0, -1.0]; 2];
//! let mut out = Decoded::default();
//! d.decode(
//!     &DecodeInputs { n: 2, features: Some(&features), view_dir: Some(&view), controls: None },
//!     &mut out,
//! )?;
//! assert_eq!(out.rgb.len(), 2);
//! # Ok(()) }
//! ```

mod contract;
mod error;
mod ort_env;
mod session;

pub use contract::{Contract, Dim, Elem, GeometryOutputs, INPUTS, OUTPUTS, Port};
pub use error::{Error, ORT_DYLIB_PATH, Result};
pub use ort_env::{MIN_MINOR, Ort, library_path, pip_library};
pub use session::{DecodeInputs, Decoded, Decoder, DecoderOptions, MAX_THREADS, Provider};
