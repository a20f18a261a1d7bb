//! The speech models: held half-open intervals (seed 002), envelopes (seed 003), playback on the
//! media clock at 24/30/60/144 Hz with non-zero origins, pauses and repeated and backward seeks.

mod support;

use mien_core::speech::viseme::{PHONEMES, phoneme_viseme, strict_phoneme};
use mien_core::speech::{
    AlignedSpeech, EnvelopeParams, EnvelopeTrack, SpeechPlayback, SpeechSampler, TimedViseme,
    Transport, VISEMES, Viseme,
};
use proptest::prelude::*;

fn tv(v: Viseme, s: f32, e: f32) -> TimedViseme {
    TimedViseme {
        viseme: v,
        start: s,
        end: e,
    }
}

/// The seed's example: PP [0, 0.125), aa [0.125, 0.75), sil [0.75, 1).
fn example(origin: f64) -> AlignedSpeech {
    AlignedSpeech::new(
        "recording-v1",
        1.0,
        origin,
        vec![
            tv(Viseme::PP, 0.0, 0.125),
            tv(Viseme::AA, 0.125, 0.75),
            tv(Viseme::Sil, 0.75, 1.0),
        ],
    )
    .unwrap()
}

#[test]
fn held_intervals_are_half_open_and_rest_outside() {
    let s = example(0.0);
    assert_eq!(s.viseme_at(0.0), Some(Viseme::PP), "start inclusive");
    assert_eq!(s.viseme_at(0.124), Some(Viseme::PP));
    assert_eq!(
        s.viseme_at(0.125),
        Some(Viseme::AA),
        "end exclusive: the next interval starts"
    );
    assert_eq!(s.viseme_at(0.7499), Some(Viseme::AA));
    assert_eq!(s.viseme_at(0.75), None, "sil is rest");
    assert_eq!(s.viseme_at(-0.01), None, "before the utterance");
    assert_eq!(s.viseme_at(1.0), None, "after the utterance");
    assert_eq!(s.viseme_at(f64::NAN), None);
    let mut w = [0.0; 15];
    s.weights_at(0.5, &mut w);
    assert_eq!(w[Viseme::AA.index()], 1.0, "held at full weight");
    assert_eq!(w.iter().sum::<f32>(), 1.0);
}

#[test]
fn gaps_give_rest() {
    let s = AlignedSpeech::new(
        "gap",
        2.0,
        0.0,
        vec![tv(Viseme::PP, 0.1, 0.2), tv(Viseme::OU, 1.0, 1.5)],
    )
    .unwrap();
    assert_eq!(s.viseme_at(0.5), None);
    assert_eq!(s.viseme_at(1.2), Some(Viseme::OU));
}

#[test]
fn invalid_utterances_are_refused_with_the_index() {
    let cases: Vec<(Vec<TimedViseme>, &str)> = vec![
        (vec![tv(Viseme::PP, f32::NAN, 0.1)], "intervals [0]"),
        (vec![tv(Viseme::PP, -0.1, 0.1)], "intervals [0]"),
        (vec![tv(Viseme::PP, 0.2, 0.2)], "empty"),
        (vec![tv(Viseme::PP, 0.3, 0.2)], "empty or negative"),
        (vec![tv(Viseme::PP, 0.5, 1.5)], "after the utterance"),
        (
            vec![tv(Viseme::PP, 0.5, 0.6), tv(Viseme::AA, 0.1, 0.2)],
            "intervals [1]",
        ),
        (
            vec![tv(Viseme::PP, 0.1, 0.6), tv(Viseme::AA, 0.5, 0.7)],
            "overlapping",
        ),
    ];
    for (ivs, needle) in cases {
        let e = AlignedSpeech::new("u", 1.0, 0.0, ivs.clone())
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{ivs:?}: {e}");
    }
    assert!(
        AlignedSpeech::new("", 1.0, 0.0, vec![])
            .unwrap_err()
            .to_string()
            .contains("label")
    );
    assert!(
        AlignedSpeech::new("u", 0.0, 0.0, vec![])
            .unwrap_err()
            .to_string()
            .contains("duration")
    );
    // 0.5 ms at an origin of 20,000 s: f32 spacing there is ~2 ms, so the interval collapses.
    let e = AlignedSpeech::new("u", 1.0, 20_000.0, vec![tv(Viseme::PP, 0.1, 0.1005)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("collapses"), "{e}");
}

#[test]
fn phonemes_are_strict() {
    let ok = AlignedSpeech::from_phonemes(
        "of",
        0.5,
        0.0,
        &[("AH".into(), 0.0, 0.2), ("V".into(), 0.2, 0.4)],
    )
    .unwrap();
    assert_eq!(ok.viseme_at(0.1), Some(Viseme::AA));
    assert_eq!(ok.viseme_at(0.3), Some(Viseme::FF));
    let e = AlignedSpeech::from_phonemes(
        "x",
        1.0,
        0.0,
        &[
            ("AH0".into(), 0.0, 0.2),
            ("xyz".into(), 0.2, 0.3),
            ("ah".into(), 0.3, 0.4),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("phonemes [0]") && e.contains("stress"), "{e}");
    assert!(
        e.contains("phonemes [1]") && e.contains("not an ARPABET"),
        "{e}"
    );
    assert!(
        e.contains("phonemes [2]") && e.contains("upper case"),
        "{e}"
    );
    // Every ARPABET symbol maps; HH is an open vowel; diphthongs hold one shape.
    for p in PHONEMES {
        assert!(phoneme_viseme(p).is_some(), "{p}");
    }
    assert_eq!(phoneme_viseme("HH"), Some(Viseme::AA));
    assert_eq!(phoneme_viseme("AY"), Some(Viseme::AA));
    assert_eq!(phoneme_viseme("OY"), Some(Viseme::OH));
    assert!(strict_phoneme("SIL", "f", "p", 0).is_ok());
}

#[test]
fn envelope_hand_worked() {
    // One aa segment 1.0–1.2 s with attack 0.1, release 0.2, lead 0.05.
    let p = EnvelopeParams {
        attack: 0.1,
        release: 0.2,
        lead: 0.05,
        min_hold: 0.0,
    };
    let t = EnvelopeTrack::from_visemes("u", 0.0, p, &[(Viseme::AA, 1.0, 1.2)]).unwrap();
    let w = |x: f64| {
        let mut o = [0.0; 15];
        t.weights_at(x, &mut o);
        o[Viseme::AA.index()]
    };
    assert_eq!(w(0.9), 0.0, "before start − lead");
    assert!(
        (w(1.0) - 0.5).abs() < 1e-6,
        "halfway up: (1.0 − 0.95) / 0.1"
    );
    assert!((w(1.1) - 1.0).abs() < 1e-6, "held");
    assert!(
        (w(1.3) - 0.5).abs() < 1e-6,
        "halfway down: 1 − (1.3 − 1.2) / 0.2"
    );
    assert_eq!(w(1.5), 0.0, "released");
}

#[test]
fn envelope_overlaps_never_sum_above_one_and_errors_name_every_symbol() {
    let t = EnvelopeTrack::from_visemes(
        "u",
        0.0,
        EnvelopeParams::default(),
        &[
            (Viseme::AA, 0.0, 0.1),
            (Viseme::PP, 0.08, 0.16),
            (Viseme::OU, 0.1, 0.2),
        ],
    )
    .unwrap();
    for i in 0..400 {
        let mut o = [0.0; 15];
        t.weights_at(-0.1 + f64::from(i) * 0.001, &mut o);
        assert!(o.iter().sum::<f32>() <= 1.0 + 1e-6);
    }
    let e = EnvelopeTrack::from_phonemes(
        "u",
        0.0,
        EnvelopeParams::default(),
        &[
            ("AH".into(), 0.0, 0.1),
            ("QQ".into(), 0.1, 0.2),
            ("XX".into(), 0.2, 0.3),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("QQ") && e.contains("XX"), "{e}");
    let e = EnvelopeTrack::from_phonemes(
        "u",
        0.0,
        EnvelopeParams::default(),
        &[("AH".into(), 0.3, 0.2)],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("before it starts"), "{e}");
    let e = EnvelopeTrack::from_phonemes(
        "u",
        0.0,
        EnvelopeParams::default(),
        &[("AH".into(), 0.3, 0.4), ("B".into(), 0.1, 0.2)],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unsorted"), "{e}");
    // Minimum hold: a 40 ms shape holds 120 ms.
    let t = EnvelopeTrack::from_visemes(
        "u",
        0.0,
        EnvelopeParams {
            min_hold: 0.12,
            ..Default::default()
        },
        &[(Viseme::PP, 1.0, 1.04)],
    )
    .unwrap();
    // min_hold is f32 seconds: 0.12 f32 is 0.1199999973 s.
    assert!((t.segments()[0].end - 1.12).abs() < 1e-7);
}

#[test]
fn playback_pause_seek_resume_reset() {
    let mut p = SpeechPlayback::new(example(10.0));
    assert_eq!(p.sample(10.05)[Viseme::PP.index()], 1.0);
    p.pause(10.05).unwrap();
    assert_eq!(
        p.sample(10.5)[Viseme::PP.index()],
        1.0,
        "paused samples hold the pause position"
    );
    let w = p.seek(10.5).unwrap();
    assert_eq!(
        w[Viseme::AA.index()],
        1.0,
        "seek returns the destination at once"
    );
    assert_eq!(p.transport(), Transport::Paused(10.5), "and stays paused");
    assert!(p.seek(f64::NAN).is_err());
    assert_eq!(
        p.transport(),
        Transport::Paused(10.5),
        "an invalid time leaves the state unchanged"
    );
    p.resume(10.9).unwrap();
    assert_eq!(p.sample(10.9), [0.0; 15], "sil after 0.75 s is rest");
    assert!(p.pause(f64::INFINITY).is_err());
    assert_eq!(p.transport(), Transport::Playing);
    p.reset();
    assert_eq!(p.transport(), Transport::Paused(10.0));
    assert_eq!(
        p.sample(123.0)[Viseme::PP.index()],
        1.0,
        "reset holds the origin"
    );
}

proptest! {
    #![proptest_config(support::proptest_config(64))]

    /// At any display rate and origin, every frame's shape is the interval holding that clock
    /// position — dropped, repeated and backward samples included (a stateless lookup).
    #[test]
    fn sampling_is_a_stateless_lookup_at_any_rate(
        rate in prop::sample::select(vec![24.0f64, 30.0, 60.0, 144.0]),
        origin in 0.0f64..100.0,
        cuts in proptest::collection::vec(0.01f32..0.2, 1..20),
        shapes in proptest::collection::vec(0usize..15, 20),
        order in proptest::collection::vec(any::<prop::sample::Index>(), 50),
    ) {
        let mut t = 0.0f32;
        let mut ivs = Vec::new();
        for (i, d) in cuts.iter().enumerate() {
            ivs.push(tv(VISEMES[shapes[i]], t, t + d));
            t += d;
        }
        let s = AlignedSpeech::new("p", t + 0.1, origin, ivs.clone()).unwrap();
        let frames = ((f64::from(t) + 0.1) * rate) as usize + 1;
        let mut p = SpeechPlayback::new(s.clone());
        for idx in order {
            let f = idx.index(frames);
            let pos = origin + f as f64 / rate;
            // Independent expectation from the interval list in f64 with f32 endpoints.
            let want = ivs.iter().find(|iv| origin as f32 + iv.start <= pos as f32 && (pos as f32) < origin as f32 + iv.end).map(|iv| iv.viseme).filter(|v| *v != Viseme::Sil);
            let got = p.sample(pos);
            match want {
                Some(v) => prop_assert_eq!(got[v.index()], 1.0),
                None => prop_assert_eq!(got, [0.0; 15]),
            }
            let again = p.seek(pos).unwrap();
            prop_assert_eq!(again, got, "a repeated or backward seek gives the same weights");
        }
    }
}
