//! Head and eye motion on real input: Face Cap's `facecap.glb` (a rigid export: face, eyes and
//! teeth are sibling nodes under `grp_transform`) driven by a Live Link Face recording whose
//! HeadYaw/HeadPitch/HeadRoll and eye angles turn the joints. The expected rotation is computed
//! here from the recording's own numbers: the carrier's world rotation relative to rest is
//! `qy(yaw)·qx(pitch)·qz(roll)` in the character frame.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{Mat4, Quat};
use mien_core::anim::WeightStream;
use mien_core::io::livelink_csv::read_livelink_csv;
use mien_runtime::{Asset, Device, HeadJointNames, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn rotation(m: &Mat4) -> Quat {
    m.to_scale_rotation_translation().1
}

fn node(rt: &Runtime, name: &str) -> usize {
    rt.asset()
        .character()
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap()
}

fn facecap() -> Runtime {
    let asset = Arc::new(Asset::load(data("facecap/facecap.glb")).unwrap());
    Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap()
}

/// The angle of `a·b⁻¹`, radians (from its vector part: acos of w is coarse near 1).
fn angle(a: Quat, b: Quat) -> f32 {
    2.0 * (a * b.inverse()).xyz().length().min(1.0).asin()
}

/// Every frame `k` in `frames`: the world rotation of `joint` relative to rest equals
/// `qy(yaw)·qx(pitch)·qz(roll)` of the stream's `group` angle columns at that frame.
fn check_joint(
    rt: &mut Runtime,
    stream: &WeightStream,
    joint: &str,
    group: [&str; 3],
    frames: &[usize],
) {
    let j = node(rt, joint);
    let rest = rotation(&facecap().instance(0).unwrap().world()[j]);
    let a = stream.aux_channels.len();
    let col = |n: &str| stream.aux_channels.iter().position(|c| c == n).unwrap();
    let mut largest = 0.0f32;
    for &k in frames {
        rt.update(stream.times[k]).unwrap();
        let row = &stream.aux_values[k * a..(k + 1) * a];
        let [yaw, pitch, roll] = group.map(|n| row[col(n)]);
        let want =
            Quat::from_rotation_y(yaw) * Quat::from_rotation_x(pitch) * Quat::from_rotation_z(roll);
        let got = rotation(&rt.instance(0).unwrap().world()[j]) * rest.inverse();
        let err = angle(got, want);
        assert!(
            err < 1e-4,
            "{joint} frame {k}: {got:?} vs {want:?} ({err} rad)"
        );
        largest = largest.max(angle(want, Quat::IDENTITY));
    }
    // The stream does turn the joint (else the test could not fail).
    assert!(largest > 0.02, "{joint}: {largest}");
}

#[test]
fn the_recordings_eye_angles_turn_the_eyes() {
    // This take tracked the eyes, not the head (its head columns are all 0).
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let stream = read_livelink_csv(&csv).unwrap();
    let mut rt = facecap();
    rt.instance_mut(0).unwrap().play_livelink_csv(&csv).unwrap();
    let m = rt.instance(0).unwrap().head_motion().unwrap().clone();
    assert!(m.applied);
    assert_eq!(m.head.as_deref(), Some("grp_transform"), "{m:?}");
    assert_eq!(
        (m.left_eye.as_deref(), m.right_eye.as_deref()),
        (Some("eyeLeft"), Some("eyeRight"))
    );
    assert_eq!(m.neck, None);
    assert_eq!(m.channels.len(), 9);
    let frames = [40usize, 150, 300];
    check_joint(
        &mut rt,
        &stream,
        "eyeLeft",
        ["LeftEyeYaw", "LeftEyePitch", "LeftEyeRoll"],
        &frames,
    );
    check_joint(
        &mut rt,
        &stream,
        "eyeRight",
        ["RightEyeYaw", "RightEyePitch", "RightEyeRoll"],
        &frames,
    );
}

#[test]
fn head_angles_turn_what_carries_face_and_eyes() {
    // The recording with head angles written in: a slow turn, nod and tilt.
    let mut stream =
        read_livelink_csv(&data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv")).unwrap();
    let a = stream.aux_channels.len();
    let col = |n: &str| stream.aux_channels.iter().position(|c| c == n).unwrap();
    let (y, p, r) = (col("HeadYaw"), col("HeadPitch"), col("HeadRoll"));
    for k in 0..stream.times.len() {
        let s = k as f32 / stream.times.len() as f32;
        let row = &mut stream.aux_values[k * a..(k + 1) * a];
        row[y] = 0.5 * s;
        row[p] = -0.2 * s;
        row[r] = 0.1 * s;
    }
    let mut rt = facecap();
    rt.instance_mut(0)
        .unwrap()
        .play_stream(stream.clone())
        .unwrap();
    check_joint(
        &mut rt,
        &stream,
        "grp_transform",
        ["HeadYaw", "HeadPitch", "HeadRoll"],
        &[40, 150, 300],
    );
    // The eyes ride along: their world rotation includes the head's.
    let eye = node(&rt, "eyeLeft");
    let rest = rotation(&facecap().instance(0).unwrap().world()[eye]);
    let moved = rotation(&rt.instance(0).unwrap().world()[eye]);
    assert!(angle(moved, rest) > 0.3);
}

#[test]
fn motion_off_and_named_joints() {
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let mut on = facecap();
    on.instance_mut(0).unwrap().play_livelink_csv(&csv).unwrap();
    let mut off = facecap();
    off.instance_mut(0)
        .unwrap()
        .set_head_motion(false)
        .play_livelink_csv(&csv)
        .unwrap();
    assert!(!off.instance(0).unwrap().head_motion().unwrap().applied);
    on.update(2.0).unwrap();
    off.update(2.0).unwrap();
    let carrier = node(&off, "grp_transform");
    let rest = facecap().instance(0).unwrap().world()[carrier];
    assert_eq!(off.instance(0).unwrap().world()[carrier], rest);
    assert_ne!(on.posed(0).unwrap(), off.posed(0).unwrap());

    // A joint named by the caller takes the head's angles instead; an unknown name is refused.
    let mut named = facecap();
    named
        .instance_mut(0)
        .unwrap()
        .set_head_joints(HeadJointNames {
            head: Some("head".into()),
            ..Default::default()
        })
        .unwrap()
        .play_livelink_csv(&csv)
        .unwrap();
    // A named head is turned as it is (here the face mesh alone, not its eyes).
    let m = named.instance(0).unwrap().head_motion().unwrap();
    assert_eq!(m.head.as_deref(), Some("head"));
    let mut bad = facecap();
    bad.instance_mut(0)
        .unwrap()
        .play_livelink_csv(&csv)
        .unwrap();
    let e = bad
        .instance_mut(0)
        .unwrap()
        .set_head_joints(HeadJointNames {
            head: Some("Skull".into()),
            ..Default::default()
        })
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("head joint `Skull`") && e.contains("eyeLeft"),
        "{e}"
    );
}

#[test]
fn joint_overrides_turn_named_joints_in_their_own_frame_and_list_unknown_names() {
    let mut rt = facecap();
    let q = Quat::from_rotation_x(0.3) * Quat::from_rotation_y(-0.2);
    let unknown = rt
        .instance_mut(0)
        .unwrap()
        .set_joint_overrides(&[("grp_transform".into(), q), ("spine_02".into(), q)])
        .unwrap();
    assert_eq!(unknown, ["spine_02"]);
    rt.update(0.0).unwrap();
    let j = node(&rt, "grp_transform");
    let rest = rotation(&facecap().instance(0).unwrap().world()[j]);
    // Parent-relative on top of the local rotation: world = rest world · q.
    let got = rest.inverse() * rotation(&rt.instance(0).unwrap().world()[j]);
    assert!(angle(got, q) < 1e-5, "{got:?} vs {q:?}");
    // Rebuilt every frame: a second update does not turn it further.
    rt.update(0.1).unwrap();
    let again = rest.inverse() * rotation(&rt.instance(0).unwrap().world()[j]);
    assert!(angle(again, q) < 1e-5);
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_joint_overrides(&[("grp_transform".into(), Quat::from_xyzw(0.0, 0.0, 0.0, 2.0))])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("joint override 0 (`grp_transform`)"), "{e}");
    assert!(rt.instance_mut(0).unwrap().set_joint_worlds(None).is_err());
}
