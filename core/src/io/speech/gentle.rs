//! Gentle forced-aligner JSON → phoneme segments.
//!
//! The file (lowerquality/gentle, MIT) is `{"transcript": "…", "words": [ … ]}`; each word has a
//! `case`: `success` and `not-found-in-transcript` words carry `start`, `end` (seconds) and
//! `phones: [{"phone": "ay_S", "duration": 0.07}]`; `not-found-in-audio` words carry no timing.
//!
//! Conversion, each step reported ([`Conversion`]):
//! - `not-found-in-audio` words are skipped (by word, with its index); `not-found-in-transcript`
//!   words (heard in the audio, absent from the transcript) are kept; timed words with no phones
//!   are skipped.
//! - Phones run back to back from the word's `start`: phone *k* covers
//!   `[start + Σ_{j<k} d_j, start + Σ_{j≤k} d_j)`; their sum must meet the word's `end` within
//!   [`MAX_OVERLAP_TRIM_SECONDS`].
//! - Labels: the position suffix `_B/_I/_E/_S` (begin / inside / end / single) is stripped, the
//!   lower-case ARPABET upper-cased (a stress digit, if any, stripped); `oov` (Gentle's
//!   out-of-vocabulary phone) has no mouth shape and is left as a gap (rest). Unknown labels are
//!   refused, all of them named.
//! - A phone starting before the previous phone's end (consecutive words overlapping) is trimmed
//!   to start there when the overlap is at most [`MAX_OVERLAP_TRIM_SECONDS`] (the largest trim is
//!   reported; overlaps ≤ [`super::report::ROUNDING_SECONDS`] are counted as rounding); a larger
//!   overlap is refused naming the word index. Zero-length phones are dropped.
//! - Gentle has no end time: the duration is the latest end of any timed word.

use serde_json::Value;

use super::json::{array, err, member, object, ptr, ptr_at, string, time};
use super::report::{Conversion, ConversionReport, ROUNDING_SECONDS};
use super::{SpeechFile, SpeechFormat, SpeechSegment, Unit, label_of, phones::arpabet};
use crate::error::{Error, Result};

/// Largest overlap between consecutive words that is trimmed (10 ms, one Gentle frame); also the
/// largest gap allowed between a word's `end` and the sum of its phone durations.
pub const MAX_OVERLAP_TRIM_SECONDS: f64 = 0.010;

/// Gentle's position suffixes.
const POSITION_SUFFIXES: [&str; 4] = ["_B", "_I", "_E", "_S"];

/// Read Gentle JSON text. `file` names it in errors; its stem is the label.
///
/// # Errors
/// [`Error::Format`] naming the JSON pointer and word index: invalid JSON, a missing or mistyped
/// member, an unknown `case`, a negative or non-finite time, phones that do not add up to the
/// word, an overlap over [`MAX_OVERLAP_TRIM_SECONDS`] or a word starting before the previous one,
/// every unknown phone label, no timed phone at all; then [`SpeechFile::new`]'s checks.
pub fn read_gentle_str(text: &str, file: &str) -> Result<SpeechFile> {
    read_gentle_value(&super::json::parse(text, file)?, file)
}

/// [`read_gentle_str`] on parsed JSON.
///
/// # Errors
/// As [`read_gentle_str`].
pub fn read_gentle_value(v: &Value, file: &str) -> Result<SpeechFile> {
    let root = object(v, file, "", None)?;
    let words = array(member(root, "words", file, "", None)?, file, "/words", None)?;
    let mut report = ConversionReport::new(Some(SpeechFormat::Gentle), file);
    let mut segments: Vec<SpeechSegment> = Vec::new();
    let mut unknown: Vec<Error> = Vec::new();
    let mut prev_end = 0.0f64;
    let mut duration = 0.0f64;
    for (i, w) in words.iter().enumerate() {
        let at = ptr_at("/words", i);
        let wo = object(w, file, &at, Some(i))?;
        let case = string(
            member(wo, "case", file, &at, Some(i))?,
            file,
            &ptr(&at, "case"),
            Some(i),
        )?;
        let name = || {
            wo.get("word")
                .or(wo.get("alignedWord"))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        };
        match case {
            "not-found-in-audio" => {
                report.note(Conversion::WordWithoutTiming, || {
                    format!("{} (word {i})", name())
                });
                continue;
            }
            "success" => {}
            "not-found-in-transcript" => {
                report.note(Conversion::WordNotInTranscript, || {
                    format!("{} (word {i})", name())
                });
            }
            other => {
                return Err(err(
                    file,
                    &ptr(&at, "case"),
                    Some(i),
                    format!(
                        "unknown case \"{other}\" (success, not-found-in-audio, not-found-in-transcript)"
                    ),
                ));
            }
        }
        let start = time(
            member(wo, "start", file, &at, Some(i))?,
            file,
            &ptr(&at, "start"),
            Some(i),
        )?;
        let end = time(
            member(wo, "end", file, &at, Some(i))?,
            file,
            &ptr(&at, "end"),
            Some(i),
        )?;
        if end < start {
            return Err(err(
                file,
                &at,
                Some(i),
                format!("ends at {end} s before it starts at {start} s"),
            ));
        }
        duration = duration.max(end);
        let pat = ptr(&at, "phones");
        let phones = array(
            member(wo, "phones", file, &at, Some(i))?,
            file,
            &pat,
            Some(i),
        )?;
        if phones.is_empty() {
            report.note(Conversion::WordWithoutPhones, || {
                format!("{} (word {i})", name())
            });
            continue;
        }
        if start < prev_end {
            let overlap = prev_end - start;
            if overlap > MAX_OVERLAP_TRIM_SECONDS {
                return Err(err(
                    file,
                    &ptr(&at, "start"),
                    Some(i),
                    format!(
                        "word {i} (\"{}\") starts at {start} s, {overlap:.6} s before the previous word ends at {prev_end} s: more than the {MAX_OVERLAP_TRIM_SECONDS} s trimmed",
                        name()
                    ),
                ));
            }
        }
        let mut t = start;
        for (k, p) in phones.iter().enumerate() {
            report.input_items += 1;
            let pp = ptr_at(&pat, k);
            let po = object(p, file, &pp, Some(i))?;
            let label = string(
                member(po, "phone", file, &pp, Some(i))?,
                file,
                &ptr(&pp, "phone"),
                Some(i),
            )?;
            let d = time(
                member(po, "duration", file, &pp, Some(i))?,
                file,
                &ptr(&pp, "duration"),
                Some(i),
            )?;
            let (s, e) = (t, t + d);
            t = e;
            let base = match POSITION_SUFFIXES.iter().find_map(|x| label.strip_suffix(x)) {
                Some(b) => {
                    report.note(Conversion::PositionSuffixStripped, || {
                        format!("{label} → {b}")
                    });
                    b
                }
                None => label,
            };
            if base.eq_ignore_ascii_case("oov") {
                report.note(Conversion::OutOfVocabulary, || {
                    format!("{label} in {} (word {i}, {s}–{e} s)", name())
                });
                prev_end = prev_end.max(e);
                continue;
            }
            let Some(a) = arpabet(base) else {
                if unknown.len() < 50 {
                    unknown.push(err(
                        file,
                        &ptr(&pp, "phone"),
                        Some(i),
                        format!("\"{}\" is not an ARPABET phone", label.escape_debug()),
                    ));
                }
                prev_end = prev_end.max(e);
                continue;
            };
            if a.stress {
                report.note(Conversion::StressStripped, || {
                    format!("{base} → {}", a.phoneme)
                });
            }
            if a.upper_cased {
                report.note(Conversion::UpperCased, || format!("{base} → {}", a.phoneme));
            }
            let mut s = s;
            if s < prev_end {
                let overlap = prev_end - s;
                if overlap <= ROUNDING_SECONDS {
                    report.note_amount(Conversion::RoundingClamped, overlap, || {
                        format!("word {i}: {overlap:e} s")
                    });
                } else {
                    report.note_amount(Conversion::OverlapTrimmed, overlap, || {
                        format!(
                            "word {i} (\"{}\") starts {overlap:.6} s before the previous ends",
                            name()
                        )
                    });
                }
                s = prev_end;
            }
            prev_end = prev_end.max(e);
            if e <= s {
                report.note(Conversion::ZeroLengthSkipped, || {
                    format!("{label} in {} (word {i})", name())
                });
                continue;
            }
            segments.push(SpeechSegment {
                start: s,
                end: e,
                unit: Unit::Phoneme(a.phoneme.to_owned()),
            });
        }
        if (t - end).abs() > MAX_OVERLAP_TRIM_SECONDS {
            return Err(err(
                file,
                &pat,
                Some(i),
                format!("the phone durations of word {i} end at {t} s, not at its end {end} s"),
            ));
        }
        duration = duration.max(t);
    }
    Error::collect(unknown)?;
    if segments.is_empty() {
        return Err(err(file, "/words", None, "no timed phones".into()));
    }
    SpeechFile::with_report(&label_of(file), duration, segments, report)
}
