//! The CPU linear-head backend: the reference's arithmetic ([`forward::pose`]) for every uploaded
//! head as a blocked pass over vertex tiles that reads each tile's basis once for all the heads of a
//! batch, tiles in parallel, nothing allocated per frame after the first; the instances of a batch
//! share one copy of their pack.

use std::sync::Arc;
use std::time::Instant;

use glam::{Affine3A, Mat3A, Mat4, Quat, Vec3, Vec3A};
use mien_core::gnm::forward::{self, from_row_major};
use mien_core::gnm::frame::check_inputs;
use mien_core::gnm::{GAZE_DIM, GnmBackend, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_core::{Error, Result};
use rayon::prelude::*;

use crate::{CpuEncoder, Precision};

mod blend;
use blend::{Tile, blend_tile};

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
    /// [`Precision::Fast`]'s copies: the skin matrices as affines with the bind transform last
    /// `(J+1,)`, and the eye rotations as matrices.
    affine: Vec<Affine3A>,
    eye: [Mat3A; 2],
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
        forward::skin_matrices(pack, &self.joint_world, &mut self.skin)?;
        self.eye = self.rot.map(Mat3A::from_quat);
        self.affine.clear();
        self.affine
            .extend(self.skin.iter().map(|m| Affine3A::from_mat4(*m)));
        let bind = from_row_major(&pack.header.bind_transform);
        self.affine.push(Affine3A::from_mat4(bind));
        Ok(())
    }
}

/// One vertex's skin for [`Precision::Fast`]: joints into [`CpuHead::affine`] and weights divided
/// by their sum once at upload; a vertex whose weights sum to 0 takes the bind transform (index
/// `J`) with weight 1 — [`forward::seam_and_skin_vertex`]'s cases without its per-frame division.
#[derive(Clone, Copy, Debug)]
struct FastSkin {
    joint: [u32; 4],
    weight: [f32; 4],
}

impl FastSkin {
    /// Every vertex of `pack` `(V,)`.
    fn of(pack: &GnmPack) -> Vec<FastSkin> {
        let bind = pack.header.joints.len() as u32;
        pack.skin_index
            .iter()
            .zip(&pack.skin_weight)
            .map(|(ix, w)| {
                let total: f32 = w.iter().filter(|x| **x != 0.0).sum();
                if total > 0.0 {
                    // A zero weight's joint may be anything (never read by the reference): joint
                    // 0, which every skinned pack has, with weight 0.
                    FastSkin {
                        joint: std::array::from_fn(
                            |k| if w[k] != 0.0 { u32::from(ix[k]) } else { 0 },
                        ),
                        weight: w.map(|x| x / total),
                    }
                } else {
                    FastSkin {
                        joint: [bind, 0, 0, 0],
                        weight: [1.0, 0.0, 0.0, 0.0],
                    }
                }
            })
            .collect()
    }
}

impl FastSkin {
    /// [`CpuGroup::rigid`] of `pack` from its [`FastSkin`]s `skin` `(V,)`.
    fn rigid_tiles(pack: &GnmPack, skin: &[FastSkin]) -> Vec<Option<u32>> {
        let v_n = pack.vertex_count();
        let eye = |v: usize| pack.eye_weights[v] != 0.0 || pack.eye_weights[v_n + v] != 0.0;
        skin.chunks(TILE_VERTICES)
            .enumerate()
            .map(|(t, tile)| {
                let j = tile[0].joint[0];
                let one = |(i, s): (usize, &FastSkin)| {
                    s.joint[0] == j
                        && s.weight == [1.0, 0.0, 0.0, 0.0]
                        && !eye(t * TILE_VERTICES + i)
                };
                tile.iter().enumerate().all(one).then_some(j)
            })
            .collect()
    }
}

/// A rigid tile's finish for [`Precision::Fast`] ([`CpuGroup::rigid`]): the seam, then the one
/// transform `m` — [`finish_fast`] with one joint of weight 1 and no eye.
fn finish_rigid(pack: &GnmPack, v0: usize, ps: &mut [[f32; 3]], m: &Affine3A) {
    match &pack.seam {
        Some(seam) => {
            for (p, s) in ps.iter_mut().zip(&seam[v0..]) {
                *p = m
                    .transform_point3a(Vec3A::from(*p) + Vec3A::from(*s))
                    .to_array();
            }
        }
        None => {
            for p in ps.iter_mut() {
                *p = m.transform_point3a(Vec3A::from(*p)).to_array();
            }
        }
    }
}

/// [`forward::eyes`] then [`forward::seam_and_skin_vertex`] for [`Precision::Fast`]: the eye
/// rotations as matrices, the skin's four terms without branches and its division done at upload
/// ([`FastSkin`]) — the same formulas rounded differently, within the GNM vertex bound.
#[inline(always)]
fn finish_fast(
    pack: &GnmPack,
    v: usize,
    p: Vec3A,
    h: &CpuHead,
    skin: &FastSkin,
    centers: &[Vec3A; 2],
) -> Vec3A {
    let v_n = pack.vertex_count();
    let mut p = p;
    for (i, (eye, c)) in h.eye.iter().zip(centers).enumerate() {
        let w = pack.eye_weights[i * v_n + v];
        if w != 0.0 {
            let turned = *eye * (p - *c) + *c;
            p += w * (turned - p);
        }
    }
    if let Some(s) = &pack.seam {
        p += Vec3A::from(s[v]);
    }
    let mut q = Vec3A::ZERO;
    for k in 0..4 {
        q += skin.weight[k] * h.affine[skin.joint[k] as usize].transform_point3a(p);
    }
    q
}

/// Vertices per tile of the CPU's blocked basis: a tile's accumulators for 16 heads (24 KiB) stay
/// in L1/L2 while every coefficient's deltas of the tile stream past once per frame.
const TILE_VERTICES: usize = 128;

/// Halves per line of [`LineTiles`]: one 64-byte cache line, four AVX registers once widened.
const LINE: usize = 32;

/// Lines per tile row: `3·TV / LINE`.
const GROUPS: usize = 3 * TILE_VERTICES / LINE;

/// Heads below which the per-head steps (frame inputs, copying out) run on the calling thread:
/// handing work to rayon's pool from outside it costs tens of microseconds of wake-up.
const SMALL_BATCH: usize = 32;

/// The basis re-laid for the CPU's register-blocked pass: per vertex tile `t`, per group `g` of
/// [`LINE`] columns (the tile's columns are `3j + axis` for its vertices `j`), per coefficient `e`,
/// one cache line of fp16 bits — `(T, G, E, LINE)`. Walking the coefficients of one group reads
/// consecutive lines (the hardware prefetcher's best case) while that group's accumulators stay in
/// registers; the columns past the last vertex of the last tile are 0.
#[derive(Debug)]
struct LineTiles {
    halves: Vec<u16>,
    coeffs: usize,
    tiles: usize,
}

impl LineTiles {
    /// `pack`'s basis `(V, E, 3)` re-laid. Memory: the basis plus at most one tile of padding.
    fn new(pack: &GnmPack) -> Self {
        let (v_n, e_n) = (pack.vertex_count(), pack.coeff_count());
        let tiles = v_n.div_ceil(TILE_VERTICES);
        let src: &[u16] = bytemuck::cast_slice(&pack.basis);
        let mut halves = vec![0u16; tiles * GROUPS * e_n * LINE];
        for v in 0..v_n {
            let (t, j) = (v / TILE_VERTICES, v % TILE_VERTICES);
            for e in 0..e_n {
                for a in 0..3 {
                    let col = 3 * j + a;
                    let o = ((t * GROUPS + col / LINE) * e_n + e) * LINE + col % LINE;
                    halves[o] = src[(v * e_n + e) * 3 + a];
                }
            }
        }
        Self {
            halves,
            coeffs: e_n,
            tiles,
        }
    }

    /// Tile `t`'s lines `(G, E, LINE)`.
    fn tile(&self, t: usize) -> &[u16] {
        let n = GROUPS * self.coeffs * LINE;
        &self.halves[t * n..(t + 1) * n]
    }

    fn byte_len(&self) -> u64 {
        self.halves.len() as u64 * 2
    }
}

/// The heads of one `upload_gnm_batch`: one pack (its basis moved into lines), the heads
/// `first..first + count`, and the blocked pass's scratch.
#[derive(Debug)]
struct CpuGroup {
    /// The pack without its vertex-major basis (`basis` empty; `lines` holds it).
    pack: Arc<GnmPack>,
    lines: LineTiles,
    first: usize,
    count: usize,
    /// Coefficients some head of the group uses this frame (ascending).
    active: Vec<u32>,
    /// Accumulators and results `(T, N, TV)`, metres.
    out: Vec<[f32; 3]>,
    /// [`Precision::Fast`]'s skin `(V,)`.
    fast_skin: Vec<FastSkin>,
    /// Per vertex tile `(T,)`: the one joint (index into [`CpuHead::affine`]) every vertex of the
    /// tile takes with weight 1 when no vertex of it turns with an eye, else `None` — such a tile
    /// finishes as one transform ([`Precision::Fast`]).
    rigid: Vec<Option<u32>>,
}

impl CpuGroup {
    /// Pose every head of the group: per vertex tile (rayon tasks), per line group, each active
    /// coefficient's line is widened once and added, scaled, to the accumulators of every head
    /// (two heads at a time, held in registers). [`Precision::Exact`]: `neutral + Σₑ (cₑ·sₑ)·Bₑ`
    /// with coefficients ascending and a head's zero terms skipped, multiply then add — the
    /// reference's operations in the reference's order per vertex, so the same bits;
    /// [`Precision::Fast`]: every active term of every head fused into one multiply-add, same
    /// order. Then the eyes, the seam and the skin with the reference's per-vertex functions.
    fn pose(&mut self, heads: &mut [CpuHead], precision: Precision) {
        let pack = &*self.pack;
        let (v_n, tv, n) = (pack.vertex_count(), TILE_VERTICES, heads.len());
        self.active.clear();
        for e in 0..pack.coeff_count() {
            if heads.iter().any(|h| h.scaled[e] != 0.0) {
                self.active.push(e as u32);
            }
        }
        let centers = pack.eye_positions.map(Vec3::from);
        let bind = from_row_major(&pack.header.bind_transform);
        let (lines, active, shared) = (&self.lines, &self.active, &*heads);
        let (fast_skin, rigid) = (&self.fast_skin, &self.rigid);
        self.out.resize(lines.tiles * n * tv, [0.0; 3]);
        self.out
            .par_chunks_mut(n * tv)
            .enumerate()
            .for_each(|(t, acc)| {
                let v0 = t * tv;
                let vt = (v_n - v0).min(tv);
                for a in acc.chunks_exact_mut(tv) {
                    a[..vt].copy_from_slice(&pack.neutral[v0..v0 + vt]);
                    // Padding columns: 0 (their basis is 0), never read out.
                    a[vt..].fill([0.0; 3]);
                }
                let tile = Tile {
                    halves: lines.tile(t),
                    coeffs: lines.coeffs,
                    active,
                };
                blend_tile(&tile, shared, acc, precision);
                if let (Precision::Fast, Some(j)) = (precision, rigid[t]) {
                    for (h, a) in shared.iter().zip(acc.chunks_exact_mut(tv)) {
                        finish_rigid(pack, v0, &mut a[..vt], &h.affine[j as usize]);
                    }
                    return;
                }
                if precision == Precision::Fast {
                    let c = centers.map(Vec3A::from);
                    for (h, a) in shared.iter().zip(acc.chunks_exact_mut(tv)) {
                        for (j, p) in a[..vt].iter_mut().enumerate() {
                            let v = v0 + j;
                            let q = finish_fast(pack, v, Vec3A::from(*p), h, &fast_skin[v], &c);
                            *p = q.to_array();
                        }
                    }
                    return;
                }
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

/// [`GnmBackend`] on the CPU: the reference's arithmetic ([`forward::pose`], the reference every
/// GPU backend is compared against; bit for bit here) as a blocked pass — each batch's basis is
/// re-laid in vertex tiles (`LineTiles`) and every tile's deltas are decoded once per frame for
/// all the batch's heads (rayon tasks over tiles). Holds one copy of each uploaded pack.
#[derive(Debug, Default)]
pub struct CpuGnmBackend {
    heads: Vec<CpuHead>,
    groups: Vec<CpuGroup>,
    precision: Precision,
}

impl CpuGnmBackend {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// How the forward pass rounds from the next encode on: [`Precision::Exact`] (the default, the
    /// reference's bits) or [`Precision::Fast`] (fused multiply-adds, within
    /// `conformance::gnm::vertex_bounds` of the reference — the bound every GPU backend's exact
    /// path is held to; Higham 2002 §3.1).
    pub fn set_precision(&mut self, precision: Precision) {
        self.precision = precision;
    }

    /// The precision set by [`Self::set_precision`].
    pub fn precision(&self) -> Precision {
        self.precision
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
        let lines = LineTiles::new(pack);
        let fast_skin = FastSkin::of(pack);
        let shared = Arc::new(GnmPack {
            basis: Vec::new(),
            ..pack.clone()
        });
        let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
        let group = self.groups.len();
        self.groups.push(CpuGroup {
            pack: shared,
            lines,
            first: self.heads.len(),
            count: instances as usize,
            active: Vec::with_capacity(pack.coeff_count()),
            out: Vec::new(),
            rigid: FastSkin::rigid_tiles(pack, &fast_skin),
            fast_skin,
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
                    affine: Vec::with_capacity(rest.len() + 1),
                    eye: [Mat3A::IDENTITY; 2],
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
            g.pose(&mut self.heads[g.first..g.first + g.count], self.precision);
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
            .map(|g| g.pack.byte_len() + g.lines.byte_len() + g.out.len() as u64 * 12)
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
