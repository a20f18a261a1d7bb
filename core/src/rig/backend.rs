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
    /// World unit tangents xyz + handedness w `(V,4)` ([`RigData::pose_tangent`]), or empty when
    /// the rig carries no tangents (and for linear heads).
    pub tangents: Vec<[f32; 4]>,
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

    /// Set the next frame of several rigs: `rigs[k]` gets `controls[which(k)]` and its counts go to
    /// `stats[k]` (so a caller holding a ring of control sets allocates nothing per frame). The
    /// provided method calls [`RigBackend::set_controls`] for each in order and stops at the first
    /// refusal (the rigs before it keep their new controls). The GPU backends override it: when
    /// `rigs` are all the instances of one batch upload in order they check every entry first (a
    /// refusal changes nothing) and set the instances in parallel.
    ///
    /// # Errors
    /// As [`RigBackend::set_controls`]; [`crate::Error::Mismatch`] when `stats` is not as long as
    /// `rigs`; [`crate::Error::Invalid`] when some `which(k)` is not an index of `controls`.
    fn set_controls_batch(
        &mut self,
        rigs: &[RigHandle],
        controls: &[RigControls],
        which: &(dyn Fn(usize) -> usize + Sync),
        stats: &mut [ControlStats],
    ) -> Result<()> {
        check_batch_args(rigs.len(), controls.len(), which, stats.len())?;
        set_each(self, rigs, controls, which, stats)
    }

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

/// The argument checks of [`RigBackend::set_controls_batch`]: `stats` as long as the `rigs`, and
/// every `which(k)` (`k < rigs`) an index of the `controls`.
///
/// # Errors
/// [`crate::Error::Mismatch`], [`crate::Error::Invalid`] naming the first bad `k`.
pub fn check_batch_args(
    rigs: usize,
    controls: usize,
    which: &(dyn Fn(usize) -> usize + Sync),
    stats: usize,
) -> Result<()> {
    if stats != rigs {
        return Err(crate::Error::Mismatch {
            what: "set_controls_batch: stats".into(),
            expected: rigs as u64,
            found: stats as u64,
        });
    }
    if let Some(k) = (0..rigs).find(|&k| which(k) >= controls) {
        return Err(crate::Error::Invalid {
            what: format!("set_controls_batch: rig {k}"),
            reason: format!("control set {} of {controls}", which(k)),
        });
    }
    Ok(())
}

/// [`RigBackend::set_controls`] for each of `rigs` in order (`controls[which(k)]` for `rigs[k]`),
/// stopping at the first refusal: the provided [`RigBackend::set_controls_batch`], and the GPU
/// backends' path for handles that are not one whole batch. Arguments as checked by
/// [`check_batch_args`].
///
/// # Errors
/// The first refusal.
pub fn set_each<B: RigBackend + ?Sized>(
    backend: &mut B,
    rigs: &[RigHandle],
    controls: &[RigControls],
    which: &(dyn Fn(usize) -> usize + Sync),
    stats: &mut [ControlStats],
) -> Result<()> {
    for (k, (r, s)) in rigs.iter().zip(stats.iter_mut()).enumerate() {
        *s = backend.set_controls(*r, &controls[which(k)])?;
    }
    Ok(())
}

/// The upload whose instances are exactly `handles`, in order: `find` maps a handle to (upload,
/// instance) and `len` gives an upload's instance count. `None` for an empty slice, an unknown
/// handle, or any other selection — the batch setters' test for their parallel path.
pub fn whole_batch<H: Copy>(
    handles: &[H],
    find: impl Fn(H) -> Option<(usize, usize)>,
    len: impl Fn(usize) -> usize,
) -> Option<usize> {
    let (u, _) = find(*handles.first()?)?;
    let all = handles.len() == len(u)
        && handles
            .iter()
            .enumerate()
            .all(|(k, h)| find(*h) == Some((u, k)));
    all.then_some(u)
}
