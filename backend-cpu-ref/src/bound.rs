//! Bound gaussians (surface, texel and captured-splat lifts) posed on the CPU.

use std::sync::Arc;
use std::time::Instant;

use mien_core::lift::PackedBound;
use mien_core::lift::bound::check_bound;
use mien_core::lift::{BoundSetup, CLEARED_SPLAT, Lift};
use mien_core::rig::{RigBackend, RigHandle};
use mien_core::sink::{SlotRange, SplatSink};
use mien_core::{Error, Result};

use crate::lift::{check_posed, write_range};
use crate::{CpuEncoder, CpuRigBackend, CpuSplatSink};

/// Every gaussian of a [`BoundSetup`] posed on its triangle ([`BoundSetup::pose`]) into a slot
/// range of a [`CpuSplatSink`]; slots of the range past the gaussian count are cleared.
#[derive(Clone, Debug)]
pub struct CpuBoundLift {
    rig: RigHandle,
    setup: Arc<BoundSetup>,
    range: SlotRange,
    vertex_count: u32,
}

impl CpuBoundLift {
    /// A lift of `vertex_count` posed vertices (from `rig`, or given to
    /// [`CpuBoundLift::encode_posed`]) into `range`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the setup does not fit the vertices or the range
    /// ([`check_bound`]), or the range leaves the sink.
    pub fn new(
        rig: Option<RigHandle>,
        vertex_count: u32,
        setup: Arc<BoundSetup>,
        sink: &CpuSplatSink,
        range: SlotRange,
    ) -> Result<Self> {
        check_bound(&setup.gaussians, &setup.triangles, vertex_count, range)?;
        if range.end() > u64::from(sink.capacity()) {
            return Err(Error::Invalid {
                what: "bound lift range".into(),
                reason: format!(
                    "ends at {} past the sink's {} slots",
                    range.end(),
                    sink.capacity()
                ),
            });
        }
        Ok(CpuBoundLift {
            rig: rig.unwrap_or(RigHandle(u32::MAX)),
            setup,
            range,
            vertex_count,
        })
    }

    /// Replace records `first .. first + records.len()` of this lift's setup (its own copy from the
    /// first call on: the setup stays shared with other lifts until then). What an appearance
    /// decoder's outputs become ([`mien_core::lift::BoundGaussian::pack`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the run leaves the setup, or a record names a triangle past it.
    pub fn set_records(&mut self, first: usize, records: &[PackedBound]) -> Result<()> {
        let g = self.setup.gaussians.len();
        let t = self.setup.triangles.len() as u32;
        if first.checked_add(records.len()).is_none_or(|e| e > g) {
            return Err(Error::Invalid {
                what: "bound lift records".into(),
                reason: format!(
                    "{} records from {first} past the {g} the lift holds",
                    records.len()
                ),
            });
        }
        if let Some(i) = records.iter().position(|r| r.triangle() >= t) {
            return Err(Error::Invalid {
                what: format!("bound lift record {}", first + i),
                reason: format!("triangle {} of {t}", records[i].triangle()),
            });
        }
        Arc::make_mut(&mut self.setup).gaussians[first..first + records.len()]
            .copy_from_slice(records);
        Ok(())
    }

    /// Pose into the sink from `pos` `(V,3)` metres and `nrm` `(V,3)`.
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
        check_posed("bound lift", self.vertex_count as usize, pos, nrm)?;
        let start = Instant::now();
        let ng = self.setup.gaussians.len();
        let setup = &self.setup;
        write_range(sink, self.range, &|g| {
            if g < ng {
                setup.pose(g, pos, nrm)
            } else {
                CLEARED_SPLAT
            }
        });
        encoder.lift += start.elapsed();
        Ok(())
    }
}

impl Lift<CpuRigBackend, CpuSplatSink> for CpuBoundLift {
    fn range(&self) -> SlotRange {
        self.range
    }

    fn encode(
        &mut self,
        encoder: &mut CpuEncoder,
        rig: &CpuRigBackend,
        sink: &mut CpuSplatSink,
    ) -> Result<()> {
        if self.rig == RigHandle(u32::MAX) || rig.vertex_count(self.rig) != self.vertex_count {
            return Err(Error::Invalid {
                what: "bound lift".into(),
                reason: "built for another rig (or for posed vertices given directly)".into(),
            });
        }
        let (pos, nrm) = rig.posed(self.rig);
        self.encode_posed(encoder, pos, nrm, sink)
    }
}
