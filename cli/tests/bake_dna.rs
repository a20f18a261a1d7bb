//! `mien bake --character X.dna`: a MetaHuman DNA character (the ICT rig) takes the Live Link
//! take and bakes it into a GLB written from the DNA (its control node left out); `bake --verify`
//! passes; the same inputs give the same bytes; `inspect` reads the baked file as a character with
//! the take. Skips with a notice when the shared data is absent.

mod common;

use common::{data, mien};

#[test]
fn a_dna_character_bakes_from_the_command_line() {
    let (dna, take) = (
        data("metahuman_dna/mien_ict_rig.dna"),
        data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"),
    );
    if !(dna.exists() && take.exists()) {
        eprintln!("notice: skipped, ../shared/data/metahuman_dna or livelinkface not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bake = |out: &std::path::Path| {
        mien(&[
            "bake",
            "--character",
            dna.to_str().unwrap(),
            "--arkit",
            take.to_str().unwrap(),
            "--frames",
            "61",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let (a, b) = (dir.path().join("a.glb"), dir.path().join("b.glb"));
    let r = bake(&a);
    assert!(r.ok(), "{}", r.stderr);
    assert!(
        r.stdout.contains("61 keys at 30 fps") && r.stdout.contains("1 weight channel(s)"),
        "{}",
        r.stdout
    );
    assert!(bake(&b).ok());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let v = mien(&["bake", "--verify", a.to_str().unwrap()]);
    assert!(
        v.ok() && v.stdout.contains("mien: MySlate_3_Jason_Millers_iPhone"),
        "{}{}",
        v.stdout,
        v.stderr
    );
    let i = mien(&["inspect", a.to_str().unwrap()]);
    assert!(
        i.ok() && i.stdout.contains("mien: MySlate_3") && !i.stdout.contains("DNA controls"),
        "{}{}",
        i.stdout,
        i.stderr
    );
}
