//! File formats: readers (glTF, Live Link Face CSV, 3DGS PLY) and writers (3DGS PLY, PNG), all
//! writes atomic, all reads bounded ([`read`]: regular files only, under a documented size cap).

pub mod atomic;
pub mod gltf;
pub mod livelink_csv;
pub mod ply;
pub mod read;
pub mod speech;
