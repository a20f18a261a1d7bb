//! `mien bench`: the workloads of issue 8 on the chosen backends, a copy baseline per backend in
//! the same run, one table (µs/frame, characters/s, effective GB/s, % of copy) and `bench.json`;
//! `--export DIR` writes the arrays the peer scripts read instead of timing.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::bench_check::{self, OutFiles, check_args, workload_ids};
use mien_benches::dynamics::{self, DynPlan, DynRow};
use mien_benches::harness::{Bench, CopyResult, LiftMode, Row, RowPlan, run_row};
use mien_benches::machine::{Machine, utc_now};
use mien_benches::workloads::{self, Workload};
use serde_json::json;

/// Which lift settings to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LiftChoice {
    /// Pose only.
    Off,
    /// The debug lift: one splat per posed vertex.
    Debug,
    /// The surface lift: about 100,000 gaussians bound to the triangles per character.
    Surface,
    /// Off and the surface lift, one row each.
    Both,
    /// Off, the debug lift and the surface lift, one row each (the default).
    All,
}

impl LiftChoice {
    fn modes(self) -> &'static [LiftMode] {
        match self {
            LiftChoice::Off => &[LiftMode::Off],
            LiftChoice::Debug => &[LiftMode::Debug],
            LiftChoice::Surface => &[LiftMode::Surface],
            LiftChoice::Both => &[LiftMode::Off, LiftMode::Surface],
            LiftChoice::All => &[LiftMode::Off, LiftMode::Debug, LiftMode::Surface],
        }
    }
}

/// What the table means, printed under `mien bench --help`.
const AFTER_HELP: &str = "\
Columns: µs/frame is the median wall time of one frame (set every character's controls, encode, \
submit, wait for the GPU): the latency, submit → ready; in flight is the mean wall time per frame of \
a stream of frames in flight (no wait between frames; the device keeps at most 3 in flight): the \
throughput's inverse, max(host, GPU) per frame rather than their sum; host µs is the host's part of a \
frame in flight (controls, packing, per-frame writes, recording: before the submission); characters/s = batch / µs/frame; GB/s = the bytes the frame must move \
(benches/README.md states them per workload) / that time; % copy compares that with a plain device \
copy (a host memcpy for the CPU) of about the same size measured in the same run. status is empty \
for a timed row, `n/a: why` for a row the backend cannot run, `error: why` for a failure.

Rows: every backend × workload × batch × lift (off, debug, surface by default), GPU backends \
before the CPU; then the whole characters with cloth and hair, `body` and `sintel` (lift `full`: \
their simulations and every lift; µs/frame the median frame, host µs the host simulation, 30 timed \
frames unless --frames says otherwise; cpu-fast poses the body's rig with the fast path), on the \
same backends and batches, with their split (sim, draw, gpu µs) in a second table. The gaussians column is the splats each character writes per frame: V for the debug \
lift, the surface lift's gaussians (about 100,000, bound to the triangles of ring frame 0). Untimed frames come first: at least 3 (1 with --quick) and at least 0.2 s of them.
Inputs: W1, W2, W3 and W6 read real files from --data (or $MIEN_DATA, else ../shared/data); W4 and \
W5 are generated from a fixed seed.
With --dynamics the table is another: workloads `body` (the built-in body with its cape and 11,200-strand groom, walking in wind, through the runtime) `sintel` (Sintel's full 11,400-strand TressFX groom on its collider) and `dna` (the ICT MetaHuman-style DNA rig, every instance's 57 raw controls animated: RigLogic, morph and skin through the runtime, no lift; sim is then only the controls' setting); columns sim µs (the host's cloth and hair simulation of every character per frame), draw µs (the rest: pose, lifts, strands — record, submit, wait), gpu µs (the device's timestamps, all stages) — these three means —, frame µs (the median frame; the mean of sim + draw is mean_frame_us in bench.json), characters/s = batch / frame. Frames advance 1/60 s (benches/README.md).
Exit status: 0 when every row ran (or was n/a), 1 when a row failed or the arguments were refused, \
2 for a command-line syntax error, 130 on Ctrl-C.";

/// `mien bench` arguments.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct BenchArgs {
    /// Backends, comma-separated (cpu, cpu-fast, wgpu, vulkan; cpu-fast is the CPU's fused
    /// multiply-add path, `Runtime::set_precision(Precision::Fast)` in the library). Default: every one that has a hardware device (the CPU always).
    #[arg(long, value_delimiter = ',')]
    pub backend: Vec<String>,
    /// Workloads, comma-separated: W1 … W6 (the rigs), body and sintel (whole characters with
    /// cloth and hair); see benches/README.md. Default: all (W1 … W6 only with --export).
    #[arg(long, value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Characters per frame, comma-separated. Default 1,16,256 (1,16 with --quick).
    #[arg(long, value_delimiter = ',')]
    pub batch: Vec<u32>,
    /// Which lift rows: off, debug, surface, both (off + surface) or all (the default).
    #[arg(long, value_enum)]
    pub lift: Option<LiftChoice>,
    /// Timed frames per row, 1 to 100,000 (default 50; 3 with --quick), after untimed ones: at least 3 (1 with
    /// --quick) and at least 0.2 s of them, so an idle GPU climbs back to its clocks.
    #[arg(long)]
    pub frames: Option<u32>,
    /// A run of under a minute on a GPU machine: fewer frames, batches 1 and 16.
    #[arg(long)]
    pub quick: bool,
    /// Write bench.json and table.txt here (checked before the first row; both files replaced
    /// together at the end).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write each workload's arrays for the peer scripts (DIR/W/manifest.json + .npy) into a new
    /// or empty folder and exit without timing.
    #[arg(long)]
    pub export: Option<PathBuf>,
    /// Sweep the synthetic morph rig over vertices, active targets and batch size on each backend
    /// and draw time_vs_vertices.png, time_vs_active.png, time_vs_batch.png (+ sweep.json) here,
    /// instead of the table (20 timed frames per point unless --frames or --quick say otherwise).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// The real inputs' folder (default: $MIEN_DATA, else ../shared/data from the current folder,
    /// else the shared/data folder beside the checkout mien was built from).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// The cloth and hair rows instead of the rig table: whole characters with their simulations
    /// (workloads `body`: the built-in body with its cape and 11,200-strand groom walking in wind;
    /// `sintel`: Sintel's full 11,400-strand TressFX groom on its collider), the host simulation
    /// and the backend's pose, lifts and strands timed apart, characters per second. Batches
    /// default to 1,16,64 (1,16 with --quick), 30 timed frames (3 with --quick).
    #[arg(long)]
    pub dynamics: bool,
    /// Accept a software GPU (lavapipe, llvmpipe): for trying the harness, not for figures.
    #[arg(long)]
    pub allow_software: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// A progress bar of `total` `unit` on stderr; hidden with --quiet or when stderr is no
/// terminal.
fn progress(a: &BenchArgs, total: u64, unit: &str) -> ProgressBar {
    if a.quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    let template = format!("{{spinner}} {{bar:40}} {{pos}}/{{len}} {unit}  {{msg}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(style);
    }
    pb
}

/// Right-aligned number with `digits` decimals, or `-`.
fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The results table, one line per row: the rig workloads' rows, then the whole characters'
/// (`body`, `sintel`: lift `full`, their simulations and every lift; µs/frame the median frame,
/// host µs the host simulation's mean, no byte count).
pub fn table(rows: &[Row], dyn_rows: &[DynRow]) -> String {
    let line = |c: [&str; 12]| {
        format!(
            "{:<8} {:<6} {:>5} {:>7} {:>9} {:>12} {:>12} {:>9} {:>13} {:>9} {:>7}  {}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
        )
    };
    let status = |s: &str| {
        if s == "ok" {
            String::new()
        } else {
            s.to_owned()
        }
    };
    let mut s = line([
        "backend",
        "work",
        "batch",
        "lift",
        "gaussians",
        "µs/frame",
        "in flight",
        "host µs",
        "characters/s",
        "GB/s",
        "% copy",
        "status",
    ]);
    for r in rows {
        s += &line([
            &r.backend,
            &r.workload,
            &r.batch.to_string(),
            r.lift.name(),
            &r.gaussians.to_string(),
            &num(r.us_per_frame, 1),
            &num(r.in_flight_us_per_frame, 1),
            &num(r.host_us_per_frame, 1),
            &num(r.characters_per_s, 0),
            &num(r.gb_per_s, 2),
            &num(r.pct_of_copy, 1),
            &status(&r.status),
        ]);
    }
    for r in dyn_rows {
        let gaussians = if r.status == "ok" {
            r.gaussians.to_string()
        } else {
            "-".into()
        };
        s += &line([
            &r.backend,
            &r.workload,
            &r.batch.to_string(),
            "full",
            &gaussians,
            &num(r.frame_us, 1),
            "-",
            &num(r.sim_us, 1),
            &num(r.characters_per_s, 0),
            "-",
            "-",
            &status(&r.status),
        ]);
    }
    s
}

/// The backends opened, and a note for each default one that was skipped.
type Opened = (Vec<Box<dyn Bench>>, Vec<String>);

fn open_backends(a: &BenchArgs) -> anyhow::Result<Opened> {
    let (mut out, mut notes) = (Vec::new(), Vec::new());
    if a.backend.is_empty() {
        for name in mien_benches::BACKENDS {
            match mien_benches::open(name, a.allow_software) {
                Ok(b) => out.push(b),
                Err(e) => notes.push(format!("{name} skipped: {e:#}")),
            }
        }
    } else {
        for name in &a.backend {
            out.push(
                mien_benches::open(&name.trim().to_ascii_lowercase(), a.allow_software)
                    .with_context(|| format!("--backend {name}"))?,
            );
        }
    }
    Ok((out, notes))
}

/// Run `mien bench`.
///
/// # Errors
/// Unknown backends or workloads, a requested backend without a device, unreadable real inputs,
/// an output folder that cannot be written.
pub fn run(a: &BenchArgs, command: Vec<String>) -> anyhow::Result<()> {
    check_args(a)?;
    let data = a.data.clone().unwrap_or_else(workloads::data_dir);
    if a.dynamics {
        return run_dynamics(a, &data, command);
    }
    let (ids, dyn_ids) = workload_ids(a)?;
    if let Some(dir) = &a.export {
        return bench_check::export(&ids, &data, dir);
    }
    let (backends, notes) = open_backends(a)?;
    if let Some(dir) = &a.plot {
        return plot(a, dir, &backends);
    }
    let out = a.out.as_deref().map(OutFiles::prepare).transpose()?;
    // An interrupt between rows stops the run before anything is written; a folder this run created
    // for --out is removed again (by `OutFiles`' drop, or by the signal handler when a row does
    // not end within its grace period).
    if let Some(o) = &out {
        crate::interrupt::set_staging(o.created_dir());
    }
    let batches = match (a.batch.is_empty(), a.quick) {
        (false, _) => a.batch.clone(),
        (true, true) => vec![1, 16],
        (true, false) => vec![1, 16, 256],
    };
    let lifts = a.lift.unwrap_or(LiftChoice::All).modes();
    let frames = a.frames.unwrap_or(if a.quick { 3 } else { 50 });
    let warmup = if a.quick { 1 } else { 3 };
    let dyn_plan = DynPlan {
        warmup,
        frames: a.frames.unwrap_or(if a.quick { 3 } else { 30 }),
    };
    let total = ((ids.len() * lifts.len() + dyn_ids.len()) * backends.len() * batches.len()) as u64;
    let pb = progress(a, total, "rows");
    let mut rows = Vec::new();
    let mut copies: Vec<(String, CopyResult)> = Vec::new();
    let mut described = Vec::new();
    let mut loaded = Vec::with_capacity(ids.len());
    for id in &ids {
        crate::interrupt::check()?;
        pb.set_message(format!("building {id}"));
        let w: Arc<Workload> =
            Arc::new(workloads::load(id, &data).with_context(|| format!("workload {id}"))?);
        described.push(json!({
            "id": w.id, "kind": w.kind, "vertices": w.vertices(), "controls": w.controls_count(),
            "description": w.description,
            "bytes_per_character": {
                "lift_off": w.bytes(LiftMode::Off),
                "lift_debug": w.bytes(LiftMode::Debug),
                "lift_surface": w.bytes(LiftMode::Surface),
            },
            "surface_gaussians": w.slots(LiftMode::Surface),
        }));
        loaded.push(w);
    }
    // GPU backends first, the CPU last: the CPU rows keep every core busy, and a GPU row measured
    // right after them ran slower (its submissions and the copy baseline share those cores).
    let mut order: Vec<&dyn Bench> = backends.iter().map(|b| b.as_ref()).collect();
    order.sort_by_key(|b| b.name().starts_with("cpu"));
    for b in order {
        for w in &loaded {
            for &batch in &batches {
                for &lift in lifts {
                    crate::interrupt::check()?;
                    pb.set_message(format!("{} {} ×{batch}", b.name(), w.id));
                    let plan = RowPlan {
                        batch,
                        lift,
                        warmup,
                        frames,
                    };
                    rows.push(run_row(b, w, plan, &mut copies));
                    pb.inc(1);
                }
            }
        }
    }
    // The whole characters after the rig rows, on the same backends and batches (the runtime's
    // device for each: the GPU backends first again, `cpu-fast` the CPU posing with the fast path).
    let mut dyn_rows = Vec::new();
    if !dyn_ids.is_empty() {
        let mut names: Vec<&str> = backends.iter().map(|b| b.name()).collect();
        names.sort_by_key(|n| n.starts_with("cpu"));
        for name in names {
            let opened = dynamics::open(name, a.allow_software);
            for id in &dyn_ids {
                for &batch in &batches {
                    crate::interrupt::check()?;
                    pb.set_message(format!("{name} {id} ×{batch}"));
                    dyn_rows.push(match &opened {
                        Ok((device, precision, _)) => {
                            dynamics::run_row(name, device, *precision, id, batch, dyn_plan, &data)
                        }
                        Err(e) => dynamics::failed_row(name, id, batch, &format!("error: {e:#}")),
                    });
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    // Which device each backend ran on, above the table (and in table.txt), so a table from a
    // software adapter cannot pass for one from a GPU.
    let mut text: String = backends
        .iter()
        .map(|b| format!("# {}: {}\n", b.name(), b.device()))
        .collect();
    text += &table(&rows, &dyn_rows);
    if !dyn_rows.is_empty() {
        text += "\n# body and sintel split: sim µs the host simulation, draw µs the rest (pose, lifts, \
                 strands: record, submit, wait), both means; gpu µs the device's timestamps; frame \
                 µs the median\n";
        text += &dynamics::table(&dyn_rows);
    }
    print!("{text}");
    for n in &notes {
        println!("note: {n}");
    }
    if let Some(out) = &out {
        let doc = json!({
            "machine": Machine::this(),
            "devices": backends.iter().map(|b| json!({"backend": b.name(), "device": b.device()})).collect::<Vec<_>>(),
            "date": utc_now(),
            "command": command,
            "frames": frames,
            "warmup": warmup,
            "warmup_min_s": mien_benches::harness::WARMUP_MIN.as_secs_f64(),
            "row_order": "GPU backends first, then the CPU; per backend workload, batch, lift",
            "quick": a.quick,
            "conventions": {
                "time": "median wall time per frame (us_per_frame; the mean in mean_us_per_frame): set every character's controls, encode, submit, wait",
                "bytes": "per character per frame, reads of rig data touched + writes of outputs (benches/src/bytes.rs); a frame moves batch × that",
                "gb": "10^9 bytes",
                "copy": "a copy of N bytes counts 2N (read + write); N = frame bytes / 2, clamped to [64 KiB, 1 GiB]",
            },
            "workloads": described,
            "rows": rows,
            "dynamics_rows": dyn_rows,
            "dynamics_frames": dyn_plan.frames,
            "frame_dt_s": dynamics::FRAME_DT,
            "copy_baselines": copies.iter().map(|(k, c)| json!({"backend": k.split(':').next(), "copy": c})).collect::<Vec<_>>(),
            "notes": notes,
        });
        write_out(out, &doc, &text)?;
    }
    all_ran(
        rows.iter()
            .map(|r| r.status.as_str())
            .chain(dyn_rows.iter().map(|r| r.status.as_str())),
    )
}

/// bench.json and table.txt into `out`, renamed into place inside a critical section (the
/// interrupt handler cannot remove the folder between the two renames).
fn write_out(out: &OutFiles, doc: &serde_json::Value, text: &str) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(doc)?;
    let guard = crate::interrupt::critical()?;
    let path = out.write(&json, text)?;
    guard.committed();
    println!("wrote {} and table.txt", path.display());
    Ok(())
}

/// Ok when no row's status is an error; else how many failed.
fn all_ran<'a>(statuses: impl Iterator<Item = &'a str>) -> anyhow::Result<()> {
    let (mut n, mut failed) = (0, 0);
    for s in statuses {
        n += 1;
        failed += usize::from(s.starts_with("error"));
    }
    anyhow::ensure!(
        failed == 0,
        "{failed} of {n} rows failed (their status says why)"
    );
    Ok(())
}

/// `--plot DIR`: the sweeps of [`mien_benches::plot::sweep`], three PNG charts and sweep.json.
fn plot(a: &BenchArgs, dir: &std::path::Path, backends: &[Box<dyn Bench>]) -> anyhow::Result<()> {
    anyhow::ensure!(
        !dir.exists() || dir.is_dir(),
        "--plot {}: not a folder",
        dir.display()
    );
    // Everything is drawn into a staging folder and moved in only when complete.
    let staged = crate::outdir::StagedDir::new("--plot", dir)?;
    let final_dir = dir;
    let dir = staged.path();
    let pb = progress(a, (15 * backends.len()) as u64, "points");
    let frames = a.frames.unwrap_or(if a.quick { 3 } else { 20 });
    let charts = mien_benches::plot::sweep(backends, frames, &mut |m| {
        pb.set_message(m.to_owned());
        pb.inc(1);
    });
    pb.finish_and_clear();
    for c in &charts {
        let path = dir.join(format!("{}.png", c.name));
        mien_benches::plot::draw(c, &path).with_context(|| {
            format!(
                "drawing {}",
                final_dir.join(format!("{}.png", c.name)).display()
            )
        })?;
    }
    if !mien_benches::plot::font_available() {
        println!(
            "note: no TrueType font found (set MIEN_FONT): the charts have no labels; sweep.json has the numbers"
        );
    }
    let devices: Vec<_> = backends
        .iter()
        .map(|b| json!({"backend": b.name(), "device": b.device()}))
        .collect();
    let command: Vec<String> = std::env::args().collect();
    let doc = json!({
        "machine": Machine::this(),
        "devices": devices,
        "date": utc_now(),
        "command": command,
        "frames": frames,
        "charts": charts,
    });
    let sweep = dir.join("sweep.json");
    mien_core::io::atomic::write_atomic_bytes(
        &sweep,
        serde_json::to_string_pretty(&doc)?.as_bytes(),
    )
    .with_context(|| format!("writing {}", final_dir.join("sweep.json").display()))?;
    for p in staged.commit_files()? {
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// `--dynamics`: the cloth and hair rows ([`mien_benches::dynamics`]).
fn run_dynamics(a: &BenchArgs, data: &std::path::Path, command: Vec<String>) -> anyhow::Result<()> {
    let ids = bench_check::dynamics_ids(a)?;
    let out = a.out.as_deref().map(OutFiles::prepare).transpose()?;
    if let Some(o) = &out {
        crate::interrupt::set_staging(o.created_dir());
    }
    let (mut devices, mut notes) = (Vec::new(), Vec::new());
    if a.backend.is_empty() {
        // The dynamics rows run the runtime's devices: one CPU (the rig table's `cpu-fast` is
        // a rig-backend precision, not a device).
        for name in mien_benches::BACKENDS.iter().filter(|n| **n != "cpu-fast") {
            match dynamics::open(name, a.allow_software) {
                Ok((d, p, words)) => devices.push(((*name).to_owned(), d, p, words)),
                Err(e) => notes.push(format!("{name} skipped: {e:#}")),
            }
        }
    } else {
        for name in &a.backend {
            let name = name.trim().to_ascii_lowercase();
            let (d, p, words) = dynamics::open(&name, a.allow_software)
                .with_context(|| format!("--backend {name}"))?;
            devices.push((name, d, p, words));
        }
    }
    // GPU backends first, the CPU last (as the rig table).
    devices.sort_by_key(|(n, _, _, _)| n.starts_with("cpu"));
    let batches = match (a.batch.is_empty(), a.quick) {
        (false, _) => a.batch.clone(),
        (true, true) => vec![1, 16],
        (true, false) => vec![1, 16, 64],
    };
    let plan = DynPlan {
        warmup: if a.quick { 1 } else { 3 },
        frames: a.frames.unwrap_or(if a.quick { 3 } else { 30 }),
    };
    let total = (ids.len() * devices.len() * batches.len()) as u64;
    let pb = progress(a, total, "rows");
    let mut rows = Vec::new();
    for (name, device, precision, _) in &devices {
        for id in &ids {
            for &batch in &batches {
                crate::interrupt::check()?;
                pb.set_message(format!("{name} {id} ×{batch}"));
                rows.push(dynamics::run_row(
                    name, device, *precision, id, batch, plan, data,
                ));
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    let mut text: String = devices
        .iter()
        .map(|(n, _, _, w)| format!("# {n}: {w}\n"))
        .collect();
    text += &dynamics::table(&rows);
    print!("{text}");
    for n in &notes {
        println!("note: {n}");
    }
    if let Some(out) = &out {
        let doc = json!({
            "machine": Machine::this(),
            "devices": devices.iter().map(|(n, _, _, w)| json!({"backend": n, "device": w})).collect::<Vec<_>>(),
            "date": utc_now(),
            "command": command,
            "frames": plan.frames,
            "warmup": plan.warmup,
            "warmup_min_s": mien_benches::harness::WARMUP_MIN.as_secs_f64(),
            "frame_dt_s": dynamics::FRAME_DT,
            "conventions": {
                "sim_us": "host simulation of every character's cloth and guides per frame",
                "draw_us": "the rest of the frame: pose, lifts, strands (encode, submit, wait)",
                "gpu_us": "device time per frame from timestamp queries (all stages)",
                "characters_per_s": "batch / (sim + draw)",
            },
            "dynamics_rows": rows,
            "notes": notes,
        });
        write_out(out, &doc, &text)?;
    }
    all_ran(rows.iter().map(|r| r.status.as_str()))
}
