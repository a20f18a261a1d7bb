//! Bytes that must move per frame per character: the reads of the rig data a frame actually
//! touches plus the writes of its outputs, as a fused kernel that reads every input once and writes
//! every output once would move them (intermediate buffers between stages are not counted; a
//! backend that round-trips them through memory moves more). GB = 10⁹ bytes.
//!
//! **Morph and skin path** (W1, W2, W5, W6), V vertices, P palette entries, W weight slots, and the
//! targets `A` left active after the weight rules (clamp ±2, at most 32 non-zero), `nnzₜ` the
//! stored entries of target t:
//!
//! ```text
//! reads  = V·24                       base position + normal, f32
//!        + V·32                       skin joints u32×4 + weights f32×4
//!        + [A ≠ ∅]·((V+1)·4           CSR row offsets
//!                   + Σ_{t∈A} nnzₜ·28) entry target u32 + position delta + normal delta, f32×3 each
//!        + W·4 + P·(64 + 36)          weights, palette matrices + normal matrices
//! writes = V·24                       posed position + normal, f32
//! ```
//!
//! **Linear head** (W3, W4), E coefficients of which `E≠0` are non-zero this frame, J joints:
//!
//! ```text
//! reads  = V·12                       neutral, f32
//!        + V·E≠0·6                    fp16 basis rows of the non-zero coefficients (3 halves each)
//!        + E·4 + (E+4)·4              per-coefficient scale, head_ext
//!        + V·8                        eye weights, f32×2
//!        + [seam]·V·12                neck-seam displacement
//!        + V·16                       skin indices u16×4 + weights f16×4 (the pack's own types)
//!        + (J+1)·64                   skin matrices and the bind entry
//! writes = V·12                       posed position, f32 (a pack has no normals)
//! ```
//!
//! **Debug lift**, per vertex: reads the posed position + normal and the tint (24 + 4), writes
//! one splat of [`mien_core::sink::BYTES_PER_SLOT`] = 52 bytes (centre 16, colour 4, two covariance
//! vec4s 32).
//!
//! **Surface (bound) lift**, G gaussians on T triangles: reads the posed positions + normals once
//! (V·24), the triangles once (T·12) and each gaussian's record once (G·48,
//! [`mien_core::lift::PackedBound`]); writes G splats of 52 bytes.

use mien_core::gnm::GnmPack;
use mien_core::rig::morph::{LimitStats, MorphLimiter};
use mien_core::rig::{ControlStats, RigControls, RigData};
use mien_core::sink::BYTES_PER_SLOT;

/// Bytes read and written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Bytes {
    /// Bytes read.
    pub reads: u64,
    /// Bytes written.
    pub writes: u64,
}

impl Bytes {
    /// Reads + writes.
    pub fn total(&self) -> u64 {
        self.reads + self.writes
    }
}

/// Stored CSR entries per weight slot `(W,)` of `rig`.
pub fn target_entries(rig: &RigData) -> Vec<u64> {
    let mut n = vec![0u64; rig.weight_count as usize];
    for &t in &rig.morph_target {
        if let Some(c) = n.get_mut(t as usize) {
            *c += 1;
        }
    }
    n
}

/// The weights `(W,)` of `controls` after the backend's rules ([`RigData::limit_weights`]).
pub fn limited_weights(rig: &RigData, controls: &RigControls) -> Vec<f32> {
    let mut w = controls.weights.clone();
    w.resize(rig.weight_count as usize, 0.0);
    rig.limit_weights(
        &mut w,
        &mut MorphLimiter::new(),
        &mut LimitStats::default(),
        &mut ControlStats::default(),
    );
    w
}

/// The morph/skin formula (module docs) for one frame of `rig`; `entries` from
/// [`target_entries`].
pub fn rig_frame_with(rig: &RigData, controls: &RigControls, entries: &[u64]) -> Bytes {
    let v = rig.vertex_count() as u64;
    let p = rig.palette.len() as u64;
    let w = u64::from(rig.weight_count);
    let weights = limited_weights(rig, controls);
    let active: u64 = weights
        .iter()
        .zip(entries)
        .filter(|(x, _)| **x != 0.0)
        .map(|(_, n)| *n)
        .sum();
    let any_active = weights.iter().any(|x| *x != 0.0);
    let csr = if any_active {
        (v + 1) * 4 + active * 28
    } else {
        0
    };
    Bytes {
        reads: v * 24 + v * 32 + csr + w * 4 + p * (64 + 36),
        writes: v * 24,
    }
}

/// [`rig_frame_with`], counting the entries per target itself.
pub fn rig_frame(rig: &RigData, controls: &RigControls) -> Bytes {
    rig_frame_with(rig, controls, &target_entries(rig))
}

/// The linear-head formula (module docs) for one frame of `pack` with `head_ext` `(E+4,)`.
pub fn gnm_frame(pack: &GnmPack, head_ext: &[f32]) -> Bytes {
    let v = pack.vertex_count() as u64;
    let e = pack.coeff_count() as u64;
    let nonzero = head_ext
        .iter()
        .take(e as usize)
        .filter(|c| **c != 0.0)
        .count() as u64;
    let j = pack.header.joints.len() as u64;
    let seam = if pack.seam.is_some() { v * 12 } else { 0 };
    Bytes {
        reads: v * 12
            + v * nonzero * 6
            + e * 4
            + (e + 4) * 4
            + v * 8
            + seam
            + v * 16
            + (j + 1) * 64,
        writes: v * 12,
    }
}

/// The surface (bound) lift's bytes for `v` posed vertices, `t` triangles and `g` gaussians
/// (module docs).
pub fn bound_lift(v: u64, t: u64, g: u64) -> Bytes {
    Bytes {
        reads: v * 24 + t * 12 + g * 48,
        writes: g * BYTES_PER_SLOT,
    }
}

/// The debug lift's bytes for `v` vertices (module docs).
pub fn lift(v: u64) -> Bytes {
    Bytes {
        reads: v * (24 + 4),
        writes: v * BYTES_PER_SLOT,
    }
}
