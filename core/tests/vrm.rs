//! VRM 0.x and 1.0 avatars: import of the real files (expressions, binds, humanoid, lookAt),
//! the expression rules worked by hand (isBinary, block, blend, clamps), lookAt range maps, and
//! bad extensions refused naming the field.

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat};
use mien_core::io::gltf::{import_gltf, import_gltf_bytes};
use mien_core::rig::{Character, NodeId};
use mien_core::vrm::{Gaze, LookAtKind, Override, Vrm, VrmVersion};
use serde_json::{Value, json};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn godette() -> Character {
    import_gltf(&data("vrm/Godette_vrm_v4.vrm")).unwrap()
}

fn migration() -> Character {
    import_gltf(&data("vrm/expression_migration.vrm")).unwrap()
}

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

fn vrm(ch: &Character) -> &Vrm {
    ch.vrm.as_ref().expect("a VRM")
}

fn node(ch: &Character, name: &str) -> NodeId {
    NodeId(
        ch.nodes
            .iter()
            .position(|n| n.name.as_deref() == Some(name))
            .unwrap() as u32,
    )
}

#[test]
fn godette_reads_as_vrm0_with_presets_renamed_and_binds_divided_by_100() {
    let ch = godette();
    let v = vrm(&ch);
    assert_eq!(v.version, VrmVersion::V0);
    let names: Vec<&str> = v.expressions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "neutral",
            "aa",
            "ih",
            "ou",
            "ee",
            "oh",
            "blink",
            "happy",
            "angry",
            "sad",
            "relaxed",
            "lookUp",
            "lookDown",
            "lookLeft",
            "lookRight",
            "blinkLeft",
            "blinkRight"
        ]
    );
    // The control node is the last node, a scene root whose mesh has those 17 targets.
    assert_eq!(v.control_node.index(), ch.nodes.len() - 1);
    assert!(ch.scene_roots.contains(&v.control_node));
    let (_, m) = ch.node_mesh(v.control_node).unwrap();
    assert_eq!(m.target_names, names);
    assert!(m.primitives.is_empty());
    // "Joy": binds 9 (oh) at 50 and 10 (look_up) at 25 of the node instancing mesh 0 ("Face").
    let face = node(&ch, "Face");
    let happy = &v.expressions[v.expression("happy").unwrap()];
    assert_eq!(happy.file_name, "Joy");
    assert_eq!(happy.morph_binds.len(), 2);
    assert_eq!(
        (happy.morph_binds[0].node, happy.morph_binds[0].target),
        (face, 9)
    );
    assert_eq!(happy.morph_binds[0].weight, 0.5);
    assert_eq!(happy.morph_binds[1].weight, 0.25);
    // The face mesh's names come from the primitive's extras (UniVRM writes them there).
    let (_, fm) = ch.node_mesh(face).unwrap();
    assert_eq!(fm.target_names[9], "oh");
    assert!(v.expressions[v.expression("blinkLeft").unwrap()].is_binary);
    // Humanoid: 45 bones, head and neck named.
    assert_eq!(v.humanoid.len(), 45);
    assert_eq!(v.bone("head"), Some(node(&ch, "head_Armature")));
    assert_eq!(v.bone("neck"), Some(node(&ch, "neck_Armature")));
    // lookAt BlendShape with curves; yRange above 1 noted and applied as 1.
    assert_eq!(v.look_at.kind, LookAtKind::Expression);
    assert_eq!(v.look_at.horizontal_outer.output_scale, 7.1);
    assert_eq!(v.look_at.horizontal_outer.curve.as_ref().unwrap().len(), 3);
    assert!(ch.notes.iter().any(|n| n.field
        == "extensions.VRM.firstPerson.lookAtHorizontalOuter.yRange"
        && n.message.contains("7.1 is above 1")
        && n.message.contains("clamped")));
}

#[test]
fn expression_migration_reads_as_vrm1_with_unapplied_binds_counted() {
    let ch = migration();
    let v = vrm(&ch);
    assert_eq!(v.version, VrmVersion::V1);
    assert_eq!(v.expressions.len(), 24);
    let e = |n: &str| &v.expressions[v.expression(n).unwrap()];
    assert_eq!(e("happy").morph_binds[0].weight, 0.5);
    assert_eq!(e("sad").override_mouth, Override::Block);
    assert_eq!(e("sad").override_look_at, Override::Blend);
    assert_eq!(e("sad").material_color_binds, 1);
    assert_eq!(e("relaxed").texture_transform_binds, 1);
    assert!(e("relaxed").is_binary);
    assert!(e("custom_a").preset.is_none());
    // Two binds of one target are kept (they accumulate).
    assert_eq!(e("custom_e").morph_binds.len(), 2);
    assert_eq!(v.look_at.kind, LookAtKind::Bone);
    assert_eq!(v.humanoid.len(), 15);
    let notes: Vec<String> = ch
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.field, n.message))
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2 material colour and 2 texture transform binds not applied")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("no leftEye / rightEye")),
        "{notes:?}"
    );
}

/// Evaluate with the named inputs, return the named outputs.
fn eval(
    v: &Vrm,
    inputs: &[(&str, f32)],
    gaze: Option<Gaze>,
) -> (Vec<f32>, mien_core::vrm::ApplyCounts) {
    let mut x = vec![0.0; v.expressions.len()];
    for (n, w) in inputs {
        x[v.expression(n).unwrap()] = *w;
    }
    let mut out = vec![0.0; x.len()];
    let c = v.evaluate(&x, gaze, &mut out);
    (out, c)
}

fn out(v: &Vrm, o: &[f32], n: &str) -> f32 {
    o[v.expression(n).unwrap()]
}

#[test]
fn a_binary_expression_overrides_with_its_snapped_value() {
    let ch = migration();
    let v = vrm(&ch);
    // relaxed: binary, overrideBlink blend. At 0.4 it snaps to 0: blink is untouched.
    let (o, c) = eval(v, &[("relaxed", 0.4), ("blink", 0.8)], None);
    assert_eq!(out(v, &o, "relaxed"), 0.0);
    assert_eq!(out(v, &o, "blink"), 0.8);
    assert_eq!(c.factors[0], 1.0);
    // At 0.6 it snaps to 1 and blends blink by 1 − 1 = 0 (not by 1 − 0.6).
    let (o, c) = eval(v, &[("relaxed", 0.6), ("blink", 0.8)], None);
    assert_eq!(out(v, &o, "relaxed"), 1.0);
    assert_eq!(out(v, &o, "blink"), 0.0);
    assert_eq!(c.factors[0], 0.0);
}

#[test]
fn block_blocks_only_while_the_binary_expression_is_on() {
    let ch = migration();
    let v = vrm(&ch);
    // surprised: binary, overrideLookAt block.
    let (o, _) = eval(v, &[("surprised", 0.45), ("lookUp", 0.7)], None);
    assert_eq!(out(v, &o, "lookUp"), 0.7);
    let (o, _) = eval(v, &[("surprised", 0.55), ("lookUp", 0.7)], None);
    assert_eq!(out(v, &o, "lookUp"), 0.0);
}

#[test]
fn blend_attenuates_by_the_sum_and_block_holds_at_zero() {
    let ch = migration();
    let v = vrm(&ch);
    // sad blends lookAt (0.3) and custom_c blends lookAt (0.2): factor 1 − 0.5.
    let (o, c) = eval(
        v,
        &[("sad", 0.3), ("custom_c", 0.2), ("lookLeft", 0.8)],
        None,
    );
    assert!((c.factors[1] - 0.5).abs() < 1e-6);
    assert!((out(v, &o, "lookLeft") - 0.4).abs() < 1e-6);
    // sad blocks the mouth while above 0, however small.
    let (o, c) = eval(v, &[("sad", 0.01), ("aa", 1.0), ("oh", 0.5)], None);
    assert_eq!(c.factors[2], 0.0);
    assert_eq!((out(v, &o, "aa"), out(v, &o, "oh")), (0.0, 0.0));
    // Sums saturate: two blends of 1 leave nothing (1 − min(2, 1)), never a negative factor.
    let (o, _) = eval(
        v,
        &[("custom_b", 1.0), ("relaxed", 1.0), ("blink", 1.0)],
        None,
    );
    assert_eq!(out(v, &o, "blink"), 0.0);
}

#[test]
fn an_overridden_binary_expression_is_suppressed_and_inputs_are_clamped_and_counted() {
    let mut ch = migration();
    let v = ch.vrm.as_mut().unwrap();
    let bl = v.expression("blinkLeft").unwrap();
    v.expressions[bl].is_binary = true;
    let v = vrm(&ch);
    // Alone, the binary blinkLeft snaps to 1.
    let (o, _) = eval(v, &[("blinkLeft", 0.9)], None);
    assert_eq!(out(v, &o, "blinkLeft"), 1.0);
    // custom_d (binary, block blink) on: the binary blinkLeft is suppressed entirely.
    let (o, _) = eval(v, &[("blinkLeft", 0.9), ("custom_d", 0.9)], None);
    assert_eq!(out(v, &o, "blinkLeft"), 0.0);
    // Inputs outside [0, 1] are clamped and counted.
    let (o, c) = eval(v, &[("happy", 1.5), ("angry", -0.25)], None);
    assert_eq!(
        (out(v, &o, "happy"), out(v, &o, "angry"), c.clamped),
        (1.0, 0.0, 2)
    );
}

#[test]
fn apply_adds_each_bind_on_top_of_the_targets_and_repeats_accumulate() {
    let ch = migration();
    let v = vrm(&ch);
    let mut pose = ch.rest_pose();
    let mesh2 = v.expressions[v.expression("custom_e").unwrap()].morph_binds[0].node;
    pose.weights[mesh2.index()][0] = 0.1; // a target a driver set directly
    let c = v.control_node.index();
    pose.weights[c][v.expression("happy").unwrap()] = 0.6;
    pose.weights[c][v.expression("custom_e").unwrap()] = 0.25;
    let mut scratch = Vec::new();
    v.apply(&mut pose, &[], None, &mut scratch);
    // Key10 (index 0): 0.1 + 0.6 × 0.5; Key11 (index 1): 0.25 × 1 + 0.25 × 1.
    assert!((pose.weights[mesh2.index()][0] - 0.4).abs() < 1e-6);
    assert!((pose.weights[mesh2.index()][1] - 0.5).abs() < 1e-6);
}

#[test]
fn bone_look_at_turns_each_eye_through_its_range_map_on_its_rest_rotation() {
    // Give the 1.0 file eyes (two leaf nodes) with a rest rotation, and the map:
    // yaw 15° through input 30° → output 5° turns the eye 2.5°.
    let bytes = patched(&data("vrm/expression_migration.vrm"), |j| {
        let ext = &mut j["extensions"]["VRMC_vrm"];
        ext["humanoid"]["humanBones"]["leftEye"] = json!({"node": 3});
        ext["humanoid"]["humanBones"]["rightEye"] = json!({"node": 6});
        ext["lookAt"]["rangeMapHorizontalOuter"] =
            json!({"inputMaxValue": 30.0, "outputScale": 5.0});
        ext["lookAt"]["rangeMapHorizontalInner"] =
            json!({"inputMaxValue": 30.0, "outputScale": 2.0});
        j["nodes"][3]["rotation"] = json!([0.0, 0.0, 0.38268343, 0.9238795]);
    });
    let ch = import_gltf_bytes(&bytes, None, "eyes.vrm").unwrap();
    let v = vrm(&ch);
    let rest = ch.rest_pose();
    let (mut l, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(&rest, &mut l, &mut w);
    let mut pose = rest.clone();
    let mut scratch = Vec::new();
    let gaze = Gaze {
        yaw_deg: 15.0,
        pitch_deg: 0.0,
    };
    v.apply(&mut pose, &w, Some(gaze), &mut scratch);
    let (le, re) = (v.bone("leftEye").unwrap(), v.bone("rightEye").unwrap());
    // The eye's world rotation turned by exactly the mapped yaw about the character's +Y.
    let mut w2 = Vec::new();
    ch.world_matrices(&pose, &mut l, &mut w2);
    let turn = |e: NodeId| {
        let r0 = rot(&w[e.index()]);
        let r1 = rot(&w2[e.index()]);
        let d = r1 * r0.inverse();
        let (axis, angle) = d.to_axis_angle();
        (axis, angle.to_degrees())
    };
    let (axis, deg) = turn(le);
    assert!((deg - 2.5).abs() < 1e-3, "left eye outer: {deg}°");
    assert!((axis - glam::Vec3::Y).length() < 1e-3, "{axis}");
    let (_, deg) = turn(re);
    assert!((deg - 1.0).abs() < 1e-3, "right eye inner: {deg}°");
    // The rest rotation is kept: the local rotation is the rest's times the turn.
    let q0 = ch.nodes[le.index()].rest.rotation;
    assert!(q0.angle_between(pose.locals[le.index()].rotation) > 0.04);
    assert!(
        (q0.angle_between(pose.locals[le.index()].rotation)
            .to_degrees()
            - 2.5)
            .abs()
            < 1e-3
    );
}

fn rot(m: &Mat4) -> Quat {
    m.to_scale_rotation_translation().1
}

#[test]
fn an_expression_look_at_writes_the_look_expressions_through_the_curve() {
    let ch = godette();
    let v = vrm(&ch);
    // Yaw 9° of the outer map's 90°: t = 0.1 on Godette's curve, keys (0, 0.05, out 0) and
    // (0.656278551, 0.393769681, in 1.224509) — a cubic Hermite worked here in f64 — times the
    // file's yRange 7.1.
    let (t0, v0, m0) = (0.0f64, 0.05000305f64, 0.0f64);
    let (t1, v1, m1) = (0.656278551f64, 0.393769681f64, 1.224509f64);
    let dt = t1 - t0;
    let s = (0.1 - t0) / dt;
    let curve = (2.0 * s.powi(3) - 3.0 * s * s + 1.0) * v0
        + (s.powi(3) - 2.0 * s * s + s) * dt * m0
        + (-2.0 * s.powi(3) + 3.0 * s * s) * v1
        + (s.powi(3) - s * s) * dt * m1;
    let expect = curve * 7.1;
    assert!(expect < 1.0);
    let (o, c) = eval(
        v,
        &[],
        Some(Gaze {
            yaw_deg: 9.0,
            pitch_deg: 0.0,
        }),
    );
    assert!(
        (f64::from(out(v, &o, "lookLeft")) - expect).abs() < 1e-5,
        "{expect}"
    );
    assert_eq!(c.clamped, 0);
    assert_eq!(out(v, &o, "lookRight"), 0.0);
    // Pitch 90° down: the down curve's end, 1 × yRange 3.9, clamped to 1 and counted; a gaze
    // straight ahead moves no look expression (the outer curve starts at 0.05).
    let (o, c) = eval(
        v,
        &[],
        Some(Gaze {
            yaw_deg: 0.0,
            pitch_deg: 90.0,
        }),
    );
    assert!((out(v, &o, "lookDown") - 1.0).abs() < 1e-6);
    assert_eq!(c.clamped, 1);
    let (o, _) = eval(v, &[], Some(Gaze::default()));
    for n in ["lookUp", "lookDown", "lookLeft", "lookRight"] {
        assert_eq!(out(v, &o, n), 0.0, "{n}");
    }
}

#[test]
fn a_vrm1_bind_weight_above_one_is_reported_and_applied_as_one() {
    let bytes = patched(&data("vrm/expression_migration.vrm"), |j| {
        j["extensions"]["VRMC_vrm"]["expressions"]["preset"]["happy"]["morphTargetBinds"][0]["weight"] =
            json!(100);
    });
    let ch = import_gltf_bytes(&bytes, None, "w100.vrm").unwrap();
    let v = vrm(&ch);
    assert_eq!(
        v.expressions[v.expression("happy").unwrap()].morph_binds[0].weight,
        1.0
    );
    assert!(ch.notes.iter().any(|n| n.field
        == "extensions.VRMC_vrm.expressions.preset.happy.morphTargetBinds[0].weight"
        && n.message.contains("above 1")
        && n.message.contains("not ×100")));
}

#[test]
fn bad_vrm_extensions_are_refused_naming_the_field() {
    // A bind on a node without a mesh or of a target index the mesh lacks is skipped and
    // reported, not refused (tests/expression_names.rs); one of a node the file lacks is refused.
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|j: &mut Value| {
                j["extensions"]["VRMC_vrm"]["expressions"]["preset"]["happy"]["morphTargetBinds"]
                    [0]["node"] = json!(99)
            }),
            "morphTargetBinds[0].node",
        ),
        (
            Box::new(|j: &mut Value| {
                j["extensions"]["VRMC_vrm"]["expressions"]["preset"]["happy"]["morphTargetBinds"]
                    [0]["weight"] = json!(-1)
            }),
            "negative",
        ),
        (
            Box::new(|j: &mut Value| {
                j["extensions"]["VRMC_vrm"]["expressions"]["preset"]["sad"]["overrideMouth"] =
                    json!("mute")
            }),
            "overrideMouth",
        ),
        (
            Box::new(|j: &mut Value| {
                j["extensions"]["VRMC_vrm"]["lookAt"]["type"] = json!("laser")
            }),
            "lookAt.type",
        ),
        (
            Box::new(|j: &mut Value| {
                j["extensions"]["VRMC_vrm"]["humanoid"]["humanBones"]["head"]["node"] = json!(1000)
            }),
            "humanBones.head.node",
        ),
        (
            Box::new(|j: &mut Value| j["extensions"]["VRMC_vrm"]["expressions"] = json!([1, 2])),
            "expressions",
        ),
    ];
    for (edit, field) in cases {
        let bytes = patched(&data("vrm/expression_migration.vrm"), edit);
        let e = import_gltf_bytes(&bytes, None, "bad.vrm")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.vrm") && e.contains(field), "{field}: {e}");
    }
    // 0.x: a bind of a mesh that does not exist, and a curve of 5 numbers.
    let bytes = patched(&data("vrm/Godette_vrm_v4.vrm"), |j| {
        j["extensions"]["VRM"]["blendShapeMaster"]["blendShapeGroups"][1]["binds"][0]["mesh"] =
            json!(9)
    });
    let e = import_gltf_bytes(&bytes, None, "bad0.vrm")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("blendShapeGroups[1].binds[0].mesh") && e.contains("mesh 9"),
        "{e}"
    );
    let bytes = patched(&data("vrm/Godette_vrm_v4.vrm"), |j| {
        j["extensions"]["VRM"]["firstPerson"]["lookAtVerticalUp"]["curve"] = json!([0, 0, 0, 1, 1])
    });
    let e = import_gltf_bytes(&bytes, None, "bad0.vrm")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lookAtVerticalUp.curve") && e.contains("5 numbers"),
        "{e}"
    );
}

#[test]
fn a_character_without_vrm_has_none() {
    let ch = import_gltf(&data("facecap/facecap.glb")).unwrap();
    assert!(ch.vrm.is_none());
    assert!(
        !ch.nodes
            .iter()
            .any(|n| n.name.as_deref() == Some(mien_core::vrm::CONTROL_NODE_NAME))
    );
}

proptest::proptest! {
    /// The promises of `Vrm::evaluate` for any inputs: outputs in [0, 1], binary outputs 0 or 1,
    /// factors in [0, 1], a procedural expression never above its clamped input.
    #[test]
    fn evaluate_keeps_its_promises(x in proptest::collection::vec(-1.5f32..2.5, 24)) {
        let ch = migration();
        let v = vrm(&ch);
        let mut o = vec![0.0; 24];
        let c = v.evaluate(&x, None, &mut o);
        let outside = x.iter().filter(|w| !(0.0..=1.0).contains(*w)).count();
        proptest::prop_assert_eq!(c.clamped as usize, outside);
        for f in c.factors {
            proptest::prop_assert!((0.0..=1.0).contains(&f));
        }
        for ((e, &i), &w) in v.expressions.iter().zip(&x).zip(&o) {
            proptest::prop_assert!((0.0..=1.0).contains(&w));
            if e.is_binary {
                proptest::prop_assert!(w == 0.0 || w == 1.0);
            } else if e.group().is_some() {
                proptest::prop_assert!(w <= i.clamp(0.0, 1.0) + 1e-6);
            }
        }
    }
}
