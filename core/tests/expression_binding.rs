//! Binding stream channels to morph targets by name: hand-worked fan-out / fan-in examples,
//! ambiguity and non-ARKit characters, the report, and property tests.

mod support;

use mien_core::anim::arkit::ARKIT_52;
use mien_core::anim::canon::{Binding, BoundStream, Route, RouteRule};
use mien_core::anim::stream::WeightStream;
use mien_core::error::Error;
use proptest::prelude::*;

fn names(v: &[(String, usize)]) -> Vec<String> {
    v.iter().map(|(n, _)| n.clone()).collect()
}

#[test]
fn fan_out_fan_in_ignored_unmatched_by_hand() {
    let channels = [
        "browInnerUp",
        "cheekPuff_L",
        "cheekPuff_R",
        "jawOpen",
        "_neutral",
        "HeadYaw",
        "foo",
    ];
    let targets = [
        "browInnerUp_L",
        "browInnerUp_R",
        "cheekPuff",
        "jawOpen",
        "bar",
        "eyeBlink_L",
    ];
    let b = Binding::new(&channels, &targets);
    assert_eq!(
        b.routes(),
        &[
            Route {
                channel: 0,
                target: 0,
                gain: 1.0
            },
            Route {
                channel: 0,
                target: 1,
                gain: 1.0
            },
            Route {
                channel: 1,
                target: 2,
                gain: 0.5
            },
            Route {
                channel: 2,
                target: 2,
                gain: 0.5
            },
            Route {
                channel: 3,
                target: 3,
                gain: 1.0
            },
        ]
    );
    let frame = [0.6, 0.2, 0.5, 0.3, 0.9, 0.1, 0.7];
    let mut w = [9.0f32; 6];
    b.apply(&frame, &mut w);
    // browInnerUp 0.6 fans out to both halves; cheekPuff = (0.2 + 0.5) / 2 = 0.35; undriven keep 9.
    assert_eq!(w, [0.6, 0.6, 0.35, 0.3, 9.0, 9.0]);

    let r = b.report();
    let rules: Vec<(String, String, RouteRule)> = r
        .matched
        .iter()
        .map(|m| (m.channel.clone(), m.target.clone(), m.rule))
        .collect();
    assert_eq!(
        rules,
        vec![
            (
                "browInnerUp".into(),
                "browInnerUp_L".into(),
                RouteRule::FanOut
            ),
            (
                "browInnerUp".into(),
                "browInnerUp_R".into(),
                RouteRule::FanOut
            ),
            ("cheekPuff_L".into(), "cheekPuff".into(), RouteRule::FanIn),
            ("cheekPuff_R".into(), "cheekPuff".into(), RouteRule::FanIn),
            ("jawOpen".into(), "jawOpen".into(), RouteRule::Direct),
        ]
    );
    assert_eq!(
        names(
            &r.unmatched_channels
                .iter()
                .map(|u| (u.name.clone(), u.index))
                .collect::<Vec<_>>()
        ),
        ["foo"]
    );
    assert_eq!(r.unmatched_channels[0].index, 6);
    let ignored: Vec<(&str, usize)> = r
        .ignored_channels
        .iter()
        .map(|i| (i.name.as_str(), i.index))
        .collect();
    assert_eq!(ignored, [("_neutral", 4), ("HeadYaw", 5)]);
    assert!(r.ignored_channels[0].reason.contains("MediaPipe"));
    let undriven: Vec<(&str, usize)> = r
        .undriven_targets
        .iter()
        .map(|t| (t.name.as_str(), t.index))
        .collect();
    assert_eq!(undriven, [("bar", 4), ("eyeBlink_L", 5)]);
    assert!(r.ambiguous.is_empty());
    assert_eq!(r.fan.len(), 2);
    assert_eq!(
        (r.fan[0].rule, r.fan[0].arkit, r.fan[0].gain),
        (RouteRule::FanOut, "browInnerUp", 1.0)
    );
    assert_eq!(r.fan[0].targets, ["browInnerUp_L", "browInnerUp_R"]);
    assert_eq!(
        (r.fan[1].rule, r.fan[1].arkit, r.fan[1].gain),
        (RouteRule::FanIn, "cheekPuff", 0.5)
    );
    assert_eq!(r.fan[1].channels, ["cheekPuff_L", "cheekPuff_R"]);

    // The report serialises with stable keys.
    let json = serde_json::to_value(r).unwrap();
    assert_eq!(json["fan"][1]["rule"], "fan_in");
    assert_eq!(json["matched"][4]["arkit"], "jawOpen");
    assert_eq!(json["unmatched_channels"][0]["name"], "foo");
    assert_eq!(json["undriven_targets"][1]["name"], "eyeBlink_L");
}

#[test]
fn halves_to_halves_and_a_single_half_fan_in() {
    let b = Binding::new(
        &["browInnerUp_R", "browInnerUp_L", "cheekPuff_L"],
        &["cheekPuff", "browInnerUp_L", "browInnerUp_R"],
    );
    let mut w = [0.0f32; 3];
    b.apply(&[0.25, 0.75, 0.4], &mut w);
    // cheekPuff from its left half alone: mean of the one half present = 0.4.
    assert_eq!(w, [0.4, 0.75, 0.25]);
    let r = b.report();
    assert_eq!(r.fan.len(), 1);
    assert_eq!((r.fan[0].rule, r.fan[0].gain), (RouteRule::FanIn, 1.0));
    assert!(r.unmatched_channels.is_empty() && r.undriven_targets.is_empty());

    // A left half cannot drive a right half.
    let b = Binding::new(&["browInnerUp_L"], &["browInnerUp_R"]);
    assert!(b.routes().is_empty());
    assert!(
        b.report().unmatched_channels[0]
            .reason
            .contains("left half"),
        "{:?}",
        b.report()
    );
    assert_eq!(b.report().undriven_targets[0].name, "browInnerUp_R");
}

#[test]
fn ambiguity_is_reported_not_resolved_by_order() {
    // Two stream spellings of one channel.
    let b = Binding::new(
        &["EyeBlinkLeft", "jawOpen", "eyeBlink_L"],
        &["eyeBlink_L", "jawOpen"],
    );
    let r = b.report();
    assert_eq!(
        b.routes(),
        &[Route {
            channel: 1,
            target: 1,
            gain: 1.0
        }]
    );
    assert_eq!(r.ambiguous.len(), 1);
    assert_eq!(r.ambiguous[0].arkit, Some("eyeBlinkLeft"));
    let ch: Vec<usize> = r.ambiguous[0].channels.iter().map(|n| n.index).collect();
    assert_eq!(ch, [0, 2]);
    assert_eq!(r.ambiguous[0].targets[0].name, "eyeBlink_L");
    assert!(r.unmatched_channels.is_empty());
    assert_eq!(r.undriven_targets[0].name, "eyeBlink_L");
    let mut w = [5.0f32, 5.0];
    b.apply(&[1.0, 0.5, 0.0], &mut w);
    assert_eq!(w, [5.0, 0.5]);
    assert!(matches!(
        b.require_complete("test"),
        Err(Error::Invalid { .. })
    ));

    // A target name appearing twice.
    let b = Binding::new(&["jawOpen"], &["jawOpen", "JawOpen"]);
    assert!(b.routes().is_empty());
    assert_eq!(b.report().ambiguous[0].targets.len(), 2);
    assert_eq!(b.report().undriven_targets.len(), 2);

    // A whole channel next to its own half.
    let b = Binding::new(&["browInnerUp", "browInnerUp_L"], &["browInnerUp"]);
    assert!(b.routes().is_empty());
    assert!(
        b.report().ambiguous[0]
            .reason
            .contains("whole channel and a split half")
    );

    // A repeated non-ARKit target name, and a repeated non-ARKit channel name.
    let b = Binding::new(&["x", "x", "jawOpen"], &["foo", "jawOpen", "foo"]);
    let r = b.report();
    assert_eq!(r.ambiguous.len(), 2);
    assert_eq!(r.ambiguous[0].arkit, None);
    assert_eq!(r.ambiguous[0].channels.len(), 2);
    assert_eq!(
        r.ambiguous[1]
            .targets
            .iter()
            .map(|n| n.index)
            .collect::<Vec<_>>(),
        [0, 2]
    );
    assert!(r.unmatched_channels.is_empty());
    assert_eq!(b.routes().len(), 1);
}

#[test]
fn a_character_without_arkit_targets_binds_nothing() {
    let channels: Vec<String> = ARKIT_52.iter().map(|s| s.to_string()).collect();
    let targets = ["Smile", "Frown", "Blink", "MTH_A", "Basis"];
    let b = Binding::new(&channels, &targets);
    assert!(b.routes().is_empty());
    let r = b.report();
    assert_eq!(r.unmatched_channels.len(), 52);
    assert!(r.unmatched_channels[17].reason.contains("jawOpen"));
    assert_eq!(r.undriven_targets.len(), 5);
    assert!(matches!(
        b.require_routes("character"),
        Err(Error::Invalid { .. })
    ));
    assert!(b.require_complete("character").is_err());
    let mut w = [3.0f32; 5];
    b.apply(&[1.0; 52], &mut w);
    assert_eq!(w, [3.0; 5]);
}

#[test]
fn bound_stream_samples_then_routes() {
    let stream = WeightStream {
        source: "test".into(),
        channels: vec!["JawOpen".into(), "BrowInnerUp".into()],
        times: vec![0.0, 0.5, 1.0],
        values: vec![0.0, 0.2, 1.0, 0.6, 0.5, 1.0],
        nominal_fps: Some(2.0),
        ..WeightStream::default()
    };
    let mut bs = BoundStream::new(stream, &["browInnerUp_L", "jawOpen", "browInnerUp_R"]).unwrap();
    let mut w = [0.0f32; 3];
    // t = 0.25: halfway between frames 0 and 1: jawOpen 0.5, browInnerUp 0.4 (both halves).
    bs.weights_at(0.25, &mut w);
    assert!(
        (w[0] - 0.4).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6 && (w[2] - 0.4).abs() < 1e-6,
        "{w:?}"
    );
    // t = 0.875: 3/4 of the way from frame 1 to 2: jawOpen 1 + 0.75·(0.5 − 1) = 0.625, browInnerUp 0.6 + 0.75·(1 − 0.6) = 0.9.
    bs.weights_at(0.875, &mut w);
    assert!(
        (w[0] - 0.9).abs() < 1e-6 && (w[1] - 0.625).abs() < 1e-6 && (w[2] - 0.9).abs() < 1e-6,
        "{w:?}"
    );
    // Clamped outside the stream.
    bs.weights_at(-1.0, &mut w);
    assert_eq!(w, [0.2, 0.0, 0.2]);
    bs.weights_at(7.0, &mut w);
    assert_eq!(w, [1.0, 0.5, 1.0]);

    // A binding made for another stream is refused.
    let other = Binding::new(&["jawOpen"], &["jawOpen"]);
    let err = BoundStream::from_parts(bs.stream().clone(), other).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Mismatch {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
}

/// Spell an ARKit name in one of five real styles (independent of the library's key).
fn respell(name: &str, style: usize) -> String {
    let facecap = if let Some(b) = name.strip_suffix("Left") {
        format!("{b}_L")
    } else if let Some(b) = name.strip_suffix("Right") {
        format!("{b}_R")
    } else {
        name.to_string()
    };
    let mut pascal = name.to_string();
    pascal[..1].make_ascii_uppercase();
    match style {
        0 => name.to_string(),
        1 => pascal,
        2 => facecap,
        3 => format!("blendShape1.{facecap}"),
        _ => format!("head:BS:{pascal}"),
    }
}

proptest! {
    #![proptest_config(support::proptest_config(64))]

    /// Any permutation and spelling of the 52 on both sides: each target gets exactly its channel.
    #[test]
    fn permuted_respelled_channels_bind_one_to_one(
        cperm in Just((0..52).collect::<Vec<usize>>()).prop_shuffle(),
        tperm in Just((0..52).collect::<Vec<usize>>()).prop_shuffle(),
        cstyle in 0usize..5,
        tstyles in proptest::collection::vec(0usize..5, 52),
        frame in proptest::collection::vec(0.0f32..1.0, 52),
    ) {
        let channels: Vec<String> = cperm.iter().map(|&k| respell(ARKIT_52[k], cstyle)).collect();
        let targets: Vec<String> = tperm.iter().enumerate().map(|(j, &k)| respell(ARKIT_52[k], tstyles[j])).collect();
        let b = Binding::new(&channels, &targets);
        prop_assert_eq!(b.routes().len(), 52);
        prop_assert!(b.report().unmatched_channels.is_empty() && b.report().undriven_targets.is_empty());
        let mut w = vec![f32::NAN; 52];
        b.apply(&frame, &mut w);
        for (t, &k) in tperm.iter().enumerate() {
            let c = cperm.iter().position(|&x| x == k).unwrap();
            prop_assert_eq!(w[t], frame[c], "target {} ({})", t, targets[t]);
        }
    }

    /// Every channel lands in exactly one report bucket; driven and undriven targets partition T;
    /// apply only writes driven targets.
    #[test]
    fn report_partitions_channels_and_targets(
        cidx in proptest::collection::vec(0usize..70, 0..24),
        tidx in proptest::collection::vec(0usize..70, 0..24),
        style in 0usize..5,
    ) {
        let pool = |i: usize| -> String {
            match i {
                0..52 => respell(ARKIT_52[i], style),
                52 => "browInnerUp_L".into(), 53 => "browInnerUp_R".into(),
                54 => "cheekPuff_L".into(), 55 => "cheekPuff_R".into(),
                56 => "_neutral".into(), 57 => "HeadYaw".into(),
                _ => format!("custom{}", i % 5),
            }
        };
        let channels: Vec<String> = cidx.iter().map(|&i| pool(i)).collect();
        let targets: Vec<String> = tidx.iter().map(|&i| pool(i)).collect();
        let b = Binding::new(&channels, &targets);
        let r = b.report();
        let mut seen = vec![0usize; channels.len()];
        let mut routed: Vec<usize> = b.routes().iter().map(|x| x.channel).collect();
        routed.sort_unstable();
        routed.dedup();
        routed.iter().for_each(|&c| seen[c] += 1);
        r.unmatched_channels.iter().for_each(|u| seen[u.index] += 1);
        r.ignored_channels.iter().for_each(|u| seen[u.index] += 1);
        r.ambiguous.iter().flat_map(|a| &a.channels).for_each(|u| seen[u.index] += 1);
        prop_assert!(seen.iter().all(|&n| n == 1), "{:?} {:?}", channels, seen);
        let mut driven = vec![false; targets.len()];
        b.routes().iter().for_each(|x| driven[x.target] = true);
        for u in &r.undriven_targets {
            prop_assert!(!driven[u.index]);
        }
        prop_assert_eq!(driven.iter().filter(|d| **d).count() + r.undriven_targets.len(), targets.len());
        let mut w = vec![-7.0f32; targets.len()];
        b.apply(&vec![0.5; channels.len()], &mut w);
        for (t, &d) in driven.iter().enumerate() {
            prop_assert_eq!(w[t] == -7.0, !d);
        }
    }
}

#[test]
fn a_stream_whose_only_channels_are_ambiguous_says_so() {
    let ch = mien_core::sample::sample_head();
    let stream = |channels: &[&str]| mien_core::anim::WeightStream {
        source: "take.csv".into(),
        channels: channels.iter().map(|c| (*c).to_owned()).collect(),
        times: vec![0.0],
        values: vec![0.0; channels.len()],
        ..Default::default()
    };
    let e = mien_core::anim::StreamDrive::new(stream(&["EyeBlinkLeft", "EyeBlink_L"]), &ch)
        .unwrap_err()
        .to_string();
    assert!(e.contains("take.csv"), "{e}");
    assert!(e.contains("ambiguous"), "{e}");
    assert!(e.contains("EyeBlinkLeft, EyeBlink_L"), "{e}");
    assert!(!e.contains("matches any"), "{e}");
    // A stream that truly matches nothing keeps the plain message.
    let e = mien_core::anim::StreamDrive::new(stream(&["Wobble"]), &ch)
        .unwrap_err()
        .to_string();
    assert!(e.contains("none of the stream's 1 channel matches"), "{e}");
}

/// A channel that binds nothing is reported with the character's nearest target names (edit
/// distance on lowercase names without separators), so a user sees the near miss.
#[test]
fn an_unbound_channel_lists_the_nearest_target_names() {
    let channels = ["tongueOut", "jawOpen", "HeadYawX"];
    let targets = ["jawOpen", "tongue_out_v2", "mouthClose", "browInnerUp"];
    let b = Binding::new(&channels, &targets);
    let r = b.report();
    let tongue = r
        .unmatched_channels
        .iter()
        .find(|u| u.name == "tongueOut")
        .expect("tongueOut binds nothing");
    assert_eq!(tongue.nearest[0], "tongue_out_v2", "{tongue:?}");
    assert_eq!(tongue.nearest.len(), 3);
    let other = r
        .unmatched_channels
        .iter()
        .find(|u| u.name == "HeadYawX")
        .unwrap();
    assert_eq!(other.nearest.len(), 3);
}
