//! How the runtime words numbers in its messages: short, and never more digits than the value's
//! own type holds. The CLI prints with the same functions.

/// A number as a person reads it: plain decimal for everyday magnitudes (`30`, `0.25`, `29.97`),
/// scientific notation outside `[1e-4, 1e7)` (`1e308`, `2.5e-12`), `NaN` / `inf` / `-inf` as such.
/// Never more digits than the shortest round-trip representation of `x`'s own type (an `f32`
/// `1e38` prints as `1e38`, not as the `f64` it widens to).
pub fn num<T>(x: T) -> String
where
    T: Copy + Into<f64> + std::fmt::Display + std::fmt::LowerExp,
{
    let v: f64 = x.into();
    if v.is_nan() {
        return "NaN".into();
    }
    if v == 0.0 {
        // `-0` reads as a mistake.
        return "0".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if (1e-4..1e7).contains(&v.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A length: millimetres with two decimals from 0.1 mm to 10 cm (`2.12 mm`), else metres to five
/// significant digits ([`sig5`]: `1.2 m`, not the `1.1999999 m` an f32 product prints).
pub fn metres(m: f32) -> String {
    let a = m.abs();
    if (1e-4..0.1).contains(&a) {
        format!("{:.2} mm", f64::from(m) * 1e3)
    } else if (1e-4..1e7).contains(&a) {
        format!("{} m", sig5(f64::from(m)))
    } else {
        format!("{} m", num(m))
    }
}

/// `x` to five significant digits, trailing zeros dropped (`120.00002` → `120`, `0.61234567` →
/// `0.61235`), for everyday magnitudes `[1e-4, 1e7)`; [`num`] outside.
pub fn sig5(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() || x == 0.0 || !(1e-4..1e7).contains(&a) {
        return num(x);
    }
    let decimals = (4 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// Seconds with millisecond resolution for everyday times (`1.234`), [`num`] beyond 10⁷ s.
pub fn secs(x: f64) -> String {
    if x.is_finite() && x.abs() < 1e7 {
        // `-0.000` (from a start of -0, or a tiny negative) reads as a mistake.
        let x = if x.abs() < 5e-4 { 0.0 } else { x };
        format!("{x:.3}")
    } else {
        num(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_stay_short() {
        assert_eq!(num(30.0), "30");
        assert_eq!(num(1e38f32), "1e38");
        assert_eq!(num(0.006f32), "0.006");
        assert_eq!(num(-2.5e-12), "-2.5e-12");
        assert_eq!(num(f64::NAN), "NaN");
        assert_eq!(num(-0.0), "0");
        assert_eq!(secs(1.5), "1.500");
        assert_eq!(secs(-0.0), "0.000");
        assert_eq!(secs(1e20), "1e20");
        assert_eq!(metres(0.0021234), "2.12 mm");
        assert_eq!(metres(1.1999999), "1.2 m");
        assert_eq!(metres(1e30), "1e30 m");
        assert_eq!(metres(120.00002), "120 m");
        assert_eq!(metres(0.61234567), "0.61235 m");
        assert_eq!(num(1e308), "1e308");
        assert_eq!(num(f64::NEG_INFINITY), "-inf");
        assert_eq!(sig5(12345.678), "12346");
    }
}
