//! Rhubarb Lip Sync (DanielSWolf/rhubarb-lip-sync) TSV and JSON → viseme segments.
//!
//! **TSV** (`--exportFormat tsv`): one `time<TAB>shape` line per mouth cue, time in seconds; each
//! shape holds until the next line's time, and the **last line only ends** the previous shape (its
//! shape, normally `X`, is not shown): its time is the duration. Blank lines are skipped; times
//! must not decrease; a cue of zero length is dropped (reported).
//!
//! **JSON** (`--exportFormat json`): `{"metadata": {"soundFile": …, "duration": 1.23},
//! "mouthCues": [{"start": 0.0, "end": 0.05, "value": "X"}, …]}`; cues in time order, not
//! overlapping; the duration is `metadata.duration` when present (it must not end before the
//! last cue), else the last cue's end. Other members are ignored.
//!
//! **Shapes → visemes** ([`RHUBARB_SHAPES`]), from Rhubarb's README "Mouth shapes" (the six basic
//! Hanna-Barbera shapes A–F, the extended G, H, X).

use serde_json::Value;

use super::json::{array, err, member, object, ptr, ptr_at, string, time};
use super::report::{Conversion, ConversionReport};
use super::{SpeechFile, SpeechFormat, SpeechSegment, Unit, label_of};
use crate::error::{Error, Result};
use crate::speech::Viseme;

/// Rhubarb mouth shape → viseme, table `mien-rhubarb-viseme-v1`:
///
/// | shape | Rhubarb's description | viseme |
/// |---|---|---|
/// | A | closed mouth: P, B, M | `PP` |
/// | B | slightly open, clenched teeth: most consonants (K, S, T…) and EE | `kk` — Oculus's slightly open, relaxed consonant shape; the closest to a generic consonant |
/// | C | open mouth: EH, AE, and as a transition | `E` |
/// | D | wide open: AA | `aa` |
/// | E | slightly rounded: AO, ER | `oh` |
/// | F | puckered: UW, OW, W | `ou` |
/// | G | upper teeth on the lower lip: F, V | `FF` |
/// | H | tongue raised behind the teeth: long L | `nn` |
/// | X | idle, at rest | `sil` |
pub const RHUBARB_SHAPES: [(char, Viseme); 9] = [
    ('A', Viseme::PP),
    ('B', Viseme::KK),
    ('C', Viseme::E),
    ('D', Viseme::AA),
    ('E', Viseme::OH),
    ('F', Viseme::OU),
    ('G', Viseme::FF),
    ('H', Viseme::NN),
    ('X', Viseme::Sil),
];

/// The viseme of a Rhubarb shape letter (exact, upper case); `None` otherwise.
pub fn rhubarb_viseme(shape: &str) -> Option<Viseme> {
    let mut cs = shape.chars();
    match (cs.next(), cs.next()) {
        (Some(c), None) => RHUBARB_SHAPES
            .iter()
            .find(|(s, _)| *s == c)
            .map(|(_, v)| *v),
        _ => None,
    }
}

fn shape(report: &mut ConversionReport, s: &str, v: Viseme) {
    report.note(Conversion::ShapeMapped, || format!("{s} → {}", v.name()));
}

/// Read Rhubarb TSV text. `file` names it in errors; its stem is the label.
///
/// # Errors
/// [`Error::Format`] naming the 1-based line: not two fields, a time that is not a finite
/// non-negative number, a time before the previous line's, an unknown shape, fewer than two
/// lines; then [`SpeechFile::new`]'s checks.
pub fn read_rhubarb_tsv_str(text: &str, file: &str) -> Result<SpeechFile> {
    let mut report = ConversionReport::new(Some(SpeechFormat::RhubarbTsv), file);
    let mut cues: Vec<(f64, &str, usize)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |r: String| Error::format_at(file, "line", n, r);
        let mut it = line.split_whitespace();
        let (Some(t), Some(s), None) = (it.next(), it.next(), it.next()) else {
            return Err(bad(format!(
                "expected `time<TAB>shape`, found \"{}\"",
                line.escape_debug()
            )));
        };
        let t = t
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| {
                bad(format!(
                    "time \"{}\" is not a finite non-negative number",
                    t.escape_debug()
                ))
            })?;
        if rhubarb_viseme(s).is_none() {
            return Err(bad(format!(
                "unknown mouth shape \"{}\" (A–H or X)",
                s.escape_debug()
            )));
        }
        if let Some(&(p, _, _)) = cues.last()
            && t < p
        {
            return Err(bad(format!(
                "time {t} s is before the previous line's {p} s"
            )));
        }
        cues.push((t, s, n));
    }
    report.input_items = cues.len();
    if cues.len() < 2 {
        return Err(Error::format(
            file,
            "lines",
            "fewer than two cues: the last line only ends the previous shape, so nothing is timed",
        ));
    }
    let mut segments = Vec::with_capacity(cues.len());
    for w in cues.windows(2) {
        let ((s, shape_s, n), (e, _, _)) = (w[0], w[1]);
        let v = rhubarb_viseme(shape_s).unwrap_or(Viseme::Sil);
        shape(&mut report, shape_s, v);
        if e <= s {
            report.note(Conversion::ZeroLengthSkipped, || {
                format!("{shape_s} at {s} s (line {n})")
            });
            continue;
        }
        segments.push(SpeechSegment {
            start: s,
            end: e,
            unit: Unit::Viseme(v),
        });
    }
    let duration = cues.last().map_or(0.0, |c| c.0);
    if segments.is_empty() {
        return Err(Error::format(file, "lines", "every cue has zero length"));
    }
    SpeechFile::with_report(&label_of(file), duration, segments, report)
}

/// Read Rhubarb JSON text. `file` names it in errors; its stem is the label.
///
/// # Errors
/// [`Error::Format`] naming the JSON pointer and cue index: invalid JSON, a missing or mistyped
/// member, a cue ending before it starts, cues out of order or overlapping, an unknown shape, a
/// `metadata.duration` before the last cue's end, no cues; then [`SpeechFile::new`]'s checks.
pub fn read_rhubarb_json_str(text: &str, file: &str) -> Result<SpeechFile> {
    read_rhubarb_json_value(&super::json::parse(text, file)?, file)
}

/// [`read_rhubarb_json_str`] on parsed JSON.
///
/// # Errors
/// As [`read_rhubarb_json_str`].
pub fn read_rhubarb_json_value(v: &Value, file: &str) -> Result<SpeechFile> {
    let root = object(v, file, "", None)?;
    let cues = array(
        member(root, "mouthCues", file, "", None)?,
        file,
        "/mouthCues",
        None,
    )?;
    let meta_duration = match root.get("metadata") {
        None => None,
        Some(m) => {
            let mo = object(m, file, "/metadata", None)?;
            match mo.get("duration") {
                None => None,
                Some(d) => Some(time(d, file, "/metadata/duration", None)?),
            }
        }
    };
    let mut report = ConversionReport::new(Some(SpeechFormat::RhubarbJson), file);
    report.input_items = cues.len();
    let mut segments = Vec::with_capacity(cues.len());
    let mut prev_end = 0.0f64;
    for (i, c) in cues.iter().enumerate() {
        let at = ptr_at("/mouthCues", i);
        let co = object(c, file, &at, Some(i))?;
        let s = time(
            member(co, "start", file, &at, Some(i))?,
            file,
            &ptr(&at, "start"),
            Some(i),
        )?;
        let e = time(
            member(co, "end", file, &at, Some(i))?,
            file,
            &ptr(&at, "end"),
            Some(i),
        )?;
        let val = string(
            member(co, "value", file, &at, Some(i))?,
            file,
            &ptr(&at, "value"),
            Some(i),
        )?;
        let Some(v) = rhubarb_viseme(val) else {
            return Err(err(
                file,
                &ptr(&at, "value"),
                Some(i),
                format!("unknown mouth shape \"{}\" (A–H or X)", val.escape_debug()),
            ));
        };
        if e < s {
            return Err(err(
                file,
                &at,
                Some(i),
                format!("ends at {e} s before it starts at {s} s"),
            ));
        }
        if s < prev_end {
            return Err(err(
                file,
                &ptr(&at, "start"),
                Some(i),
                format!("starts at {s} s, before the previous cue ends at {prev_end} s"),
            ));
        }
        prev_end = e;
        shape(&mut report, val, v);
        if e == s {
            report.note(Conversion::ZeroLengthSkipped, || {
                format!("{val} at {s} s (cue {i})")
            });
            continue;
        }
        segments.push(SpeechSegment {
            start: s,
            end: e,
            unit: Unit::Viseme(v),
        });
    }
    let duration = match meta_duration {
        Some(d) if d < prev_end => {
            return Err(err(
                file,
                "/metadata/duration",
                None,
                format!("{d} s ends before the last cue's end {prev_end} s"),
            ));
        }
        Some(d) => d,
        None => prev_end,
    };
    if segments.is_empty() {
        return Err(err(file, "/mouthCues", None, "no timed mouth cues".into()));
    }
    SpeechFile::with_report(&label_of(file), duration, segments, report)
}
