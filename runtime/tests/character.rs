//! The character file (issue 26 item 4): a shipped `mien-character` file loads with its idle and
//! retargeted walk, walks forward at its speed with its feet placed, and hashes alike run after
//! run; a bad file is refused naming every problem at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_runtime::character::CharacterDef;
use mien_runtime::{Device, Runtime, RuntimeOptions};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn hips_z(rt: &Runtime) -> f64 {
    let ch = rt.asset().character();
    let inst = rt.instance(0).unwrap();
    let (mut s, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(inst.pose(), &mut s, &mut w);
    let hips = ch
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("Hips"))
        .unwrap();
    // The placement carries the walk: world = placement · pose.
    let r = inst.body_report();
    let _ = r;
    f64::from(w[hips].w_axis.z)
}

/// Run the shipped walker for `frames` at 60 Hz at `speed`; (state hashes, final placement z).
fn walk(speed: f64, frames: u32) -> (Vec<u64>, f64) {
    let loaded = CharacterDef::load(repo("docs/characters/rpm_walker.character.json")).unwrap();
    let asset = Arc::new(loaded.asset.clone());
    let opts = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let mut rt = Runtime::new(asset, &Device::Cpu, &opts).unwrap();
    let mut inst = rt.instance_mut(0).unwrap();
    loaded.apply(&mut inst).unwrap();
    inst.set_speed(speed).unwrap();
    let mut hashes = Vec::new();
    for f in 0..frames {
        rt.update(f64::from(f) / 60.0).unwrap();
        hashes.push(rt.instance(0).unwrap().state_hash());
    }
    let _ = hips_z(&rt);
    let z = rt.instance(0).unwrap().placement().w_axis.z;
    (hashes, z)
}

#[test]
fn the_shipped_walker_loads_walks_and_repeats() {
    let loaded = CharacterDef::load(repo("docs/characters/rpm_walker.character.json")).unwrap();
    assert_eq!(loaded.clips.len(), 2);
    assert!(loaded.locomotion.is_some());
    assert_eq!(loaded.retarget["walk"].mapped.len(), 21);
    assert!(
        loaded.retarget["idle"].mapped.len() > 40,
        "{}",
        loaded.retarget["idle"].mapped.len()
    );
    assert!(matches!(loaded.foot, mien_runtime::FootPlacement::Def(_)));
    // 2 s at the walk speed carry the character 2.4 m forward (+Z); idle stays put.
    let (h1, z) = walk(1.2, 121);
    assert!((z - 1.2 * 2.0).abs() < 1e-6, "walked to z {z}");
    let (h2, _) = walk(1.2, 121);
    assert_eq!(h1, h2, "the same run hashes alike");
    let (h3, z0) = walk(0.0, 121);
    assert_eq!(z0, 0.0);
    assert_ne!(h1[60], h3[60], "walking and idling hash apart");
    // Frames differ from one another (the pose moves).
    assert_ne!(h1[10], h1[40]);
}

#[test]
fn a_bad_character_file_names_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo("../shared/data");
    let file = dir.path().join("bad.character.json");
    std::fs::write(
        &file,
        serde_json::json!({
            "format": "mien-character", "version": 1,
            "model": data.join("avatars/rpm_male.glb"),
            "face": "missing-face.json",
            "clips": {
                "walk": {"source": data.join("bodies/KnightCharacter.glb"), "clip": "Moonwalk"},
                "idle": {"clip": "0"},
                "odd": {"source": data.join("bodies/KnightCharacter.glb"), "reference": "a-pose"}
            },
            "spring_bones": true,
            "locomotion": {"idle": "idle", "walk": "run", "walk_speed": 0}
        })
        .to_string(),
    )
    .unwrap();
    let e = CharacterDef::load(&file).unwrap_err().chain_text();
    for needle in [
        "/face",
        "missing-face.json",
        "/clips/walk",
        "Moonwalk",
        "/clips/idle/clip",
        "/clips/odd/reference",
        "/spring_bones",
        "/locomotion/walk",
        "`run`",
        "/locomotion/walk_speed",
    ] {
        assert!(e.contains(needle), "lacks {needle}: {e}");
    }
    std::fs::write(
        &file,
        r#"{"format":"mien-character","version":1,"model":"x.glb","legs":2}"#,
    )
    .unwrap();
    let e = CharacterDef::load(&file).unwrap_err().chain_text();
    assert!(e.contains("legs"), "{e}");
    // A walk speed that is neither a number nor `auto` says so in words.
    std::fs::write(
        &file,
        r#"{"format":"mien-character","version":1,"model":"builtin-body",
            "clips":{"idle":{"clip":"idle"},"walk":{"clip":1}},
            "locomotion":{"idle":"idle","walk":"walk","walk_speed":"fast"}}"#,
    )
    .unwrap();
    let e = CharacterDef::load(&file).unwrap_err().chain_text();
    assert!(
        e.contains("/locomotion/walk_speed") && e.contains("neither a speed in m/s nor \"auto\""),
        "{e}"
    );
    // A clip given by index (a whole number) is the clip at that index: the body's walk.
    std::fs::write(
        &file,
        r#"{"format":"mien-character","version":1,"model":"builtin-body",
            "clips":{"idle":{"clip":"idle"},"walk":{"clip":1}},
            "locomotion":{"idle":"idle","walk":"walk","walk_speed":"auto"}}"#,
    )
    .unwrap();
    let l = CharacterDef::load(&file).unwrap();
    let walk = l.clips["walk"];
    assert_eq!(
        l.asset.character().clips[walk.index()].name.as_deref(),
        Some("walk")
    );
    // `auto` on a clip that does not walk is refused, naming the field.
    std::fs::write(
        &file,
        r#"{"format":"mien-character","version":1,"model":"builtin-body",
            "clips":{"idle":{"clip":"idle"},"wave":{"clip":"wave"}},
            "locomotion":{"idle":"idle","walk":"wave","walk_speed":"auto"}}"#,
    )
    .unwrap();
    let e = CharacterDef::load(&file).unwrap_err().chain_text();
    assert!(
        e.contains("/locomotion/walk_speed") && e.contains("do not walk"),
        "{e}"
    );
}

/// Without locomotion, `set_speed` walks the placement while the drive plays; wind needs spring
/// bones and moves them.
#[test]
fn speed_without_locomotion_moves_the_placement_and_wind_needs_springs() {
    let asset = Arc::new(mien_runtime::Asset::builtin_body());
    let opts = RuntimeOptions {
        instances: 2,
        lift: None,
    };
    let mut rt = Runtime::new(asset, &Device::Cpu, &opts).unwrap();
    rt.instance_mut(0).unwrap().set_speed(1.5).unwrap();
    let sb = rt.asset().character().spring_bones.clone();
    rt.instance_mut(1)
        .unwrap()
        .set_springs(sb.as_ref())
        .unwrap()
        .set_wind(glam::DVec3::new(20.0, 0.0, 0.0))
        .unwrap();
    for k in 0..=60 {
        rt.update(f64::from(k) / 30.0).unwrap();
    }
    // 2 s at 1.5 m/s along the body's facing (+Z).
    let z = rt.instance(0).unwrap().placement().w_axis.z;
    assert!((z - 3.0).abs() < 1e-9, "walked to z {z}");
    let e = match rt.instance_mut(0).unwrap().set_wind(glam::DVec3::X) {
        Ok(_) => panic!("wind on an instance without spring bones"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("no spring bones"), "{e}");
    // The ponytail's tip is blown toward +X by the side wind.
    let inst = rt.instance(1).unwrap();
    let ch = rt.asset().character();
    let (mut s, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(inst.pose(), &mut s, &mut w);
    let p3 = ch
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("Ponytail3"))
        .unwrap();
    assert!(w[p3].w_axis.x > 0.02, "ponytail at x {}", w[p3].w_axis.x);
}

/// A character file's chains run in the same solver as the model's spring bones: Godette with an
/// inline chain on her ribbon simulates both (the chain's joints after hers), and the instance's
/// state hash follows the chains.
#[test]
fn chains_join_the_model_s_spring_bones() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo("../shared/data");
    let file = dir.path().join("godette.character.json");
    std::fs::write(
        &file,
        serde_json::json!({
            "format": "mien-character", "version": 1,
            "model": data.join("vrm/Godette_vrm_v4.vrm"),
            "chains": [{
                "format": "mien-chain", "version": 1, "name": "ribbon",
                "bones": ["Ribbon"], "tip_length": 0.1, "stiffness": [1.0, 1.0],
                "damping": 0.4, "gravity": [0, -1, 0], "wind_response": 1
            }]
        })
        .to_string(),
    )
    .unwrap();
    let loaded = CharacterDef::load(&file).unwrap();
    let own = loaded.asset.character().spring_bones.clone().unwrap();
    let sb = loaded.springs.clone().unwrap();
    assert_eq!(sb.joints.len(), own.joints.len() + 1);
    assert_eq!(sb.springs.last().unwrap().name, "ribbon");
    let asset = Arc::new(loaded.asset.clone());
    let opts = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let mut rt = Runtime::new(asset, &Device::Cpu, &opts).unwrap();
    loaded.apply(&mut rt.instance_mut(0).unwrap()).unwrap();
    rt.update(0.0).unwrap();
    let h0 = rt.instance(0).unwrap().state_hash();
    rt.update(0.5).unwrap();
    assert_ne!(
        h0,
        rt.instance(0).unwrap().state_hash(),
        "gravity moves the chains"
    );
}
