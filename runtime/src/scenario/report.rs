//! The scenario's two runs and what comes of them: `report.json` (the [`Report`]) and the printed
//! summary. A failure is an assertion that did not hold (its step, the expected range and the
//! actual value) or a hash the repeat run did not reproduce (its step and both values).

use std::time::{Duration, Instant};

use crate::error::Result;
use image::RgbImage;

use super::check::Plan;
use super::exec::{Outcome, RunResult, execute};
use crate::text::secs;

/// A hash recorded by both runs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HashEntry {
    /// The step's pointer (`""` for the final frame).
    pub step: String,
    /// Its name (`final` for the last frame).
    pub name: String,
    /// Media time of the frame, seconds.
    pub t: f64,
    /// The first run's value, 16 hex digits.
    pub hash: String,
    /// The repeat run's value.
    pub repeat: String,
    /// Whether they are equal.
    pub matched: bool,
}

/// One failure.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Failure {
    /// The step's pointer.
    pub step: String,
    /// What failed, with the expected and actual values.
    pub message: String,
}

/// A written capture.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaptureEntry {
    /// The step's pointer.
    pub step: String,
    /// File name in the output folder.
    pub file: String,
    /// Media time, seconds.
    pub t: f64,
    /// Pixels.
    pub width: u32,
    /// Pixels.
    pub height: u32,
}

/// Wall times, milliseconds.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Timings {
    /// Reading, checking and resolving the scenario.
    pub validate: f64,
    /// The first run (captures included).
    pub run: f64,
    /// The repeat run.
    pub repeat: f64,
}

/// `report.json` of `mien scenario run`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// `mien <version>`.
    pub tool: String,
    /// The command line.
    pub command: Vec<String>,
    /// The scenario file as given.
    pub scenario: String,
    /// The character (`built-in head` or its path as the scenario writes it).
    pub character: String,
    /// Every assertion held and every hash repeated.
    pub passed: bool,
    /// Steps in the scenario.
    pub steps: usize,
    /// Frames posed per run (the first at t = 0 included).
    pub frames: u64,
    /// Media time at the end, seconds.
    pub end_s: f64,
    /// Every failure, in step order (assertions, then repeat mismatches).
    pub failures: Vec<Failure>,
    /// Every assertion of the first run.
    pub assertions: Vec<Outcome>,
    /// Every `hash` step and the final frame, first run and repeat.
    pub hashes: Vec<HashEntry>,
    /// Whether the repeat run reproduced every hash.
    pub repeat_matched: bool,
    /// Avatar state at the start and at every change (first run).
    pub states: Vec<serde_json::Value>,
    /// Captures written.
    pub captures: Vec<CaptureEntry>,
    /// Remarks (no animator, captures not rendered).
    pub notes: Vec<String>,
    /// Wall times.
    pub timings_ms: Timings,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run `plan` (rendering its captures), then again from scratch, and compare. Returns the report
/// and the captured images by file name.
///
/// # Errors
/// A failure of the animator, the speech binding or the renderer while running;
/// [`crate::Error::Stopped`] when `stop` says so (asked before every step and frame).
pub fn run_twice(
    plan: &mut Plan,
    command: Vec<String>,
    validated: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<(Report, Vec<(String, RgbImage)>)> {
    let t = Instant::now();
    let first = execute(plan, true, stop)?;
    let run_t = t.elapsed();
    let t = Instant::now();
    let second = execute(plan, false, stop)?;
    let repeat_t = t.elapsed();

    let mut failures: Vec<Failure> = first
        .outcomes
        .iter()
        .filter(|o| !o.passed)
        .map(|o| Failure {
            step: o.step.clone(),
            message: format!(
                "{}: expected {}, got {} (t = {} s)",
                // The kind once: `golden `name``, not `golden golden `name``.
                if o.what.starts_with(&o.kind) {
                    o.what.clone()
                } else {
                    format!("{} {}", o.kind, o.what)
                },
                o.expected,
                o.actual,
                secs(o.t)
            ),
        })
        .collect();
    let (hashes, mismatches) = compare(&first, &second);
    let repeat_matched = mismatches.is_empty();
    failures.extend(mismatches);
    let captures = first
        .captures
        .iter()
        .map(|c| CaptureEntry {
            step: c.pointer.clone(),
            file: format!("{}.png", c.name),
            t: c.t,
            width: c.image.width(),
            height: c.image.height(),
        })
        .collect();
    let images = first
        .captures
        .into_iter()
        .map(|c| (format!("{}.png", c.name), c.image))
        .collect();
    let report = Report {
        tool: format!("mien {}", env!("CARGO_PKG_VERSION")),
        command,
        scenario: plan.file.display().to_string(),
        character: plan.character_label.clone(),
        passed: failures.is_empty(),
        steps: plan.steps.len(),
        frames: first.frames,
        end_s: first.end_s,
        failures,
        assertions: first.outcomes,
        hashes,
        repeat_matched,
        states: first
            .states
            .iter()
            .map(|(t, s)| serde_json::json!({"t": t, "state": s}))
            .collect(),
        captures,
        notes: plan.notes.clone(),
        timings_ms: Timings {
            validate: ms(validated),
            run: ms(run_t),
            repeat: ms(repeat_t),
        },
    };
    Ok((report, images))
}

/// Compare the hashes of two runs of one plan: an entry per `hash` step and one for the final
/// frame (`name: "final"`, `step: ""`), and a failure naming the step for each value the repeat
/// did not reproduce (or a step it did not reach).
pub fn compare(first: &RunResult, second: &RunResult) -> (Vec<HashEntry>, Vec<Failure>) {
    let hex = |h: Option<u64>| h.map_or_else(|| "none".to_string(), |h| format!("{h:016x}"));
    let mut hashes: Vec<HashEntry> = first
        .hashes
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let b = second
                .hashes
                .get(k)
                .filter(|b| b.pointer == a.pointer)
                .map(|b| b.hash);
            HashEntry {
                step: a.pointer.clone(),
                name: a.name.clone(),
                t: a.t,
                hash: hex(Some(a.hash)),
                repeat: hex(b),
                matched: b == Some(a.hash),
            }
        })
        .collect();
    hashes.push(HashEntry {
        step: String::new(),
        name: "final".into(),
        t: first.end_s,
        hash: hex(Some(first.final_hash)),
        repeat: hex(Some(second.final_hash)),
        matched: first.final_hash == second.final_hash,
    });
    let failures = hashes
        .iter()
        .filter(|h| !h.matched)
        .map(|h| Failure {
            step: h.step.clone(),
            message: format!(
                "hash `{}` did not repeat: first run {}, repeat {}",
                h.name, h.hash, h.repeat
            ),
        })
        .collect();
    (hashes, failures)
}
