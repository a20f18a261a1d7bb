//! The mark readers (Amazon Polly speech marks, Azure viseme events) and mien's own utterance
//! JSON on small hand-written files with hand-computed segments; the file checks (regular file,
//! size cap) before reading.

mod speech_readers_common;

use mien_core::Error;
use mien_core::io::speech::{
    Conversion, SpeechFormat, Unit, azure, mien_json, polly, read_speech, read_speech_bytes,
};
use mien_core::speech::Viseme;
use speech_readers_common::{self as fx, close, format_err, read, segs, want};

#[test]
fn polly_speech_marks() {
    let (s, _) = read("mary.marks", fx::POLLY);
    // ms → s; each viseme to the next; `t` at 521 ms replaced at once; sil held 0.1 s.
    close(
        &s,
        &[
            (0.006, 0.073, "PP"),
            (0.073, 0.18, "E"),
            (0.18, 0.292, "RR"),
            (0.292, 0.373, "ih"),
            (0.373, 0.46, "kk"),
            (0.46, 0.521, "aa"),
            (0.521, 0.6, "CH"),
            (0.6, 0.7, "sil"),
        ],
        1e-12,
    );
    assert!((s.duration() - 0.7).abs() < 1e-12);
    let r = s.report();
    assert_eq!(r.count(Conversion::MarkIgnored), 3);
    assert_eq!(
        r.entry(Conversion::MarkIgnored).unwrap().examples,
        ["sentence mark", "word mark"]
    );
    assert_eq!(r.count(Conversion::VisemeMapped), 9);
    assert_eq!(r.count(Conversion::ZeroLengthSkipped), 1);
    assert_eq!(r.count(Conversion::LastMarkDefaultLength), 1);
    // With the audio's end given, the last viseme ends there.
    let s = polly::read_polly_str(fx::POLLY, "mary.marks", Some(0.65)).unwrap();
    assert_eq!(s.duration(), 0.65);
    assert_eq!(s.segments().last().unwrap().end, 0.65);
    assert_eq!(s.report().count(Conversion::LastMarkDefaultLength), 0);
    assert!(matches!(
        polly::read_polly_str(fx::POLLY, "mary.marks", Some(0.5)),
        Err(Error::Invalid { .. })
    ));
    // Case matters: `S` is sh (CH), `s` is s (SS); `T` th, `t` t; `O` and `o` both oh; `E`/`e` E.
    for (letter, v) in [
        ("S", Viseme::CH),
        ("s", Viseme::SS),
        ("T", Viseme::TH),
        ("t", Viseme::DD),
        ("O", Viseme::OH),
        ("o", Viseme::OH),
        ("E", Viseme::E),
        ("e", Viseme::E),
        ("@", Viseme::AA),
        ("l", Viseme::NN),
    ] {
        assert_eq!(polly::polly_viseme(letter), Some(v), "{letter}");
    }
    // Unknown letters are all named by line.
    let bad = "{\"time\":0,\"type\":\"viseme\",\"value\":\"Q\"}\n{\"time\":5,\"type\":\"viseme\",\"value\":\"x\"}\n";
    match read_speech_bytes(bad.as_bytes(), "bad.marks", None).unwrap_err() {
        Error::Many(v) => assert_eq!(v.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn azure_both_spellings() {
    let expect = [
        (0.05, 0.1, "sil"),
        (0.1, 0.175, "PP"),
        (0.175, 0.25, "aa"),
        (0.25, 0.3, "DD"),
        (0.3, 0.4, "sil"),
    ];
    let (a, _) = read("azure.json", fx::AZURE_CAMEL);
    let (b, _) = read("azure.json", fx::AZURE_PASCAL);
    close(&a, &expect, 1e-12);
    assert_eq!(segs(&a), segs(&b), "both spellings read the same");
    assert!((a.duration() - 0.4).abs() < 1e-12);
    // Mixed spellings across events are fine; both in one event are not.
    let mixed = r#"[{"audioOffset": 0, "VisemeId": 21}, {"AudioOffset": 1000000, "visemeId": 0}]"#;
    let s = azure::read_azure_str(mixed, "m.json", Some(0.25)).unwrap();
    assert_eq!(segs(&s), want(&[(0.0, 0.1, "PP"), (0.1, 0.25, "sil")]));
    let both = r#"[{"audioOffset": 0, "AudioOffset": 0, "visemeId": 21}]"#;
    let (_, field, index, _) =
        format_err(read_speech_bytes(both.as_bytes(), "b.json", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("/0/AudioOffset", Some(0)));
    // IDs outside 0–21 are refused by pointer.
    let out = r#"[{"audioOffset": 0, "visemeId": 22}]"#;
    let (_, field, _, _) =
        format_err(read_speech_bytes(out.as_bytes(), "o.json", None).unwrap_err());
    assert_eq!(field, "/0/visemeId");
    // Every ID maps; the documented anchors.
    for (id, v) in [
        (0, Viseme::Sil),
        (1, Viseme::AA),
        (5, Viseme::RR),
        (14, Viseme::NN),
        (16, Viseme::CH),
        (17, Viseme::TH),
        (19, Viseme::DD),
        (21, Viseme::PP),
    ] {
        assert_eq!(azure::azure_viseme(id), Some(v), "ID {id}");
    }
    assert!((0..22).all(|id| azure::azure_viseme(id).is_some()));
}

#[test]
fn mien_json_reads_strictly() {
    let (s, _) = read("x.json", fx::MIEN_PHONEMES);
    assert_eq!(s.label(), "hello", "the file's own label");
    assert_eq!(
        segs(&s),
        want(&[(0.0, 0.1, "SIL"), (0.1, 0.25, "HH"), (0.3, 0.5, "EH")])
    );
    let a = s.to_aligned(0.0).unwrap();
    assert_eq!(a.viseme_at(0.27), None, "the gap stays a gap");
    let (v, _) = read("y.json", fx::MIEN_VISEMES);
    assert_eq!(v.segments()[1].unit, Unit::Viseme(Viseme::AA));
    // Unknown keys, wrong version, stress digits, bad viseme names: each by JSON pointer.
    let cases = [
        (
            fx::MIEN_PHONEMES.replacen("\"end\": 0.25", "\"ned\": 0.25", 1),
            "/segments/1/ned",
        ),
        (
            fx::MIEN_PHONEMES.replacen("\"version\": 1", "\"version\": 2", 1),
            "/version",
        ),
        (
            fx::MIEN_PHONEMES.replacen("\"label\"", "\"extra\": 0, \"label\"", 1),
            "/extra",
        ),
        (
            fx::MIEN_PHONEMES.replacen("\"EH\"", "\"EH1\"", 1),
            "/segments/2/value",
        ),
        (
            fx::MIEN_VISEMES.replacen("\"aa\"", "\"AA\"", 1),
            "/segments/1/value",
        ),
        (
            fx::MIEN_PHONEMES.replacen("\"phonemes\"", "\"words\"", 1),
            "/units",
        ),
    ];
    for (text, pointer) in cases {
        let (_, field, _, reason) =
            format_err(read_speech_bytes(text.as_bytes(), "u.json", None).unwrap_err());
        assert_eq!(field, pointer, "{reason}");
    }
    // Order is checked after the structure: overlapping segments, by index.
    let ov = fx::MIEN_PHONEMES.replacen("\"start\": 0.3", "\"start\": 0.2", 1);
    let (_, field, index, _) =
        format_err(read_speech_bytes(ov.as_bytes(), "u.json", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("segments", Some(2)));
}

#[test]
fn mien_json_write_read_file() {
    let (s, _) = read("x.json", fx::MIEN_PHONEMES);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hello.utterance.json");
    mien_json::write_utterance(&p, &s).unwrap();
    let (back, f) = read_speech(&p, None).unwrap();
    assert_eq!(f, SpeechFormat::Mien);
    assert_eq!(
        (back.label(), back.duration(), back.segments()),
        (s.label(), s.duration(), s.segments())
    );
    // A Rhubarb file written as mien JSON keeps its visemes.
    let (r, _) = read("line.tsv", fx::RHUBARB_TSV);
    let (back, _) = read("line.json", &mien_json::utterance_json(&r));
    assert_eq!(back.segments(), r.segments());
}

#[test]
fn files_are_checked_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    // A directory is not a regular file.
    let (_, field, _, _) = format_err(read_speech(dir.path(), None).unwrap_err());
    assert_eq!(field, "file type");
    // A (sparse) file over the 64 MiB cap is refused before it is read.
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(mien_core::io::speech::MAX_SPEECH_FILE_BYTES + 1)
        .unwrap();
    match read_speech(&big, None).unwrap_err() {
        Error::Limit { limit, found, .. } => {
            assert_eq!((limit, found), (64 << 20, (64 << 20) + 1));
        }
        other => panic!("{other:?}"),
    }
    // A missing file is an I/O error naming it.
    assert!(matches!(
        read_speech(&dir.path().join("none.TextGrid"), None),
        Err(Error::Io { .. })
    ));
}

#[test]
fn format_names_round_trip() {
    for f in mien_core::io::speech::SPEECH_FORMATS {
        assert_eq!(SpeechFormat::from_name(f.name()), Some(f));
        assert_eq!(serde_json::to_value(f).unwrap(), f.name());
    }
    assert_eq!(SpeechFormat::from_name("praat"), None);
}

#[test]
fn schema_matches_the_reader() {
    use mien_core::io::speech::mien_json::{FORMAT_TAG, FORMAT_VERSION, SEGMENT_KEYS, TOP_KEYS};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/schemas/utterance.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(strings(&schema["required"]), TOP_KEYS);
    let mut props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    let mut top = TOP_KEYS.to_vec();
    props.sort();
    top.sort();
    assert_eq!(props, top);
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["format"]["const"], FORMAT_TAG);
    assert_eq!(schema["properties"]["version"]["const"], FORMAT_VERSION);
    let seg = &schema["$defs"]["segment"];
    assert_eq!(strings(&seg["required"]), SEGMENT_KEYS);
    assert_eq!(seg["additionalProperties"], false);
    assert_eq!(
        strings(&schema["$defs"]["viseme"]["enum"]),
        mien_core::speech::VISEME_NAMES
    );
    assert_eq!(
        strings(&schema["$defs"]["phoneme"]["enum"]),
        mien_core::speech::viseme::PHONEMES
    );
}

#[test]
fn azure_offsets_in_milliseconds_are_refused() {
    // The fixture's events with their offsets written in milliseconds (50, 100, 175, 250, 300)
    // instead of 100-ns ticks: read as ticks the five events span 250 ticks = 25 µs, 6.25 µs
    // apart on average (under the 1 ms floor) — today a 0.1 s utterance of one `sil`.
    let ms = r#"[
  {"audioOffset": 50, "visemeId": 0},
  {"audioOffset": 100, "visemeId": 21},
  {"audioOffset": 175, "visemeId": 2},
  {"audioOffset": 250, "visemeId": 19},
  {"audioOffset": 300, "visemeId": 0}
]"#;
    let (file, field, index, reason) =
        format_err(read_speech_bytes(ms.as_bytes(), "take/line1.json", None).unwrap_err());
    assert_eq!(file, "take/line1.json");
    assert_eq!((field.as_str(), index), ("/4/audioOffset", Some(4)));
    assert!(
        reason.contains(
            "these look like milliseconds, Azure's AudioOffset is in 100-ns ticks (×10,000)"
        ) && reason.contains("5 distinct mark times span 250 ticks (0.000025 s)")
            && reason.contains("0.00000625 s apart on average"),
        "{reason}"
    );
    // The same refusal with the audio's end given, and in the SDK's spelling (named as spelt).
    assert!(azure::read_azure_str(ms, "a.json", Some(0.35)).is_err());
    let pascal = ms.replace("audioOffset", "AudioOffset");
    let (_, field, _, _) = format_err(azure::read_azure_str(&pascal, "a.json", None).unwrap_err());
    assert_eq!(field, "/4/AudioOffset");
    // ×10,000 fixes it: the fixture itself (tested above) reads.
    // The other way: nanoseconds (×100 the ticks) put 5 events 7.5 s apart on average.
    let ns = r#"[{"audioOffset": 50000000, "visemeId": 0}, {"audioOffset": 100000000, "visemeId": 21},
      {"audioOffset": 175000000, "visemeId": 2}, {"audioOffset": 250000000, "visemeId": 19},
      {"audioOffset": 350000000, "visemeId": 0}]"#;
    let (_, field, _, reason) =
        format_err(read_speech_bytes(ns.as_bytes(), "n.json", None).unwrap_err());
    assert_eq!(field, "/4/audioOffset");
    assert!(
        reason.contains("7.5 s apart on average (over 5 s")
            && reason.contains("finer than Azure's 100-ns ticks"),
        "{reason}"
    );
    // Boundaries: exactly 1 ms apart reads; simultaneous events count once; two events never
    // trip the upper bound (one long pause is possible).
    let ok = r#"[{"audioOffset": 0, "visemeId": 21}, {"audioOffset": 10000, "visemeId": 2}, {"audioOffset": 20000, "visemeId": 0}]"#;
    assert!(azure::read_azure_str(ok, "ok.json", None).is_ok());
    let same = r#"[{"audioOffset": 0, "visemeId": 21}, {"audioOffset": 0, "visemeId": 2}, {"audioOffset": 10000, "visemeId": 0}]"#;
    assert!(azure::read_azure_str(same, "same.json", None).is_ok());
    let pause = r#"[{"audioOffset": 0, "visemeId": 0}, {"audioOffset": 600000000, "visemeId": 2}]"#;
    assert!(azure::read_azure_str(pause, "pause.json", None).is_ok());
}

#[test]
fn polly_times_in_the_wrong_unit_are_refused() {
    // Seconds where Polly writes milliseconds: 0.006 … 0.6 "ms" span 0.594 ms over 3 distinct
    // times, 0.297 ms apart on average.
    let s = "{\"time\":0.006,\"type\":\"viseme\",\"value\":\"p\"}\n\
             {\"time\":0.073,\"type\":\"viseme\",\"value\":\"E\"}\n\
             {\"time\":0.6,\"type\":\"viseme\",\"value\":\"sil\"}\n";
    let (file, field, index, reason) =
        format_err(read_speech_bytes(s.as_bytes(), "mary.marks", None).unwrap_err());
    assert_eq!(file, "mary.marks");
    assert_eq!((field.as_str(), index), ("line 3: time", Some(3)));
    assert!(
        reason.contains("these look like seconds, Polly's `time` is in milliseconds (×1000)")
            && reason.contains("0.000297 s apart on average"),
        "{reason}"
    );
    // Azure ticks in Polly's `time` (TalkingHead #33's confusion): 60,000 ms apart on average.
    let t = "{\"time\":60000,\"type\":\"viseme\",\"value\":\"p\"}\n\
             {\"time\":730000,\"type\":\"viseme\",\"value\":\"E\"}\n\
             {\"time\":1800000,\"type\":\"viseme\",\"value\":\"r\"}\n\
             {\"time\":6000000,\"type\":\"word\",\"value\":\"x\"}\n";
    let (_, field, _, reason) =
        format_err(read_speech_bytes(t.as_bytes(), "t.marks", None).unwrap_err());
    assert_eq!(field, "line 3: time");
    assert!(
        reason.contains("870 s apart on average") && reason.contains("100-ns ticks"),
        "{reason}"
    );
    // Two marks never trip the spacing bound, but the audio's end, when given, shows the same
    // confusion: the last mark 1250 s in, 2500× past a 0.5 s audio.
    let two = "{\"time\":0,\"type\":\"viseme\",\"value\":\"p\"}\n\
               {\"time\":1250000,\"type\":\"viseme\",\"value\":\"a\"}\n";
    assert!(read_speech_bytes(two.as_bytes(), "two.marks", None).is_ok());
    match polly::read_polly_str(two, "two.marks", Some(0.5)).unwrap_err() {
        Error::Invalid { what, reason } => {
            assert_eq!(what, "two.marks: end time");
            assert!(
                reason.contains("2500× past the audio's end")
                    && reason.contains("finer than Polly's milliseconds"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    // A mark only a little past the end is refused without the unit hint.
    match polly::read_polly_str(two, "two.marks", Some(1000.0)).unwrap_err() {
        Error::Invalid { reason, .. } => assert!(!reason.contains("past the audio"), "{reason}"),
        other => panic!("{other:?}"),
    }
}
