//! `mien animate`: load → drive → rig (backend) → lift → .ply frames, PNG contact sheet, report.

use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use glam::Mat4;
use indicatif::{ProgressBar, ProgressStyle};
use mien_core::io::atomic::write_atomic_bytes;
use mien_core::io::ply::{PlyOptions, ShBands, TransparentSlots, write_splat_ply_with};
use mien_core::lift::{DebugLiftParams, DebugShading};
use mien_core::preview::write_png;
use mien_core::rig::ACTIVE_MORPH_LIMIT;
use mien_core::sink::{SlotRange, SplatBuffers};

use crate::args::{AnimateArgs, PlyLayout, Shading};
use crate::engine::EngineTimes;
use crate::interrupt;
use crate::load;
use crate::outdir::Target;
use crate::posed::PosedCheck;
use crate::preview;
use crate::report::Report;
use crate::subject::Subject;
use crate::text::metres;
use crate::validate;

/// Default gaussian σ as a fraction of the character's median triangle edge: large enough that
/// neighbouring splats overlap on an evenly meshed surface, small enough to keep features.
pub const DEFAULT_SIGMA_EDGES: f32 = 0.6;

/// What `run` hands the summary printer.
pub struct Outcome {
    /// The report as written.
    pub report: Report,
    /// Output folder.
    pub out: std::path::PathBuf,
    /// Warnings from the commit (written after the report).
    pub warnings: Vec<String>,
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run `mien animate`.
///
/// # Errors
/// Bad input (named) before any work; a failure while writing, or
/// [`crate::interrupt::Interrupted`]: the output folder is then left as it was.
pub fn run(args: &AnimateArgs, command: Vec<String>) -> Result<Outcome> {
    let t_total = Instant::now();
    validate::flags(args)?;
    let target = Target::check(&args.out)?;
    let mut report = Report {
        tool: format!("mien {}", env!("CARGO_PKG_VERSION")),
        command,
        ..Default::default()
    };
    report.outputs.notes.clone_from(&target.notes);

    // Inputs, all validated before anything is written.
    let t_load = Instant::now();
    let loaded = load::character(args.character.as_deref())?;
    interrupt::check()?;
    let ch = &loaded.character;
    let animator_on = crate::animator::RunAnimator::will_run(args, loaded.builtin)?;
    let driven =
        args.arkit.is_some() || args.speech.is_some() || args.clip.is_some() || animator_on;
    let mut subject = Subject::new(&loaded, driven)?;
    if subject.vertex_count() == 0 {
        bail!(
            "{}: the displayed scene has no mesh geometry to pose",
            ch.source
        );
    }
    let (mut drive, anim_report) = load::drive(
        &loaded,
        args.arkit.as_deref(),
        args.clip.as_deref(),
        args.speech.is_some(),
        animator_on,
    )?;
    report.animation = anim_report;
    let mut speech = crate::speech::layer(args, ch)?;
    let mut span = drive.span(ch);
    if let Some((layer, rep)) = &speech {
        span.1 = span.1.max(layer.span().1);
        report.animation.span_s[1] = span.1;
        report.animation.speech = Some(rep.clone());
    }
    let frames = validate::frame_count(args, span)?;
    let mut animator = crate::animator::RunAnimator::new(args, ch, loaded.builtin, args.start)?;
    report.frames.count = frames;
    report.frames.fps = args.fps;
    report.frames.start_s = args.start;
    report.frames.span_s = [args.start, args.start + f64::from(frames - 1) / args.fps];
    subject.fill_report(&mut report, ch);

    // Backend.
    let (mut engine, reason) = subject.engine(args.backend)?;
    report.backend.requested = format!("{:?}", args.backend).to_lowercase();
    report.backend.used = engine.name().into();
    report.backend.reason = reason;
    report.backend.adapter = engine.adapter();
    report.backend.threads = rayon_threads();
    let nv = subject.vertex_count();

    // Rest pose once: bounds and the default σ.
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    let (mut locals, mut world) = (Vec::new(), Vec::<Mat4>::new());
    ch.world_matrices(&rest, &mut locals, &mut world);
    // Counting starts with the first frame: the rest pose is set through a scratch report.
    subject.set_frame(0, &rest, &world, engine.as_mut(), &mut Report::default())?;
    let rest_pos = engine.pose_and_read()?;
    validate::rest_geometry(&ch.source, &rest_pos)?;
    // Every frame obeys the same rule, whatever is written.
    let posed_check = PosedCheck::new(ch, &world);
    report.character.bounds_m = bounds(&rest_pos);
    let edge = median_edge(subject.triangles(), &rest_pos);
    let sigma = match args.sigma {
        Some(s) => s as f32,
        None => DEFAULT_SIGMA_EDGES * edge.unwrap_or(NO_EDGE_M),
    };
    ensure!(
        sigma.is_finite() && sigma > 0.0,
        "{}: cannot derive a gaussian size from degenerate geometry; pass --sigma",
        ch.source
    );
    report.splats.sigma_m = sigma;
    report.splats.sigma_derived = args.sigma.is_none();
    report.splats.sigma_rule = match (args.sigma, edge) {
        (Some(_), _) => "--sigma".into(),
        (None, None) => format!(
            "{DEFAULT_SIGMA_EDGES} × {NO_EDGE_M} m: the rest pose has no edge of non-zero length"
        ),
        (None, Some(e)) => format!(
            "{DEFAULT_SIGMA_EDGES} × the median triangle edge, {}",
            metres(e)
        ),
    };
    report.timings_ms.load = ms(t_load.elapsed());

    let range = SlotRange {
        offset: 0,
        count: nv,
    };
    let mut params = DebugLiftParams::new(range, nv);
    params.sigma = sigma;
    let has_colors = subject.has_colors(ch);
    params.shading = match args.shading {
        Shading::Auto if has_colors => DebugShading::Tint,
        Shading::Auto | Shading::Normal => DebugShading::Normal,
        Shading::Tint => DebugShading::Tint,
        Shading::Flat => DebugShading::Flat,
    };
    report.splats.shading_requested = format!("{:?}", args.shading).to_lowercase();
    report.splats.shading = format!("{:?}", params.shading).to_lowercase();
    params.centroid = center(&report.character.bounds_m);
    engine.attach_lift(params)?;
    let (rig_bytes, sink_bytes) = engine.bytes();
    report.memory.sink_slots = nv;
    report.memory.character_slots = range.count;
    report.memory.rig_bytes = rig_bytes;
    report.memory.sink_bytes = sink_bytes;

    // The contact sheet: frames kept within the memory budget, raster work checked on the rest
    // pose before any frame is posed.
    let sheet = preview::sheet_frames(frames, args.sheet, nv);
    report.outputs.preview_frames_requested = args.sheet;
    report.outputs.preview_note.clone_from(&sheet.note);
    let knobs = preview::Knobs {
        sigma,
        derived: args.sigma.is_none(),
        cell: args.cell,
    };
    let mut warmup = EngineTimes::default();
    if !sheet.indices.is_empty() {
        engine.frame()?;
        let rest_splats = engine.splats()?;
        preview::precheck(&rest_splats, nv, sheet.indices.len(), &knobs)?;
        warmup = engine.times();
    }
    report.memory.preview_bytes = sheet.indices.len() as u64 * u64::from(nv) * preview::SPLAT_BYTES;
    interrupt::check()?;

    // Outputs go to a staging folder beside the output folder and replace it only on success.
    let staging = target.stage()?;
    let ply_options = match args.ply {
        PlyLayout::Sh3 => PlyOptions {
            sh: ShBands::Degree3,
            transparent: TransparentSlots::Keep,
        },
        PlyLayout::Dc | PlyLayout::None => PlyOptions {
            sh: ShBands::Dc,
            transparent: TransparentSlots::Keep,
        },
    };
    let sheet_frames = sheet.indices;
    let mut kept: Vec<(u32, SplatBuffers)> = Vec::with_capacity(sheet_frames.len());
    let progress = progress_bar(u64::from(frames), args.quiet);
    let (mut t_anim, mut t_ply) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    let mut last_hash = 0u64;
    for i in 0..frames {
        interrupt::check()?;
        let t = args.start + f64::from(i) / args.fps;
        let t0 = Instant::now();
        drive.pose_at(ch, &rest, t, &mut pose);
        if let Some((layer, _)) = &mut speech {
            layer.apply(t, &mut pose);
        }
        ch.world_matrices(&pose, &mut locals, &mut world);
        if let Some(a) = &mut animator {
            a.update(ch, t, &world, &mut pose)?;
            last_hash = a.animator.hash(&pose);
            // Eye joints may have turned.
            ch.world_matrices(&pose, &mut locals, &mut world);
        }
        posed_check.matrices(ch, &world, i, t)?;
        subject.set_frame(i, &pose, &world, engine.as_mut(), &mut report)?;
        t_anim += t0.elapsed();
        engine.frame()?;
        let keep = sheet_frames.binary_search(&i).is_ok();
        let splats = if args.ply != PlyLayout::None || keep {
            Some(engine.splats()?)
        } else {
            None
        };
        match (engine.posed(), &splats) {
            (Some(p), _) => posed_check.positions(ch, &world, p, i, t)?,
            (None, Some(s)) => posed_check.positions(ch, &world, &s.center, i, t)?,
            (None, None) => {}
        }
        if let (Some(splats), true) = (&splats, args.ply != PlyLayout::None) {
            let t1 = Instant::now();
            let path = staging
                .path()
                .join("frames")
                .join(format!("frame_{i:05}.ply"));
            let st = write_splat_ply_with(&path, splats, &[range], &ply_options)?;
            report.outputs.splats_per_frame = st.written;
            report.outputs.ply_bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            report.outputs.ply_files += 1;
            t_ply += t1.elapsed();
        }
        if let (Some(splats), true) = (splats, keep) {
            kept.push((i, splats));
        }
        progress.inc(1);
    }
    engine.finish()?;
    if let Some(a) = &animator {
        let mut rep = a.report.clone();
        rep["states"] = serde_json::json!(
            a.states
                .iter()
                .map(|(t, s)| serde_json::json!({"t": t, "state": s}))
                .collect::<Vec<_>>()
        );
        rep["last_state_hash"] = serde_json::json!(format!("{last_hash:016x}"));
        report.animation.animator = Some(rep);
    }
    progress.finish_and_clear();
    let times = engine.times();
    let (rig_t, lift_t) = (
        times.rig.saturating_sub(warmup.rig),
        times.lift.saturating_sub(warmup.lift),
    );
    report.timings_ms.animate = ms(t_anim);
    report.timings_ms.rig = ms(rig_t);
    report.timings_ms.lift = ms(lift_t);
    if let Some(t) = times.gpu_ms {
        let w = warmup.gpu_ms.unwrap_or([0.0; 3]);
        let [morph, skin, lift] = [0, 1, 2].map(|k| t[k] - w[k]);
        report.timings_ms.gpu = Some(crate::report::GpuTimes {
            morph,
            skin,
            lift,
            per_frame: (morph + skin + lift) / f64::from(frames),
        });
    }
    report.timings_ms.ply = ms(t_ply);
    report.timings_ms.rig_per_frame = report.timings_ms.rig / f64::from(frames);
    report.timings_ms.lift_per_frame = report.timings_ms.lift / f64::from(frames);
    report.morphs.active_limit = ACTIVE_MORPH_LIMIT;
    // What the per-frame rules counted (dropped targets, clamped coefficients).
    subject.fill_counts(&mut report, ch);
    report.outputs.ply_layout = format!("{:?}", args.ply).to_lowercase();
    if args.ply == PlyLayout::None {
        std::fs::remove_dir_all(staging.path().join("frames"))
            .context("cannot tidy the staging folder")?;
    } else {
        report.outputs.ply_span = vec![
            format!("frames/frame_{:05}.ply", 0),
            format!("frames/frame_{:05}.ply", frames - 1),
        ];
    }

    // Preview.
    if !kept.is_empty() {
        interrupt::check()?;
        let t2 = Instant::now();
        let (image, work) = preview::render(&kept, nv, &knobs, args.quiet)?;
        drop(kept);
        write_png(&staging.path().join("preview.png"), &image)?;
        report.outputs.preview = Some("preview.png".into());
        report.outputs.preview_frames = sheet_frames;
        report.outputs.preview_work = work;
        report.timings_ms.preview = ms(t2.elapsed());
    }

    report.timings_ms.total = ms(t_total.elapsed());
    let json = serde_json::to_vec_pretty(&report).context("cannot serialise the report")?;
    write_atomic_bytes(&staging.path().join("report.json"), &json)?;
    let warnings = staging.commit()?;
    Ok(Outcome {
        report,
        out: args.out.clone(),
        warnings,
    })
}

fn bounds(p: &[[f32; 3]]) -> [[f32; 3]; 2] {
    let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
    for v in p {
        for k in 0..3 {
            b[0][k] = b[0][k].min(v[k]);
            b[1][k] = b[1][k].max(v[k]);
        }
    }
    b
}

fn center(b: &[[f32; 3]; 2]) -> [f32; 3] {
    [0, 1, 2].map(|k| 0.5 * (b[0][k] + b[1][k]))
}

/// σ base when the rest pose has no edge of non-zero length, metres.
const NO_EDGE_M: f32 = 0.01;

/// Median triangle edge length of the posed rest positions (metres); `None` when no triangle has
/// an edge of finite, non-zero length.
fn median_edge(triangles: &[[u32; 3]], pos: &[[f32; 3]]) -> Option<f32> {
    let mut e: Vec<f32> = triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| {
            let (a, b) = (pos[a as usize], pos[b as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .filter(|l| l.is_finite() && *l > 0.0)
        .collect();
    if e.is_empty() {
        return None;
    }
    let mid = e.len() / 2;
    Some(*e.select_nth_unstable_by(mid, f32::total_cmp).1)
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn progress_bar(len: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} posing {bar:40} {pos}/{len} frames  {elapsed_precise} eta {eta}",
    ) {
        pb.set_style(style);
    }
    pb
}
