//! Point marks (Polly speech marks, Azure viseme events) → held segments: each viseme holds from
//! its mark to the next mark; the last one to the given end, else for
//! [`super::DEFAULT_LAST_MARK_SECONDS`].

use super::report::{Conversion, ConversionReport};
use super::{DEFAULT_LAST_MARK_SECONDS, SpeechSegment, Unit};
use crate::error::{Error, Result};
use crate::speech::Viseme;

/// One viseme mark: time (seconds), viseme, and a short description for reports (`"p at 0.125 s
/// (line 3)"`).
pub(crate) struct Mark {
    pub(crate) time: f64,
    pub(crate) viseme: Viseme,
    pub(crate) what: String,
}

/// Segments and duration from time-ordered marks (order is checked by the callers, which can
/// name the line or pointer). `end` is the explicit end of the audio, seconds.
pub(crate) fn hold_marks(
    marks: &[Mark],
    end: Option<f64>,
    report: &mut ConversionReport,
    file: &str,
) -> Result<(Vec<SpeechSegment>, f64)> {
    let Some(last) = marks.last() else {
        return Err(Error::format(file, "marks", "no viseme marks"));
    };
    let end = match end {
        Some(e) if !(e.is_finite() && e >= last.time) => {
            return Err(Error::Invalid {
                what: format!("{file}: end time"),
                reason: format!(
                    "{e} s is not a finite time at or after the last mark ({})",
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
