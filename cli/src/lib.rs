//! `mien`: the facade crate. Re-exports the core data model and math ([`core`]) and the backends
//! ([`cpu`]; the GPU backends join behind the `wgpu` and `vulkan` features in their issues), and
//! ships the `mien` command-line tool.

pub use mien_core as core;
pub use mien_cpu as cpu;
