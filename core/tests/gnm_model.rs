//! The linear head model's CPU reference (`mien_core::gnm`): the head_ext layout (383 + 4, the
//! 68-float reduced view and its per-region expansion, slices, names), hand-worked forward sums,
//! the eye rotation order on the diagonal (where `qy·qx` and `qx·qy` differ), eye-weight blending,
//! the seam, LBS with the bind transform folded into the skin matrices, joint overrides (parent-
//! relative, propagated, rebuilt from rest, unknown names skipped), the ARKit map (slots, dropped
//! terms, clamp, gaze signs, no per-frame allocation), and a proptest of `forward` against an f64
//! reference on random packs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;

use glam::{Mat4, Quat, Vec3};
use mien_core::Error;
use mien_core::anim::arkit::{ARKIT_COUNT, arkit_index};
use mien_core::gnm::arkit::{ArkitGnmMap, ArkitGnmTable, ArkitGnmTerm, GAZE_RADIANS_PER_UNIT};
use mien_core::gnm::forward::{eye_rotation, forward, joint_world, pose};
use mien_core::gnm::layout::HeadExtLayout;
use mien_core::gnm::pack::{GnmPack, PackHeader, PackJoint};
use proptest::prelude::*;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const IDENTITY: [f32; 16] = [
    1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.,
];

fn row_major(m: Mat4) -> [f32; 16] {
    m.transpose().to_cols_array()
}

/// Pack fp16 values (given as f32, each exactly representable) two per word, low half first.
fn pack_halves(values: &[f32]) -> Vec<u32> {
    values
        .chunks(2)
        .map(|c| {
            let lo = u32::from(half::f16::from_f32(c[0]).to_bits());
            let hi = c
                .get(1)
                .map_or(0, |x| u32::from(half::f16::from_f32(*x).to_bits()));
            lo | (hi << 16)
        })
        .collect()
}

/// A pack with one root joint at rest identity, regions `[("a", e)]`, the given arrays.
fn pack(neutral: Vec<[f32; 3]>, basis: &[f32], scale: Vec<f32>) -> GnmPack {
    let v = neutral.len();
    let e = scale.len();
    GnmPack {
        header: PackHeader {
            version: 1,
            model: "gnm".into(),
            units: "m".into(),
            vertex_count: v as u64,
            coeff_count: e as u64,
            head_ext: HeadExtLayout {
                regions: vec![("a".into(), e)],
                reduced: None,
            },
            max_influence: 4,
            joints: vec![PackJoint {
                name: "root".into(),
                parent: -1,
            }],
            eye_joints: None,
            bind_transform: IDENTITY,
            names: Vec::new(),
            arkit: None,
            source: serde_json::Value::Null,
            buffers: Vec::new(),
        },
        neutral,
        basis: pack_halves(basis),
        basis_scale: scale,
        eye_positions: [[0.0; 3]; 2],
        eye_weights: vec![0.0; 2 * v],
        faces: Vec::new(),
        quads: None,
        uv: None,
        seam: None,
        skin_index: vec![[0; 4]; v],
        skin_weight: vec![[1.0, 0.0, 0.0, 0.0]; v],
        rest_world: vec![IDENTITY],
    }
}

fn close(a: [f32; 3], b: [f64; 3], tol: f64) -> bool {
    (0..3).all(|i| (f64::from(a[i]) - b[i]).abs() <= tol)
}

#[test]
fn gnm_layout_is_383_plus_4_with_a_68_float_reduced_view() {
    let l = HeadExtLayout::gnm();
    assert_eq!(l.expr_dim(), 383);
    assert_eq!(l.dim(), 387);
    assert_eq!(l.reduced_dim(), Some(68));
    let s = l.slices();
    assert_eq!(s[0], ("left_eye".to_owned(), 0..100));
    assert_eq!(s[1], ("right_eye".to_owned(), 100..200));
    assert_eq!(s[2], ("lower_face".to_owned(), 200..350));
    assert_eq!(s[3], ("tongue".to_owned(), 350..382));
    assert_eq!(s[4], ("pupils".to_owned(), 382..383));
    let names = l.names();
    assert_eq!(names.len(), 387);
    assert_eq!(names[0], "left_eye_000");
    assert_eq!(names[99], "left_eye_099");
    assert_eq!(names[200], "lower_face_000");
    assert_eq!(names[382], "pupils_000");
    assert_eq!(
        &names[383..],
        ["gaze_pitch_L", "gaze_yaw_L", "gaze_pitch_R", "gaze_yaw_R"]
    );
    let v: Vec<f32> = (0..387).map(|i| i as f32).collect();
    let (e, g) = l.split(&v).unwrap();
    assert_eq!(e.len(), 383);
    assert_eq!(g, &[383.0, 384.0, 385.0, 386.0]);
    assert!(matches!(
        l.split(&v[..386]),
        Err(Error::Mismatch {
            expected: 387,
            found: 386,
            ..
        })
    ));
}

#[test]
fn reduced_view_expands_to_the_start_of_each_region() {
    let l = HeadExtLayout::gnm();
    // Reduced value r at reduced index i: 1000 + i, so each lands somewhere checkable.
    let reduced: Vec<f32> = (0..68).map(|i| 1000.0 + i as f32).collect();
    let full = l.expand(&reduced).unwrap();
    assert_eq!(full.len(), 387);
    // left_eye: reduced 0..16 → full 0..16, then zeros to 100.
    assert_eq!(full[0], 1000.0);
    assert_eq!(full[15], 1015.0);
    assert_eq!(full[16], 0.0);
    assert_eq!(full[99], 0.0);
    // right_eye: reduced 16..32 → full 100..116.
    assert_eq!(full[100], 1016.0);
    assert_eq!(full[115], 1031.0);
    assert_eq!(full[116], 0.0);
    // lower_face: reduced 32..56 → full 200..224.
    assert_eq!(full[200], 1032.0);
    assert_eq!(full[223], 1055.0);
    assert_eq!(full[224], 0.0);
    // tongue: reduced 56..63 → full 350..357.
    assert_eq!(full[350], 1056.0);
    assert_eq!(full[356], 1062.0);
    assert_eq!(full[357], 0.0);
    // pupils: reduced 63 → full 382; gaze 64..68 → 383..387.
    assert_eq!(full[382], 1063.0);
    assert_eq!(&full[383..], &[1064.0, 1065.0, 1066.0, 1067.0]);
    let nonzero = full.iter().filter(|x| **x != 0.0).count();
    assert_eq!(nonzero, 68);
    assert!(matches!(
        l.expand(&reduced[..67]),
        Err(Error::Mismatch {
            expected: 68,
            found: 67,
            ..
        })
    ));
    let no_reduced = HeadExtLayout {
        regions: l.regions.clone(),
        reduced: None,
    };
    assert!(matches!(
        no_reduced.expand(&reduced),
        Err(Error::Invalid { .. })
    ));
}

#[test]
fn layout_validation_names_the_region() {
    let dup = HeadExtLayout {
        regions: vec![("a".into(), 2), ("a".into(), 3)],
        reduced: None,
    };
    let msg = dup.validate("x.aosrig").unwrap_err().to_string();
    assert!(
        msg.contains("x.aosrig") && msg.contains("headExt.regions") && msg.contains("twice"),
        "{msg}"
    );
    let zero = HeadExtLayout {
        regions: vec![("a".into(), 0)],
        reduced: None,
    };
    assert!(
        zero.validate("x")
            .unwrap_err()
            .to_string()
            .contains("headExt.regions")
    );
    let big = HeadExtLayout {
        regions: vec![("a".into(), 2)],
        reduced: Some(vec![("a".into(), 3)]),
    };
    assert!(
        big.validate("x")
            .unwrap_err()
            .to_string()
            .contains("headExt.reduced")
    );
}

#[test]
fn forward_hand_worked_two_vertices() {
    // V=2, E=2. Basis (v,e,axis) values exactly representable in f16.
    // v0: e0=(1, 0, 0.5), e1=(0, -2, 0); v1: e0=(0.25, 0.25, 0), e1=(1, 1, 1)
    let basis = [
        1.0, 0.0, 0.5, 0.0, -2.0, 0.0, 0.25, 0.25, 0.0, 1.0, 1.0, 1.0,
    ];
    let p = pack(
        vec![[0.0, 1.0, 2.0], [10.0, 0.0, 0.0]],
        &basis,
        vec![0.5, 0.25],
    );
    let mut out = Vec::new();
    // c = (2, 4), gaze 0: scaled = (1, 1).
    forward(&p, &[2.0, 4.0, 0.0, 0.0, 0.0, 0.0], &mut out).unwrap();
    assert_eq!(out[0], [1.0, -1.0, 2.5]);
    assert_eq!(out[1], [11.25, 1.25, 1.0]);
    let err = forward(&p, &[1.0, 2.0], &mut out).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Mismatch {
                expected: 6,
                found: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn eye_rotation_is_qx_pitch_times_qy_yaw_on_the_diagonal() {
    let (pitch, yaw) = (0.5f64, 0.7f64);
    let q = eye_rotation(pitch as f32, yaw as f32);
    // Ry(yaw) first, then Rx(pitch), applied to the forward axis (0, 0, 1):
    // Ry: (sin y, 0, cos y); Rx: (x, y cos p − z sin p, y sin p + z cos p).
    let want = [yaw.sin(), -yaw.cos() * pitch.sin(), yaw.cos() * pitch.cos()];
    // The reversed composition (Rx first, then Ry) gives (cos p sin y, −sin p, cos p cos y).
    let reversed = [
        pitch.cos() * yaw.sin(),
        -pitch.sin(),
        pitch.cos() * yaw.cos(),
    ];
    let got = (q * Vec3::Z).to_array();
    assert!(close(got, want, 1e-6), "{got:?} vs {want:?}");
    assert!(
        !close(got, reversed, 1e-3),
        "the diagonal must separate the two orders"
    );
    // Sign conventions: pitch > 0 looks down (−Y), yaw > 0 toward the character's left (+X).
    assert!((eye_rotation(0.3, 0.0) * Vec3::Z).y < 0.0);
    assert!((eye_rotation(0.0, 0.3) * Vec3::Z).x > 0.0);

    // Through forward: a vertex 1 unit in front of the left eye centre, full weight on the left
    // eye; the right eye's weight 0 leaves it alone.
    let c = [0.03, 0.1, 0.05];
    let mut p = pack(
        vec![[c[0], c[1], c[2] + 1.0], [c[0], c[1], c[2] + 1.0]],
        &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        vec![1.0],
    );
    p.eye_positions = [c, [-0.03, 0.1, 0.05]];
    // eye_weights (2,V): left [1, 0.5], right [0, 0].
    p.eye_weights = vec![1.0, 0.5, 0.0, 0.0];
    let mut out = Vec::new();
    forward(&p, &[0.0, pitch as f32, yaw as f32, 0.9, -0.9], &mut out).unwrap();
    let c64 = c.map(f64::from);
    let full = [c64[0] + want[0], c64[1] + want[1], c64[2] + want[2]];
    assert!(close(out[0], full, 1e-6), "{:?} vs {full:?}", out[0]);
    // Weight 0.5 blends linearly between the rest and the fully turned position.
    let rest = [c64[0], c64[1], c64[2] + 1.0];
    let half_w: [f64; 3] = std::array::from_fn(|i| rest[i] + 0.5 * (full[i] - rest[i]));
    assert!(close(out[1], half_w, 1e-6), "{:?} vs {half_w:?}", out[1]);
}

#[test]
fn the_right_eye_uses_the_last_two_gaze_angles_about_its_own_centre() {
    let c = [-0.03, 0.1, 0.05];
    let mut p = pack(vec![[c[0], c[1] + 1.0, c[2]]], &[0.0, 0.0, 0.0], vec![1.0]);
    p.eye_positions = [[0.03, 0.1, 0.05], c];
    p.eye_weights = vec![0.0, 1.0];
    let mut out = Vec::new();
    // Pitch 90° about +X takes +Y to +Z.
    forward(
        &p,
        &[0.0, 0.4, 0.4, std::f32::consts::FRAC_PI_2, 0.0],
        &mut out,
    )
    .unwrap();
    let want = [f64::from(c[0]), f64::from(c[1]), f64::from(c[2]) + 1.0];
    assert!(close(out[0], want, 1e-6), "{:?} vs {want:?}", out[0]);
}

/// Two joints: a root translated by (0, 1, 0) and a child 0.5 above it; one vertex fully on the
/// child, one half on each.
fn skinned_pack() -> GnmPack {
    let mut p = pack(vec![[0.0, 1.5, 0.1], [0.2, 1.2, 0.0]], &[0.0; 6], vec![1.0]);
    p.header.joints = vec![
        PackJoint {
            name: "neck".into(),
            parent: -1,
        },
        PackJoint {
            name: "head".into(),
            parent: 0,
        },
    ];
    p.rest_world = vec![
        row_major(Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0))),
        row_major(Mat4::from_translation(Vec3::new(0.0, 1.5, 0.0))),
    ];
    p.skin_index = vec![[1, 0, 0, 0], [0, 1, 0, 0]];
    p.skin_weight = vec![[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]];
    p
}

#[test]
fn joint_overrides_are_parent_relative_propagated_and_rebuilt_from_rest() {
    let p = skinned_pack();
    let (mut w, mut skipped) = (Vec::new(), Vec::new());
    joint_world(&p, &[], &mut w, &mut skipped);
    assert!(skipped.is_empty());
    for (got, rest) in w.iter().zip(&p.rest_world) {
        assert!(
            row_major(*got)
                .iter()
                .zip(rest)
                .all(|(a, b)| (a - b).abs() < 1e-6)
        );
    }
    // Rotate the neck 90° about Z: the head (0.5 above the neck) swings to −X.
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    joint_world(
        &p,
        &[("neck".into(), q), ("no_such_joint".into(), Quat::IDENTITY)],
        &mut w,
        &mut skipped,
    );
    assert_eq!(skipped, ["no_such_joint"]);
    let head = w[1].w_axis.truncate();
    assert!((head - Vec3::new(-0.5, 1.0, 0.0)).length() < 1e-6, "{head}");
    // A second call without overrides is back at rest (nothing accumulates).
    joint_world(&p, &[], &mut w, &mut skipped);
    assert!((w[1].w_axis.truncate() - Vec3::new(0.0, 1.5, 0.0)).length() < 1e-6);
}

#[test]
fn lbs_folds_the_bind_transform_into_the_skin_matrices() {
    let mut p = skinned_pack();
    let bind = Mat4::from_translation(Vec3::new(0.0, 0.0, 0.25));
    p.header.bind_transform = row_major(bind);
    let (mut w, mut skipped) = (Vec::new(), Vec::new());
    let mut out = Vec::new();
    // At rest the skin matrices are `bind`: positions move by (0, 0, 0.25).
    joint_world(&p, &[], &mut w, &mut skipped);
    pose(&p, &[0.0, 0.0, 0.0, 0.0, 0.0], &w, &mut out).unwrap();
    assert!(close(out[0], [0.0, 1.5, 0.35], 1e-6), "{:?}", out[0]);
    assert!(close(out[1], [0.2, 1.2, 0.25], 1e-6), "{:?}", out[1]);
    // Neck rotated 90° about Z (pivot (0,1,0)): world_j·rest_j⁻¹ rotates about the pivot.
    // Vertex 0 (on the head, which follows the neck): bind first → (0, 1.5, 0.35); about (0,1,0):
    // (x, y−1) = (0, 0.5) → (−0.5, 0) → (−0.5, 1.0, 0.35).
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    joint_world(&p, &[("neck".into(), q)], &mut w, &mut skipped);
    pose(&p, &[0.0, 0.0, 0.0, 0.0, 0.0], &w, &mut out).unwrap();
    assert!(close(out[0], [-0.5, 1.0, 0.35], 1e-6), "{:?}", out[0]);
    // Vertex 1 half on each (both rotate the same way): (0.2, 0.2) → (−0.2, 0.2) → (−0.2, 1.2, 0.25).
    assert!(close(out[1], [-0.2, 1.2, 0.25], 1e-6), "{:?}", out[1]);
    // Wrong joint count.
    assert!(matches!(
        pose(&p, &[0.0; 5], &w[..1], &mut out),
        Err(Error::Mismatch {
            expected: 2,
            found: 1,
            ..
        })
    ));
}

#[test]
fn the_seam_is_added_after_the_eyes_and_before_skinning() {
    let mut p = skinned_pack();
    p.seam = Some(vec![[0.0, 0.0, 0.0], [0.0, -0.2, 0.0]]);
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let (mut w, mut skipped, mut out) = (Vec::new(), Vec::new(), Vec::new());
    joint_world(&p, &[("neck".into(), q)], &mut w, &mut skipped);
    pose(&p, &[0.0; 5], &w, &mut out).unwrap();
    // Vertex 1 + seam = (0.2, 1.0, 0): about (0, 1, 0) → (0, 1.2, 0): the seam was rotated with it.
    assert!(close(out[1], [0.0, 1.2, 0.0], 1e-6), "{:?}", out[1]);
}

fn table(entries: &[(&str, &str, usize, f32)]) -> ArkitGnmTable {
    let mut t: ArkitGnmTable = BTreeMap::new();
    for (ch, region, index, gain) in entries {
        t.entry((*ch).to_owned()).or_default().push(ArkitGnmTerm {
            region: (*region).to_owned(),
            index: *index,
            gain: *gain,
        });
    }
    t
}

#[test]
fn arkit_map_resolves_slots_drops_outside_terms_and_clamps() {
    let l = HeadExtLayout {
        regions: vec![("left_eye".into(), 2), ("lower_face".into(), 3)],
        reduced: None,
    };
    let t = table(&[
        ("eyeBlinkLeft", "left_eye", 1, 2.0),
        ("jawOpen", "lower_face", 0, 3.0),
        ("jawOpen", "lower_face", 2, -1.5),
        ("mouthSmileLeft", "lower_face", 0, 2.0),
        ("tongueOut", "tongue", 0, 1.0),
        ("cheekPuff", "lower_face", 3, 1.0),
    ]);
    let m = ArkitGnmMap::build(&l, &t, 4.0, false).unwrap();
    assert_eq!(m.dim, 9);
    assert_eq!(m.term_count(), 4);
    assert_eq!(m.dropped.len(), 2);
    assert!(
        m.dropped
            .iter()
            .any(|d| d.contains("tongueOut") && d.contains("tongue")),
        "{:?}",
        m.dropped
    );
    assert!(
        m.dropped
            .iter()
            .any(|d| d.contains("cheekPuff") && d.contains("lower_face[3]")),
        "{:?}",
        m.dropped
    );
    let mut w = [0.0f32; ARKIT_COUNT];
    w[arkit_index("eyeBlinkLeft").unwrap()] = 0.5;
    w[arkit_index("jawOpen").unwrap()] = 1.0;
    w[arkit_index("mouthSmileLeft").unwrap()] = 0.5;
    let mut out = vec![9.0; 9];
    assert_eq!(m.map(&w, &mut out), 0);
    // slot 1 = 2·0.5; slot 2 = 3·1 + 2·0.5 = 4 (at the clamp); slot 4 = −1.5; gaze off → 0.
    assert_eq!(out, [0.0, 1.0, 4.0, 0.0, -1.5, 0.0, 0.0, 0.0, 0.0]);
    w[arkit_index("jawOpen").unwrap()] = 2.0;
    assert_eq!(m.map(&w, &mut out), 1, "one coefficient clamped");
    assert_eq!(out[2], 4.0, "3·2 + 1 = 7 clamps to 4");
    assert_eq!(out[4], -3.0);
    let tight = ArkitGnmMap::build(&l, &t, 1.0, false).unwrap();
    assert_eq!(tight.map(&w, &mut out), 2);
    assert_eq!((out[2], out[4]), (1.0, -1.0));
    // Refusals: a channel that is not ARKit-52, a non-finite gain, a bad clamp.
    assert!(
        ArkitGnmMap::build(&l, &table(&[("jawOpenn", "lower_face", 0, 1.0)]), 4.0, true)
            .unwrap_err()
            .to_string()
            .contains("jawOpenn")
    );
    assert!(
        ArkitGnmMap::build(
            &l,
            &table(&[("jawOpen", "lower_face", 0, f32::NAN)]),
            4.0,
            true
        )
        .is_err()
    );
    assert!(ArkitGnmMap::build(&l, &t, 0.0, true).is_err());
}

#[test]
fn arkit_gaze_is_20_degrees_per_unit_with_design_signs() {
    let l = HeadExtLayout {
        regions: vec![("a".into(), 1)],
        reduced: None,
    };
    let m = ArkitGnmMap::build(&l, &BTreeMap::new(), 4.0, true).unwrap();
    let k = 20.0f64.to_radians();
    assert!((f64::from(GAZE_RADIANS_PER_UNIT) - k).abs() < 1e-7);
    let set = |pairs: &[(&str, f32)]| {
        let mut w = [0.0f32; ARKIT_COUNT];
        for (n, x) in pairs {
            w[arkit_index(n).unwrap()] = *x;
        }
        w
    };
    let mut out = vec![0.0; 5];
    // Both eyes looking down fully: pitch = +20°.
    m.map(
        &set(&[("eyeLookDownLeft", 1.0), ("eyeLookDownRight", 1.0)]),
        &mut out,
    );
    assert!(close([out[1], out[3], 0.0], [k, k, 0.0], 1e-6), "{out:?}");
    // Up half: pitch −10°.
    m.map(
        &set(&[("eyeLookUpLeft", 0.5), ("eyeLookUpRight", 0.5)]),
        &mut out,
    );
    assert!(
        close([out[1], out[3], 0.0], [-k / 2.0, -k / 2.0, 0.0], 1e-6),
        "{out:?}"
    );
    // Both eyes toward the character's left: the left eye looks out, the right eye looks in;
    // yaw > 0 for both.
    m.map(
        &set(&[("eyeLookOutLeft", 1.0), ("eyeLookInRight", 1.0)]),
        &mut out,
    );
    assert!(close([out[2], out[4], 0.0], [k, k, 0.0], 1e-6), "{out:?}");
    m.map(
        &set(&[("eyeLookInLeft", 1.0), ("eyeLookOutRight", 1.0)]),
        &mut out,
    );
    assert!(close([out[2], out[4], 0.0], [-k, -k, 0.0], 1e-6), "{out:?}");
    // Each channel moves only its own angle.
    for (name, slot) in [
        ("eyeLookDownLeft", 1),
        ("eyeLookOutLeft", 2),
        ("eyeLookDownRight", 3),
        ("eyeLookInRight", 4),
    ] {
        m.map(&set(&[(name, 1.0)]), &mut out);
        for s in 1..5 {
            assert_eq!(out[s] != 0.0, s == slot, "{name} moved slot {s}: {out:?}");
        }
    }
}

#[test]
fn arkit_map_allocates_nothing_per_frame() {
    let l = HeadExtLayout::gnm();
    let t = table(&[
        ("jawOpen", "lower_face", 0, 1.0),
        ("eyeBlinkLeft", "left_eye", 3, 1.0),
        ("tongueOut", "tongue", 1, 0.5),
    ]);
    let m = ArkitGnmMap::build(&l, &t, 4.0, true).unwrap();
    let mut out = vec![0.0; m.dim];
    let w = [0.3f32; ARKIT_COUNT];
    m.map(&w, &mut out);
    let before = ALLOCS.with(Cell::get);
    for _ in 0..100 {
        m.map(&w, &mut out);
    }
    assert_eq!(ALLOCS.with(Cell::get), before);
    assert!(
        (out[200] - 0.3).abs() < 1e-7
            && (out[3] - 0.3).abs() < 1e-7
            && (out[351] - 0.15).abs() < 1e-7
    );
}

fn arb_pack() -> impl Strategy<Value = (GnmPack, Vec<f32>)> {
    (1usize..6, 1usize..9).prop_flat_map(|(v, e)| {
        (
            prop::collection::vec(prop::array::uniform3(-1.0f32..1.0), v),
            prop::collection::vec(-2.0f32..2.0, v * e * 3),
            prop::collection::vec(0.01f32..0.2, e),
            prop::collection::vec(0.0f32..1.0, 2 * v),
            prop::collection::vec(-3.0f32..3.0, e),
            prop::array::uniform4(-0.6f32..0.6),
            prop::array::uniform3(-0.1f32..0.1),
            prop::array::uniform3(-0.1f32..0.1),
        )
            .prop_map(|(neutral, basis, scale, eyew, coeffs, gaze, c0, c1)| {
                // Round the basis to f16 first so the reference sees the stored values.
                let basis: Vec<f32> = basis
                    .iter()
                    .map(|x| half::f16::from_f32(*x).to_f32())
                    .collect();
                let mut p = pack(neutral, &basis, scale);
                p.eye_weights = eyew;
                p.eye_positions = [c0, c1];
                let mut h = coeffs;
                h.extend_from_slice(&gaze);
                (p, h)
            })
    })
}

/// `forward` in f64: the same formula written out with matrices built from the angles.
fn reference(p: &GnmPack, h: &[f32]) -> Vec<[f64; 3]> {
    let v_n = p.vertex_count();
    let e = p.coeff_count();
    let rot = |pitch: f64, yaw: f64| {
        let (sp, cp, sy, cy) = (pitch.sin(), pitch.cos(), yaw.sin(), yaw.cos());
        // Rx(p)·Ry(y)
        [
            [cy, 0.0, sy],
            [sp * sy, cp, -sp * cy],
            [-cp * sy, sp, cp * cy],
        ]
    };
    let r = [
        rot(f64::from(h[e]), f64::from(h[e + 1])),
        rot(f64::from(h[e + 2]), f64::from(h[e + 3])),
    ];
    (0..v_n)
        .map(|v| {
            let mut q: [f64; 3] = p.neutral[v].map(f64::from);
            for k in 0..e {
                let s = f64::from(h[k]) * f64::from(p.basis_scale[k]);
                for a in 0..3 {
                    q[a] += s * f64::from(p.basis_at(v, k, a));
                }
            }
            for i in 0..2 {
                let w = f64::from(p.eye_weights[i * v_n + v]);
                let c = p.eye_positions[i].map(f64::from);
                let d = [q[0] - c[0], q[1] - c[1], q[2] - c[2]];
                let t: [f64; 3] = std::array::from_fn(|a| {
                    r[i][a][0] * d[0] + r[i][a][1] * d[1] + r[i][a][2] * d[2] + c[a]
                });
                q = std::array::from_fn(|a| q[a] + w * (t[a] - q[a]));
            }
            q
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("MIEN_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(128)))]

    #[test]
    fn forward_matches_an_f64_reference((p, h) in arb_pack()) {
        let mut out = Vec::new();
        forward(&p, &h, &mut out).unwrap();
        let want = reference(&p, &h);
        // f32 error: each term c·s·B is at most 3·0.2·2 = 1.2, E ≤ 8 terms plus a neutral ≤ 1 → the
        // magnitude stays under ~11; f32 rounding of a sum of n terms is ≤ n·2⁻²⁴·Σ|terms| and the
        // rotation adds a few ulps of the same magnitude. 1e-4 is ~15× that bound.
        for (g, w) in out.iter().zip(&want) {
            prop_assert!(close(*g, *w, 1e-4), "{:?} vs {:?}", g, w);
        }
    }
}
