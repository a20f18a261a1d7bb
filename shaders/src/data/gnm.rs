//! What [`crate::GNM`] and [`crate::SKIN`] read for a linear head, built from a [`GnmPack`]: the
//! vertex-range chunks that keep every binding under the device's limit, each chunk's arrays (the
//! basis words verbatim, no copy), and the per-frame buffer and palette from a [`GnmFrame`].
//!
//! The skinning reuses the morph path's kernel and data layout as is: the forward pass writes
//! `skin.wgsl`'s `(V,6)` input, the pack's u16 indices and f16 weights become its `(V,4)` u32 / f32
//! arrays here, and the palette holds the J skin matrices plus one entry for `bind` (see
//! [`gnm_skin`]).

use glam::Mat4;
use mien_core::gnm::{GnmFrame, GnmPack};
use mien_core::rig::skin::normal_matrix;

use super::RowTooLarge;
use crate::{GnmFrameHeader, JointMatrices};

/// Bytes per vertex of the largest per-vertex array besides the basis (neutral, seam and eye
/// weights: two `vec4<f32>`).
pub const GNM_STATIC_BYTES: u64 = 32;

/// The largest binding the plan uses, whatever the device allows: 2 GiB keeps every index the
/// kernels compute (halves, `6·v`) inside `u32`.
pub const GNM_MAX_BINDING: u64 = 1 << 31;

/// Split `vertices` vertices of a pack with `coeffs` coefficients into ranges `(first, count)` whose
/// basis words (`⌈(first_half + count·3E) / 2⌉ · 4` bytes) and per-vertex arrays
/// ([`GNM_STATIC_BYTES`] per vertex) each fit `limit` bytes (capped at [`GNM_MAX_BINDING`]).
/// Ranges are as long as the limit allows, in order, covering every vertex once.
///
/// # Errors
/// [`RowTooLarge`] when one vertex's basis row (`6·E` bytes and its word padding) or its static
/// data alone exceeds the limit.
pub fn plan_gnm_chunks(
    vertices: u32,
    coeffs: u32,
    limit: u64,
) -> Result<Vec<(u32, u32)>, RowTooLarge> {
    let limit = limit.min(GNM_MAX_BINDING);
    let n = 3 * u64::from(coeffs.max(1));
    let max_static = limit / GNM_STATIC_BYTES;
    let mut out = Vec::new();
    let mut v0 = 0u32;
    while v0 < vertices {
        let first_half = (u64::from(v0) * n) % 2;
        let halves = 2 * (limit / 4);
        let fit = (halves.saturating_sub(first_half) / n)
            .min(max_static)
            .min(u64::from(vertices - v0));
        if fit == 0 {
            return Err(RowTooLarge {
                vertex: v0,
                bytes: (n + first_half).div_ceil(2) * 4,
            });
        }
        out.push((v0, fit as u32));
        v0 += fit as u32;
    }
    Ok(out)
}

/// The arrays of one chunk, in the layouts `gnm.wgsl` and `skin.wgsl` read.
#[derive(Clone, Debug, PartialEq)]
pub struct GnmChunkArrays<'a> {
    /// The basis words holding the chunk's halves, verbatim from the pack (fp16 pairs, low half
    /// first; the first and last word may hold a neighbour's half).
    pub basis: &'a [u32],
    /// 0 or 1: where in `basis[0]` the chunk's first vertex starts.
    pub first_half: u32,
    /// Per vertex `(neutral xyz, left eye weight)`, `(seam xyz or 0, right eye weight)`: `(V,2)`.
    pub statics: Vec<[f32; 4]>,
    /// Skin palette indices `(V,4)` ([`gnm_skin`]).
    pub joints: Vec<[u32; 4]>,
    /// Skin weights `(V,4)` ([`gnm_skin`]).
    pub weights: Vec<[f32; 4]>,
}

/// One vertex's skin in `skin.wgsl`'s layout: the pack's weights divided by their sum (the reference
/// renormalises the f16 rounding away the same way, after summing), indices widened to u32 (0 in an
/// unused slot); a vertex whose weights sum to 0 gets weight 1 on palette entry J, which holds
/// `bind` ([`gnm_palette`]), as the reference poses it with `bind`.
pub fn gnm_skin(pack: &GnmPack, v: usize) -> ([u32; 4], [f32; 4]) {
    let (ix, w) = (pack.skin_index[v], pack.skin_weight[v]);
    let total: f32 = w.iter().filter(|x| **x != 0.0).sum();
    if total > 0.0 {
        (
            std::array::from_fn(|k| if w[k] != 0.0 { u32::from(ix[k]) } else { 0 }),
            w.map(|x| x / total),
        )
    } else {
        (
            [pack.header.joints.len() as u32, 0, 0, 0],
            [1.0, 0.0, 0.0, 0.0],
        )
    }
}

/// The arrays of vertices `first .. first + count` of `pack`.
///
/// # Panics
/// When the range leaves the pack (a caller bug: ranges come from [`plan_gnm_chunks`]).
pub fn gnm_chunk_arrays(pack: &GnmPack, first: u32, count: u32) -> GnmChunkArrays<'_> {
    let nv = pack.vertex_count();
    let n = 3 * pack.coeff_count();
    let (a, b) = (first as usize, (first + count) as usize);
    let (h0, h1) = (a * n, b * n);
    let mut statics = Vec::with_capacity(2 * count as usize);
    let mut joints = Vec::with_capacity(count as usize);
    let mut weights = Vec::with_capacity(count as usize);
    for v in a..b {
        let p = pack.neutral[v];
        let s = pack.seam.as_ref().map_or([0.0; 3], |s| s[v]);
        statics.push([p[0], p[1], p[2], pack.eye_weights[v]]);
        statics.push([s[0], s[1], s[2], pack.eye_weights[nv + v]]);
        let (j, w) = gnm_skin(pack, v);
        joints.push(j);
        weights.push(w);
    }
    GnmChunkArrays {
        basis: &pack.basis[h0 / 2..h1.div_ceil(2)],
        first_half: (h0 % 2) as u32,
        statics,
        joints,
        weights,
    }
}

/// Bytes of [`crate::GNM`]'s per-frame buffer for E coefficients: the header and `(E,)` f32.
pub fn gnm_frame_bytes(coeffs: usize) -> u64 {
    std::mem::size_of::<GnmFrameHeader>() as u64 + 4 * coeffs.max(1) as u64
}

/// Write `frame` into `out` as [`crate::GNM`]'s per-frame buffer: a [`GnmFrameHeader`] (eye
/// rotations, eye centres) then the scaled coefficients `(E,)`. Allocates only when `out` is too
/// small (never after the first frame).
pub fn gnm_frame(frame: &GnmFrame, out: &mut Vec<u8>) {
    let col = |m: &glam::Mat3, i: usize| {
        let c = m.col(i);
        [c.x, c.y, c.z, 0.0]
    };
    let [l, r] = &frame.eye_rotation;
    let [cl, cr] = frame.eye_centres;
    let header = GnmFrameHeader {
        eye_rot_l: [col(l, 0), col(l, 1), col(l, 2)],
        eye_rot_r: [col(r, 0), col(r, 1), col(r, 2)],
        eye_centre_l: [cl.x, cl.y, cl.z, 0.0],
        eye_centre_r: [cr.x, cr.y, cr.z, 0.0],
    };
    out.clear();
    out.extend_from_slice(bytemuck::bytes_of(&header));
    out.extend_from_slice(bytemuck::cast_slice(&frame.scaled));
    if frame.scaled.is_empty() {
        out.extend_from_slice(&[0; 4]);
    }
}

/// Write `frame`'s palette into `out`: its J skin matrices, then `bind` as entry J (for vertices
/// without skin weights, [`gnm_skin`]), each with its normal matrix. `(J+1,)`. Allocates only when
/// `out` is too small.
pub fn gnm_palette(frame: &GnmFrame, out: &mut Vec<JointMatrices>) {
    out.clear();
    let entry = |m: &Mat4| JointMatrices::new(m, &normal_matrix(m));
    out.extend(frame.skin.iter().map(entry));
    out.push(entry(&frame.bind));
}
