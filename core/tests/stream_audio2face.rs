//! Audio2Face blendshape exports: the two real files read as ARKit streams (frames, rate, names,
//! values checked against the JSON read independently), and every malformed variant is refused
//! naming the field.

use std::path::{Path, PathBuf};

use mien_core::Error;
use mien_core::io::audio2face::{read_audio2face, read_audio2face_str};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/audio2face")
        .join(rel)
}

#[test]
fn the_real_exports_read_as_arkit_streams() {
    for (file, frames) in [
        ("a2f_export_bsweight-default-audio-EN-joy.json", 711),
        ("a2f_export_bsweight-Adam-from-Edukey-11L-Charlie.json", 800),
    ] {
        let path = data(file);
        let a = read_audio2face(&path).unwrap();
        let s = &a.stream;
        // Independently: the JSON as serde_json reads it.
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(s.frame_count(), frames);
        assert_eq!(s.channel_count(), 52);
        assert_eq!(s.nominal_fps, Some(60.0));
        assert_eq!(s.channels[0], "eyeBlinkLeft");
        assert!((s.times[frames - 1] - (frames - 1) as f64 / 60.0).abs() < 1e-12);
        for (k, j) in [(0usize, 17usize), (frames / 2, 17), (frames - 1, 51)] {
            let want = v["weightMat"][k][j].as_f64().unwrap() as f32;
            assert_eq!(s.frame(k)[j], want, "{file} frame {k} channel {j}");
        }
        // Every name is an ARKit-52 channel: all bind on an ARKit character.
        assert!(
            s.channels
                .iter()
                .all(|c| mien_core::anim::canon::canonical_name(c).is_some())
        );
        assert_eq!(a.joint_tracks, ["jaw", "eye_L", "eye_R"]);
    }
}

fn field(e: Error) -> (String, String) {
    match e {
        Error::Format { field, reason, .. } => (field, reason),
        other => panic!("expected a format error, got {other:?}"),
    }
}

#[test]
fn malformed_exports_are_refused_naming_the_field() {
    let ok = r#"{"exportFps": 30, "numPoses": 2, "numFrames": 2, "facsNames": ["jawOpen", "eyeBlinkLeft"], "weightMat": [[0.1, 0.2], [0.3, 0.4]]}"#;
    let s = read_audio2face_str(ok, "ok.json").unwrap().stream;
    assert_eq!(
        (s.times.clone(), s.values.clone()),
        (vec![0.0, 1.0 / 30.0], vec![0.1, 0.2, 0.3, 0.4])
    );
    for (text, want_field, want_reason) in [
        (ok.replace("30", "0"), "exportFps", "not a frame rate"),
        (
            ok.replace("\"numPoses\": 2", "\"numPoses\": 3"),
            "numPoses",
            "says 3 but facsNames holds 2",
        ),
        (
            ok.replace("\"numFrames\": 2", "\"numFrames\": 5"),
            "numFrames",
            "says 5 but weightMat holds 2",
        ),
        (
            ok.replace("[0.3, 0.4]", "[0.3]"),
            "weightMat",
            "holds 1 weights",
        ),
        (
            ok.replace("0.4", "\"x\""),
            "weightMat[1][1] (eyeBlinkLeft)",
            "not a finite number",
        ),
        (ok.replace("0.4", "1e400"), "JSON (line 1", ""),
        (
            ok.replace(", \"facsNames\": [\"jawOpen\", \"eyeBlinkLeft\"]", ""),
            "facsNames",
            "missing",
        ),
        (
            ok.replace("[[0.1, 0.2], [0.3, 0.4]]", "[]")
                .replace("\"numFrames\": 2, ", ""),
            "weightMat",
            "no frames",
        ),
        (ok[..40].to_string(), "JSON (line 1", ""),
    ] {
        let (f, r) = field(read_audio2face_str(&text, "bad.json").unwrap_err());
        assert!(f.starts_with(want_field), "{text}: field {f}");
        assert!(r.contains(want_reason), "{text}: {r}");
    }
    // The emotion-key export is named as what it is.
    let (f, r) = field(
        read_audio2face(&data(
            "a2f_export_emotionkey-Adam-from-Edukey-11L-Charlie.json",
        ))
        .unwrap_err(),
    );
    assert_eq!(f, "emotionNames");
    assert!(r.contains("emotion-key export"), "{r}");
}
