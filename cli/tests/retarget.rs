//! `mien retarget` as a user meets it (issue 26, items 1 and 7): the knight's walk, CesiumMan's
//! walk (through the shipped map) and a VRM Animation baked onto real avatars, each baked file
//! verified and its keys read back; an identity VRMA leaves the robot at rest; a map is refused
//! naming every problem with nothing written; the schema accepts what the reader accepts.

mod common;

use std::path::Path;

use common::{data, mien};
use serde_json::{Value, json};

fn glb_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + jl]).unwrap()
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
        .display()
        .to_string()
}

/// Walks onto avatars: each bake verifies, carries one animation with a rotation channel per
/// mapped bone and one translation (the hips), and the report names what was left out.
#[test]
fn walks_and_vrma_clips_bake_onto_real_avatars() {
    let dir = tempfile::tempdir().unwrap();
    let rpm = data("avatars/rpm_male.glb");
    let godette = data("vrm/Godette_vrm_v4.vrm");
    let knight = data("bodies/KnightCharacter.glb");
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let vrma = data("bodies/test.vrma");
    let map = repo("docs/retarget/cesium_man.retarget.json");
    // (source arguments, target, output, bones mapped, a target bone left at rest, rotation
    // channels at least, translation channels): test.vrma turns only the right upper arm.
    let cases: Vec<(Vec<String>, &Path, &str, usize, &str, usize, usize)> = vec![
        (
            vec![
                knight.display().to_string(),
                "--clip".into(),
                "HumanArmature|Walking".into(),
                "--reference".into(),
                "t-pose".into(),
            ],
            &rpm,
            "walk.glb",
            21,
            "LeftHandThumb1",
            15,
            1,
        ),
        (
            vec![
                cesium.display().to_string(),
                "--map".into(),
                map.clone(),
                "--reference".into(),
                "t-pose".into(),
            ],
            &rpm,
            "cesium.glb",
            19,
            "Spine1",
            15,
            1,
        ),
        (
            vec![vrma.display().to_string()],
            &godette,
            "test.vrm",
            // Godette has no ring fingers (its hand has three).
            45,
            "HairBall_Center",
            1,
            0,
        ),
        (
            vec![
                knight.display().to_string(),
                "--clip".into(),
                "HumanArmature|Walking".into(),
            ],
            &godette,
            "knight-godette.vrm",
            21,
            "brow1.l_Armature",
            15,
            1,
        ),
    ];
    for (src_args, target, out, mapped, left, rot_min, translations) in cases {
        let out = dir.path().join(out);
        let report = dir.path().join("report.json");
        let mut args: Vec<String> = vec!["retarget".into()];
        args.extend(src_args);
        args.extend([
            "--to".into(),
            target.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--report".into(),
            report.display().to_string(),
        ]);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = mien(&a);
        assert!(r.ok(), "{a:?}: {}", r.stderr);
        assert!(
            r.stdout.contains(&format!("{mapped} bones mapped")),
            "{}",
            r.stdout
        );
        let rep: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(rep["mapped"].as_array().unwrap().len(), mapped);
        assert!(
            rep["unmapped_target"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b == left),
            "{left} not in {}",
            rep["unmapped_target"]
        );
        let v = mien(&["bake", "--verify", out.to_str().unwrap()]);
        assert!(v.ok(), "{}", v.stderr);
        let j = glb_json(&out);
        let anim = j["animations"].as_array().unwrap().last().unwrap();
        let chans = anim["channels"].as_array().unwrap();
        let rot = chans
            .iter()
            .filter(|c| c["target"]["path"] == "rotation")
            .count();
        let tr = chans
            .iter()
            .filter(|c| c["target"]["path"] == "translation")
            .count();
        // The runtime bake keys every node the take moves: mapped bones that leave their rest
        // (one that stays at rest through the whole take is not keyed), the hips translated.
        assert!(
            rot <= mapped && rot >= rot_min,
            "{rot} rotation channels of {mapped}"
        );
        assert_eq!(tr, translations, "translation channels");
        assert_eq!(anim["extras"]["mien"]["take"]["kind"], "retarget");
    }
}

/// `retarget/nop.vrma` holds every humanoid bone at rest: its bake onto the VRM 1.0 robot moves
/// nothing, which a bake refuses (a take that moves nothing is never an empty animation).
#[test]
fn an_identity_clip_moves_nothing_and_is_refused_as_a_still_take() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nop.vrm");
    let r = mien(&[
        "retarget",
        data("retarget/nop.vrma").to_str().unwrap(),
        "--to",
        data("retarget/debug_robot.vrm").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !r.ok() && r.stderr.contains("nothing to bake") && r.stderr.contains("nop.vrma"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(!out.exists());
}

/// Bad maps and flags: every problem named, nothing written.
#[test]
fn bad_maps_and_flags_are_refused_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.glb");
    let map = dir.path().join("map.json");
    std::fs::write(
        &map,
        json!({"format": "mien-retarget", "version": 1, "bones": [
            {"source": "Hipz", "target": "Hips", "translate": true},
            {"source": "UpperLeg.L", "target": "LeftUpperLegg"}
        ]})
        .to_string(),
    )
    .unwrap();
    let knight = data("bodies/KnightCharacter.glb");
    let rpm = data("avatars/rpm_male.glb");
    let base = [
        "retarget",
        knight.to_str().unwrap(),
        "--to",
        rpm.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let r = mien(&[&base[..], &["--map", map.to_str().unwrap()]].concat());
    assert!(
        !r.ok()
            && r.stderr.contains("`Hipz`")
            && r.stderr.contains("`LeftUpperLegg`")
            && r.stderr.contains("near: LeftUpLeg"),
        "{}",
        r.stderr
    );
    // A typo is suggested its near name.
    std::fs::write(
        &map,
        json!({"format": "mien-retarget", "version": 1, "bones": [
            {"source": "Hips", "target": "Hipps", "translate": true}
        ]})
        .to_string(),
    )
    .unwrap();
    let r = mien(&[&base[..], &["--map", map.to_str().unwrap()]].concat());
    assert!(!r.ok() && r.stderr.contains("near: Hips"), "{}", r.stderr);
    std::fs::write(
        &map,
        r#"{"format":"mien-retarget","version":1,"bones":[],"extra":1}"#,
    )
    .unwrap();
    let r = mien(&[&base[..], &["--map", map.to_str().unwrap()]].concat());
    assert!(!r.ok() && r.stderr.contains("extra"), "{}", r.stderr);
    let r = mien(&[&base[..], &["--fps", "500"]].concat());
    assert!(!r.ok() && r.stderr.contains("--fps 500"), "{}", r.stderr);
    let r = mien(&[&base[..], &["--clip", "Dancing"]].concat());
    assert!(
        !r.ok() && r.stderr.contains("HumanArmature|Walking"),
        "{}",
        r.stderr
    );
    // A clip frame as the source's reference: the walk's own first frame makes that frame the
    // neutral, so the bake still verifies; a bad frame is refused naming the flag.
    let ok_out = dir.path().join("framed.glb");
    let r = mien(&[
        "retarget",
        knight.to_str().unwrap(),
        "--clip",
        "HumanArmature|Walking",
        "--source-frame",
        "HumanArmature|Idle@0",
        "--to",
        rpm.to_str().unwrap(),
        "--out",
        ok_out.to_str().unwrap(),
    ]);
    assert!(
        r.ok() && r.stdout.contains("at 0 s reference"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    for bad in [
        "Idle",
        "HumanArmature|Idle@x",
        "Nope@0",
        "HumanArmature|Idle@999",
    ] {
        let r = mien(&[&base[..], &["--source-frame", bad]].concat());
        assert!(
            !r.ok() && (r.stderr.contains("--source-frame") || r.stderr.contains("reference")),
            "{bad}: {}",
            r.stderr
        );
    }
    // An output into a missing folder is refused before anything is written.
    let r = mien(
        &[
            &base[..],
            &["--report", dir.path().join("no/r.json").to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(
        !r.ok() && r.stderr.contains("does not exist"),
        "{}",
        r.stderr
    );
    assert!(
        !out.exists(),
        "the bake was written although the report could not be"
    );
    // The knight onto itself: its foot IK rig's translations are not carried, and the report
    // says so.
    let self_out = dir.path().join("self.glb");
    let r = mien(&[
        "retarget",
        knight.to_str().unwrap(),
        "--clip",
        "HumanArmature|Walking",
        "--to",
        knight.to_str().unwrap(),
        "--out",
        self_out.to_str().unwrap(),
    ]);
    assert!(
        r.ok() && r.stdout.contains("does not carry") && r.stdout.contains("Foot.L (translation)"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let r = mien(&[&base[..], &["--strict"]].concat());
    assert!(
        !r.ok() && r.stderr.contains("unmapped bones"),
        "{}",
        r.stderr
    );
    let r = mien(&[
        "retarget",
        knight.to_str().unwrap(),
        "--to",
        rpm.to_str().unwrap(),
        "--out",
        knight.to_str().unwrap(),
    ]);
    assert!(!r.ok() && r.stderr.contains("also SOURCE"), "{}", r.stderr);
    assert!(!out.exists());
}

/// `docs/schemas/retarget.schema.json` accepts what `RetargetDef::from_json` accepts and refuses
/// what it refuses (uniqueness is the reader's alone).
#[test]
fn the_retarget_schema_agrees_with_the_reader() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo("docs/schemas/retarget.schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let shipped: Value = serde_json::from_slice(
        &std::fs::read(repo("docs/retarget/cesium_man.retarget.json")).unwrap(),
    )
    .unwrap();
    let b = json!([{"source": "a", "target": "b", "translate": true}]);
    for (doc, ok) in [
        (shipped, true),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": b}),
            true,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": b, "scale": 0.5, "model_rotation": [0, 1, 0, 0], "description": "x"}),
            true,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": []}),
            false,
        ),
        (
            json!({"format": "mien-retarget", "version": 2, "bones": b}),
            false,
        ),
        (
            json!({"format": "retarget", "version": 1, "bones": b}),
            false,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": b, "scale": 0}),
            false,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": b, "model_rotation": [0, 0, 1]}),
            false,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": [{"source": "a"}]}),
            false,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": [{"source": "a", "target": "b", "weight": 1}]}),
            false,
        ),
        (
            json!({"format": "mien-retarget", "version": 1, "bones": [{"source": "", "target": "b"}]}),
            false,
        ),
    ] {
        let reader =
            mien::core::anim::retarget::RetargetDef::from_json(&doc.to_string(), "d").is_ok();
        assert_eq!(v.is_valid(&doc), ok, "schema on {doc}");
        assert_eq!(reader, ok, "reader on {doc}");
    }
}

/// `mien animate` plays a retargeted clip with its feet placed on a slope and reports it; spring
/// bones run by default on an avatar that has them; bad body flags are refused.
#[test]
fn animate_plays_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("walk");
    let r = mien(&[
        "animate",
        "--quiet",
        "--character",
        data("avatars/rpm_male.glb").to_str().unwrap(),
        "--retarget",
        data("bodies/KnightCharacter.glb").to_str().unwrap(),
        "--retarget-clip",
        "HumanArmature|Walking",
        "--reference",
        "t-pose",
        "--foot-ik",
        "auto",
        "--ground",
        "slope:10",
        "--frames",
        "12",
        "--ply",
        "none",
        "--sheet",
        "2",
        "--gaussians",
        "5000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let rep: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        rep["body"]["retarget"]["mapped"].as_array().unwrap().len(),
        21,
        "{}",
        rep["body"]
    );
    assert_eq!(rep["body"]["foot_ik"], "auto");
    assert!(rep["body"]["ground"].as_str().unwrap().contains("Slope"));
    assert!(rep["body"].get("spring_bones").is_none());

    let out = dir.path().join("godette");
    let r = mien(&[
        "animate",
        "--quiet",
        "--character",
        data("vrm/Godette_vrm_v4.vrm").to_str().unwrap(),
        "--frames",
        "3",
        "--ply",
        "none",
        "--sheet",
        "0",
        "--gaussians",
        "2000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let rep: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        rep["body"]["spring_bones"]["source"], "VRM.secondaryAnimation",
        "{}",
        rep["body"]
    );

    let facecap = data("facecap/facecap.glb");
    for (extra, needle) in [
        (vec!["--springs", "on"], "no spring bones"),
        (vec!["--foot-ik", "auto"], "foot"),
        (
            vec!["--foot-ik", "auto", "--ground", "slope:95"],
            "--ground",
        ),
        (vec!["--ground", "flat"], "--foot-ik"),
    ] {
        let mut a = vec![
            "animate",
            "--quiet",
            "--character",
            facecap.to_str().unwrap(),
            "--out",
        ];
        let o = dir.path().join("bad");
        a.push(o.to_str().unwrap());
        a.extend(extra.iter().copied());
        let r = mien(&a);
        assert!(
            !r.ok() && r.stderr.contains(needle),
            "{extra:?}: {}",
            r.stderr
        );
    }
}
