//! The linear-head backend seam: upload `.aosrig` packs once (each as one head or as a batch of
//! instances sharing its basis), then per frame set each head's head_ext vector and joint world
//! matrices and encode one pass over every uploaded head.
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

    /// Upload a parsed pack (already validated by [`GnmPack::parse`]) as one head: the same as
    /// [`GnmBackend::upload_gnm_batch`] with one instance.
    ///
    /// # Errors
    /// As [`GnmBackend::upload_gnm_batch`].
    fn upload_gnm(&mut self, pack: &GnmPack) -> Result<GnmHandle> {
        self.upload_gnm_batch(pack, 1)?
            .into_iter()
            .next()
            .ok_or_else(|| crate::Error::Invalid {
                what: "head upload".into(),
                reason: "the backend returned no handle".into(),
            })
    }

    /// Upload a parsed pack once as `instances` heads that share its basis (N characters with one
    /// face model): each handle has its own head_ext, joint worlds and output, and one
    /// [`GnmBackend::encode`] poses all of them (on a GPU one dispatch per stage and basis chunk,
    /// the instances along the dispatch's z dimension). Handles of separate uploads never share
    /// anything. Until the first [`GnmBackend::set_head_ext`] every instance poses at rest: every
    /// coefficient and gaze angle 0, joints at the pack's rest world matrices.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for 0 instances; a pack over the device's limits (a GPU backend
    /// splits the basis by vertex ranges, so only a single vertex's data for every instance, the
    /// coefficient arrays or the joint palettes over one binding, or more instances than a
    /// dispatch dimension holds, are refused), out of memory, device loss.
    fn upload_gnm_batch(&mut self, pack: &GnmPack, instances: u32) -> Result<Vec<GnmHandle>>;

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

    /// Set the next frame of several heads: `heads[k]` gets `input(k)` = `(head_ext, joint_world)`
    /// as in [`GnmBackend::set_head_ext`]. The provided method sets them in order and stops at the
    /// first refusal (the heads before it keep their new frames). The GPU backends override it:
    /// when `heads` are all the instances of one batch upload in order they check every input
    /// first (a refusal changes nothing) and set the instances in parallel.
    ///
    /// # Errors
    /// As [`GnmBackend::set_head_ext`].
    fn set_head_ext_batch<'i>(
        &mut self,
        heads: &[GnmHandle],
        input: &(dyn Fn(usize) -> (&'i [f32], &'i [Mat4]) + Sync + 'i),
    ) -> Result<()> {
        set_head_ext_each(self, heads, input)
    }

    /// Record (or run) the pass of every uploaded head and instance.
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

/// [`GnmBackend::set_head_ext`] for each of `heads` in order with `input(k)`, stopping at the first
/// refusal: the provided [`GnmBackend::set_head_ext_batch`], and the GPU backends' path for handles
/// that are not one whole batch.
///
/// # Errors
/// The first refusal.
pub fn set_head_ext_each<'i, B: GnmBackend + ?Sized>(
    backend: &mut B,
    heads: &[GnmHandle],
    input: &(dyn Fn(usize) -> (&'i [f32], &'i [Mat4]) + Sync + 'i),
) -> Result<()> {
    for (k, h) in heads.iter().enumerate() {
        let (head_ext, joint_world) = input(k);
        backend.set_head_ext(*h, head_ext, joint_world)?;
    }
    Ok(())
}
