//! `mien animate`: load → drive → rig (backend) → lift → .ply frames, PNG contact sheet, report.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use mien_core::io::atomic::write_atomic_bytes;
use mien_core::io::ply::{PlyOptions, ShBands, TransparentSlots, write_splat_ply_with};
use mien_core::lift::SurfaceOptions;
use mien_core::preview::write_png;
use mien_core::rig::ACTIVE_MORPH_LIMIT;
use mien_core::sink::SplatBuffers;
use mien_runtime::instance::check_drivable;
use mien_runtime::runtime::{DEFAULT_SIGMA_EDGES, NO_EDGE_M};
use mien_runtime::{
    Device, DeviceOptions, LiftKind, LiftOptions, Runtime, RuntimeOptions, Shading as RtShading,
};
use mien_runtime::{HeadJointNames, HeadMotionReport};

use crate::args::{AnimateArgs, FrameFormat, LiftChoice, PlyLayout, Shading};
use crate::interrupt;
use crate::load;
use crate::outdir::Target;
use crate::preview;
use crate::report::Report;
use crate::subject;
use crate::text::metres;
use crate::validate;

/// What `run` hands the summary printer.
pub struct Outcome {
    /// The report as written.
    pub report: Report,
    /// Output folder.
    pub out: std::path::PathBuf,
    /// Warnings from the commit (written after the report).
    pub warnings: Vec<String>,
}

/// A ground as report JSON.
fn ground_json(g: &mien_core::anim::ground::Ground) -> serde_json::Value {
    use mien_core::anim::ground::Ground;
    match g {
        Ground::None => serde_json::json!({"kind": "none"}),
        Ground::Flat { height } => serde_json::json!({"kind": "flat", "height_m": height}),
        Ground::Step {
            edge,
            direction,
            low,
            high,
        } => serde_json::json!({
            "kind": "step", "edge_xz_m": edge, "direction_xz": direction, "low_m": low, "high_m": high
        }),
        Ground::Slope {
            origin,
            height,
            direction,
            degrees,
        } => serde_json::json!({
            "kind": "slope", "origin_xz_m": origin, "height_m": height, "uphill_xz": direction, "degrees": degrees
        }),
        Ground::HeightField {
            cols, rows, cell, ..
        } => serde_json::json!({
            "kind": "height field", "cols": cols, "rows": rows, "cell_m": cell
        }),
        Ground::Mesh { triangles } => {
            serde_json::json!({"kind": "mesh", "triangles": triangles.len()})
        }
    }
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
    // A character file (`*.character.json`): the model with its parts; else a model. No
    // --character (or `builtin-body`): the built-in body with its own character file.
    let builtin_body = args
        .character
        .as_deref()
        .is_none_or(|p| p == std::path::Path::new(mien_runtime::character::BUILTIN_BODY));
    // Its locomotion walks it unless the run plays something else on its bones.
    let other_drive = args.clip.is_some() || args.arkit.is_some() || args.retarget.is_some();
    let character_file = if builtin_body && other_drive {
        None
    } else if builtin_body {
        Some(mien_runtime::character::CharacterDef::builtin_body()?)
    } else {
        args.character
            .as_deref()
            .filter(|p| p.to_string_lossy().to_ascii_lowercase().ends_with(".json"))
            .map(|p| {
                mien_runtime::character::CharacterDef::load_with(
                    p,
                    &mien_runtime::BundleOptions {
                        prefer_fp16: args.fp16.get(),
                        pose_anchors: args.pose_anchors.get(),
                        ..Default::default()
                    },
                )
            })
            .transpose()?
    };
    // The built-in body walks at its walk speed unless --speed says otherwise.
    let speed = args.speed.or_else(|| {
        builtin_body
            .then(|| character_file.as_ref()?.locomotion.map(|l| l.walk_speed))
            .flatten()
    });
    let asset = match &character_file {
        Some(c) => c.asset.clone(),
        None if builtin_body => mien_runtime::Asset::builtin_body(),
        None => load::character(args.character.as_deref())?,
    };
    interrupt::check()?;
    // A clip of another skeleton, retargeted onto the character and appended to its clips.
    let mut body = serde_json::Map::new();
    let (asset, retarget_clip) = match &args.retarget {
        Some(src) => {
            let r = crate::retarget::onto(
                &asset,
                src,
                args.retarget_clip.as_deref(),
                args.retarget_map.as_deref(),
                args.reference,
            )?;
            body.insert("retarget".into(), serde_json::to_value(&r.report)?);
            let clip = r.clip.index().to_string();
            (r.asset, Some(clip))
        }
        None => (asset, None),
    };
    let ch = asset.character();
    let builtin = asset.is_builtin();
    let animator_on = crate::animator::will_run(args, builtin)?;
    // A character file's locomotion plays its idle and walk by --speed over the rest pose.
    let locomotion = character_file.as_ref().and_then(|c| c.locomotion);
    if locomotion.is_some() && args.clip.is_some() {
        bail!(
            "--clip {}: the character file's locomotion plays its idle and walk (by --speed); leave --clip out",
            args.clip.as_deref().unwrap_or("")
        );
    }
    let clip_arg = if locomotion.is_some() {
        // The built-in body's face plays the built-in performance over its locomotion.
        (!builtin).then_some("rest")
    } else {
        retarget_clip.as_deref().or(args.clip.as_deref())
    };
    let driven = args.arkit.is_some()
        || args.speech.speech.is_some()
        || clip_arg.is_some_and(|c| c != "rest")
        || animator_on;
    if driven {
        check_drivable(&asset)?;
    }
    if asset.vertex_count() == 0 {
        bail!(
            "{}: the displayed scene has no mesh geometry to pose",
            ch.source
        );
    }
    let (drive, anim_report) = load::drive(
        &asset,
        args.arkit.as_deref(),
        args.calibration.as_deref(),
        clip_arg,
        args.speech.speech.is_some(),
        animator_on,
    )?;
    report.animation = anim_report;
    let speech = crate::speech::layer(&args.speech, args.face.as_deref(), ch)?;
    let mut span = drive.span(ch);
    if let Some(l) = locomotion {
        let name = |id: mien_core::rig::ClipId| {
            character_file
                .as_ref()
                .and_then(|c| {
                    c.clips
                        .iter()
                        .find(|(_, v)| **v == id)
                        .map(|(k, _)| k.clone())
                })
                .unwrap_or_default()
        };
        report.animation.kind = "locomotion".into();
        report.animation.name = format!(
            "locomotion: idle `{}`, walk `{}` ({} m/s) at {} m/s",
            name(l.idle),
            name(l.walk),
            mien_runtime::text::sig5(l.walk_speed),
            mien_runtime::text::sig5(speed.unwrap_or(0.0))
        );
        // Long enough to see two strides of the walk.
        let walk = &ch.clips[l.walk.index()];
        span.1 = span.1.max(2.0 * (walk.end() - walk.start()));
        report.animation.span_s[1] = span.1;
    }
    if let Some(sp) = &speech {
        span.1 = span.1.max(sp.span().1);
        report.animation.span_s[1] = span.1;
        report.animation.speech = Some(sp.report().clone());
    }
    let frames = validate::frame_count(args, span)?;
    if let Some(v) = speed {
        // Every position keeps within ±10⁶ m (the posed-frame rule): so does the walk.
        let distance = v * f64::from(frames.saturating_sub(1)) / args.fps;
        if distance > 1.0e6 {
            bail!(
                "--speed {v}: {frames} frames at {} fps walk the character {} m, past the 1000000 m every position keeps within; walk slower or for fewer frames",
                args.fps,
                crate::text::whole(distance)
            );
        }
    }
    let face = crate::animator::face_driver(args, ch, builtin, args.start)?;
    report.frames.count = frames;
    report.frames.fps = args.fps;
    report.frames.start_s = args.start;
    report.frames.span_s = [args.start, args.start + f64::from(frames - 1) / args.fps];

    // Backend and runtime: upload, the rest pose (bounds, σ), the lift.
    let (device, reason) = Device::open_with(args.backend.into(), &DeviceOptions::from_env())
        .with_context(|| format!("--backend {}", args.backend.name()))?;
    report.backend.requested = args.backend.name().into();
    report.backend.used = device.name().into();
    report.backend.reason = reason;
    report.backend.adapter = device.adapter();
    report.backend.threads = rayon_threads();
    let asset = Arc::new(asset);
    // A character bundle's branches are its lift (unless --lift names another).
    let bundle_lift = character_file
        .as_ref()
        .filter(|c| c.bundle.as_ref().is_some_and(|b| !b.branches.is_empty()))
        .map(mien_runtime::LoadedCharacter::lift_options);
    if args.capture.is_none() {
        crate::validate::lift_flags(args, bundle_lift.is_some())?;
    }
    let is_bundle = character_file.as_ref().is_some_and(|c| c.bundle.is_some());
    for (flag, set) in [
        ("--fp16", args.fp16 != crate::args::Toggle::Auto),
        (
            "--pose-anchors",
            args.pose_anchors != crate::args::Toggle::Auto,
        ),
    ] {
        if set && !is_bundle {
            bail!(
                "{flag} applies to a character bundle (a character file with bundle blocks, docs/decoders.md); this character is not one"
            );
        }
    }
    if args.lift.is_some()
        && character_file
            .as_ref()
            .is_some_and(|c| c.bundle.as_ref().is_some_and(|b| b.has_decoders()))
        && !args.quiet
    {
        eprintln!(
            "note: --lift replaces the bundle's branches: its decoders do not run (leave --lift out to lift the branches)"
        );
    }
    let options = RuntimeOptions {
        instances: 1,
        lift: Some(LiftOptions {
            kind: match (&args.capture, args.lift) {
                (Some(path), _) => {
                    let cap = mien_runtime::capture::read_bound_capture(path)
                        .with_context(|| format!("--capture {}", path.display()))?;
                    if asset.rig().is_none() {
                        bail!(
                            "--capture {}: a bound capture plays on the glTF/VRM character it was bound to; {} is a linear head pack",
                            path.display(),
                            asset.source()
                        );
                    }
                    cap.check_topology(asset.source(), asset.vertex_count(), asset.triangles())
                        .with_context(|| format!("--capture {}", path.display()))?;
                    report.splats.capture = Some(crate::report::CaptureReport {
                        file: path.display().to_string(),
                        bound_to: cap.character.clone(),
                        gaussians: cap.lift.gaussians.len() as u64,
                        joint_anchors: cap.anchors,
                    });
                    LiftKind::Capture(cap)
                }
                (None, None) if bundle_lift.is_some() => {
                    bundle_lift.clone().unwrap_or_default().kind
                }
                (None, lift) => match lift.unwrap_or(LiftChoice::Surface) {
                    LiftChoice::Debug => LiftKind::Debug,
                    LiftChoice::Surface => LiftKind::Surface(SurfaceOptions {
                        target: args.gaussians.unwrap_or(SurfaceOptions::default().target),
                        ..Default::default()
                    }),
                    LiftChoice::Texel => LiftKind::Texel(mien_core::lift::TexelOptions {
                        resolution: args
                            .texel_res
                            .unwrap_or(mien_core::lift::TexelOptions::default().resolution),
                        ..Default::default()
                    }),
                },
            },
            sigma: args.sigma.map(|s| s as f32),
            shading: match args.shading.unwrap_or(Shading::Auto) {
                Shading::Auto => RtShading::Auto,
                Shading::Tint => RtShading::Tint,
                Shading::Normal => RtShading::Normal,
                Shading::Flat => RtShading::Flat,
            },
        }),
    };
    let mut rt = Runtime::new(Arc::clone(&asset), &device, &options)?;
    if rt.needs_camera() {
        let cam = crate::bundle::camera(&rt, args.camera)?;
        rt.set_camera(cam)?;
        report.appearance = Some(crate::bundle::AppearanceReport::started(&cam));
    } else if let Some(c) = args.camera {
        bail!(
            "--camera {},{},{}: only a character bundle with a view-dependent decoder takes a camera",
            c[0],
            c[1],
            c[2]
        );
    }
    let head_names = HeadJointNames {
        head: args.head_joint.clone(),
        neck: args.neck_joint.clone(),
        eyes: args.eye_joints.clone(),
    };
    rt.instance_mut(0)?
        .set_head_motion(!args.no_head_motion)
        .set_head_joints(head_names.clone())?
        .set_drive(drive)?
        .set_speech(speech)?
        .set_face(face)?;
    // A character file's parts first; the flags below override them.
    if let Some(c) = &character_file {
        let mut inst = rt.instance_mut(0)?;
        c.apply(&mut inst)?;
        if let Some(v) = speed {
            inst.set_speed(v).context("--speed")?;
        }
        body.insert(
            "character_file".into(),
            serde_json::json!({
                "file": if builtin_body {
                    Some(mien_runtime::character::BUILTIN_BODY.to_string())
                } else {
                    args.character.as_ref().map(|p| p.display().to_string())
                },
                "clips": c.clips.keys().collect::<Vec<_>>(),
                "locomotion": c.locomotion.is_some(),
                "speed_m_s": speed.unwrap_or(0.0),
                "retarget": c.retarget,
            }),
        );
        if !matches!(c.foot, mien_runtime::FootPlacement::Off) {
            body.insert(
                "foot_ik".into(),
                serde_json::Value::from("the character file's"),
            );
        }
    } else if args.speed.is_some() {
        bail!("--speed drives a character file's locomotion: --character FILE.character.json");
    }
    // --ground moves the feet of --foot-ik, or of the character file's foot placement.
    let file_feet = character_file
        .as_ref()
        .is_some_and(|c| !matches!(c.foot, mien_runtime::FootPlacement::Off));
    if let Some(g) = &args.ground {
        if args.foot_ik.is_none() && !file_feet {
            bail!(
                "--ground: nothing stands on it; add --foot-ik auto (or a character file with foot_ik)"
            );
        }
        if args.foot_ik.is_none() {
            rt.instance_mut(0)?.set_ground(g.clone())?;
            body.insert("ground".into(), ground_json(g));
        }
    }
    // The body: foot placement on the ground, then spring bones.
    if let Some(f) = &args.foot_ik {
        let placement = if f == "auto" {
            mien_runtime::FootPlacement::Humanoid
        } else {
            let text = String::from_utf8(
                mien_core::io::read::read_file_capped(std::path::Path::new(f), 1 << 20)
                    .with_context(|| format!("--foot-ik {f}"))?,
            )
            .map_err(|_| anyhow::anyhow!("--foot-ik {f}: not UTF-8 text"))?;
            mien_runtime::FootPlacement::Def(mien_core::anim::foot::FootIkDef::from_json(&text, f)?)
        };
        let ground = args
            .ground
            .clone()
            .unwrap_or(mien_core::anim::ground::Ground::Flat { height: 0.0 });
        rt.instance_mut(0)?
            .set_foot_placement(placement)
            .with_context(|| format!("--foot-ik {f}"))?
            .set_ground(ground.clone())?;
        body.insert("foot_ik".into(), serde_json::Value::from(f.clone()));
        body.insert(
            "ground".into(),
            serde_json::Value::from(format!("{ground:?}")),
        );
    }
    // Spring bones: a character file's (its model's and its chains) unless --springs says
    // otherwise; else the model's own when it has them.
    let springs = match (args.springs, &character_file) {
        (crate::args::SpringsChoice::Auto, Some(c)) => c
            .springs
            .as_ref()
            .map(|s| (s.clone(), "the character file")),
        (crate::args::SpringsChoice::Off, _) => None,
        (choice, _) => {
            let own = asset.character().spring_bones.clone();
            if own.is_none() && choice == crate::args::SpringsChoice::On {
                bail!(
                    "--springs on: {} has no spring bones (VRMC_springBone or a VRM 0.x secondaryAnimation)",
                    asset.source()
                );
            }
            own.map(|s| (s, "the model"))
        }
    };
    rt.instance_mut(0)?
        .set_springs(springs.as_ref().map(|(s, _)| s))
        .context("--springs")?;
    if let Some((sb, from)) = &springs {
        body.insert(
            "spring_bones".into(),
            serde_json::json!({
                "source": sb.source,
                "from": from,
                "springs": sb.springs.len(),
                "joints": sb.joints.len(),
            }),
        );
    }
    if !body.is_empty() {
        report.body = Some(serde_json::Value::Object(body));
    }
    if let Some(m) = rt.instance(0)?.head_motion() {
        report.animation.notes.push(head_motion_note(m));
        report.animation.head_motion = Some(serde_json::to_value(m)?);
    }
    subject::fill_report(&mut report, &asset, rt.instance(0)?.head_driver());
    report.character.bounds_m = rt.rest_bounds();
    let lift = rt.lift().context("the runtime has no lift")?.clone();
    report.splats.lift = lift.kind.name().into();
    report.splats.gaussians = lift.slots;
    report.splats.surface = lift.bound.clone();
    let sigma = lift.sigma;
    match &lift.kind {
        LiftKind::Surface(o) => report.splats.gaussians_requested = Some(o.target),
        LiftKind::Texel(o) => report.splats.texel_resolution = Some(o.resolution),
        _ => {}
    }
    if matches!(lift.kind, LiftKind::Debug) {
        report.splats.sigma_m = Some(sigma);
        report.splats.sigma_derived = Some(lift.sigma_derived);
        report.splats.sigma_rule = Some(match (args.sigma, lift.median_edge) {
            (Some(_), _) => "--sigma".into(),
            (None, None) => format!(
                "{DEFAULT_SIGMA_EDGES} × {NO_EDGE_M} m: the rest pose has no edge of non-zero length"
            ),
            (None, Some(e)) => format!(
                "{DEFAULT_SIGMA_EDGES} × the median triangle edge, {}",
                metres(e)
            ),
        });
        report.splats.shading_requested =
            Some(format!("{:?}", args.shading.unwrap_or(Shading::Auto)).to_lowercase());
        report.splats.shading = Some(format!("{:?}", lift.shading).to_lowercase());
    }
    report.timings_ms.load = ms(t_load.elapsed());
    let range = rt.sink_range(0)?;
    let mem = rt.memory();
    report.memory.sink_slots = mem.sink_slots as u32;
    report.memory.character_slots = range.count;
    report.memory.rig_bytes = mem.rig_bytes;
    report.memory.sink_bytes = mem.sink_bytes;

    // The contact sheet: frames kept within the memory budget, raster work checked on the rest
    // pose before any frame is posed.
    let nv = range.count;
    let sheet = preview::sheet_frames(frames, args.sheet, nv);
    report.outputs.preview_frames_requested = args.sheet;
    report.outputs.preview_note.clone_from(&sheet.note);
    let mut knobs = preview::Knobs {
        sigma,
        derived: args.sigma.is_none(),
        cell: args.cell,
        yaw: preview::front_yaw(asset.character()),
        face: None,
    };
    if !sheet.indices.is_empty() {
        let rest_splats = rt.render_rest()?;
        knobs.face = preview::face_slots(asset.character(), &rest_splats, nv, &head_names);
        preview::precheck(&rest_splats, nv, sheet.indices.len(), &knobs)?;
    }
    report.outputs.preview_view = format!(
        "{}{}",
        if knobs.yaw == 0.0 {
            "front (+Z)"
        } else {
            "front (−Z, VRM 0.x)"
        },
        if knobs.face.is_some() {
            ", with a face close-up row"
        } else {
            ""
        }
    );
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
    let ext = match args.format {
        FrameFormat::Ply => "ply",
        FrameFormat::Spz => "spz",
        FrameFormat::Glb => "glb",
    };
    let mut kept: Vec<(u32, SplatBuffers)> = Vec::with_capacity(sheet_frames.len());
    let progress = progress_bar(u64::from(frames), args.quiet);
    let (mut t_anim, mut t_ply) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for i in 0..frames {
        interrupt::check()?;
        let t = args.start + f64::from(i) / args.fps;
        let t0 = Instant::now();
        let before = rt.times();
        rt.update(t)?;
        let after = rt.times();
        // The drivers' and rules' share of the update (the rig and lift passes are timed apart).
        t_anim += t0
            .elapsed()
            .saturating_sub((after.rig + after.lift).saturating_sub(before.rig + before.lift));
        let keep = sheet_frames.binary_search(&i).is_ok();
        let splats = if args.ply != PlyLayout::None || keep {
            Some(rt.splats(0)?)
        } else {
            None
        };
        if let (Some(splats), true) = (&splats, args.ply != PlyLayout::None) {
            let t1 = Instant::now();
            let path = staging
                .path()
                .join("frames")
                .join(format!("frame_{i:05}.{ext}"));
            report.outputs.splats_per_frame = match args.format {
                // `splats` is instance 0's read-out: instance-local slots, all of them.
                FrameFormat::Ply => {
                    write_splat_ply_with(&path, splats, &[splats.all()], &ply_options)?.written
                }
                FrameFormat::Spz => {
                    let st = mien_core::io::spz::write_spz(&path, splats, &[splats.all()])?;
                    report.outputs.spz_scales_clamped += st.scales_clamped;
                    st.written
                }
                FrameFormat::Glb => {
                    mien_core::io::splat_glb::write_splat_glb(&path, splats, &[splats.all()])?
                        .written
                }
            };
            report.outputs.ply_bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            report.outputs.ply_files += 1;
            t_ply += t1.elapsed();
        }
        if let (Some(splats), true) = (splats, keep) {
            kept.push((i, splats));
        }
        progress.inc(1);
    }
    rt.finish()?;
    if let Some(f) = rt.instance(0)?.face() {
        let mut a = f.final_report();
        // The instance's hash: the pose and weights after the body step, the placement, the
        // spring bones (the face's own hash would miss the feet and the chains).
        a["last_state_hash"] = serde_json::json!(format!("{:016x}", rt.instance(0)?.state_hash()));
        report.animation.animator = Some(a);
    }
    if let Some(serde_json::Value::Object(b)) = &mut report.body {
        // Frames are written in the character's own space; where the walk took it is here.
        let p = rt.instance(0)?.placement();
        b.insert(
            "final_placement".into(),
            serde_json::json!({
                "position_m": p.w_axis.truncate().to_array(),
                "frames_space": "character (apply this placement to place the frames in the world)",
            }),
        );
        let last = rt.instance(0)?.body_report();
        b.insert("last_frame".into(), serde_json::to_value(last)?);
    }
    let dynamics = rt.asset().dynamics().clone();
    if let Some(h) = rt.asset().hidden() {
        let b = report
            .body
            .get_or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(b) = b {
            b.insert(
                "hidden".into(),
                serde_json::json!({"meshes": h.meshes, "joints": h.joints, "vertices": h.count}),
            );
        }
    }
    if !dynamics.is_empty() {
        let b = report
            .body
            .get_or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(b) = b {
            let last = rt.instance(0)?.dynamics_report().clone();
            if let Some(c) = &dynamics.cloth {
                b.insert(
                    "cloth".into(),
                    serde_json::json!({
                        "mesh": c.mesh,
                        "vertices": c.count,
                        "triangles": c.triangles.len(),
                        "colliders": c.colliders.len(),
                        "cape": c.cape,
                        "splats": rt.lift().map_or(0, |l| l.cloth_slots),
                        "substeps_per_frame": c.material.substeps * c.material.motion_steps,
                        "last_frame": last.cloth,
                    }),
                );
            }
            if let Some(h) = &dynamics.hair {
                b.insert(
                    "hair".into(),
                    serde_json::json!({
                        "head_bone": h.groom.head_bone,
                        "guides": h.groom.guide_count(),
                        "strands": h.groom.child_count(),
                        "segments": h.groom.segments,
                        "splats": h.slots(),
                        "groom": h.groom.report,
                        "colliders": h.colliders.len(),
                        "last_frame": last.hair,
                    }),
                );
            }
        }
    }
    progress.finish_and_clear();
    let times = rt.times();
    report.timings_ms.animate = ms(t_anim);
    report.timings_ms.rig = ms(times.rig);
    report.timings_ms.lift = ms(times.lift);
    report.timings_ms.dynamics = ms(times.dynamics);
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
    // What the per-frame rules counted (dropped targets, clamped coefficients).
    subject::fill_counts(&mut report, &asset, rt.instance(0)?.totals());
    report.outputs.ply_layout = format!("{:?}", args.ply).to_lowercase();
    report.outputs.frame_format = ext.into();
    if args.ply == PlyLayout::None {
        std::fs::remove_dir_all(staging.path().join("frames"))
            .context("cannot tidy the staging folder")?;
    } else {
        report.outputs.ply_span = vec![
            format!("frames/frame_{:05}.{ext}", 0),
            format!("frames/frame_{:05}.{ext}", frames - 1),
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

    if let Some(a) = &mut report.appearance {
        a.finish(&rt);
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

/// The report's line on head motion: which angle channels turn which joints, or why none.
fn head_motion_note(m: &HeadMotionReport) -> String {
    let joints: Vec<String> = [
        ("head", &m.head),
        ("neck", &m.neck),
        ("left eye", &m.left_eye),
        ("right eye", &m.right_eye),
    ]
    .iter()
    .filter_map(|(role, n)| n.as_ref().map(|n| format!("{role} `{n}`")))
    .collect();
    if !m.applied && joints.is_empty() {
        format!(
            "{} head/eye angle channels not applied: no head, neck or eye joint found by standard name (name them with --head-joint, --neck-joint, --eye-joints)",
            m.channels.len()
        )
    } else if !m.applied {
        format!(
            "{} head/eye angle channels not applied (--no-head-motion)",
            m.channels.len()
        )
    } else {
        format!(
            "{} head/eye angle channels applied as joint rotations: {}",
            m.channels.len(),
            joints.join(", ")
        )
    }
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
