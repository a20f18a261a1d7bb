//! What [`crate::GNM`] and [`crate::SKIN`] read for a linear head, built from a [`GnmPack`]: the
//! vertex-range chunks that keep every binding under the device's limit, each chunk's arrays (the
//! basis in vertex tiles, [`BasisTiles`]), and the per-frame arrays of a batch of instances sharing the pack
//! ([`GnmBatchFrames`], from one [`GnmFrame`] per instance).
//!
//! The skinning reuses the morph path's kernel and data layout as is: the forward pass writes
//! `skin.wgsl`'s `(V,6)` input, the pack's u16 indices and f16 weights become its `(V,4)` u32 / f32
//! arrays here, and the palette holds per instance the J skin matrices plus one entry for `bind`
//! (see [`gnm_skin`]).

use glam::Mat4;
use mien_core::gnm::tiled::BasisTiles;
use mien_core::gnm::{GnmFrame, GnmPack};
use mien_core::rig::skin::normal_matrix;

use super::RowTooLarge;
use super::VERTEX_BYTES;
use crate::{GnmFrameHeader, JointMatrices};

/// Bytes per vertex of the largest per-vertex array besides the basis (neutral, seam and eye
/// weights: two `vec4<f32>`).
pub const GNM_STATIC_BYTES: u64 = 32;

/// The largest binding the plan uses, whatever the device allows: 2 GiB keeps every index the
/// kernels compute (halves, `6·v`) inside `u32`.
pub const GNM_MAX_BINDING: u64 = 1 << 31;

/// Bytes per vertex and instance of the head-local and posed arrays (`(V,6)` f32 each).
pub const GNM_OUTPUT_BYTES: u64 = VERTEX_BYTES;

/// Tiles one chunk may hold at most: the y dimension of its dispatch ([`crate::gnm_dispatch`]),
/// 65,535 being WebGPU's minimum per-dimension workgroup limit.
pub const GNM_MAX_CHUNK_TILES: u64 = 65_535;

/// Split `vertices` vertices of a pack with `coeffs` coefficients, posed as `instances` instances,
/// into ranges `(first, count)` of whole tiles ([`crate::GNM_TILE_VERTICES`]; only the last range
/// may end inside a tile) whose tiled basis (`6·E·TV` bytes per tile), static arrays
/// ([`GNM_STATIC_BYTES`] per vertex) and outputs ([`GNM_OUTPUT_BYTES`] per vertex and instance) each
/// fit `limit` bytes (capped at [`GNM_MAX_BINDING`]), at most [`GNM_MAX_CHUNK_TILES`] tiles each.
/// Ranges are as long as the limit allows, in order, covering every vertex once.
///
/// # Errors
/// [`RowTooLarge`] (at vertex 0, the bytes of one tile) when one tile's basis, static data or
/// outputs for every instance alone exceed the limit.
pub fn plan_gnm_chunks(
    vertices: u32,
    coeffs: u32,
    instances: u32,
    limit: u64,
) -> Result<Vec<(u32, u32)>, RowTooLarge> {
    let limit = limit.min(GNM_MAX_BINDING);
    let tv = u64::from(crate::GNM_TILE_VERTICES);
    let tile_basis = 6 * u64::from(coeffs.max(1)) * tv;
    let tile_vertex = tv * GNM_STATIC_BYTES.max(GNM_OUTPUT_BYTES * u64::from(instances.max(1)));
    let fit = (limit / tile_basis)
        .min(limit / tile_vertex)
        .min(GNM_MAX_CHUNK_TILES);
    if fit == 0 {
        return Err(RowTooLarge {
            vertex: 0,
            bytes: tile_basis.max(tile_vertex),
        });
    }
    let step = fit * tv;
    Ok((0..u64::from(vertices))
        .step_by(step as usize)
        .map(|v0| (v0 as u32, (u64::from(vertices) - v0).min(step) as u32))
        .collect())
}

/// The arrays of one chunk, in the layouts `gnm.wgsl` and `skin.wgsl` read.
#[derive(Clone, Debug, PartialEq)]
pub struct GnmChunkArrays {
    /// The chunk's tiles of the basis ([`BasisTiles`] with [`crate::GNM_TILE_VERTICES`]): `(T,E,192)`
    /// halves as words (low half first), the pack's halves permuted plus zero padding.
    pub basis: Vec<u32>,
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
/// `bind` (`gnm_palette`), as the reference poses it with `bind`.
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

/// The arrays of vertices `first .. first + count` of `pack`, the basis taken from `tiles` (the
/// pack's [`BasisTiles`] with [`crate::GNM_TILE_VERTICES`] vertices per tile).
///
/// # Panics
/// When the range leaves the pack, `first` does not start a tile, or `tiles` has another tile size
/// (caller bugs: ranges come from [`plan_gnm_chunks`]).
pub fn gnm_chunk_arrays(
    pack: &GnmPack,
    tiles: &BasisTiles,
    first: u32,
    count: u32,
) -> GnmChunkArrays {
    let tv = crate::GNM_TILE_VERTICES as usize;
    assert!(tiles.tile_vertices == tv && (first as usize).is_multiple_of(tv));
    let nv = pack.vertex_count();
    let (a, b) = (first as usize, (first + count) as usize);
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
    let per_tile = tiles.coeffs * tiles.width();
    let halves = &tiles.halves[a / tv * per_tile..b.div_ceil(tv) * per_tile];
    GnmChunkArrays {
        basis: bytemuck::pod_collect_to_vec(halves),
        statics,
        joints,
        weights,
    }
}

/// The per-frame arrays of `N` instances of one pack, staged on the CPU in the layouts
/// [`crate::GNM`] (`heads`, `scaled`) and [`crate::SKIN`] (`palette`, N equal slices) read.
/// Allocated once; [`GnmBatchFrames::write`] allocates nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct GnmBatchFrames {
    /// Per instance the eye rotations and centres `(N,)`.
    pub heads: Vec<GnmFrameHeader>,
    /// Per instance the scaled coefficients `(N,E)` (one 0 when E = 0: no empty binding).
    pub scaled: Vec<f32>,
    /// Per instance the J skin matrices then `bind` (entry J, for vertices without skin weights,
    /// [`gnm_skin`]), each with its normal matrix: `(N,J+1)`.
    pub palette: Vec<JointMatrices>,
    coeffs: usize,
    joints: usize,
}

impl GnmBatchFrames {
    /// `instances` copies of `frame` (the rest frame of a fresh upload).
    pub fn new(frame: &GnmFrame, instances: usize) -> Self {
        let (coeffs, joints) = (frame.coeff_count(), frame.joint_count());
        let mut b = GnmBatchFrames {
            heads: vec![GnmFrameHeader::default(); instances],
            scaled: vec![0.0; (instances * coeffs).max(1)],
            palette: vec![JointMatrices::default(); instances * (joints + 1)],
            coeffs,
            joints,
        };
        for i in 0..instances {
            b.write(i, frame);
        }
        b
    }

    /// Instances N.
    pub fn instances(&self) -> usize {
        self.heads.len()
    }

    /// Palette entries per instance (J + 1).
    pub fn palette_len(&self) -> usize {
        self.joints + 1
    }

    /// Coefficients per instance (E).
    pub fn coeff_count(&self) -> usize {
        self.coeffs
    }

    /// Stage `frame` as instance `i`: its eye rotations (column-major, each column padded to a
    /// `vec4`) and centres, its scaled coefficients, its skin matrices and `bind`. Allocates nothing.
    ///
    /// # Panics
    /// When `i` is not below N or `frame` has another E or J (a caller bug).
    pub fn write(&mut self, i: usize, frame: &GnmFrame) {
        assert!(frame.coeff_count() == self.coeffs && frame.joint_count() == self.joints);
        self.heads[i] = header(frame);
        self.scaled[i * self.coeffs..(i + 1) * self.coeffs].copy_from_slice(&frame.scaled);
        let p = self.palette_len();
        fill_palette(&mut self.palette[i * p..(i + 1) * p], frame);
    }

    /// Stage every instance's frame at once (`frames[i]` as instance i, `frames.len() == N`),
    /// instances in parallel (rayon): the same values as [`GnmBatchFrames::write`] for each.
    /// Allocates nothing.
    ///
    /// # Panics
    /// When `frames` is not N long or a frame has another E or J (a caller bug).
    pub fn write_all(&mut self, frames: &[GnmFrame]) {
        use rayon::prelude::*;
        assert!(frames.len() == self.instances());
        if frames.len() < super::PARALLEL_MIN {
            for (i, f) in frames.iter().enumerate() {
                self.write(i, f);
            }
            return;
        }
        let (e, p) = (self.coeffs, self.palette_len());
        assert!(
            frames
                .iter()
                .all(|f| f.coeff_count() == e && f.joint_count() == self.joints)
        );
        self.heads
            .par_iter_mut()
            .zip(self.palette.par_chunks_mut(p))
            .zip(frames.par_iter())
            .for_each(|((h, pal), f)| {
                *h = header(f);
                fill_palette(pal, f);
            });
        if e > 0 {
            self.scaled
                .par_chunks_mut(e)
                .zip(frames.par_iter())
                .for_each(|(s, f)| s.copy_from_slice(&f.scaled));
        }
    }

    /// The byte ranges of instance `i` in the three arrays: `(heads, scaled, palette)`, each
    /// `(offset, length)`.
    pub fn ranges(&self, i: usize) -> [(u64, u64); 3] {
        let h = std::mem::size_of::<GnmFrameHeader>() as u64;
        let s = 4 * self.coeffs as u64;
        let p = std::mem::size_of::<JointMatrices>() as u64 * self.palette_len() as u64;
        let i = i as u64;
        [(i * h, h), (i * s, s), (i * p, p)]
    }
}

/// One instance's eye header: its eye rotations (column-major, each column padded to a `vec4`)
/// and centres.
fn header(frame: &GnmFrame) -> GnmFrameHeader {
    let col = |m: &glam::Mat3, c: usize| {
        let c = m.col(c);
        [c.x, c.y, c.z, 0.0]
    };
    let [l, r] = &frame.eye_rotation;
    let [cl, cr] = frame.eye_centres;
    GnmFrameHeader {
        eye_rot_l: [col(l, 0), col(l, 1), col(l, 2)],
        eye_rot_r: [col(r, 0), col(r, 1), col(r, 2)],
        eye_centre_l: [cl.x, cl.y, cl.z, 0.0],
        eye_centre_r: [cr.x, cr.y, cr.z, 0.0],
    }
}

/// One instance's palette `(J+1,)`: its skin matrices, then `bind` (entry J), each with its
/// normal matrix.
fn fill_palette(slice: &mut [JointMatrices], frame: &GnmFrame) {
    let entry = |m: &Mat4| JointMatrices::new(m, &normal_matrix(m));
    for (o, m) in slice.iter_mut().zip(&frame.skin) {
        *o = entry(m);
    }
    if let Some(last) = slice.last_mut() {
        *last = entry(&frame.bind);
    }
}

/// An array of a linear-head upload that does not fit one binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GnmOverLimit {
    /// Which array (`the joint palette array of 3 instance(s)`, `the basis row of vertex 0 …`).
    pub what: String,
    /// Its bytes.
    pub needed: u64,
}

/// Check an upload of `pack` as `instances` instances against a binding limit of `limit` bytes and
/// plan its vertex-range chunks ([`plan_gnm_chunks`]): the per-instance arrays
/// ([`GnmBatchFrames`]: `N·128` bytes of eye frames, `N·E·4` of coefficients, `N·(J+1)·128` of
/// palettes) must each fit whole.
///
/// # Errors
/// [`GnmOverLimit`] naming the first array that does not fit.
pub fn plan_gnm_upload(
    pack: &GnmPack,
    instances: u32,
    limit: u64,
) -> Result<Vec<(u32, u32)>, GnmOverLimit> {
    let n = u64::from(instances);
    let e = pack.coeff_count() as u64;
    let j = pack.header.joints.len() as u64;
    let joint = std::mem::size_of::<JointMatrices>() as u64;
    let header = std::mem::size_of::<GnmFrameHeader>() as u64;
    for (what, needed) in [
        ("eye frame", n * header),
        ("scaled coefficient", (n * e * 4).max(4)),
        ("joint palette", n * (j + 1) * joint),
    ] {
        if needed > limit.min(GNM_MAX_BINDING) {
            return Err(GnmOverLimit {
                what: format!("the {what} array of {instances} instance(s)"),
                needed,
            });
        }
    }
    plan_gnm_chunks(pack.vertex_count() as u32, e as u32, instances, limit).map_err(|r| {
        GnmOverLimit {
            what: format!(
                "one {}-vertex tile ({e} coefficients, {instances} instance(s))",
                crate::GNM_TILE_VERTICES
            ),
            needed: r.bytes,
        }
    })
}

/// Batches whose coefficients number at least this many check them in parallel (a 256-instance
/// batch of W4's 383 coefficients is ~100,000 values: more than a round trip through rayon's pool
/// on one core); smaller ones on the calling thread.
const CHECK_PARALLEL_VALUES: usize = 1 << 15;

/// Set every instance of a batch at once: instance k's [`GnmFrame`] takes `input(k)` =
/// `(head_ext, joint_world)`, then all of them are staged ([`GnmBatchFrames::write_all`]). Every
/// input is checked first (`mien_core::gnm::frame::check_inputs`), so a refusal changes nothing;
/// the instances are then set in parallel (rayon; on the calling thread below
/// [`super::PARALLEL_MIN`] instances).
///
/// # Errors
/// The first instance's refusal, as [`GnmFrame::set`].
pub fn set_gnm_batch<'i>(
    frames: &mut [GnmFrame],
    staged: &mut GnmBatchFrames,
    input: &(dyn Fn(usize) -> (&'i [f32], &'i [Mat4]) + Sync + 'i),
) -> mien_core::Result<()> {
    use rayon::prelude::*;
    let check = |k: usize, f: &GnmFrame| {
        let (head_ext, joint_world) = input(k);
        mien_core::gnm::frame::check_inputs(f.coeff_count(), f.joint_count(), head_ext, joint_world)
    };
    let values = frames.first().map_or(0, |f| f.coeff_count() + 4) * frames.len();
    if frames.len() < super::PARALLEL_MIN || values < CHECK_PARALLEL_VALUES {
        for (k, f) in frames.iter().enumerate() {
            check(k, f)?;
        }
    } else {
        // Every instance checked before any is set; the first refusal in instance order is the
        // one reported.
        let first_bad = frames
            .par_iter()
            .enumerate()
            .filter_map(|(k, f)| check(k, f).err().map(|e| (k, e)))
            .min_by_key(|(k, _)| *k);
        if let Some((_, e)) = first_bad {
            return Err(e);
        }
    }
    if frames.len() < super::PARALLEL_MIN {
        for (k, f) in frames.iter_mut().enumerate() {
            let (head_ext, joint_world) = input(k);
            f.set(head_ext, joint_world)?;
        }
        staged.write_all(frames);
        return Ok(());
    }
    // One rayon pass setting and staging each instance (every pass is a round trip through the
    // pool: a wake-up of its sleeping workers, tens of µs on a virtual machine).
    let (e, p) = (staged.coeffs, staged.palette_len());
    assert!(
        frames.len() == staged.instances()
            && frames
                .iter()
                .all(|f| f.coeff_count() == e && f.joint_count() == staged.joints)
    );
    let set = |k: usize,
               f: &mut GnmFrame,
               h: &mut GnmFrameHeader,
               pal: &mut [JointMatrices],
               s: &mut [f32]| {
        let (head_ext, joint_world) = input(k);
        f.set(head_ext, joint_world)?;
        *h = header(f);
        fill_palette(pal, f);
        s.copy_from_slice(&f.scaled);
        Ok::<(), mien_core::Error>(())
    };
    let heads = frames
        .par_iter_mut()
        .zip(staged.heads.par_iter_mut())
        .zip(staged.palette.par_chunks_mut(p))
        .enumerate();
    if e > 0 {
        heads
            .zip(staged.scaled.par_chunks_mut(e))
            .try_for_each(|((k, ((f, h), pal)), s)| set(k, f, h, pal, s))
    } else {
        heads.try_for_each(|(k, ((f, h), pal))| set(k, f, h, pal, &mut []))
    }
}
