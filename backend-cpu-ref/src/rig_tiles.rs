//! Dense morph blocks for the CPU rig backend: the CSR morph set re-laid per 64-vertex tile and
//! weight slot, so a frame adds each active target's deltas to a whole tile with SIMD instead of
//! walking every vertex's entries one by one.
//!
//! Layout: for tile `t` (vertices `64t .. 64t+64`) the blocks of the slots that have an entry in
//! it, slots ascending; a block holds its slot, which of the 64 vertices have an entry
//! (`present`, for the "touched" rule of the normals), and the deltas structure-of-arrays —
//! position x, y, z then normal x, y, z, 64 lanes each, 0 where absent. A frame adds `w · delta` to
//! every lane of each block whose weight is not 0, in slot order: per vertex the reference's
//! additions in the reference's order ([`RigData::morph_vertex`], rows ascending by slot), plus
//! `w · 0` for absent lanes, which changes nothing but the sign of a zero sum (`-0 + +0 = +0`).
//! Skinning erases that sign — [`skin_vertex`] accumulates from `+0`, so a zero result is `+0`
//! whatever the sign of its inputs — so the posed vertices are the reference's bits (tested for
//! dense, mid and sparse rigs and a `-0.0` vertex no target moves). Blending absent lanes too,
//! rather than selecting present ones, is what lets the loop vectorise: 2.2× on W2.
//!
//! Built only when it pays: every CSR row strictly ascending by slot (two entries of one slot in a
//! row have no dense form), and the entries fill at least a quarter of the blocks' lanes (a sparse
//! rig like W5 — 4 % density — would need 25× its CSR's memory).

use glam::{Mat3, Mat4};
use mien_core::rig::RigData;
use mien_core::rig::morph::normalize_or;
use mien_core::rig::skin::skin_vertex;

/// Vertices per tile.
pub const TILE: usize = 64;

/// The dense blocks of one rig (see the module doc).
#[derive(Debug)]
pub struct MorphTiles {
    /// Per tile its first block; `(T+1,)`.
    tile_first: Vec<u32>,
    /// Per block its weight slot.
    slot: Vec<u32>,
    /// Per block which lanes have an entry: `(B, 64)`.
    present: Vec<bool>,
    /// Per block the deltas `(B, 6, 64)`: position xyz, normal xyz.
    deltas: Vec<f32>,
}

impl MorphTiles {
    /// The blocks of `rig`, or `None` when a row is not strictly ascending by slot or the entries
    /// would fill under a quarter of the blocks' lanes.
    pub fn build(rig: &RigData) -> Option<Self> {
        let nv = rig.vertex_count();
        let offsets = &rig.morph_offsets;
        let row = |v: usize| offsets[v] as usize..offsets[v + 1] as usize;
        let ascending = (0..nv).all(|v| {
            let r = row(v);
            rig.morph_target[r].windows(2).all(|w| w[0] < w[1])
        });
        if !ascending || rig.morph_target.is_empty() {
            return None;
        }
        let tiles = nv.div_ceil(TILE);
        // Pass 1: the slots of each tile (sorted, unique), to size the blocks.
        let mut tile_slots: Vec<Vec<u32>> = Vec::with_capacity(tiles);
        for t in 0..tiles {
            let mut s: Vec<u32> = (t * TILE..((t + 1) * TILE).min(nv))
                .flat_map(|v| rig.morph_target[row(v)].iter().copied())
                .collect();
            s.sort_unstable();
            s.dedup();
            tile_slots.push(s);
        }
        let blocks: usize = tile_slots.iter().map(Vec::len).sum();
        if rig.morph_target.len() * 4 < blocks * TILE {
            return None;
        }
        let mut out = MorphTiles {
            tile_first: Vec::with_capacity(tiles + 1),
            slot: Vec::with_capacity(blocks),
            present: vec![false; blocks * TILE],
            deltas: vec![0.0; blocks * 6 * TILE],
        };
        for (t, slots) in tile_slots.iter().enumerate() {
            let first = out.slot.len();
            out.tile_first.push(first as u32);
            out.slot.extend_from_slice(slots);
            for v in t * TILE..((t + 1) * TILE).min(nv) {
                let j = v - t * TILE;
                for e in row(v) {
                    // The slot is in this tile's sorted list by construction.
                    let Ok(k) = slots.binary_search(&rig.morph_target[e]) else {
                        continue;
                    };
                    let b = first + k;
                    out.present[b * TILE + j] = true;
                    let (p, n) = (rig.morph_position[e], rig.morph_normal[e]);
                    for (c, x) in p.iter().chain(&n).enumerate() {
                        out.deltas[(b * 6 + c) * TILE + j] = *x;
                    }
                }
            }
        }
        out.tile_first.push(out.slot.len() as u32);
        Some(out)
    }

    /// Bytes held.
    pub fn byte_len(&self) -> u64 {
        (self.tile_first.len() * 4
            + self.slot.len() * 4
            + self.present.len()
            + self.deltas.len() * 4) as u64
    }
}

/// One tile of one instance: [`RigData::pose_vertex`] for vertices `64t .. 64t + len`, the morph
/// stage from the dense blocks. The same bits as the reference (module doc).
pub fn pose_tile(
    rig: &RigData,
    tiles: &MorphTiles,
    t: usize,
    weights: &[f32],
    (palette, normal_palette): (&[Mat4], &[Mat3]),
    positions: &mut [[f32; 3]],
    normals: &mut [[f32; 3]],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked on the line above), all `blend_avx` requires.
        let (acc, touched) = unsafe { blend_avx(rig, tiles, t, weights) };
        finish(
            rig,
            t,
            (&acc, &touched),
            (palette, normal_palette),
            positions,
            normals,
        );
        return;
    }
    let (acc, touched) = blend(rig, tiles, t, weights);
    finish(
        rig,
        t,
        (&acc, &touched),
        (palette, normal_palette),
        positions,
        normals,
    );
}

/// Per lane accumulators: position xyz then normal xyz.
type Acc = [[f32; TILE]; 6];

/// [`blend`] compiled for AVX (8 lanes per add and blend; multiply and add unfused, the bits do
/// not change).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn blend_avx(rig: &RigData, tiles: &MorphTiles, t: usize, weights: &[f32]) -> (Acc, [bool; TILE]) {
    blend(rig, tiles, t, weights)
}

/// The morph stage of tile `t`: base plus every present, non-zero-weight block in slot order.
#[inline(always)]
fn blend(rig: &RigData, tiles: &MorphTiles, t: usize, weights: &[f32]) -> (Acc, [bool; TILE]) {
    let nv = rig.vertex_count();
    let v0 = t * TILE;
    let len = (nv - v0).min(TILE);
    let mut acc: Acc = [[0.0; TILE]; 6];
    for j in 0..len {
        for c in 0..3 {
            acc[c][j] = rig.positions[v0 + j][c];
            acc[3 + c][j] = rig.normals[v0 + j][c];
        }
    }
    let mut touched = [false; TILE];
    let (a, b) = (
        tiles.tile_first[t] as usize,
        tiles.tile_first[t + 1] as usize,
    );
    for k in a..b {
        let w = weights.get(tiles.slot[k] as usize).copied().unwrap_or(0.0);
        if w == 0.0 {
            continue;
        }
        let present = &tiles.present[k * TILE..(k + 1) * TILE];
        for (c, lane) in acc.iter_mut().enumerate() {
            let d = &tiles.deltas[(k * 6 + c) * TILE..(k * 6 + c + 1) * TILE];
            for (x, d) in lane.iter_mut().zip(d) {
                *x += w * d;
            }
        }
        for (tj, p) in touched.iter_mut().zip(present) {
            *tj |= *p;
        }
    }
    (acc, touched)
}

/// Renormalise the touched normals and skin the tile's vertices (the reference's functions).
fn finish(
    rig: &RigData,
    t: usize,
    (acc, touched): (&Acc, &[bool; TILE]),
    (palette, normal_palette): (&[Mat4], &[Mat3]),
    positions: &mut [[f32; 3]],
    normals: &mut [[f32; 3]],
) {
    let v0 = t * TILE;
    for (j, (p_out, n_out)) in positions.iter_mut().zip(normals.iter_mut()).enumerate() {
        let v = v0 + j;
        let p = [acc[0][j], acc[1][j], acc[2][j]];
        let mut n = [acc[3][j], acc[4][j], acc[5][j]];
        if touched[j] {
            n = normalize_or(n, rig.normals[v]);
        }
        (*p_out, *n_out) =
            skin_vertex(p, n, rig.joints[v], rig.weights[v], palette, normal_palette);
    }
}
