//! The `mien` command-line tool: `mien animate` (the main job), `mien inspect`, `mien pack`,
//! `mien calibrate`, `mien live`, `mien scenario` and `mien bench`.

mod animate;
mod animator;
mod args;
mod bake;
mod bench;
mod bench_check;
mod inspect;
mod interrupt;
mod live;
mod load;
mod outdir;
mod pack;
mod preview;
mod report;
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
        Command::Bind(b) => bind(b).map(|text| print!("{text}")),
        Command::Bake(b) => bake::run(&b).map(|text| print!("{text}")),
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

/// `mien bind`: a capture bound to a character's rest pose, written as a bound-capture .ply.
fn bind(b: &args::BindArgs) -> anyhow::Result<String> {
    use anyhow::Context;
    if !(b.max_distance.is_finite() && (1e-6..=1e6).contains(&b.max_distance)) {
        anyhow::bail!(
            "--max-distance {}: must be a length from 1e-6 to 1e6 metres",
            b.max_distance
        );
    }
    if !b
        .out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ply"))
    {
        anyhow::bail!(
            "--out {}: a bound capture is a .ply file (viewers open it as the capture)",
            b.out.display()
        );
    }
    if let Some(dir) = b.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        anyhow::bail!(
            "--out {}: the folder {} does not exist",
            b.out.display(),
            dir.display()
        );
    }
    let asset = std::sync::Arc::new(
        mien_runtime::Asset::load(&b.to)
            .with_context(|| format!("cannot load character {}", b.to.display()))?,
    );
    let cloud = mien_runtime::capture::read_capture(&b.splats)
        .with_context(|| format!("cannot read capture {}", b.splats.display()))?;
    let opts = mien_core::lift::BindOptions {
        max_distance_m: b.max_distance as f32,
        far: match b.far {
            args::FarArg::Bind => mien_core::lift::FarGaussians::Bind,
            args::FarArg::Drop => mien_core::lift::FarGaussians::Drop,
            args::FarArg::Joint => mien_core::lift::FarGaussians::Joint,
        },
    };
    let bound = mien_runtime::capture::bind_capture(&asset, &cloud, &opts)?;
    mien_core::io::atomic::write_atomic_bytes(&b.out, &bound.bytes)
        .with_context(|| format!("cannot write {}", b.out.display()))?;
    let r = &bound.report;
    let mut s = format!(
        "{}: {} of {} gaussians of {} bound to {} ({} triangles)\n  distance to the surface: median {:.4} m, largest {:.4} m; {} beyond {} m{}\n",
        b.out.display(),
        r.bound,
        r.splats,
        b.splats.display(),
        b.to.display(),
        asset.triangles().len(),
        r.median_distance_m,
        r.max_distance_m,
        r.far,
        b.max_distance,
        match b.far {
            args::FarArg::Drop => format!(", {} dropped", r.dropped),
            args::FarArg::Joint => format!(", {} left rigid to a joint", r.rigid),
            args::FarArg::Bind if r.far > 0 => {
                " (bound anyway; --far drop drops them, --far joint leaves them rigid to a joint)"
                    .into()
            }
            args::FarArg::Bind => String::new(),
        },
    );
    if r.sh_degree_dropped > 0 {
        s += &format!(
            "  view-dependent colour (SH degree {}) not carried: the DC colour is kept\n",
            r.sh_degree_dropped
        );
    }
    if r.approximate > 0 {
        s += &format!(
            "  {} gaussians on sliver triangles bound approximately\n",
            r.approximate
        );
    }
    Ok(s)
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
