//! The built-in performance: six seconds of ARKit-52 weights for the sample head — two spoken
//! phrases (syllable pulses of the jaw at about 4 Hz shaped into visemes), a smile that rises and
//! holds, a brow raise on an emphasis, four blinks, and a glance to the character's left, then
//! right, then back to centre.
//!
//! Every channel is a sum of smooth envelopes (raised cosines, cosine ramps, and C¹ linear ramps
//! for the blinks), sampled at `k / fps` and clamped to `[0, 1]`. The only randomness is a seeded
//! SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
//! 2014; Vigna's `splitmix64.c`) that jitters blink times and syllable strengths, so every call
//! returns the same stream (STYLE 9).

use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT, arkit_index};
use crate::anim::stream::WeightStream;

/// Length of the built-in performance, seconds.
pub const SAMPLE_PERFORMANCE_SECONDS: f64 = 6.0;

/// The label [`sample_performance`] gives its stream's `source`.
pub const SAMPLE_PERFORMANCE_SOURCE: &str = "<built-in sample performance>";

const SEED: u64 = 0x6d69_656e_2d73_616d;

struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`.
    fn signed(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Raised cosine of peak 1 at `c`, zero outside `[c − w/2, c + w/2]`.
fn bump(t: f64, c: f64, w: f64) -> f64 {
    let u = (t - c) / (0.5 * w);
    if u.abs() >= 1.0 {
        0.0
    } else {
        0.5 * (1.0 + (std::f64::consts::PI * u).cos())
    }
}

/// 0 before `t0`, half-cosine up to 1 at `t0 + d`, 1 after.
fn rise(t: f64, t0: f64, d: f64) -> f64 {
    let u = ((t - t0) / d).clamp(0.0, 1.0);
    0.5 * (1.0 - (std::f64::consts::PI * u).cos())
}

/// 1 on `[a, b]`, rising over `rin` seconds before `a` and falling over `rout` after `b`.
fn plateau(t: f64, a: f64, b: f64, rin: f64, rout: f64) -> f64 {
    rise(t, a - rin, rin) - rise(t, b, rout)
}

/// A C¹ ramp from 0 at `t0` to 1 at `t0 + d`: linear of slope `1/(d − r)` with parabolic blends
/// of length `r` at both ends (its steepest slope is that of the line).
fn linear_ramp(t: f64, t0: f64, d: f64, r: f64) -> f64 {
    let s = 1.0 / (d - r);
    let u = t - t0;
    if u <= 0.0 {
        0.0
    } else if u < r {
        s * u * u / (2.0 * r)
    } else if u < d - r {
        s * (u - r / 2.0)
    } else if u < d {
        1.0 - s * (d - u) * (d - u) / (2.0 * r)
    } else {
        1.0
    }
}

/// A blink starting at `t0`: closes in 110 ms, stays shut 20 ms, opens in 130 ms.
fn blink(t: f64, t0: f64) -> f64 {
    linear_ramp(t, t0, 0.11, 0.012) - linear_ramp(t, t0 + 0.13, 0.13, 0.02)
}

/// Mouth shapes (visemes) as ARKit weights.
#[derive(Clone, Copy, Debug)]
enum Viseme {
    /// Open vowel "ah".
    Aa,
    /// Spread vowel "ee".
    Ee,
    /// Rounded "oh".
    Oh,
    /// Tight rounded "oo".
    Oo,
    /// Closed lips "m", "b", "p".
    Mbp,
    /// Lip to teeth "f", "v".
    Fv,
}

impl Viseme {
    fn weights(self) -> &'static [(&'static str, f64)] {
        match self {
            Viseme::Aa => &[
                ("jawOpen", 0.6),
                ("mouthLowerDownLeft", 0.25),
                ("mouthLowerDownRight", 0.25),
                ("mouthUpperUpLeft", 0.1),
                ("mouthUpperUpRight", 0.1),
            ],
            Viseme::Ee => &[
                ("jawOpen", 0.2),
                ("mouthStretchLeft", 0.35),
                ("mouthStretchRight", 0.35),
                ("mouthSmileLeft", 0.2),
                ("mouthSmileRight", 0.2),
                ("mouthUpperUpLeft", 0.1),
                ("mouthUpperUpRight", 0.1),
            ],
            Viseme::Oh => &[
                ("jawOpen", 0.35),
                ("mouthFunnel", 0.6),
                ("mouthPucker", 0.15),
            ],
            Viseme::Oo => &[
                ("jawOpen", 0.12),
                ("mouthPucker", 0.8),
                ("mouthFunnel", 0.25),
            ],
            Viseme::Mbp => &[
                ("jawOpen", 0.03),
                ("mouthPressLeft", 0.55),
                ("mouthPressRight", 0.55),
                ("mouthRollLower", 0.2),
                ("mouthRollUpper", 0.15),
                ("mouthShrugLower", 0.1),
            ],
            Viseme::Fv => &[
                ("jawOpen", 0.1),
                ("mouthRollLower", 0.55),
                ("mouthUpperUpLeft", 0.2),
                ("mouthUpperUpRight", 0.2),
                ("mouthShrugUpper", 0.1),
            ],
        }
    }
}

/// The script: syllables `(time, viseme, strength)` of two phrases.
const SYLLABLES: [(f64, Viseme, f64); 15] = [
    (0.50, Viseme::Ee, 0.7),
    (0.73, Viseme::Oh, 0.8),
    (0.98, Viseme::Mbp, 0.9),
    (1.22, Viseme::Aa, 0.95),
    (1.46, Viseme::Oo, 0.8),
    (1.70, Viseme::Aa, 0.7),
    (1.94, Viseme::Fv, 0.85),
    (2.16, Viseme::Ee, 0.6),
    (3.30, Viseme::Aa, 0.85),
    (3.55, Viseme::Mbp, 0.9),
    (3.82, Viseme::Oh, 1.0),
    (4.10, Viseme::Ee, 0.7),
    (4.36, Viseme::Aa, 0.8),
    (4.62, Viseme::Oo, 0.75),
    (4.88, Viseme::Aa, 0.55),
];
const SYLLABLE_WIDTH: f64 = 0.3;
const BLINKS: [f64; 4] = [0.85, 2.45, 4.5, 5.5];

/// Accumulates channel values at one instant.
struct Frame([f64; ARKIT_COUNT]);

impl Frame {
    fn add(&mut self, name: &str, w: f64) {
        if let Some(i) = arkit_index(name) {
            self.0[i] += w;
        }
    }

    fn add_pair(&mut self, stem: &str, w: f64) {
        self.add(&format!("{stem}Left"), w);
        self.add(&format!("{stem}Right"), w);
    }
}

/// The built-in performance sampled at `fps` frames per second: [`ARKIT_52`] channels in
/// canonical order, frame times `k / fps` from 0 to [`SAMPLE_PERFORMANCE_SECONDS`], weights in
/// `[0, 1]`, `nominal_fps = Some(fps)`. A non-finite or non-positive `fps` gives 30; others are
/// clamped to `[1, 1000]` so the stream stays bounded (at most 6001 frames × 52 channels).
/// Deterministic: equal `fps` gives an equal stream.
pub fn sample_performance(fps: f64) -> WeightStream {
    let fps = if fps.is_finite() && fps > 0.0 {
        fps.clamp(1.0, 1000.0)
    } else {
        30.0
    };
    let mut rng = SplitMix64(SEED);
    let blinks: Vec<f64> = BLINKS.iter().map(|&t| t + 0.06 * rng.signed()).collect();
    let syllables: Vec<(f64, Viseme, f64)> = SYLLABLES
        .iter()
        .map(|&(t, v, a)| (t + 0.02 * rng.signed(), v, a * (1.0 + 0.1 * rng.signed())))
        .collect();
    let frames = (SAMPLE_PERFORMANCE_SECONDS * fps + 1e-9).floor() as usize + 1;
    let mut values = Vec::with_capacity(frames * ARKIT_COUNT);
    let mut times = Vec::with_capacity(frames);
    for k in 0..frames {
        let t = k as f64 / fps;
        let mut f = Frame([0.0; ARKIT_COUNT]);
        for &(c, vis, a) in &syllables {
            let b = a * bump(t, c, SYLLABLE_WIDTH);
            if b > 0.0 {
                for &(name, w) in vis.weights() {
                    f.add(name, b * w);
                }
            }
        }
        let shut: f64 = blinks.iter().map(|&t0| blink(t, t0)).sum();
        f.add_pair("eyeBlink", shut);
        // Gaze: to the character's left (left eye out, right eye in), then right, then centre.
        let look_left = 0.65 * plateau(t, 1.3, 1.95, 0.22, 0.2);
        let look_right = 0.65 * plateau(t, 2.37, 3.0, 0.22, 0.28);
        f.add("eyeLookOutLeft", look_left);
        f.add("eyeLookInRight", look_left);
        f.add("eyeLookInLeft", look_right);
        f.add("eyeLookOutRight", look_right);
        // A smile that rises in the pause and holds for a second.
        let smile = plateau(t, 3.0, 4.0, 0.45, 0.6);
        f.add_pair("mouthSmile", 0.65 * smile);
        f.add_pair("cheekSquint", 0.4 * smile);
        f.add_pair("eyeSquint", 0.2 * smile);
        f.add_pair("mouthDimple", 0.1 * smile);
        // Brows: a little concentration in the first phrase, a raise on the emphasis.
        f.add_pair("browDown", 0.18 * plateau(t, 0.75, 1.9, 0.3, 0.4));
        let raise = plateau(t, 3.8, 4.05, 0.18, 0.35);
        f.add("browInnerUp", 0.8 * raise);
        f.add_pair("browOuterUp", 0.65 * raise);
        f.add_pair("eyeWide", 0.25 * raise);
        f.add_pair("eyeLookUp", 0.15 * raise);
        times.push(t);
        values.extend(f.0.iter().map(|&w| w.clamp(0.0, 1.0) as f32));
    }
    WeightStream {
        source: SAMPLE_PERFORMANCE_SOURCE.into(),
        channels: ARKIT_52.iter().map(|s| s.to_string()).collect(),
        times,
        values,
        aux_channels: Vec::new(),
        aux_values: Vec::new(),
        nominal_fps: Some(fps),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ramp_is_continuous_and_bounded_in_slope() {
        let (d, r) = (0.11, 0.012);
        let mut prev = 0.0;
        for k in 0..=2000 {
            let t = -0.05 + k as f64 * 1e-4;
            let y = linear_ramp(t, 0.0, d, r);
            assert!((0.0..=1.0).contains(&y));
            assert!(y - prev <= 1e-4 / (d - r) + 1e-12, "slope at {t}");
            assert!(y >= prev);
            prev = y;
        }
        assert_eq!(linear_ramp(d, 0.0, d, r), 1.0);
    }

    #[test]
    fn splitmix_matches_reference() {
        // splitmix64.c with seed 0: first output 0xe220a8397b1dcdaf.
        let mut r = SplitMix64(0);
        assert_eq!(r.next(), 0xe220_a839_7b1d_cdaf);
    }
}
