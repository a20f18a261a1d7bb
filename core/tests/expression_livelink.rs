//! Live Link Face CSV: the real export (cells spot-checked against values read from the file by
//! hand), its binding to facecap's 52 targets, timecode-rate inference, and bad files.
// Expected cells are copied verbatim (10 decimals) from the CSV.
#![allow(clippy::excessive_precision)]

mod support;

use std::path::{Path, PathBuf};

use mien_core::anim::canon::{Binding, BoundStream};
use mien_core::error::Error;
use mien_core::io::livelink_csv::{
    infer_timecode_fps, read_livelink_csv, read_livelink_csv_from_str,
};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

fn livelink() -> PathBuf {
    data().join("livelinkface/MySlate_3_Jason_Millers_iPhone.csv")
}

/// The value of channel `name` at frame `f`.
fn cell(s: &mien_core::anim::WeightStream, f: usize, name: &str) -> f32 {
    let c = s
        .channels
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no channel {name}"));
    s.frame(f)[c]
}

fn aux(s: &mien_core::anim::WeightStream, f: usize, name: &str) -> f32 {
    let a = s.aux_channels.iter().position(|n| n == name).unwrap();
    s.aux_values[f * s.aux_channels.len() + a]
}

#[test]
fn real_export_shape_rate_and_cells() {
    let s = read_livelink_csv(&livelink()).unwrap();
    assert_eq!(s.frame_count(), 328);
    assert_eq!(s.nominal_fps, Some(60.0));
    assert_eq!(s.channels.len(), 52);
    assert_eq!(s.aux_channels.len(), 9);
    assert_eq!(s.values.len(), 328 * 52);
    assert_eq!(s.aux_values.len(), 328 * 9);
    assert_eq!(s.channels[0], "EyeBlinkLeft");
    assert_eq!(s.channels[51], "TongueOut");
    // The file's order: JawForward, JawRight, JawLeft (not the ARKit enum's jawLeft, jawRight).
    assert_eq!(&s.channels[14..17], ["JawForward", "JawRight", "JawLeft"]);
    assert_eq!(s.aux_channels[0], "HeadYaw");
    assert_eq!(s.aux_channels[8], "RightEyeRoll");

    // Times: line 2 `00:32:09:07.867` is t = 0; line 3 `00:32:09:08.868` is 1.001/60 s;
    // line 201 `00:32:12:26.988` is 3 + 19.121/60 s; line 329 `00:32:14:35.066` is 5 + 27.199/60 s.
    assert_eq!(s.times[0], 0.0);
    assert!((s.times[1] - 1.001 / 60.0).abs() < 1e-9);
    assert!((s.times[199] - (3.0 + 19.121 / 60.0)).abs() < 1e-9);
    assert!((s.times[327] - (5.0 + 27.199 / 60.0)).abs() < 1e-9);

    // Cells read from the file: (frame = line − 2, column) → value.
    let cases: &[(usize, &str, f32)] = &[
        (0, "EyeBlinkLeft", 0.0491091609),    // line 2
        (0, "JawLeft", 0.0549999066),         // line 2, 19th column
        (0, "JawRight", 0.0),                 // line 2, 18th column
        (0, "TongueOut", 0.0019119763),       // line 2
        (1, "MouthLeft", 0.1019812822),       // line 3
        (99, "MouthLeft", 0.3531369269),      // line 101
        (99, "EyeLookInRight", 0.0644256845), // line 101
        (199, "JawOpen", 0.5340076685),       // line 201
        (199, "NoseSneerLeft", 0.7063348293), // line 201
        (327, "JawOpen", 0.0929834396),       // line 329
        (327, "CheekPuff", 0.0306147467),     // line 329
    ];
    for &(f, name, want) in cases {
        assert_eq!(cell(&s, f, name), want, "frame {f} {name}");
    }
    assert_eq!(aux(&s, 0, "LeftEyeYaw"), -0.0278781932);
    assert_eq!(aux(&s, 0, "RightEyeRoll"), 0.0056871092);
    assert_eq!(aux(&s, 327, "LeftEyeYaw"), -0.0133609846);
    assert_eq!(aux(&s, 199, "HeadPitch"), 0.0);
}

fn facecap_targets() -> Vec<String> {
    let text =
        std::fs::read_to_string(data().join("facecap/facecap_anim_weights_decoded.csv")).unwrap();
    let header = text.lines().next().unwrap();
    let mut cols: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    assert_eq!(cols.remove(0), "time");
    cols
}

#[test]
fn real_export_binds_to_facecap_targets() {
    let s = read_livelink_csv(&livelink()).unwrap();
    let targets = facecap_targets();
    assert_eq!(targets.len(), 52);
    let b = Binding::new(&s.channels, &targets);
    let r = b.report();
    assert_eq!(r.matched.len(), 52, "{r:#?}");
    assert!(r.unmatched_channels.is_empty() && r.undriven_targets.is_empty());
    assert!(r.ambiguous.is_empty() && r.ignored_channels.is_empty() && r.fan.is_empty());
    assert!(b.require_complete("facecap").is_ok());
    let pair = |target: &str| {
        r.matched
            .iter()
            .find(|m| m.target == target)
            .map(|m| m.channel.as_str())
    };
    assert_eq!(pair("tongueOut"), Some("TongueOut"));
    assert_eq!(pair("jawLeft"), Some("JawLeft"));
    assert_eq!(pair("jawRight"), Some("JawRight"));
    assert_eq!(pair("eyeBlink_L"), Some("EyeBlinkLeft"));
    assert_eq!(pair("browInnerUp"), Some("BrowInnerUp"));

    // Frame 199 (line 201), values read from the file.
    let mut w = vec![f32::NAN; 52];
    b.apply(s.frame(199), &mut w);
    let idx = |name: &str| targets.iter().position(|t| t == name).unwrap();
    let at = |name: &str| w[idx(name)];
    assert_eq!(at("jawOpen"), 0.5340076685);
    assert_eq!(at("jawLeft"), 0.1778243482);
    assert_eq!(at("jawRight"), 0.0);
    assert_eq!(at("eyeBlink_L"), 0.1090363786);
    assert_eq!(at("browInnerUp"), 0.0380697921);
    assert_eq!(at("cheekPuff"), 0.0045460560);
    assert_eq!(at("tongueOut"), 0.0000026132);
    assert!(w.iter().all(|v| v.is_finite()));

    // Sampled at media time halfway between lines 2 and 3: JawOpen (0.0897284821 + 0.0899977684) / 2.
    let mut bs = BoundStream::new(s.clone(), &targets).unwrap();
    bs.weights_at(0.5 * s.times[1], &mut w);
    let want = (0.0897284821f64 + 0.0899977684) / 2.0;
    assert!((f64::from(w[idx("jawOpen")]) - want).abs() < 1e-7);
}

#[test]
fn the_angle_columns_do_not_bind_as_blendshapes() {
    let s = read_livelink_csv(&livelink()).unwrap();
    // Binding the aux names as if they were channels reports them ignored, with a reason.
    let b = Binding::new(&s.aux_channels, &facecap_targets());
    assert_eq!(b.report().ignored_channels.len(), 9);
    assert!(b.routes().is_empty());
}

#[test]
fn timecode_rate_inference() {
    // 30 fps across a second: 28, 29 | 0, 1.
    assert_eq!(
        infer_timecode_fps(&[(10, 28.0), (10, 29.0), (11, 0.0), (11, 1.0)]).unwrap(),
        30
    );
    // 25 fps: 23, 24 | 0.
    assert_eq!(
        infer_timecode_fps(&[(3, 23.0), (3, 24.0), (4, 0.0)]).unwrap(),
        25
    );
    // 24 fps with a dropped row.
    assert_eq!(
        infer_timecode_fps(&[(3, 20.0), (3, 21.0), (3, 23.0), (4, 0.0), (4, 1.0)]).unwrap(),
        24
    );
    // 60 fps against 100 and 120: 58, 59 | 0.
    assert_eq!(
        infer_timecode_fps(&[(0, 58.3), (0, 59.3), (1, 0.3)]).unwrap(),
        60
    );
    // 60 Hz capture on a 30 fps timecode: half-frame steps, 29.5 | 0.0.
    assert_eq!(
        infer_timecode_fps(&[(0, 29.0), (0, 29.5), (1, 0.0), (1, 0.5)]).unwrap(),
        30
    );
    // Under a second of capture: 60 when the frame numbers allow it.
    assert_eq!(
        infer_timecode_fps(&[(5, 3.0), (5, 4.0), (5, 5.0)]).unwrap(),
        60
    );
    assert_eq!(infer_timecode_fps(&[(5, 70.0), (5, 71.0)]).unwrap(), 100);
    // Only steps across seconds: the lowest rate above the largest frame.
    assert_eq!(infer_timecode_fps(&[(1, 26.0), (2, 27.0)]).unwrap(), 30);
    assert!(matches!(
        infer_timecode_fps(&[(0, 120.0)]),
        Err(Error::Invalid { .. })
    ));
}

const HEADER: &str = "Timecode,BlendshapeCount,EyeBlinkLeft,JawOpen,HeadYaw";

/// Parse `rows` under HEADER and return the error's (field, line).
fn fails(rows: &str) -> (String, Option<usize>, String) {
    let text = format!("{HEADER}\n{rows}");
    match read_livelink_csv_from_str(&text, "bad.csv") {
        Err(Error::Format {
            file,
            field,
            index,
            reason,
        }) => {
            assert_eq!(file, "bad.csv");
            (field, index, reason)
        }
        other => panic!("{rows:?}: expected a format error, got {other:?}"),
    }
}

#[test]
fn small_good_file_with_the_lowercase_count_spelling() {
    let text = format!(
        "{HEADER}\r\n00:00:00:28.0,3,0.1,0.2,0.3\r\n00:00:00:29.0,3,0.4,0.5,-0.6\r\n00:00:01:00.0,3,1,0,0\r\n\r\n"
    );
    let s = read_livelink_csv_from_str(&text, "ok.csv").unwrap();
    assert_eq!(s.channels, ["EyeBlinkLeft", "JawOpen"]);
    assert_eq!(s.aux_channels, ["HeadYaw"]);
    assert_eq!(s.nominal_fps, Some(30.0));
    assert_eq!(s.times, [0.0, 1.0 / 30.0, 2.0 / 30.0]);
    assert_eq!(s.values, [0.1, 0.2, 0.4, 0.5, 1.0, 0.0]);
    assert_eq!(s.aux_values, [0.3, -0.6, 0.0]);
}

#[test]
fn bad_files_name_row_and_column() {
    let good = "00:00:00:01.0,3,0.1,0.2,0.3\n";
    let (f, i, r) = fails(&format!("{good}00:00:00:02.0,61,0.1,0.2,0.3\n"));
    assert_eq!((f.as_str(), i), ("BlendshapeCount", Some(3)), "{r}");
    let (f, i, _) = fails(&format!("{good}00:00:00:02.0,3,0.1,abc,0.3\n"));
    assert_eq!((f.as_str(), i), ("JawOpen", Some(3)));
    let (f, i, _) = fails(&format!("{good}00:00:00:02.0,3,0.1,0.2,NaN\n"));
    assert_eq!((f.as_str(), i), ("HeadYaw", Some(3)));
    let (f, i, r) = fails(&format!("{good}00:00:00:02.0,3,,0.2,0.3\n"));
    assert_eq!((f.as_str(), i), ("EyeBlinkLeft", Some(3)));
    assert!(r.contains("missing"), "{r}");
    for tc in [
        "00:00:00",
        "00:00:00:xx",
        "00:61:00:01.0",
        "24:00:00:01",
        "00:00:00:01.",
        "-0:00:00:01",
        "00:00:00:01:00",
    ] {
        let (f, i, r) = fails(&format!("{good}{tc},3,0.1,0.2,0.3\n"));
        assert_eq!((f.as_str(), i), ("Timecode", Some(3)), "{tc}: {r}");
    }
    let (f, i, r) = fails(&format!("{good}00:00:00:00.5,3,0.1,0.2,0.3\n"));
    assert_eq!((f.as_str(), i), ("Timecode", Some(3)));
    assert!(r.contains("back in time") && r.contains("line 2"), "{r}");
    let (f, i, r) = fails(&format!("{good}{good}"));
    assert_eq!((f.as_str(), i), ("Timecode", Some(3)));
    assert!(r.contains("repeats"), "{r}");
    // Past midnight: one readable sentence naming both lines and both timecodes.
    let (f, i, r) = fails("23:59:59:59.0,3,0,0,0\n00:00:00:00.0,3,0,0,0\n");
    assert_eq!((f.as_str(), i), ("Timecode", Some(3)));
    assert_eq!(
        r,
        "line 3: `00:00:00:00.0` goes back in time from line 2 `23:59:59:59.0` (timecodes must \
         increase; a take that wraps past midnight is not supported)"
    );
    // Too few / too many cells: the row is named with both counts, not a column.
    let (f, i, r) = fails(&format!("{good}00:00:00:02.0,3,0.1,0.2\n"));
    assert_eq!((f.as_str(), i), ("row", Some(3)));
    assert_eq!(r, "line 3 has 4 cells, expected 5 (one per header column)");
    let (f, i, r) = fails(&format!("{good}00:00:00:02.0\n"));
    assert_eq!((f.as_str(), i), ("row", Some(3)));
    assert_eq!(r, "line 3 has 1 cell, expected 5 (one per header column)");
    let (f, i, r) = fails(&format!("{good}00:00:00:02.0,3,0.1,0.2,0.3,0.4\n"));
    assert_eq!((f.as_str(), i), ("row", Some(3)));
    assert!(r.contains("has 6 cells, expected 5"), "{r}");
    // Header only, and an empty file.
    let (f, i, r) = fails("");
    assert_eq!((f.as_str(), i), ("rows", Some(1)));
    assert!(r.contains("no data rows"), "{r}");
    let err = read_livelink_csv_from_str("", "empty.csv").unwrap_err();
    assert!(
        matches!(err, Error::Format { ref field, .. } if field == "header"),
        "{err}"
    );
    let err = read_livelink_csv_from_str("\n\n", "blank.csv").unwrap_err();
    assert!(
        matches!(err, Error::Format { ref field, .. } if field == "header"),
        "{err}"
    );
    // Headers missing a column, or naming one twice.
    let err = read_livelink_csv_from_str("BlendShapeCount,JawOpen\n1,0.5\n", "h.csv").unwrap_err();
    assert!(
        matches!(err, Error::Format { ref field, index: Some(1), .. } if field == "Timecode"),
        "{err}"
    );
    let err =
        read_livelink_csv_from_str("Timecode,JawOpen\n00:00:00:00,0.5\n", "h.csv").unwrap_err();
    assert!(
        matches!(err, Error::Format { ref field, .. } if field == "BlendShapeCount"),
        "{err}"
    );
    let err = read_livelink_csv_from_str("Timecode,BlendShapeCount,JawOpen,jawopen\n", "h.csv")
        .unwrap_err();
    assert!(
        matches!(err, Error::Format { ref field, .. } if field == "jawopen"),
        "{err}"
    );
    let err =
        read_livelink_csv_from_str("Timecode,BlendShapeCount,HeadYaw\n", "h.csv").unwrap_err();
    assert!(matches!(err, Error::Format { .. }), "{err}");
}

#[test]
fn bad_files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("take.csv");
    std::fs::write(
        &p,
        format!("{HEADER}\n00:00:00:01.0,3,0.1,0.2,0.3\n00:00:00:02.0,4,0.1,0.2,0.3\n"),
    )
    .unwrap();
    let err = read_livelink_csv(&p).unwrap_err();
    match err {
        Error::Format {
            file, field, index, ..
        } => {
            assert!(file.ends_with("take.csv"));
            assert_eq!((field.as_str(), index), ("BlendshapeCount", Some(3)));
        }
        other => panic!("{other}"),
    }
    std::fs::write(&p, b"Timecode,BlendShapeCount\xff\n").unwrap();
    assert!(matches!(read_livelink_csv(&p), Err(Error::Format { .. })));
    // Not UTF-8: the byte offset and line of the first bad byte, said in words.
    std::fs::write(
        &p,
        format!("{HEADER}\n00:00:00:01.0,3,0.1,0.2,0.3\n")
            .into_bytes()
            .into_iter()
            .chain(*b"00:00:00:02.0,3,0.\xe9,0,0\n")
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let at = HEADER.len() + 1 + 28 + 18;
    match read_livelink_csv(&p).unwrap_err() {
        Error::Format {
            field,
            index,
            reason,
            ..
        } => {
            assert_eq!((field.as_str(), index), ("text", None));
            assert_eq!(reason, format!("not UTF-8 text at byte {at} (line 3)"));
        }
        other => panic!("{other}"),
    }
    // A UTF-16 export says so.
    std::fs::write(&p, b"\xff\xfeT\0i\0").unwrap();
    let e = read_livelink_csv(&p).unwrap_err().to_string();
    assert!(
        e.contains("not UTF-8 text at byte 0 (line 1)") && e.contains("UTF-16"),
        "{e}"
    );
    std::fs::write(&p, b"").unwrap();
    assert!(matches!(read_livelink_csv(&p), Err(Error::Format { .. })));
    assert!(matches!(
        read_livelink_csv(&dir.path().join("missing.csv")),
        Err(Error::Io { .. })
    ));
}

use proptest::prelude::*;

const RATES: [u32; 8] = [24, 25, 30, 48, 50, 60, 100, 120];

proptest! {
    #![proptest_config(support::proptest_config(64))]

    /// A regular take at any standard rate, starting anywhere in the day with any sub-frame, that
    /// crosses at least one whole second: the rate is recovered and row k is at k / fps.
    #[test]
    fn regular_takes_recover_rate_and_times(
        ri in 0usize..8,
        start_s in 0u32..86_000,
        start_f in 0u32..120,
        sub in 0u32..1000,
        extra in 2usize..40,
        seed in any::<u32>(),
    ) {
        let r = RATES[ri];
        let n = r as usize + extra;
        let mut text = String::from("Timecode,BlendShapeCount,JawOpen,EyeBlinkRight,HeadRoll\n");
        let mut want_values = Vec::new();
        for k in 0..n {
            let frame = (start_f % r) as usize + k;
            let s = start_s as usize + frame / r as usize;
            let ff = frame % r as usize;
            let (a, b, c) = ((seed as usize + k * 7) % 1000, (k * 13) % 1000, (k * 31) % 1000);
            want_values.push(a as f32 / 1000.0);
            want_values.push(b as f32 / 1000.0);
            text.push_str(&format!(
                "{:02}:{:02}:{:02}:{:02}.{:03},3,0.{a:03},0.{b:03},-0.{c:03}\n",
                s / 3600, (s / 60) % 60, s % 60, ff, sub
            ));
        }
        let st = read_livelink_csv_from_str(&text, "gen.csv").unwrap();
        prop_assert_eq!(st.nominal_fps, Some(f64::from(r)));
        prop_assert_eq!(st.frame_count(), n);
        for (k, t) in st.times.iter().enumerate() {
            prop_assert!((t - k as f64 / f64::from(r)).abs() < 1e-9, "row {} at {}", k, t);
        }
        prop_assert_eq!(st.values, want_values);
    }

    /// Random damage to a good file never panics: it parses to a valid stream or fails.
    #[test]
    fn damaged_files_never_panic(
        edits in proptest::collection::vec((0usize..400, prop::sample::select(vec![",", ":", ".", "0", "9", "-", "\n", "NaN", "", "e9", " ", "\""])), 1..6),
        cut in 0usize..400,
    ) {
        let mut text = format!("{HEADER}\n00:00:00:28.0,3,0.1,0.2,0.3\n00:00:00:29.0,3,0.4,0.5,-0.6\n00:00:01:00.0,3,1,0,0\n");
        for (pos, s) in edits {
            let p = pos % (text.len() + 1);
            text.replace_range(p..(p + 1).min(text.len()), s);
        }
        text.truncate(cut.min(text.len()));
        if let Ok(st) = read_livelink_csv_from_str(&text, "fuzz.csv") {
            prop_assert!(st.validate().is_ok());
            prop_assert_eq!(st.times[0], 0.0);
        }
    }
}

#[test]
fn a_timecode_frame_beyond_every_rate_names_file_and_line() {
    let (field, line, reason) =
        fails("00:00:00:10.0,3,0.1,0.2,0.3\n00:00:00:201.0,3,0.1,0.2,0.3\n");
    assert_eq!(field, "Timecode");
    assert_eq!(line, Some(3));
    assert!(
        reason.contains("line 3") && reason.contains("201"),
        "{reason}"
    );
    assert!(reason.contains("120 fps"), "{reason}");
}

/// `WeightStream::channel_ranges`, hand-worked: min/max over finite values, counts below 0,
/// above 1, beyond ±2, non-finite.
#[test]
fn channel_ranges_count_every_value_out_of_range() {
    let s = mien_core::anim::WeightStream {
        source: "hand".into(),
        channels: vec!["a".into(), "b".into()],
        times: vec![0.0, 0.1, 0.2],
        values: vec![0.5, -3.0, 1.2, f32::NAN, 0.0, 2.5],
        aux_channels: Vec::new(),
        aux_values: Vec::new(),
        nominal_fps: None,
    };
    let r = s.channel_ranges();
    assert_eq!((r[0].min, r[0].max), (Some(0.0), Some(1.2)));
    assert_eq!(
        (
            r[0].below_zero,
            r[0].above_one,
            r[0].beyond_clamp,
            r[0].non_finite
        ),
        (0, 1, 0, 0)
    );
    assert_eq!((r[1].min, r[1].max), (Some(-3.0), Some(2.5)));
    assert_eq!(
        (
            r[1].below_zero,
            r[1].above_one,
            r[1].beyond_clamp,
            r[1].non_finite
        ),
        (1, 1, 2, 1)
    );
    assert_eq!(r[1].outside_unit(), 2);
}
