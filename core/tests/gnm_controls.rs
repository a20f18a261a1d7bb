//! A linear head's ARKit controls: the control character binds every channel of a real Live Link
//! Face recording by name, and `GnmDriver` turns its pose into head_ext with the table's gains
//! (checked against the stream's own values), refusing a pack without a table.

mod support;

use std::collections::BTreeMap;

use mien_core::anim::arkit::{ARKIT_52, arkit_index};
use mien_core::anim::{Drive, StreamDrive};
use mien_core::gnm::arkit::{ArkitGnmTable, ArkitGnmTerm, GAZE_RADIANS_PER_UNIT};
use mien_core::gnm::controls::{
    ControlTarget, GnmDriver, control_character, head_control_character,
};
use mien_core::gnm::layout::HeadExtLayout;
use mien_core::gnm::pack::{GnmPack, PackHeader, PackJoint};
use mien_core::io::livelink_csv::read_livelink_csv;

fn tiny_pack(table: Option<ArkitGnmTable>) -> GnmPack {
    GnmPack {
        header: PackHeader {
            version: 1,
            model: "gnm".into(),
            units: "m".into(),
            vertex_count: 1,
            coeff_count: 3,
            head_ext: HeadExtLayout {
                regions: vec![("left_eye".into(), 1), ("lower_face".into(), 2)],
                reduced: None,
            },
            max_influence: 4,
            joints: vec![PackJoint {
                name: "root".into(),
                parent: -1,
            }],
            eye_joints: None,
            bind_transform: [
                1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.,
            ],
            names: Vec::new(),
            arkit: table,
            source: serde_json::Value::Null,
            buffers: Vec::new(),
        },
        neutral: vec![[0.0; 3]],
        basis: vec![0; 5],
        basis_scale: vec![1.0; 3],
        eye_positions: [[0.0; 3]; 2],
        eye_weights: vec![0.0; 2],
        faces: Vec::new(),
        quads: None,
        uv: None,
        seam: None,
        skin_index: vec![[0; 4]],
        skin_weight: vec![[1.0, 0.0, 0.0, 0.0]],
        rest_world: vec![[
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.,
        ]],
    }
}

#[test]
fn control_character_has_the_52_arkit_targets_in_order() {
    let ch = control_character("x.aosrig").unwrap();
    assert_eq!(ch.meshes.len(), 1);
    assert_eq!(ch.meshes[0].target_names, ARKIT_52);
    assert_eq!(ch.rest_pose().weights[0], vec![0.0; 52]);
}

#[test]
fn a_live_link_recording_drives_head_ext_through_the_table() {
    let csv = support::data_dir().join("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let stream = read_livelink_csv(&csv).unwrap();
    let ch = control_character("x.aosrig").unwrap();
    let mut drive = Drive::Stream(StreamDrive::new(stream.clone(), &ch).unwrap());
    let mut table: ArkitGnmTable = BTreeMap::new();
    table.insert(
        "eyeBlinkLeft".into(),
        vec![ArkitGnmTerm {
            region: "left_eye".into(),
            index: 0,
            gain: 1.0,
        }],
    );
    table.insert(
        "jawOpen".into(),
        vec![ArkitGnmTerm {
            region: "lower_face".into(),
            index: 1,
            gain: 2.0,
        }],
    );
    let pack = tiny_pack(Some(table));
    let mut driver = GnmDriver::new(&pack, None, None, "x.aosrig").unwrap();
    assert_eq!(driver.map.dim, 7);
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    // The stream's own columns, by ARKit name (Live Link names are PascalCase).
    let col = |name: &str| {
        stream
            .channels
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .unwrap()
    };
    let (blink, jaw) = (col("EyeBlinkLeft"), col("JawOpen"));
    let look = [
        "EyeLookDownLeft",
        "EyeLookUpLeft",
        "EyeLookOutLeft",
        "EyeLookInLeft",
    ]
    .map(col);
    let mut moved = 0;
    for f in (0..stream.frame_count()).step_by(7) {
        let t = stream.times[f];
        drive.pose_at(&ch, &rest, t, &mut pose);
        let row = stream.frame(f);
        let h = driver.head_ext(&pose).to_vec();
        assert!(
            (h[0] - row[blink]).abs() < 1e-5,
            "frame {f}: blink {} vs {}",
            h[0],
            row[blink]
        );
        assert!(
            (h[2] - (2.0 * row[jaw]).clamp(-4.0, 4.0)).abs() < 1e-5,
            "frame {f}: jaw"
        );
        assert_eq!(h[1], 0.0);
        let pitch = (row[look[0]] - row[look[1]]) * GAZE_RADIANS_PER_UNIT;
        let yaw = (row[look[2]] - row[look[3]]) * GAZE_RADIANS_PER_UNIT;
        assert!(
            (h[3] - pitch).abs() < 1e-5 && (h[4] - yaw).abs() < 1e-5,
            "frame {f}: gaze {h:?}"
        );
        moved += usize::from(h[2] != 0.0);
        assert!((driver.arkit()[arkit_index("jawOpen").unwrap()] - row[jaw]).abs() < 1e-5);
    }
    assert!(moved > 5, "the recording opens the jaw");
}

#[test]
fn a_pack_without_a_table_refuses_arkit_input() {
    let pack = tiny_pack(None);
    let msg = GnmDriver::new(&pack, None, None, "bare.aosrig")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("bare.aosrig") && msg.contains("no baked ARKit table"),
        "{msg}"
    );
}

#[test]
fn a_heads_control_character_has_only_what_drives_something() {
    let mut table: ArkitGnmTable = BTreeMap::new();
    table.insert(
        "eyeBlinkLeft".into(),
        vec![ArkitGnmTerm {
            region: "left_eye".into(),
            index: 0,
            gain: 1.0,
        }],
    );
    let mut pack = tiny_pack(Some(table));
    // Slot 1 has a name no ARKit channel reaches; slot 2 is ARKit-named but no term drives it.
    pack.header.names = vec![
        "eyeBlink_L".into(),
        "cheekRaiser_L".into(),
        "jawOpen".into(),
    ];
    let (ch, targets) = head_control_character(&pack, "x.aosrig").unwrap();
    let gaze = [
        "eyeLookDownLeft",
        "eyeLookInLeft",
        "eyeLookOutLeft",
        "eyeLookUpLeft",
        "eyeLookDownRight",
        "eyeLookInRight",
        "eyeLookOutRight",
        "eyeLookUpRight",
    ];
    let mut want: Vec<&str> = ARKIT_52
        .iter()
        .copied()
        .filter(|n| *n == "eyeBlinkLeft" || gaze.contains(n))
        .collect();
    want.push("cheekRaiser_L");
    assert_eq!(ch.meshes[0].target_names, want);
    assert_eq!(targets.len(), want.len());
    assert_eq!(targets.last(), Some(&ControlTarget::Coefficient(1)));
    assert!(
        !ch.meshes[0]
            .target_names
            .iter()
            .any(|n| n == "jawOpen" || n == "tongueOut")
    );
    // Weights by target: blink through the table, the direct coefficient with gain 1, clamped to
    // ±4 and counted.
    let mut driver = GnmDriver::new(&pack, None, None, "x.aosrig")
        .unwrap()
        .with_targets(targets);
    let mut pose = ch.rest_pose();
    pose.weights[0][0] = 0.5;
    let last = pose.weights[0].len() - 1;
    pose.weights[0][last] = 5.0;
    let mut clamped = 0;
    let h = driver.head_ext_counting(&pose, &mut clamped).to_vec();
    assert_eq!(&h[..3], &[0.5, 4.0, 0.0]);
    assert_eq!(clamped, 1);
    assert_eq!(&h[3..], &[0.0; 4]);
}
