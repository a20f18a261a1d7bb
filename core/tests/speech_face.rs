//! Visemes onto characters: the built-in Oculus and ARKit maps, face definition files, missing
//! targets reported (never silently zero), and the speech layer on real characters.

use mien_core::anim::drive::SpeechLayer;
use mien_core::speech::{
    AlignedSpeech, BoundVisemes, TimedViseme, Viseme, VisemeMap, VisemeMapKind,
};

fn facecap_targets() -> Vec<String> {
    let csv = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/facecap/facecap_anim_weights_decoded.csv"),
    )
    .unwrap();
    csv.lines()
        .next()
        .unwrap()
        .split(',')
        .skip(1)
        .map(str::to_owned)
        .collect()
}

fn one_hot(v: Viseme) -> [f32; 15] {
    let mut w = [0.0; 15];
    w[v.index()] = 1.0;
    w
}

#[test]
fn oculus_targets_are_found_whatever_their_spelling() {
    let mut targets: Vec<String> = mien_core::speech::VISEME_NAMES
        .iter()
        .map(|n| format!("Wolf3D_Head.Viseme_{}", n.to_uppercase()))
        .collect();
    targets.push("eyeBlinkLeft".into());
    let map = VisemeMap::for_character(&targets).unwrap();
    assert_eq!(map.kind, VisemeMapKind::Oculus);
    let b = BoundVisemes::bind(&map, &targets);
    assert!(b.report().missing.is_empty(), "{:?}", b.report().missing);
    let mut w = vec![0.5; targets.len()];
    b.apply(&one_hot(Viseme::AA), &mut w);
    let aa = targets
        .iter()
        .position(|t| t.ends_with("Viseme_AA"))
        .unwrap();
    let pp = targets
        .iter()
        .position(|t| t.ends_with("Viseme_PP"))
        .unwrap();
    assert_eq!((w[aa], w[pp]), (1.0, 0.0), "owned targets are rewritten");
    assert_eq!(
        w[targets.len() - 1],
        0.5,
        "eyeBlinkLeft is not the speech's"
    );
}

#[test]
fn arkit_characters_get_the_documented_combinations() {
    let targets = facecap_targets();
    let map = VisemeMap::for_character(&targets).unwrap();
    assert_eq!(map.kind, VisemeMapKind::Arkit);
    let b = BoundVisemes::bind(&map, &targets);
    assert!(b.report().missing.is_empty(), "{:?}", b.report().missing);
    let at = |n: &str| targets.iter().position(|t| t == n).unwrap();
    let mut w = vec![0.0; targets.len()];
    w[at("eyeBlink_L")] = 0.7;
    w[at("mouthSmile_L")] = 0.9;
    b.apply(&one_hot(Viseme::AA), &mut w);
    // aa = jawOpen .6, mouthLowerDownLeft/Right .3 (the table in face.rs).
    assert_eq!(w[at("jawOpen")], 0.6);
    assert_eq!(w[at("mouthLowerDown_L")], 0.3);
    assert_eq!(w[at("mouthLowerDown_R")], 0.3);
    assert_eq!(
        w[at("mouthSmile_L")],
        0.0,
        "the speech owns the mouth: a stream's smile is replaced"
    );
    assert_eq!(w[at("eyeBlink_L")], 0.7, "and leaves the eyes alone");
    // Half weights blend linearly.
    let mut half = [0.0; 15];
    half[Viseme::AA.index()] = 0.5;
    half[Viseme::OU.index()] = 0.5;
    b.apply(&half, &mut w);
    assert!((w[at("jawOpen")] - (0.5 * 0.6 + 0.5 * 0.15)).abs() < 1e-6);
    assert!((w[at("mouthPucker")] - 0.5 * 0.8).abs() < 1e-6);
}

#[test]
fn missing_targets_are_reported_and_strict_files_refuse_them() {
    let targets: Vec<String> = facecap_targets()
        .into_iter()
        .filter(|t| t != "tongueOut")
        .collect();
    let b = BoundVisemes::bind(&VisemeMap::arkit(), &targets);
    assert_eq!(b.report().missing.len(), 1);
    assert_eq!(
        (
            b.report().missing[0].viseme,
            b.report().missing[0].target.as_str()
        ),
        ("TH", "tongueOut")
    );
    let json = r#"{"format":"mien-face","version":1,"visemes":{"PP":{"mouthClose":1.0,"lipsTogether":0.5},"aa":{"jawOpen":0.8}}}"#;
    let map = VisemeMap::from_json(json, "face.json").unwrap();
    let e = BoundVisemes::bind_strict(&map, &targets, "face.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("face.json") && e.contains("PP → lipsTogether"),
        "{e}"
    );
    assert_eq!(
        BoundVisemes::bind(&map, &targets)
            .report()
            .silent_visemes
            .len(),
        12,
        "13 visemes (not sil) drive nothing but PP and aa"
    );
}

#[test]
fn face_files_are_strict() {
    for (json, pointer) in [
        (
            r#"{"format":"mien-face","version":1,"visemes":{},"extra":1}"#,
            "/extra",
        ),
        (r#"{"format":"face","version":1,"visemes":{}}"#, "/format"),
        (
            r#"{"format":"mien-face","version":2,"visemes":{}}"#,
            "/version",
        ),
        (
            r#"{"format":"mien-face","version":1,"visemes":{"AA":{"jawOpen":1}}}"#,
            "/visemes/AA",
        ),
        (
            r#"{"format":"mien-face","version":1,"visemes":{"aa":{"jawOpen":3}}}"#,
            "/visemes/aa/jawOpen",
        ),
        (
            r#"{"format":"mien-face","version":1,"visemes":{"aa":[1]}}"#,
            "/visemes/aa",
        ),
        ("not json", "/"),
    ] {
        let e = VisemeMap::from_json(json, "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains(pointer), "{json}: {e}");
    }
}

#[test]
fn a_character_without_visemes_or_arkit_is_refused_with_advice() {
    let e = VisemeMap::for_character(&["Key 1", "Key 2"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--face"), "{e}");
}

#[test]
fn the_speech_layer_moves_the_built_in_heads_mouth() {
    let ch = mien_core::sample::sample_head();
    let speech = AlignedSpeech::new(
        "hello",
        1.0,
        2.0,
        vec![TimedViseme {
            viseme: Viseme::AA,
            start: 0.2,
            end: 0.6,
        }],
    )
    .unwrap();
    let mut layer = SpeechLayer::new(Box::new(speech), &ch, None).unwrap();
    let mut pose = ch.rest_pose();
    let node = ch.mesh_nodes()[0];
    let jaw = ch.meshes[ch.nodes[node.index()].mesh.unwrap().index()]
        .target_names
        .iter()
        .position(|n| n == "jawOpen")
        .unwrap();
    layer.apply(2.3, &mut pose);
    assert_eq!(
        pose.weights[node.index()][jaw],
        0.6,
        "aa opens the jaw at media 2.3 s (origin 2.0)"
    );
    layer.apply(2.7, &mut pose);
    assert_eq!(
        pose.weights[node.index()][jaw],
        0.0,
        "rest after the interval"
    );
    assert_eq!(layer.span(), (2.0, 3.0));
}

/// Ready Player Me / TalkingHead / VRoid-export spelling of the Oculus set (`viseme_I`, `viseme_O`,
/// `viseme_U`, `viseme_E` for ih, oh, ou, E): every one of the 15 binds and moves its own target,
/// none is silent. A name that still does not bind is reported with the character's nearest
/// target names.
#[test]
fn ready_player_me_viseme_names_bind_every_viseme() {
    let rpm = [
        "viseme_sil",
        "viseme_PP",
        "viseme_FF",
        "viseme_TH",
        "viseme_DD",
        "viseme_kk",
        "viseme_CH",
        "viseme_SS",
        "viseme_nn",
        "viseme_RR",
        "viseme_aa",
        "viseme_E",
        "viseme_I",
        "viseme_O",
        "viseme_U",
    ];
    let mut targets: Vec<String> = rpm.iter().map(|s| s.to_string()).collect();
    targets.extend(["mouthSmile".to_string(), "eyesClosed".to_string()]);
    let map = VisemeMap::for_character(&targets).unwrap();
    assert_eq!(map.kind, VisemeMapKind::Oculus);
    let b = BoundVisemes::bind(&map, &targets);
    assert!(b.report().missing.is_empty(), "{:?}", b.report().missing);
    assert!(
        b.report().silent_visemes.is_empty(),
        "{:?}",
        b.report().silent_visemes
    );
    // Each viseme drives exactly the target of its own name.
    for (v, want) in [
        (Viseme::IH, "viseme_I"),
        (Viseme::OH, "viseme_O"),
        (Viseme::OU, "viseme_U"),
        (Viseme::E, "viseme_E"),
        (Viseme::AA, "viseme_aa"),
    ] {
        let mut w = vec![0.0; targets.len()];
        b.apply(&one_hot(v), &mut w);
        let on: Vec<&str> = targets
            .iter()
            .zip(&w)
            .filter(|(_, x)| **x != 0.0)
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(on, [want], "{v:?}");
    }
    // Without viseme_U: ou is reported missing, with its nearest names.
    let partial: Vec<String> = targets
        .iter()
        .filter(|t| *t != "viseme_U")
        .cloned()
        .collect();
    let b = BoundVisemes::bind(&map, &partial);
    let m = &b.report().missing;
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].viseme, m[0].target.as_str()), ("ou", "viseme_ou"));
    assert_eq!(m[0].nearest.len(), 3);
    assert!(
        m[0].nearest.iter().all(|n| n.starts_with("viseme_")),
        "{:?}",
        m[0].nearest
    );
    assert_eq!(b.report().silent_visemes, ["ou"]);
}

/// A VRoid Studio export (`Fcl_MTH_A/I/U/E/O`, `Fcl_MTH_Close`, `Fcl_EYE_Close_L/R`, emotion
/// shapes): speech gets the documented vowel map and every viseme moves the mouth; the eyes'
/// `Fcl_EYE_Close_*` bind a stream's blinks by name.
#[test]
fn a_vroid_export_gets_the_vowel_map_and_every_viseme_moves() {
    let targets: Vec<String> = [
        "Fcl_ALL_Neutral",
        "Fcl_ALL_Angry",
        "Fcl_BRW_Fun",
        "Fcl_EYE_Close_L",
        "Fcl_EYE_Close_R",
        "Fcl_MTH_Close",
        "Fcl_MTH_A",
        "Fcl_MTH_I",
        "Fcl_MTH_U",
        "Fcl_MTH_E",
        "Fcl_MTH_O",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let map = VisemeMap::for_character(&targets).unwrap();
    assert_eq!(map.kind, VisemeMapKind::Vroid);
    // Mesh-path prefixes (`Face.Fcl_MTH_A`, as glTF channel paths spell them) are found too.
    let prefixed: Vec<String> = targets.iter().map(|t| format!("Face.{t}")).collect();
    assert_eq!(
        VisemeMap::for_character(&prefixed).unwrap().kind,
        VisemeMapKind::Vroid
    );
    let b = BoundVisemes::bind(&map, &targets);
    assert!(b.report().missing.is_empty(), "{:?}", b.report().missing);
    assert!(
        b.report().silent_visemes.is_empty(),
        "{:?}",
        b.report().silent_visemes
    );
    let idx = |s: &str| targets.iter().position(|t| t.ends_with(s)).unwrap();
    for (v, want, w) in [
        (Viseme::AA, "Fcl_MTH_A", 1.0),
        (Viseme::IH, "Fcl_MTH_I", 1.0),
        (Viseme::OU, "Fcl_MTH_U", 1.0),
        (Viseme::PP, "Fcl_MTH_Close", 1.0),
        (Viseme::SS, "Fcl_MTH_I", 0.6),
    ] {
        let mut out = vec![0.0; targets.len()];
        b.apply(&one_hot(v), &mut out);
        assert_eq!(out[idx(want)], w, "{v:?}");
    }
    // A stream's blinks reach the VRoid eye shapes by name.
    let bind = mien_core::anim::canon::Binding::new(&["eyeBlinkLeft", "eyeBlinkRight"], &targets);
    let routed: Vec<usize> = bind.routes().iter().map(|r| r.target).collect();
    assert_eq!(routed, [idx("Fcl_EYE_Close_L"), idx("Fcl_EYE_Close_R")]);
}
