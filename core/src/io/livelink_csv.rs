//! Live Link Face CSV reader: the app's recorded take → a [`WeightStream`].
//!
//! The file (Epic's Live Link Face for iOS, "Export" of a take) is comma-separated text with one
//! header row, `Timecode,BlendShapeCount,EyeBlinkLeft,…,TongueOut,HeadYaw,…,RightEyeRoll`, then one
//! row per captured frame. Columns are found **by header name**, never by position (the real
//! export has `JawRight` before `JawLeft`, unlike the ARKit enum). `BlendShapeCount` (also
//! spelled `BlendshapeCount`) must equal the number of value columns in the file; the nine head /
//! eye angle columns become auxiliary channels (radians), every other column a blendshape channel
//! named as the file spells it (map it with [`crate::anim::canon`]).
//!
//! **Time.** `Timecode` is SMPTE-like `HH:MM:SS:FF.fff`: whole frames `FF` at the timecode rate plus
//! a fractional sub-frame. The rate is not in the file; it is inferred ([`infer_timecode_fps`]) and
//! stored as [`WeightStream::nominal_fps`]. Row time = `(HH·3600 + MM·60 + SS) + FF.fff / fps`,
//! shifted so the first row is at 0 (computed as `(ΔS·fps + ΔFF) / fps`). Timecodes must strictly increase (a wrap past midnight or a
//! repeated timecode is an error naming the line).
//!
//! Errors name the file, the column and the **1-based line number** (the header is line 1). Blank
//! lines are skipped; quoted fields are not part of the format and are refused. Source: the
//! Live Link Face export as found in DATA.md `livelinkface/` (JMTechArt/Pipeline-Examples, MIT).

use std::collections::HashMap;
use std::path::Path;

use crate::anim::stream::WeightStream;
use crate::error::{Error, Result};

/// Largest file [`read_livelink_csv`] reads: 256 MiB (about 500,000 rows of 61 values).
pub const MAX_LIVELINK_CSV_BYTES: u64 = 256 << 20;

/// Header names (compared case-insensitively) of the head / eye angle columns, kept as auxiliary
/// channels in radians rather than blendshapes.
pub const LIVELINK_AUX_COLUMNS: [&str; 9] = [
    "HeadYaw",
    "HeadPitch",
    "HeadRoll",
    "LeftEyeYaw",
    "LeftEyePitch",
    "LeftEyeRoll",
    "RightEyeYaw",
    "RightEyePitch",
    "RightEyeRoll",
];

/// Standard timecode rates [`infer_timecode_fps`] chooses from, frames per second.
pub const TIMECODE_RATES: [u32; 8] = [24, 25, 30, 48, 50, 60, 100, 120];

/// Read a Live Link Face CSV export.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::Format`] (field `file type`) when it is not
/// a regular file (a FIFO, a device); [`Error::Limit`] when it is larger than
/// [`MAX_LIVELINK_CSV_BYTES`] ([`crate::io::read::read_file_capped`]); [`Error::Format`] (field
/// `text`) naming the byte offset and line when the file is not UTF-8; otherwise as
/// [`read_livelink_csv_from_str`].
pub fn read_livelink_csv(path: &Path) -> Result<WeightStream> {
    let bytes = crate::io::read::read_file_capped(path, MAX_LIVELINK_CSV_BYTES)?;
    let label = path.display().to_string();
    let text =
        String::from_utf8(bytes).map_err(|e| not_utf8(&label, e.as_bytes(), e.utf8_error()))?;
    read_livelink_csv_from_str(&text, &label)
}

/// The error for bytes that are not UTF-8: the byte offset and line of the first bad byte, and a
/// hint when the file starts with a UTF-16 byte order mark (a "Unicode" save from a spreadsheet).
fn not_utf8(label: &str, bytes: &[u8], e: std::str::Utf8Error) -> Error {
    let at = e.valid_up_to();
    let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    let hint = if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        " (the file starts with a UTF-16 byte order mark: save it as UTF-8)"
    } else {
        ""
    };
    Error::format(
        label,
        "text",
        format!("not UTF-8 text at byte {at} (line {line}){hint}"),
    )
}

/// The column layout found in the header.
struct Header<'a> {
    width: usize,
    timecode: usize,
    count: usize,
    /// (column, name) of blendshape columns, in file order.
    blend: Vec<(usize, &'a str)>,
    /// (column, name) of angle columns, in file order.
    aux: Vec<(usize, &'a str)>,
    names: Vec<&'a str>,
}

fn parse_header<'a>(label: &str, line: &'a str) -> Result<Header<'a>> {
    let names: Vec<&str> = line.split(',').map(str::trim).collect();
    let (mut timecode, mut count) = (None, None);
    let (mut blend, mut aux) = (Vec::new(), Vec::new());
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(names.len());
    for (c, &name) in names.iter().enumerate() {
        if name.is_empty() || name.contains('"') {
            return Err(Error::format_at(
                label,
                "header",
                1,
                format!("column {c} has an empty or quoted name"),
            ));
        }
        if let Some(first) = seen.insert(name.to_ascii_lowercase(), c) {
            return Err(Error::format_at(
                label,
                name,
                1,
                format!("header names this column twice (columns {first} and {c})"),
            ));
        }
        let lower = name.to_ascii_lowercase();
        if lower == "timecode" {
            timecode = Some(c);
        } else if lower == "blendshapecount" {
            count = Some(c);
        } else if LIVELINK_AUX_COLUMNS
            .iter()
            .any(|a| a.eq_ignore_ascii_case(name))
        {
            aux.push((c, name));
        } else {
            blend.push((c, name));
        }
    }
    let timecode = timecode.ok_or_else(|| {
        Error::format_at(label, "Timecode", 1, "the header has no Timecode column")
    })?;
    let count = count.ok_or_else(|| {
        Error::format_at(
            label,
            "BlendShapeCount",
            1,
            "the header has no BlendShapeCount column",
        )
    })?;
    if blend.is_empty() {
        return Err(Error::format_at(
            label,
            "header",
            1,
            "the header has no blendshape columns",
        ));
    }
    Ok(Header {
        width: names.len(),
        timecode,
        count,
        blend,
        aux,
        names,
    })
}

/// A parsed timecode: whole seconds of the day and the frame number with its sub-frame.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timecode {
    seconds: u32,
    frame: f64,
}

fn digits(s: &str, max: u32) -> Option<u32> {
    if s.is_empty() || s.len() > 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|v| *v <= max)
}

/// `HH:MM:SS:FF[.fff]` with HH < 24, MM < 60, SS < 60, FF at most 3 digits.
fn parse_timecode(s: &str) -> Option<Timecode> {
    let mut parts = s.split(':');
    let h = digits(parts.next()?, 23)?;
    let m = digits(parts.next()?, 59)?;
    let sec = digits(parts.next()?, 59)?;
    let ff = parts.next()?;
    if parts.next().is_some() {
        return None;
    }
    let (whole, frac) = ff.split_once('.').unwrap_or((ff, ""));
    let ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || whole.len() > 3
        || !ok(whole)
        || !ok(frac)
        || (ff.contains('.') && frac.is_empty())
    {
        return None;
    }
    let frame: f64 = ff.parse().ok()?;
    Some(Timecode {
        seconds: h * 3600 + m * 60 + sec,
        frame,
    })
}

/// Infer the timecode rate (frames per second) from timecodes given as (whole seconds, frame
/// number with sub-frame), in file order.
///
/// Rule: the rate is one of [`TIMECODE_RATES`] greater than the largest whole frame number seen
/// (frame numbers run `0 … fps-1`). Among those, where the data crosses whole seconds, pick the
/// rate that makes the steps across a second (`fps − FF₁ + FF₂` frames) closest to the median step
/// within a second (least total absolute difference, ties → the lower rate); this tells 60 from
/// 100 or 120 on the real export. With no step within a second, the lowest candidate; with no
/// step across a second (under a second of capture), 60 — ARKit's capture rate and Live Link
/// Face's default — when the frame numbers allow it, else the lowest candidate.
///
/// # Errors
/// [`Error::Invalid`] when a frame number is 120 or more (no standard rate fits) or not finite.
pub fn infer_timecode_fps(timecodes: &[(u32, f64)]) -> Result<u32> {
    let max_frame = timecodes.iter().map(|&(_, f)| f).fold(0.0f64, f64::max);
    if !max_frame.is_finite() {
        return Err(Error::Invalid {
            what: "timecode frame numbers".into(),
            reason: "not finite".into(),
        });
    }
    let candidates: Vec<u32> = TIMECODE_RATES
        .iter()
        .copied()
        .filter(|&r| f64::from(r) > max_frame.floor())
        .collect();
    let Some(&lowest) = candidates.first() else {
        return Err(Error::Invalid {
            what: "timecode frame numbers".into(),
            reason: format!("frame {max_frame} exceeds every standard rate (at most 120 fps)"),
        });
    };
    let mut within = Vec::new();
    let mut across = Vec::new();
    for w in timecodes.windows(2) {
        let ((s1, f1), (s2, f2)) = (w[0], w[1]);
        if s2 == s1 {
            within.push(f2 - f1);
        } else if s2 == s1 + 1 {
            across.push((f1, f2));
        }
    }
    if across.is_empty() {
        return Ok(if candidates.contains(&60) { 60 } else { lowest });
    }
    if within.is_empty() {
        return Ok(lowest);
    }
    within.sort_by(f64::total_cmp);
    let median = within[within.len() / 2];
    let cost = |r: u32| -> f64 {
        across
            .iter()
            .map(|&(f1, f2)| (f64::from(r) - f1 + f2 - median).abs())
            .sum()
    };
    let mut best = (lowest, cost(lowest));
    for &r in &candidates[1..] {
        let c = cost(r);
        if c < best.1 {
            best = (r, c);
        }
    }
    Ok(best.0)
}

/// Parse Live Link Face CSV text; `label` names the source in errors and in
/// [`WeightStream::source`].
///
/// # Errors
/// [`Error::Format`] naming `label`, the column and the 1-based line number: no header or no data
/// rows; a header without `Timecode` / `BlendShapeCount` or blendshape columns, or with a repeated
/// or empty name; a row with a different number of cells than the header; a bad timecode; a
/// timecode not after the previous row's; a `BlendShapeCount` that is not the number of value
/// columns; a value that is missing, not a number, or not finite. [`Error::Invalid`] when no
/// timecode rate fits ([`infer_timecode_fps`]).
pub fn read_livelink_csv_from_str(text: &str, label: &str) -> Result<WeightStream> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty());
    let (header_line, header_text) = lines
        .next()
        .ok_or_else(|| Error::format(label, "header", "the file is empty (no header row)"))?;
    if header_line != 1 {
        return Err(Error::format_at(
            label,
            "header",
            header_line,
            "blank lines before the header",
        ));
    }
    let h = parse_header(label, header_text)?;
    let value_columns = h.blend.len() + h.aux.len();
    let mut stamps: Vec<(u32, f64)> = Vec::new();
    let mut values: Vec<f32> = Vec::new();
    let mut aux_values: Vec<f32> = Vec::new();
    let mut cells: Vec<&str> = Vec::with_capacity(h.width);
    let mut previous: Option<(usize, &str, Timecode)> = None;
    for (line, row) in lines {
        cells.clear();
        cells.extend(row.split(',').map(str::trim));
        if cells.len() != h.width {
            let plural = |n: usize| if n == 1 { "" } else { "s" };
            return Err(Error::format_at(
                label,
                "row",
                line,
                format!(
                    "line {line} has {} cell{}, expected {} (one per header column)",
                    cells.len(),
                    plural(cells.len()),
                    h.width
                ),
            ));
        }
        let tc_text = cells[h.timecode];
        let tc = parse_timecode(tc_text).ok_or_else(|| {
            Error::format_at(
                label,
                h.names[h.timecode],
                line,
                format!("line {line}: `{tc_text}` is not a timecode HH:MM:SS:FF.fff"),
            )
        })?;
        let top = TIMECODE_RATES.iter().copied().max().unwrap_or(0);
        if !(tc.frame.is_finite() && tc.frame.floor() < f64::from(top)) {
            return Err(Error::format_at(
                label,
                h.names[h.timecode],
                line,
                format!(
                    "line {line}: `{tc_text}` has frame number {}, beyond every standard timecode rate (frames run 0 to {} at the highest, {top} fps)",
                    tc.frame,
                    top - 1
                ),
            ));
        }
        if let Some((pl, pt, p)) = previous {
            let order = (tc.seconds, tc.frame).partial_cmp(&(p.seconds, p.frame));
            if order != Some(std::cmp::Ordering::Greater) {
                let reason = if order == Some(std::cmp::Ordering::Equal) {
                    format!("line {line}: `{tc_text}` repeats the timecode of line {pl}")
                } else {
                    format!(
                        "line {line}: `{tc_text}` goes back in time from line {pl} `{pt}` \
                         (timecodes must increase; a take that wraps past midnight is not supported)"
                    )
                };
                return Err(Error::format_at(label, h.names[h.timecode], line, reason));
            }
        }
        previous = Some((line, tc_text, tc));
        let count_text = cells[h.count];
        match count_text.parse::<usize>() {
            Ok(n) if n == value_columns => {}
            _ => {
                return Err(Error::format_at(
                    label,
                    h.names[h.count],
                    line,
                    format!(
                        "line {line}: BlendShapeCount `{count_text}` is not the {value_columns} value columns the file has"
                    ),
                ));
            }
        }
        for (list, out) in [(&h.blend, &mut values), (&h.aux, &mut aux_values)] {
            for &(c, name) in list.iter() {
                let cell = cells[c];
                match cell.parse::<f32>() {
                    Ok(v) if v.is_finite() => out.push(v),
                    _ => {
                        let why = if cell.is_empty() {
                            "missing value".to_owned()
                        } else {
                            format!("`{cell}` is not a finite number")
                        };
                        return Err(Error::format_at(
                            label,
                            name,
                            line,
                            format!("line {line}: {why}"),
                        ));
                    }
                }
            }
        }
        stamps.push((tc.seconds, tc.frame));
    }
    if stamps.is_empty() {
        return Err(Error::format_at(
            label,
            "rows",
            1,
            "the file has a header but no data rows",
        ));
    }
    let fps = infer_timecode_fps(&stamps)?;
    let (s0, f0) = stamps[0];
    // In frames first, then one division: exact for whole frames at any rate.
    let rate = f64::from(fps);
    let times = stamps
        .iter()
        .map(|&(s, f)| (f64::from(s - s0) * rate + (f - f0)) / rate)
        .collect();
    let stream = WeightStream {
        source: label.to_owned(),
        channels: h.blend.iter().map(|&(_, n)| n.to_owned()).collect(),
        times,
        values,
        aux_channels: h.aux.iter().map(|&(_, n)| n.to_owned()).collect(),
        aux_values,
        nominal_fps: Some(f64::from(fps)),
    };
    stream.validate()?;
    Ok(stream)
}
