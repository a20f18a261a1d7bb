//! The printed summary of a scenario run (the report itself is [`mien_runtime::scenario::Report`]).

use std::path::Path;

use mien_runtime::scenario::Report;

use crate::text::{count, plural, secs};

/// Print the summary: verdict, counts, every failure, where the report went.
pub fn print_summary(r: &Report, out: Option<&Path>, warnings: Option<&[String]>) {
    let passed = r.assertions.iter().filter(|o| o.passed).count();
    println!(
        "{}: {} — {}, {} s of media time, {} per run",
        r.scenario,
        if r.passed { "PASSED" } else { "FAILED" },
        count(r.steps as u64, "step"),
        secs(r.end_s),
        count(r.frames, "frame"),
    );
    println!("  assertions  {} of {} held", passed, r.assertions.len());
    for g in r.assertions.iter().filter(|o| o.kind == "golden") {
        let verdict = if g.actual == "rewritten" {
            "written (MIEN_UPDATE_GOLDENS)".to_string()
        } else if g.passed {
            format!(
                "matched (largest difference {})",
                g.actual["largest_difference"]
            )
        } else {
            format!("DIFFERS: {}", g.actual)
        };
        println!("    {:<20} {verdict}", g.what);
    }
    let recorded = r.hashes.len() - 1;
    println!(
        "  repeat      {} ({} and the final frame)",
        if r.repeat_matched {
            "every hash repeated exactly"
        } else {
            "hashes differ between the two runs"
        },
        plural(recorded as u64, "recorded hash", "recorded hashes")
    );
    for h in &r.hashes {
        println!("    {:<20} {}  t = {} s", h.name, h.hash, secs(h.t));
    }
    if !r.failures.is_empty() {
        println!("  failures");
        for f in &r.failures {
            let at = if f.step.is_empty() {
                "(final frame)"
            } else {
                &f.step
            };
            println!("    {at}: {}", f.message);
        }
    }
    for n in &r.notes {
        println!("  note        {n}");
    }
    if let Some(o) = out {
        println!(
            "  written     {}/report.json{}",
            o.display(),
            if r.captures.is_empty() {
                String::new()
            } else {
                format!(" and {}", count(r.captures.len() as u64, "capture"))
            }
        );
    }
    for w in warnings.unwrap_or_default() {
        println!("  warning     {w}");
    }
}
