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
        run.stdout.contains("51 of 52 channels bound"),
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

/// The facecap pack with its header's ARKit table removed (the blob area unchanged: offsets are
/// relative to it).
fn facecap_pack_without_table(dir: &Path) -> std::path::PathBuf {
    let pack = dir.join("facecap.aosrig");
    let run = mien(&[
        "pack",
        data("facecap/facecap.glb").to_str().unwrap(),
        "--out",
        pack.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(run.ok(), "{}", run.stderr);
    let bytes = std::fs::read(&pack).unwrap();
    let h = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[16..16 + h]).unwrap();
    assert!(header.as_object_mut().unwrap().remove("arkit").is_some());
    let mut json = serde_json::to_vec(&header).unwrap();
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut out = bytes[..8].to_vec();
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&json);
    out.extend_from_slice(&bytes[16 + h..]);
    let bare = dir.join("bare.aosrig");
    std::fs::write(&bare, out).unwrap();
    bare
}

#[test]
fn arkit_input_to_a_pack_without_a_map_is_refused_and_rest_still_poses() {
    let dir = tempfile::tempdir().unwrap();
    let bare = facecap_pack_without_table(dir.path());
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let out = dir.path().join("refused");
    let run = animate(
        &out,
        &[
            "--character",
            bare.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--frames",
            "2",
        ],
    );
    assert!(!run.ok(), "ARKit into a pack without a map must fail");
    assert!(
        run.stderr.contains("bare.aosrig") && run.stderr.contains("no baked ARKit table"),
        "{}",
        run.stderr
    );
    assert!(!out.exists(), "a refused run writes nothing");
    // Speech drives ARKit visemes: refused the same way.
    let gentle = data("gentle/lucier_golden.json");
    let run = animate(
        &out,
        &[
            "--character",
            bare.to_str().unwrap(),
            "--speech",
            gentle.to_str().unwrap(),
        ],
    );
    assert!(
        !run.ok() && run.stderr.contains("no baked ARKit table"),
        "{}",
        run.stderr
    );
    // Undriven, it poses at rest, and the report says there is no map.
    let run = animate(
        &out,
        &[
            "--character",
            bare.to_str().unwrap(),
            "--frames",
            "2",
            "--sheet",
            "0",
        ],
    );
    assert!(run.ok(), "{}", run.stderr);
    let r = report(&out);
    assert_eq!(r["character"]["linear_head"]["arkit_map"], false);
    assert_eq!(r["character"]["vertices"].as_u64(), Some(2694));
    assert!(run.stdout.contains("no ARKit map"), "{}", run.stdout);
}
