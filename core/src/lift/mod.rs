//! Lifts: posed vertices → gaussians in a splat sink's slot range.

pub mod bind;
pub mod bound;
pub mod color;
pub mod debug;
pub mod parts;
pub mod surface;
pub mod texel;

pub use bind::{BindOptions, BindReport, FarGaussians, JointAnchors, bind_splats};
pub use bound::{
    BoundGaussian, BoundSetup, PackedBound, TriangleFrame, pose_bound, triangle_frame,
};
pub use color::{ColorReport, SurfaceColors};
pub use debug::{CLEARED_SPLAT, DebugLiftParams, DebugShading, LiftedSplat, lift_vertex};
pub use surface::{
    BoundLift, BoundReport, SurfaceOptions, face_triangles, surface_lift, surface_lift_weighted,
};
pub use texel::{TexelOptions, texel_lift};

use crate::error::Result;
use crate::rig::backend::RigBackend;
use crate::sink::{SlotRange, SplatSink};

/// The lift seam: reads a rig backend's posed vertices, writes its slot range of a sink.
pub trait Lift<R: RigBackend, S: SplatSink> {
    /// The slots this lift owns.
    fn range(&self) -> SlotRange;
    /// Record (GPU) or run (CPU) the lift after the rig's pass in the same encoder.
    ///
    /// # Errors
    /// Backend failures (device lost, out of memory).
    fn encode(&mut self, encoder: &mut R::Encoder, rig: &R, sink: &mut S) -> Result<()>;
}
