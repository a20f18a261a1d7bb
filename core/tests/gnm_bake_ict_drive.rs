//! The baked ICT-FaceKit pack (MIT, © 2020 USC ICT) driven by a real Live Link Face recording
//! (JMTechArt, MIT) through the ARKit table the baker generated from the shape names: every
//! coefficient gets its channel's value from the CSV (split halves both get the whole channel,
//! unmapped shapes stay 0), the gaze angles come from `eyeLook*`, and the posed head moves while
//! its eyeballs only turn (each eyeball vertex keeps its distance to its eye centre).

use mien_core::anim::arkit::ARKIT_52;
use mien_core::anim::canon::{Canon, canonicalize};
use mien_core::anim::{Drive, StreamDrive};
use mien_core::gnm::arkit::GAZE_RADIANS_PER_UNIT;
use mien_core::gnm::bake::{BakeOptions, bake_obj_folder};
use mien_core::gnm::controls::{GnmDriver, control_character};
use mien_core::gnm::forward::{joint_world, pose};
use mien_core::io::livelink_csv::read_livelink_csv;

mod support;

#[test]
fn a_live_link_recording_drives_the_baked_ict_pack() {
    let baked = bake_obj_folder(
        &support::data_dir().join("ict-facekit"),
        &BakeOptions::default(),
        &mut |_, _, _| {},
    )
    .unwrap();
    let p = &baked.pack;
    let csv = support::data_dir().join("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let stream = read_livelink_csv(&csv).unwrap();
    let ch = control_character("ict.aosrig").unwrap();
    let mut drive = Drive::Stream(StreamDrive::new(stream.clone(), &ch).unwrap());
    let mut driver = GnmDriver::new(p, None, None, "ict.aosrig").unwrap();
    assert!(driver.map.dropped.is_empty());
    assert_eq!(driver.map.term_count(), 53);
    // The stream column of each coefficient, from its name alone (Live Link names are PascalCase).
    let col = |arkit: &str| {
        stream
            .channels
            .iter()
            .position(|c| c.eq_ignore_ascii_case(arkit))
            .unwrap()
    };
    let source: Vec<Option<usize>> = p
        .header
        .names
        .iter()
        .map(|n| match canonicalize(n) {
            Some(Canon::Arkit(i)) | Some(Canon::Half { arkit: i, .. }) => Some(col(ARKIT_52[i])),
            _ => None,
        })
        .collect();
    assert_eq!(source.iter().filter(|s| s.is_none()).count(), 4);
    let look = [
        "eyeLookDownLeft",
        "eyeLookUpLeft",
        "eyeLookOutLeft",
        "eyeLookInLeft",
    ]
    .map(col);
    let (e, v_n) = (p.coeff_count(), p.vertex_count());
    let rest = ch.rest_pose();
    let mut frame_pose = rest.clone();
    let (mut jw, mut skipped, mut out) = (Vec::new(), Vec::new(), Vec::new());
    joint_world(p, &[], &mut jw, &mut skipped);
    let mut largest_move = 0.0f32;
    for f in (0..stream.frame_count()).step_by(41) {
        drive.pose_at(&ch, &rest, stream.times[f], &mut frame_pose);
        let row = stream.frame(f);
        let h = driver.head_ext(&frame_pose).to_vec();
        assert_eq!(h.len(), e + 4);
        for (k, s) in source.iter().enumerate() {
            let want = s.map_or(0.0, |c| row[c].clamp(-4.0, 4.0));
            assert!(
                (h[k] - want).abs() < 1e-6,
                "frame {f} {}: {} vs {want}",
                p.header.names[k],
                h[k]
            );
        }
        let pitch = (row[look[0]] - row[look[1]]) * GAZE_RADIANS_PER_UNIT;
        let yaw = (row[look[2]] - row[look[3]]) * GAZE_RADIANS_PER_UNIT;
        assert!(
            (h[e] - pitch).abs() < 1e-6 && (h[e + 1] - yaw).abs() < 1e-6,
            "frame {f}"
        );
        pose(p, &h, &jw, &mut out).unwrap();
        for v in 0..v_n {
            let d = (0..3)
                .map(|a| (out[v][a] - p.neutral[v][a]).powi(2))
                .sum::<f32>()
                .sqrt();
            largest_move = largest_move.max(d);
            // Eyeball vertices only turn about their centre (no expression shape moves them).
            for i in 0..2 {
                if p.eye_weights[i * v_n + v] == 1.0 {
                    let c = p.eye_positions[i];
                    let r = |q: [f32; 3]| {
                        (0..3)
                            .map(|a| f64::from(q[a] - c[a]).powi(2))
                            .sum::<f64>()
                            .sqrt()
                    };
                    assert!(
                        (r(out[v]) - r(p.neutral[v])).abs() < 1e-6,
                        "frame {f} eye vertex {v}"
                    );
                }
            }
        }
    }
    // The recording really moves the face: more than a millimetre somewhere.
    assert!(largest_move > 1e-3, "{largest_move}");
}
