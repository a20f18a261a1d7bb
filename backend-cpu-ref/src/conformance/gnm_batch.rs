//! Batches for the linear-head conformance harness: several uploads in one backend, each a pack
//! posed as N instances that share its basis, all recorded by one `encode` — every instance must
//! equal the reference pose of its own frame within the same per-vertex bound as a single head
//! ([`super::gnm::vertex_bounds`]); and the ICT-sized pack (26,719 vertices × 57 coefficients, the
//! size of the ICT FaceKit head of issue 7), built synthetically from a fixed seed.

use mien_core::gnm::GnmPack;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack};
use proptest::prelude::*;

use super::gnm::{
    GnmCase, GnmFrameInput, GnmHarness, GnmInputs, GnmReport, compare_gnm, gnm_cases, gnm_reference,
};

/// One upload of a batch run: a pack and one frame per instance (N = `frames.len()` ≥ 1).
#[derive(Clone, Debug)]
pub struct GnmBatchInput {
    /// The pack, uploaded once.
    pub pack: GnmPack,
    /// Instance i's frame.
    pub frames: Vec<GnmFrameInput>,
}

impl GnmBatchInput {
    /// The pack of `case` with one instance per frame of the case (different head_ext vectors and
    /// joint worlds, from the case's seed).
    pub fn new(case: &GnmCase) -> Self {
        let GnmInputs { pack, frames } = GnmInputs::new(case);
        GnmBatchInput { pack, frames }
    }
}

/// Random batch runs: 1–`max_uploads` uploads, each a random case ([`gnm_cases`]) posed as 1–20
/// instances (so a GPU batch spans one to three blocks of 8 instances, the last one partial).
pub fn gnm_batch_cases(
    max_uploads: usize,
    max_vertices: u32,
    max_coeffs: u32,
) -> impl Strategy<Value = Vec<GnmCase>> {
    let case = (gnm_cases(max_vertices, max_coeffs), 1u32..=20).prop_map(|(mut c, n)| {
        c.frames = n;
        c
    });
    proptest::collection::vec(case, 1..=max_uploads)
}

/// Run `uploads` on `harness` as one batch ([`GnmHarness::run_batch`]) and compare every instance
/// with the reference pose of its frame ([`compare_gnm`]). The report covers the worst instance.
///
/// # Errors
/// A message naming the upload, and the frame (= instance), vertex and axis of the first bad
/// element; or the backend's error.
pub fn check_batch(
    harness: &mut impl GnmHarness,
    uploads: &[GnmBatchInput],
) -> Result<GnmReport, String> {
    let got = harness
        .run_batch(uploads)
        .map_err(|e| format!("backend: {e}"))?;
    if got.len() != uploads.len() {
        return Err(format!(
            "{} uploads read back, {} uploaded",
            got.len(),
            uploads.len()
        ));
    }
    let mut report = GnmReport::default();
    for (u, (input, g)) in uploads.iter().zip(&got).enumerate() {
        let want =
            gnm_reference(&input.pack, &input.frames).map_err(|e| format!("reference: {e}"))?;
        let r = compare_gnm(&input.pack, &input.frames, g, &want)
            .map_err(|e| format!("upload {u} (instances are frames): {e}"))?;
        report.frames += r.frames;
        report.vertices = report.vertices.max(r.vertices);
        report.max_abs = report.max_abs.max(r.max_abs);
        report.max_ratio = report.max_ratio.max(r.max_ratio);
    }
    Ok(report)
}

/// Vertices of the ICT FaceKit head (`../shared/data/ict-facekit/`).
pub const ICT_VERTICES: u32 = 26_719;
/// Expression shapes of the ICT FaceKit head.
pub const ICT_COEFFS: u32 = 57;

/// A synthetic pack of the ICT head's size — 26,719 vertices × 57 coefficients, 4 regions, 4
/// joints, a seam — with `frames` frames, all from one fixed seed (the real baker is issue 7's
/// deliverable 4; the GPU kernels only care about the sizes and the value ranges).
pub fn ict_sized_case(frames: u32) -> GnmCase {
    GnmCase {
        shape: GnmShape {
            vertices: ICT_VERTICES,
            coeffs: ICT_COEFFS,
            regions: 4,
            joints: 4,
            seam: true,
        },
        seed: 0x1C7_FACE,
        frames,
    }
}

/// The pack of [`ict_sized_case`] (the same for every call).
pub fn ict_sized_pack() -> GnmPack {
    random_gnm_pack(ict_sized_case(1).seed, ict_sized_case(1).shape)
}
