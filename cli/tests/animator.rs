//! The animator in `mien animate`: the built-in head blinks and glances through it, `--look-at`,
//! `--state-script` and `--face` work and are strict, and runs repeat bit for bit.

mod common;

use common::{animate, data, report};
use mien_core::io::ply::read_splat_ply;

#[test]
fn the_builtin_head_is_animated_and_repeats_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let r = animate(out, &["--fps", "10", "--ply", "dc", "--sheet", "0"]);
        assert!(r.ok(), "{}", r.stderr);
    }
    let (ra, rb) = (report(&a), report(&b));
    let anim = &ra["animation"]["animator"];
    assert_eq!(anim["script"], "built-in");
    let states: Vec<&str> = anim["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["idle_active", "talking", "idle_active", "talking"]);
    assert_eq!(
        anim["last_state_hash"], rb["animation"]["animator"]["last_state_hash"],
        "deterministic"
    );
    for i in [0, 25, 60] {
        let name = format!("frames/frame_{i:05}.ply");
        assert_eq!(
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
            "{name} is bit-identical across runs"
        );
    }
}

#[test]
fn look_at_state_script_and_face_file() {
    let dir = tempfile::tempdir().unwrap();
    let fc = data("facecap/facecap.glb");
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"format":"mien-state-script","version":1,"speaker":[0.5,0.0,3.0],"events":[
            {"t":0.0,"signal":"listening_started"},
            {"t":0.5,"expression":"smile","weight":0.8},
            {"t":1.0,"signal":"listening_stopped"},
            {"t":1.2,"blink":true}]}"#,
    )
    .unwrap();
    let r = animate(
        &dir.path().join("s"),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--state-script",
            script.to_str().unwrap(),
            "--frames",
            "45",
            "--ply",
            "none",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&dir.path().join("s"));
    let states: Vec<&str> = rep["animation"]["animator"]["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["idle_active", "listening", "thinking"]);
    // --look-at turns facecap's eye joints: frames differ from a run without it.
    let (la, no) = (dir.path().join("la"), dir.path().join("no"));
    assert!(
        animate(
            &la,
            &[
                "--character",
                fc.to_str().unwrap(),
                "--look-at=-2,0,1",
                "--frames",
                "3",
                "--sheet",
                "0",
                "--clip",
                "0"
            ]
        )
        .ok()
    );
    assert!(
        animate(
            &no,
            &[
                "--character",
                fc.to_str().unwrap(),
                "--frames",
                "3",
                "--sheet",
                "0",
                "--clip",
                "0"
            ]
        )
        .ok()
    );
    let (x, y) = (
        read_splat_ply(&la.join("frames/frame_00002.ply")).unwrap(),
        read_splat_ply(&no.join("frames/frame_00002.ply")).unwrap(),
    );
    let moved = x
        .center
        .iter()
        .zip(&y.center)
        .filter(|(p, q)| (0..3).any(|k| (p[k] - q[k]).abs() > 1e-4))
        .count();
    assert!(moved > 50, "the eyes turned: {moved} splats moved");
    // A face file with its own expression.
    let face = dir.path().join("face.json");
    std::fs::write(&face, r#"{"format":"mien-face","version":1,"expressions":{"grin":{"mouthSmile_L":1,"mouthSmile_R":1}}}"#).unwrap();
    let script2 = dir.path().join("grin.json");
    std::fs::write(
        &script2,
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"expression":"grin"}]}"#,
    )
    .unwrap();
    let r = animate(
        &dir.path().join("f"),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--face",
            face.to_str().unwrap(),
            "--state-script",
            script2.to_str().unwrap(),
            "--frames",
            "3",
            "--ply",
            "none",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
}

#[test]
fn bad_animator_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = |name: &str, json: &str, needle: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, json).unwrap();
        let r = animate(
            &dir.path().join(format!("out-{name}")),
            &["--state-script", p.to_str().unwrap(), "--frames", "2"],
        );
        assert!(!r.ok(), "{name} must be refused");
        assert!(r.stderr.contains(needle), "{name}: {}", r.stderr);
    };
    bad(
        "unknown.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"wink":true}]}"#,
        "wink",
    );
    bad(
        "two.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"blink":true,"signal":"reset"}]}"#,
        "events[0]",
    );
    bad(
        "back.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":1,"blink":true},{"t":0.5,"blink":true}]}"#,
        "events[1]",
    );
    bad(
        "signal.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"signal":"dance"}]}"#,
        "dance",
    );
    bad(
        "expr.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"expression":"grin"}]}"#,
        "grin",
    );
    let r = animate(
        &dir.path().join("x"),
        &["--look-at", "1,2", "--frames", "2"],
    );
    assert!(!r.ok() && r.stderr.contains("--look-at"), "{}", r.stderr);
    let r = animate(
        &dir.path().join("y"),
        &["--animator", "off", "--look-at", "0,0,1", "--frames", "2"],
    );
    assert!(
        !r.ok() && r.stderr.contains("--animator off"),
        "{}",
        r.stderr
    );
}

/// `mien animate --frames 2 extra…` must fail with every needle in its message.
fn refused(dir: &std::path::Path, extra: &[&str], needles: &[&str]) {
    let out = dir.join("out");
    let mut args = vec!["--frames", "2", "--sheet", "0"];
    args.extend_from_slice(extra);
    let r = animate(&out, &args);
    assert!(!r.ok(), "{extra:?} must be refused");
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "{extra:?}: lacks `{n}`:\n{}",
            r.stderr
        );
    }
    assert!(!out.exists(), "{extra:?} wrote {}", out.display());
}

fn write(dir: &std::path::Path, name: &str, json: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, json).unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn a_face_expression_target_the_character_lacks_is_refused_like_a_viseme_target() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let face = write(
        d,
        "grin_face.json",
        r#"{"format":"mien-face","version":1,"expressions":{"grin":{"mouthSmileLeftX":1,"jawOpen":0.5}}}"#,
    );
    let script = write(
        d,
        "grin.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"expression":"grin"}]}"#,
    );
    refused(
        d,
        &["--face", &face, "--state-script", &script],
        &["grin_face.json", "grin → mouthSmileLeftX", "lacks 1 target"],
    );
    // Without a state script the face alone is refused too: the rule is the file's.
    refused(d, &["--face", &face], &["grin → mouthSmileLeftX"]);
}

#[test]
fn a_script_expression_the_face_lacks_names_the_script_and_event() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = write(
        d,
        "grin_script.json",
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"signal":"reset"},{"t":0.5,"expression":"grin"}]}"#,
    );
    refused(
        d,
        &["--state-script", &script],
        &["grin_script.json", "events[1]", "`grin`", "smile"],
    );
}

#[test]
fn script_times_and_points_have_documented_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s =
        |events: &str| format!(r#"{{"format":"mien-state-script","version":1,"events":{events}}}"#);
    for (name, json, needles) in [
        (
            "neg.json",
            s(r#"[{"t":-5,"signal":"listening_started"}]"#),
            &["neg.json", "events[0]", "-5 s", "0 to 1000000 s"][..],
        ),
        (
            "late.json",
            s(r#"[{"t":1,"signal":"reset"},{"t":1e300,"blink":true}]"#),
            &["events[1]", "1e300 s"][..],
        ),
        (
            "far.json",
            s(r#"[{"t":1,"look_at":[1e38,0,0]}]"#),
            &["events[0]", "look_at", "1e38", "1000000 m"][..],
        ),
        (
            "speaker.json",
            r#"{"format":"mien-state-script","version":1,"speaker":[1e38,0,0],"events":[]}"#.into(),
            &["speaker.json", "speaker", "1e38"][..],
        ),
        (
            "nob.json",
            s(r#"[{"t":1,"blink":false}]"#),
            &["events[0]", "`\"blink\": false` is no action"][..],
        ),
    ] {
        let p = write(d, name, &json);
        refused(d, &["--state-script", &p], needles);
    }
    refused(
        d,
        &["--look-at", "1e30,0,0"],
        &["--look-at", "1e30", "1000000 m"],
    );
}
