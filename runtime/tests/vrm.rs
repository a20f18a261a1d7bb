//! VRM avatars through the runtime: a Live Link Face recording on Godette (VRM 0.x) through the
//! ARKit → VRM table, every viseme of speech moving her mouth, gaze from the face driver's
//! look-at point and from the caller, and the `vrm` expression space on the 1.0 file. Expected
//! weights are computed here from the stream's own numbers and the file's binds.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::anim::WeightStream;
use mien_core::face::FaceDef;
use mien_core::io::livelink_csv::read_livelink_csv;
use mien_core::speech::{SpeechSampler, VISEME_COUNT, VISEME_NAMES};
use mien_core::vrm::Gaze;
use mien_runtime::{
    Asset, Device, ExpressionSpace, FaceDriver, FaceSources, Runtime, RuntimeOptions, Script,
    Speech,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn runtime(rel: &str) -> Runtime {
    let asset = Arc::new(Asset::load(data(rel)).unwrap());
    Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap()
}

fn node(rt: &Runtime, name: &str) -> usize {
    rt.asset()
        .character()
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap()
}

/// The weight of target `target` on node `node` in instance 0's pose.
fn weight(rt: &Runtime, node_name: &str, target: &str) -> f32 {
    let n = node(rt, node_name);
    let ch = rt.asset().character();
    let (_, m) = ch.node_mesh(mien_core::rig::NodeId(n as u32)).unwrap();
    let t = m.target_names.iter().position(|x| x == target).unwrap();
    rt.instance(0).unwrap().pose().weights[n][t]
}

#[test]
fn a_live_link_recording_drives_godette_through_the_arkit_to_vrm_table() {
    let mut rt = runtime("vrm/Godette_vrm_v4.vrm");
    let stream =
        read_livelink_csv(&data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv")).unwrap();
    let s: WeightStream = stream.clone();
    rt.instance_mut(0).unwrap().play_stream(stream).unwrap();
    let ch = |n: &str| {
        s.channels
            .iter()
            .position(|c| c.eq_ignore_ascii_case(n))
            .unwrap()
    };
    let mut row = vec![0.0; s.channel_count()];
    let mut moved = 0;
    for k in 0..40 {
        let t = 0.1 * f64::from(k);
        rt.update(t).unwrap();
        s.sample(t, &mut row);
        let c = |x: f32| x.clamp(0.0, 1.0);
        // aa ← jawOpen; angry ← ½ browDownLeft + ½ browDownRight; sad ← the frowns, likewise;
        // blinkLeft ← eyeBlinkLeft, binary (snaps at 0.5). Godette's binds: ah = aa + ¼ angry;
        // blink_left = blink (nothing drives it) + blinkLeft + ¼ angry + 0.1 sad.
        let aa = c(row[ch("JawOpen")]);
        let angry = c(0.5 * row[ch("BrowDownLeft")] + 0.5 * row[ch("BrowDownRight")]);
        let sad = c(0.5 * row[ch("MouthFrownLeft")] + 0.5 * row[ch("MouthFrownRight")]);
        let blink_l = if c(row[ch("EyeBlinkLeft")]) > 0.5 {
            1.0
        } else {
            0.0
        };
        let ah = weight(&rt, "Face", "ah");
        assert!((ah - (aa + 0.25 * angry)).abs() < 1e-5, "t {t}: ah {ah}");
        let bl = weight(&rt, "Face", "blink_left");
        let want = blink_l + 0.25 * angry + 0.1 * sad;
        assert!((bl - want).abs() < 1e-5, "t {t}: blink_left {bl} vs {want}");
        if ah > 0.05 {
            moved += 1;
        }
        // The eye angles are the lookAt gaze (both eyes averaged; yaw > 0 is the character's
        // left): they drive lookLeft or lookRight, never both (Godette binds look_left /
        // look_right only there).
        let mut aux = vec![0.0; s.aux_channels.len()];
        s.sample_aux(t, &mut aux);
        let a = |n: &str| {
            aux[s
                .aux_channels
                .iter()
                .position(|c| c.eq_ignore_ascii_case(n))
                .unwrap()]
        };
        let yaw = 0.5 * (a("LeftEyeYaw") + a("RightEyeYaw"));
        let (ll, lr) = (
            weight(&rt, "Face", "look_left"),
            weight(&rt, "Face", "look_right"),
        );
        if yaw > 1e-3 {
            assert!(
                ll > 0.0 && lr == 0.0,
                "t {t}: yaw {yaw}: left {ll} right {lr}"
            );
        } else if yaw < -1e-3 {
            assert!(
                lr > 0.0 && ll == 0.0,
                "t {t}: yaw {yaw}: left {ll} right {lr}"
            );
        }
    }
    assert!(moved > 5, "the jaw moved in {moved} frames");
    // Only the expressions bind: the face mesh, whose targets no channel names, is not listed
    // with 52 unmatched channels.
    let mien_core::anim::Drive::Stream(d) = rt.instance(0).unwrap().drive() else {
        panic!("a stream drive")
    };
    let nodes: Vec<usize> = d.reports().map(|(n, _)| n.index()).collect();
    assert_eq!(
        nodes,
        [rt.asset()
            .character()
            .vrm
            .as_ref()
            .unwrap()
            .control_node
            .index()]
    );
    // Head motion turns the humanoid head and neck (names from the VRM, not standard names).
    let hm = rt.instance(0).unwrap().head_motion().unwrap().clone();
    assert_eq!(hm.head.as_deref(), Some("head_Armature"));
    assert_eq!(hm.neck.as_deref(), Some("neck_Armature"));
    assert_eq!((hm.left_eye, hm.right_eye), (None, None));
}

/// Viseme `i` alone during `[i, i + 1)` seconds.
struct OneHot;

impl SpeechSampler for OneHot {
    fn weights_at(&self, position: f64, out: &mut [f32; VISEME_COUNT]) {
        *out = [0.0; VISEME_COUNT];
        if position >= 0.0 && position < VISEME_COUNT as f64 {
            out[position as usize] = 1.0;
        }
    }
    fn span(&self) -> (f64, f64) {
        (0.0, VISEME_COUNT as f64)
    }
}

#[test]
fn every_viseme_moves_godettes_mouth() {
    let mut rt = runtime("vrm/Godette_vrm_v4.vrm");
    let ch = rt.asset().character().clone();
    let speech = Speech::from_sampler(Box::new(OneHot), &ch, None).unwrap();
    assert_eq!(
        speech.report()["bindings"][0]["visemes"]["kind"],
        serde_json::json!("Vrm"),
        "{}",
        speech.report()
    );
    rt.instance_mut(0)
        .unwrap()
        .set_speech(Some(speech))
        .unwrap();
    let mouth = ["ah", "ih", "uu", "ee", "oh"];
    for (i, name) in VISEME_NAMES.iter().enumerate() {
        rt.update(i as f64 + 0.5).unwrap();
        let most = mouth
            .iter()
            .map(|t| weight(&rt, "Face", t))
            .fold(0.0f32, f32::max);
        if i == 0 {
            assert_eq!(most, 0.0, "sil is rest");
        } else {
            assert!(
                most >= 0.2 - 1e-6,
                "viseme {name}: the mouth's largest weight is {most}"
            );
        }
    }
    // aa, ih, ou, ee, oh at full strength move ah, ih, uu, ee, oh to exactly 1.
    for (v, t) in [
        ("aa", "ah"),
        ("ih", "ih"),
        ("ou", "uu"),
        ("E", "ee"),
        ("oh", "oh"),
    ] {
        let i = VISEME_NAMES.iter().position(|n| *n == v).unwrap();
        rt.update(i as f64 + 0.5).unwrap();
        assert!((weight(&rt, "Face", t) - 1.0).abs() < 1e-6, "{v} → {t}");
    }
}

#[test]
fn gaze_comes_from_the_face_look_at_point_and_the_caller() {
    let mut rt = runtime("vrm/Godette_vrm_v4.vrm");
    let ch = rt.asset().character().clone();
    let head = ch.vrm.as_ref().unwrap().bone("head").unwrap();
    let (mut l, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut l, &mut w);
    let eyes = w[head.index()].transform_point3(glam::Vec3::new(0.0, 0.146, 0.122));
    // A 0.x model faces −Z, its left is −X: a point ahead and to its left.
    let left_point = eyes + glam::Vec3::new(-1.0, 0.0, -1.0);
    let face = FaceDriver::new(
        &ch,
        FaceDef::for_character(&ch),
        Script::default(),
        Some(left_point.into()),
        0.0,
        &FaceSources::default(),
    )
    .unwrap();
    rt.instance_mut(0).unwrap().set_face(Some(face)).unwrap();
    rt.update(0.0).unwrap();
    assert!(
        weight(&rt, "Face", "look_left") > 0.1,
        "{}",
        weight(&rt, "Face", "look_left")
    );
    assert_eq!(weight(&rt, "Face", "look_right"), 0.0);
    // The caller's gaze wins: 45° to the right.
    rt.instance_mut(0)
        .unwrap()
        .set_vrm_gaze(Some(Gaze {
            yaw_deg: -45.0,
            pitch_deg: 0.0,
        }))
        .unwrap();
    rt.update(0.1).unwrap();
    assert_eq!(weight(&rt, "Face", "look_left"), 0.0);
    assert!(weight(&rt, "Face", "look_right") > 0.1);
    // Non-finite gazes and a non-VRM character are refused.
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_vrm_gaze(Some(Gaze {
            yaw_deg: f32::NAN,
            pitch_deg: 0.0,
        }))
        .err()
        .unwrap();
    assert!(e.to_string().contains("not finite"), "{e}");
    let mut other = runtime("facecap/facecap.glb");
    let e = other
        .instance_mut(0)
        .unwrap()
        .set_vrm_gaze(None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("not a VRM avatar"), "{e}");
}

#[test]
fn the_vrm_space_sets_expressions_directly() {
    let mut rt = runtime("vrm/expression_migration.vrm");
    assert_eq!(rt.asset().space(), ExpressionSpace::Vrm);
    let v = rt.asset().character().vrm.clone().unwrap();
    let mut x = vec![0.0; v.expressions.len()];
    x[v.expression("happy").unwrap()] = 1.0; // Key10 × 0.5
    x[v.expression("custom_a").unwrap()] = 0.5; // Key11 × 0.5
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Vrm, &x)
        .unwrap();
    rt.update(0.0).unwrap();
    assert!((weight(&rt, "Mesh2", "Key10") - 0.5).abs() < 1e-6);
    assert!((weight(&rt, "Mesh2", "Key11") - 0.25).abs() < 1e-6);
    // A wrong length, and the space on a character that is not a VRM, are refused.
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Vrm, &x[1..])
        .err()
        .unwrap();
    assert!(e.to_string().contains("the space has 24"), "{e}");
    let mut other = runtime("facecap/facecap.glb");
    let e = other
        .instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Vrm, &x)
        .err()
        .unwrap();
    assert!(e.to_string().contains("not a VRM avatar"), "{e}");
}

#[test]
fn the_face_driver_blinks_a_vrm_through_its_blink_expression() {
    let mut rt = runtime("vrm/Godette_vrm_v4.vrm");
    let ch = rt.asset().character().clone();
    let def = FaceDef::for_character(&ch);
    assert_eq!(def.blink.targets, vec![("blink".to_string(), 1.0)]);
    let face = FaceDriver::new(
        &ch,
        def,
        Script::default(),
        None,
        0.0,
        &FaceSources::default(),
    )
    .unwrap();
    rt.instance_mut(0).unwrap().set_face(Some(face)).unwrap();
    let v = ch.vrm.as_ref().unwrap();
    let (c, blink) = (v.control_node.index(), v.expression("blink").unwrap());
    let mut closed = 0;
    for k in 0..300 {
        rt.update(f64::from(k) / 30.0).unwrap();
        let b = rt.instance(0).unwrap().pose().weights[c][blink];
        // Godette's blink binds blink_left and blink_right at 1 (100 in the file).
        assert!((weight(&rt, "Face", "blink_left") - b).abs() < 1e-6);
        if b > 0.9 {
            closed += 1;
        }
    }
    assert!(closed > 0, "no blink closed the eyes in 10 s");
}

#[test]
fn speech_on_a_vrm_whose_mouth_expressions_bind_nothing_reports_silent_visemes() {
    let rt = runtime("vrm/expression_migration.vrm");
    let ch = rt.asset().character().clone();
    let speech = Speech::from_sampler(Box::new(OneHot), &ch, None).unwrap();
    let v = &speech.report()["bindings"][0]["visemes"];
    let silent: Vec<&str> = v["silent_visemes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str())
        .collect();
    assert_eq!(silent.len(), 14, "{v}");
    let mut inert: Vec<&str> = v["inert_targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str())
        .collect();
    inert.sort_unstable();
    assert_eq!(inert, ["aa", "ee", "ih", "oh", "ou"]);
    // Godette's mouth expressions bind her vowels: nothing is silent.
    let g = runtime("vrm/Godette_vrm_v4.vrm");
    let ch = g.asset().character().clone();
    let speech = Speech::from_sampler(Box::new(OneHot), &ch, None).unwrap();
    let v = &speech.report()["bindings"][0]["visemes"];
    assert_eq!(v["silent_visemes"].as_array().unwrap().len(), 0, "{v}");
    assert!(v.get("inert_targets").is_none());
}
