//! What a speech reader converted, normalised or skipped on the way from a file to a
//! [`super::SpeechFile`]: one counted entry per kind of change, with a few distinct examples.
//!
//! Source: DESIGN.md "Data contracts" (unmatched or converted input is reported, never silently
//! dropped) and STYLE 11 (errors and reports are data).

use super::SpeechFormat;

/// Most distinct examples kept per [`ReportEntry`].
pub const MAX_REPORT_EXAMPLES: usize = 8;

/// Overlaps between consecutive Gentle words at or below this many seconds are rounding noise of
/// the aligner's arithmetic (sums of 0.01 s frames printed with 15–17 digits): they are clamped
/// and counted as [`Conversion::RoundingClamped`], not as [`Conversion::OverlapTrimmed`].
pub const ROUNDING_SECONDS: f64 = 1e-9;

/// One kind of conversion a reader applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Conversion {
    /// An ARPABET stress digit was stripped (`AH0` → `AH`).
    StressStripped,
    /// A Gentle word-position suffix was stripped (`ay_S` → `ay`; `_B/_I/_E/_S`).
    PositionSuffixStripped,
    /// A lower-case ARPABET label was upper-cased (`ay` → `AY`).
    UpperCased,
    /// An empty, `sil`, `sp` or `spn` label was marked as silence (`SIL`).
    SilenceMarked,
    /// An IPA phone symbol was mapped to ARPABET through the documented table (`ɑ` → `AA`).
    IpaMapped,
    /// A Gentle word without timing (`case: not-found-in-audio`) was skipped.
    WordWithoutTiming,
    /// A timed Gentle word with an empty `phones` list was skipped.
    WordWithoutPhones,
    /// A Gentle word aligned in the audio but absent from the transcript
    /// (`case: not-found-in-transcript`) was kept.
    WordNotInTranscript,
    /// A Gentle out-of-vocabulary phone (`oov`) was left as a gap (rest).
    OutOfVocabulary,
    /// A segment's start was moved to the previous segment's end (an overlap of at most
    /// [`super::gentle::MAX_OVERLAP_TRIM_SECONDS`]); `largest_seconds` is the largest trim.
    OverlapTrimmed,
    /// An overlap of at most [`ROUNDING_SECONDS`] was clamped (floating-point noise).
    RoundingClamped,
    /// A segment of zero length (equal start and end, or emptied by a trim) was dropped.
    ZeroLengthSkipped,
    /// A Polly mark of another type than `viseme` (`word`, `sentence`, `ssml`) was ignored.
    MarkIgnored,
    /// A Polly viseme letter or an Azure viseme ID was mapped to a viseme.
    VisemeMapped,
    /// A Rhubarb mouth shape (A–H, X) was mapped to a viseme.
    ShapeMapped,
    /// The last Polly / Azure mark was held for [`super::DEFAULT_LAST_MARK_SECONDS`] because the
    /// file has no end time and none was given.
    LastMarkDefaultLength,
}

/// How often one [`Conversion`] happened, with examples.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ReportEntry {
    /// The kind.
    pub kind: Conversion,
    /// How many times it happened.
    pub count: usize,
    /// Up to [`MAX_REPORT_EXAMPLES`] distinct examples (`"AH0 → AH"`, `"sitting (word 2)"`).
    pub examples: Vec<String>,
    /// The largest amount involved, seconds (the largest overlap trimmed); `None` when the kind
    /// has no amount.
    pub largest_seconds: Option<f64>,
}

/// Which phone alphabet a TextGrid's phone tier was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhoneSet {
    /// ARPABET (CMUdict symbols, any case, optional stress digit).
    Arpabet,
    /// IPA symbols, mapped through [`super::phones::IPA_ARPABET`].
    Ipa,
}

/// Everything a reader converted or skipped.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConversionReport {
    /// The format the file was read as; `None` for a [`super::SpeechFile`] built in code.
    pub format: Option<SpeechFormat>,
    /// The file (path or label) the report is about.
    pub source: String,
    /// The TextGrid tier the phones came from.
    pub tier: Option<String>,
    /// The TextGrid phone alphabet.
    pub phone_set: Option<PhoneSet>,
    /// Input items looked at (intervals, phones, cues, marks, events, segments).
    pub input_items: usize,
    /// Segments in the result.
    pub segments: usize,
    /// Of those, silences (`SIL` / `sil`).
    pub silences: usize,
    /// One entry per kind of conversion, in the order first seen.
    pub entries: Vec<ReportEntry>,
}

impl ConversionReport {
    /// An empty report about `source`.
    pub fn new(format: Option<SpeechFormat>, source: &str) -> Self {
        ConversionReport {
            format,
            source: source.to_owned(),
            tier: None,
            phone_set: None,
            input_items: 0,
            segments: 0,
            silences: 0,
            entries: Vec::new(),
        }
    }

    /// How many times `kind` happened (0 when never).
    pub fn count(&self, kind: Conversion) -> usize {
        self.entry(kind).map_or(0, |e| e.count)
    }

    /// The entry for `kind`, if it happened.
    pub fn entry(&self, kind: Conversion) -> Option<&ReportEntry> {
        self.entries.iter().find(|e| e.kind == kind)
    }

    fn slot(&mut self, kind: Conversion) -> &mut ReportEntry {
        let i = match self.entries.iter().position(|e| e.kind == kind) {
            Some(i) => i,
            None => {
                self.entries.push(ReportEntry {
                    kind,
                    count: 0,
                    examples: Vec::new(),
                    largest_seconds: None,
                });
                self.entries.len() - 1
            }
        };
        &mut self.entries[i]
    }

    /// Count one `kind`; `example` is called only while fewer than [`MAX_REPORT_EXAMPLES`]
    /// examples are kept, and a duplicate example is not kept twice.
    pub(crate) fn note(&mut self, kind: Conversion, example: impl FnOnce() -> String) {
        let e = self.slot(kind);
        e.count += 1;
        if e.examples.len() < MAX_REPORT_EXAMPLES {
            let x = example();
            if !e.examples.contains(&x) {
                e.examples.push(x);
            }
        }
    }

    /// [`ConversionReport::note`] with an amount in seconds; the largest is kept.
    pub(crate) fn note_amount(
        &mut self,
        kind: Conversion,
        seconds: f64,
        example: impl FnOnce() -> String,
    ) {
        self.note(kind, example);
        let e = self.slot(kind);
        if e.largest_seconds.is_none_or(|m| seconds > m) {
            e.largest_seconds = Some(seconds);
        }
    }
}
