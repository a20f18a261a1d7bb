//! The preview's memory and work are bounded: a huge character keeps fewer sheet frames (and says
//! so), settings whose rasterising would take minutes are refused before posing, naming the flags.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::{IMPLICIT_5M, animate, bin, names, report};

/// Run `mien animate` under a 4 GiB address-space limit (`ulimit -v`); exit code and stderr.
fn animate_limited(out: &Path, extra: &[&str]) -> (Option<i32>, String, f64) {
    let t = Instant::now();
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 4194304 && exec "$@""#)
        .arg("sh")
        .arg(bin())
        .args(["animate", "--quiet", "--backend", "cpu", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into(),
        t.elapsed().as_secs_f64(),
    )
}

#[test]
fn a_five_million_vertex_character_stays_within_memory_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("implicit_5M_verts.gltf");
    std::fs::write(&file, IMPLICIT_5M).unwrap();
    let out = dir.path().join("out");
    // 64 frames kept for a 64-frame sheet would be 5M × 64 × 52 bytes = 16.6 GB.
    let (code, stderr, secs) = animate_limited(
        &out,
        &[
            "--character",
            file.to_str().unwrap(),
            "--frames",
            "64",
            "--sheet",
            "64",
            "--ply",
            "none",
        ],
    );
    assert!(!stderr.contains("memory allocation"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(secs < 120.0, "took {secs:.1} s");
    match code {
        Some(0) => {
            let r = report(&out);
            assert!(r["outputs"]["preview_frames"].as_array().unwrap().len() <= 3);
            assert!(r["outputs"]["preview_note"].is_string());
        }
        Some(1) => {
            // Refused with a clear message: the reader's limit (naming the file) or the preview's
            // work budget (naming the flags).
            assert!(
                stderr.contains("implicit_5M_verts.gltf")
                    || (stderr.contains("--sigma")
                        && stderr.contains("--cell")
                        && stderr.contains("--sheet 0")),
                "{stderr}"
            );
            assert!(
                names(dir.path()) == ["implicit_5M_verts.gltf"],
                "{:?}",
                names(dir.path())
            );
        }
        other => panic!("exit {other:?}: {stderr}"),
    }
}

#[test]
fn preview_work_over_budget_is_refused_before_posing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Gaussians of σ = 1 m on a 20 cm head fill 1024-pixel cells: 15k × 1024² ≈ 1.6·10¹⁰ visits.
    let r = animate(
        &out,
        &[
            "--lift", "debug", "--sigma", "1", "--cell", "1024", "--frames", "200", "--sheet", "2",
        ],
    );
    assert!(!r.ok());
    for n in ["--sigma", "--cell", "--sheet 0", "pixel visits"] {
        assert!(r.stderr.contains(n), "lacks {n}: {}", r.stderr);
    }
    assert!(r.secs < 30.0, "refused after {:.1} s", r.secs);
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    // The same run without a preview is fine.
    let r = animate(
        &out,
        &[
            "--lift", "debug", "--sigma", "1", "--cell", "1024", "--frames", "2", "--sheet", "0",
            "--ply", "none",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
}

#[test]
fn a_large_character_gets_fewer_sheet_frames_and_says_so() {
    // 270,000 vertices (90,000 separate triangles on a 1 mm grid): 16 Mi kept splats allow
    // ⌊16,777,216 / 270,000⌋ = 62 of the 64 sheet frames asked for.
    let dir = tempfile::tempdir().unwrap();
    let n = 270_000u32;
    let mut bin = Vec::with_capacity(n as usize * 12);
    for i in 0..n {
        let (x, y) = ((i % 600) as f32 * 1e-3, (i / 600) as f32 * 1e-3);
        for v in [x, y, 0.0f32] {
            bin.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(dir.path().join("grid.bin"), &bin).unwrap();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{len},"uri":"grid.bin"}}],
"bufferViews":[{{"buffer":0,"byteLength":{len}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":{n},"type":"VEC3","min":[0,0,0],"max":[0.599,0.449,0]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],"nodes":[{{"mesh":0}}],"scenes":[{{"nodes":[0]}}],"scene":0}}"#,
        len = bin.len()
    );
    let file = dir.path().join("grid.gltf");
    std::fs::write(&file, json).unwrap();
    let out = dir.path().join("out");
    let r = animate(
        &out,
        &[
            "--lift",
            "debug",
            "--character",
            file.to_str().unwrap(),
            "--frames",
            "64",
            "--sheet",
            "64",
            "--cell",
            "16",
            "--sigma",
            "0.0005",
            "--ply",
            "none",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&out);
    assert_eq!(
        rep["outputs"]["preview_frames"].as_array().unwrap().len(),
        62
    );
    assert_eq!(rep["outputs"]["preview_frames_requested"], 64);
    let note = rep["outputs"]["preview_note"].as_str().unwrap();
    assert!(note.contains("62 of the 64 frames"), "{note}");
    assert_eq!(
        rep["memory"]["preview_bytes"].as_u64(),
        Some(62 * 270_000 * 52)
    );
    assert!(r.stdout.contains("62 of the 64 frames"), "{}", r.stdout);
}
