//! What a run says: report.json records σ, shading, `--start` and the PLY layout; the summary
//! counts with the right plurals and shows ambiguous channels and undriven targets; an error
//! names each cause once; `mien inspect` lists keys in a fixed order, file and kind first.

mod common;

use common::{animate, data, mien, report, triangle_gltf};

#[test]
fn report_records_sigma_shading_start_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let tri = triangle_gltf(dir.path(), "tri", [0.0; 3], Some(2.0));
    let t = tri.to_str().unwrap();
    let out = dir.path().join("a");
    let r = animate(
        &out,
        &[
            "--lift",
            "debug",
            "--character",
            t,
            "--start",
            "0.5",
            "--fps",
            "4",
            "--sheet",
            "1",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&out);
    // Derived: 0.6 × the median edge of the triangle (edges 0.1, 0.1, 0.1·√2 m → median 0.1 m).
    let sigma = rep["splats"]["sigma_m"].as_f64().unwrap();
    assert!((sigma - 0.06).abs() < 1e-6, "{sigma}");
    assert_eq!(rep["splats"]["sigma_derived"], true);
    assert!(
        rep["splats"]["sigma_rule"]
            .as_str()
            .unwrap()
            .contains("median triangle edge"),
        "{}",
        rep["splats"]
    );
    assert_eq!(rep["splats"]["shading_requested"], "auto");
    assert_eq!(rep["splats"]["shading"], "normal", "no vertex colours");
    assert_eq!(rep["frames"]["start_s"], 0.5);
    // (2 − 0.5)·4 + 1 = 7 frames.
    assert_eq!(rep["frames"]["count"], 7);
    assert_eq!(rep["outputs"]["ply_layout"], "dc");

    let out = dir.path().join("b");
    let r = animate(
        &out,
        &[
            "--character",
            t,
            "--lift",
            "debug",
            "--sigma",
            "0.002",
            "--shading",
            "flat",
            "--ply",
            "none",
            "--frames",
            "1",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&out);
    assert!((rep["splats"]["sigma_m"].as_f64().unwrap() - 0.002).abs() < 1e-9);
    assert_eq!(rep["splats"]["sigma_derived"], false);
    assert_eq!(rep["splats"]["shading"], "flat");
    assert_eq!(rep["outputs"]["ply_layout"], "none");
    assert_eq!(rep["outputs"]["ply_files"], 0);
}

#[test]
fn summary_counts_in_the_singular_and_plural() {
    let dir = tempfile::tempdir().unwrap();
    let tri = triangle_gltf(dir.path(), "tri", [0.0; 3], None);
    let out = dir.path().join("out");
    let r = animate(
        &out,
        &[
            "--lift",
            "debug",
            "--character",
            tri.to_str().unwrap(),
            "--sheet",
            "1",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    for want in [
        "1 mesh node,",
        "3 vertices",
        "1 triangle,",
        "0 morph targets",
        "(1 file,",
        "3 splats each",
        "contact sheet of 1 frame)",
    ] {
        assert!(r.stdout.contains(want), "lacks `{want}`:\n{}", r.stdout);
    }
    for bad in ["1 files", "1 frames", "1 mesh node(s)", "1 triangles"] {
        assert!(!r.stdout.contains(bad), "says `{bad}`:\n{}", r.stdout);
    }
}

#[test]
fn summary_shows_ambiguous_channels_and_undriven_targets() {
    let dir = tempfile::tempdir().unwrap();
    // Two spellings of one ARKit channel compete (neither is bound), a third binds.
    let csv = dir.path().join("dup.csv");
    std::fs::write(
        &csv,
        "Timecode,BlendShapeCount,EyeBlinkLeft,eyeBlink_L,JawOpen\n\
         00:00:00:00.000,3,0.1,0.1,0.2\n\
         00:00:00:01.000,3,0.2,0.2,0.3\n",
    )
    .unwrap();
    let facecap = data("facecap/facecap.glb");
    let out = dir.path().join("out");
    let r = animate(
        &out,
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--sheet",
            "0",
            "--ply",
            "none",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("channels bound") || l.contains(" bound"))
        .unwrap_or_else(|| panic!("no binding line:\n{}", r.stdout));
    for want in [
        "1 of 3 channels bound",
        "2 ambiguous (EyeBlinkLeft, eyeBlink_L)",
        "0 unmatched",
        "51 targets undriven",
        "report.json",
    ] {
        assert!(line.contains(want), "lacks `{want}`: {line}");
    }
}

#[test]
fn an_error_names_each_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = animate(
        &dir.path().join("out"),
        &["--character", "/nonexistent/head.glb"],
    );
    assert!(!r.ok());
    assert!(r.stderr.contains("/nonexistent/head.glb"), "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        r.stderr
    );
}

#[test]
fn inspect_lists_keys_in_a_fixed_order() {
    let facecap = data("facecap/facecap.glb");
    let r = mien(&["inspect", "--json", facecap.to_str().unwrap()]);
    assert!(r.ok(), "{}", r.stderr);
    let at = |k: &str| {
        r.stdout
            .find(&format!("\"{k}\""))
            .unwrap_or_else(|| panic!("no {k}"))
    };
    let order = [
        "file",
        "kind",
        "nodes",
        "required_extensions",
        "meshes",
        "arkit_named_targets",
        "skins",
        "clips",
        "import_notes",
    ];
    for w in order.windows(2) {
        assert!(
            at(w[0]) < at(w[1]),
            "{} before {}:\n{}",
            w[0],
            w[1],
            r.stdout
        );
    }
    let r = mien(&["inspect", facecap.to_str().unwrap()]);
    let mut lines = r.stdout.lines();
    assert!(lines.next().unwrap().starts_with("file: "), "{}", r.stdout);
    assert!(lines.next().unwrap().starts_with("kind: "), "{}", r.stdout);
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let r = mien(&["inspect", csv.to_str().unwrap()]);
    let first: Vec<&str> = r.stdout.lines().take(3).collect();
    assert!(
        first[0].starts_with("file: ")
            && first[1].starts_with("kind: ")
            && first[2].starts_with("frames: "),
        "{first:?}"
    );
}

#[test]
fn the_summary_reads_naturally() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let speech = d.join("one.json");
    std::fs::write(
        &speech,
        r#"{"format":"mien-utterance","version":1,"label":"one","duration":0.5,"units":"visemes","segments":[{"start":0,"end":0.3,"value":"aa"}]}"#,
    )
    .unwrap();
    let script = d.join("one_event.json");
    std::fs::write(
        &script,
        r#"{"format":"mien-state-script","version":1,"events":[{"t":0,"signal":"talking_started"}]}"#,
    )
    .unwrap();
    let r = animate(
        &d.join("out"),
        &[
            "--start",
            "-0",
            "--frames",
            "2",
            "--sheet",
            "0",
            "--ply",
            "none",
            "--lift",
            "debug",
            "--sigma",
            "120.00002",
            "--speech",
            speech.to_str().unwrap(),
            "--state-script",
            script.to_str().unwrap(),
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let s = &r.stdout;
    for needle in ["media time 0.000", "1 segment,", "(1 event)", "σ 120 m"] {
        assert!(s.contains(needle), "lacks `{needle}`:\n{s}");
    }
    for bad in ["-0.000", "1 segments", "1 events", "120.00002", "Arkit"] {
        assert!(!s.contains(bad), "says `{bad}`:\n{s}");
    }
}

#[test]
fn animate_help_lists_the_exit_codes() {
    let r = mien(&["animate", "--help"]);
    assert!(r.ok());
    for needle in ["Exit codes:", "130", "could not be parsed", "refused"] {
        assert!(r.stdout.contains(needle), "lacks `{needle}`:\n{}", r.stdout);
    }
}

/// Every stream channel's range is reported, bound or not: the minimum and maximum seen and how
/// many values fell outside ARKit's [0, 1] and beyond ±2 (clamped) — an emotion-like column
/// reaching 100.59, a negative weight, a bound channel at 1.5 — and the summary says so.
#[test]
fn stream_values_out_of_range_are_counted_per_channel() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("ranges.csv");
    std::fs::write(
        &csv,
        "Timecode,BlendShapeCount,JawOpen,MouthSmileLeft,Joy\n\
         00:00:00:00.000,3,0.2,-0.25,100.59\n\
         00:00:00:01.000,3,1.5,0.5,3\n\
         00:00:00:02.000,3,0.4,0.5,0.5\n",
    )
    .unwrap();
    let facecap = data("facecap/facecap.glb");
    let out = dir.path().join("out");
    let r = animate(
        &out,
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--sheet",
            "0",
            "--ply",
            "none",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&out);
    let ranges = rep["animation"]["channel_ranges"].as_array().unwrap();
    let get = |n: &str| ranges.iter().find(|c| c["name"] == n).unwrap().clone();
    let jaw = get("JawOpen");
    assert_eq!(
        (jaw["min"].as_f64(), jaw["max"].as_f64()),
        (Some(0.2), Some(1.5))
    );
    assert_eq!(
        (jaw["above_one"].as_u64(), jaw["beyond_clamp"].as_u64()),
        (Some(1), Some(0))
    );
    let smile = get("MouthSmileLeft");
    assert_eq!(smile["below_zero"], 1);
    let joy = get("Joy");
    assert_eq!(joy["max"].as_f64(), Some(100.59));
    assert_eq!(
        (joy["above_one"].as_u64(), joy["beyond_clamp"].as_u64()),
        (Some(2), Some(2))
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("outside [0, 1]"))
        .unwrap_or_else(|| panic!("no range line:\n{}", r.stdout));
    assert!(
        line.contains("3 channels")
            && line.contains("Joy 0.5–100.59")
            && line.contains("2 values beyond ±2"),
        "{line}"
    );
}

/// An Audio2Face blendshape export drives a character through `--arkit`: every one of its 52
/// ARKit-named channels binds on facecap, its joint tracks are reported as not applied, and the
/// ranges are reported.
#[test]
fn an_audio2face_export_drives_a_character() {
    let dir = tempfile::tempdir().unwrap();
    let a2f = data("audio2face/a2f_export_bsweight-default-audio-EN-joy.json");
    let facecap = data("facecap/facecap.glb");
    let out = dir.path().join("out");
    let r = animate(
        &out,
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            a2f.to_str().unwrap(),
            "--sheet",
            "0",
            "--ply",
            "none",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&out);
    let a = &rep["animation"];
    assert_eq!(a["kind"], "arkit");
    assert_eq!(a["channel_ranges"].as_array().unwrap().len(), 52);
    let span = a["span_s"][1].as_f64().unwrap();
    assert!((span - 710.0 / 60.0).abs() < 1e-9, "{span}");
    let notes = a["notes"].to_string();
    assert!(
        notes.contains("joint tracks jaw, eye_L, eye_R not applied"),
        "{notes}"
    );
    assert!(r.stdout.contains("52 of 52 channels bound"), "{}", r.stdout);
    // A JSON that is not an export is refused naming the formats.
    let bad = dir.path().join("other.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let r = animate(
        &dir.path().join("out2"),
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            bad.to_str().unwrap(),
        ],
    );
    assert!(!r.ok());
    assert!(
        r.stderr.contains("not an Audio2Face blendshape export"),
        "{}",
        r.stderr
    );
}

/// `mien calibrate` fits offsets from a neutral take (medians, by hand here) and `--calibration`
/// applies them to a stream, with the clamped values counted in the report; a bad calibration
/// file is refused naming its field.
#[test]
fn calibrate_fits_a_neutral_take_and_animate_applies_it() {
    let dir = tempfile::tempdir().unwrap();
    let neutral = dir.path().join("neutral.csv");
    std::fs::write(
        &neutral,
        "Timecode,BlendShapeCount,EyeWideLeft,JawOpen\n\
         00:00:00:00.000,2,0.2,0.0\n\
         00:00:00:01.000,2,0.3,0.1\n\
         00:00:00:02.000,2,0.25,0.0\n",
    )
    .unwrap();
    let cal = dir.path().join("cal.json");
    let r = mien(&[
        "calibrate",
        neutral.to_str().unwrap(),
        "--out",
        cal.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let c: serde_json::Value = serde_json::from_slice(&std::fs::read(&cal).unwrap()).unwrap();
    assert_eq!(c["channels"]["EyeWideLeft"]["offset"].as_f64(), Some(0.25));
    assert_eq!(c["channels"]["JawOpen"]["offset"].as_f64(), Some(0.0));
    // The neutral take calibrated by itself: EyeWideLeft 0.2 → −0.05 → clamped to 0 (one value);
    // JawOpen's median is 0, so nothing of it moves.
    let facecap = data("facecap/facecap.glb");
    let out = dir.path().join("out");
    let run = animate(
        &out,
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            neutral.to_str().unwrap(),
            "--calibration",
            cal.to_str().unwrap(),
            "--sheet",
            "0",
            "--ply",
            "none",
        ],
    );
    assert!(run.ok(), "{}", run.stderr);
    let notes = report(&out)["animation"]["notes"].to_string();
    assert!(
        notes.contains("2 channel(s) calibrated, 1 value(s) clamped"),
        "{notes}"
    );
    std::fs::write(&cal, r#"{"format": "mien-calibration", "version": 1, "channels": {"JawOpen": {"offset": 0, "gain": 0}}}"#).unwrap();
    let run = animate(
        &dir.path().join("out2"),
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--arkit",
            neutral.to_str().unwrap(),
            "--calibration",
            cal.to_str().unwrap(),
        ],
    );
    assert!(!run.ok());
    assert!(
        run.stderr.contains("channels.JawOpen.gain"),
        "{}",
        run.stderr
    );
}
