//! Amazon Polly speech marks (JSON Lines) → viseme segments.
//!
//! Polly's `SynthesizeSpeech` with `OutputFormat=json` and `SpeechMarkTypes` writes one JSON
//! object per line: `{"time":125,"type":"viseme","value":"p"}`, `time` in **milliseconds** from
//! the start of the audio. Only `type == "viseme"` marks are used; `word`, `sentence` and `ssml`
//! marks (and any other type) are ignored and counted. Each viseme holds until the next viseme
//! mark; the last one until the caller's `end`, else for [`super::DEFAULT_LAST_MARK_SECONDS`]
//! (Polly writes no end time). Viseme times must not decrease; a viseme replaced at the same
//! millisecond has zero length and is dropped (reported).
//!
//! **Viseme letters** are case-sensitive ([`POLLY_VISEMES`]): source, the Amazon Polly Developer
//! Guide, "Phoneme and viseme tables", English (US): `p` (b m p), `t` (d n t), `S` (tʃ dʒ ʃ ʒ),
//! `T` (θ ð), `f` (f v), `k` (g h k ŋ), `i` (i ɪ j), `r` (ɹ), `s` (s z), `u` (u ʊ w), `@` (ə ɚ),
//! `a` (æ aɪ aʊ ɑ), `e` (eɪ), `E` (ɛ ɝ ʌ), `o` (oʊ), `O` (ɔ ɔɪ), `l` (l), `sil`.

use super::marks::{Mark, MarkUnit, check_mark_spacing, hold_marks};
use super::report::{Conversion, ConversionReport};
use super::{SpeechFile, SpeechFormat, label_of};
use crate::error::{Error, Result};
use crate::speech::Viseme;
use crate::speech::viseme::phoneme_viseme;

/// Polly viseme letter → the ARPABET phoneme standing for its group (the first of Polly's
/// English (US) examples), whose viseme ([`phoneme_viseme`], `mien-arpabet-viseme-v1`) it shows.
/// Table `mien-polly-viseme-v1`; the resulting viseme in the comment.
pub const POLLY_VISEMES: [(&str, &str); 18] = [
    ("p", "P"),     // PP
    ("t", "T"),     // DD
    ("S", "SH"),    // CH
    ("T", "TH"),    // TH
    ("f", "F"),     // FF
    ("k", "K"),     // kk
    ("i", "IY"),    // ih
    ("r", "R"),     // RR
    ("s", "S"),     // SS
    ("u", "UW"),    // ou
    ("@", "AH"),    // aa
    ("a", "AA"),    // aa
    ("e", "EY"),    // E
    ("E", "EH"),    // E
    ("o", "OW"),    // oh
    ("O", "AO"),    // oh
    ("l", "L"),     // nn
    ("sil", "SIL"), // sil
];

/// Polly's unit and the two confusions [`read_polly_str`] refuses.
const POLLY_UNIT: MarkUnit = MarkUnit {
    name: "ms",
    per_second: 1000.0,
    too_fine: "these look like seconds, Polly's `time` is in milliseconds (×1000): multiply \
               every time by 1000, or write Polly's speech marks unchanged",
    too_coarse: "these look like a unit finer than Polly's milliseconds (Azure's 100-ns ticks \
                 are ×10,000, microseconds ×1000): write `time` in milliseconds, as Polly gives it",
};

/// The viseme of a Polly viseme letter (exact, case-sensitive); `None` otherwise.
pub fn polly_viseme(letter: &str) -> Option<Viseme> {
    POLLY_VISEMES
        .iter()
        .find(|(l, _)| *l == letter)
        .and_then(|(_, p)| phoneme_viseme(p))
}

/// Read Polly speech marks. `file` names it in errors; its stem is the label. `end` is the audio's
/// length in seconds, when known (it ends the last viseme).
///
/// # Errors
/// [`Error::Format`] naming the 1-based line: a line that is not a JSON object, a missing or
/// mistyped `type`, `time` or `value`, a negative or non-finite time, a viseme time before the
/// previous viseme's, every unknown viseme letter, no viseme marks; times in the wrong unit —
/// distinct viseme times under 1 ms apart on average ([`super::MIN_MEAN_MARK_SPACING_S`]:
/// seconds written as milliseconds) or over 5 s apart ([`super::MAX_MEAN_MARK_SPACING_S`]:
/// ticks or microseconds), named at the last viseme's line; [`Error::Invalid`] for an `end`
/// before the last mark (naming the likely unit when the last mark lies 10× or more past it);
/// then [`SpeechFile::new`]'s checks.
pub fn read_polly_str(text: &str, file: &str, end: Option<f64>) -> Result<SpeechFile> {
    let mut report = ConversionReport::new(Some(SpeechFormat::Polly), file);
    let mut marks: Vec<Mark> = Vec::new();
    let mut unknown = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad =
            |field: &str, r: String| Error::format_at(file, format!("line {n}: {field}"), n, r);
        let v: serde_json::Value = serde_json::from_str(line.trim())
            .map_err(|e| bad("JSON", format!("not one JSON object per line: {e}")))?;
        let Some(o) = v.as_object() else {
            return Err(bad("JSON", "not a JSON object".into()));
        };
        report.input_items += 1;
        let Some(ty) = o.get("type").and_then(|t| t.as_str()) else {
            return Err(bad("type", "missing or not a string".into()));
        };
        if ty != "viseme" {
            report.note(Conversion::MarkIgnored, || format!("{ty} mark"));
            continue;
        }
        let ms = match o.get("time").and_then(|t| t.as_f64()) {
            Some(t) if t.is_finite() && t >= 0.0 => t,
            _ => {
                return Err(bad(
                    "time",
                    "missing, or not a finite non-negative number of milliseconds".into(),
                ));
            }
        };
        let Some(letter) = o.get("value").and_then(|t| t.as_str()) else {
            return Err(bad("value", "missing or not a string".into()));
        };
        let time = ms / 1000.0;
        if let Some(p) = marks.last()
            && time < p.time
        {
            return Err(bad(
                "time",
                format!(
                    "{ms} ms is before the previous viseme at {} ms",
                    p.time * 1000.0
                ),
            ));
        }
        let Some(viseme) = polly_viseme(letter) else {
            if unknown.len() < 50 {
                unknown.push(bad("value", format!("unknown Polly viseme \"{}\" (case-sensitive: p t S T f k i r s u @ a e E o O l sil)", letter.escape_debug())));
            }
            continue;
        };
        report.note(Conversion::VisemeMapped, || {
            format!("{letter} → {}", viseme.name())
        });
        marks.push(Mark {
            time,
            viseme,
            what: format!("{letter} at {ms} ms (line {n})"),
            field: format!("line {n}: time"),
            index: n,
        });
    }
    Error::collect(unknown)?;
    check_mark_spacing(&marks, file, &POLLY_UNIT)?;
    let (segments, duration) = hold_marks(&marks, end, &mut report, file, &POLLY_UNIT)?;
    SpeechFile::with_report(&label_of(file), duration, segments, report)
}
