//! Azure Speech viseme events (JSON array) → viseme segments.
//!
//! The Speech SDK raises a `VisemeReceived` event per viseme with `AudioOffset` (in **100-ns
//! ticks**, 10,000 per millisecond) and `VisemeId` (0–21); applications save them as a JSON array
//! of objects, spelt either as the REST / JavaScript SDK does (`audioOffset`, `visemeId`) or as the
//! C# / Python SDK properties (`AudioOffset`, `VisemeId`). Both spellings are accepted, also mixed
//! within a file; one object giving both spellings of a member is refused. Other members
//! (`animation`, `resultId`) are ignored. Each viseme holds until the next event; the last one
//! until the caller's `end`, else for [`super::DEFAULT_LAST_MARK_SECONDS`]. Offsets must not
//! decrease; a zero-length viseme is dropped (reported). Offsets in the wrong unit are refused
//! (see [`read_azure_str`]): milliseconds written where ticks belong put a whole utterance inside
//! a few hundred microseconds.
//!
//! **IDs** ([`AZURE_VISEMES`]): source, Microsoft Learn, "Get facial position with viseme", "Map
//! phonemes to visemes" (en-US), the same 22 groups as SAPI 5's `SPVISEMES`: 0 silence, 1 æ ə ʌ,
//! 2 ɑ, 3 ɔ, 4 ɛ ʊ (and eɪ), 5 ɝ, 6 j i ɪ, 7 w u, 8 o (oʊ), 9 aʊ, 10 ɔɪ, 11 aɪ, 12 h, 13 ɹ, 14 l,
//! 15 s z, 16 ʃ tʃ dʒ ʒ, 17 θ ð, 18 f v, 19 d t n, 20 k g ŋ, 21 p b m.

use serde_json::{Map, Value};

use super::json::{array, err, object, ptr, ptr_at};
use super::marks::{Mark, MarkUnit, check_mark_spacing, hold_marks};
use super::report::{Conversion, ConversionReport};
use super::{SpeechFile, SpeechFormat, label_of};
use crate::error::{Error, Result};
use crate::speech::Viseme;
use crate::speech::viseme::phoneme_viseme;

/// Ticks per second of `audioOffset` (100 ns each).
pub const AZURE_TICKS_PER_SECOND: f64 = 10_000_000.0;

/// Azure's unit and the two confusions [`read_azure_value`] refuses.
const AZURE_UNIT: MarkUnit = MarkUnit {
    name: "ticks",
    per_second: AZURE_TICKS_PER_SECOND,
    too_fine: "these look like milliseconds, Azure's AudioOffset is in 100-ns ticks (×10,000): \
               multiply every offset by 10,000 (1 ms = 10,000 ticks), or write the Speech SDK's \
               AudioOffset unchanged",
    too_coarse: "these look like a unit finer than Azure's 100-ns ticks (nanoseconds are ×100 \
                 too large): write AudioOffset in ticks, 10,000,000 per second, as the Speech SDK \
                 gives it",
};

/// Azure viseme ID → the ARPABET phoneme standing for its group (the group's first en-US
/// phoneme), whose viseme ([`phoneme_viseme`], `mien-arpabet-viseme-v1`) it shows. Table
/// `mien-azure-viseme-v1`; the resulting viseme in the comment.
pub const AZURE_VISEMES: [&str; 22] = [
    "SIL", // 0 silence → sil
    "AE",  // 1 æ ə ʌ → aa
    "AA",  // 2 ɑ → aa
    "AO",  // 3 ɔ → oh
    "EH",  // 4 ɛ ʊ → E
    "ER",  // 5 ɝ → RR
    "IY",  // 6 j i ɪ → ih
    "UW",  // 7 w u → ou
    "OW",  // 8 o → oh
    "AW",  // 9 aʊ → aa
    "OY",  // 10 ɔɪ → oh
    "AY",  // 11 aɪ → aa
    "HH",  // 12 h → aa
    "R",   // 13 ɹ → RR
    "L",   // 14 l → nn
    "S",   // 15 s z → SS
    "SH",  // 16 ʃ tʃ dʒ ʒ → CH
    "TH",  // 17 θ ð → TH
    "F",   // 18 f v → FF
    "T",   // 19 d t n → DD
    "K",   // 20 k g ŋ → kk
    "P",   // 21 p b m → PP
];

/// The viseme of an Azure viseme ID; `None` outside 0–21.
pub fn azure_viseme(id: u64) -> Option<Viseme> {
    AZURE_VISEMES
        .get(usize::try_from(id).ok()?)
        .and_then(|p| phoneme_viseme(p))
}

/// Read Azure viseme events (a JSON array). `file` names it in errors; its stem is the label.
/// `end` is the audio's length in seconds, when known (it ends the last viseme).
///
/// # Errors
/// [`Error::Format`] naming the JSON pointer and event index: invalid JSON, not an array, an
/// event that is not an object, a missing, doubly spelt or mistyped offset or ID, an offset that
/// is not a non-negative integer, an offset before the previous, every ID outside 0–21, no
/// events; offsets in the wrong unit — distinct offsets under 1 ms apart on average
/// ([`super::MIN_MEAN_MARK_SPACING_S`]: "these look like milliseconds, Azure's AudioOffset is in
/// 100-ns ticks (×10,000)") or over 5 s apart ([`super::MAX_MEAN_MARK_SPACING_S`]), named at the
/// last event's `audioOffset`; [`Error::Invalid`] for an `end` before the last event (naming
/// the likely unit when the last event lies 10× or more past it); then [`SpeechFile::new`]'s
/// checks.
pub fn read_azure_str(text: &str, file: &str, end: Option<f64>) -> Result<SpeechFile> {
    read_azure_value(&super::json::parse(text, file)?, file, end)
}

/// One member under either spelling.
fn either<'v>(
    o: &'v Map<String, Value>,
    keys: [&str; 2],
    file: &str,
    at: &str,
    i: usize,
) -> Result<&'v Value> {
    match (o.get(keys[0]), o.get(keys[1])) {
        (Some(v), None) | (None, Some(v)) => Ok(v),
        (Some(_), Some(_)) => Err(err(
            file,
            &ptr(at, keys[1]),
            Some(i),
            format!("both `{}` and `{}` are given", keys[0], keys[1]),
        )),
        (None, None) => Err(err(
            file,
            &ptr(at, keys[0]),
            Some(i),
            format!("`{}` (or `{}`) is missing", keys[0], keys[1]),
        )),
    }
}

/// The offset's key as this event spells it (for error pointers).
fn off_key(o: &Map<String, Value>) -> &'static str {
    if o.contains_key("AudioOffset") {
        "AudioOffset"
    } else {
        "audioOffset"
    }
}

/// [`read_azure_str`] on parsed JSON.
///
/// # Errors
/// As [`read_azure_str`].
pub fn read_azure_value(v: &Value, file: &str, end: Option<f64>) -> Result<SpeechFile> {
    let events = array(v, file, "", None)?;
    let mut report = ConversionReport::new(Some(SpeechFormat::Azure), file);
    report.input_items = events.len();
    let mut marks: Vec<Mark> = Vec::with_capacity(events.len());
    let mut unknown = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        let at = ptr_at("", i);
        let o = object(ev, file, &at, Some(i))?;
        let off = either(o, ["audioOffset", "AudioOffset"], file, &at, i)?;
        let Some(ticks) = off.as_u64() else {
            return Err(err(
                file,
                &ptr(&at, "audioOffset"),
                Some(i),
                format!("{off} is not a non-negative integer number of 100-ns ticks"),
            ));
        };
        let id_v = either(o, ["visemeId", "VisemeId"], file, &at, i)?;
        let Some(id) = id_v.as_u64() else {
            return Err(err(
                file,
                &ptr(&at, "visemeId"),
                Some(i),
                format!("{id_v} is not a viseme ID (an integer 0–21)"),
            ));
        };
        let time = ticks as f64 / AZURE_TICKS_PER_SECOND;
        if let Some(p) = marks.last()
            && time < p.time
        {
            return Err(err(
                file,
                &ptr(&at, "audioOffset"),
                Some(i),
                format!(
                    "offset {ticks} ticks ({time} s) is before the previous event's {} s",
                    p.time
                ),
            ));
        }
        let Some(viseme) = azure_viseme(id) else {
            if unknown.len() < 50 {
                unknown.push(err(
                    file,
                    &ptr(&at, "visemeId"),
                    Some(i),
                    format!("viseme ID {id} is outside 0–21"),
                ));
            }
            continue;
        };
        report.note(Conversion::VisemeMapped, || {
            format!("{id} → {}", viseme.name())
        });
        marks.push(Mark {
            time,
            viseme,
            what: format!("ID {id} at {ticks} ticks (event {i})"),
            field: ptr(&at, off_key(o)),
            index: i,
        });
    }
    Error::collect(unknown)?;
    check_mark_spacing(&marks, file, &AZURE_UNIT)?;
    let (segments, duration) = hold_marks(&marks, end, &mut report, file, &AZURE_UNIT)?;
    SpeechFile::with_report(&label_of(file), duration, segments, report)
}
