//! `mien scenario run FILE.json`: a strict, headless, deterministic scenario (seed 003
//! "character.scenario.run"). The file is checked against `docs/schemas/scenario.schema.json`
//! and parsed into a typed model, then every name and file it refers to is resolved against the
//! character — all before any step runs (exit 2 on any problem, nothing written). Then the steps
//! run; every failed assertion is listed and the run goes on; then the whole scenario runs again
//! from scratch and every recorded hash must repeat. Exit 0 when all passed, 1 otherwise, 130 when
//! stopped by Ctrl-C or SIGTERM (the output folder is then as it was).
//!
//! The scenario runner itself is the library's ([`mien_runtime::scenario`]); this module parses the
//! arguments, prints, and writes the output folder ([`output`]).

pub mod output;
pub mod summary;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand};

/// Exit code of a run whose assertions all passed and whose repeat matched.
pub const EXIT_PASSED: u8 = 0;
/// Exit code of a run with failures (listed), or an error while running or writing.
pub const EXIT_FAILED: u8 = 1;
/// Exit code of a scenario refused before any step ran (nothing written).
pub const EXIT_INVALID: u8 = 2;

/// `mien scenario …` arguments.
#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// What to do with the scenario.
    #[command(subcommand)]
    pub command: ScenarioCommand,
}

/// `mien scenario` subcommands.
#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// Run a scenario, then run it again from scratch: exit 0 when every assertion passed and
    /// every recorded hash repeated, 1 otherwise (failures listed), 2 for an invalid scenario.
    Run(RunArgs),
    /// Check a scenario (schema, names, files) without running it: exit 0 or 2.
    Check(CheckArgs),
}

/// `mien scenario run` arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario (`mien-scenario` JSON, docs/scenarios.md). Paths in it are relative to its
    /// folder.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output folder for report.json and the captures (`<name>.png`). It is replaced as a whole
    /// when the run ends (pass or fail), and must be new or hold only report.json and .png files.
    /// Without it nothing is written and capture steps are not rendered.
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `mien scenario check` arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The scenario.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

use mien_runtime::scenario::{Problem, check, report};

/// Print the problems of an invalid scenario to standard error.
fn print_invalid(file: &std::path::Path, problems: &[Problem]) {
    eprintln!(
        "error: {}",
        mien_runtime::scenario::invalid_text(file, problems)
    );
}

/// Run `mien scenario …` and return the process exit code.
pub fn main(args: &ScenarioArgs, command: Vec<String>) -> ExitCode {
    match &args.command {
        ScenarioCommand::Check(c) => match check::prepare(&c.file, false) {
            Ok(plan) => {
                println!(
                    "{}: valid ({}, {} per run, media time 0–{} s)",
                    c.file.display(),
                    crate::text::count(plan.steps.len() as u64, "step"),
                    crate::text::count(plan.frames, "frame"),
                    crate::text::secs(plan.end_s)
                );
                ExitCode::from(EXIT_PASSED)
            }
            Err(problems) => {
                print_invalid(&c.file, &problems);
                ExitCode::from(EXIT_INVALID)
            }
        },
        ScenarioCommand::Run(r) => run(r, command),
    }
}

fn run(args: &RunArgs, command: Vec<String>) -> ExitCode {
    let t0 = Instant::now();
    // Ctrl-C / SIGTERM as for `mien animate`: exit 130 with a message, the folder as it was.
    let shown = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("the output folder (no --out)"));
    let _ = crate::interrupt::install(&shown);
    // The output folder is checked before the scenario, so a refusal names it first.
    let target = match &args.out {
        Some(o) => match output::Target::check(o) {
            Ok(t) => Some(t),
            Err(e) => {
                eprint!("{}", crate::text::error_chain(&e));
                return ExitCode::from(EXIT_INVALID);
            }
        },
        None => None,
    };
    let mut plan = match check::prepare(&args.file, target.is_some()) {
        Ok(p) => p,
        Err(problems) => {
            print_invalid(&args.file, &problems);
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let validated = t0.elapsed();
    let result = report::run_twice(&mut plan, command, validated, &crate::interrupt::requested)
        .map_err(anyhow::Error::from)
        .and_then(|(rep, images)| {
            let written = match &target {
                Some(t) => Some(output::write(t, &rep, &images)?),
                None => None,
            };
            Ok((rep, written))
        });
    match result {
        Ok((rep, written)) => {
            summary::print_summary(&rep, args.out.as_deref(), written.as_deref());
            ExitCode::from(if rep.passed { EXIT_PASSED } else { EXIT_FAILED })
        }
        Err(_) if crate::interrupt::requested() => {
            eprintln!("{}", crate::interrupt::message(&shown));
            ExitCode::from(crate::interrupt::EXIT_CODE)
        }
        Err(e) => {
            eprint!("{}", crate::text::error_chain(&e));
            ExitCode::from(EXIT_FAILED)
        }
    }
}
