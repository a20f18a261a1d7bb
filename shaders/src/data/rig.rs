//! What [`crate::MORPH`] and [`crate::SKIN`] read for N characters sharing one rig
//! (`RigBackend::upload_batch`): the vertex-range chunks that keep every binding — the rig's own
//! arrays and the chunk outputs of all N instances — under the device's limit, and the per-frame
//! arrays of the batch staged on the CPU ([`RigBatchFrames`]: per block of 8 instances its active
//! slots and their weights, packed; palettes `(N,P)`).
//!
//! The same design as the linear-head batch ([`super::gnm`]): the rig's arrays (bind vertices, CSR,
//! skin joints and weights, tints) are uploaded once per chunk whatever N; the instance is the
//! dispatch's z (for the morph pass, blocks of 8 instances); instance i reads its weights from
//! block i/8's packed list and palette entries `[i·P, (i+1)·P)`
//! (each kernel divides the bound array's length by `num_workgroups.z`) and writes its outputs at
//! vertex `i·count` of its chunk's `(N,count,6)` buffers. N = 1 is the single upload.

use mien_core::rig::{ControlStats, FrameControls, RigControls, RigData};

use super::{ENTRY_BYTES, MORPH_TILE_VERTICES, RowTooLarge, SKIN_WORD_BYTES, VERTEX_BYTES};
use crate::JointMatrices;

/// Bytes per vertex of a base tangent, and per vertex and instance of [`crate::TANGENT`]'s output.
pub const TANGENT_VERTEX_BYTES: u64 = 16;

/// Bytes per palette entry ([`JointMatrices`]).
pub const JOINT_BYTES: u64 = std::mem::size_of::<JointMatrices>() as u64;

/// Split `rig`, posed as `instances` instances, into vertex ranges `(first, count)` whose rig
/// arrays (per vertex at most [`VERTEX_BYTES`], per CSR entry at most [`ENTRY_BYTES`], per
/// 64-vertex tile `16·W` bytes of slot table, [`super::ChunkArrays::tile_slots`]; for a rig that
/// carries tangents [`crate::TANGENT`]'s `16·V + 12·nnz` bytes of data and `4·(V + 1 + nnz)` of
/// index) and outputs ([`VERTEX_BYTES`] per vertex and instance) each fit `limit` bytes. Ranges are as long as the
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
    // Rigs without tangents bind joints and weights interleaved ([`super::skin_words`], 32 bytes a
    // vertex) to the fused morph-and-skin entry: a larger per-vertex array than one instance's
    // outputs.
    let skin_words = if rig.tangents.is_empty() {
        SKIN_WORD_BYTES
    } else {
        0
    };
    let per_vertex = (VERTEX_BYTES * u64::from(instances.max(1))).max(skin_words);
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
    let tangents = !rig.tangents.is_empty();
    // [`crate::TANGENT`]'s two arrays: 16 bytes per vertex + 12 per entry, and 4 per vertex (+ 4)
    // + 4 per entry.
    let tangent_fits = |nv: u64, ne: u64| {
        !tangents || (TANGENT_VERTEX_BYTES * nv + 12 * ne <= limit && 4 * (nv + 1 + ne) <= limit)
    };
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
            && tangent_fits(
                u64::from(v1 - v0 + 1),
                u64::from(rig.morph_offsets[v1 as usize + 1]) - e0,
            )
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
    /// Which array (`the morph weight array of 3 instance(s)`, `the data of vertex 7 …`).
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
            "morph weight",
            n.div_ceil(MORPH_INSTANCE_BLOCK)
                * MORPH_INSTANCE_BLOCK
                * u64::from(rig.weight_count)
                * 4,
        ),
        (
            "active slot list",
            (n.div_ceil(MORPH_INSTANCE_BLOCK) * (u64::from(rig.weight_count) + 1) + 1) * 4,
        ),
        ("joint palette", n * rig.palette.len() as u64 * JOINT_BYTES),
        ("dense weight", n * u64::from(rig.weight_count) * 4),
    ] {
        if needed > limit {
            return Err(RigOverLimit {
                what: format!("the {what} array of {instances} instance(s)"),
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
/// [`crate::MORPH`] (the active slots and their weights, packed per block of 8 instances) and
/// [`crate::SKIN`] (`palette`, N equal slices) read. Allocated once; nothing here allocates per
/// frame.
///
/// Writing an instance ([`RigBatchFrames::write`], [`RigBatchFrames::write_all`]) copies its
/// limited weights into its dense row; [`RigBatchFrames::pack`] then lists, per block, the slots
/// with a non-zero weight for one of its 8 instances and packs those slots' 8 weights: the GPU
/// receives `4·(⌈N/8⌉ + 1) + 36·A` bytes of morph controls for A active (block, slot) pairs instead
/// of `32·W` per block.
#[derive(Clone, Debug, PartialEq)]
pub struct RigBatchFrames {
    /// Per instance its limited weights `(N, W)`, rig slot order (the rows [`RigBatchFrames::pack`]
    /// reads).
    rows: Vec<f32>,
    /// Packed active slots, written by [`RigBatchFrames::pack`]: the block offsets `(⌈N/8⌉+1,)`
    /// (block b's slots are entries `off[b] .. off[b+1]` of the list), then the list `(A,)` — per
    /// block the slots with a non-zero weight (`!= 0.0`, the kernel's own test: −0.0 is inactive,
    /// NaN active) for one of its instances, ascending. [`crate::MORPH`] walks only these slots.
    pub active: Vec<u32>,
    /// The 8 weights of each listed slot `(A, 8)`, instance `8b + j` in lane j (0 past N).
    pub weights: Vec<f32>,
    /// Per instance the palette matrices with their normal matrices `(N,P)` (one identity entry
    /// when N·P = 0).
    pub palette: Vec<JointMatrices>,
    /// Per block its list and weights, before packing: `(⌈N/8⌉, W)` slots and `(⌈N/8⌉, W, 8)`
    /// weights, the first `counts[b]` of each block used.
    scratch_slots: Vec<u32>,
    scratch_weights: Vec<f32>,
    counts: Vec<u32>,
    weight_count: usize,
    palette_len: usize,
    instances: usize,
}

impl RigBatchFrames {
    /// `instances` rest frames of `rig`: zero weights, identity palettes (posed = bind), packed.
    pub fn new(rig: &RigData, instances: usize) -> Self {
        let (w, p) = (rig.weight_count as usize, rig.palette.len());
        let identity = JointMatrices::new(&glam::Mat4::IDENTITY, &glam::Mat3::IDENTITY);
        let blocks = Self::blocks_of(instances);
        let mut f = RigBatchFrames {
            rows: vec![0.0; instances * w],
            active: Vec::with_capacity(Self::active_capacity_of(blocks, w)),
            weights: Vec::with_capacity(Self::weights_capacity_of(blocks, w)),
            palette: vec![identity; (instances * p).max(1)],
            scratch_slots: vec![0; blocks * w],
            scratch_weights: vec![0.0; blocks * w * 8],
            counts: vec![0; blocks],
            weight_count: w,
            palette_len: p,
            instances,
        };
        f.pack();
        f
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

    fn active_capacity_of(blocks: usize, w: usize) -> usize {
        blocks + 1 + blocks * w
    }

    fn weights_capacity_of(blocks: usize, w: usize) -> usize {
        (blocks * w * 8).max(8)
    }

    /// Elements of the GPU's `active_slots` buffer: `⌈N/8⌉ + 1 + ⌈N/8⌉·W` u32, room for every
    /// slot of every block (the kernel derives W from this length).
    pub fn active_capacity(&self) -> usize {
        Self::active_capacity_of(self.blocks(), self.weight_count)
    }

    /// Elements of the GPU's `weights` buffer: `⌈N/8⌉·W·8` f32 (at least 8: no empty binding).
    pub fn weights_capacity(&self) -> usize {
        Self::weights_capacity_of(self.blocks(), self.weight_count)
    }

    /// Weights per instance W.
    pub fn weight_count(&self) -> usize {
        self.weight_count
    }

    /// Palette entries per instance P.
    pub fn palette_len(&self) -> usize {
        self.palette_len
    }

    /// Every instance's staged (limited) weights `(N,W)`: what [`crate::TANGENT`] reads.
    pub fn rows(&self) -> &[f32] {
        &self.rows
    }

    /// Instance `i`'s staged (limited) weights `(W,)`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.rows[i * self.weight_count..(i + 1) * self.weight_count]
    }

    /// Stage `frame` (the instance's limited weights, palette and normal matrices, from
    /// [`FrameControls::set`]) as instance `i`; [`RigBatchFrames::pack`] before the GPU reads
    /// `active` / `weights`. Allocates nothing.
    ///
    /// # Panics
    /// When `i` is not below N or `frame` belongs to a rig of another W or P (a caller bug).
    pub fn write(&mut self, i: usize, frame: &FrameControls) {
        assert!(
            i < self.instances
                && frame.weights.len() == self.weight_count
                && frame.palette.len() == self.palette_len
        );
        let (w, p) = (self.weight_count, self.palette_len);
        self.rows[i * w..(i + 1) * w].copy_from_slice(&frame.weights);
        stage_palette(&mut self.palette[i * p..(i + 1) * p], frame);
    }

    /// Stage every instance's frame at once (`frames[i]` as instance i, `frames.len() == N`) and
    /// pack: the same arrays as [`RigBatchFrames::write`] for each, then
    /// [`RigBatchFrames::pack`]. In parallel (rayon) from [`super::PARALLEL_MIN`] instances.
    /// Allocates nothing.
    ///
    /// # Panics
    /// When `frames` is not N long or a frame belongs to a rig of another W or P (a caller bug).
    pub fn write_all(&mut self, frames: &[FrameControls]) {
        use rayon::prelude::*;
        assert!(frames.len() == self.instances);
        if frames.len() < super::PARALLEL_MIN {
            for (i, f) in frames.iter().enumerate() {
                self.write(i, f);
            }
            self.pack();
            return;
        }
        let (w, p) = (self.weight_count, self.palette_len);
        assert!(
            frames
                .iter()
                .all(|f| f.weights.len() == w && f.palette.len() == p)
        );
        if w > 0 {
            self.rows
                .par_chunks_mut(w)
                .zip(frames.par_iter())
                .for_each(|(r, f)| r.copy_from_slice(&f.weights));
        }
        if p > 0 {
            self.palette
                .par_chunks_mut(p)
                .zip(frames.par_iter())
                .for_each(|(ps, f)| stage_palette(ps, f));
        }
        self.pack();
    }

    /// List and pack every block's active slots from the staged rows (see [`RigBatchFrames`]):
    /// blocks in parallel from [`super::PARALLEL_MIN`] instances, then concatenated in block
    /// order. Allocates nothing.
    pub fn pack(&mut self) {
        use rayon::prelude::*;
        let w = self.weight_count;
        let block = MORPH_INSTANCE_BLOCK as usize;
        let blocks = self.blocks();
        if w > 0 {
            type Task<'a> = ((&'a mut [u32], &'a mut [f32]), (&'a [f32], &'a mut u32));
            let list = |((slots, ws), (rows, count)): Task<'_>| {
                *count = list_active(rows, w, slots, ws);
            };
            if self.instances < super::PARALLEL_MIN {
                self.scratch_slots
                    .chunks_mut(w)
                    .zip(self.scratch_weights.chunks_mut(w * block))
                    .zip(self.rows.chunks(w * block).zip(self.counts.iter_mut()))
                    .for_each(list);
            } else {
                self.scratch_slots
                    .par_chunks_mut(w)
                    .zip(self.scratch_weights.par_chunks_mut(w * block))
                    .zip(
                        self.rows
                            .par_chunks(w * block)
                            .zip(self.counts.par_iter_mut()),
                    )
                    .for_each(list);
            }
        }
        debug_assert!(blocks == self.counts.len());
        self.concat();
    }

    /// Concatenate the blocks' lists and weights (`scratch_*`, `counts`) into `active` and
    /// `weights`. Allocates nothing (both were reserved for every slot of every block).
    fn concat(&mut self) {
        let (w, block) = (self.weight_count, MORPH_INSTANCE_BLOCK as usize);
        self.active.clear();
        self.active.push(0);
        let mut total = 0;
        for &c in &self.counts {
            total += c;
            self.active.push(total);
        }
        self.weights.clear();
        for (b, &c) in self.counts.iter().enumerate() {
            let c = c as usize;
            self.active
                .extend_from_slice(&self.scratch_slots[b * w..b * w + c]);
            self.weights
                .extend_from_slice(&self.scratch_weights[b * w * block..(b * w + c) * block]);
        }
        debug_assert!(self.active.len() <= self.active_capacity());
    }

    /// [`set_batch`]'s parallel path in one pass: per block of 8 instances (a rayon task), each
    /// instance's controls through the weight rules (`frames[k].set(controls[which(k)])`, counts
    /// into `stats[k]`), its row and palette staged, then the block's active list; then the
    /// concatenation. Needs W > 0 and P > 0 (the caller checks).
    fn set_blocks(
        &mut self,
        frames: &mut [FrameControls],
        controls: &[RigControls],
        which: &(dyn Fn(usize) -> usize + Sync),
        stats: &mut [ControlStats],
    ) -> mien_core::Result<()> {
        use rayon::prelude::*;
        let (w, p, block) = (
            self.weight_count,
            self.palette_len,
            MORPH_INSTANCE_BLOCK as usize,
        );
        frames
            .par_chunks_mut(block)
            .zip(stats.par_chunks_mut(block))
            .zip(self.rows.par_chunks_mut(w * block))
            .zip(self.palette.par_chunks_mut(p * block))
            .zip(self.scratch_slots.par_chunks_mut(w))
            .zip(self.scratch_weights.par_chunks_mut(w * block))
            .zip(self.counts.par_iter_mut())
            .enumerate()
            .try_for_each(|(b, ((((((fs, ss), rows), pal), slots), ws), count))| {
                for (j, (f, st)) in fs.iter_mut().zip(ss.iter_mut()).enumerate() {
                    *st = f.set(&controls[which(b * block + j)])?;
                    rows[j * w..(j + 1) * w].copy_from_slice(&f.weights);
                    stage_palette(&mut pal[j * p..(j + 1) * p], f);
                }
                *count = list_active(rows, w, slots, ws);
                Ok::<(), mien_core::Error>(())
            })?;
        self.concat();
        Ok(())
    }

    /// The byte range instance `i` writes in the palettes: `(offset, length)`.
    pub fn palette_range(&self, i: usize) -> (u64, u64) {
        let p = JOINT_BYTES * self.palette_len as u64;
        (i as u64 * p, p)
    }
}

/// An instance's palette entries `(P,)`: its palette matrices with their normal matrices.
fn stage_palette(out: &mut [JointMatrices], frame: &FrameControls) {
    for ((o, m), n) in out
        .iter_mut()
        .zip(&frame.palette)
        .zip(&frame.normal_palette)
    {
        *o = JointMatrices::new(m, n);
    }
}

/// One block's active slots from its instances' rows (`rows`: up to 8 rows of `w` weights, row
/// major): writes the slots with a non-zero weight (`!= 0.0`: −0.0 inactive, NaN active) for one
/// of the rows, ascending, into `slots` and their 8 weights (0 for a missing row) into `weights`
/// `(·, 8)`; returns their count.
fn list_active(rows: &[f32], w: usize, slots: &mut [u32], weights: &mut [f32]) -> u32 {
    let n_rows = rows.len() / w;
    let mut n = 0;
    for t in 0..w {
        // x != 0.0 ⇔ its bits without the sign are not 0; OR over the rows (no branch per row).
        let any = (0..n_rows).fold(0u32, |a, j| a | (rows[j * w + t].to_bits() << 1));
        if any != 0 {
            slots[n] = t as u32;
            let out = &mut weights[n * 8..n * 8 + 8];
            for (j, o) in out.iter_mut().enumerate() {
                *o = if j < n_rows { rows[j * w + t] } else { 0.0 };
            }
            n += 1;
        }
    }
    n as u32
}

/// Batches from this many instances check their controls in parallel…
const CHECK_PARALLEL_MIN: usize = 64;
/// …when they hold at least this many palette matrices (the check's work): below it one more
/// round trip through rayon's pool (a wake-up of sleeping workers, tens of µs on a virtual
/// machine) costs more than checking on the calling thread (a 256-instance batch of a one-entry
/// palette, W1's shape).
const CHECK_PARALLEL_ENTRIES: usize = 2048;

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
    if frames.len() < CHECK_PARALLEL_MIN
        || frames.len() * staged.palette_len < CHECK_PARALLEL_ENTRIES
    {
        for (k, f) in frames.iter().enumerate() {
            f.check(&controls[which(k)])?;
        }
    } else {
        // Checking a large batch's palettes serially cost more than the parallel sets on 16
        // cores (W6 at batch 256 on the H200 host: `cargo run -p mien-benches --example
        // set_batch`); the first refusal in instance order is still the one reported.
        let first_bad = frames
            .par_iter()
            .enumerate()
            .filter_map(|(k, f)| f.check(&controls[which(k)]).err().map(|e| (k, e)))
            .min_by_key(|(k, _)| *k);
        if let Some((_, e)) = first_bad {
            return Err(e);
        }
    }
    if frames.len() < super::PARALLEL_MIN {
        for (k, (f, s)) in frames.iter_mut().zip(stats.iter_mut()).enumerate() {
            *s = f.set(&controls[which(k)])?;
        }
        staged.write_all(frames);
        return Ok(());
    }
    assert!(
        frames.len() == staged.instances
            && frames
                .iter()
                .all(|f| f.weights.len() == staged.weight_count
                    && f.palette.len() == staged.palette_len)
    );
    if staged.weight_count > 0 && staged.palette_len > 0 {
        // One rayon pass over blocks of 8 instances: rules, staging and lists together.
        return staged.set_blocks(frames, controls, which, stats);
    }
    if staged.weight_count == 0 && staged.palette_len > 0 {
        // A skin without morph targets: one rayon pass setting and staging blocks of 8.
        let (p, block) = (staged.palette_len, MORPH_INSTANCE_BLOCK as usize);
        frames
            .par_chunks_mut(block)
            .zip(stats.par_chunks_mut(block))
            .zip(staged.palette.par_chunks_mut(p * block))
            .enumerate()
            .try_for_each(|(b, ((fs, ss), pal))| {
                for (j, (f, st)) in fs.iter_mut().zip(ss.iter_mut()).enumerate() {
                    *st = f.set(&controls[which(b * block + j)])?;
                    stage_palette(&mut pal[j * p..(j + 1) * p], f);
                }
                Ok::<(), mien_core::Error>(())
            })?;
        staged.pack();
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
