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

use crate::Precision;
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
    /// Per block which lanes have an entry: `(B,)` masks, bit `j` for lane `j`.
    present: Vec<u64>,
    /// Per block the deltas `(B, 6, 64)`: position xyz, normal xyz.
    deltas: Vec<f32>,
    /// Per tile the joint every one of its vertices is bound to alone (one weight, 1.0), or
    /// [`NOT_RIGID`]: `(T,)`. Such a tile skins as one rigid transform ([`Precision::Fast`]).
    rigid: Vec<u32>,
}

/// [`MorphTiles::rigid`] of a tile whose vertices do not share one joint of weight 1.
const NOT_RIGID: u32 = u32::MAX;

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
            present: vec![0; blocks],
            deltas: vec![0.0; blocks * 6 * TILE],
            rigid: (0..tiles).map(|t| rigid_joint(rig, t)).collect(),
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
                    out.present[b] |= 1 << j;
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
            + self.present.len() * 8
            + self.deltas.len() * 4
            + self.rigid.len() * 4) as u64
    }
}

/// The joint all of tile `t`'s vertices are bound to with weight exactly 1 and no other non-zero
/// weight, or [`NOT_RIGID`].
fn rigid_joint(rig: &RigData, t: usize) -> u32 {
    let nv = rig.vertex_count();
    let mut joint = None;
    for v in t * TILE..((t + 1) * TILE).min(nv) {
        let (js, ws) = (rig.joints[v], rig.weights[v]);
        let mut live = (0..4).filter(|&k| ws[k] != 0.0);
        let (Some(k), None) = (live.next(), live.next()) else {
            return NOT_RIGID;
        };
        if ws[k] != 1.0 || joint.is_some_and(|j| j != js[k]) {
            return NOT_RIGID;
        }
        joint = Some(js[k]);
    }
    joint.unwrap_or(NOT_RIGID)
}

/// Per lane accumulators: position xyz then normal xyz, 64 lanes each.
pub type Acc = [[f32; TILE]; 6];

/// The morph stage's starting point for tile `t`: the rig's base positions and normals, lanes
/// past the last vertex 0.
pub fn base(rig: &RigData, t: usize) -> Acc {
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
    acc
}

/// One instance's side of [`pose_tiles`]: its limited weights `(W,)`, its palette and normal
/// palette `(P,)`, and where its tile's posed positions and normals go (`len` vertices each).
pub struct TileInstance<'a> {
    pub weights: &'a [f32],
    pub palette: &'a [Mat4],
    pub normal_palette: &'a [Mat3],
    pub positions: &'a mut [[f32; 3]],
    pub normals: &'a mut [[f32; 3]],
}

/// Tile `t` of `N` instances (1 or 2) of one rig: [`RigData::pose_vertex`] for vertices
/// `64t .. 64t + len` from the tile's base ([`base`]), the morph stage from the dense blocks —
/// two instances blended together so each block's deltas, loaded once, feed both.
/// [`Precision::Exact`]: the same bits as the reference (module doc); [`Precision::Fast`]: each
/// term one fused multiply-add where the CPU has FMA, rigid tiles skinned by one transform
/// (within the conformance bound).
pub fn pose_tiles<const N: usize>(
    rig: &RigData,
    tiles: &MorphTiles,
    t: usize,
    precision: Precision,
    base: &Acc,
    instances: [TileInstance; N],
) {
    let mut acc = [*base; N];
    let weights: [&[f32]; N] = std::array::from_fn(|i| instances[i].weights);
    blend(tiles, t, weights, precision, &mut acc);
    for (inst, acc) in instances.into_iter().zip(&acc) {
        let touched = touched(tiles, t, inst.weights);
        #[cfg(target_arch = "x86_64")]
        if precision == Precision::Fast
            && tiles.rigid[t] != NOT_RIGID
            && std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("fma")
        {
            let j = tiles.rigid[t] as usize;
            let n = inst.positions.len().min(inst.normals.len());
            // SAFETY: the CPU has AVX and FMA (checked above).
            unsafe {
                finish_rigid(
                    rig,
                    t,
                    acc,
                    (&inst.palette[j], &inst.normal_palette[j]),
                    (&mut inst.positions[..n], &mut inst.normals[..n]),
                );
            }
            continue;
        }
        finish(
            rig,
            t,
            (acc, touched),
            (inst.palette, inst.normal_palette),
            inst.positions,
            inst.normals,
        );
    }
}

/// The blocks of tile `t` whose weight is not 0, as a mask of the lanes they touch.
fn touched(tiles: &MorphTiles, t: usize, weights: &[f32]) -> u64 {
    let (a, b) = (
        tiles.tile_first[t] as usize,
        tiles.tile_first[t + 1] as usize,
    );
    (a..b)
        .filter(|&k| weight(tiles, k, weights) != 0.0)
        .fold(0, |m, k| m | tiles.present[k])
}

#[inline(always)]
fn weight(tiles: &MorphTiles, k: usize, weights: &[f32]) -> f32 {
    weights.get(tiles.slot[k] as usize).copied().unwrap_or(0.0)
}

/// The morph stage of tile `t` for `N` instances into `acc` (each holding the base): every block
/// in slot order, skipped where every instance's weight is 0. An instance whose weight is 0 while
/// the other's is not adds `0 · delta = ±0`, which changes nothing but the sign of a zero sum —
/// the absent lanes' case (module doc).
fn blend<const N: usize>(
    tiles: &MorphTiles,
    t: usize,
    weights: [&[f32]; N],
    precision: Precision,
    acc: &mut [Acc; N],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX and FMA (checked above), all the kernel requires.
        unsafe {
            match (N, precision) {
                (1, Precision::Exact) => blend_x86::<N, 8, false>(tiles, t, weights, acc),
                (1, Precision::Fast) => blend_x86::<N, 8, true>(tiles, t, weights, acc),
                (_, Precision::Exact) => blend_x86::<N, 4, false>(tiles, t, weights, acc),
                (_, Precision::Fast) => blend_x86::<N, 4, true>(tiles, t, weights, acc),
            }
        }
        return;
    }
    let _ = precision;
    let (a, b) = (
        tiles.tile_first[t] as usize,
        tiles.tile_first[t + 1] as usize,
    );
    for (weights, acc) in weights.iter().zip(acc.iter_mut()) {
        for k in a..b {
            let w = weight(tiles, k, weights);
            if w == 0.0 {
                continue;
            }
            for (c, lane) in acc.iter_mut().enumerate() {
                let d = &tiles.deltas[(k * 6 + c) * TILE..(k * 6 + c + 1) * TILE];
                for (x, d) in lane.iter_mut().zip(d) {
                    *x += w * d;
                }
            }
        }
    }
}

/// [`blend`] for AVX + FMA: channel by channel and `8R`-lane part by part, each instance's lanes
/// held in `R` registers across every block (`N·R = 8`: one instance, 64 lanes; two, 32 lanes
/// each, every loaded delta register used twice). `FUSED` false: multiply then add (the
/// reference's bits — nothing contracts an unfused expression); true: one fused multiply-add per
/// term.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
#[allow(clippy::needless_range_loop)] // one channel and lane index across several arrays
fn blend_x86<const N: usize, const R: usize, const FUSED: bool>(
    tiles: &MorphTiles,
    t: usize,
    weights: [&[f32]; N],
    acc: &mut [Acc; N],
) {
    use std::arch::x86_64::{
        _mm256_add_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_set1_ps,
        _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let (a, b) = (
        tiles.tile_first[t] as usize,
        tiles.tile_first[t + 1] as usize,
    );
    assert!(tiles.deltas.len() >= b * 6 * TILE);
    assert!(N * R * 8 == TILE);
    for c in 0..6 {
        for part in 0..N {
            let l0 = part * 8 * R;
            let mut r = [[_mm256_setzero_ps(); R]; N];
            for (i, ri) in r.iter_mut().enumerate() {
                for (j, x) in ri.iter_mut().enumerate() {
                    // SAFETY: lanes l0 + 8j .. + 8 of a 64-lane array (l0 + 8R ≤ 64).
                    *x = unsafe { _mm256_loadu_ps(acc[i][c].as_ptr().add(l0 + 8 * j)) };
                }
            }
            for k in a..b {
                let w: [f32; N] = std::array::from_fn(|i| weight(tiles, k, weights[i]));
                if w.iter().all(|w| *w == 0.0) {
                    continue;
                }
                let d = tiles.deltas[(k * 6 + c) * TILE + l0..].as_ptr();
                for j in 0..R {
                    // SAFETY: block k's channel c holds 64 floats (k < b, asserted above).
                    let dj = unsafe { _mm256_loadu_ps(d.add(8 * j)) };
                    for (ri, wi) in r.iter_mut().zip(&w) {
                        let wv = _mm256_set1_ps(*wi);
                        ri[j] = if FUSED {
                            _mm256_fmadd_ps(wv, dj, ri[j])
                        } else {
                            _mm256_add_ps(ri[j], _mm256_mul_ps(wv, dj))
                        };
                    }
                }
            }
            for (i, ri) in r.iter().enumerate() {
                for (j, x) in ri.iter().enumerate() {
                    // SAFETY: as for the loads.
                    unsafe { _mm256_storeu_ps(acc[i][c].as_mut_ptr().add(l0 + 8 * j), *x) };
                }
            }
        }
    }
}

/// Squared normal lengths below which [`finish_rigid`] normalises before the transform (`f32`'s
/// smallest normal number is about `1.2e-38`; a transformed normal's squared length stays above it
/// for any normal matrix whose singular values exceed `1e-4`).
const TINY_NORMAL2: f32 = 1e-30;

/// [`finish`] of a rigid tile ([`MorphTiles::rigid`]) for [`Precision::Fast`]: every lane
/// transformed by the one joint's matrix `m` and normal matrix `nm` with fused multiply-adds, 64
/// lanes at a time (the lane loops are written for the compiler to vectorise for AVX + FMA), then
/// the normal normalised. The morph stage's renormalisation of touched normals is left out: a
/// normal scaled by `s > 0` normalises to the same direction after `nm`, so only a blended normal
/// of zero, tiny or non-finite length needs the rule itself ([`normalize_or`], the rig's normal as
/// fallback) — those lanes, rare, are fixed before the transform. `skin_vertex` with one weight of 1, rounded differently
/// (within the conformance bound: a few roundings per component, as a GPU's).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
#[allow(clippy::needless_range_loop)] // lane loops over several arrays, written to vectorise
fn finish_rigid(
    rig: &RigData,
    t: usize,
    acc: &Acc,
    (m, nm): (&Mat4, &Mat3),
    (positions, normals): (&mut [[f32; 3]], &mut [[f32; 3]]),
) {
    let v0 = t * TILE;
    let len = positions.len();
    let mut n: [[f32; TILE]; 3] = [acc[3], acc[4], acc[5]];
    let mut degenerate = 0u64;
    for j in 0..TILE {
        let l2 = n[2][j].mul_add(n[2][j], n[1][j].mul_add(n[1][j], n[0][j] * n[0][j]));
        // Lengths `normalize_or` falls back on (zero, non-finite), and ones so short that the
        // transformed normal's squared length could underflow: those lanes take the rule itself.
        let bad = !(l2 > TINY_NORMAL2 && l2 < f32::INFINITY);
        degenerate |= u64::from(bad) << j;
    }
    degenerate &= if len == TILE {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    while degenerate != 0 {
        let j = degenerate.trailing_zeros() as usize;
        degenerate &= degenerate - 1;
        let r = normalize_or([n[0][j], n[1][j], n[2][j]], rig.normals[v0 + j]);
        (n[0][j], n[1][j], n[2][j]) = (r[0], r[1], r[2]);
    }
    let (c, d) = (m.to_cols_array_2d(), nm.to_cols_array_2d());
    let mut out = [[0.0f32; TILE]; 6];
    for j in 0..TILE {
        let (x, y, z) = (acc[0][j], acc[1][j], acc[2][j]);
        for r in 0..3 {
            out[r][j] = c[2][r].mul_add(z, c[1][r].mul_add(y, c[0][r].mul_add(x, c[3][r])));
        }
        let (x, y, z) = (n[0][j], n[1][j], n[2][j]);
        let mut q = [0.0f32; 3];
        for (r, qr) in q.iter_mut().enumerate() {
            *qr = d[2][r].mul_add(z, d[1][r].mul_add(y, d[0][r] * x));
        }
        let len2 = q[2].mul_add(q[2], q[1].mul_add(q[1], q[0] * q[0]));
        let inv = 1.0 / len2.sqrt();
        // `normalize_or_zero`: a zero or non-finite length gives 0.
        let keep = len2 > 0.0 && inv.is_finite();
        for r in 0..3 {
            out[3 + r][j] = if keep { q[r] * inv } else { 0.0 };
        }
    }
    for (j, (p, nn)) in positions.iter_mut().zip(normals.iter_mut()).enumerate() {
        *p = [out[0][j], out[1][j], out[2][j]];
        *nn = [out[3][j], out[4][j], out[5][j]];
    }
}

/// Renormalise the touched normals and skin the tile's vertices (the reference's functions).
fn finish(
    rig: &RigData,
    t: usize,
    (acc, touched): (&Acc, u64),
    (palette, normal_palette): (&[Mat4], &[Mat3]),
    positions: &mut [[f32; 3]],
    normals: &mut [[f32; 3]],
) {
    let v0 = t * TILE;
    for (j, (p_out, n_out)) in positions.iter_mut().zip(normals.iter_mut()).enumerate() {
        let v = v0 + j;
        let p = [acc[0][j], acc[1][j], acc[2][j]];
        let mut n = [acc[3][j], acc[4][j], acc[5][j]];
        if touched >> j & 1 == 1 {
            n = normalize_or(n, rig.normals[v]);
        }
        (*p_out, *n_out) =
            skin_vertex(p, n, rig.joints[v], rig.weights[v], palette, normal_palette);
    }
}
