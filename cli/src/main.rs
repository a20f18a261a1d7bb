//! The `mien` command-line tool: `mien animate` (the main job) and `mien inspect`.

mod animate;
mod args;
mod engine;
mod inspect;
mod load;
mod outdir;
mod report;
mod summary;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command: Vec<String> = std::env::args().collect();
    let result = match &cli.command {
        Command::Animate(a) => animate::run(a, command).map(|o| summary::print(&o)),
        Command::Inspect(i) => inspect::run(&i.file, i.json).map(|text| print!("{text}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}
