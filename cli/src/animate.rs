//! `mien animate`: load → drive → rig (backend) → lift → .ply frames, PNG contact sheet, report.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use glam::Mat4;
use indicatif::{ProgressBar, ProgressStyle};
use mien_core::io::atomic::write_atomic_bytes;
use mien_core::io::ply::{PlyOptions, ShBands, TransparentSlots, write_splat_ply_with};
use mien_core::lift::{DebugLiftParams, DebugShading};
use mien_core::preview::{Frame, SheetOptions, render_sheet};
use mien_core::rig::{ACTIVE_MORPH_LIMIT, RigControls, RigData};
use mien_core::sink::{SlotRange, SplatBuffers};

use crate::args::{AnimateArgs, PlyLayout, Shading};
use crate::engine;
use crate::load;
use crate::outdir::Staging;
use crate::report::{DroppedTarget, Report};

/// Default gaussian σ as a fraction of the character's median triangle edge: large enough that
/// neighbouring splats overlap on an evenly meshed surface, small enough to keep features.
pub const DEFAULT_SIGMA_EDGES: f32 = 0.6;

/// Most frames one run may pose (at 30 fps, over 55 minutes).
pub const MAX_FRAMES: u32 = 100_000;

/// What `run` hands the summary printer.
pub struct Outcome {
    /// The report as written.
    pub report: Report,
    /// Output folder.
    pub out: std::path::PathBuf,
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run `mien animate`.
///
/// # Errors
/// Bad input (named), or a failure while writing; nothing is left half-written.
pub fn run(args: &AnimateArgs, command: Vec<String>) -> Result<Outcome> {
    let t_total = Instant::now();
    ensure!(
        args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0,
        "--fps {}: must be a frame rate in (0, 1000]",
        args.fps
    );
    ensure!(
        args.start.is_finite() && args.start >= 0.0,
        "--start {}: must be a media time ≥ 0 seconds",
        args.start
    );
    if let Some(s) = args.sigma {
        ensure!(
            s.is_finite() && s > 0.0,
            "--sigma {s}: must be a positive length in metres"
        );
    }
    ensure!(
        args.cell >= 16 && args.cell <= 4096,
        "--cell {}: must be 16–4096 pixels",
        args.cell
    );
    ensure!(
        args.sheet <= 64,
        "--sheet {}: at most 64 frames in a contact sheet",
        args.sheet
    );

    let mut report = Report {
        tool: format!("mien {}", env!("CARGO_PKG_VERSION")),
        command,
        ..Default::default()
    };

    // Inputs, all validated before anything is written.
    let t_load = Instant::now();
    let loaded = load::character(args.character.as_deref())?;
    let ch = &loaded.character;
    let rig = RigData::from_character(ch).context("cannot flatten the character for posing")?;
    if rig.vertex_count() == 0 {
        bail!(
            "{}: the displayed scene has no mesh geometry to pose",
            ch.source
        );
    }
    let (mut drive, anim_report) =
        load::drive(&loaded, args.arkit.as_deref(), args.clip.as_deref())?;
    report.animation = anim_report;
    let span = drive.span(ch);
    let frames = match args.frames {
        Some(n) => n,
        None => {
            let n = ((span.1 - args.start) * args.fps + 1e-6).floor();
            if n.is_finite() && n >= 0.0 {
                (n as u64 + 1).min(u64::from(MAX_FRAMES) + 1) as u32
            } else {
                1
            }
        }
    };
    ensure!(
        (1..=MAX_FRAMES).contains(&frames),
        "{frames} frames: a run poses 1–{MAX_FRAMES} frames (use --frames / --fps / --start)"
    );
    report.frames.count = frames;
    report.frames.fps = args.fps;
    report.frames.span_s = [args.start, args.start + f64::from(frames - 1) / args.fps];
    fill_character_report(&mut report, ch, &rig);

    // Backend.
    let (mut engine, reason) = engine::choose(args.backend, &rig)?;
    report.backend.requested = format!("{:?}", args.backend).to_lowercase();
    report.backend.used = engine.name().into();
    report.backend.reason = reason;
    report.backend.adapter = engine.adapter();
    report.backend.threads = rayon_threads();
    let nv = rig.vertex_count() as u32;

    // Rest pose once: bounds and the default σ.
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    let (mut locals, mut world) = (Vec::new(), Vec::<Mat4>::new());
    let mut controls = RigControls::default();
    ch.world_matrices(&rest, &mut locals, &mut world);
    rig.controls_from_pose(&rest, &world, &mut controls);
    engine.set_controls(&controls)?;
    let rest_pos = engine.pose_and_read()?;
    report.character.bounds_m = bounds(&rest_pos);
    let sigma = args
        .sigma
        .unwrap_or_else(|| DEFAULT_SIGMA_EDGES * median_edge(&rig, &rest_pos));
    ensure!(
        sigma.is_finite() && sigma > 0.0,
        "{}: cannot derive a gaussian size from degenerate geometry; pass --sigma",
        ch.source
    );
    report.timings_ms.load = ms(t_load.elapsed());

    let range = SlotRange {
        offset: 0,
        count: nv,
    };
    let mut params = DebugLiftParams::new(range, nv);
    params.sigma = sigma;
    let has_colors = ch
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .any(|p| !p.colors.is_empty());
    params.shading = match args.shading {
        Shading::Auto if has_colors => DebugShading::Tint,
        Shading::Auto | Shading::Normal => DebugShading::Normal,
        Shading::Tint => DebugShading::Tint,
        Shading::Flat => DebugShading::Flat,
    };
    params.centroid = center(&report.character.bounds_m);
    engine.attach_lift(params)?;
    let (rig_bytes, sink_bytes) = engine.bytes();
    report.memory.sink_slots = nv;
    report.memory.character_slots = range.count;
    report.memory.rig_bytes = rig_bytes;
    report.memory.sink_bytes = sink_bytes;

    // Outputs go to a staging folder and move into place only on success.
    let staging = Staging::new(&args.out)?;
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
    let sheet_frames = sheet_indices(frames, args.sheet);
    let mut kept: Vec<(u32, SplatBuffers)> = Vec::with_capacity(sheet_frames.len());
    let mut dropped: BTreeMap<(u32, u32), (u32, u32)> = BTreeMap::new();
    let progress = progress_bar(u64::from(frames), args.quiet);
    let (mut t_anim, mut t_ply) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for i in 0..frames {
        let t = args.start + f64::from(i) / args.fps;
        let t0 = Instant::now();
        drive.pose_at(ch, &rest, t, &mut pose);
        ch.world_matrices(&pose, &mut locals, &mut world);
        rig.controls_from_pose(&pose, &world, &mut controls);
        for inst in &rig.instances {
            let w = &controls.weights
                [inst.weight_base as usize..(inst.weight_base + inst.target_count) as usize];
            report.morphs.peak_nonzero = report
                .morphs
                .peak_nonzero
                .max(w.iter().filter(|x| **x != 0.0).count() as u32);
        }
        let stats = engine.set_controls(&controls)?;
        t_anim += t0.elapsed();
        report.morphs.clamped += u64::from(stats.clamped);
        report.morphs.non_finite += u64::from(stats.non_finite);
        report.morphs.dropped += stats.dropped.len() as u64;
        for &pair in &stats.dropped {
            dropped
                .entry(pair)
                .and_modify(|e| e.1 += 1)
                .or_insert((i, 1));
        }
        engine.frame()?;
        let keep = sheet_frames.binary_search(&i).is_ok();
        let splats = if args.ply != PlyLayout::None || keep {
            Some(engine.splats()?)
        } else {
            None
        };
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
    progress.finish_and_clear();
    let times = engine.times();
    report.timings_ms.animate = ms(t_anim);
    report.timings_ms.rig = ms(times.rig);
    report.timings_ms.lift = ms(times.lift);
    if let Some([morph, skin, lift]) = times.gpu_ms {
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
    report.morphs.dropped_targets = dropped
        .into_iter()
        .map(|((inst, target), (first, n))| {
            let inst = &rig.instances[inst as usize];
            let mesh = &ch.meshes[inst.mesh.index()];
            DroppedTarget {
                mesh: load::node_label(ch, inst.node.index()),
                target: mesh
                    .target_names
                    .get(target as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("target_{target}")),
                first_frame: first,
                frames: n,
            }
        })
        .collect();
    if args.ply == PlyLayout::None {
        std::fs::remove_dir_all(staging.path().join("frames"))
            .context("cannot tidy the staging folder")?;
    } else {
        report.outputs.ply_layout = format!("{:?}", args.ply).to_lowercase();
        report.outputs.ply_span = vec![
            format!("frames/frame_{:05}.ply", 0),
            format!("frames/frame_{:05}.ply", frames - 1),
        ];
    }

    // Preview.
    if !kept.is_empty() {
        let t2 = Instant::now();
        let ranges = [SlotRange {
            offset: 0,
            count: range.count,
        }];
        let views: Vec<Frame<'_>> = kept
            .iter()
            .map(|(_, b)| Frame {
                buffers: b,
                ranges: &ranges,
            })
            .collect();
        let cols = (views.len() as f64).sqrt().ceil().max(1.0) as u32;
        let options = SheetOptions {
            cols,
            cell_w: args.cell,
            cell_h: args.cell,
            background: [0.12, 0.12, 0.14],
            ..SheetOptions::default()
        };
        let (sheet, _, _) = render_sheet(&views, &options).context("cannot render the preview")?;
        sheet.write_png(&staging.path().join("preview.png"))?;
        report.outputs.preview = Some("preview.png".into());
        report.outputs.preview_frames = kept.iter().map(|(i, _)| *i).collect();
        report.timings_ms.preview = ms(t2.elapsed());
    }

    report.timings_ms.total = ms(t_total.elapsed());
    let json = serde_json::to_vec_pretty(&report).context("cannot serialise the report")?;
    write_atomic_bytes(&staging.path().join("report.json"), &json)?;
    staging.commit()?;
    Ok(Outcome {
        report,
        out: args.out.clone(),
    })
}

fn fill_character_report(report: &mut Report, ch: &mien_core::rig::Character, rig: &RigData) {
    let c = &mut report.character;
    c.source = ch.source.clone();
    c.mesh_instances = rig.instances.len();
    c.vertices = rig.vertex_count();
    c.triangles = rig.triangles.len();
    c.morph_targets = rig.weight_count as usize;
    c.morph_entries = rig.morph_target.len();
    c.skin_joints = ch.skins.iter().map(|s| s.joints.len()).collect();
    c.clips = (0..ch.clips.len())
        .map(|i| load::clip_label(ch, i))
        .collect();
    c.required_extensions = ch.required_extensions.clone();
    c.notes = ch
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.field, n.message))
        .collect();
}

/// Evenly spaced frame indices for the contact sheet (first and last included), ascending, unique.
pub fn sheet_indices(frames: u32, want: u32) -> Vec<u32> {
    let k = want.min(frames);
    if k == 0 {
        return Vec::new();
    }
    if k == 1 {
        return vec![0];
    }
    let mut v: Vec<u32> = (0..k)
        .map(|j| ((f64::from(j) * f64::from(frames - 1) / f64::from(k - 1)).round()) as u32)
        .collect();
    v.dedup();
    v
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

/// Median triangle edge length of the posed rest positions (metres); 1 cm when there are no
/// triangles.
fn median_edge(rig: &RigData, pos: &[[f32; 3]]) -> f32 {
    let mut e: Vec<f32> = rig
        .triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| {
            let (a, b) = (pos[a as usize], pos[b as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .filter(|l| l.is_finite() && *l > 0.0)
        .collect();
    if e.is_empty() {
        return 0.01;
    }
    let mid = e.len() / 2;
    *e.select_nth_unstable_by(mid, f32::total_cmp).1
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
