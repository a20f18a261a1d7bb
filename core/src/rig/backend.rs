//! The rig-backend seam: upload flattened rigs once, then per frame set controls and encode.
//!
//! Source: DESIGN.md "Traits"; seed 000 `RigBackend` (`encode` records the per-vertex pass, no submit,
//! no readback; `bytes()` for the memory report; dispose idempotent — here `Drop`).

use super::rigdata::{ControlStats, RigControls, RigData};
use crate::error::Result;

/// A rig uploaded to a backend. A backend holds a batch of rigs and poses them all in one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RigHandle(pub u32);

/// Posed vertices read back from a backend.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PosedVertices {
    /// World positions `(V,3)`, metres.
    pub positions: Vec<[f32; 3]>,
    /// World unit normals `(V,3)`.
    pub normals: Vec<[f32; 3]>,
}

/// A rig backend (CPU, wgpu, Vulkan): the same math as [`RigData::pose_vertex`].
pub trait RigBackend {
    /// What a frame is recorded into: a wgpu command encoder, a Vulkan command buffer, or the CPU
    /// backend's immediate context.
    type Encoder;

    /// Validate and upload a rig; its buffers live as long as the backend.
    ///
    /// # Errors
    /// An invalid rig ([`RigData::validate`]) or one over the device's limits.
    fn upload(&mut self, rig: &RigData) -> Result<RigHandle>;

    /// Upload `rig` once for `instances` characters that share it (different controls, one pass):
    /// one handle per instance, in order. The provided method uploads the rig `instances` times
    /// (no sharing); backends that batch override it so the rig's arrays are held once and every
    /// instance is posed by the same dispatches.
    ///
    /// # Errors
    /// As [`RigBackend::upload`]; [`crate::Error::Invalid`] for 0 instances.
    fn upload_batch(&mut self, rig: &RigData, instances: u32) -> Result<Vec<RigHandle>> {
        if instances == 0 {
            return Err(crate::Error::Invalid {
                what: "rig batch".into(),
                reason: "0 instances".into(),
            });
        }
        (0..instances).map(|_| self.upload(rig)).collect()
    }

    /// Vertices the rig produces per pose.
    fn vertex_count(&self, rig: RigHandle) -> u32;

    /// Set the next frame's controls (pure CPU work: active limit, clamp, normal matrices, staging).
    ///
    /// # Errors
    /// [`crate::Error::Mismatch`] when the control arrays do not fit the rig.
    fn set_controls(&mut self, rig: RigHandle, controls: &RigControls) -> Result<ControlStats>;

    /// Record (or run) the per-vertex pass of every uploaded rig.
    ///
    /// # Errors
    /// Backend failures.
    fn encode(&mut self, encoder: &mut Self::Encoder) -> Result<()>;

    /// Read the last posed vertices of `rig` (tests, export; never on the per-frame path).
    ///
    /// # Errors
    /// Backend failures.
    fn read_vertices(&self, rig: RigHandle) -> Result<PosedVertices>;

    /// Bytes this backend holds for all rigs, for the memory report.
    fn bytes(&self) -> u64;
}
