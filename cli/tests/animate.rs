//! `mien animate` end to end: the built-in default and real characters. Each run's `.ply` files parse
//! and hold one splat per posed vertex, the PNG is non-empty and not a single colour, the report
//! says what happened, and selected frames equal the library's own posing at the same media time.

use std::path::{Path, PathBuf};
use std::process::Command;

use mien_core::anim::Drive;
use mien_core::io::ply::read_splat_ply;
use mien_core::rig::{Character, RigBackend, RigControls, RigData};
use mien_cpu::{CpuEncoder, CpuRigBackend};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// Run `mien` with `args`; returns (exit success, stdout, stderr).
fn mien(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(args)
        .output()
        .expect("spawn mien");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn animate(out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["animate", "--quiet", "--out", out.to_str().unwrap()];
    // These tests read the frames back as .ply (SPZ is the default).
    if !extra.contains(&"--format") {
        args.extend_from_slice(&["--format", "ply"]);
    }
    args.extend_from_slice(extra);
    let (ok, stdout, stderr) = mien(&args);
    assert!(ok, "mien {args:?} failed:\n{stderr}\n{stdout}");
    assert!(
        stdout.contains("report.json"),
        "summary names the report:\n{stdout}"
    );
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// The PNG decodes, is the advertised size, and has more than a handful of distinct colours.
fn check_png(path: &Path) {
    let img = image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8();
    assert!(img.width() >= 64 && img.height() >= 64);
    let mut colours: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 50,
        "{}: only {} distinct colours",
        path.display(),
        colours.len()
    );
}

/// Pose `character` with `drive` at `t` through the library (the CLI's own path, independently
/// assembled here) and return world positions.
fn library_pose(ch: &Character, drive: &mut Drive, t: f64) -> Vec<[f32; 3]> {
    let rig = RigData::from_character(ch).unwrap();
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    drive.pose_at(ch, &rest, t, &mut pose);
    let (mut locals, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&pose, &mut locals, &mut world);
    let mut controls = RigControls::default();
    rig.controls_from_pose(&pose, &world, &mut controls);
    let mut b = CpuRigBackend::new();
    let h = b.upload(&rig).unwrap();
    b.set_controls(h, &controls).unwrap();
    b.encode(&mut CpuEncoder::default()).unwrap();
    b.read_vertices(h).unwrap().positions
}

fn check_frame_equals(ply: &Path, want: &[[f32; 3]]) {
    let cloud = read_splat_ply(ply).unwrap();
    assert_eq!(cloud.center.len(), want.len(), "{}", ply.display());
    for (i, (g, w)) in cloud.center.iter().zip(want).enumerate() {
        assert_eq!(
            g,
            w,
            "{} splat {i}: centre {g:?} vs library {w:?}",
            ply.display()
        );
    }
}

#[test]
fn the_default_built_in_body_walks_talks_and_swings_its_ponytail() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mien-out");
    let r = animate(&out, &["--fps", "10", "--ply", "dc", "--sheet", "4"]);
    // Locomotion at the walk speed measured from the clip (made for 1.2 m/s), the built-in
    // performance on the face, feet placed, the ponytail's three spring bones.
    assert_eq!(r["animation"]["kind"], "locomotion", "{}", r["animation"]);
    let name = r["animation"]["name"].as_str().unwrap();
    assert!(name.contains("idle `idle`, walk `walk`"), "{name}");
    let body = &r["body"];
    assert_eq!(body["character_file"]["file"], "builtin-body");
    let v = body["character_file"]["speed_m_s"].as_f64().unwrap();
    assert!((v - 1.2).abs() < 0.01, "walk speed {v}");
    assert_eq!(body["spring_bones"]["joints"], 3);
    assert_eq!(r["character"]["morph_targets"], 52);
    let frames = r["frames"]["count"].as_u64().unwrap();
    assert_eq!(frames, 61, "the 6 s performance at 10 fps");
    // The face talks: the performance's channels bind to the head.
    assert!(r["animation"]["binding"].to_string().contains("jawOpen"));
    // The legs move: a foot's splats are elsewhere half a stride later.
    let a = read_splat_ply(&out.join("frames/frame_00000.ply")).unwrap();
    let b = read_splat_ply(&out.join("frames/frame_00005.ply")).unwrap();
    let low_moved = a
        .center
        .iter()
        .zip(&b.center)
        .filter(|(p, _)| p[1] < 0.15)
        .map(|(p, q)| (p[2] - q[2]).abs())
        .fold(0.0f32, f32::max);
    assert!(low_moved > 0.1, "feet moved {low_moved} m along z");
    check_png(&out.join("preview.png"));
}

#[test]
fn builtin_head_runs_and_writes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mien-out");
    let r = animate(
        &out,
        &["--character", "builtin", "--fps", "10", "--ply", "dc"],
    );
    let frames = r["frames"]["count"].as_u64().unwrap();
    let verts = r["character"]["vertices"].as_u64().unwrap();
    assert!(frames >= 40, "a few seconds at 10 fps: {frames}");
    assert!(verts > 1000);
    assert_eq!(r["animation"]["kind"], "builtin");
    assert_eq!(
        r["character"]["morph_targets"],
        52 * r["character"]["mesh_instances"].as_u64().unwrap()
    );
    assert_eq!(r["outputs"]["ply_files"].as_u64().unwrap(), frames);
    // The surface lift by default: the report's gaussian count in every frame, textured by the
    // built-in head's vertex colours.
    assert_eq!(r["splats"]["lift"], "surface");
    let g = r["splats"]["gaussians"].as_u64().unwrap();
    assert!(
        g >= r["splats"]["surface"]["triangles"].as_u64().unwrap(),
        "at least one per triangle"
    );
    assert_eq!(
        r["splats"]["surface"]["colors"]["plain_triangles"],
        r["splats"]["surface"]["triangles"]
    );
    for i in [0, frames / 2, frames - 1] {
        let cloud = read_splat_ply(&out.join(format!("frames/frame_{i:05}.ply"))).unwrap();
        assert_eq!(cloud.center.len() as u64, g, "frame {i}: every gaussian");
    }
    check_png(&out.join("preview.png"));
    // No staging folder left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn facecap_plays_its_capture_clip() {
    let dir = tempfile::tempdir().unwrap();
    let path = data("facecap/facecap.glb");
    let r = animate(
        dir.path(),
        &[
            "--lift",
            "debug",
            "--character",
            path.to_str().unwrap(),
            "--frames",
            "12",
            "--fps",
            "2",
            "--ply",
            "dc",
        ],
    );
    assert_eq!(r["animation"]["kind"], "clip");
    let name = r["animation"]["name"].as_str().unwrap();
    assert!(
        name.contains("0: Key|Take 001|BaseLayer") && name.contains("grp_eyeLeft|Take 001"),
        "{name}"
    );
    assert_eq!(r["frames"]["count"], 12);
    // facecap's capture has 37–43 non-zero weights a frame: the active limit drops and reports some.
    assert!(r["morphs"]["peak_nonzero"].as_u64().unwrap() > 32);
    assert!(r["morphs"]["dropped"].as_u64().unwrap() > 0);
    assert!(
        !r["morphs"]["dropped_targets"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    check_png(&dir.path().join("preview.png"));
    // Frame 7 (t = 3.5 s) equals the library's posing.
    let ch = mien_core::io::gltf::import_gltf(&path).unwrap();
    let take = ch.take_of(mien_core::rig::ClipId(0));
    assert_eq!(
        take.len(),
        4,
        "facecap's take is split into 4 clips (weights, two eyes, head)"
    );
    let want = library_pose(&ch, &mut Drive::Clips(take), 3.5);
    check_frame_equals(&dir.path().join("frames/frame_00007.ply"), &want);
}

#[test]
fn facecap_driven_by_live_link_csv() {
    let dir = tempfile::tempdir().unwrap();
    let path = data("facecap/facecap.glb");
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let r = animate(
        dir.path(),
        &[
            "--lift",
            "debug",
            "--character",
            path.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--ply",
            "dc",
            "--fps",
            "15",
            // The library pose below has no head motion (tests/head_motion.rs covers it).
            "--no-head-motion",
        ],
    );
    assert_eq!(r["animation"]["kind"], "arkit");
    // 328 frames at 60 fps = 5.45 s → 82 frames at 15 fps.
    assert_eq!(r["frames"]["count"], 82);
    let binding = &r["animation"]["binding"][0]["report"];
    assert_eq!(
        binding["matched"].as_array().unwrap().len(),
        52,
        "all 52 ARKit channels bind to facecap's targets"
    );
    assert!(binding["unmatched_channels"].as_array().unwrap().is_empty());
    check_png(&dir.path().join("preview.png"));
    let ch = mien_core::io::gltf::import_gltf(&path).unwrap();
    let stream = mien_core::io::livelink_csv::read_livelink_csv(&csv).unwrap();
    let mut drive = Drive::Stream(mien_core::anim::StreamDrive::new(stream, &ch).unwrap());
    let want = library_pose(&ch, &mut drive, 40.0 / 15.0);
    check_frame_equals(&dir.path().join("frames/frame_00040.ply"), &want);
}

#[test]
fn cesium_man_walks_with_skinning() {
    let dir = tempfile::tempdir().unwrap();
    let path = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let r = animate(
        dir.path(),
        &[
            "--lift",
            "debug",
            "--character",
            path.to_str().unwrap(),
            "--fps",
            "12",
            "--ply",
            "dc",
        ],
    );
    assert_eq!(r["character"]["skin_joints"][0], 19);
    assert!(
        r["frames"]["count"].as_u64().unwrap() >= 20,
        "the walk cycle is about 2 s"
    );
    let a = read_splat_ply(&dir.path().join("frames/frame_00000.ply")).unwrap();
    let b = read_splat_ply(&dir.path().join("frames/frame_00006.ply")).unwrap();
    let moved = a
        .center
        .iter()
        .zip(&b.center)
        .filter(|(p, q)| (0..3).any(|k| (p[k] - q[k]).abs() > 1e-3))
        .count();
    assert!(
        moved > a.center.len() / 4,
        "skinning moves the body between frames ({moved} of {} moved)",
        a.center.len()
    );
    let ch = mien_core::io::gltf::import_gltf(&path).unwrap();
    let want = library_pose(
        &ch,
        &mut Drive::Clips(vec![mien_core::rig::ClipId(0)]),
        6.0 / 12.0,
    );
    check_frame_equals(&dir.path().join("frames/frame_00006.ply"), &want);
    check_png(&dir.path().join("preview.png"));
}

#[test]
fn morph_stress_test_pulse_has_all_eight_targets_active() {
    let dir = tempfile::tempdir().unwrap();
    let path = data("khronos/MorphStressTest/MorphStressTest.gltf");
    let r = animate(
        dir.path(),
        &[
            "--character",
            path.to_str().unwrap(),
            "--clip",
            "Pulse",
            "--fps",
            "10",
            "--ply",
            "dc",
        ],
    );
    assert_eq!(r["animation"]["name"], "2: Pulse");
    assert_eq!(r["morphs"]["peak_nonzero"], 8);
    assert_eq!(r["morphs"]["dropped"], 0);
    check_png(&dir.path().join("preview.png"));
}
