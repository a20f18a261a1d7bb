//! The CPU rig backend: a batch of uploaded rigs posed in one parallel pass.

use std::time::Instant;

use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
};
use mien_core::{Error, Result};
use rayon::prelude::*;

use crate::{CHUNK, CpuEncoder};

/// The error for a handle this backend never issued.
fn unknown(rig: RigHandle) -> Error {
    Error::Invalid {
        what: "rig handle".into(),
        reason: format!("{} was not uploaded to this backend", rig.0),
    }
}

/// One uploaded rig and its per-frame state.
#[derive(Debug)]
struct CpuRig {
    data: RigData,
    frame: FrameControls,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
}

/// [`RigBackend`] on the CPU: [`RigData::pose_vertex`] for every vertex of every uploaded rig,
/// parallel over vertex chunks (rayon's global pool). No allocation per frame once every rig has
/// had its first `set_controls`.
#[derive(Debug, Default)]
pub struct CpuRigBackend {
    rigs: Vec<CpuRig>,
}

impl CpuRigBackend {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
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

    /// Number of uploaded rigs.
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
        rig.validate()?;
        let v = rig.vertex_count();
        let handle = RigHandle(u32::try_from(self.rigs.len()).map_err(|_| Error::Limit {
            what: "rigs in one CPU backend".into(),
            limit: u32::MAX as u64,
            found: self.rigs.len() as u64,
        })?);
        // Before any controls: the bind pose with an identity palette (posed = bind).
        self.rigs.push(CpuRig {
            data: rig.clone(),
            frame: FrameControls::new(rig),
            positions: rig.positions.clone(),
            normals: rig.normals.clone(),
        });
        debug_assert_eq!(self.rigs[handle.0 as usize].positions.len(), v);
        Ok(handle)
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
        self.rigs.par_iter_mut().for_each(|r| {
            let CpuRig {
                data,
                frame,
                positions,
                normals,
            } = r;
            let (weights, palette, normal_palette) =
                (&frame.weights, &frame.palette, &frame.normal_palette);
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
        encoder.rig += start.elapsed();
        Ok(())
    }

    fn read_vertices(&self, rig: RigHandle) -> Result<PosedVertices> {
        let r = self.rigs.get(rig.0 as usize).ok_or_else(|| unknown(rig))?;
        Ok(PosedVertices {
            positions: r.positions.clone(),
            normals: r.normals.clone(),
        })
    }

    fn bytes(&self) -> u64 {
        self.rigs
            .iter()
            .map(|r| {
                r.data.upload_bytes()
                    + (r.frame.weights.len() * 4
                        + r.frame.palette.len() * (64 + 36)
                        + r.positions.len() * 24) as u64
            })
            .sum()
    }
}
