//! The reader-neutral result: a labelled utterance of timed phonemes or visemes, validated, with
//! its [`ConversionReport`], and its conversions to the two speech samplers.
//!
//! Source: seed 002 "Input contract" (a label, a duration including silences, utterance-relative
//! non-negative times, positive in-order non-overlapping intervals, gaps and `SIL` at rest) and
//! seed 003 "Face" (envelopes from phoneme timings).

use super::report::ConversionReport;
use crate::error::{Error, Result};
use crate::speech::viseme::{Viseme, phoneme_viseme, strict_phoneme};
use crate::speech::{AlignedSpeech, EnvelopeParams, EnvelopeTrack, TimedViseme};

/// Most problems one validation lists before summarising the rest.
const MAX_PROBLEMS: usize = 50;

/// Latest time a speech file may reach (its duration and every segment end), seconds: 24 hours.
/// The samplers hold utterance times as `f32`, which beyond a day step by more than 8 ms.
pub const MAX_SPEECH_TIME_S: f64 = 86_400.0;

pub(crate) use crate::error::short;

/// `duration` (seconds) must be finite, positive and at most [`MAX_SPEECH_TIME_S`].
///
/// # Errors
/// [`Error::Format`] naming `file` and `field` (a pointer such as `/duration`), the value in short
/// form and the bound.
pub(crate) fn check_duration(file: &str, field: &str, duration: f64) -> Result<()> {
    if duration.is_finite() && duration > 0.0 && duration <= MAX_SPEECH_TIME_S {
        return Ok(());
    }
    Err(Error::format(
        file,
        field,
        format!(
            "{} s is not a duration of more than 0 and at most {} s (24 h)",
            short(duration),
            short(MAX_SPEECH_TIME_S)
        ),
    ))
}

/// What one segment shows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Unit {
    /// A strict phoneme: upper-case unstressed ARPABET (one of [`crate::speech::viseme::PHONEMES`])
    /// or `SIL`.
    Phoneme(String),
    /// One of the 15 visemes.
    Viseme(Viseme),
}

impl Unit {
    /// The viseme this unit shows (a phoneme through [`phoneme_viseme`]); `None` only for a
    /// phoneme that is not strict, which [`SpeechFile::new`] refuses.
    pub fn viseme(&self) -> Option<Viseme> {
        match self {
            Unit::Phoneme(p) => phoneme_viseme(p),
            Unit::Viseme(v) => Some(*v),
        }
    }

    /// `SIL` or the `sil` viseme.
    pub fn is_silence(&self) -> bool {
        match self {
            Unit::Phoneme(p) => p == "SIL",
            Unit::Viseme(v) => *v == Viseme::Sil,
        }
    }

    /// The label as written in mien's JSON (`"AH"`, `"SIL"`, `"kk"`, `"sil"`).
    pub fn name(&self) -> &str {
        match self {
            Unit::Phoneme(p) => p,
            Unit::Viseme(v) => v.name(),
        }
    }
}

/// Which kind of [`Unit`] a file holds (a file holds one kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Every segment is a [`Unit::Phoneme`].
    Phonemes,
    /// Every segment is a [`Unit::Viseme`].
    Visemes,
}

/// One unit held over `[start, end)` utterance seconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SpeechSegment {
    /// Start, seconds from the utterance's time zero (inclusive).
    pub start: f64,
    /// End, seconds (exclusive).
    pub end: f64,
    /// What is shown.
    pub unit: Unit,
}

/// A validated utterance read from a speech timing file.
///
/// Invariants (checked by [`SpeechFile::new`]): a non-empty label; a finite positive duration,
/// seconds; at least one segment; every segment finite with `0 ≤ start < end ≤ duration`; segments
/// in time order and not overlapping (`start ≥` the previous `end`; gaps allowed); all segments of
/// one [`UnitKind`]; phonemes strict.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SpeechFile {
    label: String,
    duration: f64,
    segments: Vec<SpeechSegment>,
    report: ConversionReport,
}

impl SpeechFile {
    /// Validate and build, with an empty report (`format: None`).
    ///
    /// # Errors
    /// Every problem found (up to 50, then a summary), each an [`Error::Format`] naming `label`,
    /// the field (`label`, `duration`, `segments`) and the segment index: see the invariants above.
    pub fn new(label: &str, duration: f64, segments: Vec<SpeechSegment>) -> Result<Self> {
        Self::with_report(
            label,
            duration,
            segments,
            ConversionReport::new(None, label),
        )
    }

    /// [`SpeechFile::new`] keeping a reader's report; fills its `segments` and `silences` counts.
    pub(crate) fn with_report(
        label: &str,
        duration: f64,
        segments: Vec<SpeechSegment>,
        mut report: ConversionReport,
    ) -> Result<Self> {
        let file = report.source.clone();
        let file = if file.is_empty() { label } else { &file };
        validate(file, label, duration, &segments)?;
        report.segments = segments.len();
        report.silences = segments.iter().filter(|s| s.unit.is_silence()).count();
        Ok(SpeechFile {
            label: label.to_owned(),
            duration,
            segments,
            report,
        })
    }

    /// The label (a file's stem, or the `label` of mien's own JSON).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Duration including leading, internal and trailing silence, seconds: the file's own end
    /// time where it has one, else the end of its last timed item.
    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// The segments, in time order.
    pub fn segments(&self) -> &[SpeechSegment] {
        &self.segments
    }

    /// What the reader converted or skipped.
    pub fn report(&self) -> &ConversionReport {
        &self.report
    }

    /// Whether the segments are phonemes or visemes.
    pub fn unit_kind(&self) -> UnitKind {
        match self.segments.first().map(|s| &s.unit) {
            Some(Unit::Phoneme(_)) => UnitKind::Phonemes,
            _ => UnitKind::Visemes,
        }
    }

    /// Held intervals (seed 002): each segment's viseme (phonemes through [`phoneme_viseme`],
    /// table `mien-arpabet-viseme-v1`) over `[start, end)` as f32 seconds; `SIL` / `sil` segments
    /// stay `sil` intervals, which sample as rest; gaps stay gaps (rest). `origin` is the media-clock
    /// position of utterance time zero, seconds.
    ///
    /// # Errors
    /// [`AlignedSpeech::new`]'s: a non-finite origin, or a segment that collapses at f32 precision
    /// (on its own or after adding the origin).
    pub fn to_aligned(&self, origin: f64) -> Result<AlignedSpeech> {
        let intervals = self
            .segments
            .iter()
            .map(|s| TimedViseme {
                viseme: s.unit.viseme().unwrap_or(Viseme::Sil),
                start: s.start as f32,
                end: s.end as f32,
            })
            .collect();
        AlignedSpeech::new(&self.label, self.duration as f32, origin, intervals)
    }

    /// Envelopes (seed 003): every segment becomes an envelope segment of its viseme; `SIL` / `sil`
    /// segments become `sil` segments (the rest shape, which pulls the others down where envelopes
    /// overlap); gaps stay gaps.
    ///
    /// # Errors
    /// [`EnvelopeTrack::from_visemes`]'s: invalid `params` ([`Error::Invalid`]) or a non-finite
    /// origin.
    pub fn to_envelope(&self, origin: f64, params: EnvelopeParams) -> Result<EnvelopeTrack> {
        let segs: Vec<(Viseme, f64, f64)> = self
            .segments
            .iter()
            .map(|s| (s.unit.viseme().unwrap_or(Viseme::Sil), s.start, s.end))
            .collect();
        EnvelopeTrack::from_visemes(&self.label, origin, params, &segs)
    }
}

/// The invariants of [`SpeechFile`], every problem collected.
fn validate(file: &str, label: &str, duration: f64, segments: &[SpeechSegment]) -> Result<()> {
    let mut problems = Vec::new();
    let mut more = 0usize;
    let mut push = |problems: &mut Vec<Error>, e: Error| {
        if problems.len() < MAX_PROBLEMS {
            problems.push(e);
        } else {
            more += 1;
        }
    };
    if label.trim().is_empty() {
        push(
            &mut problems,
            Error::format(file, "label", "the label is empty"),
        );
    }
    if let Err(e) = check_duration(file, "duration", duration) {
        push(&mut problems, e);
    }
    if segments.is_empty() {
        push(
            &mut problems,
            Error::format(file, "segments", "no timed segments"),
        );
    }
    let kind = segments.first().map(|s| matches!(s.unit, Unit::Phoneme(_)));
    let mut prev_end = 0.0f64;
    for (i, s) in segments.iter().enumerate() {
        let bad = |reason: String| Error::format_at(file, "segments", i, reason);
        if let Unit::Phoneme(p) = &s.unit
            && let Err(e) = strict_phoneme(p, file, "segments", i)
        {
            push(&mut problems, e);
        }
        if kind != Some(matches!(s.unit, Unit::Phoneme(_))) {
            push(
                &mut problems,
                bad(format!(
                    "`{}` mixes phonemes and visemes in one file",
                    s.unit.name()
                )),
            );
        }
        if !(s.start.is_finite() && s.end.is_finite()) || s.start < 0.0 {
            push(
                &mut problems,
                bad(format!(
                    "times {}–{} s must be finite and non-negative",
                    short(s.start),
                    short(s.end)
                )),
            );
            continue;
        }
        if s.end <= s.start {
            push(
                &mut problems,
                bad(format!(
                    "{}–{} s is empty or negative",
                    short(s.start),
                    short(s.end)
                )),
            );
        }
        if duration.is_finite() && s.end > duration {
            push(
                &mut problems,
                bad(format!(
                    "ends at {} s, after the utterance's {} s",
                    short(s.end),
                    short(duration)
                )),
            );
        }
        if s.start < prev_end {
            push(
                &mut problems,
                bad(format!(
                    "starts at {} s, before the previous segment ends at {prev_end} s (out of order or overlapping)",
                    s.start
                )),
            );
        }
        prev_end = prev_end.max(s.end);
    }
    if more > 0 {
        problems.push(Error::format(
            file,
            "segments",
            format!("… and {more} more problems"),
        ));
    }
    Error::collect(problems)
}
