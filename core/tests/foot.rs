//! Foot placement (issue 26 item 2, seed 003 "Foot placement"): hand-worked grounds (flat, a step
//! up, a step down, a 10° slope, a steep slope, none, a height field, a mesh), the legs' lengths
//! kept, the pelvis lowered with the lowest foot, feet tilted to the ground, stance locking (a
//! planted foot stays within 1 cm of its plant point through its stance), and the two-bone IK's
//! knee: in the plane of hip, target and pole, continuous as the target sweeps across the pole
//! direction, stable for a straight leg (the ozz-animation and Godot reports of these failures).

use glam::{DMat4, DQuat, DVec3, Quat, Vec3};
use mien_core::anim::foot::{FootIkDef, FootPlacer, two_bone};
use mien_core::anim::ground::Ground;
use mien_core::rig::{Character, Hierarchy, Node, NodeId, Pose, Transform};
use proptest::prelude::*;

fn skeleton(rows: &[(&str, Option<usize>, [f32; 3])]) -> Character {
    let mut nodes: Vec<Node> = rows
        .iter()
        .map(|(name, parent, t)| Node {
            name: Some((*name).to_string()),
            parent: parent.map(|p| NodeId(p as u32)),
            rest: Transform {
                translation: Vec3::from(*t),
                rotation: Quat::IDENTITY,
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
    let hierarchy = Hierarchy::new("legs", &nodes).unwrap();
    let ch = Character {
        source: "legs".into(),
        nodes,
        hierarchy,
        scene_roots: vec![NodeId(0)],
        ..Default::default()
    };
    ch.validate().unwrap();
    ch
}

/// Hips 1 m up; each leg 0.05 m down and 0.1 m out to the hip joint, 0.45 m thigh and 0.45 m shin
/// with the knee 3 cm forward (+Z), so the ankle stands 0.05 m above y = 0 (its ankle height).
fn legs() -> Character {
    skeleton(&[
        ("Root", None, [0.0, 0.0, 0.0]),
        ("Hips", Some(0), [0.0, 1.0, 0.0]),
        ("UpperLeg.L", Some(1), [0.1, -0.05, 0.0]),
        ("LowerLeg.L", Some(2), [0.0, -0.45, 0.03]),
        ("Foot.L", Some(3), [0.0, -0.45, -0.03]),
        ("UpperLeg.R", Some(1), [-0.1, -0.05, 0.0]),
        ("LowerLeg.R", Some(5), [0.0, -0.45, 0.03]),
        ("Foot.R", Some(6), [0.0, -0.45, -0.03]),
    ])
}

fn def(ch: &Character) -> FootIkDef {
    let mut d = FootIkDef::humanoid(ch).unwrap();
    for l in &mut d.legs {
        l.ankle_height = 0.05;
    }
    d
}

fn world(ch: &Character, pose: &Pose) -> Vec<DVec3> {
    let (mut s, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(pose, &mut s, &mut w);
    w.iter().map(|m| m.w_axis.truncate().as_dvec3()).collect()
}

/// Run `frames` updates at 60 Hz on the rest pose; the last pose and report.
fn settle(
    ch: &Character,
    d: &FootIkDef,
    ground: &Ground,
    frames: usize,
) -> (Pose, mien_core::anim::foot::FootReport) {
    let mut fp = FootPlacer::new(d, ch).unwrap();
    let mut last = None;
    for _ in 0..frames {
        let mut pose = ch.rest_pose();
        let r = fp
            .update(1.0 / 60.0, ch, &mut pose, DMat4::IDENTITY, ground)
            .unwrap();
        last = Some((pose, r));
    }
    last.unwrap()
}

fn lengths(ch: &Character, pose: &Pose) -> [f64; 4] {
    let w = world(ch, pose);
    [
        (w[3] - w[2]).length(),
        (w[4] - w[3]).length(),
        (w[6] - w[5]).length(),
        (w[7] - w[6]).length(),
    ]
}

#[test]
fn flat_ground_at_the_animation_s_height_changes_nothing() {
    let ch = legs();
    let (pose, r) = settle(&ch, &def(&ch), &Ground::Flat { height: 0.0 }, 10);
    let rest = world(&ch, &ch.rest_pose());
    let w = world(&ch, &pose);
    for i in 0..w.len() {
        assert!(
            (w[i] - rest[i]).length() < 1e-5,
            "node {i}: {:?} vs {:?}",
            w[i],
            rest[i]
        );
    }
    assert_eq!(r.pelvis_offset, 0.0);
    assert!(
        r.legs
            .iter()
            .all(|l| l.grounded && !l.planted || l.grounded)
    );
}

/// A 10 cm step under the left foot only: the left ankle rises 10 cm, the right stays, the pelvis
/// stays; a 10 cm step down under the right foot: the pelvis and the right ankle go down 10 cm
/// and the left ankle stays where it was (its knee bends more). Lengths never change.
#[test]
fn steps_up_and_down_move_the_foot_and_the_pelvis_by_hand() {
    let ch = legs();
    let d = def(&ch);
    let rest = world(&ch, &ch.rest_pose());
    let up = Ground::Step {
        edge: [0.05, 0.0],
        direction: [1.0, 0.0],
        low: 0.0,
        high: 0.1,
    };
    let (pose, r) = settle(&ch, &d, &up, 240);
    let w = world(&ch, &pose);
    assert!(
        (w[4].y - (rest[4].y + 0.1)).abs() < 1e-4,
        "left ankle {}",
        w[4].y
    );
    assert!((w[7].y - rest[7].y).abs() < 1e-4, "right ankle {}", w[7].y);
    assert!(r.pelvis_offset.abs() < 1e-9);
    assert!((r.legs[0].offset - 0.1).abs() < 1e-4);
    let down = Ground::Step {
        edge: [-0.05, 0.0],
        direction: [1.0, 0.0],
        low: -0.1,
        high: 0.0,
    };
    let (pose, r) = settle(&ch, &d, &down, 240);
    let w = world(&ch, &pose);
    assert!(
        (r.pelvis_offset + 0.1).abs() < 1e-4,
        "pelvis {}",
        r.pelvis_offset
    );
    assert!((w[1].y - 0.9).abs() < 1e-4, "hips {}", w[1].y);
    assert!(
        (w[7].y - (rest[7].y - 0.1)).abs() < 1e-4,
        "right ankle {}",
        w[7].y
    );
    assert!((w[4] - rest[4]).length() < 1e-4, "left ankle {:?}", w[4]);
    for (a, b) in lengths(&ch, &pose).iter().zip([0.451, 0.451, 0.451, 0.451]) {
        let want = (0.45f64 * 0.45 + 0.03 * 0.03).sqrt();
        assert!((a - want).abs() < 1e-5, "{a} vs {want} ({b})");
    }
}

/// A 10° slope rising toward +X: each ankle stands its ankle height above the slope under it (the
/// left higher by 0.2 · tan 10°), the feet tilt by 10° about the forward axis; steeper than 45°
/// is ignored and reported, as is no ground.
#[test]
fn a_slope_tilts_the_feet_and_a_steep_one_is_ignored() {
    let ch = legs();
    let d = def(&ch);
    let slope = Ground::Slope {
        origin: [0.0, 0.0],
        height: 0.0,
        direction: [1.0, 0.0],
        degrees: 10.0,
    };
    let (pose, r) = settle(&ch, &d, &slope, 300);
    let w = world(&ch, &pose);
    let tan = 10f64.to_radians().tan();
    assert!(
        (w[4].y - (0.05 + w[4].x * tan)).abs() < 2e-3,
        "left {:?}",
        w[4]
    );
    assert!(
        (w[7].y - (0.05 + w[7].x * tan)).abs() < 2e-3,
        "right {:?}",
        w[7]
    );
    for l in &r.legs {
        assert!(
            l.grounded && (l.slope_deg.unwrap() - 10.0).abs() < 1e-9,
            "{l:?}"
        );
    }
    // The left foot's world rotation: 10° about +Z (the slope's normal leans toward −X).
    let (mut s, mut m) = (Vec::new(), Vec::new());
    ch.world_matrices(&pose, &mut s, &mut m);
    let (_, q, _) = m[4].to_scale_rotation_translation();
    let want = Quat::from_rotation_z(10f32.to_radians());
    assert!(q.dot(want).abs() > 1.0 - 1e-5, "{q:?}");

    let steep = Ground::Slope {
        origin: [0.0, 0.0],
        height: 0.0,
        direction: [1.0, 0.0],
        degrees: 60.0,
    };
    let (pose, r) = settle(&ch, &d, &steep, 10);
    assert!(
        r.legs
            .iter()
            .all(|l| !l.grounded && l.ignored.as_deref().unwrap().starts_with("steep")),
        "{r:?}"
    );
    let rest = world(&ch, &ch.rest_pose());
    assert!((world(&ch, &pose)[4] - rest[4]).length() < 1e-5);
    let (_, r) = settle(&ch, &d, &Ground::None, 3);
    assert!(
        r.legs
            .iter()
            .all(|l| l.ignored.as_deref() == Some("no ground"))
    );
}

/// A height field and a triangle mesh that both are the plane y = 0.2 + 0.1·x give the same
/// ankles as that slope.
#[test]
fn height_fields_and_meshes_agree_with_the_plane_they_sample() {
    let ch = legs();
    let d = def(&ch);
    let plane = |x: f64| 0.2 + 0.1 * x;
    let field = Ground::HeightField {
        origin: [-2.0, -2.0],
        cell: 0.5,
        cols: 9,
        rows: 9,
        heights: (0..81)
            .map(|k| plane(-2.0 + 0.5 * f64::from(k % 9)) as f32)
            .collect(),
    };
    let p = |x: f64, z: f64| DVec3::new(x, plane(x), z);
    let mesh = Ground::Mesh {
        triangles: vec![
            [p(-2.0, -2.0), p(2.0, -2.0), p(2.0, 2.0)],
            [p(-2.0, -2.0), p(2.0, 2.0), p(-2.0, 2.0)],
        ],
    };
    let slope = Ground::Slope {
        origin: [0.0, 0.0],
        height: 0.2,
        direction: [1.0, 0.0],
        degrees: 0.1f64.atan().to_degrees(),
    };
    let want = world(&ch, &settle(&ch, &d, &slope, 200).0);
    for g in [field, mesh] {
        g.check().unwrap();
        let got = world(&ch, &settle(&ch, &d, &g, 200).0);
        for i in 0..got.len() {
            assert!((got[i] - want[i]).length() < 1e-4, "{g:?}: node {i}");
        }
    }
}

/// The hips glide forward at 0.05 m/s (a foot slower than the plant speed): each foot is planted
/// and stays within 1 cm of its plant point until the pull passes 8 cm, then is released.
#[test]
fn a_planted_foot_stays_within_a_centimetre_through_its_stance() {
    let ch = legs();
    let d = def(&ch);
    let mut fp = FootPlacer::new(&d, &ch).unwrap();
    let g = Ground::Flat { height: 0.0 };
    let (mut plant, mut released, mut worst) = (None, false, 0.0f64);
    for f in 0..180 {
        let t = f64::from(f) / 60.0;
        let mut pose = ch.rest_pose();
        pose.locals[1].translation.z = (0.05 * t) as f32;
        let r = fp
            .update(1.0 / 60.0, &ch, &mut pose, DMat4::IDENTITY, &g)
            .unwrap();
        let ankle = DVec3::from_array(r.legs[0].ankle);
        match (r.legs[0].planted, plant) {
            (true, None) => plant = Some(ankle),
            (true, Some(p)) => worst = worst.max((ankle - p).length()),
            (false, Some(_)) => {
                released = true;
                plant = None;
            }
            (false, None) => {}
        }
    }
    assert!(released, "the pull past 8 cm releases the foot");
    assert!(worst < 0.01, "a planted foot slid {worst} m");
    assert!(worst > 0.0 || released);
}

/// A definition is refused naming each problem; a leg whose nodes are not a chain is refused.
#[test]
fn bad_definitions_are_refused() {
    let e = FootIkDef::from_json(
        r#"{"format":"mien-foot-ik","version":1,"pelvis":"Hips","legs":[],"max_slope_deg":95,"smooth":1}"#,
        "f.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("f.json") && e.contains("smooth"), "{e}");
    let e = FootIkDef::from_json(
        r#"{"format":"mien-foot-ik","version":1,"pelvis":"Hips","legs":[],"max_slope_deg":95,
            "stance":{"plant_speed":1,"release_speed":0.5}}"#,
        "f.json",
    )
    .unwrap_err()
    .to_string();
    for needle in ["/legs", "/max_slope_deg", "/stance"] {
        assert!(e.contains(needle), "{needle}: {e}");
    }
    let ch = legs();
    let mut d = def(&ch);
    d.legs[0].knee = "Kneee".into();
    d.legs[1].ankle = "UpperLeg.L".into();
    let e = FootPlacer::new(&d, &ch).unwrap_err().to_string();
    assert!(e.contains("`Kneee`"), "{e}");
    let mut d = def(&ch);
    d.legs[1].ankle = "UpperLeg.L".into();
    let e = FootPlacer::new(&d, &ch).unwrap_err().to_string();
    assert!(e.contains("legs[1]") && e.contains("parent chain"), "{e}");
    let mut fp = FootPlacer::new(&def(&ch), &ch).unwrap();
    let mut pose = ch.rest_pose();
    assert!(
        fp.update(f64::NAN, &ch, &mut pose, DMat4::IDENTITY, &Ground::None)
            .is_err()
    );
    assert!(
        Ground::Slope {
            origin: [0.0, 0.0],
            height: 0.0,
            direction: [0.0, 0.0],
            degrees: 5.0
        }
        .check()
        .is_err()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// For any bent leg and any reachable target: the ankle reaches it, both lengths are kept, and
    /// the knee lies in the plane of hip, target and the animated pole, on the pole's side.
    #[test]
    fn two_bone_ik_reaches_keeps_lengths_and_its_plane(
        bend in 0.05f64..1.2,
        tx in -0.6f64..0.6, ty in -0.85f64..-0.2, tz in -0.6f64..0.6,
    ) {
        let h = DVec3::new(0.0, 1.0, 0.0);
        let k = h + DVec3::new(0.0, -0.45 * bend.cos(), 0.45 * bend.sin());
        let a = k + DVec3::new(0.0, -0.45, 0.0);
        let target = h + DVec3::new(tx, ty, tz);
        prop_assume!((target - h).length() < 0.89 && (target - h).length() > 0.05);
        let ik = two_bone(h, k, a, target, DVec3::Z).unwrap();
        prop_assert!((ik.ankle - target).length() < 1e-6);
        prop_assert!(((ik.knee - h).length() - 0.45).abs() < 1e-9);
        prop_assert!(((ik.ankle - ik.knee).length() - 0.45).abs() < 1e-6);
        // The turns carry the old bones onto the new ones.
        let k_turned = h + ik.hip_turn * (k - h);
        prop_assert!((k_turned - ik.knee).length() < 1e-6);
        let a_turned = ik.knee + ik.knee_turn * (ik.hip_turn * (a - k));
        prop_assert!((a_turned - target).length() < 1e-6);
        // In the plane of hip, target and pole (the animated knee's side).
        let axis = (target - h).normalize();
        let off = (k - h) - ((a - h).normalize()) * (k - h).dot((a - h).normalize());
        let pole = (off - axis * off.dot(axis)).normalize();
        let n = axis.cross(pole).normalize();
        prop_assert!((ik.knee - h).dot(n).abs() < 1e-9);
        prop_assert!((ik.knee - h).dot(pole) >= 0.0);
    }
}

/// The target sweeps from behind the hip to in front of it (across the pole direction, +Z): the
/// knee moves continuously (under 3° of bend change per 1 mm step), never flips to the back, and
/// with the target beyond reach the leg is straight and steady (no NaN, no jitter).
#[test]
fn the_knee_never_flips_as_the_target_sweeps_across_the_pole() {
    let h = DVec3::new(0.0, 1.0, 0.0);
    let mut k = h + DVec3::new(0.0, -0.44, 0.09);
    let mut a = h + DVec3::new(0.0, -0.88, 0.0);
    let mut prev: Option<DVec3> = None;
    for i in -400..=400 {
        let z = f64::from(i) * 0.001;
        let target = h + DVec3::new(0.0, -0.7, z);
        let ik = two_bone(h, k, a, target, DVec3::Z).unwrap();
        // The knee stays in front of the hip–target line.
        let axis = (target - h).normalize();
        let side = (ik.knee - h) - axis * (ik.knee - h).dot(axis);
        let forward = axis.cross(DVec3::X);
        assert!(side.dot(forward) > 0.0, "z {z}: knee behind the line");
        if let Some(p) = prev {
            let ang = ((p - h).normalize().dot((ik.knee - h).normalize()))
                .clamp(-1.0, 1.0)
                .acos();
            assert!(
                ang.to_degrees() < 3.0,
                "z {z}: the knee jumped {}°",
                ang.to_degrees()
            );
        }
        prev = Some(ik.knee);
        // Feed the solution back as the next animated pose (as a frame loop does).
        k = ik.knee;
        a = ik.ankle;
    }
    // Out of reach: straight, repeatable.
    let far = h + DVec3::new(0.0, -2.0, 0.1);
    let a1 = two_bone(h, k, a, far, DVec3::Z).unwrap();
    let a2 = two_bone(h, a1.knee, a1.ankle, far, DVec3::Z).unwrap();
    assert!(a1.knee.is_finite() && (a1.knee - a2.knee).length() < 1e-6);
    let reach = (k - h).length() + (a - k).length();
    assert!(((a1.ankle - h).length() - reach).abs() < 1e-6);
    // A straight animated leg bends toward the hint.
    let ks = h + DVec3::new(0.0, -0.45, 0.0);
    let as_ = h + DVec3::new(0.0, -0.9, 0.0);
    let b = two_bone(h, ks, as_, h + DVec3::new(0.0, -0.7, 0.0), DVec3::Z).unwrap();
    assert!(b.knee.z > 0.1, "{:?}", b.knee);
    let _ = DQuat::IDENTITY;
}

/// Real skeletons on a 10° slope: the knight's walk retargeted onto the Ready Player Me avatar and
/// onto Godette (T-pose references), placed every 60 Hz frame on a slope rising toward the
/// character's left. After the first half second every grounded foot stands at least its ankle
/// height (less 2 cm of smoothing lag) above the slope under it, the legs keep their lengths, and
/// a planted foot slides under 1 cm.
#[test]
fn retargeted_walks_keep_their_feet_on_a_slope() {
    use mien_core::anim::retarget::{Reference, RetargetDef, RetargetOptions, Retargeter};
    use mien_core::io::gltf::import_gltf;
    let data = |r: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data")
            .join(r)
    };
    let knight = import_gltf(&data("bodies/KnightCharacter.glb")).unwrap();
    let walk = knight.find_clip("HumanArmature|Walking").unwrap();
    let slope = Ground::Slope {
        origin: [0.0, 0.0],
        height: 0.0,
        direction: [1.0, 0.0],
        degrees: 10.0,
    };
    for target in ["avatars/rpm_male.glb", "vrm/Godette_vrm_v4.vrm"] {
        let ch = import_gltf(&data(target)).unwrap();
        let o = RetargetOptions {
            source_reference: Reference::TPose,
            target_reference: Reference::TPose,
            strict: false,
        };
        let rt =
            Retargeter::new(&RetargetDef::auto(&knight, &ch).unwrap(), &knight, &ch, &o).unwrap();
        let d = FootIkDef::humanoid(&ch).unwrap();
        let mut fp = FootPlacer::new(&d, &ch).unwrap();
        let node = |n: &str| {
            ch.nodes
                .iter()
                .position(|x| x.name.as_deref() == Some(n))
                .unwrap()
        };
        let legs: Vec<[usize; 3]> = d
            .legs
            .iter()
            .map(|l| [node(&l.hip), node(&l.knee), node(&l.ankle)])
            .collect();
        let rest = world(&ch, &ch.rest_pose());
        let len = |w: &[DVec3], l: &[usize; 3]| {
            ((w[l[1]] - w[l[0]]).length(), (w[l[2]] - w[l[1]]).length())
        };
        let end = knight.clips[walk.index()].end();
        let (mut plants, mut worst_slide, mut worst_low, mut grounded) =
            (vec![None::<DVec3>; 2], 0.0f64, f64::INFINITY, 0);
        let mut src = knight.rest_pose();
        let mut pose = ch.rest_pose();
        for f in 0..(end * 60.0 * 2.0) as usize {
            let t = (f as f64 / 60.0) % end;
            src.clone_from(&knight.rest_pose());
            knight.apply_clip(walk, t, &mut src);
            pose.locals = rt.retarget_locals(&knight, &src.locals);
            let r = fp
                .update(1.0 / 60.0, &ch, &mut pose, DMat4::IDENTITY, &slope)
                .unwrap();
            let w = world(&ch, &pose);
            for (k, l) in legs.iter().enumerate() {
                let (a, b) = len(&w, l);
                let (ra, rb) = len(&rest, l);
                assert!(
                    (a - ra).abs() < 1e-4 && (b - rb).abs() < 1e-4,
                    "{target}: leg {k} lengths"
                );
                let lr = &r.legs[k];
                let ankle = DVec3::from_array(lr.ankle);
                if f >= 30 && lr.grounded {
                    grounded += 1;
                    let ground = ankle.x * 10f64.to_radians().tan();
                    worst_low = worst_low.min(ankle.y - ground - d.legs[k].ankle_height);
                }
                match (lr.planted, plants[k]) {
                    (true, None) => plants[k] = Some(ankle),
                    (true, Some(p)) => {
                        let flat = DVec3::new(ankle.x - p.x, 0.0, ankle.z - p.z);
                        worst_slide = worst_slide.max(flat.length());
                    }
                    (false, _) => plants[k] = None,
                }
            }
        }
        assert!(grounded > 60, "{target}: {grounded} grounded foot frames");
        assert!(
            worst_low > -0.02,
            "{target}: a foot sank {worst_low} m below its ankle height"
        );
        assert!(
            worst_slide < 0.01,
            "{target}: a planted foot slid {worst_slide} m"
        );
    }
}

/// A hand-made walk cycle of 1 s on one ankle: stance from z = +0.3 to −0.3 m at 5 cm height over
/// 0.6 s (1 m/s backward), then a swing lifted to 15 cm back to the front. The stride speed is
/// 0.6 m / 0.6 s = 1 m/s (the swing's first and last samples inside the 2 cm band move forward,
/// and the median ignores them); a clip whose ankle stands still measures 0; no clip, `None`.
#[test]
fn stride_speed_is_the_stance_feet_backward_speed() {
    use mien_core::anim::clip::{Channel, Clip, Interpolation, Property, Sampler};
    use mien_core::anim::gait::stride_speed;
    let mut ch = skeleton(&[
        ("Root", None, [0.0, 0.0, 0.0]),
        ("Foot.L", Some(0), [0.1, 0.05, 0.3]),
    ]);
    let keys = |values: Vec<f32>| Clip {
        name: Some("walk".into()),
        channels: vec![Channel {
            node: NodeId(1),
            property: Property::Translation,
            sampler: Sampler::new(
                "t",
                "c",
                Interpolation::Linear,
                vec![0.0, 0.6, 0.8, 1.0],
                values,
                3,
            )
            .unwrap(),
        }],
    };
    ch.clips.push(keys(vec![
        0.1, 0.05, 0.3, 0.1, 0.05, -0.3, 0.1, 0.15, 0.0, 0.1, 0.05, 0.3,
    ]));
    ch.clips.push(keys(vec![0.1, 0.05, 0.3].repeat(4)));
    let foot = [NodeId(1)];
    let v = stride_speed(&ch, mien_core::rig::ClipId(0), &foot, DVec3::Z).unwrap();
    assert!((v - 1.0).abs() < 1e-4, "{v}");
    // Measured along −Z (a VRM 0.x forward) the same clip walks backward: no positive speed.
    let back = stride_speed(&ch, mien_core::rig::ClipId(0), &foot, -DVec3::Z).unwrap();
    assert_eq!(back, 0.0);
    let still = stride_speed(&ch, mien_core::rig::ClipId(1), &foot, DVec3::Z).unwrap();
    assert_eq!(still, 0.0);
    assert!(stride_speed(&ch, mien_core::rig::ClipId(2), &foot, DVec3::Z).is_none());
}
