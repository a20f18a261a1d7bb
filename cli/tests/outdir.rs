//! The output folder is all-or-nothing: a run's result is the whole folder, staged beside it and
//! swapped in by renames. Refused folders stay untouched; an interrupted run leaves no staging
//! folder and the previous results intact (exit 130); concurrent runs end with one consistent run;
//! stale folders of dead runs are cleaned up.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{animate, command, frame_count, leftovers, names, report, triangle_gltf};

/// A small previous run in `out` (2 frames of the triangle); returns its report bytes.
fn previous_run(dir: &Path, out: &Path) -> Vec<u8> {
    let tri = triangle_gltf(dir, "tri", [0.0; 3], Some(1.0));
    let r = animate(
        out,
        &[
            "--character",
            tri.to_str().unwrap(),
            "--frames",
            "2",
            "--sheet",
            "1",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(frame_count(out), 2);
    std::fs::read(out.join("report.json")).unwrap()
}

#[test]
fn a_folder_named_report_json_is_refused_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("report.json")).unwrap();
    std::fs::write(out.join("report.json/mine.txt"), b"keep me").unwrap();
    let r = animate(&out, &["--frames", "1", "--sheet", "0"]);
    assert!(!r.ok(), "must be refused: {}", r.stdout);
    assert!(
        r.stderr.contains("--out") && r.stderr.contains("report.json"),
        "{}",
        r.stderr
    );
    assert!(r.secs < 1.0, "refused before any work: took {} s", r.secs);
    assert_eq!(
        std::fs::read(out.join("report.json/mine.txt")).unwrap(),
        b"keep me"
    );
    assert_eq!(names(&out), ["report.json"]);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn anything_mien_does_not_write_is_refused() {
    for (rel, is_dir) in [
        ("notes.txt", false),
        ("frames/readme.txt", false),
        ("frames/frame_abc.ply", false),
        ("frames/sub", true),
        (".hidden", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("frames")).unwrap();
        std::fs::write(out.join("frames/frame_00000.ply"), b"old").unwrap();
        if is_dir {
            std::fs::create_dir_all(out.join(rel)).unwrap();
        } else {
            std::fs::write(out.join(rel), b"mine").unwrap();
        }
        let r = animate(&out, &["--frames", "1", "--sheet", "0"]);
        assert!(!r.ok(), "{rel}: must be refused");
        let shown = rel.rsplit('/').next().unwrap();
        assert!(r.stderr.contains(shown), "{rel}: {}", r.stderr);
        assert!(out.join(rel).exists(), "{rel} was removed");
        assert!(out.join("frames/frame_00000.ply").exists());
    }
}

#[test]
fn the_working_directory_and_home_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious.txt"), b"x").unwrap();
    let mut c = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--frames",
        "1",
        "--out",
        ".",
    ]);
    c.current_dir(dir.path());
    let r = common::finish(c);
    assert!(!r.ok());
    assert!(r.stderr.contains("working directory"), "{}", r.stderr);
    assert_eq!(names(dir.path()), ["precious.txt"]);

    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let mut c = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--frames",
        "1",
        "--out",
        home.to_str().unwrap(),
    ]);
    c.env("HOME", &home);
    let r = common::finish(c);
    assert!(!r.ok());
    assert!(r.stderr.contains("home folder"), "{}", r.stderr);
    assert!(names(&home).is_empty());
}

#[test]
fn the_root_folder_is_refused() {
    // Safe even if the check regressed: the character does not exist, so nothing would be written.
    let r = animate(
        Path::new("/"),
        &[
            "--character",
            "/nonexistent/head.glb",
            "--frames",
            "1",
            "--sheet",
            "0",
            "--ply",
            "none",
        ],
    );
    assert!(!r.ok());
    assert!(r.stderr.contains("root folder"), "{}", r.stderr);
}

#[test]
fn a_signal_during_a_long_load_exits_130_leaving_nothing() {
    // Building the 15k-vertex built-in head with its 52 targets takes about a second in a test build,
    // with no check in between: the handler cleans up and exits itself after its grace period if the
    // run does not stop first.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--frames",
        "3",
        "--out",
        out.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(30) {
            child.kill().ok();
            panic!("the run did not stop within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = String::from_utf8_lossy(&child.wait_with_output().unwrap().stderr).into_owned();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(!out.exists());
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

/// Start a long run into `out`, wait until it is writing frames, send `signal`; it must exit 130
/// saying nothing was written, leave no staging folder and the previous results as they were.
fn interrupted(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let before = previous_run(dir.path(), &out);
    let mut child = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--fps",
        "200",
        "--sheet",
        "2",
        "--out",
        out.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    let staging = dir.path().join(format!(".out.mien-staging-{}", child.id()));
    let t = Instant::now();
    while names(&staging.join("frames")).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "no frames staged in {}",
            staging.display()
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(20) {
            child.kill().ok();
            panic!("SIG{signal}: the run did not stop within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out_text = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out_text.stderr);
    assert_eq!(status.code(), Some(130), "SIG{signal}: {stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "SIG{signal} left {:?}",
        names(dir.path())
    );
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), before);
    assert_eq!(frame_count(&out), 2, "the previous frames are intact");
}

#[test]
fn sigint_leaves_the_previous_results_and_no_staging() {
    interrupted("INT");
}

#[test]
fn sigterm_leaves_the_previous_results_and_no_staging() {
    interrupted("TERM");
}

#[test]
fn concurrent_runs_end_with_one_consistent_run() {
    let dir = tempfile::tempdir().unwrap();
    let tri = triangle_gltf(dir.path(), "tri", [0.0; 3], Some(10.0));
    let out = dir.path().join("out");
    for round in 0..10 {
        let children: Vec<_> = ["4", "5"]
            .iter()
            .map(|n| {
                command(&[
                    "animate",
                    "--quiet",
                    "--backend",
                    "cpu",
                    "--character",
                    tri.to_str().unwrap(),
                    "--frames",
                    n,
                    "--sheet",
                    "1",
                    "--out",
                    out.to_str().unwrap(),
                ])
                .spawn()
                .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            let e = String::from_utf8_lossy(&o.stderr);
            assert!(
                o.status.success() || e.contains("kept replacing"),
                "round {round}: {e}"
            );
        }
        let r = report(&out);
        let n = r["frames"]["count"].as_u64().unwrap();
        assert!(n == 4 || n == 5, "round {round}: {n}");
        assert_eq!(
            frame_count(&out) as u64,
            n,
            "round {round}: the report and the frames come from one run"
        );
        assert_eq!(r["outputs"]["ply_files"].as_u64(), Some(n));
        assert_eq!(names(&out), ["frames", "preview.png", "report.json"]);
        assert!(
            leftovers(dir.path()).is_empty(),
            "round {round}: {:?}",
            names(dir.path())
        );
    }
}

/// `chattr ±i path`; false when the filesystem or the user cannot.
fn chattr(flag: &str, path: &Path) -> bool {
    Command::new("chattr")
        .args([flag, path.to_str().unwrap()])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn an_immutable_report_still_ends_with_one_consistent_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    previous_run(dir.path(), &out);
    if !chattr("+i", &out.join("report.json")) {
        eprintln!("notice: chattr +i is not available here; skipping");
        return;
    }
    let tri = dir.path().join("tri.gltf");
    let r = animate(
        &out,
        &[
            "--character",
            tri.to_str().unwrap(),
            "--frames",
            "5",
            "--sheet",
            "1",
        ],
    );
    // Whatever happened, the folder holds one run: the new one (5 frames) or the old (2).
    let n = report(&out)["frames"]["count"].as_u64().unwrap();
    let consistent = frame_count(&out) as u64 == n;
    // Undo the flag wherever the old report went, so the temporary folder can be removed.
    for name in leftovers(dir.path()) {
        chattr("-i", &dir.path().join(name).join("report.json"));
    }
    chattr("-i", &out.join("report.json"));
    assert!(
        consistent,
        "report says {n} frames, frames/ holds {}",
        frame_count(&out)
    );
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(n, 5);
    assert!(
        r.stdout.contains("could not be removed"),
        "the leftover is reported:\n{}",
        r.stdout
    );
}

#[test]
fn an_immutable_output_folder_is_refused_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let before = previous_run(dir.path(), &out);
    if !chattr("+i", &out) {
        eprintln!("notice: chattr +i is not available here; skipping");
        return;
    }
    let r = animate(&out, &["--frames", "3", "--sheet", "0", "--ply", "none"]);
    chattr("-i", &out);
    assert!(!r.ok());
    assert!(r.stderr.contains("cannot be moved aside"), "{}", r.stderr);
    assert!(!r.stderr.contains("rig"), "{}", r.stderr);
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), before);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn stale_folders_of_dead_runs_are_cleaned_up() {
    // A pid above the kernel's maximum (2^22) never names a live process.
    let dead = 4_194_305u32;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    previous_run(dir.path(), &out);
    let stale = dir.path().join(format!(".out.mien-staging-{dead}"));
    std::fs::create_dir_all(stale.join("frames")).unwrap();
    std::fs::write(stale.join("frames/frame_00000.ply"), b"partial").unwrap();
    // A folder of another name is not ours to touch.
    let other = dir.path().join(format!(".other.mien-staging-{dead}"));
    std::fs::create_dir(&other).unwrap();
    let tri = dir.path().join("tri.gltf");
    let r = animate(
        &out,
        &[
            "--character",
            tri.to_str().unwrap(),
            "--frames",
            "1",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    assert!(!stale.exists());
    assert!(other.exists());
    let notes = report(&out)["outputs"]["notes"].to_string();
    assert!(notes.contains("removed"), "{notes}");

    // An interrupted commit that moved the folder aside: the next run puts it back first.
    let old = dir.path().join(format!(".out.mien-old-{dead}"));
    std::fs::rename(&out, &old).unwrap();
    let r = animate(
        &out,
        &[
            "--character",
            tri.to_str().unwrap(),
            "--frames",
            "3",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    assert!(!old.exists());
    assert!(
        report(&out)["outputs"]["notes"]
            .to_string()
            .contains("restored"),
        "{}",
        report(&out)["outputs"]["notes"]
    );
    assert_eq!(frame_count(&out), 3);
}

#[test]
fn a_run_replaces_the_whole_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    previous_run(dir.path(), &out);
    let tri = dir.path().join("tri.gltf");
    let r = animate(
        &out,
        &[
            "--character",
            tri.to_str().unwrap(),
            "--frames",
            "1",
            "--sheet",
            "0",
            "--ply",
            "none",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(
        names(&out),
        ["report.json"],
        "no frames or preview of the previous run"
    );
    assert_eq!(report(&out)["outputs"]["ply_layout"], "none");
}
