//! `mien-core`: the data model, file formats, expression spaces, animation signals and the CPU
//! reference math of mien, plus the backend seams ([`rig::RigBackend`], [`lift::Lift`],
//! [`sink::SplatSink`]). No GPU crate is a dependency (STYLE 1).
//!
//! Units everywhere: positions in metres, angles in radians, time in seconds (f64) on the media
//! clock, weights unitless. Right-handed, +Y up, the character looks toward +Z (glTF).

pub mod anim;
pub mod cloth;
pub mod error;
pub mod face;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod gnm;
pub mod hair;
pub mod io;
pub mod lift;
pub mod preview;
pub mod rig;
pub mod sample;
pub mod sink;
pub mod speech;
#[cfg(feature = "testing")]
pub mod testing;
pub mod texture;
pub mod vrm;

pub use error::{Error, Result};
