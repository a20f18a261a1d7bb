//! NVIDIA Audio2Face blendshape-weight export (JSON) → a [`WeightStream`].
//!
//! The file (Audio2Face's "Export → Blendshape weights (JSON)") holds `exportFps` (frames per
//! second), `numPoses` (channels), `numFrames`, `facsNames` (the channel names: Audio2Face's ARKit
//! solve names them exactly as ARKit does, `eyeBlinkLeft` … `tongueOut`) and `weightMat`
//! (`numFrames` rows of `numPoses` weights). Frame `k` is at `k / exportFps` seconds. Names are
//! kept as the file spells them and bound by [`crate::anim::canon`] like any stream's: a name that
//! is not an ARKit channel is reported unmatched, never dropped silently.
//!
//! A blendshape export may also carry `joints` (`jaw`, `eye_L`, `eye_R`) with per-frame
//! `rotations` and `translations`: they are counted in [`Audio2FaceExport::joint_tracks`] and not
//! applied (mien drives the jaw and eyes through their blendshapes). Audio2Face's *emotion-key*
//! export (`emotionNames`, `emotionKeys`) holds no blendshape weights and is refused naming what it
//! is. Source: the exports in DATA.md `audio2face/` (LucasMatuszewski/3d-ai-avatar-babylonjs, ISC).

use std::path::Path;

use serde::Deserialize;

use crate::anim::stream::WeightStream;
use crate::error::{Error, Result};

/// Largest file [`read_audio2face`] reads: 256 MiB (JSON text; about 1,000,000 frames of 52
/// weights).
pub const MAX_AUDIO2FACE_BYTES: u64 = 256 << 20;

/// Frame rates an export may state, frames per second (exclusive of 0).
pub const AUDIO2FACE_FPS_RANGE: (f64, f64) = (0.0, 1000.0);

/// A read blendshape export: the stream and what was not applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Audio2FaceExport {
    /// The weights as a stream (`exportFps` as its nominal rate).
    pub stream: WeightStream,
    /// Names of the joint tracks the file carries (`jaw`, `eye_L`, `eye_R`), not applied.
    pub joint_tracks: Vec<String>,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "exportFps")]
    export_fps: Option<f64>,
    #[serde(rename = "numPoses")]
    num_poses: Option<u64>,
    #[serde(rename = "numFrames")]
    num_frames: Option<u64>,
    #[serde(rename = "facsNames")]
    facs_names: Option<Vec<String>>,
    #[serde(rename = "weightMat")]
    weight_mat: Option<Vec<Vec<serde_json::Value>>>,
    #[serde(default)]
    joints: Option<Vec<String>>,
    #[serde(rename = "emotionNames", default)]
    emotion_names: Option<serde_json::Value>,
}

/// Whether `text` looks like an Audio2Face export (blendshape or emotion keys): a JSON object with
/// `exportFps` and `facsNames` or `emotionNames`. For content detection; cheap.
pub fn looks_like_audio2face(text: &str) -> bool {
    let head = &text[..text.len().min(4096)];
    head.trim_start().starts_with('{')
        && head.contains("\"exportFps\"")
        && (text.contains("\"facsNames\"") || text.contains("\"emotionNames\""))
}

/// Read an Audio2Face blendshape export.
///
/// # Errors
/// [`Error::Io`] / [`Error::Limit`] as [`crate::io::read::read_file_capped`] (cap
/// [`MAX_AUDIO2FACE_BYTES`]); otherwise as [`read_audio2face_str`].
pub fn read_audio2face(path: &Path) -> Result<Audio2FaceExport> {
    let bytes = crate::io::read::read_file_capped(path, MAX_AUDIO2FACE_BYTES)?;
    let label = path.display().to_string();
    let text = String::from_utf8(bytes)
        .map_err(|e| Error::format(&label, "text", format!("not UTF-8 ({})", e.utf8_error())))?;
    read_audio2face_str(&text, &label)
}

/// Parse an Audio2Face blendshape export from `text` (`label` names it in errors).
///
/// # Errors
/// [`Error::Format`] naming `label` and the field: not JSON (with line and column); an emotion-key
/// export; a missing `exportFps`, `facsNames` or `weightMat`; `exportFps` not in (0, 1000];
/// `numPoses` ≠ the number of names or `numFrames` ≠ the number of rows (both counts named); a row
/// of another length (its index); a weight that is not a finite number (`weightMat[k][c]`, with
/// the channel's name); no frames.
pub fn read_audio2face_str(text: &str, label: &str) -> Result<Audio2FaceExport> {
    let raw: Raw = serde_json::from_str(text).map_err(|e| {
        Error::format(
            label,
            format!("JSON (line {}, column {})", e.line(), e.column()),
            e.to_string(),
        )
    })?;
    if raw.emotion_names.is_some() && raw.weight_mat.is_none() {
        return Err(Error::format(
            label,
            "emotionNames",
            "an Audio2Face emotion-key export (emotion weights over time), not blendshape weights; export \"Blendshape weights\" from Audio2Face",
        ));
    }
    let fps = raw
        .export_fps
        .ok_or_else(|| Error::format(label, "exportFps", "missing"))?;
    let (lo, hi) = AUDIO2FACE_FPS_RANGE;
    if !(fps.is_finite() && fps > lo && fps <= hi) {
        return Err(Error::format(
            label,
            "exportFps",
            format!("{fps} is not a frame rate in (0, 1000]"),
        ));
    }
    let names = raw
        .facs_names
        .ok_or_else(|| Error::format(label, "facsNames", "missing"))?;
    let rows = raw
        .weight_mat
        .ok_or_else(|| Error::format(label, "weightMat", "missing"))?;
    let c = names.len();
    if let Some(n) = raw.num_poses
        && n != c as u64
    {
        return Err(Error::format(
            label,
            "numPoses",
            format!("says {n} but facsNames holds {c} names"),
        ));
    }
    if let Some(n) = raw.num_frames
        && n != rows.len() as u64
    {
        return Err(Error::format(
            label,
            "numFrames",
            format!("says {n} but weightMat holds {} rows", rows.len()),
        ));
    }
    if rows.is_empty() {
        return Err(Error::format(label, "weightMat", "no frames"));
    }
    if let Some((i, _)) = names.iter().enumerate().find(|(_, n)| n.trim().is_empty()) {
        return Err(Error::format_at(label, "facsNames", i, "an empty name"));
    }
    let mut values = Vec::with_capacity(rows.len() * c);
    for (k, row) in rows.iter().enumerate() {
        if row.len() != c {
            return Err(Error::format_at(
                label,
                "weightMat",
                k,
                format!("holds {} weights, facsNames {c}", row.len()),
            ));
        }
        for (j, v) in row.iter().enumerate() {
            match v
                .as_f64()
                .filter(|x| x.is_finite() && x.abs() <= f64::from(f32::MAX))
            {
                Some(x) => values.push(x as f32),
                None => {
                    return Err(Error::format(
                        label,
                        format!("weightMat[{k}][{j}] ({})", names[j]),
                        format!("{v} is not a finite number"),
                    ));
                }
            }
        }
    }
    let times = (0..rows.len()).map(|k| k as f64 / fps).collect();
    let stream = WeightStream {
        source: label.to_owned(),
        channels: names,
        times,
        values,
        aux_channels: Vec::new(),
        aux_values: Vec::new(),
        nominal_fps: Some(fps),
    };
    stream.validate()?;
    Ok(Audio2FaceExport {
        stream,
        joint_tracks: raw.joints.unwrap_or_default(),
    })
}
