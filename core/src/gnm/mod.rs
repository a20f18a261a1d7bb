//! The linear head model (GNM) of seed 000: a neutral, an fp16 expression basis with per-coefficient
//! scales, eye rotation from gaze angles, a neck seam, and skinning — its `.aosrig` container, its
//! head_ext control layout, its CPU reference, the baker that makes packs from real heads, the
//! per-frame kernel inputs ([`frame`]) and the [`GnmBackend`] seam the CPU, wgpu and Vulkan
//! backends implement.

pub mod arkit;
pub mod backend;
pub mod bake;
mod check;
pub mod controls;
pub mod export;
pub mod forward;
pub mod frame;
pub mod layout;
pub mod pack;
pub mod tiled;

pub use backend::{GnmBackend, GnmHandle};
pub use frame::GnmFrame;
pub use layout::{GAZE_DIM, HeadExtLayout};
pub use pack::{GnmPack, PackHeader, PackJoint};
