//! Every flag is checked before any work, and the message names the flag with its value written
//! sanely; checks that need the input (the animation's length, the rest geometry) name it.

mod common;

use common::{animate, names, triangle_gltf};

/// `extra` must fail within `secs` seconds with a message holding every needle and none of
/// `absent`, writing nothing.
fn refused_fast(extra: &[&str], needles: &[&str], secs: f64) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = animate(&out, extra);
    assert!(!r.ok(), "{extra:?} must fail:\n{}", r.stdout);
    for n in needles {
        assert!(
            r.stderr.contains(n),
            "{extra:?}: message lacks `{n}`:\n{}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(
        r.secs < secs,
        "{extra:?}: refused after {:.2} s, not before the work",
        r.secs
    );
    assert!(
        names(dir.path()).is_empty(),
        "wrote {:?}",
        names(dir.path())
    );
    r.stderr
}

#[test]
fn out_of_range_numbers_name_the_flag_quickly() {
    let e = refused_fast(&["--fps", "1e308"], &["--fps 1e308", "0.1", "1000"], 1.0);
    assert!(e.len() < 300, "no 309-digit numbers: {e}");
    refused_fast(&["--fps", "0.01"], &["--fps 0.01"], 1.0);
    refused_fast(&["--fps", "inf"], &["--fps inf"], 1.0);
    refused_fast(&["--sigma", "1e20"], &["--sigma 1e20", "1000"], 1.0);
    refused_fast(&["--sigma", "0"], &["--sigma 0"], 1.0);
    refused_fast(&["--start", "NaN"], &["--start NaN"], 1.0);
}

#[test]
fn negative_numbers_reach_the_range_checks() {
    for (flag, value) in [
        ("--fps", "-1"),
        ("--sigma", "-1"),
        ("--start", "-2"),
        ("--frames", "-1"),
        ("--sheet", "-1"),
        ("--cell", "-1"),
    ] {
        let e = refused_fast(&[flag, value], &[flag, value], 1.0);
        assert!(!e.contains("unexpected argument"), "{flag} {value}: {e}");
    }
}

#[test]
fn a_sheet_too_large_is_refused_before_work_naming_both_flags() {
    let e = refused_fast(
        &["--sheet", "64", "--cell", "4096"],
        &["--sheet 64", "--cell 4096", "16384"],
        1.0,
    );
    // The largest cell that fits 8 columns: (16384 − 9·4) / 8 = 2043.
    assert!(e.contains("--cell 2043"), "{e}");
    refused_fast(&["--cell", "8"], &["--cell"], 1.0);
    refused_fast(&["--sheet", "65"], &["--sheet"], 1.0);
}

#[test]
fn start_after_the_animation_names_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let tri = triangle_gltf(dir.path(), "tri", [0.0; 3], Some(2.5));
    let t = tri.to_str().unwrap();
    refused_fast(
        &["--character", t, "--start", "3"],
        &["--start 3", "2.5 s long", "--frames"],
        1.0,
    );
    // With --frames the timeline is the user's: it poses past the end (clamped).
    let out = dir.path().join("ok");
    let r = animate(
        &out,
        &[
            "--character",
            t,
            "--start",
            "3",
            "--frames",
            "2",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
}

#[test]
fn too_many_frames_names_the_real_count_and_duration() {
    let dir = tempfile::tempdir().unwrap();
    let tri = triangle_gltf(dir.path(), "long", [0.0; 3], Some(4000.0));
    // 4000 s at 30 fps: ⌊4000·30⌋ + 1 = 120001 frames.
    let e = refused_fast(
        &["--character", tri.to_str().unwrap()],
        &["120001 frames", "4000 s", "100000", "--fps"],
        1.0,
    );
    assert!(!e.contains("100001 frames"), "{e}");
}

#[test]
fn rest_geometry_out_of_range_names_the_character_file() {
    let dir = tempfile::tempdir().unwrap();
    let far = triangle_gltf(dir.path(), "far_away", [1e38, 1e38, 1e38], None);
    refused_fast(
        &["--character", far.to_str().unwrap()],
        &["far_away.gltf", "vertex 0", "1e38"],
        1.0,
    );
    // 10 km from the origin is still a place.
    let ok = triangle_gltf(dir.path(), "town", [1e4, 0.0, 0.0], None);
    let out = dir.path().join("ok");
    let r = animate(&out, &["--character", ok.to_str().unwrap(), "--sheet", "1"]);
    assert!(r.ok(), "{}", r.stderr);
}

/// A speech file any format reader accepts: mien's own utterance JSON, one phoneme.
fn utterance(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("hi.json");
    std::fs::write(
        &p,
        r#"{"format":"mien-utterance","version":1,"label":"hi","duration":0.5,"units":"visemes","segments":[{"start":0,"end":0.3,"value":"aa"}]}"#,
    )
    .unwrap();
    p
}

#[test]
fn speech_flags_are_checked_and_speak_for_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let sp = utterance(dir.path());
    let sp = sp.to_str().unwrap();
    // A minimum hold only changes the envelope sampler: with the held default it is refused.
    refused_fast(
        &["--speech", sp, "--min-hold", "0.5"],
        &["--min-hold 0.5", "--sampler envelope"],
        1.0,
    );
    // Negative values reach the range check instead of clap's "unexpected argument".
    let e = refused_fast(
        &["--speech", sp, "--sampler", "envelope", "--min-hold", "-1"],
        &["--min-hold -1", "0", "1 seconds"],
        1.0,
    );
    assert!(!e.contains("unexpected argument"), "{e}");
    // A huge offset: one line, the flag, the bound and the value in short form.
    for (v, shown) in [("1e9", "1e9"), ("-1e300", "-1e300")] {
        let e = refused_fast(
            &["--speech", sp, "--audio-offset", v],
            &[
                &format!("--audio-offset {shown}"),
                "-1000000 to 1000000 seconds",
            ],
            1.0,
        );
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.len() < 200, "{e}");
    }
}
