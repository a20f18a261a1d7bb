//! The CPU rig backend: a batch of uploaded rigs posed in one parallel pass; the instances of a
//! batch upload ([`RigBackend::upload_batch`]) share one [`RigData`] through an [`Arc`]. Dense rigs
//! blend from [`MorphTiles`] (a target's deltas added to 64 vertices at once), others walk each
//! vertex's CSR row; both are the reference bit for bit.

use std::sync::Arc;
use std::time::Instant;

use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
};
use mien_core::{Error, Result};
use rayon::prelude::*;

use crate::rig_tiles::{self, MorphTiles, TILE, TileInstance};
use crate::{CHUNK, CpuEncoder, Precision};

/// Instances per task of the dense pass: a tile's blocks (at most tens of KiB) are read from
/// memory once and from cache by the other instances of its task.
const INSTANCES_PER_TASK: usize = 16;

/// Where one instance's posed positions and normals live, for the dense pass's tasks (each writes
/// one tile of each instance of its task — disjoint ranges).
#[derive(Clone, Copy, Debug)]
struct OutPtr {
    positions: *mut [f32; 3],
    normals: *mut [f32; 3],
}

// SAFETY: the pointers are only written through by the dense pass, one tile range per task, and
// the arrays they point into outlive the pass (held by `&mut self`).
unsafe impl Send for OutPtr {}
// SAFETY: as above; tasks share the list but write disjoint ranges.
unsafe impl Sync for OutPtr {}

/// One `upload_batch`: its rig, dense blocks, instances `first..first + count`, and the dense
/// pass's scratch (the instances' output pointers, refilled each frame without allocating).
#[derive(Debug)]
struct Upload {
    data: Arc<RigData>,
    tiles: Option<Arc<MorphTiles>>,
    first: usize,
    count: usize,
    outs: Vec<OutPtr>,
}

/// The error for a handle this backend never issued.
fn unknown(rig: RigHandle) -> Error {
    Error::Invalid {
        what: "rig handle".into(),
        reason: format!("{} was not uploaded to this backend", rig.0),
    }
}

/// One posed character (an instance of an uploaded rig) and its per-frame state.
#[derive(Debug)]
struct CpuRig {
    /// The rig, shared by every instance of its upload.
    data: Arc<RigData>,
    /// Its dense morph blocks, when the rig is dense enough (shared like `data`).
    tiles: Option<Arc<MorphTiles>>,
    frame: FrameControls,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    /// Posed tangents `(V,4)`, empty when the rig carries none.
    tangents: Vec<[f32; 4]>,
}

/// [`RigBackend`] on the CPU: [`RigData::pose_vertex`] for every vertex of every uploaded rig,
/// parallel over instances and vertex chunks (rayon's global pool). A batch upload holds the rig
/// once (an [`Arc`]) and gives each instance its own controls and posed arrays. No allocation per
/// frame once every rig has had its first `set_controls`.
#[derive(Debug, Default)]
pub struct CpuRigBackend {
    rigs: Vec<CpuRig>,
    /// The rig of each upload and its dense morph blocks, held once whatever its instance count.
    uploads: Vec<Upload>,
    precision: Precision,
}

impl CpuRigBackend {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// How dense morph blocks blend from the next encode on: [`Precision::Exact`] (the default, the
    /// reference's bits) or [`Precision::Fast`] (one fused multiply-add per term, within the
    /// conformance bound the GPU backends are held to — `conformance` module docs). Rigs walked
    /// vertex by vertex (sparse ones) are exact either way.
    pub fn set_precision(&mut self, precision: Precision) {
        self.precision = precision;
    }

    /// The precision set by [`Self::set_precision`].
    pub fn precision(&self) -> Precision {
        self.precision
    }

    fn rig(&self, h: RigHandle) -> &CpuRig {
        &self.rigs[h.0 as usize]
    }

    /// The posed positions `(V,3)` metres and unit normals `(V,3)` of `rig` from the last
    /// encode, borrowed (the CPU lift reads these; no copy).
    ///
    /// # Panics
    /// When `rig` is not a handle of this backend.
    pub fn posed(&self, rig: RigHandle) -> (&[[f32; 3]], &[[f32; 3]]) {
        let r = self.rig(rig);
        (&r.positions, &r.normals)
    }

    /// The uploaded rig data of `rig`.
    ///
    /// # Panics
    /// When `rig` is not a handle of this backend.
    pub fn rig_data(&self, rig: RigHandle) -> &RigData {
        &self.rig(rig).data
    }

    /// Number of posed characters (handles: every instance of every upload).
    pub fn len(&self) -> usize {
        self.rigs.len()
    }

    /// Whether no rig has been uploaded.
    pub fn is_empty(&self) -> bool {
        self.rigs.is_empty()
    }
}

impl RigBackend for CpuRigBackend {
    type Encoder = CpuEncoder;

    fn upload(&mut self, rig: &RigData) -> Result<RigHandle> {
        let handles = self.upload_batch(rig, 1)?;
        Ok(handles[0])
    }

    fn upload_batch(&mut self, rig: &RigData, instances: u32) -> Result<Vec<RigHandle>> {
        if instances == 0 {
            return Err(Error::Invalid {
                what: "rig batch".into(),
                reason: "0 instances".into(),
            });
        }
        rig.validate()?;
        let first = self.rigs.len() as u64;
        if first + u64::from(instances) > u64::from(u32::MAX) {
            return Err(Error::Limit {
                what: "rigs in one CPU backend".into(),
                limit: u64::from(u32::MAX),
                found: first + u64::from(instances),
            });
        }
        self.rigs
            .try_reserve(instances as usize)
            .map_err(|_| Error::Invalid {
                what: "rig batch".into(),
                reason: format!("{instances} instances do not fit in host memory"),
            })?;
        let data = Arc::new(rig.clone());
        let tiles = MorphTiles::build(rig).map(Arc::new);
        self.uploads.push(Upload {
            data: data.clone(),
            tiles: tiles.clone(),
            first: first as usize,
            count: instances as usize,
            outs: Vec::with_capacity(instances as usize),
        });
        // Before any controls: the bind pose with an identity palette (posed = bind).
        self.rigs.extend((0..instances).map(|_| CpuRig {
            data: data.clone(),
            tiles: tiles.clone(),
            frame: FrameControls::new(rig),
            positions: rig.positions.clone(),
            normals: rig.normals.clone(),
            tangents: rig.tangents.clone(),
        }));
        Ok((0..instances)
            .map(|i| RigHandle(first as u32 + i))
            .collect())
    }

    fn vertex_count(&self, rig: RigHandle) -> u32 {
        self.rig(rig).data.vertex_count() as u32
    }

    fn set_controls(&mut self, rig: RigHandle, controls: &RigControls) -> Result<ControlStats> {
        let r = self
            .rigs
            .get_mut(rig.0 as usize)
            .ok_or_else(|| unknown(rig))?;
        let stats = r.frame.set(controls)?;
        Ok(stats)
    }

    fn encode(&mut self, encoder: &mut CpuEncoder) -> Result<()> {
        let start = Instant::now();
        // Per instance: tangents (only rigs that carry them) and rigs without dense blocks, the
        // reference per vertex — skipped when no instance has either (handing even an empty
        // pass to rayon's pool wakes it: microseconds a frame at batch 1).
        let per_instance = self
            .rigs
            .iter()
            .any(|r| !r.tangents.is_empty() || r.tiles.is_none());
        if per_instance {
            self.rigs.par_iter_mut().for_each(|r| {
                let CpuRig {
                    data,
                    tiles,
                    frame,
                    positions,
                    normals,
                    tangents,
                } = r;
                let (weights, palette, normal_palette) =
                    (&frame.weights, &frame.palette, &frame.normal_palette);
                tangents
                    .par_chunks_mut(CHUNK)
                    .enumerate()
                    .for_each(|(c, tc)| {
                        for (i, t) in tc.iter_mut().enumerate() {
                            *t = data.pose_tangent(c * CHUNK + i, weights, palette);
                        }
                    });
                if tiles.is_some() {
                    return;
                }
                positions
                    .par_chunks_mut(CHUNK)
                    .zip(normals.par_chunks_mut(CHUNK))
                    .enumerate()
                    .for_each(|(c, (pc, nc))| {
                        let base = c * CHUNK;
                        for (i, (p, n)) in pc.iter_mut().zip(nc.iter_mut()).enumerate() {
                            (*p, *n) = data.pose_vertex(base + i, weights, palette, normal_palette);
                        }
                    });
            });
        }
        // Dense uploads: tile-major over their instances, so each tile's blocks are read once
        // for a task's instances.
        for u in &mut self.uploads {
            if let Some(tiles) = &u.tiles {
                let rigs = &mut self.rigs[u.first..u.first + u.count];
                dense_pass(&u.data, tiles, rigs, &mut u.outs, self.precision);
            }
        }
        encoder.rig += start.elapsed();
        Ok(())
    }

    fn read_vertices(&self, rig: RigHandle) -> Result<PosedVertices> {
        let r = self.rigs.get(rig.0 as usize).ok_or_else(|| unknown(rig))?;
        Ok(PosedVertices {
            positions: r.positions.clone(),
            normals: r.normals.clone(),
            tangents: r.tangents.clone(),
        })
    }

    fn bytes(&self) -> u64 {
        let shared: u64 = self
            .uploads
            .iter()
            .map(|u| u.data.upload_bytes() + u.tiles.as_ref().map_or(0, |t| t.byte_len()))
            .sum();
        let per_instance: u64 = self
            .rigs
            .iter()
            .map(|r| {
                (r.frame.weights.len() * 4
                    + r.frame.palette.len() * (64 + 36)
                    + r.positions.len() * 24
                    + r.tangents.len() * 16) as u64
            })
            .sum();
        shared + per_instance
    }
}

/// Pose every instance of one dense upload: tasks over (tile, group of
/// [`INSTANCES_PER_TASK`] instances); each instance's tile blended from the tile's base
/// ([`rig_tiles::pose_tiles`], two instances at a time) and written into its own arrays.
fn dense_pass(
    data: &RigData,
    tiles: &MorphTiles,
    rigs: &mut [CpuRig],
    outs: &mut Vec<OutPtr>,
    precision: Precision,
) {
    let nv = data.vertex_count();
    outs.clear();
    outs.extend(rigs.iter_mut().map(|r| {
        assert_eq!(r.positions.len(), nv);
        assert_eq!(r.normals.len(), nv);
        OutPtr {
            positions: r.positions.as_mut_ptr(),
            normals: r.normals.as_mut_ptr(),
        }
    }));
    let (rigs, outs) = (&*rigs, &*outs);
    let tile_count = nv.div_ceil(TILE);
    let groups = rigs.len().div_ceil(INSTANCES_PER_TASK);
    (0..tile_count * groups).into_par_iter().for_each(|job| {
        let (t, g) = (job / groups, job % groups);
        let (v0, len) = (t * TILE, (nv - t * TILE).min(TILE));
        let base = rig_tiles::base(data, t);
        let last = ((g + 1) * INSTANCES_PER_TASK).min(rigs.len());
        let inst = |i: usize| {
            let f = &rigs[i].frame;
            // SAFETY: instance i's arrays hold `nv` elements (asserted above) and outlive this
            // pass; this task alone writes vertices v0..v0 + len of them (one task per tile and
            // instance group; each instance taken once), and nothing reads them during the pass.
            let (positions, normals) = unsafe {
                (
                    std::slice::from_raw_parts_mut(outs[i].positions.add(v0), len),
                    std::slice::from_raw_parts_mut(outs[i].normals.add(v0), len),
                )
            };
            TileInstance {
                weights: &f.weights,
                palette: &f.palette,
                normal_palette: &f.normal_palette,
                positions,
                normals,
            }
        };
        // Two instances at a time: each block's deltas loaded once for both.
        let mut i = g * INSTANCES_PER_TASK;
        while i + 2 <= last {
            rig_tiles::pose_tiles(data, tiles, t, precision, &base, [inst(i), inst(i + 1)]);
            i += 2;
        }
        if i < last {
            rig_tiles::pose_tiles(data, tiles, t, precision, &base, [inst(i)]);
        }
    });
}
