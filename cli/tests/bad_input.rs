//! Bad input: a message naming the file and the problem, a non-zero exit, nothing written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn mien(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(args)
        .output()
        .expect("spawn mien");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `mien animate` with `extra` must fail with a message containing every `needle`, and leave the
/// output folder without results.
fn refused(extra: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec!["animate", "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (ok, stderr) = mien(&args);
    assert!(!ok, "{args:?} must fail");
    for n in needles {
        assert!(
            stderr.contains(n),
            "{args:?}: message lacks `{n}`:\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    if out.exists() {
        let left: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

#[test]
fn corrupt_characters_are_refused_by_name() {
    for f in [
        "html_saved_as.glb",
        "crlf_stripped.glb",
        "utf8_mangled.glb",
        "truncated.glb",
    ] {
        let p = data(&format!("corrupt/{f}"));
        refused(&["--character", p.to_str().unwrap()], &[f]);
    }
}

#[test]
fn missing_and_unknown_files_are_refused() {
    refused(
        &["--character", "/nonexistent/head.glb"],
        &["/nonexistent/head.glb"],
    );
    refused(&["--character", "head.fbx"], &["head.fbx", ".glb"]);
    let facecap = data("facecap/facecap.glb");
    refused(
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            "/nonexistent/take.csv",
        ],
        &["/nonexistent/take.csv"],
    );
    refused(
        &["--character", facecap.to_str().unwrap(), "--clip", "dance"],
        &["dance", "0: Key|Take 001|BaseLayer"],
    );
}

#[test]
fn bad_streams_are_refused_with_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bad.csv");
    std::fs::write(
        &csv,
        "Timecode,BlendShapeCount,EyeBlinkLeft\n00:00:00:00.000,1,0.5\n00:00:00:01.000,1,oops\n",
    )
    .unwrap();
    let facecap = data("facecap/facecap.glb");
    refused(
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
        ],
        &["bad.csv", "EyeBlinkLeft", "oops"],
    );
    // A stream whose channels match none of the character's targets.
    let csv2 = dir.path().join("alien.csv");
    std::fs::write(
        &csv2,
        "Timecode,BlendShapeCount,Wiggle\n00:00:00:00.000,1,0.5\n00:00:00:01.000,1,0.25\n",
    )
    .unwrap();
    refused(
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            csv2.to_str().unwrap(),
        ],
        &["alien.csv", "matches any"],
    );
}

#[test]
fn bad_numbers_are_refused() {
    refused(&["--fps", "0"], &["--fps"]);
    refused(&["--fps", "NaN"], &["--fps"]);
    refused(&["--frames", "0"], &["frames"]);
    refused(&["--sigma=-1"], &["--sigma"]);
    refused(&["--start=-2"], &["--start"]);
    // A layout flag of a format the run does not write would be ignored: refused.
    refused(&["--ply", "sh3"], &["--ply sh3", "--format ply"]);
    refused(&["--ply", "sh3", "--format", "glb"], &["--ply sh3", ".glb"]);
}

#[test]
fn a_failed_run_keeps_the_previous_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (ok, e) = mien(&[
        "animate",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--fps",
        "2",
        "--ply",
        "dc",
        "--format",
        "ply",
    ]);
    assert!(ok, "{e}");
    let before = std::fs::read(out.join("report.json")).unwrap();
    let bad = data("corrupt/truncated.glb");
    let (ok, _) = mien(&[
        "animate",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--character",
        bad.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_eq!(
        std::fs::read(out.join("report.json")).unwrap(),
        before,
        "the previous report is untouched"
    );
    assert!(out.join("frames/frame_00000.ply").exists());
}

#[test]
fn inspect_describes_and_refuses() {
    let facecap = data("facecap/facecap.glb");
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(["inspect", facecap.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "KHR_mesh_quantization",
        "EXT_meshopt_compression",
        "eyeBlink_L (ARKit eyeBlinkLeft)",
        "2694",
    ] {
        assert!(text.contains(needle), "inspect lacks {needle}:\n{text}");
    }
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(["inspect", "--json", csv.to_str().unwrap()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["frames"], 328);
    assert_eq!(v["nominal_fps"], 60.0);
    // A real trained 3DGS file (45 f_rest): its SH degree is stated.
    let ply = data("splats/fruit_drops_minimal.ply");
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(["inspect", "--json", ply.to_str().unwrap()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["splats"].as_u64(), v["sh_degree"].as_u64()),
        (Some(4721), Some(3))
    );
    // SuperSplat's compressed layout, decoded by its header.
    let ply = data("splats/guitar.compressed.ply");
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(["inspect", "--json", ply.to_str().unwrap()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["splats"].as_u64(), v["sh_degree"].as_u64()),
        (Some(90_854), Some(0))
    );
    assert!(
        v["kind"]
            .as_str()
            .unwrap()
            .contains("SuperSplat compressed"),
        "{v}"
    );
    let (ok, e) = mien(&[
        "inspect",
        data("corrupt/html_saved_as.glb").to_str().unwrap(),
    ]);
    assert!(!ok && e.contains("html_saved_as.glb"), "{e}");
}
