//! Mien's backend traits on wgpu compute (filled by issue 3).
//!
//! Empty until its issue lands; see `README.md` in this folder.
