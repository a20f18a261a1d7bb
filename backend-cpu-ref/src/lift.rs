//! The debug vertex lift on the CPU.

use std::time::Instant;

use mien_core::lift::{CLEARED_SPLAT, DebugLiftParams, Lift, lift_vertex};
use mien_core::rig::{RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink, pack4x8unorm};
use mien_core::{Error, Result};
use rayon::prelude::*;

use crate::{CHUNK, CpuEncoder, CpuRigBackend, CpuSplatSink};

/// One isotropic gaussian per posed vertex of one rig ([`lift_vertex`]), written into its slot
/// range of a [`CpuSplatSink`]; slots of the range past the vertex count are cleared.
#[derive(Clone, Debug)]
pub struct CpuDebugLift {
    rig: RigHandle,
    params: DebugLiftParams,
    tint: Vec<u32>,
}

impl CpuDebugLift {
    /// A lift of `rig` into `range` (allocate it from the sink first). Tints are the rig's vertex
    /// colours, packed.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the parameters are out of domain (see [`DebugLiftParams::validate`]),
    /// their vertex count is not the rig's, or the range leaves the sink.
    pub fn new(
        backend: &CpuRigBackend,
        rig: RigHandle,
        sink: &CpuSplatSink,
        params: DebugLiftParams,
    ) -> Result<Self> {
        let tint = backend
            .rig_data(rig)
            .colors
            .iter()
            .map(|c| pack4x8unorm(*c))
            .collect();
        Self::for_vertices(backend.vertex_count(rig), tint, sink, params).map(|mut l| {
            l.rig = rig;
            l
        })
    }

    /// A lift of `vertex_count` posed vertices from any source (a linear head, a test) into
    /// `params.range`; `tint` `(V,)` packed RGBA8 (`pack4x8unorm`) or empty for white. Posed
    /// data comes in through [`CpuDebugLift::encode_posed`].
    ///
    /// # Errors
    /// As [`CpuDebugLift::new`]; [`Error::Mismatch`] for a tint of another length.
    pub fn for_vertices(
        vertex_count: u32,
        tint: Vec<u32>,
        sink: &CpuSplatSink,
        params: DebugLiftParams,
    ) -> Result<Self> {
        let nv = vertex_count;
        mien_core::lift::parts::check_target(&params, nv, sink.capacity())?;
        let tint = if tint.is_empty() {
            vec![u32::MAX; nv as usize]
        } else if tint.len() == nv as usize {
            tint
        } else {
            return Err(Error::Mismatch {
                what: "debug lift tint length".into(),
                expected: u64::from(nv),
                found: tint.len() as u64,
            });
        };
        Ok(CpuDebugLift {
            rig: RigHandle(u32::MAX),
            params,
            tint,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &DebugLiftParams {
        &self.params
    }

    /// Change σ, opacity, shading, transform (the range and vertex count stay).
    ///
    /// # Errors
    /// Out-of-domain parameters.
    pub fn set_params(&mut self, params: DebugLiftParams) -> Result<()> {
        if params.range != self.params.range || params.vertex_count != self.params.vertex_count {
            return Err(Error::Invalid {
                what: "debug lift params".into(),
                reason: "range and vertex count are fixed for a lift's lifetime".into(),
            });
        }
        params.validate()?;
        self.params = params;
        Ok(())
    }
}

impl Lift<CpuRigBackend, CpuSplatSink> for CpuDebugLift {
    fn range(&self) -> SlotRange {
        self.params.range
    }

    fn encode(
        &mut self,
        encoder: &mut CpuEncoder,
        rig: &CpuRigBackend,
        sink: &mut CpuSplatSink,
    ) -> Result<()> {
        let (pos, nrm) = rig.posed(self.rig);
        self.encode_posed(encoder, pos, nrm, sink)
    }
}

/// `pos` and `nrm` both `(V,)` long.
///
/// # Errors
/// [`Error::Mismatch`] naming the lift and the slice.
pub(crate) fn check_posed(lift: &str, nv: usize, pos: &[[f32; 3]], nrm: &[[f32; 3]]) -> Result<()> {
    for (what, n) in [("posed positions", pos.len()), ("posed normals", nrm.len())] {
        if n != nv {
            return Err(Error::Mismatch {
                what: format!("{lift} {what}"),
                expected: nv as u64,
                found: n as u64,
            });
        }
    }
    Ok(())
}

/// Write `splat(k)` into slot `range.offset + k` of the sink for every slot of `range`, in
/// parallel chunks of [`CHUNK`], and mark the sink changed: the write every CPU lift shares.
pub(crate) fn write_range(
    sink: &mut CpuSplatSink,
    range: SlotRange,
    splat: &(dyn Fn(usize) -> mien_core::lift::LiftedSplat + Sync),
) {
    let r = range.offset as usize..range.end() as usize;
    let b = sink.buffers_mut();
    b.center[r.clone()]
        .par_chunks_mut(CHUNK)
        .zip(b.color[r.clone()].par_chunks_mut(CHUNK))
        .zip(b.cov_a[r.clone()].par_chunks_mut(CHUNK))
        .zip(b.cov_b[r].par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (((ce, co), ca), cb))| {
            for i in 0..ce.len() {
                let s = splat(c * CHUNK + i);
                (ce[i], co[i], ca[i], cb[i]) = (s.center, s.color, s.cov_a, s.cov_b);
            }
        });
    sink.mark_changed();
}

impl CpuDebugLift {
    /// Lift `pos` `(V,3)` metres and `nrm` `(V,3)` (unit or zero) into the sink: the work of
    /// [`Lift::encode`] for posed vertices that do not come from a [`CpuRigBackend`].
    ///
    /// # Errors
    /// [`Error::Mismatch`] when either slice is not `(V,)` long.
    pub fn encode_posed(
        &mut self,
        encoder: &mut CpuEncoder,
        pos: &[[f32; 3]],
        nrm: &[[f32; 3]],
        sink: &mut CpuSplatSink,
    ) -> Result<()> {
        let nv = self.params.vertex_count as usize;
        check_posed("debug lift", nv, pos, nrm)?;
        let start = Instant::now();
        let p = &self.params;
        let cov = p.covariance();
        let tint = &self.tint;
        write_range(sink, p.range, &|v| {
            if v < nv {
                lift_vertex(p, cov, pos[v], nrm[v], tint[v])
            } else {
                CLEARED_SPLAT
            }
        });
        encoder.lift += start.elapsed();
        Ok(())
    }
}
