//! A head baked by `mien pack` is a character `mien animate` drives: the ICT-FaceKit pack (MIT,
//! © 2020 USC ICT) from the Live Link Face recording (JMTechArt, MIT) through the ARKit table the
//! baker generated, and from Gentle speech timings (lowerquality/gentle, MIT) through its ARKit
//! visemes. The report carries the pack's layout and memory, computed here from V and E.

use std::path::Path;

mod common;

use common::{animate, data, mien, report};

fn ply_bytes(out: &Path, frame: usize) -> Vec<u8> {
    std::fs::read(out.join(format!("frames/frame_{frame:05}.ply"))).unwrap()
}

#[test]
fn the_ict_pack_is_animated_from_live_link_and_from_speech() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("ict.aosrig");
    let run = mien(&[
        "pack",
        data("ict-facekit").to_str().unwrap(),
        "--out",
        pack.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(run.ok(), "{}", run.stderr);
    let file_bytes = std::fs::metadata(&pack).unwrap().len();
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");

    // Live Link: every channel bound, the baked table used, frames that differ.
    let out = dir.path().join("livelink");
    let run = animate(
        &out,
        &[
            "--character",
            pack.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--start",
            "2",
            "--frames",
            "3",
            "--fps",
            "5",
            "--sheet",
            "0",
        ],
    );
    assert!(run.ok(), "{}", run.stderr);
    assert!(
        run.stdout.contains("52 of 52 channels bound"),
        "{}",
        run.stdout
    );
    let r = report(&out);
    let head = &r["character"]["linear_head"];
    let (v, e) = (26_719u64, 57u64);
    assert_eq!(r["character"]["vertices"].as_u64(), Some(v));
    assert_eq!(head["coefficients"].as_u64(), Some(e));
    assert_eq!(head["head_ext"].as_u64(), Some(e + 4));
    assert_eq!(head["arkit_map"], true);
    assert_eq!(head["arkit_terms"].as_u64(), Some(53));
    let mem = &r["memory"]["linear_head"];
    assert_eq!(mem["file_bytes"].as_u64(), Some(file_bytes));
    assert_eq!(mem["basis_bytes"].as_u64(), Some(v * e * 6));
    assert!(
        ply_bytes(&out, 0) != ply_bytes(&out, 2),
        "the recording moves the face"
    );

    // Speech: the mouth moves over the rest pose.
    let out = dir.path().join("speech");
    let gentle = data("gentle/lucier_golden.json");
    let run = animate(
        &out,
        &[
            "--character",
            pack.to_str().unwrap(),
            "--speech",
            gentle.to_str().unwrap(),
            "--frames",
            "10",
            "--fps",
            "1",
            "--sheet",
            "0",
        ],
    );
    assert!(run.ok(), "{}", run.stderr);
    assert!(run.stdout.contains("gentle"), "{}", run.stdout);
    // Over the first 10 s (pauses at rest, held visemes): at least three different poses.
    let mut poses: Vec<Vec<u8>> = (0..10).map(|f| ply_bytes(&out, f)).collect();
    poses.sort();
    poses.dedup();
    assert!(
        poses.len() >= 3,
        "speech moves the mouth: {} poses",
        poses.len()
    );
}
