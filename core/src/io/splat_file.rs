//! One entry for the three splat files mien writes — 3DGS `.ply` ([`crate::io::ply`]), SPZ
//! ([`crate::io::spz`]) and glTF `KHR_gaussian_splatting` `.glb` ([`crate::io::splat_glb`]) — in
//! one shape: `encode_*` gives the bytes, `write_*` writes them to a path atomically.
//!
//! **Ranges** index the buffers they are given: for a runtime's instance read-out
//! (`Runtime::splats(i)`, instance-local) pass [`SplatBuffers::all`]; for the whole sink
//! (`Runtime::splats_all()`) pass `Runtime::sink_range(i)` per instance, or [`SplatBuffers::all`]
//! for every instance in one file.

use std::path::Path;

use crate::error::{Error, Result};
use crate::io::ply::{PlyOptions, ShBands, encode_splat_ply};
use crate::io::splat_glb::encode_splat_glb;
use crate::io::spz::encode_spz;
use crate::sink::{SlotRange, SplatBuffers};

/// A splat file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SplatFormat {
    /// The 3DGS `.ply` with `f_dc_*` only (17 floats, 68 bytes a splat: `mien animate`'s
    /// default `--ply dc`); for the INRIA layout with 45 zero `f_rest_*` use
    /// [`crate::io::ply::encode_splat_ply`] with [`crate::io::ply::ShBands::Degree3`].
    Ply,
    /// Niantic's SPZ (gzip, fixed point; about a tenth of the `.ply`).
    Spz,
    /// glTF 2.0 `.glb` with one `KHR_gaussian_splatting` point primitive.
    Glb,
}

impl SplatFormat {
    /// The file extension, without the dot: `ply`, `spz`, `glb`.
    pub fn extension(self) -> &'static str {
        match self {
            SplatFormat::Ply => "ply",
            SplatFormat::Spz => "spz",
            SplatFormat::Glb => "glb",
        }
    }

    /// The format a path's extension names (case-insensitive), `None` for any other.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "ply" => Some(SplatFormat::Ply),
            "spz" => Some(SplatFormat::Spz),
            "glb" => Some(SplatFormat::Glb),
            _ => None,
        }
    }
}

/// What a splat file holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SplatFileReport {
    /// Splats written.
    pub written: u64,
    /// Opacity-0 slots left out (the sink's cleared slots).
    pub transparent_skipped: u64,
}

/// Encode the slots `ranges` of `buffers` as `format`: the bytes and what they hold.
///
/// # Errors
/// As the format's encoder ([`encode_splat_ply`], [`encode_spz`], [`encode_splat_glb`]): ranges
/// outside the buffers, non-finite centres or covariances (naming the slot), size limits.
pub fn encode_splats(
    format: SplatFormat,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<(Vec<u8>, SplatFileReport)> {
    Ok(match format {
        SplatFormat::Ply => {
            let dc = PlyOptions {
                sh: ShBands::Dc,
                ..PlyOptions::default()
            };
            let (b, s) = encode_splat_ply(buffers, ranges, &dc)?;
            (
                b,
                SplatFileReport {
                    written: s.written,
                    transparent_skipped: s.skipped_transparent,
                },
            )
        }
        SplatFormat::Spz => {
            let (b, s) = encode_spz(buffers, ranges)?;
            (
                b,
                SplatFileReport {
                    written: s.written,
                    transparent_skipped: s.transparent_skipped,
                },
            )
        }
        SplatFormat::Glb => {
            let (b, s) = encode_splat_glb(buffers, ranges)?;
            (
                b,
                SplatFileReport {
                    written: s.written,
                    transparent_skipped: s.transparent_skipped,
                },
            )
        }
    })
}

/// Write the slots `ranges` of `buffers` to `path` in the format its extension names
/// (`.ply`, `.spz`, `.glb`), atomically ([`crate::io::atomic::write_atomic_bytes`]).
///
/// # Errors
/// [`Error::Invalid`] naming `path` for another extension; as [`encode_splats`]; [`Error::Io`]
/// when writing fails (the target is left as it was).
///
/// ```
/// use mien_core::io::splat_file::{SplatFormat, write_splats, encode_splats};
/// use mien_core::sink::{SplatBuffers, pack4x8unorm};
/// let mut b = SplatBuffers::new(2);
/// for i in 0..2 {
///     b.center[i] = [i as f32 * 0.1, 1.5, 0.0, 0.0];
///     b.cov_a[i] = [1e-4, 0.0, 0.0, 1e-4]; // σ = 1 cm, round
///     b.cov_b[i] = [0.0, 1e-4, 0.0, 0.0];
///     b.color[i] = pack4x8unorm([0.8, 0.4, 0.2, 1.0]);
/// }
/// let dir = tempfile::tempdir()?;
/// for ext in ["ply", "spz", "glb"] {
///     let path = dir.path().join(format!("two.{ext}"));
///     let report = write_splats(&path, &b, &[b.all()])?;
///     assert_eq!(report.written, 2);
///     let format = SplatFormat::from_path(&path).unwrap();
///     assert_eq!(std::fs::read(&path)?, encode_splats(format, &b, &[b.all()])?.0);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_splats(
    path: &Path,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<SplatFileReport> {
    let format = SplatFormat::from_path(path).ok_or_else(|| Error::Invalid {
        what: path.display().to_string(),
        reason: "a splat file is .ply, .spz or .glb".into(),
    })?;
    let (bytes, report) = encode_splats(format, buffers, ranges)?;
    crate::io::atomic::write_atomic_bytes(path, &bytes)?;
    Ok(report)
}
