//! Keyframe clips: node translation / rotation / scale channels and morph-weight channels, sampled
//! with STEP, LINEAR or CUBICSPLINE interpolation.
//!
//! Source: glTF 2.0 §3.11 "Animations" and Appendix C "Animation Sampler Interpolation Modes":
//! cubic Hermite with tangents scaled by the key interval `t_{k+1} - t_k`; a CUBICSPLINE output holds,
//! per key, the in-tangents, the values, then the out-tangents (for weights: all N in-tangents,
//! then N values, then N out-tangents); rotations interpolate by slerp (LINEAR) and are normalised
//! after a cubic spline. Outside the keys the first / last value holds (clamped, STYLE 13).

use glam::Quat;

use crate::error::{Error, Result};
use crate::rig::ids::NodeId;

/// How values between two keys are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Interpolation {
    /// Hold the earlier key's value.
    Step,
    /// Linear (slerp for rotations).
    Linear,
    /// Cubic Hermite spline with in/out tangents.
    CubicSpline,
}

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Property {
    /// Node translation, 3 floats, metres.
    Translation,
    /// Node rotation, 4 floats (x, y, z, w) unit quaternion.
    Rotation,
    /// Node scale, 3 floats.
    Scale,
    /// The node's morph weights, `target_count` floats.
    Weights,
}

/// Keyframes of one animated property.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampler {
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<f32>,
    width: usize,
}

impl Sampler {
    /// A sampler over `times` (K,) seconds with `values` of `width` floats per key (`3·width` per key
    /// for CUBICSPLINE: in-tangent, value, out-tangent).
    ///
    /// # Errors
    /// [`Error::Format`] (with `what` as the field) when there are no keys, a time is not finite or
    /// times do not strictly increase (index of the first offender), the value count is not
    /// `K·width` (`3·K·width` for cubic), a value is not finite, `width` is 0, or a CUBICSPLINE
    /// sampler has fewer than 2 keys.
    pub fn new(
        file: &str,
        what: &str,
        interpolation: Interpolation,
        times: Vec<f32>,
        values: Vec<f32>,
        width: usize,
    ) -> Result<Self> {
        if times.is_empty() {
            return Err(Error::format(file, format!("{what}.input"), "no keyframes"));
        }
        if width == 0 {
            return Err(Error::format(
                file,
                format!("{what}.output"),
                "zero values per key",
            ));
        }
        if let Some(i) = times.iter().position(|t| !t.is_finite()) {
            return Err(Error::format_at(
                file,
                format!("{what}.input"),
                i,
                "time is not finite",
            ));
        }
        if let Some(i) = times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(Error::format_at(
                file,
                format!("{what}.input"),
                i + 1,
                format!(
                    "times must strictly increase ({} then {})",
                    times[i],
                    times[i + 1]
                ),
            ));
        }
        let per_key = if interpolation == Interpolation::CubicSpline {
            3 * width
        } else {
            width
        };
        if interpolation == Interpolation::CubicSpline && times.len() < 2 {
            return Err(Error::format(
                file,
                format!("{what}.output"),
                "CUBICSPLINE needs at least 2 keyframes",
            ));
        }
        if values.len() != times.len() * per_key {
            return Err(Error::format(
                file,
                format!("{what}.output"),
                format!(
                    "{} values for {} keys of {} floats (expected {})",
                    values.len(),
                    times.len(),
                    per_key,
                    times.len() * per_key
                ),
            ));
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::format_at(
                file,
                format!("{what}.output"),
                i,
                "value is not finite",
            ));
        }
        Ok(Sampler {
            interpolation,
            times,
            values,
            width,
        })
    }

    /// Interpolation mode.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Key times `(K,)`, seconds, strictly increasing.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Floats per value.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The value of key `k` (`(width,)`), without tangents.
    pub fn key_value(&self, k: usize) -> &[f32] {
        let w = self.width;
        match self.interpolation {
            Interpolation::CubicSpline => &self.values[(3 * k + 1) * w..(3 * k + 2) * w],
            _ => &self.values[k * w..(k + 1) * w],
        }
    }

    fn in_tangent(&self, k: usize) -> &[f32] {
        &self.values[3 * k * self.width..(3 * k + 1) * self.width]
    }

    fn out_tangent(&self, k: usize) -> &[f32] {
        &self.values[(3 * k + 2) * self.width..(3 * k + 3) * self.width]
    }

    /// The segment holding `t`: `(k, s)` with `s ∈ [0,1)` between keys `k` and `k+1`, or
    /// `(k, 0)` when clamped to a single key.
    fn locate(&self, t: f64) -> (usize, f64) {
        let last = self.times.len() - 1;
        if t.is_nan() || t <= f64::from(self.times[0]) {
            return (0, 0.0);
        }
        if t >= f64::from(self.times[last]) {
            return (last, 0.0);
        }
        // First key strictly after t; t > times[0] so k ≥ 1.
        let k1 = self.times.partition_point(|&x| f64::from(x) <= t);
        let k = k1 - 1;
        let (t0, t1) = (f64::from(self.times[k]), f64::from(self.times[k1]));
        (k, (t - t0) / (t1 - t0))
    }

    /// Sample at media time `t` seconds into `out` (`(width,)`), component-wise. Before the first
    /// key and after the last the end values hold; a NaN `t` counts as before the first key.
    ///
    /// # Panics
    /// When `out.len() != width`.
    pub fn sample(&self, t: f64, out: &mut [f32]) {
        assert_eq!(out.len(), self.width, "sampler output width");
        let (k, s) = self.locate(t);
        if s == 0.0 || self.interpolation == Interpolation::Step {
            out.copy_from_slice(self.key_value(k));
            return;
        }
        let (v0, v1) = (self.key_value(k), self.key_value(k + 1));
        match self.interpolation {
            Interpolation::Step => unreachable!(),
            Interpolation::Linear => {
                for i in 0..self.width {
                    out[i] = (f64::from(v0[i]) + s * (f64::from(v1[i]) - f64::from(v0[i]))) as f32;
                }
            }
            Interpolation::CubicSpline => {
                let td = f64::from(self.times[k + 1]) - f64::from(self.times[k]);
                let (b0, a1) = (self.out_tangent(k), self.in_tangent(k + 1));
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = s3 - 2.0 * s2 + s;
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = s3 - s2;
                for i in 0..self.width {
                    out[i] = (h00 * f64::from(v0[i])
                        + h10 * td * f64::from(b0[i])
                        + h01 * f64::from(v1[i])
                        + h11 * td * f64::from(a1[i])) as f32;
                }
            }
        }
    }

    /// Sample a rotation channel (`width == 4`) at `t`: slerp for LINEAR, normalised Hermite for
    /// CUBICSPLINE, the key for STEP. Keys are normalised before use (a file's near-unit quaternion
    /// does not scale the node).
    pub fn sample_rotation(&self, t: f64) -> Quat {
        debug_assert_eq!(self.width, 4);
        let q = |v: &[f32]| Quat::from_xyzw(v[0], v[1], v[2], v[3]).normalize();
        let (k, s) = self.locate(t);
        if s == 0.0 || self.interpolation == Interpolation::Step {
            return q(self.key_value(k));
        }
        match self.interpolation {
            Interpolation::Linear => q(self.key_value(k)).slerp(q(self.key_value(k + 1)), s as f32),
            _ => {
                let mut out = [0.0f32; 4];
                self.sample(t, &mut out);
                let r = Quat::from_array(out);
                if r.length_squared() > 0.0 && r.is_finite() {
                    r.normalize()
                } else {
                    q(self.key_value(k))
                }
            }
        }
    }
}

/// One animated property of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// The animated node.
    pub node: NodeId,
    /// Which property.
    pub property: Property,
    /// Its keyframes.
    pub sampler: Sampler,
}

/// A clip: channels played together. Real files often leave clips unnamed, so clips are also
/// addressed by index.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Clip {
    /// The file's name, if any.
    pub name: Option<String>,
    /// The channels.
    pub channels: Vec<Channel>,
}

impl Clip {
    /// First key time over all channels, seconds (0 for an empty clip).
    pub fn start(&self) -> f64 {
        self.channels
            .iter()
            .map(|c| f64::from(c.sampler.times()[0]))
            .reduce(f64::min)
            .unwrap_or(0.0)
    }

    /// Last key time over all channels, seconds (0 for an empty clip).
    pub fn end(&self) -> f64 {
        self.channels
            .iter()
            .filter_map(|c| c.sampler.times().last().map(|&t| f64::from(t)))
            .reduce(f64::max)
            .unwrap_or(0.0)
    }

    /// Whether any channel animates morph weights.
    pub fn has_weights(&self) -> bool {
        self.channels
            .iter()
            .any(|c| c.property == Property::Weights)
    }
}
