//! Names across conventions (issue 25, items 1–3): an avatar carrying both the ARKit and the
//! VRoid spelling of a channel binds the ARKit one and reports the alias as shadowed; a face of
//! VRoid `Fcl_*` shapes only takes the documented VRoid table; a VRM with only the combined
//! `blink` blinks from a tracker's two eyes; a stream column named after a VRM expression drives
//! it; a look-only VRM takes a face driver's look-at; a VRM bind that moves nothing is skipped and
//! reported (strict reading refuses it). Expected values are worked by hand in the comments.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use mien_core::anim::arkit::ARKIT_52;
use mien_core::anim::canon::vroid::VROID_FCL;
use mien_core::anim::canon::{Binding, BindingSide, RouteRule};
use mien_core::anim::drive::{Drive, StreamDrive};
use mien_core::anim::stream::WeightStream;
use mien_core::face::{FaceController, FaceDef};
use mien_core::io::gltf::{import_gltf, import_gltf_bytes};
use mien_core::rig::{Character, NodeId, Pose};
use mien_core::vrm::Gaze;
use serde_json::{Value, json};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// A one-triangle glTF (node `Face`) whose mesh has one morph target per name (all deltas zero:
/// only the weights matter here), imported through the real importer.
fn character(targets: &[&str]) -> Character {
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut bin = f(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    bin.extend(f(&[0.0; 9]));
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    );
    let n = targets.len();
    let j = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Face", "mesh": 0}],
        "meshes": [{
            "primitives": [{
                "attributes": {"POSITION": 0},
                "targets": vec![json!({"POSITION": 1}); n],
            }],
            "weights": vec![0.0; n],
            "extras": {"targetNames": targets},
        }],
        "buffers": [{"byteLength": bin.len(), "uri": uri}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 36},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]},
        ],
    });
    let ch = import_gltf_bytes(&serde_json::to_vec(&j).unwrap(), None, "hand.gltf").unwrap();
    assert_eq!(ch.meshes[0].target_names, targets);
    ch
}

/// A one-frame stream of `(channel, value)`.
fn stream(values: &[(&str, f32)]) -> WeightStream {
    WeightStream {
        source: "hand.csv".into(),
        channels: values.iter().map(|(n, _)| (*n).to_owned()).collect(),
        times: vec![0.0],
        values: values.iter().map(|(_, v)| *v).collect(),
        ..WeightStream::default()
    }
}

/// The weights of every node after driving `ch` with `s` at t = 0, every morph weight starting
/// at the sentinel −1 so an undriven target shows.
fn drive(ch: &Character, s: WeightStream) -> (Pose, StreamDrive) {
    let sd = StreamDrive::new(s, ch).unwrap();
    let mut rest = ch.rest_pose();
    for w in &mut rest.weights {
        w.iter_mut().for_each(|x| *x = -1.0);
    }
    let mut pose = rest.clone();
    let mut d = Drive::Stream(sd);
    d.pose_at(ch, &rest, 0.0, &mut pose);
    let Drive::Stream(sd) = d else { unreachable!() };
    (pose, sd)
}

fn face_weight(ch: &Character, pose: &Pose, name: &str) -> f32 {
    let i = ch.meshes[0]
        .target_names
        .iter()
        .position(|t| t == name)
        .unwrap();
    pose.weights[0][i]
}

// ---------------------------------------------------------------------------------------------
// Item 1: both spellings on one mesh.

#[test]
fn the_arkit_name_wins_over_its_vroid_alias_and_the_alias_is_reported_shadowed() {
    let ch = character(&[
        "eyeBlinkLeft",
        "eyeBlinkRight",
        "mouthClose",
        "jawOpen",
        "Fcl_EYE_Close_L",
        "Fcl_EYE_Close_R",
        "Fcl_MTH_Close",
    ]);
    let (pose, sd) = drive(
        &ch,
        stream(&[
            ("eyeBlinkLeft", 0.9),
            ("eyeBlinkRight", 0.3),
            ("mouthClose", 0.2),
            ("jawOpen", 0.5),
        ]),
    );
    // The ARKit targets take the stream directly (gain 1); the aliases stay at the sentinel.
    assert_eq!(
        pose.weights[0],
        [0.9, 0.3, 0.2, 0.5, -1.0, -1.0, -1.0],
        "{:?}",
        pose.weights[0]
    );
    let (_, r) = sd.reports().next().unwrap();
    assert!(r.ambiguous.is_empty(), "{:?}", r.ambiguous);
    assert!(
        r.matched
            .iter()
            .all(|m| !m.target_alias && !m.channel_alias)
    );
    let shadowed: Vec<(&str, BindingSide, Vec<&str>, Vec<&str>)> = r
        .shadowed
        .iter()
        .map(|s| {
            (
                s.arkit,
                s.side,
                s.chosen.iter().map(|n| n.name.as_str()).collect(),
                s.shadowed.iter().map(|n| n.name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        shadowed,
        [
            (
                "eyeBlinkLeft",
                BindingSide::Character,
                vec!["eyeBlinkLeft"],
                vec!["Fcl_EYE_Close_L"]
            ),
            (
                "eyeBlinkRight",
                BindingSide::Character,
                vec!["eyeBlinkRight"],
                vec!["Fcl_EYE_Close_R"]
            ),
            (
                "mouthClose",
                BindingSide::Character,
                vec!["mouthClose"],
                vec!["Fcl_MTH_Close"]
            ),
        ]
    );
    let undriven: Vec<&str> = r.undriven_targets.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(
        undriven,
        ["Fcl_EYE_Close_L", "Fcl_EYE_Close_R", "Fcl_MTH_Close"]
    );
    // report.json carries it.
    let j = serde_json::to_value(r).unwrap();
    assert_eq!(j["shadowed"][0]["side"], "character");
    assert_eq!(j["shadowed"][0]["chosen"][0]["name"], "eyeBlinkLeft");
    assert_eq!(j["matched"][0]["target_alias"], false);
}

#[test]
fn an_alias_alone_binds_and_says_so_and_a_stream_alias_is_shadowed_too() {
    // Only the alias: it stands for the channel.
    let b = Binding::new(&["eyeBlinkLeft"], &["Fcl_EYE_Close_L"]);
    assert_eq!(b.routes().len(), 1);
    assert!(b.report().matched[0].target_alias);
    assert!(b.report().shadowed.is_empty());
    // Both spellings in the stream: the ARKit one drives, the alias is shadowed (in no other
    // list of the report).
    let b = Binding::new(&["Eye_Left_Blink", "eyeBlinkLeft"], &["eyeBlink_L"]);
    assert_eq!(b.routes().len(), 1);
    assert_eq!(b.routes()[0].channel, 1);
    let r = b.report();
    assert_eq!(r.shadowed.len(), 1);
    assert_eq!(r.shadowed[0].side, BindingSide::Stream);
    assert_eq!(r.shadowed[0].shadowed[0].name, "Eye_Left_Blink");
    assert!(r.unmatched_channels.is_empty() && r.ambiguous.is_empty());
    let mut w = [0.0f32];
    b.apply(&[0.1, 0.7], &mut w);
    assert_eq!(w, [0.7]);
    // Two aliases of one channel and no ARKit spelling stay ambiguous (nothing to prefer).
    let b = Binding::new(&["eyeBlinkLeft"], &["Fcl_EYE_Close_L", "EyeClosedLeft"]);
    assert!(b.routes().is_empty());
    assert_eq!(b.report().ambiguous.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Item 2: a VRoid face.

/// VRoid Studio's face shapes as real exports name them (issue 25).
const FCL: &[&str] = &[
    "Fcl_ALL_Neutral",
    "Fcl_ALL_Angry",
    "Fcl_ALL_Fun",
    "Fcl_ALL_Joy",
    "Fcl_ALL_Sorrow",
    "Fcl_ALL_Surprised",
    "Fcl_BRW_Angry",
    "Fcl_BRW_Fun",
    "Fcl_BRW_Joy",
    "Fcl_BRW_Sorrow",
    "Fcl_BRW_Surprised",
    "Fcl_EYE_Natural",
    "Fcl_EYE_Angry",
    "Fcl_EYE_Close",
    "Fcl_EYE_Close_R",
    "Fcl_EYE_Close_L",
    "Fcl_EYE_Fun",
    "Fcl_EYE_Joy",
    "Fcl_EYE_Joy_R",
    "Fcl_EYE_Joy_L",
    "Fcl_EYE_Sorrow",
    "Fcl_EYE_Surprised",
    "Fcl_EYE_Spread",
    "Fcl_EYE_Iris_Hide",
    "Fcl_EYE_Highlight_Hide",
    "Fcl_MTH_Close",
    "Fcl_MTH_Up",
    "Fcl_MTH_Down",
    "Fcl_MTH_Angry",
    "Fcl_MTH_Small",
    "Fcl_MTH_Large",
    "Fcl_MTH_Neutral",
    "Fcl_MTH_Fun",
    "Fcl_MTH_Joy",
    "Fcl_MTH_Sorrow",
    "Fcl_MTH_Surprised",
    "Fcl_MTH_SkinFung",
    "Fcl_MTH_SkinFung_R",
    "Fcl_MTH_SkinFung_L",
    "Fcl_MTH_A",
    "Fcl_MTH_I",
    "Fcl_MTH_U",
    "Fcl_MTH_E",
    "Fcl_MTH_O",
    "Fcl_HA_Hide",
    "Fcl_HA_Fung1",
];

/// All 52 ARKit channels, each at a value of its own: channel k at (k + 1) / 100.
fn arkit_stream() -> WeightStream {
    let v: Vec<(&str, f32)> = ARKIT_52
        .iter()
        .enumerate()
        .map(|(k, n)| (*n, (k + 1) as f32 / 100.0))
        .collect();
    stream(&v)
}

fn arkit_value(name: &str) -> f32 {
    (ARKIT_52.iter().position(|n| *n == name).unwrap() + 1) as f32 / 100.0
}

#[test]
fn a_vroid_face_takes_the_documented_table_and_reports_what_stays_unbound() {
    let ch = character(FCL);
    let (pose, sd) = drive(&ch, arkit_stream());
    let (_, r) = sd.reports().next().unwrap();
    let mut bound: Vec<&str> = r.matched.iter().map(|m| m.arkit).collect();
    bound.sort_unstable();
    bound.dedup();
    // 21 of 52 (3 before the table: the two blinks and mouthClose, by alias).
    assert_eq!(bound.len(), 21, "{bound:?}");
    assert_eq!(r.unmatched_channels.len(), 31);
    for n in [
        "eyeLookUpLeft",
        "cheekPuff",
        "tongueOut",
        "mouthRollLower",
        "jawLeft",
    ] {
        assert!(
            r.unmatched_channels.iter().any(|u| u.name == n),
            "{n} should stay unbound"
        );
    }
    let w = |n: &str| face_weight(&ch, &pose, n);
    let a = arkit_value;
    let close = |x: f32, y: f32| (x - y).abs() < 1e-6;
    // By alias, gain 1.
    assert!(close(w("Fcl_EYE_Close_L"), a("eyeBlinkLeft")));
    assert!(close(w("Fcl_EYE_Close_R"), a("eyeBlinkRight")));
    assert!(close(w("Fcl_MTH_Close"), a("mouthClose")));
    // Sided shapes exist: the combined ones are not driven (no double blink).
    assert_eq!(w("Fcl_EYE_Close"), -1.0);
    assert_eq!(w("Fcl_EYE_Joy"), -1.0);
    assert!(close(w("Fcl_EYE_Joy_L"), a("eyeSquintLeft")));
    assert!(close(w("Fcl_EYE_Joy_R"), a("eyeSquintRight")));
    // Pairs at ½ each: the mean of the two sides.
    assert!(close(
        w("Fcl_EYE_Spread"),
        0.5 * (a("eyeWideLeft") + a("eyeWideRight"))
    ));
    assert_eq!(
        w("Fcl_EYE_Surprised"),
        -1.0,
        "Spread is present: first wins"
    );
    assert!(close(
        w("Fcl_MTH_Joy"),
        0.5 * (a("mouthSmileLeft") + a("mouthSmileRight"))
    ));
    assert_eq!(w("Fcl_ALL_Joy"), -1.0, "Fcl_MTH_Joy is present: first wins");
    assert!(close(
        w("Fcl_MTH_Sorrow"),
        0.5 * (a("mouthFrownLeft") + a("mouthFrownRight"))
    ));
    assert!(close(
        w("Fcl_BRW_Angry"),
        0.5 * (a("browDownLeft") + a("browDownRight"))
    ));
    assert!(close(w("Fcl_BRW_Sorrow"), a("browInnerUp")));
    assert!(close(
        w("Fcl_BRW_Surprised"),
        0.5 * (a("browOuterUpLeft") + a("browOuterUpRight"))
    ));
    assert!(close(w("Fcl_MTH_A"), a("jawOpen")));
    assert!(close(
        w("Fcl_MTH_I"),
        0.5 * (a("mouthStretchLeft") + a("mouthStretchRight"))
    ));
    assert!(close(w("Fcl_MTH_U"), a("mouthPucker")));
    assert!(close(w("Fcl_MTH_O"), a("mouthFunnel")));
    // Vowel E and the emotion-only shapes take no ARKit channel.
    for n in [
        "Fcl_MTH_E",
        "Fcl_ALL_Angry",
        "Fcl_BRW_Fun",
        "Fcl_MTH_Up",
        "Fcl_HA_Hide",
    ] {
        assert_eq!(w(n), -1.0, "{n}");
    }
    assert!(
        r.matched
            .iter()
            .filter(|m| m.target == "Fcl_MTH_A")
            .all(|m| m.rule == RouteRule::Table)
    );
}

#[test]
fn the_vroid_alternatives_take_over_when_the_first_choice_is_missing() {
    // No sided eye shapes, no Fcl_MTH_Joy, no Spread: the combined / whole-face alternatives.
    let targets = [
        "Fcl_EYE_Close",
        "Fcl_ALL_Joy",
        "Fcl_EYE_Surprised",
        "Fcl_EYE_Joy",
    ];
    let b = Binding::with_table(
        &[
            "eyeBlinkLeft",
            "eyeBlinkRight",
            "mouthSmileLeft",
            "mouthSmileRight",
            "eyeWideLeft",
            "eyeSquintRight",
            "jawOpen",
            "cheekPuff",
        ],
        &targets,
        VROID_FCL,
        &[],
    );
    let mut w = [0.0f32; 4];
    b.apply(&[1.0, 0.0, 0.8, 0.4, 0.6, 0.2, 0.9, 0.9], &mut w);
    // Close = ½·1 + ½·0; ALL_Joy = ½·0.8 + ½·0.4; Surprised = ½·0.6; EYE_Joy = ½·0.2.
    assert_eq!(w, [0.5, 0.6, 0.3, 0.1]);
    // Unbound: jawOpen names the table target the face lacks, cheekPuff has no entry at all.
    let u = &b.report().unmatched_channels;
    assert_eq!(u.len(), 2);
    assert!(
        u[0].name == "jawOpen" && u[0].reason.contains("Fcl_MTH_A"),
        "{u:?}"
    );
    assert!(
        u[1].name == "cheekPuff" && !u[1].reason.contains("name-table"),
        "{u:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Item 3: VRM streams, look-at, binds that move nothing.

/// The GLB's JSON chunk, edited by `edit`, written back into a GLB.
fn patched(path: &Path, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let mut j: Value = serde_json::from_slice(&b[20..20 + n]).unwrap();
    edit(&mut j);
    let mut text = serde_json::to_vec(&j).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let rest = &b[20 + n..];
    let mut out = Vec::new();
    out.extend_from_slice(&b[0..8]);
    out.extend_from_slice(&((12 + 8 + text.len() + rest.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(rest);
    out
}

/// Godette (VRM 0.x) keeping only the blendShapeGroups whose presetName `keep` accepts.
fn godette_with(keep: impl Fn(&str) -> bool) -> Character {
    let bytes = patched(&data("vrm/Godette_vrm_v4.vrm"), |j| {
        let groups = j["extensions"]["VRM"]["blendShapeMaster"]["blendShapeGroups"]
            .as_array_mut()
            .unwrap();
        groups.retain(|g| keep(g["presetName"].as_str().unwrap()));
    });
    import_gltf_bytes(&bytes, None, "godette.vrm").unwrap()
}

fn node(ch: &Character, name: &str) -> NodeId {
    NodeId(
        ch.nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name))
            .unwrap() as u32,
    )
}

fn target(ch: &Character, node_name: &str, t: &str) -> (usize, usize) {
    let n = node(ch, node_name);
    let (_, m) = ch.node_mesh(n).unwrap();
    (
        n.index(),
        m.target_names.iter().position(|x| x == t).unwrap(),
    )
}

#[test]
fn an_arkit_blink_drives_the_combined_blink_of_a_vrm_without_sided_blinks() {
    let ch = godette_with(|p| p != "blink_l" && p != "blink_r");
    let v = ch.vrm.as_ref().unwrap();
    assert!(v.expression("blinkLeft").is_none() && v.expression("blink").is_some());
    let (mut pose, sd) = drive(
        &ch,
        stream(&[("eyeBlinkLeft", 0.8), ("eyeBlinkRight", 0.4)]),
    );
    let c = v.control_node.index();
    // blink = ½·0.8 + ½·0.4 = 0.6 (the mean of the two eyes).
    assert!((pose.weights[c][v.expression("blink").unwrap()] - 0.6).abs() < 1e-6);
    let report = sd
        .reports()
        .find(|(n, _)| n.index() == c)
        .map(|(_, r)| r)
        .unwrap();
    assert_eq!(report.matched.len(), 2);
    assert!(
        report
            .matched
            .iter()
            .all(|m| m.target == "blink" && m.gain == 0.5)
    );
    // Through the expression, Godette's blink binds blink_left and blink_right at 1 (100 in the
    // file): both eyelids at 0.6 on top of the drive's −1 sentinel = −0.4.
    let (mut l, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut l, &mut w);
    v.apply(&mut pose, &w, None, &mut Vec::new());
    for t in ["blink_left", "blink_right"] {
        let (n, i) = target(&ch, "Face", t);
        assert!((pose.weights[n][i] - (-1.0 + 0.6)).abs() < 1e-6, "{t}");
    }
    // With the sided presets present, the combined blink gets no route (no double blink).
    let full = import_gltf(&data("vrm/Godette_vrm_v4.vrm")).unwrap();
    let (_, cm) = full
        .node_mesh(full.vrm.as_ref().unwrap().control_node)
        .unwrap();
    let b = Binding::with_table(
        &["eyeBlinkLeft", "eyeBlinkRight"],
        &cm.target_names,
        mien_core::vrm::table::ARKIT_TO_VRM,
        &[],
    );
    let targets: Vec<&str> = b
        .report()
        .matched
        .iter()
        .map(|m| m.target.as_str())
        .collect();
    assert_eq!(targets, ["blinkLeft", "blinkRight"]);
}

#[test]
fn a_stream_column_named_after_a_vrm_expression_drives_it() {
    let ch = import_gltf(&data("vrm/Godette_vrm_v4.vrm")).unwrap();
    let v = ch.vrm.as_ref().unwrap();
    let (pose, sd) = drive(
        &ch,
        stream(&[
            ("happy", 0.7),
            ("aa", 0.3),
            ("blink", 0.9),
            ("jawOpen", 0.1),
        ]),
    );
    let c = v.control_node.index();
    let x = |n: &str| pose.weights[c][v.expression(n).unwrap()];
    assert_eq!(x("happy"), 0.7);
    assert_eq!(x("blink"), 0.9);
    // `aa` is named by the column *and* reached by jawOpen through the table: the exact name
    // takes the target, the table route is not added (no double drive).
    assert_eq!(x("aa"), 0.3);
    let (_, r) = sd.reports().find(|(n, _)| n.index() == c).unwrap();
    let exact: Vec<&str> = r
        .matched
        .iter()
        .filter(|m| m.rule == RouteRule::ExactName)
        .map(|m| m.channel.as_str())
        .collect();
    assert_eq!(exact.len(), 3, "{exact:?}");
    assert!(r.unmatched_channels.iter().all(|u| u.name != "happy"));
}

#[test]
fn a_vrm_whose_only_expressions_look_takes_the_face_look_at() {
    let ch = godette_with(|p| p.starts_with("look"));
    let v = ch.vrm.as_ref().unwrap();
    assert_eq!(v.expressions.len(), 4);
    assert!(v.gaze_moves());
    // Today's refusal: "no expression, blink or look target of the face definition exists".
    let mut face = FaceController::new(&ch, FaceDef::for_character(&ch), 0.0, (2.0, 4.0))
        .expect("the VRM lookAt is driven by the face's look-at point");
    face.look_at(Some(glam::Vec3::new(-1.0, 1.5, -1.0)))
        .unwrap();
    assert!(face.look_target().is_some());
    // The lookAt (type BlendShape) turns a gaze 20° to the character's left into lookLeft.
    let mut out = vec![0.0; 4];
    v.evaluate(
        &[0.0; 4],
        Some(Gaze {
            yaw_deg: 20.0,
            pitch_deg: 0.0,
        }),
        &mut out,
    );
    assert!(out[v.expression("lookLeft").unwrap()] > 0.0);
    assert_eq!(out[v.expression("lookRight").unwrap()], 0.0);
    // A VRM with no look expression and nothing else still refuses.
    let none = godette_with(|p| p == "neutral");
    assert!(!none.vrm.as_ref().unwrap().gaze_moves());
    assert!(FaceController::new(&none, FaceDef::for_character(&none), 0.0, (2.0, 4.0)).is_err());
}

#[test]
fn a_vrm1_bind_that_moves_nothing_is_skipped_and_reported_and_strict_refuses() {
    let edit = |j: &mut Value| {
        let p = &mut j["extensions"]["VRMC_vrm"]["expressions"]["preset"];
        // Node 2 (`head`) has no mesh; mesh 1 has 2 targets, not 8.
        p["happy"]["morphTargetBinds"][0]["node"] = json!(2);
        p["angry"]["morphTargetBinds"][0]["index"] = json!(7);
    };
    let bytes = patched(&data("vrm/expression_migration.vrm"), edit);
    let ch = import_gltf_bytes(&bytes, None, "skip.vrm").unwrap();
    let v = ch.vrm.as_ref().unwrap();
    let binds = |n: &str| v.expressions[v.expression(n).unwrap()].morph_binds.len();
    assert_eq!(binds("happy"), 0);
    assert_eq!(binds("angry"), 0);
    // The rest of the avatar is intact: custom_a keeps its bind, custom_e its two.
    assert_eq!(binds("custom_a"), 1);
    assert_eq!(binds("custom_e"), 2);
    let base = "extensions.VRMC_vrm.expressions.preset";
    let mut fields: Vec<&str> = v.skipped_binds.iter().map(|s| s.field.as_str()).collect();
    fields.sort_unstable();
    let want = [
        format!("{base}.angry.morphTargetBinds[0].index"),
        format!("{base}.happy.morphTargetBinds[0].node"),
    ];
    assert_eq!(fields, want);
    assert!(
        v.skipped_binds
            .iter()
            .any(|s| s.reason == "node 2 has no mesh")
    );
    for f in &want {
        assert!(
            ch.notes
                .iter()
                .any(|n| &n.field == f && n.message.contains("skipped")),
            "{f}"
        );
    }
    // Strict: the imported avatar refused, naming both fields.
    let e = v.require_all_binds("skip.vrm").unwrap_err().to_string();
    assert!(e.contains(&want[0]) && e.contains(&want[1]), "{e}");
    // Strict reading at the parser.
    let j: Value = {
        let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        serde_json::from_slice(&bytes[20..20 + n]).unwrap()
    };
    let ext = j["extensions"].as_object().unwrap();
    let scene = mien_core::vrm::parse::Scene {
        file: "skip.vrm",
        nodes: &ch.nodes,
        meshes: &ch.meshes,
    };
    let control = NodeId(ch.nodes.len() as u32);
    let lenient = mien_core::vrm::parse::read(ext, &scene, control, &mut Vec::new()).unwrap();
    assert_eq!(lenient.unwrap().skipped_binds.len(), 2);
    let e = mien_core::vrm::parse::read_with(
        ext,
        &scene,
        control,
        &mut Vec::new(),
        mien_core::vrm::parse::ReadOptions { strict: true },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("skip.vrm") && e.contains("node 2 has no mesh") && e.contains("morph target 7"),
        "{e}"
    );
}

#[test]
fn a_vrm0_bind_of_a_missing_target_is_skipped_the_same_way() {
    let bytes = patched(&data("vrm/Godette_vrm_v4.vrm"), |j| {
        j["extensions"]["VRM"]["blendShapeMaster"]["blendShapeGroups"][1]["binds"][0]["index"] =
            json!(99)
    });
    let ch = import_gltf_bytes(&bytes, None, "skip0.vrm").unwrap();
    let v = ch.vrm.as_ref().unwrap();
    assert!(
        v.expressions[v.expression("aa").unwrap()]
            .morph_binds
            .is_empty()
    );
    assert_eq!(
        v.expressions[v.expression("ih").unwrap()].morph_binds.len(),
        1
    );
    assert_eq!(
        v.skipped_binds[0].field,
        "extensions.VRM.blendShapeMaster.blendShapeGroups[1].binds[0].index"
    );
    assert!(v.skipped_binds[0].reason.contains("morph target 99"));
    assert!(v.require_all_binds("skip0.vrm").is_err());
}
