//! Caller-aligned speech: an utterance of held, half-open viseme intervals on the media clock.
//!
//! Source: seed 002 "Input contract" — a non-empty label, a duration including silences, a media-clock
//! origin; utterance-relative, finite, non-negative times; positive, in-order, non-overlapping
//! intervals inside the utterance; `[start, end)`; each interval held at full weight; gaps, `SIL` and
//! times outside the utterance give rest. Durations are f32 seconds and endpoints are compared after
//! adding the origin in f32, so an interval that collapses at that precision is refused (use a short
//! origin for fine timing over a long session).

use super::viseme::{VISEME_COUNT, Viseme, strict_phoneme};
use crate::error::{Error, Result};

/// The timing revision of [`AlignedSpeech`] (recorded with anything baked from it).
pub const TIMING_REVISION: &str = "mien-audio-clock-half-open-held-v1";

/// One held viseme over `[start, end)` utterance seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TimedViseme {
    /// The shape.
    pub viseme: Viseme,
    /// Start, seconds from the utterance's time zero (inclusive).
    pub start: f32,
    /// End, seconds (exclusive).
    pub end: f32,
}

/// A validated utterance of held visemes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AlignedSpeech {
    utterance: String,
    duration: f32,
    origin: f64,
    intervals: Vec<TimedViseme>,
    /// Media-clock endpoints `(start, end)` in f32, as compared when sampling.
    #[serde(skip)]
    media: Vec<(f32, f32)>,
}

impl AlignedSpeech {
    /// Validate and build. `origin` is the media-clock position of utterance time zero, seconds.
    ///
    /// # Errors
    /// Every problem, each an [`Error::Format`] naming `intervals` and the index: an empty label, a
    /// non-finite or non-positive duration, a non-finite origin, non-finite or negative times, an
    /// empty or negative interval, an interval ending after the duration, out of order or overlapping
    /// (each interval must start at or after the previous end), or one that collapses once the
    /// origin is added at f32 precision.
    pub fn new(
        utterance: &str,
        duration: f32,
        origin: f64,
        intervals: Vec<TimedViseme>,
    ) -> Result<Self> {
        let f = if utterance.is_empty() {
            "<unnamed utterance>"
        } else {
            utterance
        };
        let mut problems = Vec::new();
        if utterance.trim().is_empty() {
            problems.push(Error::format(f, "utterance", "the label is empty"));
        }
        if !(duration.is_finite() && duration > 0.0) {
            problems.push(Error::format(
                f,
                "duration",
                format!("{duration} s is not a positive finite duration"),
            ));
        }
        if !origin.is_finite() {
            problems.push(Error::format(
                f,
                "origin",
                format!("{origin} is not a finite media time"),
            ));
        }
        let mut media = Vec::with_capacity(intervals.len());
        let mut prev_end = 0.0f32;
        for (i, iv) in intervals.iter().enumerate() {
            let bad = |reason: String| Error::format_at(f, "intervals", i, reason);
            if !(iv.start.is_finite() && iv.end.is_finite()) || iv.start < 0.0 || iv.end < 0.0 {
                problems.push(bad(format!(
                    "times {}–{} s must be finite and non-negative",
                    iv.start, iv.end
                )));
                continue;
            }
            if iv.end <= iv.start {
                problems.push(bad(format!(
                    "{}–{} s is empty or negative",
                    iv.start, iv.end
                )));
                continue;
            }
            if duration.is_finite() && iv.end > duration {
                problems.push(bad(format!(
                    "ends at {} s, after the utterance's {duration} s",
                    iv.end
                )));
            }
            if iv.start < prev_end {
                problems.push(bad(format!("starts at {} s, before the previous interval ends at {prev_end} s (out of order or overlapping)", iv.start)));
            }
            prev_end = prev_end.max(iv.end);
            let (ms, me) = (origin as f32 + iv.start, origin as f32 + iv.end);
            if ms >= me {
                problems.push(bad(format!("{}–{} s collapses at f32 precision after adding the origin {origin} s; use a shorter origin", iv.start, iv.end)));
            }
            media.push((ms, me));
        }
        Error::collect(problems)?;
        Ok(AlignedSpeech {
            utterance: utterance.to_owned(),
            duration,
            origin,
            intervals,
            media,
        })
    }

    /// Build from strict phoneme labels (upper-case unstressed ARPABET or `SIL`) mapped through
    /// [`super::viseme::phoneme_viseme`].
    ///
    /// # Errors
    /// Every unknown or stressed label (named with its index), then [`AlignedSpeech::new`]'s checks.
    pub fn from_phonemes(
        utterance: &str,
        duration: f32,
        origin: f64,
        phonemes: &[(String, f32, f32)],
    ) -> Result<Self> {
        let mut problems = Vec::new();
        let mut intervals = Vec::with_capacity(phonemes.len());
        for (i, (p, s, e)) in phonemes.iter().enumerate() {
            match strict_phoneme(p, utterance, "phonemes", i) {
                Ok(v) => intervals.push(TimedViseme {
                    viseme: v,
                    start: *s,
                    end: *e,
                }),
                Err(err) => problems.push(err),
            }
        }
        Error::collect(problems)?;
        Self::new(utterance, duration, origin, intervals)
    }

    /// The label.
    pub fn utterance(&self) -> &str {
        &self.utterance
    }

    /// Duration including silences, seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// Media-clock position of utterance time zero, seconds.
    pub fn origin(&self) -> f64 {
        self.origin
    }

    /// The intervals.
    pub fn intervals(&self) -> &[TimedViseme] {
        &self.intervals
    }

    /// The viseme held at media-clock `position` seconds, or `None` for rest (a gap, `sil`, before
    /// the origin, after the duration, a non-finite position). A stateless lookup.
    pub fn viseme_at(&self, position: f64) -> Option<Viseme> {
        if !position.is_finite() {
            return None;
        }
        let p = position as f32;
        let end = self.origin as f32 + self.duration;
        if p < self.origin as f32 || p >= end {
            return None;
        }
        // First interval whose media end is after p; it holds p if it has started.
        let k = self.media.partition_point(|&(_, me)| me <= p);
        match self.media.get(k) {
            Some(&(ms, _)) if ms <= p => {
                Some(self.intervals[k].viseme).filter(|v| *v != Viseme::Sil)
            }
            _ => None,
        }
    }
}

impl super::SpeechSampler for AlignedSpeech {
    fn weights_at(&self, position: f64, out: &mut [f32; VISEME_COUNT]) {
        *out = [0.0; VISEME_COUNT];
        if let Some(v) = self.viseme_at(position) {
            out[v.index()] = 1.0;
        }
    }

    fn span(&self) -> (f64, f64) {
        (self.origin, self.origin + f64::from(self.duration))
    }
}
