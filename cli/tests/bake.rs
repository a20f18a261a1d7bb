//! `mien bake` as a user meets it: a baked take is written with its channels counted and reads
//! back as a character whose new clip `inspect` lists; bad flags and inputs are refused naming
//! them, with nothing written.

mod common;

use common::{data, mien};

#[test]
fn a_take_bakes_and_bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let f = facecap.to_str().unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let out = dir.path().join("baked.glb");
    let o = out.to_str().unwrap();
    let r = mien(&[
        "bake",
        "--character",
        f,
        "--arkit",
        take.to_str().unwrap(),
        "--out",
        o,
    ]);
    assert!(r.ok(), "{}", r.stderr);
    assert!(
        r.stdout.contains("1 weight channel(s)") && r.stdout.contains("keys at 30 fps"),
        "{}",
        r.stdout
    );
    let i = mien(&["inspect", o]);
    assert!(i.ok() && i.stdout.contains("mien: "), "{}", i.stdout);
    let v = mien(&["bake", "--verify", o]);
    assert!(
        v.ok() && v.stdout.contains("ok"),
        "{}{}",
        v.stdout,
        v.stderr
    );
    // The source itself has no record: refused.
    let v = mien(&["bake", "--verify", f]);
    assert!(
        !v.ok() && v.stderr.contains("no mien bake record"),
        "{}",
        v.stderr
    );

    // The curves beside the bake: read back by mien's own readers (inspect lists 52 channels).
    let csv = dir.path().join("take.csv");
    let json = dir.path().join("take.json");
    let r = mien(&[
        "bake",
        "--character",
        f,
        "--arkit",
        take.to_str().unwrap(),
        "--out",
        o,
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    for p in [&csv, &json] {
        let i = mien(&["inspect", p.to_str().unwrap()]);
        assert!(
            i.ok() && i.stdout.contains("52"),
            "{}: {}{}",
            p.display(),
            i.stdout,
            i.stderr
        );
    }
    // CesiumMan has no ARKit targets: refused, nothing written.
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let none = dir.path().join("none.glb");
    let nocsv = dir.path().join("none.csv");
    let r = mien(&[
        "bake",
        "--character",
        cesium.to_str().unwrap(),
        "--out",
        none.to_str().unwrap(),
        "--csv",
        nocsv.to_str().unwrap(),
    ]);
    assert!(!r.ok() && r.stderr.contains("ARKit"), "{}", r.stderr);
    assert!(!none.exists() && !nocsv.exists());

    // No output may replace an input or another output.
    for args in [
        vec!["bake", "--character", f, "--out", o, "--csv", o],
        vec!["bake", "--character", f, "--out", o, "--json", f],
        vec![
            "bake",
            "--character",
            f,
            "--arkit",
            take.to_str().unwrap(),
            "--out",
            o,
            "--csv",
            take.to_str().unwrap(),
        ],
    ] {
        let before = std::fs::read(&out).unwrap();
        let r = mien(&args);
        assert!(
            !r.ok() && r.stderr.contains("must not replace"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(std::fs::read(&out).unwrap(), before);
    }

    let cube = data("khronos/AnimatedMorphCube/AnimatedMorphCube.gltf");
    let bad = dir.path().join("bad.glb");
    let b = bad.to_str().unwrap();
    for (args, says) in [
        (vec!["bake", "--character", f, "--out", "x.gltf"], "--out"),
        (
            vec!["bake", "--character", f, "--fps", "0", "--out", b],
            "--fps",
        ),
        (
            vec!["bake", "--character", f, "--frames", "0", "--out", b],
            "--frames",
        ),
        (
            vec!["bake", "--character", f, "--start", "999", "--out", b],
            "start 999 s: past the take's end",
        ),
        (
            vec![
                "bake",
                "--character",
                f,
                "--start",
                "999",
                "--frames",
                "3",
                "--out",
                b,
            ],
            "start 999 s: past the take's end",
        ),
        (
            vec!["bake", "--character", f, "--start", "-1", "--out", b],
            "--start",
        ),
        (
            vec![
                "bake",
                "--character",
                f,
                "--frames",
                "100000000",
                "--out",
                b,
            ],
            "--frames",
        ),
        (
            vec!["bake", "--character", cube.to_str().unwrap(), "--out", b],
            ".glb",
        ),
        (
            vec!["bake", "--character", f, "--clip", "nope", "--out", b],
            "clip",
        ),
    ] {
        let r = mien(&args);
        assert!(!r.ok(), "{args:?} was accepted");
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!bad.exists(), "{args:?} wrote {b}");
    }
}

/// A speech take (a Gentle alignment) bakes with its timing record: the label, the speech file's
/// duration and every interval as read, and the mapping revisions.
#[test]
fn a_speech_take_records_its_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let gentle = data("gentle/lucier_golden.json");
    let out = dir.path().join("speech.glb");
    let r = mien(&[
        "bake",
        "--character",
        facecap.to_str().unwrap(),
        "--speech",
        gentle.to_str().unwrap(),
        "--frames",
        "60",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let bytes = std::fs::read(&out).unwrap();
    let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + jl]).unwrap();
    let rec = &json["animations"].as_array().unwrap().last().unwrap()["extras"]["mien"];
    assert_eq!(rec["take"]["kind"], "speech", "{rec}");
    assert_eq!(rec["take"]["name"], "lucier_golden");
    assert_eq!(rec["keys"], 60);
    let sp = &rec["speech"];
    assert_eq!(sp["file"], "lucier_golden.json", "{sp}");
    assert_eq!(sp["format"], "gentle", "{sp}");
    assert_eq!(sp["origin_s"], 0.0);
    let iv = sp["intervals"].as_array().unwrap();
    assert!(iv.len() > 100, "{} intervals", iv.len());
    let mut last = 0.0;
    for i in iv {
        let (a, b) = (i["start_s"].as_f64().unwrap(), i["end_s"].as_f64().unwrap());
        assert!(a >= last && b > a, "{i}");
        last = b;
    }
    // Seed 002's revision identifiers, as this mien's constants spell them.
    assert_eq!(rec["revisions"]["visemes"], "mien-arpabet-viseme-v1");
    assert_eq!(
        rec["revisions"]["timing"],
        "mien-audio-clock-half-open-held-v1"
    );
    assert_eq!(rec["revisions"]["arkit"], "mien-arkit52-names-v2");
    let v = mien(&["bake", "--verify", out.to_str().unwrap()]);
    assert!(v.ok(), "{}", v.stderr);
    // The timing record read back: the Gentle file's name, and its interval count.
    assert!(
        v.stdout.contains("lucier_golden.json")
            && v.stdout.contains(&format!("{} intervals", iv.len())),
        "{}",
        v.stdout
    );
}

/// Game-face LODs: the Ready Player Me avatar at 21,500 triangles keeps its facial parts (every
/// mesh with morph targets) byte for byte — the bake still verifies — and reduces the rest under
/// the budget; CesiumMan (no face) comes to at most 1,500; a budget under 128 with a face, or one
/// below the facial parts plus 32 per other part, is refused with nothing written; two LODs of one
/// character share the facial fingerprints.
#[test]
fn lods_keep_the_face_and_meet_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let rpm = data("avatars/rpm_male.glb");
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let triangles = |p: &std::path::Path| -> u64 {
        let ch = mien_core::io::gltf::import_gltf(p).unwrap();
        ch.meshes
            .iter()
            .flat_map(|m| &m.primitives)
            .map(|p| (p.indices.len() / 3) as u64)
            .sum()
    };
    let record = |p: &std::path::Path| -> serde_json::Value {
        let bytes = std::fs::read(p).unwrap();
        let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + jl]).unwrap();
        json["animations"].as_array().unwrap().last().unwrap()["extras"]["mien"]["parts"].clone()
    };
    let mut parts = Vec::new();
    for budget in ["21500", "22000"] {
        let out = dir.path().join(format!("rpm-{budget}.glb"));
        // A take that moves the face: a still one is refused (no empty animation is written).
        let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
        let r = mien(&[
            "bake",
            "--character",
            rpm.to_str().unwrap(),
            "--arkit",
            take.to_str().unwrap(),
            "--frames",
            "5",
            "--lod",
            budget,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(r.ok(), "{}", r.stderr);
        assert!(
            triangles(&out) <= budget.parse().unwrap(),
            "{}",
            triangles(&out)
        );
        assert!(triangles(&out) < triangles(&rpm));
        let v = mien(&["bake", "--verify", out.to_str().unwrap()]);
        assert!(v.ok(), "{}", v.stderr);
        parts.push(record(&out));
    }
    assert_eq!(parts[0], parts[1], "two LODs share the facial fingerprints");
    let out = dir.path().join("cesium.glb");
    let r = mien(&[
        "bake",
        "--character",
        cesium.to_str().unwrap(),
        "--lod",
        "1500",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    assert!(triangles(&out) <= 1500 && triangles(&cesium) > 1500);
    for (budget, says) in [("100", "at least 128"), ("5000", "cannot be met")] {
        let bad = dir.path().join("bad.glb");
        let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
        let r = mien(&[
            "bake",
            "--character",
            rpm.to_str().unwrap(),
            "--arkit",
            take.to_str().unwrap(),
            "--frames",
            "5",
            "--lod",
            budget,
            "--out",
            bad.to_str().unwrap(),
        ]);
        assert!(!r.ok() && r.stderr.contains(says), "{budget}: {}", r.stderr);
        assert!(!bad.exists());
    }
}

/// `mien bake` takes the speech flags `mien animate` takes (issue 25's fresh-user pass): an
/// envelope with a minimum hold at an audio offset is baked and recorded (sampler, hold, origin,
/// the envelope's timing revision) and `--verify` prints it; `--min-hold` without the envelope is
/// refused as in animate; keys past the take's end are baked with a note saying they hold its last
/// pose.
#[test]
fn bake_takes_the_speech_flags_and_says_when_keys_pass_the_take() {
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let gentle = data("gentle/lucier_golden.json");
    let out = dir.path().join("speech.glb");
    let base = [
        "bake",
        "--character",
        facecap.to_str().unwrap(),
        "--speech",
        gentle.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let r = mien(&[&base[..], &["--min-hold", "0.125", "--frames", "30"]].concat());
    assert!(
        !r.ok() && r.stderr.contains("--min-hold") && r.stderr.contains("envelope"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
    let r = mien(
        &[
            &base[..],
            &[
                "--sampler",
                "envelope",
                "--min-hold",
                "0.125",
                "--audio-offset",
                "0.5",
                "--frames",
                "60",
            ],
        ]
        .concat(),
    );
    assert!(r.ok(), "{}", r.stderr);
    let bytes = std::fs::read(&out).unwrap();
    let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + jl]).unwrap();
    let rec = &json["animations"].as_array().unwrap().last().unwrap()["extras"]["mien"];
    let sp = &rec["speech"];
    assert_eq!(sp["sampler"], "envelope", "{sp}");
    assert_eq!(sp["min_hold_s"], 0.125, "{sp}");
    assert_eq!(sp["origin_s"], 0.5, "{sp}");
    assert_eq!(
        rec["revisions"]["timing"],
        "mien-envelope-attack-hold-release-v2"
    );
    let v = mien(&["bake", "--verify", out.to_str().unwrap()]);
    assert!(
        v.ok() && v.stdout.contains("envelope visemes held at least 0.125 s"),
        "{}{}",
        v.stdout,
        v.stderr
    );

    // Keys past the take: the end is the utterance's (offset + duration).
    let end = 0.5 + sp["duration_s"].as_f64().unwrap();
    let start = format!("{:.3}", end - 0.5);
    let r = mien(
        &[
            &base[..],
            &["--audio-offset", "0.5", "--start", &start, "--frames", "60"],
        ]
        .concat(),
    );
    assert!(r.ok(), "{}", r.stderr);
    assert!(
        r.stdout.contains("past the take's end") && r.stdout.contains("hold the take's last pose"),
        "{}",
        r.stdout
    );
}

/// A VRM avatar's bake keeps its VRM extensions, so it may be written as `.vrm` (and verifies);
/// a plain glTF's bake may not be called `.vrm`.
#[test]
fn a_vrm_bakes_to_vrm_and_a_gltf_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let gentle = data("gentle/lucier_golden.json");
    let out = dir.path().join("line.vrm");
    let godette = data("vrm/Godette_vrm_v4.vrm");
    let r = mien(&[
        "bake",
        "--character",
        godette.to_str().unwrap(),
        "--speech",
        gentle.to_str().unwrap(),
        "--frames",
        "30",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let v = mien(&["bake", "--verify", out.to_str().unwrap()]);
    assert!(v.ok(), "{}", v.stderr);
    let i = mien(&["inspect", out.to_str().unwrap()]);
    assert!(i.ok() && i.stdout.contains("VRM"), "{}", i.stdout);

    let facecap = data("facecap/facecap.glb");
    let bad = dir.path().join("facecap.vrm");
    let r = mien(&[
        "bake",
        "--character",
        facecap.to_str().unwrap(),
        "--speech",
        gentle.to_str().unwrap(),
        "--frames",
        "30",
        "--out",
        bad.to_str().unwrap(),
    ]);
    assert!(
        !r.ok() && r.stderr.contains("not a VRM avatar"),
        "{}",
        r.stderr
    );
    assert!(!bad.exists());
}
