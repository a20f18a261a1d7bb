//! Batches for the rig conformance harness: several uploads in one backend, each a rig posed as N
//! instances that share its arrays ([`RigBackend::upload_batch`]) with different controls, all
//! recorded by one `encode`. Every instance must equal a separate CPU reference pose of its own
//! controls (one [`RigBackend::upload`] per instance) within the single-rig bound
//! ([`super::compare_posed`]).

use mien_core::rig::{PosedVertices, RigBackend, RigControls, RigData};
use mien_core::testing::{RigShape, random_controls, random_rig};
use proptest::prelude::*;

use super::{compare_posed_with, posed_bounds, rig_shapes};
use crate::{CpuEncoder, CpuRigBackend};

/// One upload of a batch run: a rig and one set of controls per instance (N = `controls.len()`).
#[derive(Clone, Debug)]
pub struct RigBatchInput {
    /// The rig, uploaded once.
    pub rig: RigData,
    /// Instance i's controls.
    pub controls: Vec<RigControls>,
}

impl RigBatchInput {
    /// The random rig of `(shape, seed)` with `instances` different random controls (seeds
    /// `seed + 1 + i`).
    pub fn new(shape: RigShape, seed: u64, instances: u32) -> Self {
        let rig = random_rig(seed, shape);
        let controls = (0..instances)
            .map(|i| random_controls(seed.wrapping_add(1 + u64::from(i)), &rig))
            .collect();
        RigBatchInput { rig, controls }
    }
}

/// A batch whose first block of 8 instances has over 128 active weight slots (the union of their
/// non-zero weights after the weight rules): 11 instances of a 333-vertex, 240-target rig (density
/// 0.3, 5 joints), so the GPU morph kernel stages its active slots in several rounds of 64.
///
/// # Panics
/// When the generated controls no longer have that many active slots (a change to the generators).
pub fn many_active_targets() -> RigBatchInput {
    let shape = RigShape {
        vertices: 333,
        targets: 240,
        density: 0.3,
        joints: 5,
    };
    let u = RigBatchInput::new(shape, 21, 11);
    let mut active = vec![false; u.rig.weight_count as usize];
    for c in &u.controls[..8] {
        let mut f = mien_core::rig::FrameControls::new(&u.rig);
        f.set(c).expect("generated controls are valid");
        for (a, w) in active.iter_mut().zip(&f.weights) {
            *a |= *w != 0.0;
        }
    }
    let n = active.iter().filter(|a| **a).count();
    assert!(n > 128, "{n} active slots in the first block");
    u
}

/// Random batch runs: 1–`max_uploads` uploads, each a random rig ([`rig_shapes`]) posed as
/// 1–`max_instances` instances.
pub fn rig_batch_cases(
    max_uploads: usize,
    max_vertices: u32,
    max_instances: u32,
) -> impl Strategy<Value = Vec<RigBatchInput>> {
    proptest::collection::vec(
        (rig_shapes(max_vertices), 1u32..=max_instances)
            .prop_map(|((shape, seed), n)| RigBatchInput::new(shape, seed, n)),
        1..=max_uploads,
    )
}

/// What a backend under test must do for [`check_rig_batch`].
pub trait RigBatchHarness {
    /// Upload each input with `upload_batch(rig, N)` into one backend, fill every output with
    /// [`super::POISON`], set each instance's controls, encode once, submit, and read back every
    /// instance's posed vertices, per upload in instance order.
    ///
    /// # Errors
    /// Any backend error.
    fn run_batch(
        &mut self,
        uploads: &[RigBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>>;
}

/// The reference of a batch run: every instance uploaded separately to a [`CpuRigBackend`]
/// (`upload`, not `upload_batch`) and posed with its controls.
///
/// # Errors
/// Invalid inputs (a bug in the case generator).
pub fn batch_reference(uploads: &[RigBatchInput]) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
    let mut backend = CpuRigBackend::new();
    let mut handles = Vec::new();
    for u in uploads {
        let mut hs = Vec::new();
        for c in &u.controls {
            let h = backend.upload(&u.rig)?;
            backend.set_controls(h, c)?;
            hs.push(h);
        }
        handles.push(hs);
    }
    backend.encode(&mut CpuEncoder::default())?;
    handles
        .iter()
        .map(|hs| hs.iter().map(|h| backend.read_vertices(*h)).collect())
        .collect()
}

/// Run `uploads` on `harness` as one batch and compare every instance with its separate
/// reference pose.
///
/// # Errors
/// A message naming the upload, instance, array and first bad element; or the backend's error.
pub fn check_rig_batch(
    harness: &mut impl RigBatchHarness,
    uploads: &[RigBatchInput],
) -> Result<(), String> {
    let want = batch_reference(uploads).map_err(|e| format!("reference: {e}"))?;
    let got = harness
        .run_batch(uploads)
        .map_err(|e| format!("backend: {e}"))?;
    if got.len() != want.len() {
        return Err(format!(
            "{} uploads read back, {} uploaded",
            got.len(),
            want.len()
        ));
    }
    for (u, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.len() != w.len() {
            return Err(format!(
                "upload {u}: {} instances read back, {}",
                g.len(),
                w.len()
            ));
        }
        for (i, (gi, wi)) in g.iter().zip(w).enumerate() {
            let b = posed_bounds(&uploads[u].rig, &uploads[u].controls[i])
                .map_err(|e| format!("upload {u} instance {i}: {e}"))?;
            compare_posed_with(&format!("upload {u} instance {i}"), gi, wi, Some(&b))?;
        }
    }
    Ok(())
}

/// Bytes a GPU rig upload of `n` instances holds beyond one of a single instance: per extra
/// instance its palette `(P,)` of 128-byte entries and, per chunk, its posed `(count,6)` f32
/// (`128P + 24V`, independent of the chunking); the weights grow by blocks of 8 instances,
/// `(W, 8)` f32 each (the morph kernel's blocked layout), and its active-slot list `(W+1,)` u32.
/// A rig that carries tangents adds per extra instance its morphed copy `(V,6)`, posed tangents
/// `(V,4)` and dense weights `(W,)` f32 (`24V + 16V + 4W`; a rig without them is morphed and
/// skinned in one pass and keeps no morphed copy). The CPU backend adds `4W + 100P + 24V` per
/// instance (palette and normal matrices, posed positions and normals; `+ 16V` of tangents).
pub fn gpu_batch_extra_bytes(rig: &RigData, n: u32) -> u64 {
    let n = u64::from(n.max(1));
    let tangents = if rig.tangents.is_empty() {
        0
    } else {
        40 * rig.vertex_count() as u64 + 4 * u64::from(rig.weight_count)
    };
    (n - 1) * (128 * rig.palette.len() as u64 + 24 * rig.vertex_count() as u64 + tangents)
        + (n.div_ceil(8) - 1)
            * (32 * u64::from(rig.weight_count) + 4 * (u64::from(rig.weight_count) + 1))
}
