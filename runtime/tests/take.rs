//! `take::bake_take`: a whole take baked from file names and options (what `mien bake` and the
//! Python package run), checked against the lower-level `bake` it is built from and the reader.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_runtime::bake::{BakeOptions, bake, verify};
use mien_runtime::speech::{Speech, SpeechOptions};
use mien_runtime::take::{Take, TakeOptions, bake_take};
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// The speech take equals the same bake made by hand from `Speech::from_file` and `bake`, with the
/// key count worked out from the utterance's end: floor(end · fps) + 1.
#[test]
fn a_speech_take_equals_the_bake_made_by_hand() {
    let file = data("facecap/facecap.glb");
    let source = std::fs::read(&file).unwrap();
    let asset = Arc::new(Asset::load(&file).unwrap());
    let speech_file = data("gentle/lucier_golden.json");
    let take = Take {
        speech: Some(speech_file.clone()),
        clip: Some("rest".into()),
        ..Take::default()
    };
    let opts = TakeOptions {
        fps: 24.0,
        ..TakeOptions::default()
    };
    let baked = bake_take(&asset, &source, "out.glb", &take, &opts).unwrap();

    let sp = Speech::from_file(&speech_file, &SpeechOptions::default(), asset.character()).unwrap();
    let end = sp.span().1;
    let frames = (end * 24.0).floor() as u32 + 1;
    assert_eq!(baked.frames, frames);
    assert_eq!(baked.report.keys, frames);
    let label = sp.report()["label"].as_str().unwrap().to_string();
    assert_eq!(baked.name, format!("mien: {label}"));

    let mut rt = Runtime::new(
        Arc::clone(&asset),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    rt.instance_mut(0)
        .unwrap()
        .rest()
        .set_speech(Some(sp))
        .unwrap();
    let mut o = BakeOptions::new(format!("mien: {label}"), 24.0, frames);
    o.take = serde_json::json!({"kind": "speech", "name": label, "drive": "rest pose (clip rest)"});
    let (bytes, _) = bake(&mut rt, &source, &o).unwrap();
    assert!(
        bytes == baked.bytes,
        "bake_take differs from the bake made by hand"
    );
    assert_eq!(
        verify(&baked.bytes, "out.glb").unwrap().takes,
        vec![baked.name.clone()]
    );

    // The same inputs bake the same bytes again (a retried row writes what the first wrote).
    let again = bake_take(&asset, &source, "out.glb", &take, &opts).unwrap();
    assert!(again.bytes == baked.bytes);
}

/// Options out of range and contradictory takes are refused with the option and its value named.
#[test]
fn bad_options_are_refused_by_name() {
    let file = data("facecap/facecap.glb");
    let source = std::fs::read(&file).unwrap();
    let asset = Arc::new(Asset::load(&file).unwrap());
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let arkit = Take {
        arkit: Some(csv.clone()),
        ..Take::default()
    };
    let cases: Vec<(Take, TakeOptions, &str)> = vec![
        (
            arkit.clone(),
            TakeOptions {
                fps: 0.5,
                ..TakeOptions::default()
            },
            "fps 0.5",
        ),
        (
            arkit.clone(),
            TakeOptions {
                fps: f64::NAN,
                ..TakeOptions::default()
            },
            "fps NaN",
        ),
        (
            arkit.clone(),
            TakeOptions {
                start_s: -1.0,
                ..TakeOptions::default()
            },
            "start -1",
        ),
        (
            arkit.clone(),
            TakeOptions {
                start_s: 1e6,
                ..TakeOptions::default()
            },
            "past the take's end",
        ),
        (
            arkit.clone(),
            TakeOptions {
                frames: Some(0),
                ..TakeOptions::default()
            },
            "frames 0",
        ),
        (
            arkit.clone(),
            TakeOptions {
                frames: Some(1_000_000),
                ..TakeOptions::default()
            },
            "frames 1000000",
        ),
        (
            Take {
                clip: Some("0".into()),
                ..arkit.clone()
            },
            TakeOptions::default(),
            "give one",
        ),
        (
            Take {
                clip: Some("nope".into()),
                ..Take::default()
            },
            TakeOptions::default(),
            "nope",
        ),
        (
            Take {
                arkit: Some(data("no/such.csv")),
                ..Take::default()
            },
            TakeOptions::default(),
            "such.csv",
        ),
    ];
    for (take, opts, says) in cases {
        let e = bake_take(&asset, &source, "out.glb", &take, &opts).unwrap_err();
        assert!(e.chain_text().contains(says), "{says}: {}", e.chain_text());
    }
}

/// The built-ins have no file: `bake_take` writes each as a GLB and bakes onto it; the result
/// verifies, and the body's walk keys its joints. (The body's skin names a joint twice on some
/// vertices: the writer merges them, which the importer of the bake's own check requires.)
#[test]
fn the_builtins_bake_without_a_file() {
    let head = Arc::new(Asset::builtin());
    let take = Take {
        speech: Some(data("gentle/lucier_golden.json")),
        ..Take::default()
    };
    let b = bake_take(&head, &[], "head.glb", &take, &TakeOptions::default()).unwrap();
    assert_eq!(
        verify(&b.bytes, "head.glb").unwrap().takes,
        vec![b.name.clone()]
    );
    assert!(b.report.weight_channels >= 1);

    let body = Arc::new(Asset::builtin_body());
    let take = Take {
        clip: Some("walk".into()),
        ..Take::default()
    };
    let b = bake_take(&body, &[], "body.glb", &take, &TakeOptions::default()).unwrap();
    assert_eq!(
        verify(&b.bytes, "body.glb").unwrap().takes,
        vec![b.name.clone()]
    );
    assert!(b.report.transform_channels >= 10, "{:?}", b.report);
}

/// `TakeOptions::caller` is kept in the record's take, covered by its checksum.
#[test]
fn the_callers_record_is_kept() {
    let file = data("facecap/facecap.glb");
    let source = std::fs::read(&file).unwrap();
    let asset = Arc::new(Asset::load(&file).unwrap());
    let take = Take {
        arkit: Some(data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv")),
        ..Take::default()
    };
    let opts = TakeOptions {
        caller: Some(serde_json::json!({"row": "abc123"})),
        frames: Some(5),
        ..TakeOptions::default()
    };
    let b = bake_take(&asset, &source, "out.glb", &take, &opts).unwrap();
    let text = String::from_utf8_lossy(&b.bytes);
    assert!(text.contains(r#""caller":{"row":"abc123"}"#));
    verify(&b.bytes, "out.glb").unwrap();
    // Another digest is another record: the bytes differ.
    let other = TakeOptions {
        caller: Some(serde_json::json!({"row": "def456"})),
        ..opts
    };
    assert!(
        bake_take(&asset, &source, "out.glb", &take, &other)
            .unwrap()
            .bytes
            != b.bytes
    );
}
