//! `mien animate --character FILE.character.json` (issue 26 item 4): the shipped walker walks at
//! `--speed` and reports its parts; the schema accepts the shipped file and refuses an unknown key;
//! `--speed` without a character file is refused.

mod common;

use std::path::Path;

use common::{data, mien};
use serde_json::{Value, json};

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
        .display()
        .to_string()
}

#[test]
fn the_walker_walks_from_its_character_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("walker");
    let r = mien(&[
        "animate",
        "--quiet",
        "--character",
        &repo("docs/characters/rpm_walker.character.json"),
        "--speed",
        "1.2",
        "--frames",
        "10",
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
    assert!(
        r.stdout
            .contains("body       character file (2 clips, locomotion); feet placed"),
        "{}",
        r.stdout
    );
    let rep: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let c = &rep["body"]["character_file"];
    assert_eq!(c["clips"], json!(["idle", "walk"]), "{c}");
    assert_eq!(c["locomotion"], true);
    assert_eq!(c["speed_m_s"], 1.2);
    assert_eq!(
        rep["animation"]["kind"], "locomotion",
        "{}",
        rep["animation"]
    );
    // Locomotion owns the clips: --clip is refused; --ground moves the file's feet.
    let walker = repo("docs/characters/rpm_walker.character.json");
    let r = mien(&[
        "animate",
        "--quiet",
        "--character",
        &walker,
        "--clip",
        "walk",
        "--out",
        dir.path().join("c").to_str().unwrap(),
    ]);
    assert!(!r.ok() && r.stderr.contains("locomotion"), "{}", r.stderr);
    let g = dir.path().join("g");
    let r = mien(&[
        "animate",
        "--quiet",
        "--character",
        &walker,
        "--ground",
        "step:0.1",
        "--frames",
        "3",
        "--ply",
        "none",
        "--sheet",
        "0",
        "--gaussians",
        "2000",
        "--out",
        g.to_str().unwrap(),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let rep: Value =
        serde_json::from_slice(&std::fs::read(g.join("report.json")).unwrap()).unwrap();
    assert_eq!(rep["body"]["ground"]["kind"], "step", "{}", rep["body"]);
    let r = mien(&[
        "animate",
        "--quiet",
        "--character",
        data("avatars/rpm_male.glb").to_str().unwrap(),
        "--speed",
        "1",
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert!(!r.ok() && r.stderr.contains("--speed"), "{}", r.stderr);
}

#[test]
fn the_character_schema_accepts_the_shipped_file() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo("docs/schemas/character.schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let shipped: Value = serde_json::from_slice(
        &std::fs::read(repo("docs/characters/rpm_walker.character.json")).unwrap(),
    )
    .unwrap();
    assert!(v.is_valid(&shipped));
    let mut bad = shipped.clone();
    bad["legs"] = json!(2);
    assert!(!v.is_valid(&bad));
    let mut bad = shipped;
    bad["locomotion"]["walk_speed"] = json!(0);
    assert!(!v.is_valid(&bad));
    // The built-in body's file, with its cape and hair.
    let body: Value = serde_json::from_slice(
        &std::fs::read(repo("docs/characters/builtin_body.character.json")).unwrap(),
    )
    .unwrap();
    assert!(v.is_valid(&body));
    let mut bad = body.clone();
    bad["hair"]["tfx"] = json!("x.tfx");
    assert!(!v.is_valid(&bad), "groom and tfx together");
    let mut bad = body.clone();
    bad["hair"]["colliders"][0]["radius"] = json!(-1);
    assert!(!v.is_valid(&bad));
    let mut bad = body;
    bad["hide"]["bones"] = json!(["Head"]);
    assert!(!v.is_valid(&bad), "hide takes meshes and joints only");
}

/// `docs/schemas/cloth.schema.json` and `ClothDef` accept the built-in body's cape and refuse the
/// same broken ones, one case per rule.
#[test]
fn the_cloth_schema_agrees_with_the_reader() {
    use mien::core::cloth::ClothDef;
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo("docs/schemas/cloth.schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let body: Value = serde_json::from_slice(
        &std::fs::read(repo("docs/characters/builtin_body.character.json")).unwrap(),
    )
    .unwrap();
    let shipped = body["cloth"].clone();
    assert!(v.is_valid(&shipped));
    let ok =
        |d: &Value| ClothDef::from_json(&d.to_string(), "c.json").and_then(|c| c.check("c.json"));
    assert!(ok(&shipped).is_ok());
    let cases: Vec<(&str, &str, Value)> = vec![
        ("", "format", json!("mien-cape")),
        ("", "max_distance", json!([0.1, -1])),
        ("", "pin_height", json!(-0.1)),
        ("", "mesh", json!("Cape")),
        ("", "teleport_distance", json!(0)),
        ("material", "substeps", json!(0)),
        ("material", "substeps", json!(65)),
        ("material", "motion_steps", json!(9)),
        ("material", "friction", json!(2)),
        ("material", "vertex_mass", json!(0)),
        ("cape", "rows", json!(1)),
        ("cape", "flare", json!(4)),
        ("cape", "colour", json!([2, 0, 0])),
        ("", "stiffness", json!(1)),
    ];
    for (obj, key, val) in cases {
        let mut d = shipped.clone();
        if obj.is_empty() {
            d[key] = val;
        } else {
            d[obj][key] = val;
        }
        assert!(!v.is_valid(&d), "schema accepted {obj}/{key}");
        assert!(ok(&d).is_err(), "reader accepted {obj}/{key}");
    }
}

/// `docs/schemas/foot-ik.schema.json` and `chain.schema.json` accept what their readers accept
/// and refuse what they refuse, one case per rule (cross-field rules are the readers' alone).
#[test]
fn the_foot_ik_and_chain_schemas_agree_with_their_readers() {
    let load = |f: &str| {
        let s: Value =
            serde_json::from_slice(&std::fs::read(repo(&format!("docs/schemas/{f}"))).unwrap())
                .unwrap();
        jsonschema::draft202012::new(&s).unwrap()
    };
    let foot = load("foot-ik.schema.json");
    let leg = json!({"hip": "UpperLeg.L", "knee": "LowerLeg.L", "ankle": "Foot.L"});
    for (doc, ok) in [
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": [leg]}),
            true,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": [leg], "stance": null, "max_slope_deg": 30, "smooth_rate": 0}),
            true,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": [leg], "stance": {"plant_speed": 0.1}}),
            true,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": []}),
            false,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": [leg], "max_slope_deg": 95}),
            false,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": [leg], "probe_up": 0}),
            false,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "pelvis": "Hips", "legs": [leg], "smooth": 1}),
            false,
        ),
        (
            json!({"format": "mien-foot-ik", "version": 1, "legs": [leg]}),
            false,
        ),
    ] {
        let reader = mien::core::anim::foot::FootIkDef::from_json(&doc.to_string(), "f").is_ok();
        assert_eq!(foot.is_valid(&doc), ok, "schema on {doc}");
        assert_eq!(reader, ok, "reader on {doc}");
    }
    let chain = load("chain.schema.json");
    let base = json!({"format": "mien-chain", "version": 1, "bones": ["a", "b"], "tip_length": 0.1,
                      "stiffness": [1, 0.5], "damping": 0.4, "gravity": [0, -1, 0]});
    let with = |k: &str, v: Value| {
        let mut d = base.clone();
        d[k] = v;
        d
    };
    assert!(chain.is_valid(&base));
    assert!(chain.is_valid(&with(
        "colliders",
        json!([{"bone": "a", "offset": [0, 0, 0], "tail": [0, 1, 0], "radius": 0.1}])
    )));
    for bad in [
        with("damping", json!(2)),
        with("stiffness", json!([1])),
        with("tip_length", json!(0)),
        with("substeps", json!(4)),
        with("bones", json!([])),
    ] {
        assert!(!chain.is_valid(&bad), "{bad}");
    }
    // The reader parses what the schema accepts (its range checks run against a character).
    mien::core::anim::spring::ChainDef::from_json(&base.to_string(), "c").unwrap();
    assert!(
        mien::core::anim::spring::ChainDef::from_json(&with("substeps", json!(4)).to_string(), "c")
            .is_err()
    );
}

/// The built-in body by default: the summary's state hash follows the body step (spring bones
/// off changes it), report.json says where the walk went and that the frames stay in the
/// character's space, and a walk past 10⁶ m is refused before anything runs.
#[test]
fn the_built_in_body_reports_its_walk_and_hashes_its_body() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "animate",
            "--quiet",
            "--frames",
            "16",
            "--fps",
            "10",
            "--ply",
            "none",
            "--sheet",
            "0",
            "--gaussians",
            "2000",
            "--out",
        ];
        let o = out.to_str().unwrap().to_string();
        args.push(&o);
        args.extend_from_slice(extra);
        let r = mien(&args);
        assert!(r.ok(), "{}", r.stderr);
        let rep: Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        (r.stdout, rep)
    };
    let (stdout, on) = run("on", &[]);
    let (_, off) = run("off", &["--springs", "off"]);
    let hash = |r: &Value| r["animation"]["animator"]["last_state_hash"].clone();
    assert_ne!(hash(&on), hash(&off), "the hash ignored the spring bones");
    // 1.5 s at the walk speed (1.2 m/s by construction, measured from the clip).
    let z = on["body"]["final_placement"]["position_m"][2]
        .as_f64()
        .unwrap();
    assert!((z - 1.5 * 1.2).abs() < 0.02, "walked to z {z}");
    assert!(
        stdout.contains("walked to (0.00, 0.00, 1.80) m"),
        "{stdout}"
    );
    assert!(
        on["body"]["last_frame"]["foot"]["legs"]
            .as_array()
            .unwrap()
            .len()
            == 2
    );
    let out = dir.path().join("far");
    let r = mien(&[
        "animate",
        "--speed",
        "100",
        "--fps",
        "1",
        "--frames",
        "20000",
        "--ply",
        "none",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !r.ok() && r.stderr.contains("past the 1000000 m"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
}

/// `mien inspect` names what maps, foot-ik files and scenarios refer to: the built-in body's
/// skeleton by humanoid role and its spring by name; a character file's locomotion with the walk
/// speed measured from its clip. A bake onto a built-in character is refused with the way to play
/// a retargeted clip on it.
#[test]
fn inspect_names_the_skeleton_and_the_springs() {
    let r = mien(&["inspect", "--json", "builtin-body"]);
    assert!(r.ok(), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let roles = v["skeleton"]["humanoid_roles"].to_string();
    assert!(
        roles.contains("hips: Hips") && roles.contains("leftFoot: LeftFoot"),
        "{roles}"
    );
    assert_eq!(v["skeleton"]["facing"], "+Z");
    assert_eq!(v["spring_bones"]["springs"], json!(["ponytail (3 joints)"]));
    let r = mien(&[
        "inspect",
        "--json",
        &repo("docs/characters/builtin_body.character.json"),
    ]);
    assert!(r.ok(), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let l = &v["character_file"]["locomotion"];
    let s = l["walk_speed_m_s"].as_f64().unwrap();
    assert!((s - 1.2).abs() < 0.01, "{l}");
    assert_eq!(l["walk"], "1: walk");
    let out = tempfile::tempdir().unwrap();
    let r = mien(&[
        "retarget",
        &data("bodies/test.vrma").display().to_string(),
        "--to",
        "builtin-body",
        "--out",
        out.path().join("x.glb").to_str().unwrap(),
    ]);
    assert!(
        !r.ok() && r.stderr.contains("animate --retarget"),
        "{}",
        r.stderr
    );
}

/// `docs/schemas/groom.schema.json` and `GroomDef::from_json` accept the shipped groom and refuse
/// the same broken ones (a rule per case; the product limit of rendered strands is the reader's).
#[test]
fn the_groom_schema_agrees_with_the_reader() {
    use mien::core::hair::GroomDef;
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo("docs/schemas/groom.schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let shipped: Value = serde_json::from_slice(
        &std::fs::read(repo("docs/grooms/builtin_body.groom.json")).unwrap(),
    )
    .unwrap();
    assert!(v.is_valid(&shipped));
    let g = GroomDef::from_json(&shipped.to_string(), "g.json").unwrap();
    assert_eq!(g.build().unwrap().report.built_guides, 320);
    let cases: Vec<(&str, Value)> = vec![
        ("/format", json!("mien-hair")),
        ("/guides", json!(0)),
        ("/guides", json!(5000)),
        ("/segments", json!(25)),
        ("/length", json!(-1)),
        ("/clump", json!(1.5)),
        ("/thickness", json!([0.001])),
        ("/scalp", json!({"center": [0, 0, 0]})),
        ("/colour", json!({"root": [2, 0, 0], "tip": [0, 0, 0]})),
        ("/hair", json!(1)),
    ];
    for (ptr, val) in cases {
        let mut d = shipped.clone();
        d[&ptr[1..]] = val;
        assert!(!v.is_valid(&d), "schema accepted {ptr}");
        assert!(
            GroomDef::from_json(&d.to_string(), "g.json").is_err(),
            "reader accepted {ptr}"
        );
    }
}

/// `mien inspect` on a TressFX groom: Sintel's 228 guides × 32 points, every root pinned, the
/// roots' extent computed here from the file's own bytes (header 160 bytes, then `(x, y, z, w)`
/// f32 records), and a damaged file refused with exit 1 naming the header.
#[test]
fn inspect_describes_a_tressfx_groom() {
    let file = common::data("hair/sintel_hair_rust_vulkan_tressfx.tfx");
    let o = std::process::Command::new(common::bin())
        .args(["inspect", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["strands"], 228);
    assert_eq!(v["points_per_strand"], 32);
    assert_eq!(v["pinned_points"], 228);
    let bytes = std::fs::read(&file).unwrap();
    let f = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for s in 0..228 {
        let y = f(160 + s * 32 * 16 + 4);
        lo = lo.min(y);
        hi = hi.max(y);
    }
    assert_eq!(v["roots"]["min"][1].as_f64().unwrap() as f32, lo);
    assert_eq!(v["roots"]["max"][1].as_f64().unwrap() as f32, hi);
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tfx");
    std::fs::write(&bad, [0u8; 100]).unwrap();
    let o = std::process::Command::new(common::bin())
        .arg("inspect")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("header"));
}
