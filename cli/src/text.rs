//! How mien words things for people: numbers of any size, counts with the right plural, and an
//! error with its chain of causes.

use std::fmt::Write as _;

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
    let a = v.abs();
    if a == 0.0 || (1e-4..1e7).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A large count to two significant digits (`7.8e11`), plain below 10⁷.
pub fn approx(n: u64) -> String {
    if n < 10_000_000 {
        n.to_string()
    } else {
        format!("{:.1e}", n as f64)
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
        // `-0.000` (from `--start -0`, or a tiny negative) reads as a mistake.
        let x = if x.abs() < 5e-4 { 0.0 } else { x };
        format!("{x:.3}")
    } else {
        num(x)
    }
}

/// `1 frame`, `2 frames`, `0 frames` (`word` is the singular; the plural adds `s`).
pub fn count(n: impl Into<u64>, word: &str) -> String {
    plural(n, word, &format!("{word}s"))
}

/// `1 vertex`, `2 vertices`: `n` with `one` or `many`.
pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A whole number of any size: digits up to 10¹⁵, [`num`] beyond.
pub fn whole(x: f64) -> String {
    if x.is_finite() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        num(x)
    }
}

/// `error: …` followed by one `  caused by: …` line per cause, skipping a cause whose text is
/// already contained in an earlier line (wrappers that repeat their source's message, such as an
/// I/O error quoted inside the typed error that carries it).
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    for (i, cause) in e.chain().enumerate() {
        let text = cause.to_string();
        if seen.iter().any(|s| s.contains(&text)) {
            continue;
        }
        if i == 0 {
            let _ = writeln!(out, "error: {text}");
        } else {
            let _ = writeln!(out, "  caused by: {text}");
        }
        seen.push(text);
    }
    out
}

/// An error and its causes on one line, `: `-separated, skipping a cause whose text an earlier
/// one already contains (as [`error_chain`] does).
pub fn causes(e: &anyhow::Error) -> String {
    let mut seen: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !seen.iter().any(|s| s.contains(&text)) {
            seen.push(text);
        }
    }
    seen.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_stay_short() {
        assert_eq!(num(30.0), "30");
        assert_eq!(num(1e38f32), "1e38");
        assert_eq!(num(0.006f32), "0.006");
        assert_eq!(approx(779_760_307_200), "7.8e11");
        assert_eq!(approx(1234), "1234");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(1e308), "1e308");
        assert_eq!(num(-2.5e-12), "-2.5e-12");
        assert_eq!(num(f64::NAN), "NaN");
        assert_eq!(num(f64::NEG_INFINITY), "-inf");
        assert_eq!(secs(1.5), "1.500");
        assert_eq!(metres(0.0021234), "2.12 mm");
        assert_eq!(metres(1.5), "1.5 m");
        assert_eq!(secs(1e20), "1e20");
        assert_eq!(whole(120001.0), "120001");
        assert_eq!(whole(3e30), "3e30");
        assert_eq!(metres(1.1999999), "1.2 m");
        assert_eq!(metres(120.00002), "120 m");
        assert_eq!(metres(0.61234567), "0.61235 m");
        assert_eq!(metres(1e30), "1e30 m");
        assert_eq!(sig5(12345.678), "12346");
        assert_eq!(secs(-0.0), "0.000");
        assert_eq!(num(-0.0), "0");
    }

    #[test]
    fn plurals() {
        assert_eq!(count(1u32, "frame"), "1 frame");
        assert_eq!(count(0u32, "frame"), "0 frames");
        assert_eq!(count(12u64, "file"), "12 files");
        assert_eq!(plural(1u32, "vertex", "vertices"), "1 vertex");
        assert_eq!(plural(3u32, "vertex", "vertices"), "3 vertices");
    }

    #[test]
    fn repeated_causes_are_skipped() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let e = anyhow::Error::new(io)
            .context("/x/head.glb: No such file (os error 2)")
            .context("cannot load character /x/head.glb");
        let text = error_chain(&e);
        assert_eq!(
            text,
            "error: cannot load character /x/head.glb\n  caused by: /x/head.glb: No such file (os error 2)\n"
        );
        assert_eq!(
            causes(&e),
            "cannot load character /x/head.glb: /x/head.glb: No such file (os error 2)"
        );
    }
}
