//! `mien scenario run`: the shipped scenarios pass, hashes repeat across processes, every
//! strictness rule is refused with its JSON pointer before any step runs (exit 2, nothing
//! written), a failed assertion exits 1 listing the actual value, and the output folder is
//! replaced as a whole.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, mien, names, report};
use serde_json::{Value, json};

/// The repository's `scenarios/<name>`.
fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name)
}

fn run(file: &Path, out: Option<&Path>) -> Run {
    let mut args = vec!["scenario", "run", file.to_str().unwrap()];
    if let Some(o) = out {
        args.extend(["--out", o.to_str().unwrap()]);
    }
    mien(&args)
}

/// Write a scenario of `steps` for `character` into `dir/name`.
fn write(dir: &Path, name: &str, character: &str, steps: Value) -> PathBuf {
    let path = dir.join(name);
    let doc =
        json!({"format": "mien-scenario", "version": 1, "character": character, "steps": steps});
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    path
}

/// `(name, hash)` of every recorded hash in a report.
fn hashes(r: &Value) -> Vec<(String, String)> {
    r["hashes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap().to_owned(),
                h["hash"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_shipped_scenarios_pass_and_their_hashes_repeat_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let r = run(&shipped("builtin.scenario.json"), Some(out));
        assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("PASSED"), "{}", r.stdout);
    }
    let (ra, rb) = (report(&a), report(&b));
    assert_eq!(ra["passed"], true);
    assert_eq!(ra["repeat_matched"], true);
    assert_eq!(ra["failures"], json!([]));
    let n = ra["assertions"].as_array().unwrap().len();
    assert!(n >= 10, "{n} assertions");
    assert!(
        ra["assertions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["passed"] == true)
    );
    // Two separate processes record the same values.
    let (ha, hb) = (hashes(&ra), hashes(&rb));
    assert_eq!(
        ha.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
        ["start", "talking", "look_left", "end", "final"]
    );
    assert_eq!(ha, hb, "hashes differ between two processes");
    for h in ra["hashes"].as_array().unwrap() {
        assert_eq!(h["hash"], h["repeat"], "{h}");
        let s = h["hash"].as_str().unwrap();
        assert!(
            s.len() == 16 && s.bytes().all(|c| c.is_ascii_hexdigit()),
            "{s}"
        );
    }
    // Hashes of different moments differ (a hash that ignored the pose could not fail).
    let mut distinct: Vec<&str> = ha[..4].iter().map(|h| h.1.as_str()).collect();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{ha:?}");
    // The states the scenario walks through, at the times it signals them (30 fps).
    let states: Vec<(f64, &str)> = ra["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["t"].as_f64().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    let names: Vec<&str> = states.iter().map(|s| s.1).collect();
    assert_eq!(
        names,
        [
            "idle_active",
            "listening",
            "thinking",
            "talking",
            "idle_active"
        ]
    );
    assert!((states[2].0 - 15.0 / 30.0).abs() < 1e-9, "{states:?}");
    // The capture: a PNG of one 256-px cell (and its frame), not a blank image.
    assert_eq!(names_of(&a), ["report.json", "smile.png"]);
    let img = image::open(a.join("smile.png")).unwrap().to_rgb8();
    assert!(img.width() >= 256 && img.width() == img.height());
    let first = img.get_pixel(0, 0);
    assert!(img.pixels().filter(|p| *p != first).count() > 10_000);
    assert_eq!(ra["captures"][0]["file"], "smile.png");
    // The goldens: both compared (checked in under scenarios/goldens), both within tolerance.
    let goldens: Vec<&Value> = ra["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "golden")
        .collect();
    assert_eq!(goldens.len(), 2, "{goldens:?}");
    for g in goldens {
        assert!(
            g["actual"]["largest_difference"].as_u64().unwrap() <= 2,
            "{g}"
        );
    }

    let out = dir.path().join("fc");
    let r = run(&shipped("facecap.scenario.json"), Some(&out));
    assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
    let rf = report(&out);
    assert_eq!(rf["passed"], true);
    assert_eq!(rf["repeat_matched"], true);
    let eye = rf["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["what"] == "eyeLeft forward x")
        .unwrap();
    assert!(eye["actual"].as_f64().unwrap() > 0.5, "{eye}");
    assert!(
        rf["assertions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["kind"] == "golden" && o["passed"] == true),
        "facecap's golden compared"
    );
}

/// A golden step: refused before running while its image is missing (exit 2, naming the file and
/// the variable that writes it); `MIEN_UPDATE_GOLDENS=1` writes it; the next run compares and
/// passes; a golden changed by more than the tolerance fails the run (exit 1) with the largest
/// difference and the pixel; within the tolerance it passes.
#[test]
fn a_golden_is_written_on_request_compared_and_fails_when_the_image_differs() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "g.scenario.json",
        "builtin",
        json!([
            {"face": {"expression": "smile", "weight": 1}},
            {"step": {"frames": 10, "dt": 0.05}},
            {"golden": {"name": "smiling", "cell": 64, "tolerance": 3}}
        ]),
    );
    let png = dir.path().join("goldens/smiling.png");
    let r = run(&file, None);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("/steps/2/golden") && r.stderr.contains("MIEN_UPDATE_GOLDENS=1"),
        "{}",
        r.stderr
    );
    assert!(!png.exists());

    // A value that is neither a yes nor a no is refused, not guessed.
    let mut c = common::command(&["scenario", "run", file.to_str().unwrap()]);
    c.env("MIEN_UPDATE_GOLDENS", "maybe");
    let r = common::finish(c);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("MIEN_UPDATE_GOLDENS=\"maybe\""),
        "{}",
        r.stderr
    );
    let mut c = common::command(&["scenario", "run", file.to_str().unwrap()]);
    c.env("MIEN_UPDATE_GOLDENS", "yes");
    let r = common::finish(c);
    assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("written (MIEN_UPDATE_GOLDENS)"),
        "{}",
        r.stdout
    );
    let img = image::open(&png).unwrap().to_rgb8();
    let first = *img.get_pixel(0, 0);
    assert!(
        img.pixels().any(|p| *p != first),
        "a drawn face, not a blank image"
    );

    let r = run(&file, None);
    assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("matched (largest difference 0)"),
        "{}",
        r.stdout
    );

    // Change one pixel by 3 levels (within the tolerance), then another by 40 (over it).
    let mut changed = img.clone();
    let p = changed.get_pixel_mut(10, 20);
    p[0] = if p[0] >= 3 { p[0] - 3 } else { p[0] + 3 };
    changed.save(&png).unwrap();
    let r = run(&file, None);
    assert!(r.ok(), "within the tolerance: {}\n{}", r.stdout, r.stderr);
    let p = changed.get_pixel_mut(30, 31);
    p[1] = if p[1] >= 40 { p[1] - 40 } else { p[1] + 40 };
    changed.save(&png).unwrap();
    let out = dir.path().join("out");
    let r = run(&file, Some(&out));
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let rep = report(&out);
    let g = &rep["assertions"][0];
    assert_eq!(g["kind"], "golden");
    assert_eq!(g["passed"], false);
    assert_eq!(g["actual"]["largest_difference"], 40);
    assert_eq!(g["actual"]["pixels_over"], 1);
    assert_eq!(g["actual"]["worst_pixel"], json!([30, 31]));
    assert!(
        rep["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("golden")
    );
}

fn names_of(dir: &Path) -> Vec<String> {
    names(dir)
}

#[test]
fn a_hash_recorded_in_one_process_is_asserted_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let steps = json!([
        {"face": {"expression": "surprise", "weight": 0.7}},
        {"step": {"frames": 9, "dt": 0.05}},
        {"hash": {"name": "h"}},
        {"assert": {"kind": "time", "min": 0.45, "max": 0.45}}
    ]);
    let first = write(dir.path(), "a.json", "builtin", steps.clone());
    let r = run(&first, Some(&dir.path().join("o1")));
    assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
    let h = report(&dir.path().join("o1"))["hashes"][0]["hash"]
        .as_str()
        .unwrap()
        .to_owned();
    // The media clock after 9 × 0.05 s is the f64 nearest 0.45.
    let mut with = steps.as_array().unwrap().clone();
    with.push(json!({"assert": {"kind": "hash", "name": "h", "equals": h}}));
    let second = write(dir.path(), "b.json", "builtin", Value::Array(with.clone()));
    let r = run(&second, None);
    assert!(r.ok(), "{}\n{}", r.stdout, r.stderr);
    // Another expected value fails and names the actual one.
    let wrong = if h == "0000000000000000" {
        "0000000000000001"
    } else {
        "0000000000000000"
    };
    with.pop();
    with.push(json!({"assert": {"kind": "hash", "name": "h", "equals": wrong}}));
    let third = write(dir.path(), "c.json", "builtin", Value::Array(with));
    let r = run(&third, None);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("/steps/4/assert") && r.stdout.contains(&h),
        "{}",
        r.stdout
    );
}

#[test]
fn a_failed_assertion_exits_1_lists_the_actual_value_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "f.json",
        "builtin",
        json!([
            {"assert": {"kind": "morph", "target": "jawOpen", "min": 0.5}},
            {"say": {"phonemes": [["AA", 0.0, 0.4]]}},
            {"step": {"frames": 4, "dt": 0.05}},
            {"assert": {"kind": "morph", "target": "jawOpen", "max": 0.2}},
            {"assert": {"kind": "time", "min": 0.2, "max": 0.2}},
            {"assert": {"kind": "state", "equals": "talking"}}
        ]),
    );
    let out = dir.path().join("out");
    let r = run(&file, Some(&out));
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("FAILED"), "{}", r.stdout);
    // jawOpen is 0 at rest; AA holds the aa viseme (jawOpen 0.6 in the ARKit map) at t = 0.2 s.
    assert!(
        r.stdout
            .contains("/steps/0/assert: morph jawOpen on head: expected [0.5, inf], got 0"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("/steps/3/assert"), "{}", r.stdout);
    assert!(r.stdout.contains("/steps/5/assert"), "{}", r.stdout);
    let rep = report(&out);
    assert_eq!(rep["passed"], false);
    let f: Vec<&str> = rep["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["step"].as_str().unwrap())
        .collect();
    assert_eq!(f, ["/steps/0/assert", "/steps/3/assert", "/steps/5/assert"]);
    let a = &rep["assertions"];
    assert_eq!(a[0]["actual"], 0.0);
    assert_eq!(a[1]["actual"], 0.6);
    assert_eq!(a[1]["expected"], "[-inf, 0.2]");
    assert_eq!(a[2]["passed"], true, "0.2 s after 4 × 0.05 s: {}", a[2]);
    assert_eq!(a[3]["actual"], "idle_active");
    assert_eq!(rep["repeat_matched"], true);
}

/// Each strictness rule, the steps that break it and the pointer the refusal must name.
fn refusals() -> Vec<(&'static str, Value, &'static str)> {
    let ok = json!({"step": {"frames": 1, "dt": 0.1}});
    vec![
        (
            "a misspelled min",
            json!([ok, {"assert": {"kind": "time", "mni": 0}}]),
            "/steps/1/assert/mni",
        ),
        (
            "an unknown key in a step",
            json!([{"step": {"frames": 1, "dt": 0.1, "wind": 3}}]),
            "/steps/0/step/wind",
        ),
        (
            "an unknown step kind",
            json!([ok, {"teleport": {"position": [0, 0, 0]}}]),
            "/steps/1/teleport",
        ),
        (
            "an unknown assertion kind",
            json!([{"assert": {"kind": "bone_w", "min": 0}}]),
            "/steps/0/assert/kind",
        ),
        (
            "an assert with neither min nor max",
            json!([{"assert": {"kind": "morph", "target": "jawOpen"}}]),
            "/steps/0/assert",
        ),
        (
            "a state assertion without equals",
            json!([{"assert": {"kind": "state"}}]),
            "/steps/0/assert",
        ),
        (
            "a hash assertion without equals",
            json!([{"hash": {"name": "h"}}, {"assert": {"kind": "hash", "name": "h"}}]),
            "/steps/1/assert",
        ),
        (
            "an animate with no source",
            json!([{"animate": {}}]),
            "/steps/0/animate",
        ),
        (
            "a face that does nothing",
            json!([{"face": {}}]),
            "/steps/0/face",
        ),
        (
            "frames 0",
            json!([{"step": {"frames": 0, "dt": 0.1}}]),
            "/steps/0/step/frames",
        ),
        (
            "frames 100 001",
            json!([{"step": {"frames": 100001, "dt": 0.1}}]),
            "/steps/0/step/frames",
        ),
        (
            "dt 0",
            json!([{"step": {"frames": 1, "dt": 0}}]),
            "/steps/0/step/dt",
        ),
        (
            "dt above 1",
            json!([{"step": {"frames": 1, "dt": 1.5}}]),
            "/steps/0/step/dt",
        ),
        (
            "min above max",
            json!([ok, ok, ok, {"assert": {"kind": "time", "min": 2, "max": 1}}]),
            "/steps/3/assert/min",
        ),
        (
            "an unknown clip",
            json!([{"animate": {"clip": "walk"}}]),
            "/steps/0/animate/clip",
        ),
        (
            "an unknown expression",
            json!([{"face": {"expression": "grin", "weight": 1}}]),
            "/steps/0/face/expression",
        ),
        (
            "an unknown override target",
            json!([{"face": {"override": {"target": "tail", "value": 1}}}]),
            "/steps/0/face/override/target",
        ),
        (
            "an unknown morph target",
            json!([{"assert": {"kind": "morph", "target": "wings", "min": 0}}]),
            "/steps/0/assert/target",
        ),
        (
            "a morph target on a node without it",
            json!([{"assert": {"kind": "morph", "target": "jawOpen", "node": "head", "min": 0}}]),
            "/steps/0/assert/node",
        ),
        (
            "an unknown node",
            json!([{"assert": {"kind": "bone", "node": "eyeMiddle", "axis": "y", "min": 0}}]),
            "/steps/0/assert/node",
        ),
        (
            "a hash asserted before it is recorded",
            json!([{"assert": {"kind": "hash", "name": "h", "equals": "0123456789abcdef"}}, {"hash": {"name": "h"}}]),
            "/steps/0/assert/name",
        ),
        (
            "a hash name used twice",
            json!([{"hash": {"name": "h"}}, ok, {"hash": {"name": "h"}}]),
            "/steps/2/hash/name",
        ),
        (
            "a phoneme that is not ARPABET",
            json!([{"say": {"phonemes": [["AH", 0, 0.1], ["QQ", 0.1, 0.2]]}}]),
            "/steps/0/say/phonemes/1/0",
        ),
        (
            "a missing speech file",
            json!([{"say": {"file": "nowhere.json"}}]),
            "/steps/0/say/file",
        ),
    ]
}

#[test]
fn every_strictness_rule_is_refused_with_its_pointer_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    // An earlier run's folder: a refused scenario leaves it exactly as it was.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("report.json"), "earlier").unwrap();
    // Face Cap loads in a fraction of the built-in head's build time.
    let facecap = common::data("facecap/facecap.glb");
    for (k, (what, steps, at)) in refusals().into_iter().enumerate() {
        let file = write(
            dir.path(),
            &format!("s{k}.json"),
            facecap.to_str().unwrap(),
            steps,
        );
        let r = run(&file, Some(&out));
        assert_eq!(r.code, Some(2), "{what}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!("  {at}: ")),
            "{what}: wanted {at} in\n{}",
            r.stderr
        );
        assert!(r.stderr.contains("no step was run"), "{what}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{what}: {}", r.stdout);
        assert_eq!(names(&out), ["report.json"], "{what}");
        assert_eq!(
            std::fs::read_to_string(out.join("report.json")).unwrap(),
            "earlier"
        );
        // `check` refuses the same way.
        let c = mien(&["scenario", "check", file.to_str().unwrap()]);
        assert_eq!(c.code, Some(2), "{what}: check: {}", c.stderr);
    }
    // Nothing beside the scenarios and the old folder: no staging folder was left.
    let left: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| !n.ends_with(".json"))
        .collect();
    assert_eq!(left, ["out"]);
}

#[test]
fn numbers_out_of_range_and_bad_json_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inf.json");
    std::fs::write(
        &path,
        r#"{"format":"mien-scenario","version":1,"character":"builtin","steps":[
            {"step":{"frames":1,"dt":0.1}},{"assert":{"kind":"time","min":1e400}}]}"#,
    )
    .unwrap();
    let r = run(&path, None);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("/steps/1/assert/min"), "{}", r.stderr);
    std::fs::write(&path, r#"{"format":"mien-scenario","#).unwrap();
    let r = run(&path, None);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("not valid JSON"), "{}", r.stderr);
    // A character file that is not there is named at /character.
    let file = write(
        dir.path(),
        "c.json",
        "missing.glb",
        json!([{"step": {"frames": 1, "dt": 0.1}}]),
    );
    let r = run(&file, None);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("  /character: "), "{}", r.stderr);
    // `check` accepts a shipped scenario without running it.
    let c = mien(&[
        "scenario",
        "check",
        shipped("facecap.scenario.json").to_str().unwrap(),
    ]);
    assert!(c.ok(), "{}", c.stderr);
    assert!(
        c.stdout.contains("valid (25 steps, 96 frames per run"),
        "{}",
        c.stdout
    );
}

#[test]
fn the_output_folder_is_replaced_as_a_whole_and_foreign_folders_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cap = |name: &str| json!([{"capture": {"name": name, "cell": 32}}, {"step": {"frames": 1, "dt": 0.5}}]);
    let a = write(dir.path(), "a.json", "builtin", cap("first"));
    assert!(run(&a, Some(&out)).ok());
    assert_eq!(names(&out), ["first.png", "report.json"]);
    // A second run replaces the folder: the first capture is gone.
    let b = write(dir.path(), "b.json", "builtin", cap("second"));
    let r = run(&b, Some(&out));
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(names(&out), ["report.json", "second.png"]);
    // A staging folder an interrupted run left (its process is gone) is removed by the next run.
    let stale = dir.path().join(".out.mien-staging-4194399");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("report.json"), "half").unwrap();
    assert!(run(&b, Some(&out)).ok());
    assert!(!stale.exists());
    assert_eq!(names(&out), ["report.json", "second.png"]);
    // A folder holding something a scenario does not write is refused, untouched.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let r = run(&a, Some(&out));
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("notes.txt"), "{}", r.stderr);
    assert_eq!(names(&out), ["notes.txt", "report.json", "second.png"]);
    // Without --out nothing is written and captures are noted as not rendered.
    let r = run(&a, None);
    assert!(r.ok());
    assert!(
        r.stdout.contains("capture steps were not rendered"),
        "{}",
        r.stdout
    );
}
