//! The body step in the runtime (issue 26, items 2, 3 and 7): a walk retargeted from the knight
//! onto the Ready Player Me avatar, played by `Runtime::update` at 60 Hz with foot placement on a
//! 10° slope rising along the walk, keeps its feet on the slope (the animated walk sinks into it); Godette's hair sways under a head turn (joint
//! overrides) with spring bones on and is still with them off; a seek back is a cut; a linear
//! head and a character without spring bones are refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::Quat;
use mien_core::anim::ground::Ground;
use mien_runtime::retarget::{Reference, RetargetOptions, RetargetRequest, load_source, retarget};
use mien_runtime::{Asset, Device, FootPlacement, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn pose_only(n: u32) -> RuntimeOptions {
    RuntimeOptions {
        instances: n,
        lift: None,
    }
}

#[test]
fn a_retargeted_walk_keeps_its_feet_on_a_slope() {
    let knight = load_source(data("bodies/KnightCharacter.glb")).unwrap();
    let avatar = Asset::load(data("avatars/rpm_male.glb")).unwrap();
    let req = RetargetRequest {
        options: RetargetOptions {
            source_reference: Reference::TPose,
            target_reference: Reference::TPose,
            strict: false,
        },
        ..RetargetRequest::clip("HumanArmature|Walking")
    };
    let walk = retarget(&knight, &avatar, &req).unwrap();
    let asset = Arc::new(walk.asset);
    let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &pose_only(2)).unwrap();
    // Level with the animation's floor 30 cm behind the character, rising 10° along the walk.
    let slope = Ground::Slope {
        origin: [0.0, -0.3],
        height: 0.0,
        direction: [0.0, 1.0],
        degrees: 10.0,
    };
    for i in 0..2 {
        rt.instance_mut(i)
            .unwrap()
            .play_clips(&[walk.clip])
            .unwrap()
            .set_drive_timing(0.0, true)
            .unwrap();
    }
    // Instance 1 places its feet; instance 0 walks as animated.
    rt.instance_mut(1)
        .unwrap()
        .set_foot_placement(FootPlacement::Humanoid)
        .unwrap()
        .set_ground(slope.clone())
        .unwrap();
    let ch = asset.character();
    let foot = |n: &str| {
        ch.nodes
            .iter()
            .position(|x| x.name.as_deref() == Some(n))
            .unwrap()
    };
    let feet = [foot("LeftFoot"), foot("RightFoot")];
    let def = mien_core::anim::foot::FootIkDef::humanoid(ch).unwrap();
    let heights = [def.legs[0].ankle_height, def.legs[1].ankle_height];
    let tan = 10f64.to_radians().tan();
    let (mut low_placed, mut low_animated) = (f64::INFINITY, f64::INFINITY);
    for f in 0..180 {
        let t = f64::from(f) / 60.0;
        rt.update(t).unwrap();
        for (i, low) in [(0, &mut low_animated), (1, &mut low_placed)] {
            let pose = rt.instance(i).unwrap().pose().clone();
            let (mut s, mut w) = (Vec::new(), Vec::new());
            ch.world_matrices(&pose, &mut s, &mut w);
            if t >= 0.5 {
                for (k, &n) in feet.iter().enumerate() {
                    let p = w[n].w_axis;
                    *low = low.min(f64::from(p.y) - (f64::from(p.z) + 0.3) * tan - heights[k]);
                }
            }
        }
        let r = rt.instance(1).unwrap().body_report();
        assert!(
            r.foot.as_ref().unwrap().legs.iter().all(|l| l.grounded),
            "{r:?}"
        );
    }
    // The slope rises along the walk: the animated walk sinks its forward foot into it; placed,
    // every ankle stays at least its ankle height above it (less 2 cm of smoothing lag).
    assert!(
        low_animated < -0.02,
        "the slope should cut the animated walk ({low_animated})"
    );
    assert!(
        low_placed > -0.02,
        "a placed foot sank {low_placed} m into the slope"
    );
}

#[test]
fn godette_s_hair_sways_with_spring_bones_on() {
    let asset = Arc::new(Asset::load(data("vrm/Godette_vrm_v4.vrm")).unwrap());
    let ch = asset.character();
    let sb = ch.spring_bones.clone().unwrap();
    let tip = sb.joints.last().unwrap().node.index();
    let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &pose_only(2)).unwrap();
    rt.instance_mut(1).unwrap().set_spring_bones(true).unwrap();
    let mut apart = 0.0f64;
    for f in 0..120 {
        let t = f64::from(f) / 60.0;
        let a = 0.8 * (std::f64::consts::TAU * t).sin();
        for i in 0..2 {
            rt.instance_mut(i)
                .unwrap()
                .set_joint_overrides(&[("head_Armature".into(), Quat::from_rotation_y(a as f32))])
                .unwrap();
        }
        rt.update(t).unwrap();
        let r = rt.instance(1).unwrap().body_report();
        assert!(r.springs.is_some() && !r.cut);
        let q0 = rt.instance(0).unwrap().pose().locals[tip].rotation;
        let q1 = rt.instance(1).unwrap().pose().locals[tip].rotation;
        apart = apart.max(f64::from(q0.angle_between(q1)).to_degrees());
    }
    assert!(
        apart > 5.0,
        "the hair's last joint turned only {apart}° off its rigid pose"
    );
    // A seek back is a cut.
    rt.update(0.2).unwrap();
    assert!(rt.instance(1).unwrap().body_report().cut);
}

#[test]
fn body_steps_are_refused_where_they_cannot_run() {
    let facecap = Arc::new(Asset::load(data("facecap/facecap.glb")).unwrap());
    let mut rt = Runtime::new(Arc::clone(&facecap), &Device::Cpu, &pose_only(1)).unwrap();
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_spring_bones(true)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no spring bones"), "{e}");
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_foot_placement(FootPlacement::Humanoid)
        .err()
        .unwrap()
        .chain_text();
    assert!(e.contains("hips") || e.contains("Leg"), "{e}");
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_ground(Ground::Slope {
            origin: [0.0, 0.0],
            height: 0.0,
            direction: [1.0, 0.0],
            degrees: 95.0,
        })
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("degrees"), "{e}");
}
