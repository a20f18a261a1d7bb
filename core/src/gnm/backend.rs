//! The linear-head backend seam: upload `.aosrig` packs once, then per frame set each head's
//! head_ext vector and joint world matrices and encode one pass over every uploaded head.
//!
//! A separate trait from [`crate::rig::RigBackend`] because the per-frame inputs differ (a head_ext
//! vector and joint worlds instead of morph weights and a palette) and so does the upload (a pack,
//! not a flattened glTF rig); the shape — upload, set, encode, read on request, bytes — is the same.
//!
//! Source: DESIGN.md "Traits"; seed 000 `GnmRigBackend` (`init` from a pack, `setControls` with the
//! head_ext vector, `setJointWorlds`, `encode` records the per-vertex pass with no submit and no
//! readback, `bytes()` for the memory report).

use glam::Mat4;

use super::pack::GnmPack;
use crate::error::Result;
use crate::rig::PosedVertices;

/// A head uploaded to a [`GnmBackend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GnmHandle(pub u32);

/// A linear-head backend (CPU, wgpu, Vulkan): the same math as [`super::forward::pose`] — neutral
/// + Σₑ cₑ·sₑ·Bₑ, the eye rotations, the neck seam, then LBS with `world_j · rest_j⁻¹ · bind`.
pub trait GnmBackend {
    /// What a frame is recorded into (as [`crate::rig::RigBackend::Encoder`]).
    type Encoder;

    /// Upload a parsed pack (already validated by [`GnmPack::parse`]); its buffers live as long as
    /// the backend. Until the first [`GnmBackend::set_head_ext`] the head poses at rest: every
    /// coefficient and gaze angle 0, joints at the pack's rest world matrices.
    ///
    /// # Errors
    /// A pack over the device's limits (a GPU backend splits the basis by vertex ranges, so only a
    /// single vertex's data, the coefficient array or the joint palette over one binding is refused),
    /// out of memory, device loss.
    fn upload_gnm(&mut self, pack: &GnmPack) -> Result<GnmHandle>;

    /// Vertices V the head produces per pose (0 for an unknown handle).
    fn vertex_count(&self, head: GnmHandle) -> u32;

    /// Set the next frame of `head`: `head_ext` `(E+4,)` — E coefficients (unitless), then
    /// `[pitch_L, yaw_L, pitch_R, yaw_R]` radians — and `joint_world` `(J,)` column-major world
    /// matrices in the pack's joint order, metres. Pure CPU work plus staging.
    ///
    /// # Errors
    /// An unknown handle; [`crate::Error::Mismatch`] for a wrong length; [`crate::Error::Invalid`]
    /// for a non-finite number ([`super::frame::check_inputs`]). A refused frame leaves the
    /// previous one in place.
    fn set_head_ext(
        &mut self,
        head: GnmHandle,
        head_ext: &[f32],
        joint_world: &[Mat4],
    ) -> Result<()>;

    /// Record (or run) the pass of every uploaded head.
    ///
    /// # Errors
    /// Backend failures (device loss).
    fn encode(&mut self, encoder: &mut Self::Encoder) -> Result<()>;

    /// Read the last posed vertices of `head`: world positions `(V,3)` metres (body bind space, as
    /// [`super::forward::pose`]) and normals `(V,3)`, which are all zero — a pack carries no normals
    /// and none are recomputed (the debug lift's normal shading falls back to the centroid
    /// direction for a zero normal). Tests and export only; never on the per-frame path.
    ///
    /// # Errors
    /// An unknown handle, backend failures.
    fn read_vertices(&self, head: GnmHandle) -> Result<PosedVertices>;

    /// Bytes this backend holds for all heads, for the memory report.
    fn bytes(&self) -> u64;
}
