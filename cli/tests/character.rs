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
}
