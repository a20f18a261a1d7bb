//! The fp16 expression basis of a bake: one shape's deltas at a time, each scaled by its own largest
//! component so the basis uses the range [-1, 1], rounded to the nearest fp16 (ties to even) and
//! packed vertex-major `(V,E,3)` two halves per `u32`, low half first.
//!
//! **Error rule.** With `s` the shape's scale (the largest |component| of its deltas, rounded to
//! f32) and `b = δ/s` computed in f64, the stored half `h` is the fp16 nearest to `b`, so
//! `|h·s − δ| ≤ |δ|·2⁻¹¹ + s·2⁻²⁵` for every component: half a unit in the last place of a normal
//! fp16 is at most 2⁻¹¹ of the value (10 stored mantissa bits), and the subnormal step is 2⁻²⁴
//! ([`component_bound`]). The error is relative to each shape's own largest delta, never to the
//! largest delta of the head. Source: IEEE 754-2008 binary16; seed 000 (`basis` as packed fp16
//! pairs with a per-coefficient f32 scale).

use crate::error::{Error, Result};
use crate::gnm::pack::{MAX_BASIS_BYTES, MAX_COEFFS, MAX_VERTICES};

/// 2⁻¹¹: half an fp16 ulp relative to the value (normal range).
pub const FP16_HALF_ULP: f64 = 1.0 / 2048.0;
/// 2⁻²⁵: half the fp16 subnormal step.
pub const FP16_SUBNORMAL_HALF_STEP: f64 = 1.0 / 33_554_432.0;

/// The documented bound on one reconstructed component: `|δ|·2⁻¹¹ + s·2⁻²⁵`, metres.
pub fn component_bound(delta: f64, scale: f64) -> f64 {
    delta.abs() * FP16_HALF_ULP + scale.abs() * FP16_SUBNORMAL_HALF_STEP
}

/// The fp16 nearest to `x` (ties to even), as bits; exact: the rounding is done in f64 on the
/// value divided by its fp16 ulp (a power of two), then the representable result is converted.
/// `|x|` must be below 65520 (the basis stays within about ±1).
pub fn f16_nearest(x: f64) -> u16 {
    let a = x.abs();
    if a == 0.0 || !a.is_finite() {
        return half::f16::from_f64(x).to_bits();
    }
    // Unbiased binary exponent of a normal f64 (the basis is never an f64 subnormal that matters:
    // those round to fp16 zero either way).
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let ulp = if e < -14 {
        2f64.powi(-24)
    } else {
        2f64.powi(e - 10)
    };
    let q = (a / ulp).round_ties_even() * ulp;
    half::f16::from_f64(q.copysign(x)).to_bits()
}

/// Per-shape figures of a quantised shape.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ShapeFigures {
    /// The scale `s`: the largest |component| of the deltas, metres (0 for an empty shape).
    pub scale: f32,
    /// The longest delta vector, metres.
    pub max_delta: f64,
    /// The largest |h·s − δ| over every component, metres.
    pub max_error: f64,
    /// The largest error divided by its component's bound (≤ 1 by construction).
    pub max_error_over_bound: f64,
}

/// The basis being filled.
#[derive(Clone, Debug)]
pub struct BasisBuilder {
    v: usize,
    e: usize,
    words: Vec<u32>,
    scales: Vec<f32>,
}

impl BasisBuilder {
    /// An all-zero basis for `v` vertices and `e` coefficients.
    ///
    /// # Errors
    /// [`Error::Limit`] when `v`, `e` or the basis bytes exceed the pack's caps (checked before
    /// allocating).
    pub fn new(v: usize, e: usize) -> Result<Self> {
        for (what, n, cap) in [
            ("vertices", v as u64, MAX_VERTICES),
            ("coefficients", e as u64, MAX_COEFFS),
        ] {
            if n > cap {
                return Err(Error::Limit {
                    what: format!("bake: {what}"),
                    limit: cap,
                    found: n,
                });
            }
        }
        let bytes = v as u64 * e as u64 * 6;
        if bytes > MAX_BASIS_BYTES {
            return Err(Error::Limit {
                what: "bake: basis bytes".into(),
                limit: MAX_BASIS_BYTES,
                found: bytes,
            });
        }
        Ok(BasisBuilder {
            v,
            e,
            words: vec![0; (v * e * 3).div_ceil(2)],
            scales: vec![0.0; e],
        })
    }

    /// Quantise coefficient `k` from its deltas `(V,3)` in metres (f64).
    ///
    /// # Errors
    /// [`Error::Mismatch`] for a wrong delta count or `k`; [`Error::Invalid`] for a non-finite
    /// delta.
    pub fn put(&mut self, k: usize, deltas: &[[f64; 3]]) -> Result<ShapeFigures> {
        if deltas.len() != self.v || k >= self.e {
            return Err(Error::Mismatch {
                what: format!("basis coefficient {k} deltas"),
                expected: self.v as u64,
                found: deltas.len() as u64,
            });
        }
        if let Some(i) = deltas.iter().position(|d| !d.iter().all(|x| x.is_finite())) {
            return Err(Error::Invalid {
                what: format!("basis coefficient {k} delta at vertex {i}"),
                reason: "not finite".into(),
            });
        }
        let amax = deltas.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        let scale = amax as f32;
        let s = f64::from(scale);
        let mut fig = ShapeFigures {
            scale,
            ..Default::default()
        };
        for (v, d) in deltas.iter().enumerate() {
            fig.max_delta = fig
                .max_delta
                .max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
            for (a, &x) in d.iter().enumerate() {
                let bits = if s > 0.0 { f16_nearest(x / s) } else { 0 };
                let back = f64::from(half::f16::from_bits(bits).to_f32()) * s;
                let err = (back - x).abs();
                fig.max_error = fig.max_error.max(err);
                let bound = component_bound(x, s);
                if bound > 0.0 {
                    fig.max_error_over_bound = fig.max_error_over_bound.max(err / bound);
                }
                let i = (v * self.e + k) * 3 + a;
                let w = &mut self.words[i / 2];
                *w = if i % 2 == 0 {
                    (*w & 0xffff_0000) | u32::from(bits)
                } else {
                    (*w & 0xffff) | (u32::from(bits) << 16)
                };
            }
        }
        self.scales[k] = scale;
        Ok(fig)
    }

    /// The packed basis `((V·E·3)/2 rounded up,)` and the scales `(E,)`.
    pub fn finish(self) -> (Vec<u32>, Vec<f32>) {
        (self.words, self.scales)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_half_is_exact() {
        // Every fp16 in [-1, 1] round-trips, and midpoints go to the even neighbour.
        for bits in 0u16..=0x3c00 {
            let x = f64::from(half::f16::from_bits(bits).to_f32());
            assert_eq!(f16_nearest(x), bits);
            assert_eq!(f16_nearest(-x), bits | 0x8000);
            let next = f64::from(half::f16::from_bits(bits + 1).to_f32());
            let mid = (x + next) / 2.0;
            assert_eq!(
                f16_nearest(mid),
                if bits % 2 == 0 { bits } else { bits + 1 },
                "{bits:#x}"
            );
            // Just above the midpoint rounds up.
            assert_eq!(f16_nearest(mid + (next - x) * 1e-6), bits + 1);
        }
    }

    #[test]
    fn shapes_meet_their_bound() {
        let mut b = BasisBuilder::new(3, 2).unwrap();
        let d = [
            [0.01, -0.002, 1e-9],
            [0.0, 0.0, 0.0],
            [-0.0123456, 0.0049, 3e-7],
        ];
        let f = b.put(1, &d).unwrap();
        assert_eq!(f.scale, 0.0123456f32);
        assert!(f.max_error_over_bound <= 1.0, "{f:?}");
        let empty = b.put(0, &[[0.0; 3]; 3]).unwrap();
        assert_eq!((empty.scale, empty.max_error), (0.0, 0.0));
        let (words, scales) = b.finish();
        assert_eq!(words.len(), 9);
        assert_eq!(scales, vec![0.0, 0.0123456]);
        assert!(BasisBuilder::new(1 << 23, 1).is_err());
    }
}
