//! The expression basis re-laid out for blocked kernels: vertex tiles, each coefficient's deltas of a
//! tile contiguous.
//!
//! A pack stores its basis vertex-major, `(V,E,3)` fp16 (seed 000's layout, what `.aosrig` keeps).
//! A kernel that poses many characters sharing one pack wants the opposite: for a tile of `TV`
//! vertices and one coefficient `e`, the `3·TV` halves `B[v₀..v₀+TV, e, 0..3]` next to each other,
//! so the tile's deltas for `e` are read once (one 16-byte load per 8 halves on the GPU, one SIMD
//! conversion on the CPU) and applied to every character's `cₑ·sₑ`. That is a GEMM of the
//! coefficients `(N,E)` with the basis `(E,3V)`, blocked by vertex tile.
//!
//! Layout: `(T, E, 3·TV)` halves, `T = ⌈V/TV⌉`; the last tile's missing vertices are zero halves.
//! The values are the pack's halves exactly (a permutation plus zero padding), so every kernel over
//! it can keep the reference's per-vertex summation order (coefficients ascending).

use super::pack::GnmPack;

/// The basis `(T,E,3·TV)` fp16 bits (see the module doc), built once per upload.
#[derive(Debug, Clone, PartialEq)]
pub struct BasisTiles {
    /// Vertices per tile `TV`.
    pub tile_vertices: usize,
    /// Coefficients `E`.
    pub coeffs: usize,
    /// Vertices `V` (the last tile may be partly padding).
    pub vertex_count: usize,
    /// The halves, `(T,E,3·TV)`.
    pub halves: Vec<u16>,
}

impl BasisTiles {
    /// Re-lay `pack`'s basis in tiles of `tile_vertices` vertices (clamped to at least 1).
    /// Memory: `T·E·3·TV` halves — the basis plus at most one tile of padding.
    pub fn new(pack: &GnmPack, tile_vertices: usize) -> Self {
        let tv = tile_vertices.max(1);
        let (v_n, e_n) = (pack.vertex_count(), pack.coeff_count());
        let tiles = v_n.div_ceil(tv);
        let width = 3 * tv;
        let src: &[u16] = bytemuck::cast_slice(&pack.basis);
        let mut halves = vec![0u16; tiles * e_n * width];
        for v in 0..v_n {
            let (t, j) = (v / tv, v % tv);
            let row = &src[v * e_n * 3..(v + 1) * e_n * 3];
            for (e, b) in row.chunks_exact(3).enumerate() {
                let o = (t * e_n + e) * width + 3 * j;
                halves[o..o + 3].copy_from_slice(b);
            }
        }
        Self {
            tile_vertices: tv,
            coeffs: e_n,
            vertex_count: v_n,
            halves,
        }
    }

    /// Tiles `T = ⌈V/TV⌉`.
    pub fn tile_count(&self) -> usize {
        self.vertex_count.div_ceil(self.tile_vertices)
    }

    /// Halves per tile row (one coefficient): `3·TV`.
    pub fn width(&self) -> usize {
        3 * self.tile_vertices
    }

    /// Tile `t`'s halves `(E,3·TV)`; empty past the last tile.
    pub fn tile(&self, t: usize) -> &[u16] {
        let n = self.coeffs * self.width();
        self.halves.get(t * n..(t + 1) * n).unwrap_or(&[])
    }

    /// Bytes held.
    pub fn byte_len(&self) -> u64 {
        self.halves.len() as u64 * 2
    }
}
