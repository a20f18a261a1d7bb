//! Speech timing readers: aligner and text-to-speech outputs → one [`SpeechFile`] of timed
//! phonemes or visemes, with a [`ConversionReport`] of everything converted or skipped, and its
//! conversions to held intervals ([`SpeechFile::to_aligned`], seed 002) and envelopes
//! ([`SpeechFile::to_envelope`], seed 003).
//!
//! | format | module | units | time | duration |
//! |---|---|---|---|---|
//! | Praat / Montreal Forced Aligner TextGrid (long and short text format, UTF-8 or UTF-16) | [`textgrid`] | phonemes (ARPABET or IPA) | seconds | the grid's `xmax` |
//! | Gentle JSON | [`gentle`] | phonemes | seconds (word start + phone durations) | the last timed word's end |
//! | Rhubarb Lip Sync TSV and JSON | [`rhubarb`] | visemes (mouth shapes A–H, X) | seconds | the last line / `metadata.duration` |
//! | Amazon Polly speech marks (JSON Lines) | [`polly`] | visemes | milliseconds | last mark + [`DEFAULT_LAST_MARK_SECONDS`] or a given end |
//! | Azure Speech viseme events (JSON array) | [`azure`] | visemes (IDs 0–21) | 100-ns ticks | last event + [`DEFAULT_LAST_MARK_SECONDS`] or a given end |
//! | mien's own utterance JSON (`docs/speech-format.md`) | [`mien_json`] | either | seconds | `duration` |
//!
//! [`read_speech`] recognises the format from the file's **content** ([`detect::detect_format`]),
//! never from its extension, unless a format is forced. Every reader refuses bad input with an
//! [`Error::Format`] naming the file, the field (JSON pointer, line or tier) and the index; no
//! input panics. Files are capped at [`MAX_SPEECH_FILE_BYTES`] and must be regular files.

pub mod azure;
pub mod detect;
pub mod gentle;
mod json;
mod marks;
pub mod mien_json;
pub mod phones;
pub mod polly;
pub mod report;
pub mod rhubarb;
pub mod textgrid;
pub mod utterance;

use std::path::Path;

use crate::error::{Error, Result};

pub use detect::{decode_text, detect_format};
pub use report::{Conversion, ConversionReport, PhoneSet, ReportEntry};
pub use utterance::{SpeechFile, SpeechSegment, Unit, UnitKind};

/// Largest speech file read: 64 MiB (a TextGrid of about a million intervals).
pub const MAX_SPEECH_FILE_BYTES: u64 = 64 << 20;

/// How long the last Polly or Azure mark is held when the file gives no end and the caller none:
/// 0.1 s, about one phone at conversational rate (English averages 10–15 phones per second), so a
/// final viseme shows for a few frames and a final `sil` ends the utterance soon after its mark.
pub const DEFAULT_LAST_MARK_SECONDS: f64 = 0.1;

/// Smallest mean spacing of the distinct Polly / Azure mark times, seconds: 1 ms. Closer marks
/// (over 1000 visemes a second) are refused as times written in a unit too small — Azure
/// offsets in milliseconds instead of 100-ns ticks, Polly times in seconds instead of
/// milliseconds. Conversational speech runs 10–15 phones a second (60–100 ms each).
pub const MIN_MEAN_MARK_SPACING_S: f64 = 0.001;

/// Largest mean spacing of the distinct Polly / Azure mark times (from 3 distinct times on),
/// seconds: 5 s per viseme on average, 50× the longest usual phone. Wider marks are refused as
/// times written in a unit too large — 100-ns ticks in Polly's milliseconds (TalkingHead issue
/// #33 made the same confusion: offsets 10,000× too late), nanoseconds in Azure's ticks.
pub const MAX_MEAN_MARK_SPACING_S: f64 = 5.0;

/// The formats [`read_speech`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SpeechFormat {
    /// Praat TextGrid (Montreal Forced Aligner output): [`textgrid`].
    #[serde(rename = "textgrid")]
    TextGrid,
    /// Gentle forced-aligner JSON: [`gentle`].
    #[serde(rename = "gentle")]
    Gentle,
    /// Rhubarb Lip Sync TSV (`time<TAB>shape`): [`rhubarb`].
    #[serde(rename = "rhubarb-tsv")]
    RhubarbTsv,
    /// Rhubarb Lip Sync JSON (`mouthCues`): [`rhubarb`].
    #[serde(rename = "rhubarb-json")]
    RhubarbJson,
    /// Amazon Polly speech marks (JSON Lines): [`polly`].
    #[serde(rename = "polly")]
    Polly,
    /// Azure Speech viseme events (JSON array): [`azure`].
    #[serde(rename = "azure")]
    Azure,
    /// mien's own utterance JSON: [`mien_json`].
    #[serde(rename = "mien")]
    Mien,
}

/// Every format, in detection order.
pub const SPEECH_FORMATS: [SpeechFormat; 7] = [
    SpeechFormat::TextGrid,
    SpeechFormat::Mien,
    SpeechFormat::Gentle,
    SpeechFormat::RhubarbJson,
    SpeechFormat::Polly,
    SpeechFormat::Azure,
    SpeechFormat::RhubarbTsv,
];

impl SpeechFormat {
    /// The short name (`textgrid`, `gentle`, `rhubarb-tsv`, `rhubarb-json`, `polly`, `azure`,
    /// `mien`), as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            SpeechFormat::TextGrid => "textgrid",
            SpeechFormat::Gentle => "gentle",
            SpeechFormat::RhubarbTsv => "rhubarb-tsv",
            SpeechFormat::RhubarbJson => "rhubarb-json",
            SpeechFormat::Polly => "polly",
            SpeechFormat::Azure => "azure",
            SpeechFormat::Mien => "mien",
        }
    }

    /// Parse a [`SpeechFormat::name`] (case-insensitive); `None` otherwise.
    pub fn from_name(s: &str) -> Option<Self> {
        SPEECH_FORMATS
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
    }
}

impl std::fmt::Display for SpeechFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Read a speech timing file, recognising its format from the content (or as `format` when
/// given). The label is the file's stem (mien's own JSON carries its own label). Polly and Azure
/// files end [`DEFAULT_LAST_MARK_SECONDS`] after their last mark (call [`polly::read_polly_str`]
/// or [`azure::read_azure_str`] to give the audio's end instead).
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::Format`] when it is not a regular file,
/// is neither UTF-8 nor UTF-16 text, is no recognised format, or its reader refuses it;
/// [`Error::Limit`] when it is larger than [`MAX_SPEECH_FILE_BYTES`].
pub fn read_speech(
    path: &Path,
    format: Option<SpeechFormat>,
) -> Result<(SpeechFile, SpeechFormat)> {
    let bytes = crate::io::read::read_file_capped(path, MAX_SPEECH_FILE_BYTES)?;
    read_speech_bytes(&bytes, &path.display().to_string(), format)
}

/// [`read_speech`] on bytes already in memory; `file` names them in errors and its stem is the
/// label (`"take/line1.TextGrid"` → `line1`).
///
/// # Errors
/// As [`read_speech`] (without [`Error::Io`]); the size cap applies too.
pub fn read_speech_bytes(
    bytes: &[u8],
    file: &str,
    format: Option<SpeechFormat>,
) -> Result<(SpeechFile, SpeechFormat)> {
    if bytes.len() as u64 > MAX_SPEECH_FILE_BYTES {
        return Err(too_big(file, bytes.len() as u64));
    }
    let text = decode_text(bytes, file)?;
    let (format, value) = match format {
        Some(f) => (f, None),
        None => {
            let sniffed = detect::sniff(&text);
            match sniffed.format {
                Some(f) => (f, sniffed.json),
                None => return Err(detect::unknown_format(&text, file)),
            }
        }
    };
    let speech = match format {
        SpeechFormat::TextGrid => textgrid::read_textgrid_str(&text, file)?,
        SpeechFormat::Gentle => match value {
            Some(v) => gentle::read_gentle_value(&v, file)?,
            None => gentle::read_gentle_str(&text, file)?,
        },
        SpeechFormat::RhubarbTsv => rhubarb::read_rhubarb_tsv_str(&text, file)?,
        SpeechFormat::RhubarbJson => match value {
            Some(v) => rhubarb::read_rhubarb_json_value(&v, file)?,
            None => rhubarb::read_rhubarb_json_str(&text, file)?,
        },
        SpeechFormat::Polly => polly::read_polly_str(&text, file, None)?,
        SpeechFormat::Azure => match value {
            Some(v) => azure::read_azure_value(&v, file, None)?,
            None => azure::read_azure_str(&text, file, None)?,
        },
        SpeechFormat::Mien => match value {
            Some(v) => mien_json::read_utterance_value(&v, file)?,
            None => mien_json::read_utterance_str(&text, file)?,
        },
    };
    Ok((speech, format))
}

/// The label of `file`: its stem (`a/b/line1.TextGrid` → `line1`), or `file` itself when it has
/// none.
pub fn label_of(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| file.to_owned())
}

fn too_big(file: &str, found: u64) -> Error {
    Error::Limit {
        what: format!("{file}: speech file size in bytes"),
        limit: MAX_SPEECH_FILE_BYTES,
        found,
    }
}
