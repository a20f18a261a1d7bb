//! Text decoding (UTF-8 with or without BOM, UTF-16 as Praat writes it) and format detection by
//! content.
//!
//! Detection rules, first match wins (each looks at content only, never at the file name):
//! 1. **TextGrid**: the first line holds `ooTextFile` (or `ooBinaryFile`, which the reader then
//!    refuses) and the first 512 bytes name `TextGrid`.
//! 2. The text is one JSON value:
//!    - an object whose `format` is `"mien-utterance"` → **mien**;
//!    - an object with `mouthCues` → **Rhubarb JSON**;
//!    - an object with `words` → **Gentle**;
//!    - an object with `time` and `type` → **Polly** (a one-line speech-marks file);
//!    - a non-empty array whose first element has `audioOffset`/`AudioOffset` or
//!      `visemeId`/`VisemeId` → **Azure**.
//! 3. The first non-blank line is a JSON object with `time` and `type` → **Polly** (JSON Lines).
//! 4. The first non-blank line is `<number><whitespace><one of A–H, X>` → **Rhubarb TSV**.

use serde_json::Value;

use super::SpeechFormat;
use crate::error::{Error, Result};

/// Decode a speech file's bytes: a UTF-8 BOM is dropped; a UTF-16 BOM (`FF FE` little-endian,
/// `FE FF` big-endian) or a first code unit that is an ASCII character with a zero byte (UTF-16
/// without BOM) selects UTF-16; anything else must be UTF-8. Praat writes TextGrids in UTF-16 when
/// they hold non-ASCII labels.
///
/// # Errors
/// [`Error::Format`] naming the byte offset of the first invalid sequence, or an odd length of
/// UTF-16.
pub fn decode_text(bytes: &[u8], file: &str) -> Result<String> {
    let utf16 = |body: &[u8], little: bool| -> Result<String> {
        if !body.len().is_multiple_of(2) {
            return Err(Error::format(
                file,
                "text",
                format!(
                    "UTF-16 text of an odd number of bytes ({}): truncated",
                    body.len()
                ),
            ));
        }
        let units = body.chunks_exact(2).map(|c| {
            if little {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        });
        let mut out = String::with_capacity(body.len() / 2);
        for (i, r) in char::decode_utf16(units).enumerate() {
            match r {
                Ok(c) => out.push(c),
                Err(_) => {
                    return Err(Error::format_at(
                        file,
                        "text",
                        2 * i,
                        "invalid UTF-16 (an unpaired surrogate) at this byte offset of the text",
                    ));
                }
            }
        }
        Ok(out)
    };
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => utf8(rest, file, 3),
        [0xFF, 0xFE, rest @ ..] => utf16(rest, true),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, false),
        [a, 0, ..] if *a != 0 && a.is_ascii() => utf16(bytes, true),
        [0, b, ..] if *b != 0 && b.is_ascii() => utf16(bytes, false),
        _ => utf8(bytes, file, 0),
    }
}

fn utf8(bytes: &[u8], file: &str, offset: usize) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        Error::format_at(
            file,
            "text",
            offset + e.utf8_error().valid_up_to(),
            "neither UTF-8 nor UTF-16 text (byte offset of the first invalid sequence)",
        )
    })
}

/// What [`sniff`] found: the format and, for a JSON format, the already parsed value.
pub(crate) struct Sniffed {
    pub(crate) format: Option<SpeechFormat>,
    pub(crate) json: Option<Value>,
}

/// The format of decoded `text` by the rules of this module; `None` when none matches.
pub fn detect_format(text: &str) -> Option<SpeechFormat> {
    sniff(text).format
}

pub(crate) fn sniff(text: &str) -> Sniffed {
    let none = Sniffed {
        format: None,
        json: None,
    };
    let t = text.trim_start();
    let first_line = t.lines().next().unwrap_or("");
    if first_line.contains("ooTextFile") || first_line.contains("ooBinaryFile") {
        let head: String = t.chars().take(512).collect();
        if head.contains("TextGrid") {
            return Sniffed {
                format: Some(SpeechFormat::TextGrid),
                json: None,
            };
        }
    }
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(t) {
            let format = json_format(&v);
            return Sniffed {
                json: format.map(|_| v),
                format,
            };
        }
        if polly_line(first_line) {
            return Sniffed {
                format: Some(SpeechFormat::Polly),
                json: None,
            };
        }
        return none;
    }
    if rhubarb_line(first_line) {
        return Sniffed {
            format: Some(SpeechFormat::RhubarbTsv),
            json: None,
        };
    }
    none
}

fn json_format(v: &Value) -> Option<SpeechFormat> {
    match v {
        Value::Object(o) => {
            if o.get("format").and_then(Value::as_str) == Some(super::mien_json::FORMAT_TAG) {
                Some(SpeechFormat::Mien)
            } else if o.contains_key("mouthCues") {
                Some(SpeechFormat::RhubarbJson)
            } else if o.contains_key("words") {
                Some(SpeechFormat::Gentle)
            } else if o.contains_key("time") && o.contains_key("type") {
                Some(SpeechFormat::Polly)
            } else {
                None
            }
        }
        Value::Array(a) => {
            let o = a.first()?.as_object()?;
            ["audioOffset", "AudioOffset", "visemeId", "VisemeId"]
                .iter()
                .any(|k| o.contains_key(*k))
                .then_some(SpeechFormat::Azure)
        }
        _ => None,
    }
}

fn polly_line(line: &str) -> bool {
    serde_json::from_str::<Value>(line.trim())
        .ok()
        .and_then(|v| {
            v.as_object()
                .map(|o| o.contains_key("time") && o.contains_key("type"))
        })
        .unwrap_or(false)
}

fn rhubarb_line(line: &str) -> bool {
    let mut it = line.split_whitespace();
    match (it.next(), it.next(), it.next()) {
        (Some(t), Some(s), None) => {
            t.parse::<f64>().is_ok_and(f64::is_finite)
                && matches!(s, "A" | "B" | "C" | "D" | "E" | "F" | "G" | "H" | "X")
        }
        _ => false,
    }
}

/// The error for text no rule recognises: names every format tried and quotes the start.
pub(crate) fn unknown_format(text: &str, file: &str) -> Error {
    let head: String = text
        .trim_start()
        .chars()
        .take(40)
        .flat_map(char::escape_debug)
        .collect();
    let tried: Vec<&str> = super::SPEECH_FORMATS.iter().map(|f| f.name()).collect();
    let t = text.trim_start();
    let json = if t.starts_with('{') || t.starts_with('[') {
        match serde_json::from_str::<Value>(t) {
            Err(e) => format!(
                "; it looks like JSON but does not parse (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
            Ok(_) => "; it is JSON without the members of any known format".to_owned(),
        }
    } else {
        String::new()
    };
    Error::format(
        file,
        "content",
        format!(
            "not a recognised speech timing format (tried {}); the text starts with \"{head}\"{json}",
            tried.join(", ")
        ),
    )
}
