//! Retargeting (issue 26 item 1, seed 003 "Retargeting"): the rest-pose correction worked by hand
//! on small skeletons, a property test against an f64 reference written here from the formula,
//! the translate bone's hip-height scale and the facing turn, the limits, the definition's
//! refusals, and the real files: an identity VRM Animation leaves a VRM 1.0 robot exactly at rest,
//! an A-pose and a T-pose export of one character reach the same pose from one clip (T-pose
//! references), body clips map between Mixamo-style, Blender-style and VRM skeletons.

use std::f64::consts::FRAC_PI_2;
use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3, Quat, Vec3};
use mien_core::anim::clip::{Channel, Clip, Interpolation, Property, Sampler};
use mien_core::anim::retarget::{
    BoneMap, MAX_RETARGET_POSES, Reference, RetargetDef, RetargetOptions, Retargeter,
};
use mien_core::io::gltf::import_gltf;
use mien_core::rig::{Character, ClipId, Hierarchy, Node, NodeId, Transform};
use proptest::prelude::*;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// A skeleton from `(name, parent, translation, rotation)` rows, parents first.
fn skeleton(label: &str, rows: &[(&str, Option<usize>, [f32; 3], Quat)]) -> Character {
    let mut nodes: Vec<Node> = rows
        .iter()
        .map(|(name, parent, t, r)| Node {
            name: Some((*name).to_string()),
            parent: parent.map(|p| NodeId(p as u32)),
            rest: Transform {
                translation: Vec3::from(*t),
                rotation: *r,
                scale: Vec3::ONE,
            },
            ..Default::default()
        })
        .collect();
    for i in 0..rows.len() {
        if let Some(p) = rows[i].1 {
            nodes[p].children.push(NodeId(i as u32));
        }
    }
    let hierarchy = Hierarchy::new(label, &nodes).unwrap();
    let ch = Character {
        source: label.into(),
        nodes,
        hierarchy,
        scene_roots: vec![NodeId(0)],
        ..Default::default()
    };
    ch.validate().unwrap();
    ch
}

/// A small humanoid facing +Z (its left is +X): hips 1 m × `h` up, both upper legs, a left arm
/// (upper arm, lower arm, hand) leaving the chest toward +X, turned `arm_down` radians below level
/// about the forward axis at the upper arm (0: a T-pose), and a right upper arm.
fn humanoid(label: &str, h: f32, arm_down: f32, facing_neg_z: bool) -> Character {
    let side = if facing_neg_z { -1.0 } else { 1.0 };
    // The arm's rest turn about the facing axis (+Z facing: a turn about +Z by -arm_down lowers +X).
    let down = Quat::from_axis_angle(Vec3::Z, -arm_down * side);
    skeleton(
        label,
        &[
            ("Hips", None, [0.0, h, 0.0], Quat::IDENTITY),
            ("Chest", Some(0), [0.0, 0.4 * h, 0.0], Quat::IDENTITY),
            ("UpperArm.L", Some(1), [0.2 * side, 0.1 * h, 0.0], down),
            (
                "LowerArm.L",
                Some(2),
                [0.3 * side, 0.0, 0.0],
                Quat::IDENTITY,
            ),
            ("Hand.L", Some(3), [0.25 * side, 0.0, 0.0], Quat::IDENTITY),
            (
                "UpperArm.R",
                Some(1),
                [-0.2 * side, 0.1 * h, 0.0],
                Quat::IDENTITY,
            ),
            (
                "UpperLeg.L",
                Some(0),
                [0.1 * side, -0.05 * h, 0.0],
                Quat::IDENTITY,
            ),
            ("LowerLeg.L", Some(6), [0.0, -0.45 * h, 0.0], Quat::IDENTITY),
            (
                "UpperLeg.R",
                Some(0),
                [-0.1 * side, -0.05 * h, 0.0],
                Quat::IDENTITY,
            ),
            ("LowerLeg.R", Some(8), [0.0, -0.45 * h, 0.0], Quat::IDENTITY),
        ],
    )
}

fn node(ch: &Character, name: &str) -> usize {
    ch.nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{} has no {name}", ch.source))
}

/// World positions `(N,)` of a pose, f64, composed here (independent of the library's World).
fn world_positions(ch: &Character, locals: &[Transform]) -> Vec<DVec3> {
    let mut rot = vec![DQuat::IDENTITY; ch.nodes.len()];
    let mut pos = vec![DVec3::ZERO; ch.nodes.len()];
    let mut done = vec![false; ch.nodes.len()];
    while done.iter().any(|d| !d) {
        for i in 0..ch.nodes.len() {
            if done[i] {
                continue;
            }
            let l = &locals[i];
            let q = l.rotation.as_dquat().normalize();
            let t = l.translation.as_dvec3();
            match ch.nodes[i].parent {
                None => {
                    rot[i] = q;
                    pos[i] = t;
                    done[i] = true;
                }
                Some(p) if done[p.index()] => {
                    let s = ch.nodes[p.index()].rest.scale.as_dvec3();
                    let _ = s;
                    rot[i] = rot[p.index()] * q;
                    pos[i] =
                        pos[p.index()] + rot[p.index()] * (t * locals[p.index()].scale.as_dvec3());
                    done[i] = true;
                }
                Some(_) => {}
            }
        }
    }
    pos
}

fn source_pose(ch: &Character, turns: &[(&str, Quat)], hips_move: Vec3) -> Vec<Transform> {
    let mut l = ch.rest_pose().locals;
    for (name, q) in turns {
        let i = node(ch, name);
        l[i].rotation = *q * l[i].rotation;
    }
    let h = node(ch, "Hips");
    l[h].translation += hips_move;
    l
}

/// The arm raised to straight up (+90° about the forward axis): on a T-pose target with rest
/// references the arm points up; on an A-pose target (45° down) with rest references it ends
/// 45° up (its own rest turned by the same 90°); with T-pose references straight up again.
#[test]
fn an_arm_raise_reaches_each_target_as_worked_by_hand() {
    let src = humanoid("source T", 1.0, 0.0, false);
    let raise = Quat::from_axis_angle(Vec3::Z, FRAC_PI_2 as f32);
    let pose = source_pose(&src, &[("UpperArm.L", raise)], Vec3::ZERO);
    for (target, reference, want) in [
        (humanoid("T", 1.0, 0.0, false), Reference::Rest, DVec3::Y),
        (
            humanoid("A", 1.0, std::f32::consts::FRAC_PI_4, false),
            Reference::Rest,
            // (cos −45°, sin −45°) turned +90° about Z: (x, y) → (−y, x).
            DVec3::new(1.0, 1.0, 0.0).normalize(),
        ),
        (
            humanoid("A", 1.0, std::f32::consts::FRAC_PI_4, false),
            Reference::TPose,
            DVec3::Y,
        ),
    ] {
        let def = RetargetDef::auto(&src, &target).unwrap();
        let o = RetargetOptions {
            source_reference: reference,
            target_reference: reference,
            strict: false,
        };
        let rt = Retargeter::new(&def, &src, &target, &o).unwrap();
        let out = rt.retarget_locals(&src, &pose);
        let w = world_positions(&target, &out);
        let dir = (w[node(&target, "LowerArm.L")] - w[node(&target, "UpperArm.L")]).normalize();
        assert!(
            (dir - want).length() < 1e-5,
            "{} {:?}: arm points {dir:?}, want {want:?}",
            target.source,
            reference
        );
        // Bone lengths never change.
        let len = (w[node(&target, "Hand.L")] - w[node(&target, "LowerArm.L")]).length();
        assert!((len - 0.25).abs() < 1e-6, "{len}");
    }
}

/// Hips 1 m up on the source, 0.5 m on the target: the hip-height ratio is 0.5, so a 0.2 m step
/// forward (+Z) is 0.1 m on the target; facing −Z (a VRM 0.x), the target turns 180° and steps
/// 0.1 m toward −Z, its own forward.
#[test]
fn the_hips_carry_scaled_root_motion_along_the_target_s_facing() {
    let src = humanoid("source", 1.0, 0.0, false);
    let pose = source_pose(&src, &[], Vec3::new(0.0, 0.0, 0.2));
    for (target, dz, deg) in [
        (humanoid("+Z", 0.5, 0.0, false), 0.1, 0.0),
        (humanoid("-Z", 0.5, 0.0, true), -0.1, 180.0),
    ] {
        let def = RetargetDef::auto(&src, &target).unwrap();
        let rt = Retargeter::new(&def, &src, &target, &RetargetOptions::default()).unwrap();
        let r = rt.report();
        assert!((r.scale - 0.5).abs() < 1e-9, "{}", r.scale);
        assert_eq!(r.scale_from, "hip height");
        assert!(
            (r.model_rotation_deg.abs() - deg).abs() < 1e-6,
            "{}",
            r.model_rotation_deg
        );
        let out = rt.retarget_locals(&src, &pose);
        let w = world_positions(&target, &out);
        let hips = w[node(&target, "Hips")];
        assert!(
            (hips - DVec3::new(0.0, 0.5, dz)).length() < 1e-6,
            "{}: hips at {hips:?}",
            target.source
        );
        let mapped = r.mapped.iter().filter(|m| m.translate).count();
        assert_eq!(mapped, 1, "only the hips translate");
    }
}

fn random_quat(u: [f64; 3]) -> Quat {
    // Shoemake's uniform rotation from three uniforms.
    let (a, b, c) = (
        u[0],
        u[1] * std::f64::consts::TAU,
        u[2] * std::f64::consts::TAU,
    );
    let (s1, s2) = ((1.0 - a).sqrt(), a.sqrt());
    Quat::from_xyzw(
        (s1 * b.sin()) as f32,
        (s1 * b.cos()) as f32,
        (s2 * c.sin()) as f32,
        (s2 * c.cos()) as f32,
    )
    .normalize()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For random rest rotations on both skeletons and a random source pose, each mapped target
    /// bone's world rotation is `M · Wₛ · Rₛ⁻¹ · M⁻¹ · Rₜ` (the formula, composed here in f64
    /// from the poses), and the source's rest gives the target's rest exactly.
    #[test]
    fn mapped_bones_follow_the_formula(
        rs in proptest::collection::vec(proptest::array::uniform3(0.0f64..1.0), 10),
        rt in proptest::collection::vec(proptest::array::uniform3(0.0f64..1.0), 10),
        pose in proptest::collection::vec(proptest::array::uniform3(0.0f64..1.0), 10),
    ) {
        let base = humanoid("s", 1.0, 0.0, false);
        let mut src = base.clone();
        let mut tgt = humanoid("t", 0.8, 0.3, false);
        for i in 1..10 {
            src.nodes[i].rest.rotation = random_quat(rs[i]);
            tgt.nodes[i].rest.rotation = random_quat(rt[i]);
        }
        // Explicit map (random rests scramble the sides the facing is found from).
        let def = RetargetDef {
            format: "mien-retarget".into(),
            version: 1,
            description: None,
            bones: base.nodes.iter().map(|n| BoneMap {
                source: n.name.clone().unwrap(),
                target: n.name.clone().unwrap(),
                translate: n.name.as_deref() == Some("Hips"),
            }).collect(),
            scale: Some(1.0),
            model_rotation: Some([0.0, 0.0, 0.0, 1.0]),
        };
        let r = Retargeter::new(&def, &src, &tgt, &RetargetOptions::default()).unwrap();
        let at_rest = r.retarget_locals(&src, &src.rest_pose().locals);
        for (a, b) in at_rest.iter().zip(tgt.rest_pose().locals.iter()) {
            prop_assert!(a.rotation.dot(b.rotation).abs() > 1.0 - 1e-6);
            prop_assert!((a.translation - b.translation).length() < 1e-5);
        }
        let mut locals = src.rest_pose().locals;
        for i in 0..10 {
            locals[i].rotation = random_quat(pose[i]);
        }
        let out = r.retarget_locals(&src, &locals);
        let world_rot = |ch: &Character, l: &[Transform], i: usize| {
            let mut q = DQuat::IDENTITY;
            let mut chain = vec![i];
            while let Some(p) = ch.nodes[*chain.last().unwrap()].parent {
                chain.push(p.index());
            }
            for j in chain.iter().rev() {
                q = q * l[*j].rotation.as_dquat();
            }
            q.normalize()
        };
        let rest_s = src.rest_pose().locals;
        let rest_t = tgt.rest_pose().locals;
        for i in 0..10 {
            let want = (world_rot(&src, &locals, i) * world_rot(&src, &rest_s, i).inverse()
                * world_rot(&tgt, &rest_t, i)).normalize();
            let got = world_rot(&tgt, &out, i);
            prop_assert!(got.dot(want).abs() > 1.0 - 1e-6, "node {i}: {got:?} vs {want:?}");
        }
    }
}

fn two_key_clip(node: usize, seconds: f32) -> Clip {
    Clip {
        name: Some("long".into()),
        channels: vec![Channel {
            node: NodeId(node as u32),
            property: Property::Rotation,
            sampler: Sampler::new(
                "t",
                "c",
                Interpolation::Linear,
                vec![0.0, seconds],
                vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.7071, 0.7071],
                4,
            )
            .unwrap(),
        }],
    }
}

/// Rates outside 1–240 and bakes over 20,000 poses are refused with the numbers; a 20,000-pose
/// bake is not.
#[test]
fn limits_are_refused_with_the_numbers() {
    let mut src = humanoid("s", 1.0, 0.0, false);
    let a = node(&src, "UpperArm.L");
    src.clips.push(two_key_clip(a, 100.0));
    // 19999 / 128 s (exact in f32) at 128 keys per second: 20,000 poses; 20000 / 128 s: 20,001.
    src.clips.push(two_key_clip(a, 19_999.0 / 128.0));
    src.clips.push(two_key_clip(a, 20_000.0 / 128.0));
    let tgt = humanoid("t", 1.0, 0.0, false);
    let def = RetargetDef::auto(&src, &tgt).unwrap();
    let r = Retargeter::new(&def, &src, &tgt, &RetargetOptions::default()).unwrap();
    for fps in [0.0, 0.5, 240.5, f64::NAN, f64::INFINITY] {
        let e = r
            .retarget_clip(&src, &[ClipId(0)], fps, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("keys per second") && e.contains("240"), "{e}");
    }
    let e = r
        .retarget_clip(&src, &[ClipId(0)], 240.0, "x")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("24001 poses") && e.contains(&MAX_RETARGET_POSES.to_string()),
        "{e}"
    );
    let c = r.retarget_clip(&src, &[ClipId(1)], 128.0, "x").unwrap();
    assert_eq!(c.channels[0].sampler.times().len(), 20_000);
    let e = r
        .retarget_clip(&src, &[ClipId(2)], 128.0, "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("20001 poses"), "{e}");
    let e = r
        .retarget_clip(&src, &[ClipId(7)], 30.0, "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no clip 7"), "{e}");
}

/// A definition is refused naming every problem: unknown keys, a name mapped twice, a bad scale
/// and rotation; bones the skeletons lack are named with near names; strict mode names every
/// unmapped bone.
#[test]
fn bad_definitions_are_refused_naming_each_problem() {
    let e = RetargetDef::from_json(
        r#"{"format":"mien-retarget","version":1,"bones":[],"scael":2}"#,
        "m.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("m.json") && e.contains("scael"), "{e}");
    let e = RetargetDef::from_json(
        r#"{"format":"mien-retarget","version":2,"bones":[
            {"source":"Hips","target":"Hips","translate":true},
            {"source":"Hips","target":"Chest"}],
            "scale":-1,"model_rotation":[0,0,0,2]}"#,
        "m.json",
    )
    .unwrap_err()
    .to_string();
    for needle in [
        "/version",
        "/bones/1/source",
        "mapped twice",
        "/scale",
        "/model_rotation",
    ] {
        assert!(e.contains(needle), "lacks {needle}: {e}");
    }
    let src = humanoid("s", 1.0, 0.0, false);
    let tgt = humanoid("t", 1.0, 0.0, false);
    let def = RetargetDef::from_json(
        r#"{"format":"mien-retarget","version":1,"bones":[
            {"source":"Hipz","target":"Hips","translate":true},
            {"source":"Chest","target":"UpperArmm_L"}]}"#,
        "m.json",
    )
    .unwrap();
    let e = Retargeter::new(&def, &src, &tgt, &RetargetOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bones[0].source")
            && e.contains("`Hipz`")
            && e.contains("bones[1].target")
            && e.contains("near: UpperArm.L"),
        "{e}"
    );
    let def = RetargetDef::from_json(
        r#"{"format":"mien-retarget","version":1,"bones":[{"source":"Hips","target":"Hips","translate":true}]}"#,
        "m.json",
    )
    .unwrap();
    let strict = RetargetOptions {
        strict: true,
        ..Default::default()
    };
    let e = Retargeter::new(&def, &src, &tgt, &strict)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unmapped bones") && e.contains("LowerLeg.R"),
        "{e}"
    );
    // The same map without strict: the unmapped bones are listed, not refused.
    let r = Retargeter::new(&def, &src, &tgt, &RetargetOptions::default()).unwrap();
    assert_eq!(r.report().unmapped_target.len(), 9);
}

/// `retarget/nop.vrma` holds every humanoid bone at its rest: retargeted onto the VRM 1.0 robot
/// with rest references, every key of every channel is the robot's rest transform.
#[test]
fn an_identity_vrma_leaves_a_vrm_at_rest() {
    let src = import_gltf(&data("retarget/nop.vrma")).unwrap();
    let tgt = import_gltf(&data("retarget/debug_robot.vrm")).unwrap();
    assert!(src.vrm_animation.is_some() && src.humanoid().unwrap().len() >= 50);
    let def = RetargetDef::auto(&src, &tgt).unwrap();
    let r = Retargeter::new(&def, &src, &tgt, &RetargetOptions::default()).unwrap();
    assert_eq!(
        r.report().mapped.len(),
        53,
        "{:?}",
        r.report().unmapped_target
    );
    let clip = r.retarget_clip(&src, &[ClipId(0)], 30.0, "nop").unwrap();
    let rest = tgt.rest_pose().locals;
    let mut checked = 0;
    for c in &clip.channels {
        let i = c.node.index();
        for k in 0..c.sampler.times().len() {
            let v = c.sampler.key_value(k);
            match c.property {
                Property::Rotation => {
                    let q = Quat::from_slice(v);
                    assert!(
                        q.dot(rest[i].rotation).abs() > 1.0 - 1e-6,
                        "node {i}: {q:?}"
                    );
                }
                Property::Translation => {
                    let t = Vec3::from_slice(v);
                    assert!((t - rest[i].translation).length() < 1e-5, "node {i}: {t:?}");
                }
                _ => unreachable!(),
            }
            checked += 1;
        }
    }
    assert!(checked >= 54, "{checked}");
}

/// World positions of the humanoid nodes of `ch` for its clip-less pose `locals`, by role.
fn by_role(ch: &Character, locals: &[Transform]) -> Vec<(&'static str, DVec3)> {
    let w = world_positions(ch, locals);
    let mut v: Vec<(&'static str, DVec3)> = ch
        .humanoid()
        .unwrap()
        .into_iter()
        .map(|(r, n)| (r, w[n.index()]))
        .collect();
    v.sort_by_key(|(r, _)| *r);
    v
}

/// One clip (`bodies/test.vrma`) onto the A-pose-rest and the T-pose-rest export of one character:
/// with T-pose references every humanoid joint lands within 1 cm of its twin at every key; with
/// rest references the arms differ by decimetres (the rest-pose difference the reference removes).
#[test]
fn a_pose_and_t_pose_exports_agree_through_t_pose_references() {
    let src = import_gltf(&data("bodies/test.vrma")).unwrap();
    let a = import_gltf(&data("retarget/rest_a_pose_t_position_rest.vrm")).unwrap();
    let t = import_gltf(&data("retarget/rest_a_pose_t_position_pose.vrm")).unwrap();
    let clip_of = |target: &Character, reference: Reference| {
        let def = RetargetDef::auto(&src, target).unwrap();
        let o = RetargetOptions {
            source_reference: reference,
            target_reference: reference,
            strict: false,
        };
        let r = Retargeter::new(&def, &src, target, &o).unwrap();
        r.retarget_clip(&src, &[ClipId(0)], 30.0, "test").unwrap()
    };
    let pose_at = |ch: &Character, clip: &Clip, k: usize| {
        let mut l = ch.rest_pose().locals;
        for c in &clip.channels {
            let v = c.sampler.key_value(k);
            match c.property {
                Property::Rotation => l[c.node.index()].rotation = Quat::from_slice(v),
                Property::Translation => l[c.node.index()].translation = Vec3::from_slice(v),
                _ => {}
            }
        }
        l
    };
    let mut worst_t = 0.0f64;
    let mut worst_rest = 0.0f64;
    for (reference, worst) in [
        (Reference::TPose, &mut worst_t),
        (Reference::Rest, &mut worst_rest),
    ] {
        let ca = clip_of(&a, reference);
        let ct = clip_of(&t, reference);
        let keys = ca.channels[0].sampler.times().len();
        assert!(keys > 30, "{keys}");
        for k in 0..keys {
            let pa = by_role(&a, &pose_at(&a, &ca, k));
            let pt = by_role(&t, &pose_at(&t, &ct, k));
            assert_eq!(pa.len(), pt.len());
            for ((ra, xa), (rt, xt)) in pa.iter().zip(&pt) {
                assert_eq!(ra, rt);
                *worst = worst.max((*xa - *xt).length());
            }
        }
    }
    assert!(worst_t < 0.01, "T-pose references: {worst_t} m apart");
    assert!(
        worst_rest > 0.1,
        "rest references: only {worst_rest} m apart"
    );
}

/// Body clips between differently named skeletons map by role: the RPM (Mixamo names) idle onto
/// the Quaternius knight (`UpperLeg.L`), the knight's walk onto the RPM avatar and onto Godette
/// (VRM 0.x humanoid, Blender names), each with its hips as the translate bone and the bones it
/// cannot map listed.
#[test]
fn body_clips_map_between_real_skeletons() {
    let rpm_idle = import_gltf(&data("bodies/rpm_take2-idle.glb")).unwrap();
    let knight = import_gltf(&data("bodies/KnightCharacter.glb")).unwrap();
    let rpm = import_gltf(&data("avatars/rpm_male.glb")).unwrap();
    let godette = import_gltf(&data("vrm/Godette_vrm_v4.vrm")).unwrap();
    let walk = knight.find_clip("HumanArmature|Walking").unwrap();
    for (src, tgt, clip, mapped, unmapped_t, deg) in [
        (&rpm_idle, &knight, ClipId(0), 21, "PoleTarget.L", 0.0),
        (&knight, &rpm, walk, 21, "LeftHandThumb1", 0.0),
        (&knight, &godette, walk, 21, "HairBall_Center", 180.0),
    ] {
        let def = RetargetDef::auto(src, tgt).unwrap();
        let r = Retargeter::new(&def, src, tgt, &RetargetOptions::default()).unwrap();
        let rep = r.report();
        assert_eq!(rep.mapped.len(), mapped, "{} → {}", src.source, tgt.source);
        assert!(
            rep.unmapped_target.iter().any(|b| b == unmapped_t),
            "{:?}",
            rep.unmapped_target
        );
        let hips: Vec<_> = rep.mapped.iter().filter(|m| m.translate).collect();
        assert_eq!(hips.len(), 1);
        assert_eq!(hips[0].role.as_deref(), Some("hips"));
        assert!(
            (rep.model_rotation_deg.abs() - deg).abs() < 1e-9,
            "{}",
            rep.model_rotation_deg
        );
        assert!(rep.scale > 0.2 && rep.scale < 5.0, "{}", rep.scale);
        let c = r.retarget_clip(src, &[clip], 30.0, "walk").unwrap();
        assert_eq!(c.channels.len(), mapped + 1);
    }
}

/// Doubtful maps are noted, not refused: a left bone driving a right one, two translate bones.
#[test]
fn swapped_sides_and_extra_translate_bones_are_noted() {
    let src = humanoid("s", 1.0, 0.0, false);
    let tgt = humanoid("t", 1.0, 0.0, false);
    let def = RetargetDef::from_json(
        r#"{"format":"mien-retarget","version":1,"bones":[
            {"source":"Hips","target":"Hips","translate":true},
            {"source":"Chest","target":"Chest","translate":true},
            {"source":"UpperArm.L","target":"UpperArm.R"}]}"#,
        "m.json",
    )
    .unwrap();
    let r = Retargeter::new(&def, &src, &tgt, &RetargetOptions::default()).unwrap();
    let notes = r.report().notes.join("\n");
    assert!(notes.contains("2 bones carry translation"), "{notes}");
    assert!(
        notes.contains("`UpperArm.L` (a left bone) drives `UpperArm.R` (a right bone)"),
        "{notes}"
    );
    // The automatic map notes neither.
    let auto = RetargetDef::auto(&src, &tgt).unwrap();
    let r = Retargeter::new(&auto, &src, &tgt, &RetargetOptions::default()).unwrap();
    let notes = r.report().notes.join("\n");
    assert!(
        !notes.contains("swapped") && !notes.contains("carry translation"),
        "{notes}"
    );
}
