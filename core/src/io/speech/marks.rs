//! Point marks (Polly speech marks, Azure viseme events) → held segments: each viseme holds from
//! its mark to the next mark; the last one to the given end, else for
//! [`super::DEFAULT_LAST_MARK_SECONDS`]; and the plausibility check of their time unit
//! ([`check_mark_spacing`]).

use super::report::{Conversion, ConversionReport};
use super::{
    DEFAULT_LAST_MARK_SECONDS, MAX_MEAN_MARK_SPACING_S, MIN_MEAN_MARK_SPACING_S, SpeechSegment,
    Unit,
};
use crate::error::{Error, Result};
use crate::speech::Viseme;

/// One viseme mark: time (seconds), viseme, a short description for reports (`"p at 0.125 s
/// (line 3)"`), and where its time is written (`field`, `index`) for errors.
pub(crate) struct Mark {
    pub(crate) time: f64,
    pub(crate) viseme: Viseme,
    pub(crate) what: String,
    /// The time's field: a JSON pointer (`/3/audioOffset`) or a line (`line 4: time`).
    pub(crate) field: String,
    /// The event index or 1-based line.
    pub(crate) index: usize,
}

/// How far past the audio's given end the last mark must lie for [`hold_marks`] to name a unit
/// mix-up: 10× (a wrong unit is off by 1000× or more; a mark a little late is a trimming issue).
const MARKS_PAST_END_FACTOR: f64 = 10.0;

/// `x` to 4 significant digits for messages, plain decimals from 1e-9 to 1e9 (`0.000025`, not
/// `2.4999999999999998e-5`), scientific beyond.
fn sig4(x: f64) -> String {
    let r: f64 = format!("{x:.3e}").parse().unwrap_or(x);
    if r == 0.0 || (1e-9..1e9).contains(&r.abs()) {
        format!("{r}")
    } else {
        format!("{r:e}")
    }
}

/// How a mark format writes its times, for [`check_mark_spacing`]'s messages.
pub(crate) struct MarkUnit {
    /// The unit's name as the file writes it (`"ticks"`, `"ms"`).
    pub(crate) name: &'static str,
    /// File units per second (10,000,000 for 100-ns ticks, 1000 for milliseconds).
    pub(crate) per_second: f64,
    /// The likely cause and the fix when the marks are far too close together.
    pub(crate) too_fine: &'static str,
    /// The likely cause and the fix when the marks are far too far apart.
    pub(crate) too_coarse: &'static str,
}

/// Refuse marks whose spacing no speech has, the sign of times written in the wrong unit.
///
/// Over the `k` distinct mark times, the mean spacing is `(last − first) / (k − 1)` seconds. It
/// must be at least [`MIN_MEAN_MARK_SPACING_S`] (1 ms: more than 1000 visemes a second is no
/// speech; Azure offsets written in milliseconds instead of 100-ns ticks put a 3 s utterance
/// inside 300 µs) when `k ≥ 2`, and at most [`MAX_MEAN_MARK_SPACING_S`] (5 s per viseme on
/// average; ticks read as milliseconds, TalkingHead issue #33's confusion, make it 10,000× the
/// usual 60–100 ms) when `k ≥ 3`. Repeated times (a mark replaced at once) count once, so a
/// legitimate file with a few simultaneous marks is never refused.
///
/// # Errors
/// [`Error::Format`] naming `file`, the last mark's field and index, the span and mean in the
/// file's unit and in seconds, and `unit`'s likely cause and fix.
pub(crate) fn check_mark_spacing(marks: &[Mark], file: &str, unit: &MarkUnit) -> Result<()> {
    let (Some(first), Some(last)) = (marks.first(), marks.last()) else {
        return Ok(());
    };
    let distinct = 1 + marks.windows(2).filter(|w| w[1].time > w[0].time).count();
    if distinct < 2 {
        return Ok(());
    }
    let span = last.time - first.time;
    let mean = span / (distinct - 1) as f64;
    let (bound, hint) = if mean < MIN_MEAN_MARK_SPACING_S {
        (
            format!("under {} s", MIN_MEAN_MARK_SPACING_S),
            unit.too_fine,
        )
    } else if distinct >= 3 && mean > MAX_MEAN_MARK_SPACING_S {
        (
            format!("over {} s", MAX_MEAN_MARK_SPACING_S),
            unit.too_coarse,
        )
    } else {
        return Ok(());
    };
    Err(Error::format_at(
        file,
        last.field.clone(),
        last.index,
        format!(
            "{distinct} distinct mark times span {} {} ({} s), {} s apart on average ({bound}, \
             which no speech has): {hint}",
            sig4(span * unit.per_second),
            unit.name,
            sig4(span),
            sig4(mean),
        ),
    ))
}

/// Segments and duration from time-ordered marks (order is checked by the callers, which can
/// name the line or pointer). `end` is the explicit end of the audio, seconds.
///
/// An `end` before the last mark is refused; when the last mark lies at least
/// [`MARKS_PAST_END_FACTOR`]× past a positive `end`, the message adds `unit.too_coarse` (the audio
/// is the better witness of a unit mix-up than the marks' spacing).
pub(crate) fn hold_marks(
    marks: &[Mark],
    end: Option<f64>,
    report: &mut ConversionReport,
    file: &str,
    unit: &MarkUnit,
) -> Result<(Vec<SpeechSegment>, f64)> {
    let Some(last) = marks.last() else {
        return Err(Error::format(file, "marks", "no viseme marks"));
    };
    let end = match end {
        Some(e) if !(e.is_finite() && e >= last.time) => {
            let hint = if e > 0.0 && last.time >= MARKS_PAST_END_FACTOR * e {
                format!(
                    "; the last mark lies {}× past the audio's end: {}",
                    sig4(last.time / e),
                    unit.too_coarse
                )
            } else {
                String::new()
            };
            return Err(Error::Invalid {
                what: format!("{file}: end time"),
                reason: format!(
                    "{e} s is not a finite time at or after the last mark ({}){hint}",
                    last.what
                ),
            });
        }
        Some(e) => e,
        None => {
            report.note(Conversion::LastMarkDefaultLength, || {
                format!("{} held {DEFAULT_LAST_MARK_SECONDS} s", last.what)
            });
            last.time + DEFAULT_LAST_MARK_SECONDS
        }
    };
    let mut segments = Vec::with_capacity(marks.len());
    for (k, m) in marks.iter().enumerate() {
        let e = marks.get(k + 1).map_or(end, |n| n.time);
        if e <= m.time {
            report.note(Conversion::ZeroLengthSkipped, || m.what.clone());
            continue;
        }
        segments.push(SpeechSegment {
            start: m.time,
            end: e,
            unit: Unit::Viseme(m.viseme),
        });
    }
    if segments.is_empty() {
        return Err(Error::format(
            file,
            "marks",
            "every viseme mark has zero length",
        ));
    }
    Ok((segments, end))
}
