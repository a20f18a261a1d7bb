//! The face controller: expressions fading at their speed, seeded blinks, gaze (morphs on the
//! built-in head, eye joints on facecap) within limits and speed, overrides, clamping, and
//! deterministic state hashes.

use glam::{Mat4, Vec3};
use mien_core::face::{FaceController, FaceDef, IdleBehaviour, state_hash};
use mien_core::rig::{Character, Pose};

fn head() -> Character {
    mien_core::sample::sample_head()
}

fn facecap() -> Character {
    mien_core::io::gltf::import_gltf(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/facecap/facecap.glb"),
    )
    .unwrap()
}

/// Apply the controller at `t` on a fresh rest pose; returns the pose.
fn at(ch: &Character, fc: &mut FaceController, t: f64, idle: &IdleBehaviour) -> Pose {
    let mut pose = ch.rest_pose();
    let (mut l, mut w) = (Vec::new(), Vec::<Mat4>::new());
    ch.world_matrices(&pose, &mut l, &mut w);
    fc.update(ch, t, idle, &w, &mut pose);
    pose
}

fn weight(ch: &Character, pose: &Pose, name: &str) -> f32 {
    for n in ch.mesh_nodes() {
        let m = &ch.meshes[ch.nodes[n.index()].mesh.unwrap().index()];
        if let Some(i) = m.target_names.iter().position(|t| t == name) {
            return pose.weights[n.index()][i];
        }
    }
    panic!("no target {name}")
}

fn still() -> IdleBehaviour {
    // Blinks far away, no wander: isolates what a test looks at.
    IdleBehaviour {
        blink_interval: (1000.0, 1000.0),
        ..IdleBehaviour::default()
    }
}

#[test]
fn expressions_fade_at_their_speed() {
    let ch = head();
    let mut fc = FaceController::new(&ch, FaceDef::arkit_default(), 0.0, (1000.0, 1000.0)).unwrap();
    fc.set_expression("smile", 1.0).unwrap();
    let p = at(&ch, &mut fc, 0.0, &still());
    assert_eq!(
        weight(&ch, &p, "mouthSmileLeft"),
        0.0,
        "the first frame holds"
    );
    // Speed 4 per second: 0.1 s later the smile is at 0.4 → mouthSmileLeft 0.4 × 0.8.
    let p = at(&ch, &mut fc, 0.1, &still());
    assert!(
        (weight(&ch, &p, "mouthSmileLeft") - 0.32).abs() < 1e-6,
        "{}",
        weight(&ch, &p, "mouthSmileLeft")
    );
    let p = at(&ch, &mut fc, 1.0, &still());
    assert!((weight(&ch, &p, "mouthSmileLeft") - 0.8).abs() < 1e-6);
    fc.clear_expressions();
    let p = at(&ch, &mut fc, 1.1, &still());
    assert!(
        (weight(&ch, &p, "mouthSmileLeft") - 0.48).abs() < 1e-6,
        "fades out at the same speed"
    );
    assert!(
        fc.set_expression("grin", 1.0)
            .unwrap_err()
            .to_string()
            .contains("smile")
    );
    assert!(fc.set_expression("smile", 1.5).is_err());
}

#[test]
fn blinks_are_seeded_and_close_the_lids() {
    let ch = head();
    let idle = IdleBehaviour {
        blink_interval: (2.0, 4.0),
        ..IdleBehaviour::default()
    };
    let times = |seed: u64| {
        let mut def = FaceDef::arkit_default();
        def.blink.seed = seed;
        let mut fc = FaceController::new(&ch, def, 0.0, (2.0, 4.0)).unwrap();
        let mut closed = Vec::new();
        for i in 0..600 {
            let t = f64::from(i) / 60.0;
            let p = at(&ch, &mut fc, t, &idle);
            if weight(&ch, &p, "eyeBlinkLeft") > 0.99 {
                closed.push(i);
            }
        }
        closed
    };
    let a = times(7);
    assert_eq!(a, times(7), "the same seed blinks at the same frames");
    assert_ne!(a, times(8), "another seed blinks elsewhere");
    // 10 s with 2–4 s intervals: 2 to 5 blinks, each closed at least one frame at 60 fps.
    let blinks = a.windows(2).filter(|w| w[1] - w[0] > 1).count() + usize::from(!a.is_empty());
    assert!((2..=5).contains(&blinks), "{blinks} blinks: {a:?}");
    // blink_now closes the lids 0.08 s later (40 % of 0.2 s); disabling stops the schedule.
    let mut fc = FaceController::new(&ch, FaceDef::arkit_default(), 0.0, (1000.0, 1000.0)).unwrap();
    at(&ch, &mut fc, 0.0, &still());
    fc.blink_now(0.5);
    let p = at(&ch, &mut fc, 0.58, &still());
    assert!((weight(&ch, &p, "eyeBlinkRight") - 1.0).abs() < 1e-5);
    let p = at(&ch, &mut fc, 0.75, &still());
    assert_eq!(
        weight(&ch, &p, "eyeBlinkRight"),
        0.0,
        "open again after the blink"
    );
    fc.set_blink_enabled(false);
    let idle = IdleBehaviour {
        blink_interval: (0.3, 0.3),
        ..IdleBehaviour::default()
    };
    for i in 0..120 {
        let p = at(&ch, &mut fc, 1.0 + f64::from(i) / 60.0, &idle);
        assert_eq!(weight(&ch, &p, "eyeBlinkLeft"), 0.0);
    }
}

#[test]
fn morph_gaze_turns_each_eye_on_its_own() {
    let ch = head();
    let mut fc = FaceController::new(&ch, FaceDef::arkit_default(), 0.0, (1000.0, 1000.0)).unwrap();
    // Far to the character's left (+X): the left eye looks out, the right eye in.
    fc.look_at(Some(Vec3::new(10.0, 0.0, 1.0))).unwrap();
    let p = at(&ch, &mut fc, 0.0, &still());
    assert!(weight(&ch, &p, "eyeLookOutLeft") > 0.9 && weight(&ch, &p, "eyeLookInRight") > 0.9);
    assert_eq!(weight(&ch, &p, "eyeLookOutRight"), 0.0);
    assert_eq!(weight(&ch, &p, "eyeLookInLeft"), 0.0);
    // A point 10 cm in front between the eyes: they converge (each looks in).
    fc.look_at(Some(Vec3::new(0.0, 0.012, 0.2))).unwrap();
    let p = at(&ch, &mut fc, 1.0, &still());
    assert!(
        weight(&ch, &p, "eyeLookInLeft") > 0.1 && weight(&ch, &p, "eyeLookInRight") > 0.1,
        "{} {}",
        weight(&ch, &p, "eyeLookInLeft"),
        weight(&ch, &p, "eyeLookInRight")
    );
    let a = fc.eye_angles();
    assert!(a[0].yaw < 0.0 && a[1].yaw > 0.0, "{a:?}");
    // Speed limit: 600°/s, so in 1/60 s an eye turns at most 10°.
    fc.look_at(Some(Vec3::new(-10.0, 0.0, 1.0))).unwrap();
    let before = fc.eye_angles()[0].yaw;
    at(&ch, &mut fc, 1.0 + 1.0 / 60.0, &still());
    let after = fc.eye_angles()[0].yaw;
    assert!(
        (after - before).abs() <= 10f32.to_radians() + 1e-5,
        "{before} → {after}"
    );
    // Limits: far above is clamped to 25° of pitch.
    fc.look_at(Some(Vec3::new(0.0, 100.0, 0.1))).unwrap();
    for i in 0..60 {
        at(&ch, &mut fc, 2.0 + f64::from(i) / 60.0, &still());
    }
    assert!(
        (fc.eye_angles()[0].pitch + 25f32.to_radians()).abs() < 1e-5,
        "{:?}",
        fc.eye_angles()
    );
}

#[test]
fn joint_gaze_points_facecaps_eyes_at_the_target() {
    let ch = facecap();
    let mut fc = FaceController::new(&ch, FaceDef::arkit_default(), 0.0, (1000.0, 1000.0)).unwrap();
    let mut rest_pose = ch.rest_pose();
    let (mut l, mut w) = (Vec::new(), Vec::<Mat4>::new());
    ch.world_matrices(&rest_pose, &mut l, &mut w);
    let eye = ch
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("eyeLeft"))
        .unwrap();
    let center = w[eye].w_axis.truncate();
    // The eye's forward at rest is the character's +Z; a target 10° to the left and 5° down.
    let (yaw, pitch) = (10f32.to_radians(), 5f32.to_radians());
    let dir = Vec3::new(
        yaw.sin() * pitch.cos(),
        -pitch.sin(),
        yaw.cos() * pitch.cos(),
    );
    fc.look_at(Some(center + dir * 2.0)).unwrap();
    fc.update(&ch, 0.0, &still(), &w, &mut rest_pose);
    ch.world_matrices(&rest_pose, &mut l, &mut w);
    let rest_world = {
        let p = ch.rest_pose();
        let (mut l2, mut w2) = (Vec::new(), Vec::<Mat4>::new());
        ch.world_matrices(&p, &mut l2, &mut w2);
        w2[eye]
    };
    // The eye's world forward now: the rest forward rotated by how the eye turned.
    let turn = w[eye].to_scale_rotation_translation().1
        * rest_world.to_scale_rotation_translation().1.inverse();
    let fwd = turn * Vec3::Z;
    assert!(
        fwd.angle_between(dir) < 0.5f32.to_radians(),
        "forward {fwd} vs {dir}"
    );
}

#[test]
fn overrides_and_clamping() {
    let ch = head();
    let mut def = FaceDef::arkit_default();
    def.expressions[0].targets.push(("jawOpen".into(), 1.5));
    let mut fc = FaceController::new(&ch, def, 0.0, (1000.0, 1000.0)).unwrap();
    fc.set_expression("smile", 1.0).unwrap();
    at(&ch, &mut fc, 0.0, &still());
    let p = at(&ch, &mut fc, 1.0, &still());
    assert_eq!(
        weight(&ch, &p, "jawOpen"),
        1.0,
        "a driven target is clamped to [0, 1]"
    );
    fc.set_override("jawOpen", Some(0.3)).unwrap();
    let p = at(&ch, &mut fc, 1.1, &still());
    assert_eq!(weight(&ch, &p, "jawOpen"), 0.3);
    fc.set_override("jawOpen", None).unwrap();
    let p = at(&ch, &mut fc, 1.2, &still());
    assert_eq!(weight(&ch, &p, "jawOpen"), 1.0);
    assert!(fc.set_override("jawOpen", Some(f32::NAN)).is_err());
}

#[test]
fn state_hashes_repeat_exactly() {
    let ch = head();
    let run = || {
        let mut fc = FaceController::new(&ch, FaceDef::arkit_default(), 0.0, (2.0, 5.0)).unwrap();
        let idle = IdleBehaviour {
            blink_interval: (2.0, 5.0),
            wander_amplitude: 0.1,
            wander_period: 3.0,
            focus: None,
        };
        let mut hashes = Vec::new();
        for i in 0..300 {
            if i == 50 {
                fc.set_expression("surprise", 0.8).unwrap();
            }
            if i == 120 {
                fc.look_at(Some(Vec3::new(0.3, 0.1, 1.0))).unwrap();
            }
            let p = at(&ch, &mut fc, f64::from(i) / 30.0, &idle);
            hashes.push(state_hash(&p, Some(&fc)));
        }
        hashes
    };
    let a = run();
    assert_eq!(a, run());
    assert!(
        a.windows(2).filter(|w| w[0] != w[1]).count() > 100,
        "the face changes over time"
    );
}

#[test]
fn face_files_configure_everything_strictly() {
    let json = r#"{"format":"mien-face","version":1,
        "expressions":{"grin":{"mouthSmileLeft":1,"mouthSmileRight":1}},
        "expression_speed":10,
        "blink":{"duration":0.3,"close_fraction":0.5,"seed":42,"interval":[1,2]},
        "look":{"mode":"morphs","yaw_limit_deg":20,"max_speed_deg":300},
        "clamp":"all"}"#;
    let def = FaceDef::from_json(json, "f.json").unwrap();
    assert_eq!(def.expressions.len(), 1);
    assert_eq!(def.blink.interval, Some((1.0, 2.0)));
    assert!((def.look.yaw_limit - 20f32.to_radians()).abs() < 1e-6);
    for (bad, pointer) in [
        (
            r#"{"format":"mien-face","version":1,"blink":{"duration":-1}}"#,
            "/blink/duration",
        ),
        (
            r#"{"format":"mien-face","version":1,"blink":{"interval":[3,1]}}"#,
            "/blink/interval",
        ),
        (
            r#"{"format":"mien-face","version":1,"look":{"mode":"eyes"}}"#,
            "/look/mode",
        ),
        (
            r#"{"format":"mien-face","version":1,"look":{"wink":1}}"#,
            "wink",
        ),
        (r#"{"format":"mien-face","version":1,"clamp":5}"#, "/clamp"),
        (
            r#"{"format":"mien-face","version":1,"expression_speed":0}"#,
            "/expression_speed",
        ),
    ] {
        let e = FaceDef::from_json(bad, "f.json").unwrap_err().to_string();
        assert!(e.contains(pointer), "{bad}: {e}");
    }
}
