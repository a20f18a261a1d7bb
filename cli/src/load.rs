//! Loading a run's inputs: the character and what drives it.

use std::path::Path;

use anyhow::Result;
use mien_core::anim::Drive;
use mien_runtime::Asset;
use mien_runtime::take::DriveRequest;

use crate::report::AnimationReport;

/// Load `path` (glTF / GLB, or an `.aosrig` linear head pack driven through its control
/// character), or the built-in sample head when `None`.
///
/// # Errors
/// Unsupported extensions and every importer / pack parser error, with the file named.
pub fn character(path: Option<&Path>) -> Result<Asset> {
    Ok(match path {
        Some(p) if p == Path::new(mien_runtime::character::BUILTIN_HEAD) => Asset::builtin(),
        Some(p) if p == Path::new(mien_runtime::character::BUILTIN_BODY) => Asset::builtin_body(),
        Some(p) => Asset::load(p)?,
        None => Asset::builtin(),
    })
}

/// Choose the drive ([`mien_runtime::take::choose_drive`]): `--arkit` stream, `--clip` (a clip,
/// `all`, or `rest`), the built-in performance for the sample head, the character's first clip,
/// or its rest pose.
///
/// # Errors
/// Unreadable streams, a stream that binds to nothing, an unknown clip.
pub fn drive(
    loaded: &Asset,
    arkit: Option<&Path>,
    calibration: Option<&Path>,
    clip: Option<&str>,
    speech: bool,
    animator: bool,
) -> Result<(Drive, AnimationReport)> {
    let (drive, c) = mien_runtime::take::choose_drive(
        loaded,
        &DriveRequest {
            arkit,
            calibration,
            clip,
            speech,
            animator,
        },
    )?;
    let report = AnimationReport {
        kind: c.kind,
        name: c.name,
        span_s: c.span_s,
        binding: c.binding,
        channel_ranges: c.channel_ranges,
        notes: c.notes,
        ..AnimationReport::default()
    };
    Ok((drive, report))
}

pub use mien_runtime::take::clip_label;
