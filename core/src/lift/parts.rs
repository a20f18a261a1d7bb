//! The checks every backend's lift makes before it binds anything: parameters in domain, the
//! vertex count the posing side produces, the slot range inside the sink, and posed parts that tile
//! the vertices in order and read inside their buffers.

use super::DebugLiftParams;
use crate::error::{Error, Result};

/// Where one posed part of a lift reads (see the GPU backends' `PosedPart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartExtent {
    /// First vertex of the part among the lifted vertices.
    pub v0: u32,
    /// Vertices in the part.
    pub count: u32,
    /// Where the part's first vertex sits in its posed buffer, vertices.
    pub first: u32,
    /// Size of the part's posed buffer, bytes.
    pub posed_bytes: u64,
    /// Size of the part's tint buffer, bytes (`(count,)` u32 read from its start).
    pub tint_bytes: u64,
}

/// `params` valid for a lift of `vertex_count` vertices into a sink of `sink_capacity` slots.
///
/// # Errors
/// Out-of-domain parameters ([`DebugLiftParams::validate`]), [`Error::Mismatch`] for another vertex
/// count, [`Error::Invalid`] for a range past the sink.
pub fn check_target(params: &DebugLiftParams, vertex_count: u32, sink_capacity: u32) -> Result<()> {
    params.validate()?;
    if params.vertex_count != vertex_count {
        return Err(Error::Mismatch {
            what: "debug lift vertex count".into(),
            expected: u64::from(vertex_count),
            found: u64::from(params.vertex_count),
        });
    }
    if params.range.end() > u64::from(sink_capacity) {
        return Err(Error::Invalid {
            what: "debug lift range".into(),
            reason: format!(
                "ends at {} past the sink's {sink_capacity} slots",
                params.range.end()
            ),
        });
    }
    Ok(())
}

/// `parts` tile `0..vertex_count` in order, and each reads `vertex_bytes` per vertex from `first`
/// inside its posed buffer and 4 bytes per vertex inside its tints.
///
/// # Errors
/// [`Error::Invalid`] naming the first part that starts elsewhere or reads past a buffer, or
/// parts that cover another number of vertices.
pub fn check_parts(vertex_count: u32, parts: &[PartExtent], vertex_bytes: u64) -> Result<()> {
    let mut next = 0u32;
    for (i, p) in parts.iter().enumerate() {
        if p.v0 != next {
            return Err(Error::Invalid {
                what: format!("debug lift part {i}"),
                reason: format!("starts at vertex {} where {next} was expected", p.v0),
            });
        }
        next = p.v0.saturating_add(p.count);
        let end = u64::from(p.first) + u64::from(p.count);
        if end * vertex_bytes > p.posed_bytes || u64::from(p.count) * 4 > p.tint_bytes {
            return Err(Error::Invalid {
                what: format!("debug lift part {i}"),
                reason: format!(
                    "vertices {}..{end} read past its posed buffer ({} bytes) or its tints ({} bytes)",
                    p.first, p.posed_bytes, p.tint_bytes
                ),
            });
        }
    }
    if next != vertex_count {
        return Err(Error::Invalid {
            what: "debug lift parts".into(),
            reason: format!("cover {next} vertices of {vertex_count}"),
        });
    }
    Ok(())
}

/// A batched lift of `instances` characters sharing one rig or head (one dispatch, z = instance):
/// instance `z` writes the slots `params.range` moved by `z · slot_stride` and reads its posed
/// vertices `z · count` further into each part's buffer (the batch layout of
/// `RigBackend::upload_batch` / `GnmBackend::upload_gnm_batch`). Returns the slots the batch spans
/// from `params.range.offset`: `(N−1)·slot_stride + range.count`.
///
/// # Errors
/// [`Error::Invalid`] for 0 instances, a stride below the range's count (the instances' ranges
/// would overlap) or a last range past the sink; and [`check_parts`]' errors for the last instance.
pub fn check_batch(
    params: &DebugLiftParams,
    parts: &[PartExtent],
    instances: u32,
    slot_stride: u32,
    sink_capacity: u32,
    vertex_bytes: u64,
) -> Result<u64> {
    let bad = |reason: String| Error::Invalid {
        what: "batched debug lift".into(),
        reason,
    };
    if instances == 0 {
        return Err(bad("0 instances".into()));
    }
    let last = u64::from(instances - 1);
    if last > 0 && slot_stride < params.range.count {
        return Err(bad(format!(
            "a slot stride of {slot_stride} under the range's {} slots: the instances' ranges would overlap",
            params.range.count
        )));
    }
    let span = last * u64::from(slot_stride) + u64::from(params.range.count);
    if u64::from(params.range.offset) + span > u64::from(sink_capacity) {
        return Err(bad(format!(
            "{instances} ranges of {} slots every {slot_stride} from slot {} end past the sink's {sink_capacity}",
            params.range.count, params.range.offset
        )));
    }
    let shifted: Vec<PartExtent> = parts
        .iter()
        .map(|p| PartExtent {
            first: u32::try_from(u64::from(p.first) + last * u64::from(p.count))
                .unwrap_or(u32::MAX),
            ..*p
        })
        .collect();
    check_parts(params.vertex_count, &shifted, vertex_bytes)?;
    Ok(span)
}

/// One dispatch of a lift, planned: `count` slots from slot `slot` (instance 0's), reading posed
/// vertices from `posed_base` (+ `posed_stride` per instance) of part `part`'s buffers, or clearing
/// them (`clear`: slots of the range past the vertices, with part 0's buffers bound but unread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedPiece {
    /// First slot (of instance 0).
    pub slot: u64,
    /// Slots (vertices) this dispatch covers per instance.
    pub count: u32,
    /// First posed vertex in the part's buffer (instance 0).
    pub posed_base: u32,
    /// Posed vertices between one instance and the next (0 for a clear).
    pub posed_stride: u32,
    /// Which part's buffers are bound.
    pub part: usize,
    /// A clear dispatch.
    pub clear: bool,
}

/// The dispatches of a lift of `parts` (already checked: [`check_target`], [`check_parts`],
/// [`check_batch`]) into `params.range`: one per part, then clears of the range's slots past the
/// vertices in pieces of at most `max_slots` (so each binding fits the device's limit).
///
/// # Errors
/// [`Error::Invalid`] for a lift of no parts (a rig without vertices).
pub fn plan_pieces(
    params: &DebugLiftParams,
    parts: &[PartExtent],
    max_slots: u64,
) -> Result<Vec<PlannedPiece>> {
    if parts.is_empty() {
        return Err(Error::Invalid {
            what: "debug lift".into(),
            reason: "the rig has no vertices".into(),
        });
    }
    let offset = u64::from(params.range.offset);
    let mut out: Vec<PlannedPiece> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| PlannedPiece {
            slot: offset + u64::from(p.v0),
            count: p.count,
            posed_base: p.first,
            posed_stride: p.count,
            part: i,
            clear: false,
        })
        .collect();
    let (mut slot, end) = (offset + u64::from(params.vertex_count), params.range.end());
    while slot < end {
        let n = (end - slot).min(max_slots.max(1)).min(u64::from(u32::MAX)) as u32;
        out.push(PlannedPiece {
            slot,
            count: n,
            posed_base: 0,
            posed_stride: 0,
            part: 0,
            clear: true,
        });
        slot += u64::from(n);
    }
    Ok(out)
}
