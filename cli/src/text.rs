//! How mien words things for people: numbers of any size, counts with the right plural, and an
//! error with its chain of causes.

use std::fmt::Write as _;

pub use mien_runtime::text::{metres, num, secs};

/// A large count to two significant digits (`7.8e11`), plain below 10⁷.
pub fn approx(n: u64) -> String {
    if n < 10_000_000 {
        n.to_string()
    } else {
        format!("{:.1e}", n as f64)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_stay_short() {
        assert_eq!(approx(779_760_307_200), "7.8e11");
        assert_eq!(approx(1234), "1234");
        assert_eq!(whole(120001.0), "120001");
        assert_eq!(whole(3e30), "3e30");
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
    }
}
