//! Weight streams: named channels sampled at frame times (Live Link Face CSV, Audio2Face JSON, the
//! built-in performance), and their sampling at media time.

use crate::error::{Error, Result};

/// A stream of named weight channels over time, plus auxiliary channels kept as they are (head and
/// eye angles in radians, for example).
///
/// `values` is `(F,C)` row-major: frame `f`, channel `c` at `values[f*C + c]`; `aux_values` is
/// `(F,A)` likewise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightStream {
    /// Where it came from, for messages.
    pub source: String,
    /// Channel names as the file spells them.
    pub channels: Vec<String>,
    /// Frame times `(F,)`, seconds from the stream's first frame (so `times[0] == 0`), strictly
    /// increasing.
    pub times: Vec<f64>,
    /// Weights `(F,C)`, unitless.
    pub values: Vec<f32>,
    /// Auxiliary channel names (not blendshapes), e.g. `HeadYaw`.
    pub aux_channels: Vec<String>,
    /// Auxiliary values `(F,A)` in the file's units (radians for Live Link angles).
    pub aux_values: Vec<f32>,
    /// The nominal frame rate, frames per second, when the source states or implies one.
    pub nominal_fps: Option<f64>,
}

/// The values one stream channel took over the whole stream, and how many fell outside the
/// ranges mien applies: ARKit's `[0, 1]` (a weight outside it is a tracker's overshoot or not a
/// blendshape at all) and the rig's clamp `±2` ([`crate::rig::MORPH_WEIGHT_LIMIT`]: those are
/// clamped and counted when posed).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ChannelRange {
    /// Channel name as the file spells it.
    pub name: String,
    /// Channel index.
    pub index: usize,
    /// Smallest value seen (`null` in JSON when every value was non-finite).
    pub min: Option<f32>,
    /// Largest value seen.
    pub max: Option<f32>,
    /// Values below 0.
    pub below_zero: u64,
    /// Values above 1.
    pub above_one: u64,
    /// Values beyond ±2 (clamped when posed).
    pub beyond_clamp: u64,
    /// Non-finite values (zeroed when posed).
    pub non_finite: u64,
}

impl ChannelRange {
    /// Values outside `[0, 1]` (below 0 or above 1).
    pub fn outside_unit(&self) -> u64 {
        self.below_zero + self.above_one
    }
}

impl WeightStream {
    /// Per channel `(C,)` the range of its values over every frame and the counts outside
    /// `[0, 1]` and `±2` ([`ChannelRange`]): nothing out of range passes without a count.
    pub fn channel_ranges(&self) -> Vec<ChannelRange> {
        let c = self.channel_count();
        let mut out: Vec<ChannelRange> = self
            .channels
            .iter()
            .enumerate()
            .map(|(index, name)| ChannelRange {
                name: name.clone(),
                index,
                min: None,
                max: None,
                below_zero: 0,
                above_one: 0,
                beyond_clamp: 0,
                non_finite: 0,
            })
            .collect();
        if c == 0 {
            return out;
        }
        let limit = crate::rig::MORPH_WEIGHT_LIMIT;
        for row in self.values.chunks_exact(c) {
            for (r, &v) in out.iter_mut().zip(row) {
                if !v.is_finite() {
                    r.non_finite += 1;
                    continue;
                }
                r.min = Some(r.min.map_or(v, |m| m.min(v)));
                r.max = Some(r.max.map_or(v, |m| m.max(v)));
                r.below_zero += u64::from(v < 0.0);
                r.above_one += u64::from(v > 1.0);
                r.beyond_clamp += u64::from(v.abs() > limit);
            }
        }
        out
    }

    /// Check shapes and times.
    ///
    /// # Errors
    /// [`Error::Format`] naming the source when there are no frames, times are not finite or not
    /// strictly increasing, or `values`/`aux_values` have the wrong length.
    pub fn validate(&self) -> Result<()> {
        let f = self.frame_count();
        if f == 0 {
            return Err(Error::format(
                &self.source,
                "frames",
                "the stream has no frames",
            ));
        }
        if self.values.len() != f * self.channels.len() {
            return Err(Error::Mismatch {
                what: format!("{}: weight values", self.source),
                expected: (f * self.channels.len()) as u64,
                found: self.values.len() as u64,
            });
        }
        if self.aux_values.len() != f * self.aux_channels.len() {
            return Err(Error::Mismatch {
                what: format!("{}: aux values", self.source),
                expected: (f * self.aux_channels.len()) as u64,
                found: self.aux_values.len() as u64,
            });
        }
        if let Some(i) = self.times.iter().position(|t| !t.is_finite()) {
            return Err(Error::format_at(&self.source, "time", i, "not finite"));
        }
        if let Some(i) = self.times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(Error::format_at(
                &self.source,
                "time",
                i + 1,
                format!(
                    "times must increase ({} then {})",
                    self.times[i],
                    self.times[i + 1]
                ),
            ));
        }
        Ok(())
    }

    /// Frames F.
    pub fn frame_count(&self) -> usize {
        self.times.len()
    }

    /// Channels C.
    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Time of the last frame, seconds.
    pub fn duration(&self) -> f64 {
        self.times.last().copied().unwrap_or(0.0)
    }

    /// Frame `f`'s weights `(C,)`.
    pub fn frame(&self, f: usize) -> &[f32] {
        let c = self.channels.len();
        &self.values[f * c..(f + 1) * c]
    }

    /// Sample the auxiliary channels (head and eye angles) at media time `t` seconds into `out`
    /// `(A,)`, as [`WeightStream::sample`] samples the weights: linear between the two
    /// neighbouring frames, clamped outside them (a NaN `t` gives the first frame). Nothing is
    /// written when the stream has no auxiliary channels. Allocation-free.
    ///
    /// # Panics
    /// When `out.len() != A`.
    pub fn sample_aux(&self, t: f64, out: &mut [f32]) {
        let a = self.aux_channels.len();
        assert_eq!(out.len(), a, "stream aux sample width");
        if a == 0 || self.times.is_empty() || self.aux_values.len() != a * self.times.len() {
            return;
        }
        let row = |f: usize| &self.aux_values[f * a..(f + 1) * a];
        let last = self.times.len() - 1;
        if t.is_nan() || t <= self.times[0] {
            out.copy_from_slice(row(0));
            return;
        }
        if t >= self.times[last] {
            out.copy_from_slice(row(last));
            return;
        }
        let k1 = self.times.partition_point(|&x| x <= t);
        let k = k1 - 1;
        let s = (t - self.times[k]) / (self.times[k1] - self.times[k]);
        let (x, y) = (row(k), row(k1));
        for i in 0..a {
            out[i] = (f64::from(x[i]) + s * (f64::from(y[i]) - f64::from(x[i]))) as f32;
        }
    }

    /// Sample every channel at media time `t` seconds into `out` `(C,)`: linear between the two
    /// neighbouring frames, clamped to the first / last frame outside them (a NaN `t` gives the
    /// first frame). Allocation-free.
    ///
    /// # Panics
    /// When `out.len() != C` or the stream has no frames.
    pub fn sample(&self, t: f64, out: &mut [f32]) {
        let c = self.channels.len();
        assert_eq!(out.len(), c, "stream sample width");
        let last = self.times.len() - 1;
        if t.is_nan() || t <= self.times[0] {
            out.copy_from_slice(self.frame(0));
            return;
        }
        if t >= self.times[last] {
            out.copy_from_slice(self.frame(last));
            return;
        }
        let k1 = self.times.partition_point(|&x| x <= t);
        let k = k1 - 1;
        let s = (t - self.times[k]) / (self.times[k1] - self.times[k]);
        let (a, b) = (self.frame(k), self.frame(k1));
        for i in 0..c {
            out[i] = (f64::from(a[i]) + s * (f64::from(b[i]) - f64::from(a[i]))) as f32;
        }
    }
}
