//! Mien's backend traits on raw Vulkan via ash (filled by issue 4).
//!
//! Empty until its issue lands; see `README.md` in this folder.
