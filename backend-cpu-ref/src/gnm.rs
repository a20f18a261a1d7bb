//! The CPU linear-head backend: the reference's arithmetic ([`forward::pose`]) for every uploaded
//! head as a blocked pass over vertex tiles that reads each tile's basis once for all the heads of a
//! batch, tiles in parallel, nothing allocated per frame after the first; the instances of a batch
//! share one copy of their pack.

use std::sync::Arc;
use std::time::Instant;

use glam::{Mat4, Quat, Vec3};
use mien_core::gnm::forward::{self, from_row_major};
use mien_core::gnm::frame::check_inputs;
use mien_core::gnm::tiled::BasisTiles;
use mien_core::gnm::{GAZE_DIM, GnmBackend, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_core::{Error, Result};
use rayon::prelude::*;

use crate::CpuEncoder;

#[derive(Debug)]
struct CpuHead {
    /// Index of this head's batch in `CpuGnmBackend::groups`.
    group: usize,
    head_ext: Vec<f32>,
    joint_world: Vec<Mat4>,
    positions: Vec<[f32; 3]>,
    /// Per-frame: scaled coefficients `(E,)`, skin matrices `(J,)`, eye rotations (left, right).
    scaled: Vec<f32>,
    skin: Vec<Mat4>,
    rot: [Quat; 2],
}

impl CpuHead {
    /// This frame's per-head inputs: `cₑ·sₑ`, the eye rotations and the skin matrices.
    fn prepare(&mut self, pack: &GnmPack) -> Result<()> {
        let (coeffs, gaze) = pack.header.head_ext.split(&self.head_ext)?;
        for ((o, c), s) in self.scaled.iter_mut().zip(coeffs).zip(&pack.basis_scale) {
            *o = c * s;
        }
        self.rot = [
            forward::eye_rotation(gaze[0], gaze[1]),
            forward::eye_rotation(gaze[2], gaze[3]),
        ];
        forward::skin_matrices(pack, &self.joint_world, &mut self.skin)
    }
}

/// Vertices per tile of the CPU's blocked basis ([`BasisTiles`]): 384 floats of a coefficient's
/// deltas decoded at once (per-call overheads amortised: 32 → 128 took W4 batch 1 from 5.0 to
/// 3.5 ms on 2 cores), while a tile's accumulators for 16 heads (24 KiB) stay in L1/L2.
const TILE_VERTICES: usize = 128;

/// Heads below which the per-head steps (frame inputs, copying out) run on the calling thread:
/// handing work to rayon's pool from outside it costs tens of microseconds of wake-up.
const SMALL_BATCH: usize = 32;

/// The heads of one `upload_gnm_batch`: one pack (its basis moved into tiles), the heads
/// `first..first + count`, and the blocked pass's scratch.
#[derive(Debug)]
struct CpuGroup {
    /// The pack without its vertex-major basis (`basis` empty; `tiles` holds it).
    pack: Arc<GnmPack>,
    tiles: BasisTiles,
    first: usize,
    count: usize,
    /// Coefficients some head of the group uses this frame (ascending).
    active: Vec<u32>,
    /// Accumulators and results `(T, N, TV)`, metres.
    out: Vec<[f32; 3]>,
}

impl CpuGroup {
    /// Pose every head of the group: per vertex tile (rayon tasks), each active coefficient's
    /// `3·TV` halves are decoded once (SIMD) and added, scaled, to every head's accumulators that
    /// use it — `neutral + Σₑ (cₑ·sₑ)·Bₑ` with coefficients ascending and zero terms skipped, the
    /// reference's operations in the reference's order per vertex, so the same bits — then the eyes,
    /// the seam and the skin with the reference's per-vertex functions.
    fn pose(&mut self, heads: &mut [CpuHead]) {
        let pack = &*self.pack;
        let (v_n, tv, n) = (pack.vertex_count(), TILE_VERTICES, heads.len());
        let width = 3 * tv;
        self.active.clear();
        for e in 0..pack.coeff_count() {
            if heads.iter().any(|h| h.scaled[e] != 0.0) {
                self.active.push(e as u32);
            }
        }
        let centers = pack.eye_positions.map(Vec3::from);
        let bind = from_row_major(&pack.header.bind_transform);
        let (tiles, active, shared) = (&self.tiles, &self.active, &*heads);
        self.out.resize(tiles.tile_count() * n * tv, [0.0; 3]);
        self.out
            .par_chunks_mut(n * tv)
            .enumerate()
            .for_each(|(t, acc)| {
                let v0 = t * tv;
                let vt = (v_n - v0).min(tv);
                for a in acc.chunks_exact_mut(tv) {
                    a[..vt].copy_from_slice(&pack.neutral[v0..v0 + vt]);
                }
                let tile: &[half::f16] = bytemuck::cast_slice(tiles.tile(t));
                blend_tile(
                    &Tile {
                        halves: tile,
                        width,
                        vt,
                        active,
                    },
                    shared,
                    acc,
                );
                for (h, a) in shared.iter().zip(acc.chunks_exact_mut(tv)) {
                    for (j, p) in a[..vt].iter_mut().enumerate() {
                        let v = v0 + j;
                        let q = forward::eyes(pack, v, Vec3::from(*p), &h.rot, &centers);
                        *p = forward::seam_and_skin_vertex(pack, v, q, &h.skin, &bind);
                    }
                }
            });
        let out = &self.out;
        let scatter = |(i, h): (usize, &mut CpuHead)| {
            h.positions.resize(v_n, [0.0; 3]);
            for (t, dst) in h.positions.chunks_mut(tv).enumerate() {
                let src = (t * n + i) * tv;
                dst.copy_from_slice(&out[src..src + dst.len()]);
            }
        };
        // A few heads' copies are cheaper than waking rayon's pool.
        if heads.len() < SMALL_BATCH {
            heads.iter_mut().enumerate().for_each(scatter);
        } else {
            heads.par_iter_mut().enumerate().for_each(scatter);
        }
    }
}

/// One vertex tile's basis for [`blend_tile`]: its halves `(E, width)`, the vertices it holds
/// (`vt ≤ TV`) and the coefficients some head uses this frame.
struct Tile<'a> {
    halves: &'a [half::f16],
    width: usize,
    vt: usize,
    active: &'a [u32],
}

/// Every head's accumulators `acc` `(N, TV)` += `cₑ·sₑ · B[tile, e]` for the active coefficients in
/// ascending order, zero terms skipped (the reference's operations and order, so the same bits).
/// Where the CPU has AVX and F16C the loop is built for them (8 halves widened per instruction, 8
/// floats per multiply and add — never fused, so the bits do not change); else the baseline build
/// with `half`'s slice conversion.
fn blend_tile(tile: &Tile, heads: &[CpuHead], acc: &mut [[f32; 3]]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: the CPU has AVX and F16C (checked on the line above), all it requires.
        unsafe { blend_tile_avx(tile, heads, acc) };
        return;
    }
    blend_tile_body(tile, heads, acc, |src, dst| {
        use half::slice::HalfFloatSliceExt;
        src.convert_to_f32_slice(dst);
    });
}

/// [`blend_tile`] for AVX + F16C, register-blocked: for a group of up to 4 heads and up to 4
/// column blocks of 8 floats, the accumulators stay in registers while the loop runs over every
/// active coefficient (8 halves widened per `vcvtph2ps`, multiply then add — never fused). Each
/// accumulator element still adds its terms in ascending coefficient order and skips a head's zero
/// coefficients, so the bits are the reference's; only the loop nest changed (the accumulators no
/// longer go through L1 for every coefficient). Columns past the last whole block of 8 take the
/// portable body's scalar loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
fn blend_tile_avx(tile: &Tile, heads: &[CpuHead], acc: &mut [[f32; 3]]) {
    let (n, tv) = (3 * tile.vt, TILE_VERTICES);
    let blocks = n / 8;
    for (g, hs) in heads.chunks(4).enumerate() {
        let rows = &mut acc[g * 4 * tv..(g * 4 + hs.len()) * tv];
        let rows: &mut [f32] = bytemuck::cast_slice_mut(rows);
        let mut c = 0;
        // SAFETY: (each call) the CPU has AVX and F16C (this function's features); blocks
        // c..c+C lie in 0..blocks, so every 8-float access is inside a head's first n floats
        // and inside row e of the tile (width ≥ n).
        unsafe {
            match hs.len() {
                1 => {
                    while c + 4 <= blocks {
                        avx_block::<1, 4>(tile, hs, rows, tv, c);
                        c += 4;
                    }
                }
                2 => {
                    while c + 3 <= blocks {
                        avx_block::<2, 3>(tile, hs, rows, tv, c);
                        c += 3;
                    }
                }
                3 => {
                    while c + 2 <= blocks {
                        avx_block::<3, 2>(tile, hs, rows, tv, c);
                        c += 2;
                    }
                }
                _ => {
                    while c + 2 <= blocks {
                        avx_block::<4, 2>(tile, hs, rows, tv, c);
                        c += 2;
                    }
                }
            }
            while c < blocks {
                match hs.len() {
                    1 => avx_block::<1, 1>(tile, hs, rows, tv, c),
                    2 => avx_block::<2, 1>(tile, hs, rows, tv, c),
                    3 => avx_block::<3, 1>(tile, hs, rows, tv, c),
                    _ => avx_block::<4, 1>(tile, hs, rows, tv, c),
                }
                c += 1;
            }
        }
        // The last n % 8 columns: the reference's scalar loop.
        for e in tile.active.iter().map(|&e| e as usize) {
            let row = &tile.halves[e * tile.width..e * tile.width + n];
            for (k, h) in hs.iter().enumerate() {
                let s = h.scaled[e];
                if s == 0.0 {
                    continue;
                }
                let a = &mut rows[k * 3 * tv..k * 3 * tv + n];
                for (x, b) in a[8 * blocks..].iter_mut().zip(&row[8 * blocks..]) {
                    *x += s * b.to_f32();
                }
            }
        }
    }
}

/// `H` heads × `C` column blocks (8 floats each, starting at block `c0`) of [`blend_tile_avx`]:
/// accumulators loaded, every active coefficient applied in order, stored.
///
/// # Safety
/// The CPU has AVX and F16C; blocks `c0 .. c0 + C` are whole blocks of the tile's `3·vt` columns;
/// `rows` holds `H` heads' accumulators at stride `3·tv`; `hs.len() == H`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn avx_block<const H: usize, const C: usize>(
    tile: &Tile,
    hs: &[CpuHead],
    rows: &mut [f32],
    tv: usize,
    c0: usize,
) {
    use std::arch::x86_64::{
        __m128i, __m256, _mm_loadu_si128, _mm256_add_ps, _mm256_cvtph_ps, _mm256_loadu_ps,
        _mm256_mul_ps, _mm256_set1_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let mut a: [[__m256; C]; H] = [[_mm256_setzero_ps(); C]; H];
    for (k, ak) in a.iter_mut().enumerate() {
        for (j, x) in ak.iter_mut().enumerate() {
            // SAFETY: the caller's contract: head k's block c0 + j is inside `rows`.
            *x = unsafe { _mm256_loadu_ps(rows.as_ptr().add(k * 3 * tv + 8 * (c0 + j))) };
        }
    }
    for &e in tile.active {
        let e = e as usize;
        let base = tile.halves.as_ptr().wrapping_add(e * tile.width + 8 * c0);
        let mut b: [__m256; C] = [_mm256_setzero_ps(); C];
        for (j, x) in b.iter_mut().enumerate() {
            // SAFETY: row e's block c0 + j: 8 halves inside the tile (the caller's contract).
            *x = unsafe { _mm256_cvtph_ps(_mm_loadu_si128(base.add(8 * j).cast::<__m128i>())) };
        }
        for (k, ak) in a.iter_mut().enumerate() {
            let s = hs[k].scaled[e];
            if s == 0.0 {
                continue;
            }
            let sv = _mm256_set1_ps(s);
            for (x, bj) in ak.iter_mut().zip(&b) {
                *x = _mm256_add_ps(*x, _mm256_mul_ps(sv, *bj));
            }
        }
    }
    for (k, ak) in a.iter().enumerate() {
        for (j, x) in ak.iter().enumerate() {
            // SAFETY: as for the loads.
            unsafe { _mm256_storeu_ps(rows.as_mut_ptr().add(k * 3 * tv + 8 * (c0 + j)), *x) };
        }
    }
}

#[inline(always)]
fn blend_tile_body(
    tile: &Tile,
    heads: &[CpuHead],
    acc: &mut [[f32; 3]],
    widen: impl Fn(&[half::f16], &mut [f32]),
) {
    let (n, tv) = (3 * tile.vt, TILE_VERTICES);
    let mut row = [0.0f32; 3 * TILE_VERTICES];
    for &e in tile.active {
        let e = e as usize;
        widen(
            &tile.halves[e * tile.width..e * tile.width + n],
            &mut row[..n],
        );
        for (h, a) in heads.iter().zip(acc.chunks_exact_mut(tv)) {
            let s = h.scaled[e];
            if s == 0.0 {
                continue;
            }
            let a: &mut [f32] = bytemuck::cast_slice_mut(&mut a[..tile.vt]);
            for (x, b) in a.iter_mut().zip(&row[..n]) {
                *x += s * b;
            }
        }
    }
}

/// [`GnmBackend`] on the CPU: the reference's arithmetic ([`forward::pose`], the reference every
/// GPU backend is compared against; bit for bit here) as a blocked pass — each batch's basis is
/// re-laid in vertex tiles ([`BasisTiles`]) and every tile's deltas are decoded once per frame for
/// all the batch's heads (rayon tasks over tiles). Holds one copy of each uploaded pack.
#[derive(Debug, Default)]
pub struct CpuGnmBackend {
    heads: Vec<CpuHead>,
    groups: Vec<CpuGroup>,
}

impl CpuGnmBackend {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    fn head(&self, h: GnmHandle) -> Result<&CpuHead> {
        self.heads.get(h.0 as usize).ok_or_else(|| unknown(h))
    }

    fn pack(&self, h: &CpuHead) -> &GnmPack {
        &self.groups[h.group].pack
    }

    /// The posed positions `(V,3)` metres of `head` from the last encode, borrowed.
    ///
    /// # Errors
    /// An unknown handle.
    pub fn posed(&self, head: GnmHandle) -> Result<&[[f32; 3]]> {
        Ok(&self.head(head)?.positions)
    }
}

fn unknown(h: GnmHandle) -> Error {
    Error::Invalid {
        what: "head handle".into(),
        reason: format!("{} was not uploaded to this backend", h.0),
    }
}

impl GnmBackend for CpuGnmBackend {
    type Encoder = CpuEncoder;

    fn upload_gnm_batch(&mut self, pack: &GnmPack, instances: u32) -> Result<Vec<GnmHandle>> {
        if instances == 0 {
            return Err(Error::Invalid {
                what: "head instances".into(),
                reason: "a batch needs at least one instance".into(),
            });
        }
        let first = self.heads.len() as u64;
        if first + u64::from(instances) > u64::from(u32::MAX) {
            return Err(Error::Limit {
                what: "heads in one CPU backend".into(),
                limit: u64::from(u32::MAX),
                found: first + u64::from(instances),
            });
        }
        self.heads
            .try_reserve(instances as usize)
            .map_err(|_| Error::Invalid {
                what: "head batch".into(),
                reason: format!("{instances} instances do not fit in host memory"),
            })?;
        let tiles = BasisTiles::new(pack, TILE_VERTICES);
        let shared = Arc::new(GnmPack {
            basis: Vec::new(),
            ..pack.clone()
        });
        let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
        let group = self.groups.len();
        self.groups.push(CpuGroup {
            pack: shared,
            tiles,
            first: self.heads.len(),
            count: instances as usize,
            active: Vec::with_capacity(pack.coeff_count()),
            out: Vec::new(),
        });
        // Before any frame: rest (zero coefficients and gaze, rest joints) — the neutral at bind.
        Ok((0..instances)
            .map(|_| {
                self.heads.push(CpuHead {
                    group,
                    head_ext: vec![0.0; pack.coeff_count() + GAZE_DIM],
                    joint_world: rest.clone(),
                    positions: Vec::with_capacity(pack.vertex_count()),
                    scaled: vec![0.0; pack.coeff_count()],
                    skin: Vec::with_capacity(rest.len()),
                    rot: [Quat::IDENTITY; 2],
                });
                GnmHandle((self.heads.len() - 1) as u32)
            })
            .collect())
    }

    fn vertex_count(&self, head: GnmHandle) -> u32 {
        self.head(head)
            .map_or(0, |h| self.pack(h).vertex_count() as u32)
    }

    fn set_head_ext(
        &mut self,
        head: GnmHandle,
        head_ext: &[f32],
        joint_world: &[Mat4],
    ) -> Result<()> {
        let h = self
            .heads
            .get_mut(head.0 as usize)
            .ok_or_else(|| unknown(head))?;
        let pack = &self.groups[h.group].pack;
        check_inputs(
            pack.coeff_count(),
            pack.header.joints.len(),
            head_ext,
            joint_world,
        )?;
        h.head_ext.copy_from_slice(head_ext);
        h.joint_world.copy_from_slice(joint_world);
        Ok(())
    }

    fn encode(&mut self, encoder: &mut CpuEncoder) -> Result<()> {
        let start = Instant::now();
        let groups = &self.groups;
        let prepare = |h: &mut CpuHead| h.prepare(&groups[h.group].pack);
        // Per head a few matrices: below SMALL_BATCH heads cheaper than waking rayon's pool.
        if self.heads.len() < SMALL_BATCH {
            self.heads.iter_mut().try_for_each(prepare)?;
        } else {
            self.heads.par_iter_mut().try_for_each(prepare)?;
        }
        for g in &mut self.groups {
            g.pose(&mut self.heads[g.first..g.first + g.count]);
        }
        encoder.rig += start.elapsed();
        Ok(())
    }

    fn read_vertices(&self, head: GnmHandle) -> Result<PosedVertices> {
        let h = self.head(head)?;
        Ok(PosedVertices {
            positions: h.positions.clone(),
            normals: vec![[0.0; 3]; h.positions.len()],
            tangents: Vec::new(),
        })
    }

    fn bytes(&self) -> u64 {
        // Each batch's pack and tiled basis once, plus its scratch and every head's own data.
        let shared: u64 = self
            .groups
            .iter()
            .map(|g| g.pack.byte_len() + g.tiles.byte_len() + g.out.len() as u64 * 12)
            .sum();
        let own: u64 = self
            .heads
            .iter()
            .map(|h| {
                (h.head_ext.len() * 4 + h.joint_world.len() * 64 + h.positions.len() * 12) as u64
            })
            .sum();
        shared + own
    }
}
