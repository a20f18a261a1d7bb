//! The speech models: held half-open intervals (seed 002), envelopes (seed 003), playback on the
//! media clock at 24/30/60/144 Hz with non-zero origins, pauses and repeated and backward seeks.

mod support;

use mien_core::speech::viseme::{PHONEMES, phoneme_viseme, strict_phoneme};
use mien_core::speech::{
    AlignedSpeech, EnvelopeParams, EnvelopeTrack, SpeechPlayback, SpeechSampler, TimedViseme,
    Transport, VISEMES, Viseme, apply_min_hold,
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

/// aa and PP alternating every 60 ms from 0 to 2.04 s (34 segments, aa first).
fn alternating() -> Vec<(Viseme, f64, f64)> {
    (0..34)
        .map(|k| {
            let v = if k % 2 == 0 { Viseme::AA } else { Viseme::PP };
            (v, f64::from(k) * 0.06, f64::from(k + 1) * 0.06)
        })
        .collect()
}

/// Runs of the dominant viseme (the largest weight, the first on ties; `None` when all are 0)
/// sampled at 1 kHz over `[0, ms)` milliseconds: `(viseme, samples, largest weight in the run)`.
fn dominant_runs(t: &EnvelopeTrack, ms: u32) -> Vec<(Option<usize>, usize, f32)> {
    let mut runs: Vec<(Option<usize>, usize, f32)> = Vec::new();
    let mut o = [0.0f32; 15];
    for i in 0..ms {
        t.weights_at(f64::from(i) / 1000.0, &mut o);
        let (k, w) = o
            .iter()
            .enumerate()
            .fold((0, 0.0f32), |b, (k, &w)| if w > b.1 { (k, w) } else { b });
        let d = (w > 0.0).then_some(k);
        match runs.last_mut() {
            Some(r) if r.0 == d => {
                r.1 += 1;
                r.2 = r.2.max(w);
            }
            _ => runs.push((d, 1, w)),
        }
    }
    runs
}

#[test]
fn min_hold_holds_fast_alternating_shapes_instead_of_blending() {
    let p = EnvelopeParams {
        min_hold: 0.125,
        ..Default::default()
    };
    let t = EnvelopeTrack::from_visemes("alt", 0.0, p, &alternating()).unwrap();
    // Inside a run the shape is alone at full weight (today's rule stretched each 60 ms segment
    // to 125 ms, so aa and PP both sat at envelope 1 and were scaled to 0.5 each).
    let mut o = [0.0f32; 15];
    t.weights_at(0.1, &mut o);
    assert_eq!(o[Viseme::AA.index()], 1.0);
    assert_eq!(o[Viseme::PP.index()], 0.0);
    // Sampled at 1 kHz over the 2.04 s: the dominant viseme changes 22.5 ms after each of the 10
    // run boundaries (where PP's rise, (t − b + 0.03) / 0.07, meets aa's release,
    // 1 − (t − b) / 0.09), so 10 changes, 4.9 a second (≤ 8 = 1 / 0.125 s).
    let runs = dominant_runs(&t, 2040);
    let changes = runs.len() - 1;
    assert!(changes as f64 / 2.04 <= 8.0, "{changes} changes: {runs:?}");
    assert_eq!(changes, 10, "{runs:?}");
    // Every run between the ends lasts at least the hold minus one sample (here 180 ± 1 samples)
    // and reaches full weight: held, not blended.
    for r in &runs[1..runs.len() - 1] {
        assert!(r.1 >= 124, "{runs:?}");
        assert!((179..=181).contains(&r.1), "{runs:?}");
        assert!(r.2 >= 0.999, "{runs:?}");
        assert!(r.0.is_some());
    }
    // Hand-worked (core/src/speech/hold.rs): every 60 ms piece is short and none can lend, so
    // the earliest merges with its shorter neighbour and joins the next of its shape: runs of
    // three, aa 0–0.18, PP 0.18–0.36, …; the last PP (1.98–2.04) merges into the aa before it.
    let segs = t.segments();
    assert_eq!(segs.len(), 11, "{segs:?}");
    for (g, s) in segs.iter().enumerate() {
        let v = if g % 2 == 0 { Viseme::AA } else { Viseme::PP };
        let end = if g == 10 { 2.04 } else { (g + 1) as f64 * 0.18 };
        assert_eq!(s.viseme, v, "run {g}");
        assert!((s.start - g as f64 * 0.18).abs() < 1e-9, "run {g}: {s:?}");
        assert!((s.end - end).abs() < 1e-9, "run {g}: {s:?}");
    }
}

#[test]
fn min_hold_rule_hand_worked() {
    let (aa, pp, oh) = (Viseme::AA, Viseme::PP, Viseme::OH);
    let close = |got: Vec<(Viseme, f64, f64)>, want: &[(Viseme, f64, f64)]| {
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                g.0 == w.0 && (g.1 - w.1).abs() < 1e-9 && (g.2 - w.2).abs() < 1e-9,
                "{got:?}"
            );
        }
    };
    // A 30 ms PP between long shapes borrows 95 ms from the next one (300 − 95 ≥ 125).
    close(
        apply_min_hold(&[(aa, 0.0, 0.3), (pp, 0.3, 0.33), (oh, 0.33, 0.63)], 0.125),
        &[(aa, 0.0, 0.3), (pp, 0.3, 0.425), (oh, 0.425, 0.63)],
    );
    // The next (70 ms) cannot lend, the previous can: PP starts 95 ms earlier; then the 70 ms oh,
    // unable to borrow from the 125 ms PP, merges with it and the longer PP shows.
    close(
        apply_min_hold(&[(aa, 0.0, 0.3), (pp, 0.3, 0.33), (oh, 0.33, 0.4)], 0.125),
        &[(aa, 0.0, 0.205), (pp, 0.205, 0.4)],
    );
    // A 50 ms gap is filled by the shape before it; a 300 ms gap stays rest and lends to a
    // 40 ms PP after it (the PP holds 125 ms, the gap after it shrinks to 275 ms).
    close(
        apply_min_hold(&[(aa, 0.0, 0.2), (oh, 0.25, 0.5)], 0.125),
        &[(aa, 0.0, 0.25), (oh, 0.25, 0.5)],
    );
    close(
        apply_min_hold(&[(aa, 0.0, 0.3), (pp, 0.6, 0.64), (oh, 1.0, 1.3)], 0.125),
        &[(aa, 0.0, 0.3), (pp, 0.6, 0.725), (oh, 1.0, 1.3)],
    );
    // A last 40 ms PP after a 130 ms pause: the pause cannot give 85 ms and keep 125, so the PP
    // merges with it and takes it whole (a pause never swallows a shape, nor shrinks below the
    // hold).
    close(
        apply_min_hold(&[(aa, 0.0, 0.3), (pp, 0.43, 0.47)], 0.125),
        &[(aa, 0.0, 0.3), (pp, 0.3, 0.47)],
    );
    // Adjacent segments of one viseme join; a lone short shape is lengthened to the hold.
    close(
        apply_min_hold(&[(aa, 0.0, 0.05), (aa, 0.05, 0.1)], 0.125),
        &[(aa, 0.0, 0.125)],
    );
    // Large inputs stay O(n log n): 60,000 alternating 60 ms segments become 20,000 runs.
    let long: Vec<(Viseme, f64, f64)> = (0..60_000)
        .map(|k| {
            let v = if k % 2 == 0 { aa } else { pp };
            (v, f64::from(k) * 0.06, f64::from(k + 1) * 0.06)
        })
        .collect();
    assert_eq!(apply_min_hold(&long, 0.125).len(), 20_000);
    // No hold: unchanged, overlaps and all.
    let raw = [(aa, 0.0, 0.1), (pp, 0.05, 0.08)];
    assert_eq!(apply_min_hold(&raw, 0.0), raw.to_vec());
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

proptest! {
    #![proptest_config(support::proptest_config(256))]

    /// Whatever the segments (gaps, overlaps, zero lengths, repeats) and the hold, the rule
    /// keeps every shape and every pause at least the hold, in order without overlap, starts at
    /// the first segment's start, ends at the last segment's end (a lone shape may run past it to
    /// the hold), and shows no two adjacent runs of one viseme.
    #[test]
    fn min_hold_invariants(
        hold_ms in 1u32..400,
        parts in proptest::collection::vec((0u32..200, 0u32..200, 0usize..4), 1..60),
    ) {
        let hold = f64::from(hold_ms) / 1000.0;
        let shapes = [Viseme::AA, Viseme::PP, Viseme::OH, Viseme::Sil];
        let mut t = 0.0;
        let mut segs = Vec::new();
        for (gap, len, k) in &parts {
            // A gap (or, from 150 up, an overlap back into the previous segment) then a segment.
            let start = if *gap >= 150 { (t - f64::from(gap - 150) / 1000.0).max(segs.last().map_or(0.0, |s: &(Viseme, f64, f64)| s.1)) } else { t + f64::from(*gap) / 1000.0 };
            let end = start + f64::from(*len) / 1000.0;
            segs.push((shapes[*k], start, end));
            t = end;
        }
        let (first, last_end) = (segs[0].1, segs[segs.len() - 1].2);
        let out = apply_min_hold(&segs, hold);
        prop_assert!(!out.is_empty());
        prop_assert_eq!(out[0].1, first, "{:?}", out);
        let mut prev: Option<(Viseme, f64, f64)> = None;
        for s in &out {
            prop_assert!(s.2 - s.1 >= hold - 1e-9, "{s:?} shorter than {hold}: {out:?}");
            if let Some(p) = prev {
                prop_assert!(s.1 >= p.2 - 1e-12, "overlap: {out:?}");
                prop_assert!(s.1 == p.2 || s.1 - p.2 >= hold - 1e-9, "short pause: {out:?}");
                prop_assert!(!(p.0 == s.0 && (s.1 - p.2).abs() < 1e-12), "unjoined: {out:?}");
            }
            prev = Some(*s);
        }
        // The last segment's end, or a lone shape lengthened to the hold.
        let (ls, end) = (out[out.len() - 1].1, out[out.len() - 1].2);
        prop_assert!(end == last_end || (out.len() == 1 && (end - ls - hold).abs() < 1e-9), "{end} ≠ {last_end}: {out:?}");
        // Envelopes built from the same segments agree.
        let p = EnvelopeParams { min_hold: hold as f32, ..Default::default() };
        let tr = EnvelopeTrack::from_visemes("p", 0.0, p, &segs).unwrap();
        prop_assert_eq!(tr.segments().len(), apply_min_hold(&segs, f64::from(hold as f32)).len());
    }
}
