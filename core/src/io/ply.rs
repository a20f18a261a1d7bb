//! Standard 3D Gaussian Splatting `.ply` files: the writer for sink buffers and a generic reader.
//!
//! # Layout (what every splat viewer opens)
//! `format binary_little_endian 1.0`, one `element vertex N`, all properties `float`, in the order
//! of the INRIA reference implementation (`graphdeco-inria/gaussian-splatting`,
//! `GaussianModel.construct_list_of_attributes`):
//! `x y z nx ny nz f_dc_0 f_dc_1 f_dc_2 [f_rest_0 … f_rest_44] opacity scale_0 scale_1 scale_2
//! rot_0 rot_1 rot_2 rot_3`. No comment lines: INRIA's SIBR viewer reads the vertex count from
//! the third header line.
//!
//! **SH degree.** By default ([`ShBands::Degree3`]) the 45 `f_rest_*` coefficients are written,
//! all zero (mien's colours are view-independent). SIBR, the INRIA viewer, reads each record as
//! a fixed 62-float struct (`RichPoint<3>`) whatever the header says, and INRIA's
//! `GaussianModel.load_ply` asserts 45 `f_rest` at SH degree 3, so a file without them is
//! misread or refused there. Viewers that parse the header by name (antimatter15/splat,
//! PlayCanvas SuperSplat / splat-transform, gsplat, nerfstudio) also accept [`ShBands::Dc`],
//! which drops `f_rest` and makes the file 3.6× smaller (68 instead of 248 bytes per splat).
//!
//! **Conventions** (see [`gaussian`]): `f_dc = (rgb − 0.5) / C0` with
//! `C0 = 0.28209479177387814`; `opacity = logit(a)` with `a` clamped to `[1e-6, 1 − 1e-6]`;
//! `scale_i = ln σ_i` with `σ_i²` the covariance's eigenvalues (floored at
//! [`SIGMA2_FLOOR`]); `rot = (w, x, y, z)` of the proper eigenvector rotation `R`, so
//! `Σ = R·diag(σ²)·Rᵀ`; normals are written as zero (as INRIA does).
//!
//! **Transparent slots.** Slots whose packed opacity byte is 0 are the sink's cleared slots
//! (DESIGN.md: owned but unused slots are written with opacity 0). By default
//! ([`TransparentSlots::Skip`]) they are left out of the file; [`TransparentSlots::Keep`] writes
//! them (opacity logit ≈ −13.8, the covariance floored) so that splat `i` of every frame of a
//! sequence is the same slot.

pub mod compressed;
pub mod gaussian;
mod reader;

pub use gaussian::{SH_C0, SIGMA2_FLOOR, ScaleRotation, compose_covariance, decompose_covariance};
pub use reader::{
    MAX_HEADER_BYTES, MAX_PLY_BYTES, PlyProperty, ScalarKind, SplatCloud, parse_splat_ply,
    read_splat_ply, sh_degree_of,
};

use std::path::Path;

use crate::error::{Error, Result};
use crate::io::atomic::write_atomic_bytes;
use crate::sink::{SlotRange, SplatBuffers};

/// Number of `f_rest_*` coefficients at SH degree 3: `3·((3+1)² − 1)`.
pub const F_REST_DEGREE3: usize = 45;

/// Which spherical-harmonic coefficients the writer emits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShBands {
    /// `f_dc_*` only (SH degree 0, 17 floats per splat).
    Dc,
    /// `f_dc_*` plus 45 zero `f_rest_*` (SH degree 3, 62 floats per splat): the INRIA layout.
    #[default]
    Degree3,
}

/// What the writer does with slots whose opacity byte is 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransparentSlots {
    /// Leave them out (counted in [`PlyStats::skipped_transparent`]).
    #[default]
    Skip,
    /// Write them (opacity clamped to 1e-6, counted in [`PlyStats::opacity_clamped`]).
    Keep,
}

/// Writer options; the default is the full INRIA layout without transparent slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlyOptions {
    /// SH coefficients written.
    pub sh: ShBands,
    /// Handling of opacity-0 slots.
    pub transparent: TransparentSlots,
}

/// What a write did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PlyStats {
    /// Splats in the file (`element vertex N`).
    pub written: u64,
    /// Opacity-0 slots left out.
    pub skipped_transparent: u64,
    /// Splats whose opacity was clamped into `[1e-6, 1 − 1e-6]` before the logit (opacity 0 or 1).
    pub opacity_clamped: u64,
    /// Covariance eigenvalues raised to [`SIGMA2_FLOOR`] (up to 3 per splat).
    pub scale_clamped: u64,
}

/// The property names of the INRIA layout, in file order.
pub fn inria_property_names(sh: ShBands) -> Vec<String> {
    let mut names: Vec<String> = [
        "x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2",
    ]
    .map(String::from)
    .to_vec();
    if sh == ShBands::Degree3 {
        names.extend((0..F_REST_DEGREE3).map(|k| format!("f_rest_{k}")));
    }
    names.push("opacity".into());
    names.extend((0..3).map(|k| format!("scale_{k}")));
    names.extend((0..4).map(|k| format!("rot_{k}")));
    names
}

/// One splat in file units, before serialisation.
struct Record {
    center: [f32; 3],
    f_dc: [f32; 3],
    opacity: f32,
    scale: [f32; 3],
    rot: [f32; 4],
}

/// Write the slots `ranges` of `buffers` to `path` as a 3DGS `.ply` with the default
/// [`PlyOptions`] (INRIA layout with zero `f_rest`, opacity-0 slots skipped). See
/// [`write_splat_ply_with`].
///
/// # Errors
/// As [`write_splat_ply_with`].
pub fn write_splat_ply(
    path: &Path,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<PlyStats> {
    write_splat_ply_with(path, buffers, ranges, &PlyOptions::default())
}

/// [`encode_splat_ply`], then the bytes written to `path` atomically ([`write_atomic_bytes`]: the
/// target keeps its old content, or stays absent, on any error).
///
/// # Errors
/// As [`encode_splat_ply`]; [`Error::Io`] when writing fails.
pub fn write_splat_ply_with(
    path: &Path,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
    options: &PlyOptions,
) -> Result<PlyStats> {
    let (bytes, stats) = encode_splat_ply(buffers, ranges, options)?;
    write_atomic_bytes(path, &bytes)?;
    Ok(stats)
}

/// Encode the slots `ranges` of `buffers` (in range order, then slot order) as a binary
/// little-endian 3DGS `.ply` in the layout and conventions of the module docs: the bytes and
/// what was written. The same shape as [`crate::io::spz::encode_spz`] and
/// [`crate::io::splat_glb::encode_splat_glb`]; every splat is converted before any byte is made.
///
/// # Errors
/// [`Error::Mismatch`] / [`Error::Slots`] for inconsistent buffers or a range outside them;
/// [`Error::Format`] (file `splat buffers`, field `center` or `covariance`, index = slot) for a
/// written slot with a non-finite centre or covariance.
pub fn encode_splat_ply(
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
    options: &PlyOptions,
) -> Result<(Vec<u8>, PlyStats)> {
    buffers.check_file_ranges(ranges)?;
    let mut stats = PlyStats::default();
    let mut records = Vec::new();
    for r in ranges {
        for i in r.offset as usize..r.end() as usize {
            if options.transparent == TransparentSlots::Skip && buffers.color[i] >> 24 == 0 {
                stats.skipped_transparent += 1;
                continue;
            }
            records.push(convert_slot(buffers, i, &mut stats)?);
        }
    }
    stats.written = records.len() as u64;

    let names = inria_property_names(options.sh);
    let mut header = format!(
        "ply\nformat binary_little_endian 1.0\nelement vertex {}\n",
        records.len()
    );
    for name in &names {
        header.push_str("property float ");
        header.push_str(name);
        header.push('\n');
    }
    header.push_str("end_header\n");

    let f_rest = if options.sh == ShBands::Degree3 {
        F_REST_DEGREE3
    } else {
        0
    };
    let mut out: Vec<u8> = Vec::with_capacity(header.len() + records.len() * 4 * names.len());
    out.extend_from_slice(header.as_bytes());
    for rec in &records {
        let mut put = |v: f32| out.extend_from_slice(&v.to_le_bytes());
        rec.center.iter().for_each(|&v| put(v));
        (0..3).for_each(|_| put(0.0));
        rec.f_dc.iter().for_each(|&v| put(v));
        (0..f_rest).for_each(|_| put(0.0));
        put(rec.opacity);
        rec.scale.iter().for_each(|&v| put(v));
        rec.rot.iter().for_each(|&v| put(v));
    }
    Ok((out, stats))
}

/// Convert slot `i` to file units, counting clamps.
fn convert_slot(buffers: &SplatBuffers, i: usize, stats: &mut PlyStats) -> Result<Record> {
    const FILE: &str = "splat buffers";
    let c = buffers.center[i];
    if !c[..3].iter().all(|v| v.is_finite()) {
        return Err(Error::format_at(FILE, "center", i, "not finite"));
    }
    let cov = buffers.covariance(i).map(|row| row.map(f64::from));
    let sr = decompose_covariance(cov).ok_or_else(|| {
        Error::format_at(
            FILE,
            "covariance",
            i,
            "not finite (or no eigen-decomposition)",
        )
    })?;
    stats.scale_clamped += u64::from(sr.clamped);
    let rgba = buffers.rgba(i).map(f64::from);
    let (logit, clamped) = gaussian::opacity_to_logit(rgba[3]);
    stats.opacity_clamped += u64::from(clamped);
    Ok(Record {
        center: [c[0], c[1], c[2]],
        f_dc: [0, 1, 2].map(|k| gaussian::rgb_to_sh_dc(rgba[k]) as f32),
        opacity: logit as f32,
        scale: sr.log_scale.map(|s| s as f32),
        rot: sr.rotation.map(|q| q as f32),
    })
}
