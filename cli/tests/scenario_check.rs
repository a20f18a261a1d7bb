//! `mien scenario check` lists every independent problem (a bad character does not hide a bad
//! face, stream or speech file), with each cause said once; `mien scenario run` stopped by Ctrl-C
//! exits 130 with a message and leaves the output folder as it was.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{command, mien, names};
use serde_json::{Value, json};

fn write(dir: &Path, name: &str, doc: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, doc.to_string()).unwrap();
    p.to_str().unwrap().to_owned()
}

/// A scenario in `dir` with `character`, a face with an unknown viseme, a missing stream, a clip
/// and a missing speech file.
fn broken(dir: &Path, name: &str, character: &str) -> String {
    std::fs::write(
        dir.join("badface.json"),
        r#"{"format":"mien-face","version":1,"visemes":{"XX":{"jawOpen":1}}}"#,
    )
    .unwrap();
    write(
        dir,
        name,
        &json!({"format": "mien-scenario", "version": 1, "character": character,
        "face": "badface.json",
        "steps": [
            {"animate": {"stream": "nostream.csv"}},
            {"animate": {"clip": "dance"}},
            {"say": {"file": "nospeech.json"}},
            {"step": {"frames": 2, "dt": 0.1}}
        ]}),
    )
}

#[test]
fn check_lists_every_independent_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = mien(&["scenario", "check", &broken(d, "a.json", "missing.glb")]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    for needle in [
        "/character: ",
        "missing.glb",
        "checked once it loads",
        "/face: ",
        "XX",
        "/steps/0/animate/stream",
        "nostream.csv",
        "/steps/2/say/file",
        "nospeech.json",
        "(4 problems)",
    ] {
        assert!(r.stderr.contains(needle), "lacks `{needle}`:\n{}", r.stderr);
    }
    let character_line = r.stderr.lines().find(|l| l.contains("/character")).unwrap();
    assert_eq!(
        character_line.matches("No such file").count(),
        1,
        "the cause once: {character_line}"
    );
    // With the character loading, the clip is checked too; the bad face hides nothing.
    let r = mien(&["scenario", "check", &broken(d, "b.json", "builtin")]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    for needle in [
        "/face: ",
        "/steps/0/animate/stream",
        "/steps/1/animate/clip",
        "dance",
        "/steps/2/say/file",
        "(4 problems)",
    ] {
        assert!(r.stderr.contains(needle), "lacks `{needle}`:\n{}", r.stderr);
    }
}

#[test]
fn ctrl_c_stops_a_scenario_run_with_130_and_leaves_the_folder_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    // Captures take a while to render (about 0.1–0.3 s each at 1024 px, far longer under load).
    let scenario = |captures: usize| {
        let mut s = Vec::new();
        for k in 0..captures {
            s.push(json!({"step": {"frames": 1, "dt": 0.01}}));
            s.push(json!({"capture": {"name": format!("c{k}"), "cell": 1024}}));
        }
        json!({"format": "mien-scenario", "version": 1, "character": "builtin", "steps": s})
    };
    let short = write(d, "short.json", &scenario(1));
    let r = mien(&["scenario", "run", &short, "--out", out.to_str().unwrap()]);
    assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
    let before = std::fs::read(out.join("report.json")).unwrap();
    let long = write(d, "long.json", &scenario(100));
    let mut child = command(&["scenario", "run", &long, "--out", out.to_str().unwrap()])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let t = Instant::now();
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
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), before);
    assert_eq!(
        names(d),
        ["long.json", "out", "short.json"],
        "no staging folder left"
    );
}

#[test]
fn a_face_expression_target_the_character_lacks_is_a_problem_as_in_animate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("grin.json"),
        r#"{"format":"mien-face","version":1,"expressions":{"grin":{"mouthSmileLeftX":1}}}"#,
    )
    .unwrap();
    let s = write(
        d,
        "s.json",
        &json!({"format": "mien-scenario", "version": 1, "character": "builtin",
            "face": "grin.json", "steps": [{"step": {"frames": 1, "dt": 0.1}}]}),
    );
    let r = mien(&["scenario", "check", &s]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("/face: ") && r.stderr.contains("grin → mouthSmileLeftX"),
        "{}",
        r.stderr
    );
}
