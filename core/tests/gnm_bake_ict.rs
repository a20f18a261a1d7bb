//! Baking the real ICT-FaceKit head (26,719 vertices, 57 shape OBJs in centimetres; MIT, © 2020
//! USC ICT) into a pack: counts, regions, names, the ARKit table, eyes, determinism, the round
//! trip, the fp16 error of every delta against the documented bound, and `forward::pose` with one
//! coefficient at 1.0 reproducing that shape's OBJ — the references computed here in f64 from the
//! OBJ text with a reader of the test's own. The bake runs once per file (`OnceLock`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mien_core::anim::arkit::{ARKIT_52, arkit_index};
use mien_core::gnm::arkit::{ArkitGnmMap, ArkitGnmTerm};
use mien_core::gnm::bake::{BakeOptions, Baked, EyeSource, Units, bake_obj_folder};
use mien_core::gnm::forward::{joint_world, pose};
use mien_core::gnm::pack::GnmPack;

mod support;

/// f32 unit roundoff, 2⁻²⁴.
const U: f64 = 1.0 / 16_777_216.0;

fn ict() -> PathBuf {
    support::data_dir().join("ict-facekit")
}

fn baked() -> &'static Baked {
    static B: OnceLock<Baked> = OnceLock::new();
    B.get_or_init(|| bake_obj_folder(&ict(), &BakeOptions::default(), &mut |_, _, _| {}).unwrap())
}

/// The test's own reader: the `v` lines of an OBJ as f64, in the file's centimetres.
fn positions(path: &Path) -> Vec<[f64; 3]> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let x: Vec<f64> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
            [x[0], x[1], x[2]]
        })
        .collect()
}

/// The neutral and every shape (by file stem), read once.
fn sources() -> &'static (Vec<[f64; 3]>, HashMap<String, Vec<[f64; 3]>>) {
    static S: OnceLock<(Vec<[f64; 3]>, HashMap<String, Vec<[f64; 3]>>)> = OnceLock::new();
    S.get_or_init(|| {
        let neutral = positions(&ict().join("generic_neutral_mesh.obj"));
        let shapes = std::fs::read_dir(ict())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".obj") && n != "generic_neutral_mesh.obj")
            .map(|n| (n[..n.len() - 4].to_owned(), positions(&ict().join(&n))))
            .collect();
        (neutral, shapes)
    })
}

fn term(region: &str, index: usize) -> ArkitGnmTerm {
    ArkitGnmTerm {
        region: region.into(),
        index,
        gain: 1.0,
    }
}

#[test]
fn ict_counts_regions_names_and_table() {
    let b = baked();
    let (p, r) = (&b.pack, &b.report);
    assert_eq!((p.vertex_count(), p.coeff_count()), (26_719, 57));
    assert_eq!((r.units.input.as_str(), r.units.to_metres), ("cm", 0.01));
    let regions: Vec<(&str, usize)> = p
        .header
        .head_ext
        .regions
        .iter()
        .map(|(n, c)| (n.as_str(), *c))
        .collect();
    assert_eq!(
        regions,
        [
            ("left_eye", 7),
            ("right_eye", 7),
            ("brows", 6),
            ("lower_face", 35),
            ("pupils", 2)
        ]
    );
    assert!(p.header.head_ext.reduced.is_none());
    let names = &p.header.names;
    assert_eq!(
        names[..7],
        [
            "eyeBlink_L",
            "eyeLookDown_L",
            "eyeLookIn_L",
            "eyeLookOut_L",
            "eyeLookUp_L",
            "eyeSquint_L",
            "eyeWide_L"
        ]
    );
    assert_eq!(
        names[14..20],
        [
            "browDown_L",
            "browDown_R",
            "browInnerUp_L",
            "browInnerUp_R",
            "browOuterUp_L",
            "browOuterUp_R"
        ]
    );
    assert_eq!(names[55..], ["PupilDilate_L", "PupilDilate_R"]);
    // Every shape file is a coefficient, named by its stem.
    let mut files: Vec<String> = std::fs::read_dir(ict())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".obj") && n != "generic_neutral_mesh.obj")
        .map(|n| n[..n.len() - 4].to_owned())
        .collect();
    files.sort();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, files);

    let t = p.header.arkit.as_ref().unwrap();
    assert_eq!(t["eyeBlinkLeft"], vec![term("left_eye", 0)]);
    assert_eq!(t["eyeLookUpRight"], vec![term("right_eye", 4)]);
    assert_eq!(t["browInnerUp"], vec![term("brows", 2), term("brows", 3)]);
    assert_eq!(
        t["cheekPuff"],
        vec![term("lower_face", 0), term("lower_face", 1)]
    );
    assert_eq!(t["mouthSmileLeft"].len(), 1);
    assert_eq!(t.len(), 51);
    assert_eq!(r.arkit_missing, ["tongueOut"]);
    assert_eq!(
        r.unmapped,
        [
            "cheekRaiser_L",
            "cheekRaiser_R",
            "PupilDilate_L",
            "PupilDilate_R"
        ]
    );
    assert!(r.fallback.is_empty() && r.empty.is_empty());
    // Each table term names the coefficient of the shape it is for.
    for (ch, terms) in t {
        for tm in terms {
            let k = p.header.head_ext.slice(&tm.region).unwrap().start + tm.index;
            let canon = mien_core::anim::canon::canonicalize(&names[k]);
            let want = arkit_index(ch).unwrap();
            assert!(
                matches!(canon, Some(mien_core::anim::canon::Canon::Arkit(i)) | Some(mien_core::anim::canon::Canon::Half { arkit: i, .. }) if i == want),
                "{ch} → {}",
                names[k]
            );
        }
    }
    // The table drives the pack: browInnerUp moves both halves, eyeBlinkLeft the left blink.
    let map = ArkitGnmMap::build(&p.header.head_ext, t, 4.0, true).unwrap();
    assert!(map.dropped.is_empty());
    let mut w = [0.0f32; 52];
    w[arkit_index("browInnerUp").unwrap()] = 0.5;
    w[arkit_index("eyeBlinkLeft").unwrap()] = 1.0;
    let mut out = vec![0.0; map.dim];
    map.map(&w, &mut out);
    assert_eq!((out[0], out[16], out[17], out[1]), (1.0, 0.5, 0.5, 0.0));
    assert_eq!(ARKIT_52.len(), 52);
}

#[test]
fn ict_eyes_skin_and_topology() {
    let p = &baked().pack;
    let v = p.vertex_count();
    // Eyeballs 21451–24590 split by the sign of x: 1570 each, weight 1, nothing else.
    let left: f32 = p.eye_weights[..v].iter().sum();
    let right: f32 = p.eye_weights[v..].iter().sum();
    assert_eq!((left, right), (1570.0, 1570.0));
    assert!(
        p.eye_weights[..v]
            .iter()
            .enumerate()
            .all(|(i, w)| *w == 0.0 || ((21451..=24590).contains(&i) && p.neutral[i][0] > 0.0))
    );
    // Sphere centres, computed independently (f64 normal equations about the origin, Python):
    // left (3.135872, 3.607311, 8.018067) cm; the right is its mirror.
    let want = [0.031_358_72f32, 0.036_073_11, 0.080_180_67];
    for k in 0..3 {
        assert!(
            (p.eye_positions[0][k] - want[k]).abs() < 2e-7,
            "{:?}",
            p.eye_positions
        );
        let mirrored = if k == 0 { -want[k] } else { want[k] };
        assert!(
            (p.eye_positions[1][k] - mirrored).abs() < 2e-7,
            "{:?}",
            p.eye_positions
        );
    }
    // One root joint, identity; every vertex fully on it.
    assert_eq!(p.header.joints.len(), 1);
    assert!(
        p.skin_index.iter().all(|i| *i == [0; 4])
            && p.skin_weight.iter().all(|w| *w == [1.0, 0.0, 0.0, 0.0])
    );
    // 25,836 quads kept and split in two, 548 triangles; UV seams mean no per-vertex uv.
    assert_eq!(p.quads.as_ref().map(Vec::len), Some(25_836));
    assert_eq!(p.faces.len(), 2 * 25_836 + 548);
    assert!(p.uv.is_none() && baked().report.uv.contains("seams"));
    assert!(p.seam.is_none());
    // Provenance: names, not paths; no time stamps.
    let src = serde_json::to_string(&p.header.source).unwrap();
    assert!(
        src.contains("\"neutral\":\"generic_neutral_mesh.obj\"")
            && !src.contains("/work")
            && !src.contains(&*ict().to_string_lossy()),
        "{src}"
    );
}

#[test]
fn ict_packs_byte_identically_and_round_trips() {
    let b = baked();
    let again = bake_obj_folder(&ict(), &BakeOptions::default(), &mut |_, _, _| {}).unwrap();
    assert!(again.bytes == b.bytes, "two bakes differ");
    let parsed = GnmPack::parse(&b.bytes, "ict.aosrig").unwrap();
    assert_eq!(parsed, b.pack);
    assert_eq!(parsed.to_bytes().unwrap(), b.bytes);
    assert_eq!(b.report.bytes, b.bytes.len() as u64);
    // An explicit unit gives the same pack content (only the rule's wording differs).
    let cm = bake_obj_folder(
        &ict(),
        &BakeOptions {
            units: Units::Centimetres,
            eyes: EyeSource::Range {
                first: 21451,
                last: 24590,
            },
            ..Default::default()
        },
        &mut |_, _, _| {},
    )
    .unwrap();
    assert_eq!(
        (
            cm.pack.neutral == b.pack.neutral,
            cm.pack.basis == b.pack.basis,
            cm.pack.eye_positions == b.pack.eye_positions
        ),
        (true, true, true)
    );
}

#[test]
fn ict_fp16_error_is_within_the_documented_bound() {
    let p = &baked().pack;
    let (neutral, shapes) = sources();
    for (a, b) in p.neutral.iter().zip(neutral) {
        for k in 0..3 {
            assert_eq!(a[k], (b[k] * 0.01) as f32);
        }
    }
    let mut worst = (0.0f64, 0.0f64, String::new());
    for (k, name) in p.header.names.iter().enumerate() {
        let shape = &shapes[name];
        let deltas: Vec<[f64; 3]> = shape
            .iter()
            .zip(neutral)
            .map(|(s, n)| [0, 1, 2].map(|a| (s[a] - n[a]) * 0.01))
            .collect();
        let amax = deltas.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        assert_eq!(p.basis_scale[k], amax as f32, "{name}");
        let s = f64::from(p.basis_scale[k]);
        for (v, d) in deltas.iter().enumerate() {
            for a in 0..3 {
                let back = f64::from(p.basis_at(v, k, a)) * s;
                let err = (back - d[a]).abs();
                // fp16 rounding of δ/s (|δ|·2⁻¹¹, subnormal floor s·2⁻²⁵) plus a few f64 ulps.
                let bound = d[a].abs() / 2048.0
                    + s / 33_554_432.0
                    + 4.0 * f64::EPSILON * (shape[v][a].abs() + neutral[v][a].abs()) * 0.01;
                assert!(
                    err <= bound,
                    "{name} vertex {v} axis {a}: error {err:e} > bound {bound:e}"
                );
                if err > worst.0 {
                    worst = (err, bound, name.clone());
                }
            }
        }
    }
    // The measured error is what the report says, and it is not vacuous.
    let r = &baked().report;
    assert_eq!(r.fp16_max_error.0, worst.0);
    assert!(worst.0 > 1e-7 && worst.0 < 3e-5, "{worst:?}");
    assert!(r.fp16_error_over_bound <= 1.0);
    assert!(
        (r.max_delta.0 - 0.041_987).abs() < 1e-5 && r.max_delta.1 == "jawOpen",
        "{:?}",
        r.max_delta
    );
}

/// `pose` with coefficient k at 1.0 (every other 0, gaze 0, the rest skeleton) gives shape k's OBJ
/// in metres, every component within
/// `|δ|·2⁻¹¹ + s·2⁻²⁵` (the fp16 basis) `+ 2u·(|n| + |δ|)` (f32: the neutral, the product s·h and
/// the sum) `+ 4u·(|x| + |c|)` on eyeball vertices (the zero-angle turn about the eye centre c
/// still rounds `(p − c) + c`) `+ 4ε·(|n| + |x|)` (the f64 reference), with u = 2⁻²⁴, n the
/// neutral, δ the delta, x the shape, s the coefficient's scale.
#[test]
fn ict_pose_at_one_coefficient_reproduces_its_obj() {
    let p = &baked().pack;
    let (neutral, shapes) = sources();
    let v_n = p.vertex_count();
    let (mut jw, mut skipped, mut out) = (Vec::new(), Vec::new(), Vec::new());
    joint_world(p, &[], &mut jw, &mut skipped);
    let mut head_ext = vec![0.0f32; p.header.head_ext.dim()];
    // (largest error, its bound, shape); largest error / bound.
    let mut worst = (0.0f64, 0.0f64, String::new());
    let mut ratio = 0.0f64;
    for (k, name) in p.header.names.iter().enumerate() {
        let shape = &shapes[name];
        head_ext.fill(0.0);
        head_ext[k] = 1.0;
        pose(p, &head_ext, &jw, &mut out).unwrap();
        let s = f64::from(p.basis_scale[k]);
        for v in 0..v_n {
            let eye = (0..2).find(|&i| p.eye_weights[i * v_n + v] != 0.0);
            for a in 0..3 {
                let (n, x) = (neutral[v][a] * 0.01, shape[v][a] * 0.01);
                let d = (shape[v][a] - neutral[v][a]) * 0.01;
                let c = eye.map_or(0.0, |i| f64::from(p.eye_positions[i][a]).abs());
                let bound = d.abs() / 2048.0
                    + s / 33_554_432.0
                    + 2.0 * U * (n.abs() + d.abs())
                    + if eye.is_some() {
                        4.0 * U * (x.abs() + c)
                    } else {
                        0.0
                    }
                    + 4.0 * f64::EPSILON * (n.abs() + x.abs());
                let err = (f64::from(out[v][a]) - x).abs();
                assert!(
                    err <= bound,
                    "{name} vertex {v} axis {a}: posed {} OBJ {x} error {err:e} > bound {bound:e}",
                    out[v][a]
                );
                ratio = ratio.max(err / bound);
                if err > worst.0 {
                    worst = (err, bound, name.clone());
                }
            }
        }
    }
    eprintln!(
        "ICT pose at one coefficient: largest error {:.3e} m ({}; bound there {:.3e} m); largest error/bound {ratio:.3}",
        worst.0, worst.2, worst.1
    );
    // Not vacuous: the fp16 error shows, and stays a small fraction of a millimetre.
    assert!(worst.0 > 1e-7 && worst.0 < 3e-5, "{worst:?}");
}
