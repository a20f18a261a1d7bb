//! Small hand-written speech timing files, one or more per reader, shared by the
//! `speech_readers*` tests. Expected segments are worked out by hand next to each test.

#![allow(dead_code)]

use mien_core::Error;
use mien_core::io::speech::{SpeechFile, SpeechFormat, read_speech_bytes};

/// Long-format TextGrid, MFA 1.x style: words then phones, ARPABET with stress digits, `sil`,
/// `sp` and an empty label, a `!` comment and a `""` quote inside a string.
pub const TEXTGRID_LONG: &str = r#"File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0 
xmax = 1.5 
tiers? <exists> 
size = 2 
item []: 
    item [1]:
        class = "IntervalTier" 
        name = "words" 
        xmin = 0 
        xmax = 1.5 
        intervals: size = 3 
        intervals [1]:
            xmin = 0 
            xmax = 0.2 
            text = "" 
        intervals [2]:
            xmin = 0.2 
            xmax = 0.9 
            text = "say ""hello""" ! a comment Praat skips
        intervals [3]:
            xmin = 0.9 
            xmax = 1.5 
            text = "" 
    item [2]:
        class = "IntervalTier" 
        name = "phones" 
        xmin = 0 
        xmax = 1.5 
        intervals: size = 7 
        intervals [1]:
            xmin = 0 
            xmax = 0.2 
            text = "sil" 
        intervals [2]:
            xmin = 0.2 
            xmax = 0.3 
            text = "HH" 
        intervals [3]:
            xmin = 0.3 
            xmax = 0.45 
            text = "AH0" 
        intervals [4]:
            xmin = 0.45 
            xmax = 0.6 
            text = "L" 
        intervals [5]:
            xmin = 0.6 
            xmax = 0.9 
            text = "OW1" 
        intervals [6]:
            xmin = 0.9 
            xmax = 1 
            text = "sp" 
        intervals [7]:
            xmin = 1 
            xmax = 1.5 
            text = "" 
"#;

/// Short-format TextGrid: an interval tier `a`, a point tier, then interval tier `b` (the
/// second *interval* tier, so the phone tier), in ASCII-only IPA (`i` is not ARPABET).
pub const TEXTGRID_SHORT: &str = r#"File type = "ooTextFile"
Object class = "TextGrid"

0
1
<exists>
3
"IntervalTier"
"a"
0
1
1
0
1
"mi"
"TextTier"
"marks"
0
1
1
0.5
"peak"
"IntervalTier"
"b"
0
1
3
0
0.25
"m"
0.25
0.75
"i"
0.75
1
"spn"
"#;

/// Gentle JSON: a word without timing, an out-of-vocabulary word overlapping "hi" by 1 µs, "you"
/// overlapping it by 5 ms (trimmed) with a stress digit, and a timed word without phones.
pub const GENTLE: &str = r#"{"transcript": "hi there you",
 "words": [
  {"case": "success", "start": 0.5, "end": 0.62, "word": "hi", "alignedWord": "hi",
   "startOffset": 0, "endOffset": 2,
   "phones": [{"phone": "hh_B", "duration": 0.05}, {"phone": "ay_E", "duration": 0.07}]},
  {"case": "not-found-in-audio", "word": "there", "startOffset": 3, "endOffset": 8},
  {"case": "not-found-in-transcript", "start": 0.619999, "end": 0.8, "alignedWord": "[oov]",
   "phones": [{"phone": "oov_S", "duration": 0.180001}]},
  {"case": "success", "start": 0.795, "end": 1.0, "word": "you", "alignedWord": "you",
   "startOffset": 9, "endOffset": 12,
   "phones": [{"phone": "y_B", "duration": 0.1}, {"phone": "uw1_E", "duration": 0.105}]},
  {"case": "not-found-in-transcript", "start": 1.2, "end": 1.2, "alignedWord": "i", "phones": []}
 ]}"#;

/// Rhubarb TSV: the last line (0.95 X) only ends the previous shape; `A` at 0.43 is replaced at
/// the same time (zero length).
pub const RHUBARB_TSV: &str =
    "0.00\tX\n0.05\tD\n0.27\tC\n0.31\tB\n0.43\tA\n0.43\tF\n0.60\tG\n0.75\tH\n0.80\tE\n0.95\tX\n";

/// Rhubarb JSON with `metadata.duration` past the last cue.
pub const RHUBARB_JSON: &str = r#"{
  "metadata": { "soundFile": "line.wav", "duration": 1.2 },
  "mouthCues": [
    { "start": 0.00, "end": 0.10, "value": "X" },
    { "start": 0.10, "end": 0.35, "value": "A" },
    { "start": 0.35, "end": 0.60, "value": "D" },
    { "start": 0.60, "end": 0.90, "value": "X" }
  ]
}"#;

/// Polly speech marks for "Mary had…": sentence and word marks to ignore, `t` replaced by `S` at
/// the same millisecond, a final `sil`.
pub const POLLY: &str = r#"{"time":0,"type":"sentence","start":0,"end":23,"value":"Mary had a little lamb."}
{"time":6,"type":"word","start":0,"end":4,"value":"Mary"}
{"time":6,"type":"viseme","value":"p"}
{"time":73,"type":"viseme","value":"E"}
{"time":180,"type":"viseme","value":"r"}
{"time":292,"type":"viseme","value":"i"}
{"time":373,"type":"word","start":5,"end":8,"value":"had"}
{"time":373,"type":"viseme","value":"k"}
{"time":460,"type":"viseme","value":"a"}
{"time":521,"type":"viseme","value":"t"}
{"time":521,"type":"viseme","value":"S"}
{"time":600,"type":"viseme","value":"sil"}
"#;

/// Azure viseme events, REST / JavaScript spelling.
pub const AZURE_CAMEL: &str = r#"[
  {"audioOffset": 500000, "visemeId": 0},
  {"audioOffset": 1000000, "visemeId": 21},
  {"audioOffset": 1750000, "visemeId": 2},
  {"audioOffset": 2500000, "visemeId": 19},
  {"audioOffset": 3000000, "visemeId": 0}
]"#;

/// The same events, C# / Python SDK spelling, with an extra member to ignore.
pub const AZURE_PASCAL: &str = r#"[
  {"AudioOffset": 500000, "VisemeId": 0, "Animation": ""},
  {"AudioOffset": 1000000, "VisemeId": 21, "Animation": ""},
  {"AudioOffset": 1750000, "VisemeId": 2, "Animation": ""},
  {"AudioOffset": 2500000, "VisemeId": 19, "Animation": ""},
  {"AudioOffset": 3000000, "VisemeId": 0, "Animation": ""}
]"#;

/// mien utterance JSON, phonemes, with a gap between 0.25 and 0.3 s.
pub const MIEN_PHONEMES: &str = r#"{"format": "mien-utterance", "version": 1, "label": "hello",
 "duration": 1.0, "units": "phonemes",
 "segments": [{"start": 0.0, "end": 0.1, "value": "SIL"},
              {"start": 0.1, "end": 0.25, "value": "HH"},
              {"start": 0.3, "end": 0.5, "value": "EH"}]}"#;

/// mien utterance JSON, visemes (the seed 002 example).
pub const MIEN_VISEMES: &str = r#"{"format": "mien-utterance", "version": 1, "label": "recording-v1",
 "duration": 1, "units": "visemes",
 "segments": [{"start": 0, "end": 0.125, "value": "PP"},
              {"start": 0.125, "end": 0.75, "value": "aa"},
              {"start": 0.75, "end": 1, "value": "sil"}]}"#;

/// Every fixture with its file name and the format detection must find.
pub fn all() -> Vec<(&'static str, &'static str, SpeechFormat)> {
    vec![
        ("hello.TextGrid", TEXTGRID_LONG, SpeechFormat::TextGrid),
        ("short.TextGrid", TEXTGRID_SHORT, SpeechFormat::TextGrid),
        ("hi.json", GENTLE, SpeechFormat::Gentle),
        ("line.tsv", RHUBARB_TSV, SpeechFormat::RhubarbTsv),
        ("line.json", RHUBARB_JSON, SpeechFormat::RhubarbJson),
        ("mary.marks", POLLY, SpeechFormat::Polly),
        ("azure.json", AZURE_CAMEL, SpeechFormat::Azure),
        ("azure_sdk.json", AZURE_PASCAL, SpeechFormat::Azure),
        ("hello.utterance.json", MIEN_PHONEMES, SpeechFormat::Mien),
        ("seed.utterance.json", MIEN_VISEMES, SpeechFormat::Mien),
    ]
}

/// UTF-16 with a byte-order mark, as Praat writes non-ASCII TextGrids.
pub fn utf16(text: &str, little: bool) -> Vec<u8> {
    let mut out = if little {
        vec![0xFF, 0xFE]
    } else {
        vec![0xFE, 0xFF]
    };
    for u in text.encode_utf16() {
        out.extend_from_slice(&if little {
            u.to_le_bytes()
        } else {
            u.to_be_bytes()
        });
    }
    out
}

/// Read `text` named `name`, detecting the format; panics with the error.
pub fn read(name: &str, text: &str) -> (SpeechFile, SpeechFormat) {
    read_speech_bytes(text.as_bytes(), name, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Segments as (start, end, label) for comparison.
pub fn segs(s: &SpeechFile) -> Vec<(f64, f64, String)> {
    s.segments()
        .iter()
        .map(|g| (g.start, g.end, g.unit.name().to_owned()))
        .collect()
}

/// Owned expected segments.
pub fn want(v: &[(f64, f64, &str)]) -> Vec<(f64, f64, String)> {
    v.iter().map(|&(a, b, l)| (a, b, l.to_owned())).collect()
}

/// Same segments within `tol` seconds (for times computed by division).
pub fn close(s: &SpeechFile, v: &[(f64, f64, &str)], tol: f64) {
    let got = segs(s);
    assert_eq!(got.len(), v.len(), "{got:?}");
    for (g, w) in got.iter().zip(v) {
        assert!(
            (g.0 - w.0).abs() <= tol && (g.1 - w.1).abs() <= tol && g.2 == w.2,
            "{g:?} vs {w:?}"
        );
    }
}

/// The fields of an `Error::Format` (panics on any other error).
pub fn format_err(e: Error) -> (String, String, Option<usize>, String) {
    match e {
        Error::Format {
            file,
            field,
            index,
            reason,
        } => (file, field, index, reason),
        other => panic!("expected Error::Format, got {other:?}"),
    }
}
