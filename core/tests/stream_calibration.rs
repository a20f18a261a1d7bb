//! Stream calibration: a hand-worked channel (offset, gain, clamp, counted), offsets fitted from a
//! neutral take (medians), the file round-trips, and bad files are refused naming the field.

use mien_core::anim::{Calibration, WeightStream};

fn stream(values: Vec<f32>) -> WeightStream {
    let frames = values.len() / 2;
    WeightStream {
        source: "hand".into(),
        channels: vec!["eyeWideLeft".into(), "jawOpen".into()],
        times: (0..frames).map(|k| k as f64 * 0.1).collect(),
        values,
        aux_channels: Vec::new(),
        aux_values: Vec::new(),
        nominal_fps: None,
    }
}

#[test]
fn a_channel_is_offset_scaled_and_clamped_with_a_count() {
    let text = r#"{"format": "mien-calibration", "version": 1,
        "channels": {"eyeWideLeft": {"offset": 0.1, "gain": 4}, "browInnerUp": {"offset": 0.2}}}"#;
    let c = Calibration::from_json(text, "c.json").unwrap();
    let mut s = stream(vec![0.1, 0.5, 0.3, 0.5, 0.05, 0.5, 0.5, 0.5]);
    let r = c.apply(&mut s);
    assert_eq!(r.applied, ["eyeWideLeft"]);
    assert_eq!(r.absent, ["browInnerUp"]);
    // (0.1−0.1)·4 = 0; (0.3−0.1)·4 = 0.8; (0.05−0.1)·4 = −0.2 → 0 (clamped); (0.5−0.1)·4 = 1.6 → 1.
    let left: Vec<f32> = s.values.chunks(2).map(|r| r[0]).collect();
    for (g, w) in left.iter().zip([0.0, 0.8, 0.0, 1.0]) {
        assert!((g - w).abs() < 1e-6, "{left:?}");
    }
    assert_eq!(r.clamped, 2);
    assert!(s.values.chunks(2).all(|r| r[1] == 0.5), "jawOpen untouched");
}

#[test]
fn offsets_fit_the_neutral_take_median_and_round_trip() {
    let neutral = stream(vec![0.1, 0.0, 0.12, 0.0, 0.9, 0.0, 0.11, 0.02]);
    let c = Calibration::fit_neutral(&neutral);
    // eyeWideLeft: sorted 0.1, 0.11, 0.12, 0.9 → median 0.115 (a blink-like outlier ignored).
    assert!((c.channels["eyeWideLeft"].offset - 0.115).abs() < 1e-6);
    assert_eq!(c.channels["jawOpen"].offset, 0.0);
    let back = Calibration::from_json(&c.to_json(), "rt.json").unwrap();
    assert_eq!(back, c);
}

#[test]
fn bad_files_are_refused_naming_the_field() {
    for (text, want) in [
        (r#"{"format": "x", "version": 1, "channels": {}}"#, "format"),
        (
            r#"{"format": "mien-calibration", "version": 1, "channels": {"a": {"offset": 0, "gain": 0}}}"#,
            "channels.a.gain",
        ),
        (
            r#"{"format": "mien-calibration", "version": 1, "channels": {"a": {"offset": 0, "min": 1, "max": 0}}}"#,
            "channels.a.min",
        ),
        (
            r#"{"format": "mien-calibration", "version": 1, "channels": {"a": {"offset": 0, "bias": 1}}}"#,
            "JSON",
        ),
        (
            r#"{"format": "mien-calibration", "version": 1, "channels": {"a": {"gain": 2}}}"#,
            "JSON",
        ),
    ] {
        match Calibration::from_json(text, "bad.json").unwrap_err() {
            mien_core::Error::Format { field, .. } => {
                assert!(field.starts_with(want), "{text}: {field}")
            }
            o => panic!("{o:?}"),
        }
    }
}
