//! TressFX `.tfx` strands (AMD TressFX 4; the exporter layout `../shared/data/DATA.md` documents):
//! little-endian, a 160-byte header — `f32` version (4.0), `u32` strand count `S`, `u32` points per
//! strand `P`, `u32` byte offset of the positions, four more `u32` offsets (strand UVs, vertex UVs,
//! strand thickness, vertex colours; 0 when absent, ignored here) and 32 reserved `u32` — then
//! `S × P` points of four `f32` (x, y, z, w), strand after strand, root first; `w = 0` marks a
//! pinned point (the root), 1 a free one. Positions are in the exporter's units (Blender units,
//! +Y up for the shared files).
//!
//! Every count and offset is checked against the file before anything is allocated: a file
//! shorter than its header says, counts past [`MAX_TFX_STRANDS`] / [`MAX_TFX_POINTS`], a
//! non-finite coordinate (named by strand and point), a strand of zero length — each refused.

use std::path::Path;

use crate::error::{Error, Result};

/// Header size, bytes.
pub const TFX_HEADER_BYTES: usize = 160;
/// Largest coordinate a `.tfx` point may have, in the file's units (the rest-geometry rule's
/// ±10⁶: past it, f32 grooms lose their segments to rounding).
pub const MAX_COORDINATE: f32 = 1.0e6;
/// Most strands a `.tfx` file may hold (the groom limit of rendered strands).
pub const MAX_TFX_STRANDS: usize = 65_536;
/// Most points per strand a `.tfx` file may hold.
pub const MAX_TFX_POINTS: usize = 64;
/// Largest `.tfx` file read, bytes (65,536 strands × 64 points × 16 bytes, plus the header).
pub const MAX_TFX_BYTES: u64 = (MAX_TFX_STRANDS * MAX_TFX_POINTS * 16 + TFX_HEADER_BYTES) as u64;

/// Strands read from a `.tfx` file.
#[derive(Clone, Debug, PartialEq)]
pub struct TfxStrands {
    /// The file, for messages.
    pub source: String,
    /// The header's version (4.0 for the shared files).
    pub version: f32,
    /// Strands `S`.
    pub strands: usize,
    /// Points per strand `P` (≥ 2).
    pub points_per_strand: usize,
    /// Positions `(S·P, 3)`, strand after strand, root first, in the file's units.
    pub positions: Vec<[f32; 3]>,
    /// Whether each point is pinned (`w = 0`) `(S·P,)`.
    pub pinned: Vec<bool>,
}

impl TfxStrands {
    /// Strand `s`'s points `(P, 3)`.
    pub fn strand(&self, s: usize) -> &[[f32; 3]] {
        let p = self.points_per_strand;
        &self.positions[s * p..(s + 1) * p]
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parse `.tfx` bytes (module doc); `file` names it in errors.
///
/// # Errors
/// [`Error::Format`] naming the field (and the strand / point index) for a short header, a
/// version other than 4, zero counts, a position block outside the file, a non-finite coordinate
/// or a zero-length strand; [`Error::Limit`] for counts past the limits, before allocating.
pub fn parse_tfx(bytes: &[u8], file: &str) -> Result<TfxStrands> {
    if bytes.len() < TFX_HEADER_BYTES {
        return Err(Error::format(
            file,
            "header",
            format!(
                "{} bytes, shorter than the {TFX_HEADER_BYTES}-byte TressFX header",
                bytes.len()
            ),
        ));
    }
    let version = f32_at(bytes, 0);
    if version != 4.0 {
        return Err(Error::format(
            file,
            "header.version",
            format!("{version} (mien reads TressFX 4.0 files)"),
        ));
    }
    let strands = u32_at(bytes, 4) as usize;
    let points = u32_at(bytes, 8) as usize;
    let offset = u32_at(bytes, 12) as usize;
    if strands == 0 {
        return Err(Error::format(file, "header.numHairStrands", "0 strands"));
    }
    if points < 2 {
        return Err(Error::format(
            file,
            "header.numVerticesPerStrand",
            format!("{points} points per strand (a strand needs at least 2)"),
        ));
    }
    if strands > MAX_TFX_STRANDS {
        return Err(Error::Limit {
            what: format!("{file}: strands"),
            limit: MAX_TFX_STRANDS as u64,
            found: strands as u64,
        });
    }
    if points > MAX_TFX_POINTS {
        return Err(Error::Limit {
            what: format!("{file}: points per strand"),
            limit: MAX_TFX_POINTS as u64,
            found: points as u64,
        });
    }
    let n = strands * points;
    let need = offset.checked_add(n * 16);
    if offset < TFX_HEADER_BYTES || need.is_none_or(|e| e > bytes.len()) {
        return Err(Error::format(
            file,
            "header.offsetVertexPosition",
            format!(
                "positions at byte {offset} for {strands} × {points} points ({} bytes) do not fit the {}-byte file after its {TFX_HEADER_BYTES}-byte header",
                n * 16,
                bytes.len()
            ),
        ));
    }
    let mut positions = Vec::with_capacity(n);
    let mut pinned = Vec::with_capacity(n);
    for i in 0..n {
        let at = offset + i * 16;
        let p = [
            f32_at(bytes, at),
            f32_at(bytes, at + 4),
            f32_at(bytes, at + 8),
        ];
        let w = f32_at(bytes, at + 12);
        if !(p.iter().all(|c| c.is_finite() && c.abs() <= MAX_COORDINATE) && w.is_finite()) {
            return Err(Error::format(
                file,
                format!("strands[{}].points[{}]", i / points, i % points),
                format!(
                    "not finite or beyond ±{MAX_COORDINATE:e} units: ({:e}, {:e}, {:e}, w {w})",
                    p[0], p[1], p[2]
                ),
            ));
        }
        positions.push(p);
        pinned.push(w == 0.0);
    }
    let out = TfxStrands {
        source: file.to_string(),
        version,
        strands,
        points_per_strand: points,
        positions,
        pinned,
    };
    for s in 0..strands {
        let st = out.strand(s);
        let len: f64 = st
            .windows(2)
            .map(|w| {
                let d = [w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]];
                f64::from(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
            })
            .sum();
        if len <= 0.0 {
            return Err(Error::format(
                file,
                format!("strands[{s}]"),
                "zero length (every point in one place)",
            ));
        }
    }
    Ok(out)
}

/// Read a `.tfx` file (at most [`MAX_TFX_BYTES`]).
///
/// # Errors
/// An unreadable or oversized file; every refusal of [`parse_tfx`].
pub fn read_tfx(path: &Path) -> Result<TfxStrands> {
    let bytes = crate::io::read::read_file_capped(path, MAX_TFX_BYTES)?;
    parse_tfx(&bytes, &path.display().to_string())
}

impl TfxStrands {
    /// Every strand resampled to `segments` segments of equal arc length (`segments + 1` points,
    /// the first and last points kept): `(S·(segments+1), 3)`, strand after strand — how a
    /// TressFX groom becomes guides within [`crate::hair::groom::MAX_SEGMENTS`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for 0 segments.
    pub fn resampled(&self, segments: usize) -> Result<Vec<[f32; 3]>> {
        if segments == 0 {
            return Err(Error::Invalid {
                what: format!("{}: resampling", self.source),
                reason: "0 segments".into(),
            });
        }
        let mut out = Vec::with_capacity(self.strands * (segments + 1));
        for s in 0..self.strands {
            let pts: Vec<glam::DVec3> = self
                .strand(s)
                .iter()
                .map(|p| glam::DVec3::from(p.map(f64::from)))
                .collect();
            // Cumulative arc length at each point.
            let mut acc = vec![0.0f64; pts.len()];
            for i in 1..pts.len() {
                acc[i] = acc[i - 1] + pts[i].distance(pts[i - 1]);
            }
            let total = acc[pts.len() - 1];
            let mut j = 0;
            for k in 0..=segments {
                let want = total * k as f64 / segments as f64;
                while j + 2 < pts.len() && acc[j + 1] < want {
                    j += 1;
                }
                let span = acc[j + 1] - acc[j];
                let t = if span > 0.0 {
                    ((want - acc[j]) / span).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let p = if k == segments {
                    pts[pts.len() - 1]
                } else {
                    pts[j].lerp(pts[j + 1], t)
                };
                out.push(p.as_vec3().to_array());
            }
        }
        Ok(out)
    }
}
