//! What the kernels read, built from core types: the per-chunk arrays of a rig, the palette entries
//! and the lift uniform; [`rig`] the chunk plan and per-frame arrays of a batch of instances sharing
//! a rig; [`gnm`] the same for a linear head. Both GPU backends upload exactly these bytes.

pub mod gnm;
pub mod rig;

use glam::{Mat3, Mat4};
use mien_core::lift::{DebugLiftParams, DebugShading};
use mien_core::rig::RigData;
use mien_core::sink::pack4x8unorm;

use crate::{JointMatrices, LiftParams};

/// Bytes per vertex of the largest per-vertex array (bind, morphed, posed: 6 f32).
pub const VERTEX_BYTES: u64 = 24;
/// Bytes per vertex of [`skin_words`] (4 palette indices and 4 weights).
pub const SKIN_WORD_BYTES: u64 = 32;
/// Bytes per CSR entry of the largest per-entry array (6 f32 of deltas).
pub const ENTRY_BYTES: u64 = 24;

/// Batches smaller than this are set and staged on the calling thread (`rig::set_batch`,
/// `gnm::set_gnm_batch`): handing work to rayon's pool from outside it wakes a sleeping worker,
/// tens of microseconds — more than a small batch's work.
pub const PARALLEL_MIN: usize = 32;

/// A vertex whose own data alone (its CSR row, or a linear head's basis row) exceeds the binding
/// limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowTooLarge {
    /// The vertex.
    pub vertex: u32,
    /// Bytes its row needs.
    pub bytes: u64,
}

/// Split `rig` into vertex ranges `(first, count)` whose per-vertex and per-entry arrays each fit
/// `limit` bytes (the device's storage-binding limit), so no kernel binding exceeds it: one
/// instance of [`rig::plan_rig_chunks`].
///
/// # Errors
/// [`RowTooLarge`] when one vertex's deltas (or its 24 output bytes) alone exceed the limit.
pub fn plan_chunks(rig: &RigData, limit: u64) -> Result<Vec<(u32, u32)>, RowTooLarge> {
    rig::plan_rig_chunks(rig, 1, limit)
}

/// Vertices per morph tile: one [`crate::MORPH`] workgroup, and the width of a tile's vertex mask
/// ([`ChunkArrays::tile_slots`]).
pub const MORPH_TILE_VERTICES: u32 = 64;

/// The arrays of one chunk, in the layouts `morph.wgsl`, `skin.wgsl` and `lift_debug.wgsl` read.
///
/// The morph entries are re-laid for the active-target walk: the chunk's vertices fall into tiles
/// of [`MORPH_TILE_VERTICES`] in the rig's vertex order (tile k holds local vertices
/// `64k .. 64k+64`, lane l vertex `64k + l`), and within a tile the entries are grouped by weight
/// slot, slots ascending, lanes ascending within a slot. A workgroup finds its tile's entries of any
/// slot in one lookup (`tile_slots[k·W + t]`): the entry of lane l is
/// `first + popcount(mask & ((1<<l)−1))` when bit l of the 64-bit mask is set. Because the rig's
/// rows hold strictly ascending slots ([`RigData::validate`]), walking slots ascending visits each
/// vertex's entries in row order.
///
/// The rig's own order is kept (not a spatial re-sort) so outputs are written coalesced; a tile is
/// a small patch of the surface — few targets move it — when the mesh's vertex order is spatially
/// coherent, as exported and vertex-cache-optimised meshes are (`docs/PERFORMANCE.md` measures
/// both orders).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkArrays {
    /// Bind position xyz then normal xyz per vertex `(V,6)`.
    pub base: Vec<f32>,
    /// Per tile and weight slot `(⌈V/64⌉, W)`: `[first entry, mask of lanes 0–31, mask of lanes
    /// 32–63, 0]` (one zero element when the table is empty: no empty binding).
    pub tile_slots: Vec<[u32; 4]>,
    /// Position delta xyz then normal delta xyz per entry `(nnz,6)`, in (tile, slot, lane) order.
    pub deltas: Vec<f32>,
    /// Palette indices `(V,4)`.
    pub joints: Vec<[u32; 4]>,
    /// Skin weights `(V,4)`.
    pub weights: Vec<[f32; 4]>,
    /// pack4x8unorm vertex colours `(V,)`.
    pub tints: Vec<u32>,
    /// [`crate::TANGENT`]'s index array when the rig carries tangents (else empty): row starts
    /// `(V+1,)` relative to the chunk's first entry, then each entry's weight slot `(nnz,)`, in the
    /// rig's own row order.
    pub tangent_rows: Vec<u32>,
    /// [`crate::TANGENT`]'s data when the rig carries tangents (else empty): base tangent xyzw per
    /// vertex `(V,4)`, then each entry's tangent delta xyz `(nnz,3)`.
    pub tangent_data: Vec<f32>,
}

/// The arrays of vertices `first .. first + count` of `rig`.
///
/// # Panics
/// When the range leaves the rig, or a row's slots are not strictly ascending and below
/// `weight_count` (caller bugs: ranges come from [`plan_chunks`], rigs pass
/// [`RigData::validate`]).
pub fn chunk_arrays(rig: &RigData, first: u32, count: u32) -> ChunkArrays {
    let (a, b) = (first as usize, (first + count) as usize);
    let w = rig.weight_count as usize;
    let tile = MORPH_TILE_VERTICES as usize;
    let tiles = (b - a).div_ceil(tile);
    let nnz = (rig.morph_offsets[b] - rig.morph_offsets[a]) as usize;
    let mut tile_slots = vec![[0u32; 4]; (tiles * w).max(1)];
    let mut deltas = Vec::with_capacity(6 * nnz);
    // Per tile: (slot, lane, entry) sorted by slot, then lane (stable sort of lanes ascending).
    let mut scratch: Vec<(u32, u32, usize)> = Vec::new();
    for k in 0..tiles {
        let (v0, v1) = (a + k * tile, (a + (k + 1) * tile).min(b));
        scratch.clear();
        for v in v0..v1 {
            let row = rig.morph_offsets[v] as usize..rig.morph_offsets[v + 1] as usize;
            scratch.extend(row.map(|e| (rig.morph_target[e], (v - v0) as u32, e)));
        }
        scratch.sort_by_key(|&(t, _, _)| t);
        for &(t, lane, e) in &scratch {
            let slot = &mut tile_slots[k * w + t as usize];
            if slot[1] == 0 && slot[2] == 0 {
                slot[0] = (deltas.len() / 6) as u32;
            }
            let bit = 1u32 << (lane % 32);
            let mask = if lane < 32 {
                &mut slot[1]
            } else {
                &mut slot[2]
            };
            assert!(
                *mask & bit == 0,
                "slot {t} twice in the row of vertex {}",
                v0 + lane as usize
            );
            *mask |= bit;
            deltas.extend(rig.morph_position[e].into_iter().chain(rig.morph_normal[e]));
        }
    }
    let (mut tangent_rows, mut tangent_data) = (Vec::new(), Vec::new());
    if !rig.tangents.is_empty() {
        let (e0, e1) = (rig.morph_offsets[a], rig.morph_offsets[b]);
        tangent_rows.extend(rig.morph_offsets[a..=b].iter().map(|o| o - e0));
        tangent_rows.extend_from_slice(&rig.morph_target[e0 as usize..e1 as usize]);
        tangent_data.extend(rig.tangents[a..b].iter().flatten());
        tangent_data.extend(rig.morph_tangent[e0 as usize..e1 as usize].iter().flatten());
    }
    ChunkArrays {
        tangent_rows,
        tangent_data,
        base: (a..b)
            .flat_map(|v| rig.positions[v].into_iter().chain(rig.normals[v]))
            .collect(),
        tile_slots,
        deltas,
        joints: rig.joints[a..b].to_vec(),
        weights: rig.weights[a..b].to_vec(),
        tints: rig.colors[a..b].iter().map(|c| pack4x8unorm(*c)).collect(),
    }
}

/// Joints and skin weights interleaved as the fused morph-and-skin entry (`morph.wgsl`
/// `skinned`) reads them: per vertex its 4 palette indices, then its 4 weights as f32 bit patterns
/// — `(V,2)` `[u32; 4]`, one binding instead of two (the entry already binds 8 storage buffers).
///
/// # Panics
/// When `joints` and `weights` differ in length (a caller bug: both come from one chunk).
pub fn skin_words(joints: &[[u32; 4]], weights: &[[f32; 4]]) -> Vec<[u32; 4]> {
    assert_eq!(joints.len(), weights.len(), "one joint row per weight row");
    joints
        .iter()
        .zip(weights)
        .flat_map(|(j, w)| [*j, w.map(f32::to_bits)])
        .collect()
}

impl JointMatrices {
    /// A palette entry from a joint matrix and its normal matrix (3×3 into the upper-left).
    pub fn new(m: &Mat4, n: &Mat3) -> Self {
        let c = n.to_cols_array();
        JointMatrices {
            m: m.to_cols_array(),
            n: [
                c[0], c[1], c[2], 0.0, c[3], c[4], c[5], 0.0, c[6], c[7], c[8], 0.0, 0.0, 0.0, 0.0,
                1.0,
            ],
        }
    }
}

impl LiftParams {
    /// The uniform for `p`, with the per-dispatch fields (count, row width, slot bases, posed
    /// base) zero.
    pub fn from_debug(p: &DebugLiftParams) -> Self {
        let a = &p.transform;
        let (cov_a, cov_b) = p.covariance();
        LiftParams {
            row0: [a[0], a[1], a[2], a[3]],
            row1: [a[4], a[5], a[6], a[7]],
            row2: [a[8], a[9], a[10], a[11]],
            cov_a,
            cov_b,
            flat_color: [p.flat_color[0], p.flat_color[1], p.flat_color[2], p.opacity],
            centroid: [p.centroid[0], p.centroid[1], p.centroid[2], 0.0],
            shading: match p.shading {
                DebugShading::Tint => 0,
                DebugShading::Normal => 1,
                DebugShading::Flat => 2,
            },
            ..LiftParams::default()
        }
    }
}
