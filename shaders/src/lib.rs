//! Every WGSL kernel of mien, one file per stage (filled by issue 3).
//!
//! Empty until its issue lands; see `README.md` in this folder.
