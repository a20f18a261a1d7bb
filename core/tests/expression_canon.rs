//! The name canonicaliser: hand-written spellings with hand-written expectations, and property
//! tests over generated spellings of every ARKit-52 name.

mod support;

use mien_core::anim::arkit::ARKIT_52;
use mien_core::anim::canon::{Canon, Side, canonical_index, canonical_name, canonicalize};
use proptest::prelude::*;

#[test]
fn real_spellings_of_eye_blink_left() {
    for s in [
        "eyeBlinkLeft",
        "EyeBlinkLeft",
        "eyeBlink_L",
        "eyeBlinkL",
        "EyeBlink_L",
        "eyeBlink_l",
        "eyeBlink.L",
        "blendShape1.eyeBlink_L",
        "BS_node.eyeBlinkLeft",
        "head_geo:blendShape1:eyeBlinkLeft",
        "|root|head|blendShape1|eyeBlink_L",
        "blendShape1.eyeBlink.L",
        "eyeBlink_L.001",
        "eyeBlink.L.002",
        "EYE_BLINK_LEFT",
        "eye-blink-left",
        "eye blink Left",
        "L_eyeBlink",
        "  eyeBlinkLeft  ",
    ] {
        assert_eq!(canonical_name(s), Some("eyeBlinkLeft"), "{s:?}");
        assert_eq!(canonicalize(s), Some(Canon::Arkit(0)), "{s:?}");
    }
}

#[test]
fn real_spellings_of_other_channels() {
    let cases: &[(&str, &str)] = &[
        // Live Link Face PascalCase (its JawRight/JawLeft pair).
        ("JawLeft", "jawLeft"),
        ("JawRight", "jawRight"),
        ("jaw_L", "jawLeft"),
        ("Mesh.jawLeft", "jawLeft"),
        ("MouthSmileRight", "mouthSmileRight"),
        ("mouthSmile_R", "mouthSmileRight"),
        ("mouthSmileR", "mouthSmileRight"),
        ("face:mouthSmile.R", "mouthSmileRight"),
        // Words ending in l / r that are not sides.
        ("MouthFunnel", "mouthFunnel"),
        ("mouth_funnel", "mouthFunnel"),
        ("blendShape1.mouthFunnel", "mouthFunnel"),
        ("mouthPucker", "mouthPucker"),
        ("MOUTHPUCKER", "mouthPucker"),
        ("mouthRollLower", "mouthRollLower"),
        ("mouthShrugUpper", "mouthShrugUpper"),
        ("eyeLookIn_R", "eyeLookInRight"),
        ("EyeLookInRight", "eyeLookInRight"),
        ("noseSneer_L", "noseSneerLeft"),
        ("TongueOut", "tongueOut"),
        ("tongue_out", "tongueOut"),
        ("BrowInnerUp", "browInnerUp"),
        ("CheekPuff", "cheekPuff"),
        ("browOuterUp_L", "browOuterUpLeft"),
    ];
    for (s, want) in cases {
        assert_eq!(canonical_name(s), Some(*want), "{s:?}");
    }
    assert_eq!(canonical_index("JawLeft"), Some(15));
    assert_eq!(canonical_index("jawOpen"), Some(17));
    assert_eq!(canonical_index("tongueOut"), Some(51));
    assert_eq!(canonical_index("mouthFunnel"), Some(19));
}

#[test]
fn split_halves_of_whole_channels() {
    let half = |arkit, side| Some(Canon::Half { arkit, side });
    assert_eq!(canonicalize("browInnerUp_L"), half(43, Side::Left));
    assert_eq!(canonicalize("browInnerUp_R"), half(43, Side::Right));
    assert_eq!(canonicalize("BrowInnerUpRight"), half(43, Side::Right));
    assert_eq!(canonicalize("ict.browInnerUpL"), half(43, Side::Left));
    assert_eq!(canonicalize("cheekPuff_L"), half(46, Side::Left));
    assert_eq!(canonicalize("cheekPuff_R"), half(46, Side::Right));
    assert_eq!(canonicalize("cheekPuff.R"), half(46, Side::Right));
    // Halves are not ARKit-52 names.
    assert_eq!(canonical_name("browInnerUp_L"), None);
    // Only the channels in the fan table split: a sided jawOpen / mouthPucker is unknown.
    assert_eq!(canonicalize("jawOpen_L"), None);
    assert_eq!(canonicalize("mouthPucker_L"), None);
    assert_eq!(canonicalize("mouthPuckerR"), None);
}

#[test]
fn ignored_channels_have_a_reason() {
    for s in [
        "_neutral",
        "neutral",
        "Neutral",
        "mediapipe._neutral",
        "HeadYaw",
        "LeftEyePitch",
        "RightEyeRoll",
        "headRoll",
    ] {
        match canonicalize(s) {
            Some(Canon::Ignored { reason }) => assert!(!reason.is_empty(), "{s:?}"),
            other => panic!("{s:?}: {other:?}"),
        }
        assert_eq!(canonical_name(s), None, "{s:?}");
    }
}

#[test]
fn non_arkit_names_are_none() {
    for s in [
        "cheekRaiser_L",
        "PupilDilate_R",
        "Basis",
        "eyeBlink",
        "jaw",
        "mouth",
        "",
        "   ",
        "...",
        "|",
        "L",
        "_L",
        "Left",
        "eyeBlinkLeftRight",
        "eyeBlinkMiddle",
        "jawOpenExtra",
        "MTH_A",
        "viseme_aa",
        "001",
        "blendShape1.001",
    ] {
        assert_eq!(canonicalize(s), None, "{s:?}");
    }
}

/// An ARKit name split into lowercase words and its side, written out by hand-free camelCase
/// splitting (independent of the library's key).
fn words_and_side(name: &str) -> (Vec<String>, Option<&'static str>) {
    let mut words: Vec<String> = Vec::new();
    for c in name.chars() {
        if c.is_uppercase() || words.is_empty() {
            words.push(String::new());
        }
        words.last_mut().unwrap().push(c.to_ascii_lowercase());
    }
    let side = match words.last().map(String::as_str) {
        Some("left") => Some("l"),
        Some("right") => Some("r"),
        _ => None,
    };
    if side.is_some() {
        words.pop();
    }
    (words, side)
}

#[derive(Debug, Clone)]
struct Style {
    joiner: usize,
    word_case: Vec<u8>,
    side_style: usize,
    namespace: Vec<(String, usize)>,
    flips: Vec<bool>,
}

fn style() -> impl Strategy<Value = Style> {
    (
        0usize..4,
        proptest::collection::vec(0u8..4, 6),
        0usize..9,
        proptest::collection::vec(("[A-Za-z][A-Za-z0-9_]{0,8}", 0usize..3), 0..3),
        proptest::collection::vec(any::<bool>(), 40),
    )
        .prop_map(|(joiner, word_case, side_style, namespace, flips)| Style {
            joiner,
            word_case,
            side_style,
            namespace,
            flips,
        })
}

fn spell(name: &str, st: &Style) -> String {
    let (words, side) = words_and_side(name);
    let joiner = ["", "_", " ", "-"][st.joiner];
    let cased: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| match st.word_case[i % st.word_case.len()] {
            0 if i == 0 => w.clone(),
            0 | 3 => {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            }
            1 => w.clone(),
            _ => w.to_ascii_uppercase(),
        })
        .collect();
    let mut stem = cased.join(joiner);
    if let Some(s) = side {
        let (short, long) = if s == "l" {
            ("L", "Left")
        } else {
            ("R", "Right")
        };
        stem = match st.side_style {
            0 => format!("{stem}{long}"),
            1 => format!("{stem}_{short}"),
            2 => format!("{stem}{short}"),
            3 => format!("{stem}.{short}"),
            4 => format!("{stem}_{}", short.to_ascii_lowercase()),
            5 => format!("{stem}-{long}"),
            6 => format!("{short}_{stem}"),
            7 => format!("{stem}{joiner}{long}"),
            _ => format!("{stem} {short}"),
        };
    }
    // Random case flips over the stem only (the namespace is stripped anyway).
    let stem: String = stem
        .chars()
        .zip(st.flips.iter().cycle())
        .map(|(c, &f)| {
            if f {
                if c.is_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            } else {
                c
            }
        })
        .collect();
    let mut out = String::new();
    for (ns, sep) in &st.namespace {
        out.push_str(ns);
        out.push(['.', ':', '|'][*sep]);
    }
    out.push_str(&stem);
    out
}

proptest! {
    #![proptest_config(support::proptest_config(300))]

    #[test]
    fn every_spelling_of_every_name_is_recovered(st in style()) {
        for (i, name) in ARKIT_52.iter().enumerate() {
            let s = spell(name, &st);
            prop_assert_eq!(canonical_name(&s), Some(*name), "{:?} from {}", s, name);
            prop_assert_eq!(canonicalize(&s), Some(Canon::Arkit(i)));
        }
    }

    #[test]
    fn damaged_names_are_not_arkit(i in 0usize..52, cut in 0usize..16, junk in "[a-km-qs-z]{1,3}", front in any::<bool>()) {
        let name = ARKIT_52[i];
        // One character deleted.
        let k = cut % name.len();
        let deleted: String = name.char_indices().filter(|&(j, _)| j != k).map(|(_, c)| c).collect();
        prop_assert_eq!(canonicalize(&deleted), None, "{:?}", deleted);
        // Letters glued on (no l / r, so no side marker can form).
        let glued = if front { format!("{junk}{name}") } else { format!("{name}{junk}") };
        prop_assert_eq!(canonicalize(&glued), None, "{:?}", glued);
    }
}
