//! Real skeletons (issue 26 item 7): the knight's and CesiumMan's walks retargeted onto the Ready
//! Player Me avatar, Godette and the built-in body; the RPM idle onto the knight; the VRM
//! Animation clips onto Godette and the VRM 1.0 robot. Every bone report is checked (what was
//! mapped, what was left at rest, the scale), then each retargeted clip plays with foot
//! placement on a 10° slope: no ankle ever goes below the ground under it, and a foot stands on
//! it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::anim::ground::Ground;
use mien_core::anim::retarget::{Reference, RetargetDef, RetargetOptions};
use mien_runtime::retarget::{RetargetRequest, Retargeted, load_source, retarget};
use mien_runtime::{Asset, Device, FootPlacement, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

enum Target {
    File(&'static str),
    Body,
}

struct Case {
    what: &'static str,
    source: &'static str,
    clip: Option<&'static str>,
    map: Option<&'static str>,
    reference: Reference,
    target: Target,
    /// Target bones that must be mapped (by node name).
    mapped: &'static [&'static str],
    /// Fewest mapped bones.
    min_mapped: usize,
    /// A target bone that must be left at rest.
    left: Option<&'static str>,
    /// The hips scale's range.
    scale: (f64, f64),
}

fn cases() -> Vec<Case> {
    let legs = &[
        "Hips",
        "LeftUpLeg",
        "LeftLeg",
        "LeftFoot",
        "RightUpLeg",
        "RightLeg",
        "RightFoot",
    ];
    let body = &[
        "Hips",
        "LeftUpperLeg",
        "LeftLowerLeg",
        "LeftFoot",
        "RightUpperLeg",
        "RightLowerLeg",
        "RightFoot",
        "LeftUpperArm",
        "RightUpperArm",
        "Head",
    ];
    let godette = &[
        "pelvis_Armature",
        "thigh.l_Armature",
        "shin.l_Armature",
        "foot.l_Armature",
    ];
    vec![
        Case {
            what: "knight walk → RPM",
            source: "bodies/KnightCharacter.glb",
            clip: Some("HumanArmature|Walking"),
            map: None,
            reference: Reference::TPose,
            target: Target::File("avatars/rpm_male.glb"),
            mapped: legs,
            min_mapped: 21,
            left: Some("LeftHandThumb1"),
            scale: (0.40, 0.59),
        },
        Case {
            what: "knight walk → Godette",
            source: "bodies/KnightCharacter.glb",
            clip: Some("HumanArmature|Walking"),
            map: None,
            reference: Reference::TPose,
            target: Target::File("vrm/Godette_vrm_v4.vrm"),
            mapped: godette,
            min_mapped: 21,
            left: Some("brow1.l_Armature"),
            scale: (0.26, 0.38),
        },
        Case {
            what: "knight walk → built-in body",
            source: "bodies/KnightCharacter.glb",
            clip: Some("HumanArmature|Walking"),
            map: None,
            reference: Reference::TPose,
            target: Target::Body,
            mapped: body,
            min_mapped: 19,
            left: Some("Ponytail1"),
            scale: (0.37, 0.55),
        },
        Case {
            what: "CesiumMan walk → RPM",
            source: "khronos/CesiumMan/CesiumMan_chromedays.glb",
            clip: None,
            map: Some("docs/retarget/cesium_man.retarget.json"),
            reference: Reference::TPose,
            target: Target::File("avatars/rpm_male.glb"),
            mapped: legs,
            min_mapped: 19,
            left: Some("Spine1"),
            scale: (1.17, 1.76),
        },
        Case {
            what: "CesiumMan walk → Godette (the RPM map, by role)",
            source: "khronos/CesiumMan/CesiumMan_chromedays.glb",
            clip: None,
            map: Some("docs/retarget/cesium_man.retarget.json"),
            reference: Reference::TPose,
            target: Target::File("vrm/Godette_vrm_v4.vrm"),
            mapped: godette,
            min_mapped: 19,
            left: None,
            scale: (0.76, 1.14),
        },
        Case {
            what: "CesiumMan walk → built-in body (the RPM map, by role)",
            source: "khronos/CesiumMan/CesiumMan_chromedays.glb",
            clip: None,
            map: Some("docs/retarget/cesium_man.retarget.json"),
            reference: Reference::TPose,
            target: Target::Body,
            mapped: body,
            min_mapped: 19,
            left: Some("Ponytail1"),
            scale: (1.09, 1.63),
        },
        Case {
            what: "RPM idle → knight",
            source: "bodies/rpm_take2-idle.glb",
            clip: None,
            map: None,
            reference: Reference::TPose,
            target: Target::File("bodies/KnightCharacter.glb"),
            mapped: &["Torso", "UpperLeg.L", "LowerLeg.L", "Foot.L"],
            min_mapped: 15,
            left: None,
            scale: (1.56, 2.35),
        },
        Case {
            what: "test.vrma → Godette",
            source: "bodies/test.vrma",
            clip: None,
            map: None,
            reference: Reference::Rest,
            target: Target::File("vrm/Godette_vrm_v4.vrm"),
            mapped: godette,
            min_mapped: 45,
            left: Some("HairBall_Center"),
            scale: (0.59, 0.88),
        },
        Case {
            what: "hips_spine_twisting.vrma → debug_robot",
            source: "retarget/hips_spine_twisting.vrma",
            clip: None,
            map: None,
            reference: Reference::Rest,
            target: Target::File("retarget/debug_robot.vrm"),
            mapped: &[],
            min_mapped: 15,
            left: None,
            scale: (0.80, 1.20),
        },
    ]
}

fn run(c: &Case) -> (Retargeted, Asset) {
    let source = load_source(data(c.source)).unwrap_or_else(|e| panic!("{}: {e}", c.what));
    let target = match c.target {
        Target::File(f) => Asset::load(data(f)).unwrap(),
        Target::Body => Asset::builtin_body(),
    };
    let map = c.map.map(|m| {
        let p = repo(m);
        RetargetDef::from_json(
            &std::fs::read_to_string(&p).unwrap(),
            &p.display().to_string(),
        )
        .unwrap()
    });
    let req = RetargetRequest {
        clip: c.clip.map(str::to_string),
        map,
        options: RetargetOptions {
            source_reference: c.reference,
            target_reference: c.reference,
            strict: false,
        },
        ..Default::default()
    };
    let r = retarget(&source, &target, &req).unwrap_or_else(|e| panic!("{}: {e}", c.what));
    (r, target)
}

#[test]
fn every_bone_report_names_what_was_mapped_and_left() {
    let mut scales = Vec::new();
    for c in cases() {
        let (r, target) = run(&c);
        let rep = &r.report;
        let mapped: Vec<&str> = rep.mapped.iter().map(|m| m.target.as_str()).collect();
        scales.push((c.what, rep.scale));
        assert!(
            mapped.len() >= c.min_mapped,
            "{}: {} mapped: {mapped:?}",
            c.what,
            mapped.len()
        );
        for want in c.mapped {
            assert!(
                mapped.contains(want),
                "{}: {want} not mapped ({mapped:?})",
                c.what
            );
        }
        if let Some(left) = c.left {
            assert!(
                rep.unmapped_target.iter().any(|b| b == left),
                "{}: {left} not left at rest",
                c.what
            );
        }
        // One to one, and the report partitions the target's bones it names.
        let mut seen = mapped.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len(),
            mapped.len(),
            "{}: a target bone mapped twice",
            c.what
        );
        assert!(
            rep.unmapped_target
                .iter()
                .all(|b| !mapped.contains(&b.as_str())),
            "{}",
            c.what
        );
        // Only the hips carry translation.
        let translate: Vec<&str> = rep
            .mapped
            .iter()
            .filter(|m| m.translate)
            .map(|m| m.target.as_str())
            .collect();
        assert_eq!(translate.len(), 1, "{}: {translate:?}", c.what);
        {
            assert!(
                (c.scale.0..c.scale.1).contains(&rep.scale),
                "{}: scale {}",
                c.what,
                rep.scale
            );
        }
        // A map written with RPM names, read by role on another skeleton, says so.
        if c.map.is_some() && !matches!(c.target, Target::File("avatars/rpm_male.glb")) {
            assert!(
                rep.notes
                    .iter()
                    .any(|n| n.contains("has no node of that name")),
                "{}: {:?}",
                c.what,
                rep.notes
            );
        }
        let _ = target;
    }
    // The hips scale is the target's hip height over the source's: onto two targets, the ratio
    // of the scales is the ratio of the targets' hip heights, whatever the source.
    let get = |w: &str| scales.iter().find(|s| s.0 == w).unwrap().1;
    let knight = get("knight walk → built-in body") / get("knight walk → RPM");
    let cesium =
        get("CesiumMan walk → built-in body (the RPM map, by role)") / get("CesiumMan walk → RPM");
    assert!((knight - cesium).abs() < 1e-3, "{knight} vs {cesium}");
    // And the knight → RPM and RPM idle → knight scales are near reciprocal (the idle file's
    // skeleton is the avatar's within a few per cent).
    let round = get("knight walk → RPM") * get("RPM idle → knight");
    assert!((round - 1.0).abs() < 0.05, "{round}");
}

#[test]
fn retargeted_clips_keep_their_feet_on_a_10_degree_slope() {
    let slope = Ground::parse("slope:10").unwrap();
    for c in cases() {
        let (r, _) = run(&c);
        // The knight's feet are IK targets parented to its root, not to its shins: its legs are
        // not a chain two-bone IK can bend, and foot placement says so.
        if matches!(c.target, Target::File("bodies/KnightCharacter.glb")) {
            let e = mien_core::anim::foot::FootIkDef::humanoid(r.asset.character())
                .and_then(|d| mien_core::anim::foot::FootPlacer::new(&d, r.asset.character()))
                .unwrap_err()
                .to_string();
            assert!(e.contains("not one parent chain"), "{e}");
            continue;
        }
        let asset = Arc::new(r.asset.clone());
        let mut rt = Runtime::new(
            asset,
            &Device::Cpu,
            &RuntimeOptions {
                instances: 1,
                lift: None,
            },
        )
        .unwrap();
        {
            let mut inst = rt.instance_mut(0).unwrap();
            inst.play_clips(&[r.clip])
                .unwrap()
                .set_drive_timing(0.0, true)
                .unwrap()
                .set_foot_placement(FootPlacement::Humanoid)
                .unwrap_or_else(|e| panic!("{}: {e}", c.what))
                .set_ground(slope.clone())
                .unwrap();
        }
        let mut standing = 0;
        for k in 0..60 {
            rt.update(f64::from(k) / 30.0).unwrap();
            let rep = rt.instance(0).unwrap().body_report().clone();
            let foot = rep.foot.expect("foot placement ran");
            for (i, leg) in foot.legs.iter().enumerate() {
                let Some(g) = leg.ground_y else { continue };
                // Never through the slope: the ankle at least a few centimetres above it.
                assert!(
                    leg.ankle[1] > g + 0.01,
                    "{} frame {k} leg {i}: ankle {} on ground {g}",
                    c.what,
                    leg.ankle[1]
                );
                if leg.grounded && leg.ankle[1] < g + 0.2 {
                    standing += 1;
                }
            }
        }
        assert!(
            standing >= 30,
            "{}: a foot stood on the slope in {standing} leg-frames",
            c.what
        );
    }
}

/// Read by role only when not strict: the RPM-named map onto the built-in body in strict mode is
/// refused naming the first bone it lacks (and the role it would have read).
#[test]
fn a_map_read_by_role_is_refused_in_strict_mode() {
    let source = load_source(data("khronos/CesiumMan/CesiumMan_chromedays.glb")).unwrap();
    let p = repo("docs/retarget/cesium_man.retarget.json");
    let map = RetargetDef::from_json(
        &std::fs::read_to_string(&p).unwrap(),
        &p.display().to_string(),
    )
    .unwrap();
    let req = RetargetRequest {
        map: Some(map),
        options: RetargetOptions {
            strict: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let e = retarget(&source, &Asset::builtin_body(), &req)
        .unwrap_err()
        .chain_text();
    assert!(e.contains("no node named `Spine2`"), "{e}");
    assert!(
        e.contains("no node named `LeftArm`") && e.contains("LeftUpperArm"),
        "{e}"
    );
}
