//! `mien bench`: a quick CPU run writes bench.json with the documented keys and a row per batch ×
//! lift whose numbers are consistent with each other; `--export` writes a manifest and arrays the
//! peers read; unknown backends and workloads are refused.

mod common;

use std::process::Command;

use serde_json::Value;

fn mien() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mien"))
}

#[test]
fn quick_cpu_run_writes_bench_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = mien()
        .args([
            "bench",
            "--quick",
            "--backend",
            "cpu",
            "--workload",
            "W1",
            "--frames",
            "3",
            "--quiet",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("µs/frame") && stdout.contains("% copy"),
        "{stdout}"
    );
    let j: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("bench.json")).unwrap()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["bench.json", "table.txt"] {
            let mode = std::fs::metadata(dir.path().join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(
                mode & 0o044,
                0o044,
                "{f} is not readable by others: {mode:o}"
            );
        }
    }
    for key in [
        "machine",
        "devices",
        "date",
        "command",
        "frames",
        "conventions",
        "workloads",
        "rows",
        "copy_baselines",
    ] {
        assert!(j.get(key).is_some(), "bench.json lacks {key}");
    }
    assert!(j["machine"]["threads"].as_u64().unwrap() >= 1);
    assert_eq!(j["command"][1], "bench");
    assert_eq!(j["devices"][0]["backend"], "cpu");
    let rows = j["rows"].as_array().unwrap();
    // --quick: batches 1 and 16; lift off, debug and surface.
    assert_eq!(rows.len(), 6);
    let lifts: Vec<&str> = rows.iter().map(|r| r["lift"].as_str().unwrap()).collect();
    assert_eq!(
        lifts,
        ["off", "debug", "surface", "off", "debug", "surface"]
    );
    for r in rows {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["frames"], 3);
        let us = r["us_per_frame"].as_f64().unwrap();
        let batch = r["batch"].as_f64().unwrap();
        let per_char = r["bytes_per_character"].as_f64().unwrap();
        assert_eq!(r["bytes_per_frame"].as_f64().unwrap(), per_char * batch);
        let cps = r["characters_per_s"].as_f64().unwrap();
        assert!((cps - batch / (us * 1e-6)).abs() <= 1e-6 * cps);
        // Frames in flight: a time per frame, and frames per second its inverse.
        let fl = r["in_flight_us_per_frame"].as_f64().unwrap();
        let fps = r["frames_per_s_in_flight"].as_f64().unwrap();
        assert!(fl > 0.0 && (fps - 1e6 / fl).abs() <= 1e-6 * fps, "{r}");
        let gbs = r["gb_per_s"].as_f64().unwrap();
        assert!((gbs - per_char * batch / (us * 1e-6) / 1e9).abs() <= 1e-6 * gbs);
        let copy = r["copy"]["gb_per_s"].as_f64().unwrap();
        assert!(
            (r["pct_of_copy"].as_f64().unwrap() - 100.0 * gbs / copy).abs()
                < 1e-6 * gbs.max(1.0) * 100.0
        );
    }
    // The debug lift adds its bytes: V·28 read + V·52 written per character; the surface lift
    // V·24 + T·12 + G·48 read and G·52 written for its G gaussians on W1's T triangles.
    let w = &j["workloads"][0];
    let v = w["vertices"].as_u64().unwrap();
    let bytes = |k: &str, rw: &str| w["bytes_per_character"][k][rw].as_u64().unwrap();
    assert_eq!(
        bytes("lift_debug", "reads") - bytes("lift_off", "reads"),
        v * 28
    );
    assert_eq!(
        bytes("lift_debug", "writes") - bytes("lift_off", "writes"),
        v * 52
    );
    let g = w["surface_gaussians"].as_u64().unwrap();
    assert!((90_000..=110_000).contains(&g), "{g} surface gaussians");
    let t = mien_core::rig::RigData::from_character(
        &mien_core::io::gltf::import_gltf(&common::data("facecap/facecap.glb")).unwrap(),
    )
    .unwrap()
    .triangles
    .len() as u64;
    assert_eq!(
        bytes("lift_surface", "reads") - bytes("lift_off", "reads"),
        v * 24 + t * 12 + g * 48
    );
    assert_eq!(
        bytes("lift_surface", "writes") - bytes("lift_off", "writes"),
        g * 52
    );
    for r in rows {
        let want = match r["lift"].as_str().unwrap() {
            "off" => 0,
            "debug" => v,
            _ => g,
        };
        assert_eq!(r["gaussians"].as_u64().unwrap(), want, "{r}");
    }
    assert!(dir.path().join("table.txt").is_file());
}

#[test]
fn export_writes_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let out = mien()
        .args(["bench", "--workload", "W6", "--export"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("W6/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        (
            m["workload"].as_str(),
            m["kind"].as_str(),
            m["vertices"].as_u64(),
            m["batch"].as_u64()
        ),
        (Some("W6"), Some("skin"), Some(3273), Some(16))
    );
    for name in ["rest", "joints", "weights", "matrices", "expected"] {
        let file = m["arrays"][name]["file"].as_str().unwrap();
        assert!(dir.path().join("W6").join(file).is_file(), "{name}");
    }
    assert_eq!(
        m["arrays"]["matrices"]["shape"],
        serde_json::json!([16, 19, 4, 4])
    );
}

#[test]
fn unknown_names_are_refused() {
    for args in [["--backend", "metal"], ["--workload", "W9"]] {
        let out = mien()
            .args(["bench", "--quick", "--quiet"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("unknown"), "{err}");
    }
}

/// Conflicting or impossible arguments are refused with a message naming the flag, before any
/// workload is built or any file written.
#[test]
fn conflicting_and_impossible_arguments_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let file_s = file.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--export".into(), p("e"), "--out".into(), p("o")],
            "--export writes",
        ),
        (
            vec!["--export".into(), p("e"), "--plot".into(), p("q")],
            "drop --plot",
        ),
        (
            vec!["--plot".into(), p("q"), "--batch".into(), "4".into()],
            "--plot sweeps",
        ),
        (vec!["--frames".into(), "0".into()], "--frames"),
        (vec!["--frames".into(), "100001".into()], "--frames 100001"),
        (vec!["--batch".into(), "200001".into()], "--batch 200001"),
        (
            vec!["--batch".into(), "1,16,1".into()],
            "--batch: `1` is named twice",
        ),
        (
            vec!["--export".into(), p("e"), "--allow-software".into()],
            "drop --allow-software",
        ),
        (
            vec!["--plot".into(), file.display().to_string()],
            "not a folder",
        ),
        (vec!["--workload".into(), "W1,w1".into()], "named twice"),
        (
            vec![
                "--backend".into(),
                "cpu".into(),
                "--workload".into(),
                "W6".into(),
                "--out".into(),
                "/".into(),
            ],
            "is the root folder",
        ),
        (vec!["--backend".into(), "cpu,CPU".into()], "named twice"),
        (
            vec![
                "--backend".into(),
                "cpu".into(),
                "--workload".into(),
                "W5".into(),
                "--out".into(),
                file_s,
            ],
            "not a folder",
        ),
    ];
    for (args, expect) in cases {
        let out = mien()
            .arg("bench")
            .arg("--quiet")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    for name in ["e", "o", "q"] {
        assert!(!dir.path().join(name).exists(), "{name} was written");
    }
}

/// `--export` refuses a folder that is not empty (an older export's arrays would stay and the
/// peers would read them) and writes nothing when a later workload is unknown.
#[test]
fn export_needs_an_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.npy"), "x").unwrap();
    let out = mien()
        .args(["bench", "--workload", "W6", "--export"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not empty"), "{err}");
    assert!(!dir.path().join("W6").exists());
    let fresh = dir.path().join("fresh");
    let out = mien()
        .args(["bench", "--workload", "W6,W9", "--export"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!fresh.exists(), "a partial export was written");
}

/// A CPU row whose characters cannot fit in host memory is reported n/a (with the estimate),
/// not attempted: the run does not abort and exits 0.
#[test]
fn a_cpu_row_past_host_memory_is_not_applicable() {
    let out = mien()
        .args([
            "bench",
            "--backend",
            "cpu",
            "--workload",
            "W5",
            "--batch",
            "200000",
            "--lift",
            "debug",
            "--frames",
            "1",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("n/a: needs about"), "{stdout}");
}

/// A run that fails before writing leaves no `--out` folder behind (it created it; nothing was
/// written), and the files of a run that succeeds are readable by others (0644 before the umask).
#[test]
fn a_failed_run_leaves_no_out_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("new");
    let out = mien()
        .args(["bench", "--quiet", "--backend", "cpu", "--workload", "W1"])
        .arg("--data")
        .arg(dir.path().join("no-such-data"))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("facecap"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out_dir.exists(), "the --out folder was left behind");
}

/// An interrupted `mien bench --out NEW` exits 130 and leaves no folder behind (it created it and
/// wrote nothing), whether the signal lands between rows or inside a long one.
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_out_folder() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("new");
    let mut child = mien()
        .args(["bench", "--quiet", "--backend", "cpu", "--workload", "W6"])
        .args(["--batch", "64", "--frames", "100000"])
        .arg("--out")
        .arg(&out_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !out_dir.exists() {
        assert!(t.elapsed() < Duration::from_secs(60), "no --out folder");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!out_dir.exists(), "the --out folder was left behind");
}

/// `--dynamics`: the built-in body with its cape and groom, Sintel's full groom and the DNA rig on the CPU, one
/// row each, written to bench.json with figures that agree with each other (mean frame = sim +
/// draw, characters/s = batch / median frame), the gaussians each character writes (the body's with its cape
/// and 134,400 strand gaussians; Sintel's 11,400 × 15), and a host simulation that took time.
#[test]
fn dynamics_rows_time_whole_characters_with_cloth_and_hair() {
    let dir = tempfile::tempdir().unwrap();
    let out = mien()
        .args([
            "bench",
            "--dynamics",
            "--backend",
            "cpu",
            "--batch",
            "2",
            "--frames",
            "2",
            "--quick",
            "--quiet",
            "--data",
        ])
        .arg(common::data(""))
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("characters/s"), "{stdout}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("bench.json")).unwrap()).unwrap();
    let rows = doc["dynamics_rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["batch"], 2);
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!(f("sim_us") > 0.0 && f("draw_us") > 0.0, "{r}");
        // Two frames: the median is their mean.
        assert!((f("mean_frame_us") - f("sim_us") - f("draw_us")).abs() < 1e-6 * f("frame_us"));
        assert!((f("frame_us") - f("mean_frame_us")).abs() < 1e-6 * f("frame_us"));
        assert!(
            (f("characters_per_s") - 2.0 / (f("frame_us") * 1e-6)).abs()
                < 1e-6 * f("characters_per_s")
        );
        assert!(r["gpu_us"].is_null());
    }
    assert_eq!(rows[0]["workload"], "body");
    assert!(rows[0]["gaussians"].as_u64().unwrap() > 134_400 + 504);
    assert_eq!(rows[1]["workload"], "sintel");
    assert_eq!(rows[1]["gaussians"], 11_400 * 15);
    // The DNA rig poses without a lift: RigLogic, morph and skin only.
    assert_eq!(rows[2]["workload"], "dna");
    assert_eq!(rows[2]["gaussians"], 0);
    assert_eq!(doc["frames"], 2);
}

/// `--dynamics` refuses the rig table's workloads and its lift, export and sweep flags, naming them.
#[test]
fn dynamics_refuses_what_it_does_not_take() {
    for (args, says) in [
        (&["--workload", "W1"][..], "unknown dynamics workload `W1`"),
        (&["--workload", "body,body"][..], "named twice"),
        (&["--lift", "surface"][..], "drop --lift"),
        (&["--plot", "x"][..], "drop --plot"),
    ] {
        let out = mien()
            .args(["bench", "--dynamics", "--backend", "cpu"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The rig table and the whole characters in one run (issue 28 item 6): `W6` and `body` on `cpu`
/// and `cpu-fast` at batches 1 and 3 give four rig rows and four body rows in one bench.json,
/// the body rows in the table with lift `full` and in the split table below it, `cpu-fast`'s body
/// posed through the fast path and timed like the CPU's.
#[test]
fn the_main_table_has_the_body_rows_on_the_same_backends_and_batches() {
    let dir = tempfile::tempdir().unwrap();
    let out = mien()
        .args([
            "bench",
            "--backend",
            "cpu,cpu-fast",
            "--workload",
            "W6,body",
            "--batch",
            "1,3",
            "--lift",
            "off",
            "--frames",
            "2",
            "--quick",
            "--quiet",
            "--data",
        ])
        .arg(common::data(""))
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("bench.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let dyn_rows = doc["dynamics_rows"].as_array().unwrap();
    let keys = |rs: &[Value]| -> Vec<(String, String, u64)> {
        rs.iter()
            .map(|r| {
                (
                    r["backend"].as_str().unwrap().to_owned(),
                    r["workload"].as_str().unwrap().to_owned(),
                    r["batch"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let want = |w: &str| -> Vec<(String, String, u64)> {
        ["cpu", "cpu-fast"]
            .iter()
            .flat_map(|b| [1, 3].map(|n| ((*b).to_owned(), w.to_owned(), n)))
            .collect()
    };
    assert_eq!(keys(rows), want("W6"));
    assert_eq!(keys(dyn_rows), want("body"));
    for r in dyn_rows {
        assert_eq!(r["status"], "ok", "{r}");
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!(f("sim_us") > 0.0 && f("frame_us") > f("sim_us"), "{r}");
    }
    let table = std::fs::read_to_string(dir.path().join("table.txt")).unwrap();
    let body_lines = table
        .lines()
        .filter(|l| !l.starts_with('#') && l.split_whitespace().nth(1) == Some("body"));
    // Four in the main table (lift `full`) and four in the split table.
    assert_eq!(body_lines.clone().count(), 8, "{table}");
    assert_eq!(
        body_lines.filter(|l| l.contains(" full ")).count(),
        4,
        "{table}"
    );
}

/// The whole characters have no arrays to export and no lift choice.
#[test]
fn body_rows_refuse_export_and_lift() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec![
                "--workload".to_owned(),
                "W6,body".into(),
                "--export".into(),
                dir.path().join("x").display().to_string(),
            ],
            "no arrays to export",
        ),
        (
            vec![
                "--workload".to_owned(),
                "sintel".into(),
                "--lift".into(),
                "surface".into(),
            ],
            "drop --lift",
        ),
        (
            vec!["--workload".to_owned(), "hair".into()],
            "unknown workload `hair`",
        ),
    ] {
        let out = mien().arg("bench").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!dir.path().join("x").exists());
}

/// `--export` is all-or-nothing: stopped while it writes, it leaves no export (neither the folder
/// nor its staging sibling), and the message names the export folder.
#[test]
fn an_interrupted_export_leaves_nothing() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("exp");
    let mut child = mien()
        .args(["bench", "--workload", "W1,W2,W3,W4,W5,W6", "--export"])
        .arg(&out_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the staging folder: the export has begun writing.
    let t = Instant::now();
    let staging = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().contains("mien-staging"))
    };
    while !staging(dir.path()) {
        assert!(t.elapsed() < Duration::from_secs(120), "no staging folder");
        if child.try_wait().unwrap().is_some() {
            // The whole export finished before a stop could be sent: nothing to check here.
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(0) {
        // It finished in the instant before the signal: the export is complete.
        assert!(out_dir.join("W6/manifest.json").is_file());
        return;
    }
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        !out_dir.exists(),
        "a partial export was left at {}",
        out_dir.display()
    );
    assert!(!staging(dir.path()), "the staging folder was left behind");
}
