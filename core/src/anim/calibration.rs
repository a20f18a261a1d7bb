//! Per-channel stream calibration: a neutral offset, a gain and a clamp for trackers whose channels
//! barely move or rest away from zero (MediaPipe's `eyeWide*`, `noseSneer*`, `cheekPuff`).
//!
//! A channel's calibrated value is `clamp((v − offset) · gain, min, max)`; every value the clamp
//! changes is counted ([`CalibrationReport`]). A calibration file is JSON:
//!
//! ```json
//! {"format": "mien-calibration", "version": 1,
//!  "channels": {"eyeWideLeft": {"offset": 0.12, "gain": 2.5, "min": 0, "max": 1}}}
//! ```
//!
//! ```
//! use mien_core::anim::{Calibration, WeightStream};
//! let cal = Calibration::from_json(
//!     r#"{"format": "mien-calibration", "version": 1,
//!         "channels": {"eyeWideLeft": {"offset": 0.1, "gain": 4}}}"#,
//!     "cal.json",
//! )?;
//! let mut take = WeightStream {
//!     source: "take".into(),
//!     channels: vec!["eyeWideLeft".into()],
//!     times: vec![0.0, 0.1],
//!     values: vec![0.3, 0.05],
//!     aux_channels: vec![],
//!     aux_values: vec![],
//!     nominal_fps: None,
//! };
//! let report = cal.apply(&mut take);
//! assert!((take.values[0] - 0.8).abs() < 1e-6); // (0.3 − 0.1) · 4
//! assert_eq!((take.values[1], report.clamped), (0.0, 1)); // −0.2 clamped to 0, counted
//! # Ok::<(), mien_core::Error>(())
//! ```
//!
//! `gain` defaults to 1, `min` to 0 and `max` to 1; names are matched to the stream's channels
//! exactly as the stream spells them. [`Calibration::fit_neutral`] fits the offsets from a neutral
//! take (the face at rest): each channel's median, so a tracker's resting bias reads as 0.
//! Source: the issue's deliverable ("a per-channel calibration file (neutral offset, gain,
//! clamp)"); the median as a robust rest estimate is the usual choice for a take with blinks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::anim::stream::WeightStream;
use crate::error::{Error, Result};

/// The calibration file's `format` value.
pub const CALIBRATION_FORMAT: &str = "mien-calibration";

/// One channel's calibration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelCalibration {
    /// Subtracted first (the channel's resting value), unitless.
    pub offset: f32,
    /// Multiplied after the offset.
    #[serde(default = "one")]
    pub gain: f32,
    /// Lower clamp.
    #[serde(default)]
    pub min: f32,
    /// Upper clamp.
    #[serde(default = "one")]
    pub max: f32,
}

fn one() -> f32 {
    1.0
}

/// A calibration: channel name → its calibration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Always [`CALIBRATION_FORMAT`].
    pub format: String,
    /// 1.
    pub version: u32,
    /// Per channel, by the stream's spelling.
    pub channels: BTreeMap<String, ChannelCalibration>,
}

/// What [`Calibration::apply`] did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// Channels calibrated.
    pub applied: Vec<String>,
    /// Calibrated names the stream does not have (skipped, listed).
    pub absent: Vec<String>,
    /// Values the clamp changed, all channels.
    pub clamped: u64,
}

impl Calibration {
    /// Parse a calibration file (`file` names it in errors).
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the field: not JSON, unknown keys, another `format` or
    /// `version`, a non-finite number, `min > max`, a zero or non-finite gain.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let c: Calibration = serde_json::from_str(text).map_err(|e| {
            Error::format(
                file,
                format!("JSON (line {}, column {})", e.line(), e.column()),
                e.to_string(),
            )
        })?;
        if c.format != CALIBRATION_FORMAT || c.version != 1 {
            return Err(Error::format(
                file,
                "format",
                format!(
                    "\"{}\" version {} is not \"{CALIBRATION_FORMAT}\" version 1",
                    c.format, c.version
                ),
            ));
        }
        for (name, ch) in &c.channels {
            let at = format!("channels.{name}");
            let all = [ch.offset, ch.gain, ch.min, ch.max];
            if !all.iter().all(|x| x.is_finite()) {
                return Err(Error::format(file, at, "a number is not finite"));
            }
            if ch.gain == 0.0 {
                return Err(Error::format(
                    file,
                    format!("{at}.gain"),
                    "0 flattens the channel",
                ));
            }
            if ch.min > ch.max {
                return Err(Error::format(
                    file,
                    format!("{at}.min"),
                    format!("{} is above max {}", ch.min, ch.max),
                ));
            }
        }
        Ok(c)
    }

    /// The file's JSON text (pretty, channels in name order).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Offsets fitted from a neutral take: per channel the median of its finite values (gain 1,
    /// clamp `[0, 1]`). Channels without a finite value are left out.
    pub fn fit_neutral(neutral: &WeightStream) -> Self {
        let c = neutral.channel_count();
        let mut channels = BTreeMap::new();
        for (j, name) in neutral.channels.iter().enumerate() {
            let mut v: Vec<f32> = neutral
                .values
                .chunks_exact(c.max(1))
                .map(|row| row[j])
                .filter(|x| x.is_finite())
                .collect();
            if v.is_empty() {
                continue;
            }
            v.sort_by(f32::total_cmp);
            let n = v.len();
            let median = if n % 2 == 1 {
                v[n / 2]
            } else {
                0.5 * (v[n / 2 - 1] + v[n / 2])
            };
            channels.insert(
                name.clone(),
                ChannelCalibration {
                    offset: median,
                    gain: 1.0,
                    min: 0.0,
                    max: 1.0,
                },
            );
        }
        Calibration {
            format: CALIBRATION_FORMAT.into(),
            version: 1,
            channels,
        }
    }

    /// Calibrate `stream` in place: `clamp((v − offset)·gain, min, max)` for each calibrated
    /// channel it has (non-finite values stay as they are: the rig zeroes and counts them).
    pub fn apply(&self, stream: &mut WeightStream) -> CalibrationReport {
        let c = stream.channel_count();
        let mut report = CalibrationReport::default();
        for (name, cal) in &self.channels {
            let Some(j) = stream.channels.iter().position(|n| n == name) else {
                report.absent.push(name.clone());
                continue;
            };
            report.applied.push(name.clone());
            for row in stream.values.chunks_exact_mut(c) {
                let v = row[j];
                if !v.is_finite() {
                    continue;
                }
                let x = (v - cal.offset) * cal.gain;
                let y = x.clamp(cal.min, cal.max);
                report.clamped += u64::from(y != x);
                row[j] = y;
            }
        }
        report
    }
}
