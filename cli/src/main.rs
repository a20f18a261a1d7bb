//! The `mien` command-line tool: `mien animate` (the main job), `mien inspect`, `mien pack`,
//! `mien calibrate`, `mien live`, `mien scenario` and `mien bench`.

mod animate;
mod animator;
mod args;
mod bake;
mod bench;
mod bench_check;
mod bind;
mod bundle;
mod inspect;
mod interrupt;
mod live;
mod load;
mod outdir;
mod pack;
mod preview;
mod report;
mod retarget;
mod scenario;
mod speech;
mod subject;
mod summary;
mod text;
mod validate;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command: Vec<String> = std::env::args().collect();
    let result = match &cli.command {
        Command::Animate(a) => {
            // Without the handler a signal ends the run the default way; the next run into the
            // same folder removes the staging folder it left.
            let _ = interrupt::install(&a.out);
            match animate::run(a, command) {
                Err(_) if interrupt::requested() => {
                    eprintln!("{}", interrupt::message(&a.out));
                    return ExitCode::from(interrupt::EXIT_CODE);
                }
                r => r.map(|o| summary::print(&o)),
            }
        }
        Command::Inspect(i) => inspect::run(&i.file, i.json).map(|text| print!("{text}")),
        Command::Pack(p) => pack::run(p).map(|text| print!("{text}")),
        Command::Calibrate(c) => calibrate(c).map(|text| print!("{text}")),
        Command::Bind(b) => bind::run(b).map(|text| print!("{text}")),
        Command::Bake(b) => bake::run(&b).map(|text| print!("{text}")),
        Command::Retarget(r) => retarget::run(r).map(|text| print!("{text}")),
        Command::Live(l) => {
            let _ = interrupt::install_stop_only();
            live::run(l).map(|text| print!("{text}"))
        }
        Command::Scenario(s) => return scenario::main(s, command),
        Command::Bench(b) => {
            // As for animate: a signal raises a flag the run checks between rows.
            let out = b
                .out
                .clone()
                .or_else(|| b.export.clone())
                .or_else(|| b.plot.clone())
                .unwrap_or_else(|| std::path::PathBuf::from("."));
            let _ = interrupt::install(&out);
            match bench::run(b, command) {
                Err(_) if interrupt::requested() => {
                    eprintln!("mien: interrupted; no table was written");
                    return ExitCode::from(interrupt::EXIT_CODE);
                }
                r => r,
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprint!("{}", text::error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// `mien calibrate`: fit offsets from a neutral take and write them.
fn calibrate(c: &args::CalibrateArgs) -> anyhow::Result<String> {
    use anyhow::Context;
    let (neutral, _) = mien_core::io::read_stream(&c.neutral)
        .with_context(|| format!("cannot read neutral take {}", c.neutral.display()))?;
    let cal = mien_core::anim::Calibration::fit_neutral(&neutral);
    mien_core::io::atomic::write_atomic_bytes(&c.out, cal.to_json().as_bytes())
        .with_context(|| format!("cannot write {}", c.out.display()))?;
    let biased = cal
        .channels
        .values()
        .filter(|ch| ch.offset.abs() > 0.05)
        .count();
    Ok(format!(
        "{}: {} channels from {} frames of {}; {} rest above 0.05\n",
        c.out.display(),
        cal.channels.len(),
        neutral.frame_count(),
        c.neutral.display(),
        biased
    ))
}
