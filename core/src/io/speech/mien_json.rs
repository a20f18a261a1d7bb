//! mien's own utterance JSON: the documented, strict exchange format of a [`SpeechFile`]
//! (`docs/speech-format.md`, JSON Schema `docs/schemas/utterance.schema.json`).
//!
//! ```json
//! {"format": "mien-utterance", "version": 1, "label": "line1", "duration": 1.0,
//!  "units": "visemes",
//!  "segments": [{"start": 0.0, "end": 0.125, "value": "PP"},
//!               {"start": 0.125, "end": 0.75, "value": "aa"}]}
//! ```
//!
//! Every member is required and no other is allowed (an unknown key is refused with its JSON
//! pointer). `units` is `"visemes"` (values are the 15 Oculus names, exact case: `sil PP FF TH DD
//! kk CH SS nn RR aa E ih oh ou`) or `"phonemes"` (strict upper-case unstressed ARPABET or `SIL`).
//! Times are seconds from the utterance's time zero, `[start, end)`, in order, not overlapping,
//! inside `[0, duration]`. Numbers are written shortest-round-trip (Ryū) and read with correct
//! rounding, so a file written by [`utterance_json`] reads back bit-identically.

use std::path::Path;

use serde_json::Value;

use super::json::{array, deny_unknown, err, member, object, ptr, ptr_at, string, time};
use super::report::ConversionReport;
use super::{SpeechFile, SpeechFormat, SpeechSegment, Unit, UnitKind};
use crate::error::Result;
use crate::speech::Viseme;
use crate::speech::viseme::strict_phoneme;

/// The value of the `format` member.
pub const FORMAT_TAG: &str = "mien-utterance";

/// The format version this reader reads and the writer writes.
pub const FORMAT_VERSION: u64 = 1;

/// The members of the top-level object.
pub const TOP_KEYS: [&str; 6] = [
    "format", "version", "label", "duration", "units", "segments",
];

/// The members of a segment.
pub const SEGMENT_KEYS: [&str; 3] = ["start", "end", "value"];

/// Read mien utterance JSON text. `file` names it in errors; the label is the file's `label`.
///
/// # Errors
/// [`Error::Format`](crate::Error::Format) naming the JSON pointer (and the segment index): invalid
/// JSON, an unknown or missing key, a wrong `format`, a `version` other than 1, an empty label, a
/// time that is not a finite non-negative number, an unknown `units`, a value that is not a
/// viseme name or a strict phoneme; then [`SpeechFile::new`]'s checks (order, overlap, inside the
/// duration).
pub fn read_utterance_str(text: &str, file: &str) -> Result<SpeechFile> {
    read_utterance_value(&super::json::parse(text, file)?, file)
}

/// [`read_utterance_str`] on parsed JSON.
///
/// # Errors
/// As [`read_utterance_str`].
pub fn read_utterance_value(v: &Value, file: &str) -> Result<SpeechFile> {
    let root = object(v, file, "", None)?;
    deny_unknown(root, &TOP_KEYS, file, "", None)?;
    let format = string(
        member(root, "format", file, "", None)?,
        file,
        "/format",
        None,
    )?;
    if format != FORMAT_TAG {
        return Err(err(
            file,
            "/format",
            None,
            format!("\"{format}\" is not \"{FORMAT_TAG}\""),
        ));
    }
    let version = member(root, "version", file, "", None)?;
    if version.as_u64() != Some(FORMAT_VERSION) {
        return Err(err(
            file,
            "/version",
            None,
            format!("version {version} is not {FORMAT_VERSION}, the version this reader knows"),
        ));
    }
    let label = string(member(root, "label", file, "", None)?, file, "/label", None)?;
    if label.trim().is_empty() {
        return Err(err(file, "/label", None, "the label is empty".into()));
    }
    let duration = time(
        member(root, "duration", file, "", None)?,
        file,
        "/duration",
        None,
    )?;
    super::utterance::check_duration(file, "/duration", duration)?;
    let units = string(member(root, "units", file, "", None)?, file, "/units", None)?;
    let phonemes = match units {
        "phonemes" => true,
        "visemes" => false,
        other => {
            return Err(err(
                file,
                "/units",
                None,
                format!("\"{other}\" is neither \"visemes\" nor \"phonemes\""),
            ));
        }
    };
    let segs = array(
        member(root, "segments", file, "", None)?,
        file,
        "/segments",
        None,
    )?;
    let mut report = ConversionReport::new(Some(SpeechFormat::Mien), file);
    report.input_items = segs.len();
    let mut segments = Vec::with_capacity(segs.len());
    for (i, s) in segs.iter().enumerate() {
        let at = ptr_at("/segments", i);
        let so = object(s, file, &at, Some(i))?;
        deny_unknown(so, &SEGMENT_KEYS, file, &at, Some(i))?;
        let start = time(
            member(so, "start", file, &at, Some(i))?,
            file,
            &ptr(&at, "start"),
            Some(i),
        )?;
        let end = time(
            member(so, "end", file, &at, Some(i))?,
            file,
            &ptr(&at, "end"),
            Some(i),
        )?;
        let vp = ptr(&at, "value");
        let value = string(member(so, "value", file, &at, Some(i))?, file, &vp, Some(i))?;
        let unit = if phonemes {
            strict_phoneme(value, file, &vp, i)?;
            Unit::Phoneme(value.to_owned())
        } else {
            match Viseme::from_name(value) {
                Some(v) => Unit::Viseme(v),
                None => {
                    return Err(err(
                        file,
                        &vp,
                        Some(i),
                        format!(
                            "\"{}\" is not a viseme name (sil PP FF TH DD kk CH SS nn RR aa E ih oh ou)",
                            value.escape_debug()
                        ),
                    ));
                }
            }
        };
        segments.push(SpeechSegment { start, end, unit });
    }
    SpeechFile::with_report(label, duration, segments, report)
}

#[derive(serde::Serialize)]
struct OutSegment<'a> {
    start: f64,
    end: f64,
    value: &'a str,
}

#[derive(serde::Serialize)]
struct Out<'a> {
    format: &'static str,
    version: u64,
    label: &'a str,
    duration: f64,
    units: &'static str,
    segments: Vec<OutSegment<'a>>,
}

/// `speech` as mien utterance JSON (pretty-printed, members in the documented order, numbers
/// shortest-round-trip). The report is not written.
pub fn utterance_json(speech: &SpeechFile) -> String {
    let out = Out {
        format: FORMAT_TAG,
        version: FORMAT_VERSION,
        label: speech.label(),
        duration: speech.duration(),
        units: match speech.unit_kind() {
            UnitKind::Phonemes => "phonemes",
            UnitKind::Visemes => "visemes",
        },
        segments: speech
            .segments()
            .iter()
            .map(|s| OutSegment {
                start: s.start,
                end: s.end,
                value: s.unit.name(),
            })
            .collect(),
    };
    // Serialising plain structs of finite numbers and strings cannot fail.
    serde_json::to_string_pretty(&out).unwrap_or_default()
}

/// Write `speech` to `path` as mien utterance JSON, atomically ([`crate::io::atomic`]).
///
/// # Errors
/// [`Error::Io`](crate::Error::Io) naming `path`; the previous file is left untouched.
pub fn write_utterance(path: &Path, speech: &SpeechFile) -> Result<()> {
    let mut text = utterance_json(speech);
    text.push('\n');
    crate::io::atomic::write_atomic_bytes(path, text.as_bytes())
}
