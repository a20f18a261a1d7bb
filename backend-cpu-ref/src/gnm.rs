//! The CPU linear-head backend: the reference's per-vertex arithmetic ([`forward::pose`]) for every
//! uploaded head, heads and vertex chunks in parallel, nothing allocated per frame; the instances of
//! a batch share one copy of their pack.

use std::sync::Arc;
use std::time::Instant;

use glam::Mat4;
use mien_core::gnm::forward::{self, from_row_major};
use mien_core::gnm::frame::check_inputs;
use mien_core::gnm::{GAZE_DIM, GnmBackend, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_core::{Error, Result};
use rayon::prelude::*;

use crate::CpuEncoder;

#[derive(Debug)]
struct CpuHead {
    pack: Arc<GnmPack>,
    head_ext: Vec<f32>,
    joint_world: Vec<Mat4>,
    positions: Vec<[f32; 3]>,
    /// Per-frame scratch: scaled coefficients `(E,)` and skin matrices `(J,)`.
    scaled: Vec<f32>,
    skin: Vec<Mat4>,
    /// One decoded basis row `(E,3)` per vertex chunk, reused every frame.
    rows: Vec<f32>,
}

/// Vertices per rayon task.
const VERTEX_CHUNK: usize = 512;

impl CpuHead {
    /// Pose this head: the reference's per-vertex functions
    /// ([`forward::forward_vertex`], [`forward::seam_and_skin_vertex`]) over vertex chunks in
    /// parallel, into the preallocated positions — the same arithmetic per vertex as
    /// [`forward::pose`], so the same bits, and no allocation.
    fn pose(&mut self) -> Result<()> {
        let pack = &*self.pack;
        let (coeffs, gaze) = pack.header.head_ext.split(&self.head_ext)?;
        for ((o, c), s) in self.scaled.iter_mut().zip(coeffs).zip(&pack.basis_scale) {
            *o = c * s;
        }
        let rot = [
            forward::eye_rotation(gaze[0], gaze[1]),
            forward::eye_rotation(gaze[2], gaze[3]),
        ];
        let centers = pack.eye_positions.map(glam::Vec3::from);
        forward::skin_matrices(pack, &self.joint_world, &mut self.skin)?;
        let bind = from_row_major(&pack.header.bind_transform);
        let (scaled, skin) = (&self.scaled, &self.skin);
        let n = 3 * pack.coeff_count();
        self.positions.resize(pack.vertex_count(), [0.0; 3]);
        self.rows
            .resize(pack.vertex_count().div_ceil(VERTEX_CHUNK) * n.max(1), 0.0);
        self.positions
            .par_chunks_mut(VERTEX_CHUNK)
            .zip(self.rows.par_chunks_mut(n.max(1)))
            .enumerate()
            .for_each(|(c, (out, row))| {
                for (i, o) in out.iter_mut().enumerate() {
                    let v = c * VERTEX_CHUNK + i;
                    pack.basis_row(v, &mut row[..n]);
                    let p = forward::forward_vertex_row(pack, v, &row[..n], scaled, &rot, &centers);
                    *o = forward::seam_and_skin_vertex(pack, v, p, skin, &bind);
                }
            });
        Ok(())
    }
}

/// [`GnmBackend`] on the CPU: the per-vertex functions of [`forward::pose`] (the reference every GPU
/// backend is compared against, bit for bit here), heads and 512-vertex chunks as rayon tasks. Holds one copy of each uploaded pack, shared by the instances
/// of a batch.
#[derive(Debug, Default)]
pub struct CpuGnmBackend {
    heads: Vec<CpuHead>,
}

impl CpuGnmBackend {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    fn head(&self, h: GnmHandle) -> Result<&CpuHead> {
        self.heads.get(h.0 as usize).ok_or_else(|| unknown(h))
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
        let shared = Arc::new(pack.clone());
        let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
        // Before any frame: rest (zero coefficients and gaze, rest joints) — the neutral at bind.
        Ok((0..instances)
            .map(|_| {
                self.heads.push(CpuHead {
                    pack: shared.clone(),
                    head_ext: vec![0.0; pack.coeff_count() + GAZE_DIM],
                    joint_world: rest.clone(),
                    positions: Vec::with_capacity(pack.vertex_count()),
                    scaled: vec![0.0; pack.coeff_count()],
                    skin: Vec::with_capacity(rest.len()),
                    rows: Vec::new(),
                });
                GnmHandle((self.heads.len() - 1) as u32)
            })
            .collect())
    }

    fn vertex_count(&self, head: GnmHandle) -> u32 {
        self.head(head).map_or(0, |h| h.pack.vertex_count() as u32)
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
        check_inputs(
            h.pack.coeff_count(),
            h.pack.header.joints.len(),
            head_ext,
            joint_world,
        )?;
        h.head_ext.copy_from_slice(head_ext);
        h.joint_world.copy_from_slice(joint_world);
        Ok(())
    }

    fn encode(&mut self, encoder: &mut CpuEncoder) -> Result<()> {
        let start = Instant::now();
        self.heads.par_iter_mut().try_for_each(CpuHead::pose)?;
        encoder.rig += start.elapsed();
        Ok(())
    }

    fn read_vertices(&self, head: GnmHandle) -> Result<PosedVertices> {
        let h = self.head(head)?;
        Ok(PosedVertices {
            positions: h.positions.clone(),
            normals: vec![[0.0; 3]; h.positions.len()],
        })
    }

    fn bytes(&self) -> u64 {
        // Each shared pack once (the instances of a batch are adjacent), plus every head's own data.
        let mut last: Option<*const GnmPack> = None;
        self.heads
            .iter()
            .map(|h| {
                let own = (h.head_ext.len() * 4 + h.joint_world.len() * 64 + h.positions.len() * 12)
                    as u64;
                let p = Arc::as_ptr(&h.pack);
                let pack = if last == Some(p) {
                    0
                } else {
                    h.pack.byte_len()
                };
                last = Some(p);
                pack + own
            })
            .sum()
    }
}
