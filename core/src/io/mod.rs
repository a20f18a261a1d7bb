//! File formats: readers (glTF, Live Link Face CSV) and writers (3DGS PLY, PNG), all writes atomic.

pub mod atomic;
pub mod gltf;
pub mod livelink_csv;
pub mod ply;
pub mod speech;
