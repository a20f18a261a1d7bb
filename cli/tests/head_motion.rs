//! `mien animate --arkit` turns the head, neck and eye joints with the stream's angle channels
//! (the runtime's head motion), reports what it found, and honours `--no-head-motion`,
//! `--head-joint`, `--neck-joint` and `--eye-joints`.

mod common;

use common::{animate, data, report};

fn args<'a>(csv: &'a str, face: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--character",
        face,
        "--arkit",
        csv,
        "--ply",
        "none",
        "--sheet",
        "0",
        "--frames",
        "4",
    ];
    a.extend_from_slice(extra);
    a
}

#[test]
fn facecap_eyes_follow_the_recordings_angles_and_the_report_says_so() {
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let face = data("facecap/facecap.glb");
    let (csv, face) = (csv.to_str().unwrap(), face.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let r = animate(dir.path(), &args(csv, face, &[]));
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(dir.path());
    let m = &rep["animation"]["head_motion"];
    assert_eq!(m["applied"], true);
    assert_eq!(m["head"], "grp_transform");
    assert_eq!(m["left_eye"], "eyeLeft");
    assert_eq!(m["right_eye"], "eyeRight");
    let notes = rep["animation"]["notes"].to_string();
    assert!(
        notes.contains("9 head/eye angle channels applied as joint rotations"),
        "{notes}"
    );

    let off = tempfile::tempdir().unwrap();
    let r = animate(off.path(), &args(csv, face, &["--no-head-motion"]));
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(
        report(off.path())["animation"]["head_motion"]["applied"],
        false
    );
}

#[test]
fn named_joints_are_checked() {
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let face = data("facecap/facecap.glb");
    let (csv, face) = (csv.to_str().unwrap(), face.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let r = animate(
        dir.path(),
        &args(
            csv,
            face,
            &["--head-joint", "head", "--eye-joints", "eyeLeft,eyeRight"],
        ),
    );
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(
        report(dir.path())["animation"]["head_motion"]["head"],
        "head"
    );

    let bad = tempfile::tempdir().unwrap();
    let r = animate(bad.path(), &args(csv, face, &["--head-joint", "Skull"]));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("head joint `Skull`") && r.stderr.contains("grp_transform"),
        "{}",
        r.stderr
    );
    assert!(!bad.path().join("report.json").exists());

    let r = animate(bad.path(), &args(csv, face, &["--eye-joints", "eyeLeft"]));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("LEFT,RIGHT"), "{}", r.stderr);
}
