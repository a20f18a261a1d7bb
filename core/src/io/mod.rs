//! File formats: readers (glTF, Live Link Face CSV, 3DGS PLY, SPZ) and writers (3DGS PLY, SPZ, PNG), all
//! writes atomic, all reads bounded ([`read`]: regular files only, under a documented size cap).

pub mod atomic;
pub mod audio2face;
pub mod bound_ply;
pub mod curves;
pub mod dna;
pub mod gltf;
pub mod livelink_csv;
pub mod livelink_udp;
pub mod mediapipe;
pub mod ply;
pub mod read;
pub mod speech;
pub mod splat_file;
pub mod splat_glb;
pub mod spz;

/// Read an ARKit-52 weight stream, by extension: `.csv` a Live Link Face export
/// ([`livelink_csv::read_livelink_csv`]; a CSV without a `Timecode` column is read as per-frame
/// scores with a time column, [`mediapipe::read_score_csv`]), `.json` an Audio2Face blendshape export
/// ([`audio2face::read_audio2face`]) or MediaPipe Face Landmarker scores
/// ([`mediapipe::read_mediapipe`], by content), `.pbtxt` a MediaPipe `ClassificationList`. Returns the stream and notes on what the file holds but mien
/// does not apply (Audio2Face's joint tracks).
///
/// # Errors
/// Another extension, or a `.json` that is not an Audio2Face export (naming the formats mien
/// reads); the readers' errors.
pub fn read_stream(
    path: &std::path::Path,
) -> crate::Result<(crate::anim::WeightStream, Vec<String>)> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let shown = path.display().to_string();
    match ext.as_deref() {
        Some("csv") => {
            // A Live Link Face export names its first column Timecode; any other CSV is read as
            // per-frame blendshape scores with a time column (MediaPipe as people save it).
            let bytes = read::read_file_capped(path, livelink_csv::MAX_LIVELINK_CSV_BYTES)?;
            let Ok(text) = std::str::from_utf8(&bytes) else {
                // Not UTF-8: the Live Link reader names the byte and line (and a UTF-16 save).
                return Ok((livelink_csv::read_livelink_csv(path)?, Vec::new()));
            };
            let header = text
                .trim_start_matches('\u{feff}')
                .lines()
                .next()
                .unwrap_or("");
            let stream = if header.is_empty()
                || header
                    .split(',')
                    .any(|c| c.trim().eq_ignore_ascii_case("timecode"))
            {
                livelink_csv::read_livelink_csv_from_str(text, &shown)?
            } else {
                mediapipe::read_score_csv(text, &shown)?
            };
            Ok((stream, Vec::new()))
        }
        Some("json") => {
            let bytes = read::read_file_capped(path, audio2face::MAX_AUDIO2FACE_BYTES)?;
            let text = String::from_utf8_lossy(&bytes);
            if mediapipe::looks_like_mediapipe(&text) && !audio2face::looks_like_audio2face(&text) {
                return Ok((mediapipe::read_mediapipe_str(&text, &shown)?, Vec::new()));
            }
            if !audio2face::looks_like_audio2face(&text) {
                return Err(crate::Error::format(
                    &shown,
                    "format",
                    "a JSON file that is not an Audio2Face blendshape export (exportFps, facsNames, weightMat) nor MediaPipe blendshape scores (faceBlendshapes, or {\"people\": …})",
                ));
            }
            let a = audio2face::read_audio2face_str(&text, &shown)?;
            let notes = if a.joint_tracks.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "{}: joint tracks {} not applied (the jaw and eyes move through their blendshapes)",
                    shown,
                    a.joint_tracks.join(", ")
                )]
            };
            Ok((a.stream, notes))
        }
        Some("pbtxt") => Ok((mediapipe::read_mediapipe(path)?, Vec::new())),
        _ => Err(crate::Error::format(
            &shown,
            "extension",
            "not an ARKit stream mien reads (a Live Link Face .csv; an Audio2Face blendshape export or MediaPipe scores .json; a MediaPipe ClassificationList .pbtxt)",
        )),
    }
}
