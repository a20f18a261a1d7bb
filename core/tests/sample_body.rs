//! The built-in body (issue 26 item 6): a humanoid skeleton every role finder recognises, the
//! sample head's 52 targets on it, clips that loop, a walk whose stance feet stand on the ground
//! and move backward at the speed it is made for (computed independently from the gait's
//! construction), and a ponytail that swings without entering the head.

use glam::{DMat4, DQuat, DVec3, Mat4, Quat};
use mien_core::anim::foot::FootIkDef;
use mien_core::anim::gait::stride_speed;
use mien_core::anim::spring::{SpringOptions, SpringSim};
use mien_core::rig::{Character, ClipId, NodeId, Pose};
use mien_core::sample::{HEAD_OFFSET, WALK_SPEED, sample_body};

fn node(ch: &Character, name: &str) -> usize {
    ch.nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no node {name}"))
}

fn world(ch: &Character, pose: &Pose) -> Vec<Mat4> {
    let (mut s, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(pose, &mut s, &mut w);
    w
}

fn clip(ch: &Character, name: &str) -> ClipId {
    ch.find_clip(name).unwrap()
}

fn posed(ch: &Character, c: ClipId, t: f64) -> Pose {
    let mut p = ch.rest_pose();
    ch.apply_clip(c, t, &mut p);
    p
}

#[test]
fn the_skeleton_has_every_humanoid_role_and_the_head_its_52_targets() {
    let ch = sample_body();
    ch.validate().unwrap();
    let roles: Vec<&str> = mien_core::anim::retarget::roles(&ch)
        .into_iter()
        .map(|r| r.0)
        .collect();
    for want in [
        "hips",
        "spine",
        "chest",
        "neck",
        "head",
        "leftUpperLeg",
        "leftLowerLeg",
        "leftFoot",
        "leftToes",
        "rightUpperLeg",
        "rightLowerLeg",
        "rightFoot",
        "rightToes",
        "leftShoulder",
        "leftUpperArm",
        "leftLowerArm",
        "leftHand",
        "rightShoulder",
        "rightUpperArm",
        "rightLowerArm",
        "rightHand",
    ] {
        assert!(roles.contains(&want), "{want} not found in {roles:?}");
    }
    let feet = FootIkDef::humanoid(&ch).unwrap();
    assert_eq!(feet.pelvis, "Hips");
    assert_eq!(feet.legs[0].ankle, "LeftFoot");
    // The ankle height is measured to the sole, not to the toe joint (2 cm up): the foot's tube
    // runs from the heel (centre 4.5 cm up, 3.5 cm high) to the toe (centre 3.5 cm, 2.8 cm high),
    // so its lowest vertex is at 0.035 − 0.028 = 0.007 m, and the ankle (8 cm) is 0.073 m above.
    for leg in &feet.legs {
        assert!(
            (leg.ankle_height - 0.073).abs() < 1e-3,
            "{}",
            leg.ankle_height
        );
    }
    let head = ch
        .meshes
        .iter()
        .find(|m| m.name.as_deref() == Some("sample_head"))
        .unwrap();
    assert_eq!(head.target_names.len(), 52);
    assert_eq!(head.target_names[0], "eyeBlinkLeft");
    // On its feet, 1.6–1.7 m tall, the head where the offset puts it.
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for m in &ch.meshes {
        for p in m.primitives.iter().flat_map(|p| &p.positions) {
            lo = lo.min(p[1]);
            hi = hi.max(p[1]);
        }
    }
    assert!(lo.abs() < 0.03, "soles at {lo}");
    assert!((1.6..1.7).contains(&hi), "crown at {hi}");
    assert!((HEAD_OFFSET - 1.512).abs() < 1e-6);
    assert_eq!(ch.clips.len(), 3);
    assert_eq!(ch.spring_bones.as_ref().unwrap().joints.len(), 3);
}

#[test]
fn every_clip_loops() {
    let ch = sample_body();
    for name in ["idle", "walk", "wave"] {
        let c = clip(&ch, name);
        let (a, b) = (ch.clips[c.index()].start(), ch.clips[c.index()].end());
        let (p, q) = (posed(&ch, c, a), posed(&ch, c, b));
        for (i, (x, y)) in p.locals.iter().zip(&q.locals).enumerate() {
            assert!(
                x.translation.distance(y.translation) < 1e-5
                    && x.rotation.dot(y.rotation).abs() > 1.0 - 1e-6,
                "{name}: node {i} differs between its first and last key"
            );
        }
    }
}

/// The compass gait by hand: the stance ankle's height stays at its rest height (8 cm) and its
/// backward speed is `4·L·s₀/T` with `s₀ = v·T / (4L)` — the speed the clip is made for; the
/// measured stride speed agrees within 1%, and the stance foot stays level.
#[test]
fn the_walk_stands_on_its_stance_foot_at_the_speed_it_is_made_for() {
    let ch = sample_body();
    let w = clip(&ch, "walk");
    let (l, r) = (node(&ch, "LeftFoot"), node(&ch, "RightFoot"));
    let v = stride_speed(&ch, w, &[NodeId(l as u32), NodeId(r as u32)], DVec3::Z).unwrap();
    assert!(
        (v - WALK_SPEED).abs() < 0.01 * WALK_SPEED,
        "measured {v} m/s"
    );
    // Left stance: the first half cycle (1.1 s); sampled inside it away from the ends.
    let (t0, t1) = (0.05, 0.5);
    let (p0, p1) = (posed(&ch, w, t0), posed(&ch, w, t1));
    let (a0, a1) = (world(&ch, &p0)[l].w_axis, world(&ch, &p1)[l].w_axis);
    assert!(
        (a0.y - 0.08).abs() < 0.004 && (a1.y - 0.08).abs() < 0.004,
        "{a0} {a1}"
    );
    let speed = f64::from(a0.z - a1.z) / (t1 - t0);
    assert!((speed - WALK_SPEED).abs() < 0.03, "stance speed {speed}");
    let (_, rot, _) = world(&ch, &p0)[l].to_scale_rotation_translation();
    let pitch = (rot * glam::Vec3::Z).y.asin().to_degrees();
    assert!(pitch.abs() < 1.0, "stance foot pitched {pitch}°");
}

#[test]
fn the_ponytail_swings_with_a_head_turn_and_stays_out_of_the_head() {
    let ch = sample_body();
    let sb = ch.spring_bones.clone().unwrap();
    let mut sim = SpringSim::new(&sb, &ch, SpringOptions::default()).unwrap();
    let head = node(&ch, "Head");
    let mut pose = ch.rest_pose();
    let rest_locals = pose.locals.clone();
    let mut tips = Vec::new();
    let mut settled = None;
    for k in 0..240 {
        pose.locals.clone_from(&rest_locals);
        // A head turn of 60° about +Y over the third half second (a quick turn: 120°/s).
        let turn = 60f32.to_radians() * ((k as f32 - 120.0) / 30.0).clamp(0.0, 1.0);
        pose.locals[head].rotation = Quat::from_rotation_y(turn);
        sim.update(1.0 / 60.0, &ch, &mut pose, DMat4::IDENTITY)
            .unwrap();
        let t = sim.tails(&ch, &pose, DMat4::IDENTITY);
        if k == 119 {
            settled = Some(t[2]);
        }
        // Outside the head sphere (0.1 m about the head mesh's centre) with its hit radius.
        let hw = world(&ch, &pose)[head];
        let centre = hw.transform_point3(glam::Vec3::new(0.0, HEAD_OFFSET - 1.46, 0.0));
        for (j, p) in t.iter().enumerate() {
            let d = p.distance(centre.as_dvec3());
            assert!(
                d > 0.1 + 0.03 - 1e-6,
                "frame {k}: tail {j} inside the head ({d} m)"
            );
        }
        tips.push(t[2]);
    }
    let settled = settled.unwrap();
    // After the turn the tip swings round behind the turned head: its x moves toward −sin 60°.
    let end = *tips.last().unwrap();
    let turned = DQuat::from_rotation_y(60f64.to_radians());
    let want = turned * (settled - DVec3::new(0.0, 1.46, 0.0)) + DVec3::new(0.0, 1.46, 0.0);
    assert!(end.distance(want) < 0.05, "tip {end} vs turned rest {want}");
    // And it swung on the way (not a rigid copy of the head): some frame overshoots the end.
    let max_dx = tips[120..]
        .iter()
        .map(|p| (p.x - end.x).abs())
        .fold(0.0, f64::max);
    assert!(max_dx > 0.01, "no swing: {max_dx}");
}
