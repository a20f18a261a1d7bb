//! The linear head's blend on the CPU: every head's accumulators of one vertex tile
//! += `cₑ·sₑ · B[tile, e]` over the active coefficients — the AVX-512, AVX2 + F16C + FMA and
//! portable kernels, register-blocked over heads (the module doc of [`super`] says how each
//! precision rounds).

use super::{CpuHead, GROUPS, LINE, TILE_VERTICES};
use crate::Precision;

/// One vertex tile's basis for [`blend_tile`]: its lines `(G, E, LINE)` and the coefficients some
/// head uses this frame.
pub(super) struct Tile<'a> {
    pub(super) halves: &'a [u16],
    pub(super) coeffs: usize,
    pub(super) active: &'a [u32],
}

/// Every head's accumulators `acc` `(N, TV)` += `cₑ·sₑ · B[tile, e]` for the active coefficients in
/// ascending order ([`CpuGroup::pose`] says how each precision rounds). Where the CPU has AVX, F16C
/// and FMA the loop is built for them (8 halves widened per instruction, accumulators in
/// registers); else the portable body, which rounds as [`Precision::Exact`] for both precisions (a
/// fast path may be exact).
pub(super) fn blend_tile(
    tile: &Tile,
    heads: &[CpuHead],
    acc: &mut [[f32; 3]],
    precision: Precision,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above), which includes the 16-wide fp16 widening
        // and fused multiply-add the kernel uses.
        unsafe {
            match precision {
                Precision::Exact => blend_tile_512::<false>(tile, heads, acc),
                Precision::Fast => blend_tile_512::<true>(tile, heads, acc),
            }
        }
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the CPU has AVX, F16C and FMA (checked above), all the kernel requires.
        unsafe {
            match precision {
                Precision::Exact => blend_tile_x86::<false>(tile, heads, acc),
                Precision::Fast => blend_tile_x86::<true>(tile, heads, acc),
            }
        }
        return;
    }
    blend_tile_portable(tile, heads, acc);
}

/// [`blend_tile`] for AVX-512F: per line group, up to [`WALK_HEADS_512`] heads at a time, each
/// head's whole line (32 columns) in 2 registers of 16 lanes across every active coefficient —
/// each widened line feeds up to 16 multiply-adds. The same operations per element as
/// [`blend_tile_x86`] (`FUSED` as there), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn blend_tile_512<const FUSED: bool>(tile: &Tile, heads: &[CpuHead], acc: &mut [[f32; 3]]) {
    let width = 3 * TILE_VERTICES;
    let rows: &mut [f32] = bytemuck::cast_slice_mut(acc);
    assert!(rows.len() >= heads.len() * width);
    assert!(tile.halves.len() >= GROUPS * tile.coeffs * LINE);
    for g in 0..GROUPS {
        let lines = &tile.halves[g * tile.coeffs * LINE..(g + 1) * tile.coeffs * LINE];
        for r in even_chunks(heads.len(), WALK_HEADS_512) {
            let hs = &heads[r.clone()];
            let out = &mut rows[r.start * width..r.end * width];
            // SAFETY: the features are this function's; `out` holds the chunk's rows of `width`
            // floats and line group g's 32 columns lie inside each (g < GROUPS = width / 32);
            // `lines` holds E lines of 32 halves and every active e < E.
            unsafe {
                let a = tile.active;
                match hs.len() {
                    1 => walk512::<1, FUSED>(lines, a, heads_of(hs), out, g),
                    2 => walk512::<2, FUSED>(lines, a, heads_of(hs), out, g),
                    3 => walk512::<3, FUSED>(lines, a, heads_of(hs), out, g),
                    4 => walk512::<4, FUSED>(lines, a, heads_of(hs), out, g),
                    5 => walk512::<5, FUSED>(lines, a, heads_of(hs), out, g),
                    6 => walk512::<6, FUSED>(lines, a, heads_of(hs), out, g),
                    7 => walk512::<7, FUSED>(lines, a, heads_of(hs), out, g),
                    _ => walk512::<8, FUSED>(lines, a, heads_of(hs), out, g),
                }
            }
        }
    }
}

/// Heads per [`walk512`]: 8 × 2 accumulators, 2 widened registers and 8 hoisted broadcasts fit
/// AVX-512's 32 registers.
const WALK_HEADS_512: usize = 8;

/// [`walk`] in 16-lane registers: `H` heads × line group `g` (its 32 columns, 2 registers per
/// head) over every active coefficient.
///
/// # Safety
/// The CPU has AVX-512F; `out` holds `H` rows of `3·TV` floats and `g < GROUPS`; `lines` holds
/// `E` lines of [`LINE`] halves with every active `e < E`, and each head's `scaled` has `E`
/// entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn walk512<const H: usize, const FUSED: bool>(
    lines: &[u16],
    active: &[u32],
    heads: [&CpuHead; H],
    out: &mut [f32],
    g: usize,
) {
    use std::arch::x86_64::{
        __m256i, __m512, _mm256_loadu_si256, _mm512_add_ps, _mm512_cvtph_ps, _mm512_fmadd_ps,
        _mm512_loadu_ps, _mm512_mul_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
    };
    let width = 3 * TILE_VERTICES;
    let col = LINE * g;
    let mut a: [[__m512; 2]; H] = [[_mm512_setzero_ps(); 2]; H];
    for (k, ak) in a.iter_mut().enumerate() {
        for (j, x) in ak.iter_mut().enumerate() {
            // SAFETY: row k's columns col + 16j .. +16 lie inside its `width` floats.
            *x = unsafe { _mm512_loadu_ps(out.as_ptr().add(k * width + col + 16 * j)) };
        }
    }
    let scaled: [*const f32; H] = std::array::from_fn(|k| heads[k].scaled.as_ptr());
    for &e in active {
        let e = e as usize;
        // SAFETY: line e lies inside `lines` (the caller's contract).
        let line = unsafe { lines.as_ptr().add(e * LINE) };
        // SAFETY: 16 halves of line e per register.
        let b: [__m512; 2] = std::array::from_fn(|j| unsafe {
            _mm512_cvtph_ps(_mm256_loadu_si256(line.add(16 * j).cast::<__m256i>()))
        });
        for (k, ak) in a.iter_mut().enumerate() {
            // SAFETY: every head's `scaled` has E entries and e < E.
            let sk = unsafe { *scaled[k].add(e) };
            if FUSED {
                let sv = _mm512_set1_ps(sk);
                for (x, bj) in ak.iter_mut().zip(&b) {
                    *x = _mm512_fmadd_ps(sv, *bj, *x);
                }
            } else if sk != 0.0 {
                let sv = _mm512_set1_ps(sk);
                for (x, bj) in ak.iter_mut().zip(&b) {
                    *x = _mm512_add_ps(*x, _mm512_mul_ps(sv, *bj));
                }
            }
        }
    }
    for (k, ak) in a.iter().enumerate() {
        for (j, x) in ak.iter().enumerate() {
            // SAFETY: as for the loads.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(k * width + col + 16 * j), *x) };
        }
    }
}

/// [`blend_tile`] for AVX + F16C + FMA: per line group, two heads at a time, their
/// 2 × 4 accumulator registers live across every active coefficient. `FUSED` false: multiply then add,
/// a head's zero terms skipped (the reference's bits — nothing here contracts an unfused
/// expression); true: one fused multiply-add per term, zero terms included.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c,fma")]
fn blend_tile_x86<const FUSED: bool>(tile: &Tile, heads: &[CpuHead], acc: &mut [[f32; 3]]) {
    let width = 3 * TILE_VERTICES;
    let rows: &mut [f32] = bytemuck::cast_slice_mut(acc);
    assert!(rows.len() >= heads.len() * width);
    assert!(tile.halves.len() >= GROUPS * tile.coeffs * LINE);
    for g in 0..GROUPS {
        let lines = &tile.halves[g * tile.coeffs * LINE..(g + 1) * tile.coeffs * LINE];
        if heads.len() < 3 {
            // One or two heads: a whole line per head (4 registers each).
            let out = &mut rows[..heads.len() * width];
            // SAFETY: the features are this function's; `out` holds the heads' rows of `width`
            // floats and line group g's 32 columns lie inside each (g < GROUPS = width / 32);
            // `lines` holds E lines of 32 halves and every active e < E.
            unsafe {
                match heads {
                    [a] => walk::<1, 4, FUSED>(lines, tile.active, [a], out, g, 0),
                    [a, b] => walk::<2, 4, FUSED>(lines, tile.active, [a, b], out, g, 0),
                    _ => {}
                }
            }
            continue;
        }
        // Three or more: half a line per head (2 registers), up to four heads at once, so each
        // widened half line feeds 8 multiply-adds (two heads of whole lines: 4 widenings for 8).
        // As even a split as WALK_HEADS allows (`even_chunks`).
        for off in [0, LINE / 2] {
            for r in even_chunks(heads.len(), WALK_HEADS) {
                let hs = &heads[r.clone()];
                let out = &mut rows[r.start * width..r.end * width];
                // SAFETY: as above, with columns 32g + off .. + 16 inside each row.
                unsafe {
                    match hs.len() {
                        1 => walk::<1, 2, FUSED>(lines, tile.active, heads_of(hs), out, g, off),
                        2 => walk::<2, 2, FUSED>(lines, tile.active, heads_of(hs), out, g, off),
                        3 => walk::<3, 2, FUSED>(lines, tile.active, heads_of(hs), out, g, off),
                        _ => walk::<4, 2, FUSED>(lines, tile.active, heads_of(hs), out, g, off),
                    }
                }
            }
        }
    }
}

/// Heads per register-blocked walk once a batch has three or more: 4 × 2 accumulators, 2 widened
/// basis registers and the 4 broadcasts the compiler hoists fit AVX's 16 registers (5 or 6 heads
/// spill accumulators to the stack every coefficient).
const WALK_HEADS: usize = 4;

/// `0..n` cut into `⌈n / max⌉` consecutive ranges as even as can be (18 by 4: 3, 4, 3, 4, 4 —
/// sizes differ by at most one, each at most `max`).
fn even_chunks(n: usize, max: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let chunks = n.div_ceil(max);
    (0..chunks).map(move |c| n * c / chunks..n * (c + 1) / chunks)
}

/// The first `H` heads of `hs` (which holds at least `H`) as an array.
fn heads_of<const H: usize>(hs: &[CpuHead]) -> [&CpuHead; H] {
    std::array::from_fn(|k| &hs[k])
}

/// `H` heads × `8R` columns of line group `g` from half `off` of its lines (`R` registers per
/// head) over every active coefficient: accumulators loaded from `out` (`H` rows of `3·TV`
/// floats), blended, stored.
///
/// # Safety
/// The CPU has AVX, F16C and FMA; `out` holds `H` rows of `3·TV` floats, `g < GROUPS` and
/// `off + 8R ≤ LINE`; `lines` holds `E` lines of [`LINE`] halves with every active `e < E`, and
/// each head's `scaled` has `E` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c,fma")]
unsafe fn walk<const H: usize, const R: usize, const FUSED: bool>(
    lines: &[u16],
    active: &[u32],
    heads: [&CpuHead; H],
    out: &mut [f32],
    g: usize,
    off: usize,
) {
    use std::arch::x86_64::{
        __m128i, __m256, _mm_loadu_si128, _mm256_add_ps, _mm256_broadcast_ss, _mm256_cvtph_ps,
        _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let width = 3 * TILE_VERTICES;
    let col = LINE * g + off;
    let mut a: [[__m256; R]; H] = [[_mm256_setzero_ps(); R]; H];
    for (k, ak) in a.iter_mut().enumerate() {
        for (j, x) in ak.iter_mut().enumerate() {
            // SAFETY: row k's columns col + 8j .. +8 lie inside its `width` floats.
            *x = unsafe { _mm256_loadu_ps(out.as_ptr().add(k * width + col + 8 * j)) };
        }
    }
    let scaled: [*const f32; H] = std::array::from_fn(|k| heads[k].scaled.as_ptr());
    for &e in active {
        let e = e as usize;
        // SAFETY: line e lies inside `lines` (the caller's contract).
        let line = unsafe { lines.as_ptr().add(e * LINE + off) };
        // SAFETY: 8 halves of line e per register (off + 8R ≤ LINE).
        let b: [__m256; R] = std::array::from_fn(|j| unsafe {
            _mm256_cvtph_ps(_mm_loadu_si128(line.add(8 * j).cast::<__m128i>()))
        });
        for (k, ak) in a.iter_mut().enumerate() {
            // SAFETY: every head's `scaled` has E entries and e < E.
            let sk = unsafe { &*scaled[k].add(e) };
            if FUSED {
                // One broadcast from memory per head and coefficient.
                let sv = _mm256_broadcast_ss(sk);
                for (x, bj) in ak.iter_mut().zip(&b) {
                    *x = _mm256_fmadd_ps(sv, *bj, *x);
                }
            } else if *sk != 0.0 {
                let sv = _mm256_broadcast_ss(sk);
                for (x, bj) in ak.iter_mut().zip(&b) {
                    *x = _mm256_add_ps(*x, _mm256_mul_ps(sv, *bj));
                }
            }
        }
    }
    for (k, ak) in a.iter().enumerate() {
        for (j, x) in ak.iter().enumerate() {
            // SAFETY: as for the loads.
            unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(k * width + col + 8 * j), *x) };
        }
    }
}

/// The portable [`blend_tile`]: per line group and coefficient, the line widened once and added,
/// scaled, to every head using it — multiply then add, zero terms skipped ([`Precision::Exact`]'s
/// bits).
fn blend_tile_portable(tile: &Tile, heads: &[CpuHead], acc: &mut [[f32; 3]]) {
    use half::slice::HalfFloatSliceExt;
    let width = 3 * TILE_VERTICES;
    let rows: &mut [f32] = bytemuck::cast_slice_mut(acc);
    let mut row = [0.0f32; LINE];
    for g in 0..GROUPS {
        for &e in tile.active {
            let e = e as usize;
            let o = (g * tile.coeffs + e) * LINE;
            let line: &[half::f16] = bytemuck::cast_slice(&tile.halves[o..o + LINE]);
            line.convert_to_f32_slice(&mut row);
            for (h, r) in heads.iter().zip(rows.chunks_exact_mut(width)) {
                let s = h.scaled[e];
                if s == 0.0 {
                    continue;
                }
                for (x, b) in r[LINE * g..LINE * (g + 1)].iter_mut().zip(&row) {
                    *x += s * b;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::even_chunks;

    /// The chunks tile `0..n` in order, ⌈n / max⌉ of them, each of at most `max` and all within
    /// one of each other; 18 heads by 4 as hand-worked in the doc.
    #[test]
    fn even_chunks_tile_the_heads() {
        assert_eq!(
            even_chunks(18, 4).map(|r| r.len()).collect::<Vec<_>>(),
            [3, 4, 3, 4, 4]
        );
        for n in 0..200 {
            for max in 1..12 {
                let rs: Vec<_> = even_chunks(n, max).collect();
                assert_eq!(rs.len(), n.div_ceil(max));
                let mut at = 0;
                for r in &rs {
                    assert_eq!(r.start, at);
                    assert!(!r.is_empty() && r.len() <= max, "{n} {max} {r:?}");
                    at = r.end;
                }
                assert_eq!(at, n);
                let (lo, hi) = rs.iter().fold((usize::MAX, 0), |(l, h), r| {
                    (l.min(r.len()), h.max(r.len()))
                });
                assert!(rs.is_empty() || hi - lo <= 1);
            }
        }
    }
}
