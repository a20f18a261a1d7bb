//! MediaPipe Face Landmarker scores: the two real files (a text-proto ClassificationList and the
//! `{"people": …}` JSON) read as one-frame ARKit streams with values checked against the files
//! read independently; the Tasks API's per-frame results (built here from its documented shape)
//! read as a timed stream; malformed variants refused naming the field.

use std::path::{Path, PathBuf};

use mien_core::Error;
use mien_core::io::mediapipe::{read_mediapipe, read_mediapipe_str};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/mediapipe")
        .join(rel)
}

#[test]
fn the_real_files_read_as_one_frame_streams() {
    let p = read_mediapipe(&data("portrait_expected_blendshapes.pbtxt")).unwrap();
    assert_eq!((p.frame_count(), p.channel_count()), (1, 52));
    assert_eq!(
        (p.channels[0].as_str(), p.channels[1].as_str()),
        ("_neutral", "browDownLeft")
    );
    // By hand from the file: index 1 scores 0.7923543, index 2 0.81483257.
    assert_eq!((p.frame(0)[1], p.frame(0)[2]), (0.7923543, 0.81483257));
    assert!(!p.channels.iter().any(|c| c == "tongueOut"));
    // The stream dispatcher (`--arkit`, `play_stream_file`) finds both by extension and content.
    for f in [
        "portrait_expected_blendshapes.pbtxt",
        "vsekai_blendshapes.json",
    ] {
        let (s, notes) = mien_core::io::read_stream(&data(f)).unwrap();
        assert_eq!((s.frame_count(), notes.len()), (1, 0), "{f}");
    }
    let j = read_mediapipe(&data("vsekai_blendshapes.json")).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data("vsekai_blendshapes.json")).unwrap()).unwrap();
    assert_eq!(j.channel_count(), v["people"][0].as_array().unwrap().len());
    for k in [0, 1, 25] {
        assert_eq!(j.channels[k], v["people"][0][k]["name"].as_str().unwrap());
        assert_eq!(
            j.frame(0)[k],
            v["people"][0][k]["score"].as_f64().unwrap() as f32
        );
    }
    // `_neutral` is ignored on purpose, every other name is an ARKit channel.
    let b = mien_core::anim::canon::Binding::new(
        &j.channels,
        mien_core::anim::arkit::ARKIT_52.as_slice(),
    );
    assert_eq!(b.report().ignored_channels.len(), 1);
    assert!(
        b.report().unmatched_channels.is_empty(),
        "{:?}",
        b.report().unmatched_channels
    );
}

fn results(frames: &[(f64, &[(&str, f64)])]) -> String {
    let v: Vec<serde_json::Value> = frames
        .iter()
        .map(|(t, cats)| {
            serde_json::json!({
                "timestampMs": t,
                "faceBlendshapes": [{"categories": cats.iter().enumerate().map(|(i, (n, s))| serde_json::json!({"index": i, "score": s, "categoryName": n, "displayName": ""})).collect::<Vec<_>>()}]
            })
        })
        .collect();
    serde_json::to_string(&v).unwrap()
}

#[test]
fn per_frame_results_read_as_a_timed_stream_and_bad_ones_are_refused() {
    let a: &[(&str, f64)] = &[("_neutral", 0.1), ("jawOpen", 0.2)];
    let b: &[(&str, f64)] = &[("_neutral", 0.0), ("jawOpen", 0.6)];
    let s = read_mediapipe_str(&results(&[(1000.0, a), (1033.0, b)]), "v.json").unwrap();
    assert_eq!(s.times, vec![0.0, 0.033]);
    assert_eq!(s.frame(1)[1], 0.6);
    let field = |e: Error| match e {
        Error::Format { field, reason, .. } => (field, reason),
        o => panic!("{o:?}"),
    };
    let swapped: &[(&str, f64)] = &[("jawOpen", 0.6), ("_neutral", 0.0)];
    let (f, r) =
        field(read_mediapipe_str(&results(&[(0.0, a), (33.0, swapped)]), "v.json").unwrap_err());
    assert!(
        f.starts_with("frames") && r.contains("`jawOpen`, the first frame's `_neutral`"),
        "{f}: {r}"
    );
    let (f, r) =
        field(read_mediapipe_str(&results(&[(33.0, a), (33.0, b)]), "v.json").unwrap_err());
    assert_eq!(f, "[1].timestampMs");
    assert!(r.contains("does not follow"), "{r}");
    let lost = r#"[{"timestampMs": 0, "faceBlendshapes": []}]"#;
    let (f, r) = field(read_mediapipe_str(lost, "v.json").unwrap_err());
    assert_eq!(f, "[0].faceBlendshapes");
    assert!(r.contains("no face"), "{r}");
    let nan = results(&[(0.0, a)]).replace("0.2", "\"x\"");
    let (f, _) = field(read_mediapipe_str(&nan, "v.json").unwrap_err());
    assert_eq!(f, "[0].faceBlendshapes[0].categories[1].score");
    let unclosed = "classification {\n  score: 0.5\n  label: \"jawOpen\"\n";
    let (f, r) = field(read_mediapipe_str(unclosed, "p.pbtxt").unwrap_err());
    assert_eq!(
        (f.as_str(), r.as_str()),
        ("classification (line 1)", "not closed")
    );
}

/// The CSV layout people save from MediaPipe's results (a millisecond time column, a frame index,
/// one column per blendshape) reads as a timed stream; without a time column it is refused naming
/// the accepted ones; `read_stream` tells it from a Live Link export by its header.
#[test]
fn score_csv_with_a_time_column_reads_as_a_timed_stream() {
    use mien_core::io::mediapipe::read_score_csv;
    let csv = "frame,timestamp_ms,_neutral,jawOpen,eyeBlinkLeft\n0,1000,0.9,0.1,0.0\n1,1033,0.8,0.25,0.5\n";
    let s = read_score_csv(csv, "mp.csv").unwrap();
    assert_eq!(s.channels, ["_neutral", "jawOpen", "eyeBlinkLeft"]);
    assert_eq!(s.times, vec![0.0, 0.033]);
    assert_eq!(s.frame(1), &[0.8, 0.25, 0.5]);
    let e = read_score_csv("jawOpen,eyeBlinkLeft\n0.1,0.2\n", "x.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no time column") && e.contains("timestamp_ms"),
        "{e}"
    );
    let e = read_score_csv("time,jawOpen\n0,0.1\n0.1,nan\n", "x.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("jawOpen (line 3)"), "{e}");
    let dir = std::env::temp_dir().join(format!("mien-mp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("mp.csv");
    std::fs::write(&p, csv).unwrap();
    let (s, _) = mien_core::io::read_stream(&p).unwrap();
    assert_eq!(s.frame_count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
