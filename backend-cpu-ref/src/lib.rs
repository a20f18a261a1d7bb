//! `mien-cpu`: mien's backend seams implemented on the CPU with the core reference math.
//!
//! It is both the reference every GPU backend is compared against and the test double (STYLE 1):
//! [`CpuRigBackend`] poses a batch of rigs (morph CSR blend → LBS, [`RigData::pose_vertex`]) in one
//! rayon-parallel pass, [`CpuSplatSink`] holds the four sink arrays on the host, and
//! [`CpuDebugLift`] writes one isotropic gaussian per posed vertex. [`CpuGnmBackend`] poses linear
//! heads (`.aosrig` packs) with the reference [`mien_core::gnm::forward::pose`].
//!
//! "Encoding" on the CPU runs the work immediately; [`CpuEncoder`] collects per-stage wall times
//! for the report.
//!
//! [`RigData::pose_vertex`]: mien_core::rig::RigData::pose_vertex

mod bound;
#[cfg(feature = "conformance")]
pub mod conformance;
mod gnm;
mod lift;
mod rig;
mod rig_tiles;
mod sink;

pub use bound::CpuBoundLift;
pub use gnm::CpuGnmBackend;
pub use lift::CpuDebugLift;
pub use rig::CpuRigBackend;
pub use sink::CpuSplatSink;

use std::time::Duration;

/// The CPU backend's "command encoder": work runs when encoded; this records how long each stage
/// took, summed over the encodes since it was created.
#[derive(Clone, Debug, Default)]
pub struct CpuEncoder {
    /// Time spent in rig passes (morph + skin, or a linear head's pose).
    pub rig: Duration,
    /// Time spent in lift passes.
    pub lift: Duration,
}

/// How a CPU backend rounds its blends (`CpuGnmBackend::set_precision`,
/// `CpuRigBackend::set_precision`; in the runtime `Runtime::set_precision`, and `mien bench`'s
/// `cpu-fast` rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The reference's arithmetic bit for bit: every term multiplied, rounded, then added, in the
    /// reference's order ([`mien_core::gnm::forward::pose`],
    /// [`RigData::pose_vertex`](mien_core::rig::RigData::pose_vertex)). What every
    /// GPU backend is compared against.
    #[default]
    Exact,
    /// Fused multiply-adds where the CPU has them (one rounding per term instead of two), zero
    /// terms of a head included where that keeps the loop branch-free: within the conformance
    /// bound of the reference that the GPU backends are held to (`conformance` module docs:
    /// Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1 — a sum of n
    /// terms, each rounded once or fused, in any order, is within γₙ·Σ|terms| of the exact sum).
    Fast,
}

/// Vertices per rayon task: large enough to amortise scheduling, small enough to balance a
/// 2.7k-vertex face over a few cores.
pub(crate) const CHUNK: usize = 512;
