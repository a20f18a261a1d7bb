//! What [`crate::MORPH`] and [`crate::SKIN`] read for N characters sharing one rig
//! (`RigBackend::upload_batch`): the vertex-range chunks that keep every binding — the rig's own
//! arrays and the chunk outputs of all N instances — under the device's limit, and the per-frame
//! arrays of the batch staged on the CPU ([`RigBatchFrames`]: weights `(⌈N/8⌉,W,8)`, palettes
//! `(N,P)`).
//!
//! The same design as the linear-head batch ([`super::gnm`]): the rig's arrays (bind vertices, CSR,
//! skin joints and weights, tints) are uploaded once per chunk whatever N; the instance is the
//! dispatch's z (for the morph pass, blocks of 8 instances); instance i reads its weights from
//! block i/8 and palette entries `[i·P, (i+1)·P)`
//! (each kernel divides the bound array's length by `num_workgroups.z`) and writes its outputs at
//! vertex `i·count` of its chunk's `(N,count,6)` buffers. N = 1 is the single upload.

use mien_core::rig::{ControlStats, FrameControls, RigControls, RigData};

use super::{ENTRY_BYTES, MORPH_TILE_VERTICES, RowTooLarge, VERTEX_BYTES};
use crate::JointMatrices;

/// Bytes per palette entry ([`JointMatrices`]).
pub const JOINT_BYTES: u64 = std::mem::size_of::<JointMatrices>() as u64;

/// Split `rig`, posed as `instances` instances, into vertex ranges `(first, count)` whose rig
/// arrays (per vertex at most [`VERTEX_BYTES`], per CSR entry at most [`ENTRY_BYTES`], per
/// 64-vertex tile `16·W` bytes of slot table, [`super::ChunkArrays::tile_slots`]) and outputs
/// ([`VERTEX_BYTES`] per vertex and instance) each fit `limit` bytes. Ranges are as long as the
/// limit allows, in order, covering every vertex once; `instances = 1` is
/// [`super::plan_chunks`].
///
/// # Errors
/// [`RowTooLarge`] when one vertex's deltas, its outputs for every instance, or one tile's slot
/// table alone exceed the limit.
pub fn plan_rig_chunks(
    rig: &RigData,
    instances: u32,
    limit: u64,
) -> Result<Vec<(u32, u32)>, RowTooLarge> {
    let per_vertex = VERTEX_BYTES * u64::from(instances.max(1));
    let per_tile = 16 * u64::from(rig.weight_count);
    if per_tile > limit && rig.vertex_count() > 0 {
        return Err(RowTooLarge {
            vertex: 0,
            bytes: per_tile,
        });
    }
    let max_tiles = limit.checked_div(per_tile).unwrap_or(u64::MAX);
    let max_v = (limit / per_vertex).min(max_tiles.saturating_mul(u64::from(MORPH_TILE_VERTICES)));
    let max_e = limit / ENTRY_BYTES;
    let nv = rig.vertex_count() as u32;
    let mut out = Vec::new();
    let mut v0 = 0u32;
    while v0 < nv {
        if max_v == 0 {
            return Err(RowTooLarge {
                vertex: v0,
                bytes: per_vertex,
            });
        }
        let e0 = u64::from(rig.morph_offsets[v0 as usize]);
        let mut v1 = v0;
        while v1 < nv
            && u64::from(v1 - v0) < max_v
            && u64::from(rig.morph_offsets[v1 as usize + 1]) - e0 <= max_e
        {
            v1 += 1;
        }
        if v1 == v0 {
            let row =
                u64::from(rig.morph_offsets[v0 as usize + 1] - rig.morph_offsets[v0 as usize]);
            return Err(RowTooLarge {
                vertex: v0,
                bytes: row * ENTRY_BYTES,
            });
        }
        out.push((v0, v1 - v0));
        v0 = v1;
    }
    Ok(out)
}

/// An array of a rig batch upload that does not fit one binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RigOverLimit {
    /// Which array (`the morph weights of 3 instance(s)`, `the data of vertex 7 …`).
    pub what: String,
    /// Its bytes.
    pub needed: u64,
}

/// Check an upload of `rig` as `instances` instances against a binding limit of `limit` bytes and
/// plan its vertex-range chunks ([`plan_rig_chunks`]): the per-instance arrays
/// ([`RigBatchFrames`]: `N·W·4` bytes of weights, `N·P·128` of palettes) must each fit whole.
///
/// # Errors
/// [`RigOverLimit`] naming the first array that does not fit.
pub fn plan_rig_upload(
    rig: &RigData,
    instances: u32,
    limit: u64,
) -> Result<Vec<(u32, u32)>, RigOverLimit> {
    let n = u64::from(instances);
    for (what, needed) in [
        (
            "morph weights",
            n.div_ceil(MORPH_INSTANCE_BLOCK)
                * MORPH_INSTANCE_BLOCK
                * u64::from(rig.weight_count)
                * 4,
        ),
        ("joint palettes", n * rig.palette.len() as u64 * JOINT_BYTES),
    ] {
        if needed > limit {
            return Err(RigOverLimit {
                what: format!("the {what} of {instances} instance(s)"),
                needed,
            });
        }
    }
    plan_rig_chunks(rig, instances, limit).map_err(|r| RigOverLimit {
        what: format!(
            "the data of vertex {} (its morph deltas, its tile's slot table, or its outputs for {instances} instance(s))",
            r.vertex
        ),
        needed: r.bytes,
    })
}

/// Instances one [`crate::MORPH`] invocation blends (its dispatch's z counts blocks of them).
pub const MORPH_INSTANCE_BLOCK: u64 = 8;

/// The per-frame arrays of `N` instances of one rig, staged on the CPU in the layouts
/// [`crate::MORPH`] (`weights`, blocked by 8 instances) and [`crate::SKIN`] (`palette`, N equal
/// slices) read. Allocated once; [`RigBatchFrames::write`] allocates nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct RigBatchFrames {
    /// The limited morph weights, blocked: `(⌈N/8⌉, W, 8)` — instance i's slot t at
    /// `((i/8)·W + t)·8 + i%8`, the padding instances 0 (at least 8 zeros: no empty binding).
    pub weights: Vec<f32>,
    /// Per block of 8 instances its active weight slots `(⌈N/8⌉, W+1)`: the count A, then the A
    /// slots whose weight is non-zero for at least one of the block's instances, ascending (the
    /// rest of the row zero). [`crate::MORPH`] walks only these slots.
    pub active: Vec<u32>,
    /// Per instance the palette matrices with their normal matrices `(N,P)` (one identity entry
    /// when N·P = 0).
    pub palette: Vec<JointMatrices>,
    weight_count: usize,
    palette_len: usize,
    instances: usize,
}

impl RigBatchFrames {
    /// `instances` rest frames of `rig`: zero weights, identity palettes (posed = bind).
    pub fn new(rig: &RigData, instances: usize) -> Self {
        let (w, p) = (rig.weight_count as usize, rig.palette.len());
        let identity = JointMatrices::new(&glam::Mat4::IDENTITY, &glam::Mat3::IDENTITY);
        RigBatchFrames {
            weights: vec![0.0; (Self::blocks_of(instances) * 8 * w).max(8)],
            active: vec![0; Self::blocks_of(instances).max(1) * (w + 1)],
            palette: vec![identity; (instances * p).max(1)],
            weight_count: w,
            palette_len: p,
            instances,
        }
    }

    /// Instances N.
    pub fn instances(&self) -> usize {
        self.instances
    }

    /// Blocks of 8 instances `⌈N/8⌉`: the morph dispatch's z.
    pub fn blocks(&self) -> usize {
        Self::blocks_of(self.instances)
    }

    fn blocks_of(instances: usize) -> usize {
        instances.div_ceil(MORPH_INSTANCE_BLOCK as usize)
    }

    /// Weights per instance W.
    pub fn weight_count(&self) -> usize {
        self.weight_count
    }

    /// Palette entries per instance P.
    pub fn palette_len(&self) -> usize {
        self.palette_len
    }

    /// Stage `frame` (the instance's limited weights, palette and normal matrices, from
    /// [`FrameControls::set`]) as instance `i`. Allocates nothing.
    ///
    /// # Panics
    /// When `i` is not below N or `frame` belongs to a rig of another W or P (a caller bug).
    pub fn write(&mut self, i: usize, frame: &FrameControls) {
        self.write_instance(i, frame);
        let w = self.weight_count;
        list_active(
            &self.weights[(i / 8) * w * 8..(i / 8 + 1) * w * 8],
            &mut self.active[(i / 8) * (w + 1)..(i / 8 + 1) * (w + 1)],
        );
    }

    /// [`RigBatchFrames::write`] without the block's active list.
    fn write_instance(&mut self, i: usize, frame: &FrameControls) {
        assert!(
            i < self.instances
                && frame.weights.len() == self.weight_count
                && frame.palette.len() == self.palette_len
        );
        let (w, p) = (self.weight_count, self.palette_len);
        let block = &mut self.weights[(i / 8) * w * 8..(i / 8 + 1) * w * 8];
        for (t, x) in frame.weights.iter().enumerate() {
            block[t * 8 + i % 8] = *x;
        }
        let slice = &mut self.palette[i * p..(i + 1) * p];
        for ((o, m), n) in slice
            .iter_mut()
            .zip(&frame.palette)
            .zip(&frame.normal_palette)
        {
            *o = JointMatrices::new(m, n);
        }
    }

    /// Stage every instance's frame at once (`frames[i]` as instance i, `frames.len() == N`),
    /// blocks of 8 instances in parallel (rayon): the same values as [`RigBatchFrames::write`] for
    /// each. Allocates nothing.
    ///
    /// # Panics
    /// When `frames` is not N long or a frame belongs to a rig of another W or P (a caller bug).
    pub fn write_all(&mut self, frames: &[FrameControls]) {
        use rayon::prelude::*;
        assert!(frames.len() == self.instances);
        let (w, p) = (self.weight_count, self.palette_len);
        if frames.len() < super::PARALLEL_MIN {
            for (i, f) in frames.iter().enumerate() {
                self.write_instance(i, f);
            }
            // Each block's list once, after its 8 instances (no slots: every list stays empty).
            if w > 0 {
                for (ws, act) in self
                    .weights
                    .chunks(w * MORPH_INSTANCE_BLOCK as usize)
                    .zip(self.active.chunks_mut(w + 1))
                {
                    list_active(ws, act);
                }
            }
            return;
        }
        assert!(
            frames
                .iter()
                .all(|f| f.weights.len() == w && f.palette.len() == p)
        );
        let block = MORPH_INSTANCE_BLOCK as usize;
        if w > 0 {
            // One block's (W, 8) slab and its active list per task.
            self.weights
                .par_chunks_mut(w * block)
                .zip(self.active.par_chunks_mut(w + 1))
                .zip(frames.par_chunks(block))
                .for_each(|((ws, act), fs)| {
                    for (j, f) in fs.iter().enumerate() {
                        for (t, x) in f.weights.iter().enumerate() {
                            ws[t * block + j] = *x;
                        }
                    }
                    list_active(ws, act);
                });
        }
        if p > 0 {
            self.palette
                .par_chunks_mut(p)
                .zip(frames.par_iter())
                .for_each(|(ps, f)| {
                    for ((o, m), n) in ps.iter_mut().zip(&f.palette).zip(&f.normal_palette) {
                        *o = JointMatrices::new(m, n);
                    }
                });
        }
    }

    /// The byte ranges instance `i` writes in the three arrays: `(weights, active, palette)`, each
    /// `(offset, length)` — for the weights its block's whole slab `(W, 8)`, for the active lists
    /// its block's row `(W+1,)`.
    pub fn ranges(&self, i: usize) -> [(u64, u64); 3] {
        let w = 32 * self.weight_count as u64;
        let a = 4 * (self.weight_count as u64 + 1);
        let p = JOINT_BYTES * self.palette_len as u64;
        let i = i as u64;
        [((i / 8) * w, w), ((i / 8) * a, a), (i * p, p)]
    }
}

/// One block's active list from its weights `(W, 8)`: `out[0]` = A, `out[1..=A]` the slots with a
/// non-zero weight (`!= 0.0`, the kernel's own test, so −0.0 is inactive and NaN active)
/// ascending, the rest zero. `out` is `(W+1,)`.
fn list_active(block: &[f32], out: &mut [u32]) {
    let mut n = 0;
    for (t, ws) in block
        .chunks_exact(MORPH_INSTANCE_BLOCK as usize)
        .enumerate()
    {
        if ws.iter().any(|&x| x != 0.0) {
            n += 1;
            out[n] = t as u32;
        }
    }
    out[0] = n as u32;
    out[n + 1..].fill(0);
}

/// Set every instance of a batch at once: instance k's [`FrameControls`] takes
/// `controls[which(k)]` (its counts into `stats[k]`), then all of them are staged
/// ([`RigBatchFrames::write_all`]). Every instance is checked first ([`FrameControls::check`]), so a
/// refusal changes nothing; the instances are then set in parallel (rayon; on the calling thread
/// below [`super::PARALLEL_MIN`] instances).
///
/// # Errors
/// The first instance's refusal, as [`FrameControls::set`].
///
/// # Panics
/// When `stats` or the staged batch is not as long as `frames`, or some `which(k)` is not an index
/// of `controls` (caller bugs: `mien_core::rig::check_batch_args` checks them).
pub fn set_batch(
    frames: &mut [FrameControls],
    staged: &mut RigBatchFrames,
    controls: &[RigControls],
    which: &(dyn Fn(usize) -> usize + Sync),
    stats: &mut [ControlStats],
) -> mien_core::Result<()> {
    use rayon::prelude::*;
    assert!(stats.len() == frames.len());
    for (k, f) in frames.iter().enumerate() {
        f.check(&controls[which(k)])?;
    }
    if frames.len() < super::PARALLEL_MIN {
        for (k, (f, s)) in frames.iter_mut().zip(stats.iter_mut()).enumerate() {
            *s = f.set(&controls[which(k)])?;
        }
        staged.write_all(frames);
        return Ok(());
    }
    frames
        .par_iter_mut()
        .zip(stats.par_iter_mut())
        .enumerate()
        .try_for_each(|(k, (f, s))| {
            *s = f.set(&controls[which(k)])?;
            Ok::<(), mien_core::Error>(())
        })?;
    staged.write_all(frames);
    Ok(())
}
