//! MediaPipe Face Landmarker blendshape scores → a [`WeightStream`], in the layouts people save:
//!
//! | layout | shape | frames |
//! |---|---|---|
//! | text protobuf `ClassificationList` (`.pbtxt`, MediaPipe's own test data) | `classification { index score label }` × 52 | one, at 0 s |
//! | JSON `{"people": [[{"name", "score"}, …], …]}` (V-Sekai's labeler) | one list per face | one, at 0 s (the first face) |
//! | JSON of the Tasks API's per-frame results: an array of `{"timestampMs", "faceBlendshapes": [{"categories": [{"categoryName", "score", …}]}]}` | one result per video frame | one per result, at `timestampMs / 1000` s from the first |
//!
//! Channel names are MediaPipe's (`_neutral`, `browDownLeft` … `noseSneerRight`, ARKit's names
//! without `tongueOut`), kept as written and bound by [`crate::anim::canon`] (which ignores
//! `_neutral` on purpose, with its reason). Every frame must list the same names in the same
//! order; a frame without a face (an empty `faceBlendshapes`) is refused naming its index, since
//! holding the last one would invent motion. Scores are MediaPipe's 0–1 probabilities.
//! Source: MediaPipe `classification.proto`, the Face Landmarker Tasks API docs
//! (`FaceLandmarkerResult.faceBlendshapes`), DATA.md `mediapipe/`.

use std::path::Path;

use crate::anim::stream::WeightStream;
use crate::error::{Error, Result};

/// Largest file [`read_mediapipe`] reads: 256 MiB.
pub const MAX_MEDIAPIPE_BYTES: u64 = 256 << 20;

/// Whether `text` looks like one of the MediaPipe layouts (for content detection).
pub fn looks_like_mediapipe(text: &str) -> bool {
    let head = &text[..text.len().min(4096)];
    head.contains("classification {")
        || head.contains("\"people\"")
        || head.contains("\"faceBlendshapes\"")
}

/// Read a MediaPipe blendshape file (any layout above, by content).
///
/// # Errors
/// As [`crate::io::read::read_file_capped`] (cap [`MAX_MEDIAPIPE_BYTES`]); not UTF-8; as
/// [`read_mediapipe_str`].
pub fn read_mediapipe(path: &Path) -> Result<WeightStream> {
    let bytes = crate::io::read::read_file_capped(path, MAX_MEDIAPIPE_BYTES)?;
    let label = path.display().to_string();
    let text = String::from_utf8(bytes)
        .map_err(|e| Error::format(&label, "text", format!("not UTF-8 ({})", e.utf8_error())))?;
    read_mediapipe_str(&text, &label)
}

/// Parse a MediaPipe blendshape file from `text` (`label` names it in errors).
///
/// # Errors
/// [`Error::Format`] naming `label` and the field: none of the layouts; not JSON (line, column);
/// a category without a name or a finite score (its frame and index); frames whose names differ
/// from the first frame's (frame, index, both names); a frame without a face; timestamps that do
/// not increase (the frame); no frames.
pub fn read_mediapipe_str(text: &str, label: &str) -> Result<WeightStream> {
    let trimmed = text.trim_start();
    let (frames, times): (Vec<Vec<(String, f32)>>, Vec<f64>) = if trimmed.starts_with('{')
        || trimmed.starts_with('[')
    {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            Error::format(
                label,
                format!("JSON (line {}, column {})", e.line(), e.column()),
                e.to_string(),
            )
        })?;
        json_frames(&v, label)?
    } else if trimmed.contains("classification") {
        (vec![pbtxt_frame(text, label)?], vec![0.0])
    } else {
        return Err(Error::format(
            label,
            "format",
            "not a MediaPipe blendshape file (a ClassificationList text proto, {\"people\": …} JSON, or Face Landmarker results with faceBlendshapes)",
        ));
    };
    let first = frames
        .first()
        .ok_or_else(|| Error::format(label, "frames", "no frames"))?;
    let names: Vec<String> = first.iter().map(|(n, _)| n.clone()).collect();
    let mut values = Vec::with_capacity(frames.len() * names.len());
    for (k, f) in frames.iter().enumerate() {
        if f.len() != names.len() {
            return Err(Error::format_at(
                label,
                "frames",
                k,
                format!("{} categories, the first frame {}", f.len(), names.len()),
            ));
        }
        for (j, (n, s)) in f.iter().enumerate() {
            if *n != names[j] {
                return Err(Error::format_at(
                    label,
                    "frames",
                    k,
                    format!("category {j} is `{n}`, the first frame's `{}`", names[j]),
                ));
            }
            values.push(*s);
        }
    }
    let t0 = times[0];
    let stream = WeightStream {
        source: label.to_owned(),
        channels: names,
        times: times.iter().map(|t| (t - t0) / 1000.0).collect(),
        values,
        aux_channels: Vec::new(),
        aux_values: Vec::new(),
        nominal_fps: None,
    };
    stream.validate()?;
    Ok(stream)
}

/// A score: a finite JSON number, as f32.
fn score(v: &serde_json::Value) -> Option<f32> {
    v.as_f64()
        .filter(|x| x.is_finite() && x.abs() <= f64::from(f32::MAX))
        .map(|x| x as f32)
}

/// One list of categories (`name`/`categoryName`/`label` + `score`) at `at` (for errors).
fn categories(list: &[serde_json::Value], label: &str, at: &str) -> Result<Vec<(String, f32)>> {
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let name = ["categoryName", "name", "label"]
                .iter()
                .find_map(|k| c.get(*k).and_then(|n| n.as_str()))
                .ok_or_else(|| {
                    Error::format(
                        label,
                        format!("{at}[{i}]"),
                        "a category without a name (categoryName, name or label)",
                    )
                })?;
            let s = c.get("score").and_then(score).ok_or_else(|| {
                Error::format(
                    label,
                    format!("{at}[{i}].score"),
                    "missing or not a finite number",
                )
            })?;
            Ok((name.to_owned(), s))
        })
        .collect()
}

fn json_frames(v: &serde_json::Value, label: &str) -> Result<(Vec<Vec<(String, f32)>>, Vec<f64>)> {
    if let Some(people) = v.get("people") {
        let face = people
            .as_array()
            .and_then(|p| p.first())
            .and_then(|f| f.as_array())
            .ok_or_else(|| Error::format(label, "people[0]", "no face (an empty list)"))?;
        return Ok((vec![categories(face, label, "people[0]")?], vec![0.0]));
    }
    let results: Vec<&serde_json::Value> = match v {
        serde_json::Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut frames = Vec::with_capacity(results.len());
    let mut times = Vec::with_capacity(results.len());
    for (k, r) in results.iter().enumerate() {
        let at = format!("[{k}].faceBlendshapes");
        let faces = r
            .get("faceBlendshapes")
            .and_then(|f| f.as_array())
            .ok_or_else(|| Error::format(label, at.clone(), "missing"))?;
        let face = faces.first().ok_or_else(|| {
            Error::format(
                label,
                at.clone(),
                "no face in this frame (the tracker lost it)",
            )
        })?;
        let cats = face
            .get("categories")
            .and_then(|c| c.as_array())
            .ok_or_else(|| Error::format(label, format!("{at}[0].categories"), "missing"))?;
        frames.push(categories(cats, label, &format!("{at}[0].categories"))?);
        // Milliseconds, as the file gives them (seconds after subtracting the first).
        let t = match r.get("timestampMs") {
            Some(t) => t.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                Error::format(label, format!("[{k}].timestampMs"), "not a finite number")
            })?,
            None if results.len() == 1 => 0.0,
            None => {
                return Err(Error::format(
                    label,
                    format!("[{k}].timestampMs"),
                    "missing (a sequence of frames needs their times)",
                ));
            }
        };
        if let Some(&prev) = times.last()
            && t <= prev
        {
            return Err(Error::format(
                label,
                format!("[{k}].timestampMs"),
                format!("{t} ms does not follow {prev} ms"),
            ));
        }
        times.push(t);
    }
    Ok((frames, times))
}

/// The `classification { … }` blocks of a text-proto ClassificationList, in file order.
fn pbtxt_frame(text: &str, label: &str) -> Result<Vec<(String, f32)>> {
    let mut out = Vec::new();
    let mut cur: Option<(Option<String>, Option<f32>, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let n = i + 1;
        if line.is_empty() {
            continue;
        }
        if line.starts_with("classification") && line.ends_with('{') {
            if cur.is_some() {
                return Err(Error::format(
                    label,
                    format!("line {n}"),
                    "a block opens inside another",
                ));
            }
            cur = Some((None, None, n));
            continue;
        }
        if line == "}" {
            let (name, s, start) = cur.take().ok_or_else(|| {
                Error::format(label, format!("line {n}"), "a `}` without its block")
            })?;
            let name = name.ok_or_else(|| {
                Error::format(label, format!("classification (line {start})"), "no label")
            })?;
            let s = s.ok_or_else(|| {
                Error::format(label, format!("classification (line {start})"), "no score")
            })?;
            out.push((name, s));
            continue;
        }
        let Some(entry) = cur.as_mut() else {
            return Err(Error::format(
                label,
                format!("line {n}"),
                format!("`{line}` outside a classification block"),
            ));
        };
        let (key, value) = line
            .split_once(':')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| {
                Error::format(
                    label,
                    format!("line {n}"),
                    format!("`{line}` is not `key: value`"),
                )
            })?;
        match key {
            "label" => {
                let s = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .ok_or_else(|| {
                        Error::format(label, format!("line {n}"), "a label must be quoted")
                    })?;
                entry.0 = Some(s.to_owned());
            }
            "score" => {
                let s = value
                    .parse::<f32>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        Error::format(
                            label,
                            format!("line {n}"),
                            format!("score `{value}` is not a finite number"),
                        )
                    })?;
                entry.1 = Some(s);
            }
            _ => {}
        }
    }
    if let Some((_, _, start)) = cur {
        return Err(Error::format(
            label,
            format!("classification (line {start})"),
            "not closed",
        ));
    }
    Ok(out)
}

/// Time columns [`read_score_csv`] accepts (compared case-insensitively) and their units per
/// second: milliseconds (1000) as MediaPipe's `timestampMs` saves, or seconds (1).
pub const SCORE_CSV_TIME_COLUMNS: [(&str, f64); 6] = [
    ("timestamp_ms", 1000.0),
    ("timestampms", 1000.0),
    ("time_ms", 1000.0),
    ("time_s", 1.0),
    ("time", 1.0),
    ("seconds", 1.0),
];

/// Read blendshape scores saved as CSV, the layout people write from MediaPipe's per-frame
/// results: a header of a time column ([`SCORE_CSV_TIME_COLUMNS`]) then one column per blendshape
/// (`_neutral`, `browDownLeft`, …, any names), then one row per frame. Other columns named like a
/// frame index (`frame`, `frame_index`) are skipped. Times are made relative to the first row.
///
/// # Errors
/// [`Error::Format`] naming `label`, the column and the 1-based line: no time column (naming the
/// accepted ones); a row of another length; a value that is not a finite number; times that do not
/// increase; no rows.
pub fn read_score_csv(text: &str, label: &str) -> Result<WeightStream> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines
        .next()
        .ok_or_else(|| Error::format(label, "header", "the file is empty"))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let (time_col, unit) = cols
        .iter()
        .enumerate()
        .find_map(|(i, c)| {
            SCORE_CSV_TIME_COLUMNS
                .iter()
                .find(|(n, _)| c.eq_ignore_ascii_case(n))
                .map(|(_, u)| (i, *u))
        })
        .ok_or_else(|| {
            Error::format(
                label,
                "header (line 1)",
                format!(
                    "no time column: name one of {} (or save a Live Link Face CSV with Timecode)",
                    SCORE_CSV_TIME_COLUMNS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
    let skip = |c: &str| {
        let l = c.to_ascii_lowercase();
        l == "frame" || l == "frame_index" || l == "frameindex"
    };
    let value_cols: Vec<usize> = (0..cols.len())
        .filter(|&i| i != time_col && !skip(cols[i]))
        .collect();
    let mut times = Vec::new();
    let mut values = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != cols.len() {
            return Err(Error::format(
                label,
                format!("line {n}"),
                format!("{} fields, the header {}", f.len(), cols.len()),
            ));
        }
        let num = |i: usize| {
            f[i].parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    Error::format(
                        label,
                        format!("{} (line {n})", cols[i]),
                        format!("`{}` is not a finite number", f[i]),
                    )
                })
        };
        let t = num(time_col)?;
        if let Some(&prev) = times.last()
            && t <= prev
        {
            return Err(Error::format(
                label,
                format!("{} (line {n})", cols[time_col]),
                "does not follow the previous row's time",
            ));
        }
        times.push(t);
        for &i in &value_cols {
            let v = num(i)?;
            if v.abs() > f64::from(f32::MAX) {
                return Err(Error::format(
                    label,
                    format!("{} (line {n})", cols[i]),
                    "out of f32 range",
                ));
            }
            values.push(v as f32);
        }
    }
    if times.is_empty() {
        return Err(Error::format(label, "rows", "no frames"));
    }
    let t0 = times[0];
    let stream = WeightStream {
        source: label.to_owned(),
        channels: value_cols.iter().map(|&i| cols[i].to_owned()).collect(),
        times: times.iter().map(|t| (t - t0) / unit).collect(),
        values,
        aux_channels: Vec::new(),
        aux_values: Vec::new(),
        nominal_fps: None,
    };
    stream.validate()?;
    Ok(stream)
}
