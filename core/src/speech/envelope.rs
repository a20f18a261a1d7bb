//! Envelope lip-sync: each phoneme segment rises before its sound, holds, and releases after it;
//! overlapping segments are scaled so the weights never sum above 1.
//!
//! Source: seed 003 "Face" — a segment's envelope rises from `start − lead` over `attack`, holds,
//! and falls over `release` after `end` (defaults attack 0.07 s, release 0.09 s, lead 0.03 s: the
//! mouth moves slightly before the sound); overlapping segments are scaled so their sum stays ≤ 1;
//! unknown phonemes, backwards times and unsorted starts are errors naming every bad symbol. The
//! optional minimum hold rewrites the segments first so that every kept shape is held at least
//! that long (sub-100 ms shapes read as chattering; 120 ms is a common fix): short shapes borrow
//! time from a neighbour that can spare it, else merge with one ([`super::hold`] states the rule
//! and its sources). It never stretches shapes over each other, which turned two fast alternating
//! shapes into a steady 50/50 blend.

use super::viseme::{VISEME_COUNT, Viseme, phoneme_viseme};
use crate::error::{Error, Result};

/// The timing revision of [`EnvelopeTrack`] (recorded with anything baked from it, as
/// [`super::aligned::TIMING_REVISION`] is for held visemes). v2: the minimum hold holds each kept
/// shape (issue 25).
pub const ENVELOPE_REVISION: &str = "mien-envelope-attack-hold-release-v2";

/// Envelope timing, seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EnvelopeParams {
    /// Rise time (> 0).
    pub attack: f32,
    /// Fall time after the segment's end (> 0).
    pub release: f32,
    /// How far the rise starts before the segment (≥ 0).
    pub lead: f32,
    /// Minimum hold, seconds (≥ 0; 0 = off): the segments are rewritten by
    /// [`super::hold::apply_min_hold`] so every kept shape is held at least this long and the
    /// dominant shape changes at most `1 / min_hold` times a second.
    pub min_hold: f32,
}

impl Default for EnvelopeParams {
    fn default() -> Self {
        EnvelopeParams {
            attack: 0.07,
            release: 0.09,
            lead: 0.03,
            min_hold: 0.0,
        }
    }
}

/// One segment.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Segment {
    /// The shape.
    pub viseme: Viseme,
    /// Start, utterance seconds.
    pub start: f64,
    /// End, utterance seconds (after the minimum hold's rule).
    pub end: f64,
}

/// A validated envelope track on the media clock.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EnvelopeTrack {
    origin: f64,
    params: EnvelopeParams,
    segments: Vec<Segment>,
}

impl EnvelopeTrack {
    /// Build from `(phoneme, start, end)` utterance-relative seconds; `origin` is the media time of
    /// utterance zero. Phonemes are strict (upper-case unstressed ARPABET or `SIL`).
    ///
    /// # Errors
    /// [`Error::Format`] listing every unknown symbol at once; then every segment with non-finite or
    /// backwards times (`end < start`) and every start before its predecessor's (unsorted); invalid
    /// parameters ([`Error::Invalid`]).
    pub fn from_phonemes(
        label: &str,
        origin: f64,
        params: EnvelopeParams,
        phonemes: &[(String, f64, f64)],
    ) -> Result<Self> {
        let mut unknown: Vec<String> = Vec::new();
        let mut segs = Vec::with_capacity(phonemes.len());
        for (p, s, e) in phonemes {
            match phoneme_viseme(p) {
                Some(v) => segs.push((v, *s, *e)),
                None => {
                    if !unknown.contains(p) {
                        unknown.push(p.clone());
                    }
                }
            }
        }
        if !unknown.is_empty() {
            return Err(Error::format(
                label,
                "phonemes",
                format!(
                    "unknown phonemes (strict upper-case unstressed ARPABET or SIL): {}",
                    unknown.join(", ")
                ),
            ));
        }
        Self::from_visemes(label, origin, params, &segs)
    }

    /// Build from `(viseme, start, end)` segments.
    ///
    /// # Errors
    /// As [`EnvelopeTrack::from_phonemes`] for times and parameters.
    pub fn from_visemes(
        label: &str,
        origin: f64,
        params: EnvelopeParams,
        segments: &[(Viseme, f64, f64)],
    ) -> Result<Self> {
        let ok = |x: f32| x.is_finite();
        if !(ok(params.attack)
            && params.attack > 0.0
            && ok(params.release)
            && params.release > 0.0
            && ok(params.lead)
            && params.lead >= 0.0
            && ok(params.min_hold)
            && params.min_hold >= 0.0)
        {
            return Err(Error::Invalid {
                what: "envelope parameters".into(),
                reason: format!(
                    "{params:?}: attack and release must be > 0, lead and min_hold ≥ 0, all finite"
                ),
            });
        }
        if !origin.is_finite() {
            return Err(Error::format(
                label,
                "origin",
                format!("{origin} is not a finite media time"),
            ));
        }
        let mut problems = Vec::new();
        let mut prev = f64::NEG_INFINITY;
        let mut out = Vec::with_capacity(segments.len());
        for (i, &(v, s, e)) in segments.iter().enumerate() {
            if !(s.is_finite() && e.is_finite()) {
                problems.push(Error::format_at(
                    label,
                    "segments",
                    i,
                    format!("{} ({}): times {s}–{e} are not finite", v.name(), i),
                ));
                continue;
            }
            if e < s {
                problems.push(Error::format_at(
                    label,
                    "segments",
                    i,
                    format!("{}: ends at {e} s before it starts at {s} s", v.name()),
                ));
            }
            if s < prev {
                problems.push(Error::format_at(
                    label,
                    "segments",
                    i,
                    format!(
                        "{}: starts at {s} s, before the previous start {prev} s (unsorted)",
                        v.name()
                    ),
                ));
            }
            prev = s;
            out.push((v, s, e));
        }
        Error::collect(problems)?;
        let out = super::hold::apply_min_hold(&out, f64::from(params.min_hold))
            .into_iter()
            .map(|(viseme, start, end)| Segment { viseme, start, end })
            .collect();
        Ok(EnvelopeTrack {
            origin,
            params,
            segments: out,
        })
    }

    /// The segments, after the minimum hold's rule (unchanged when `min_hold` is 0).
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The parameters.
    pub fn params(&self) -> EnvelopeParams {
        self.params
    }

    /// One segment's envelope at utterance time `t`: `min(rise, fall)` with
    /// `rise = clamp((t − (start − lead)) / attack, 0, 1)` and `fall = clamp(1 − (t − end) / release, 0, 1)`.
    fn envelope(&self, s: &Segment, t: f64) -> f64 {
        let p = &self.params;
        let a = s.start - f64::from(p.lead);
        let rise = ((t - a) / f64::from(p.attack)).clamp(0.0, 1.0);
        let fall = (1.0 - (t - s.end) / f64::from(p.release)).clamp(0.0, 1.0);
        rise.min(fall)
    }
}

impl super::SpeechSampler for EnvelopeTrack {
    /// Per viseme the largest envelope of its segments at `position`; if the visemes then sum above
    /// 1 they are all scaled by `1 / sum`. `sil` segments take part in the scaling (silence pulls
    /// the other shapes down) and report their own weight.
    fn weights_at(&self, position: f64, out: &mut [f32; VISEME_COUNT]) {
        *out = [0.0; VISEME_COUNT];
        if !position.is_finite() {
            return;
        }
        let t = position - self.origin;
        // Segments are sorted by start; only those whose rise began by t can be non-zero.
        let last = self
            .segments
            .partition_point(|s| s.start - f64::from(self.params.lead) <= t);
        let mut w = [0.0f64; VISEME_COUNT];
        for s in &self.segments[..last] {
            let e = self.envelope(s, t);
            let k = s.viseme.index();
            if e > w[k] {
                w[k] = e;
            }
        }
        let sum: f64 = w.iter().sum();
        let scale = if sum > 1.0 { 1.0 / sum } else { 1.0 };
        for (o, x) in out.iter_mut().zip(w) {
            *o = (x * scale) as f32;
        }
    }

    fn span(&self) -> (f64, f64) {
        let end = self.segments.iter().map(|s| s.end).fold(0.0, f64::max)
            + f64::from(self.params.release);
        (self.origin, self.origin + end)
    }
}
