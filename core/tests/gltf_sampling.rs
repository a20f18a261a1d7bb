//! Animation sampling of an imported glTF against hand-computed values: a small glTF written here
//! (a base64 `data:` buffer) with LINEAR, STEP and CUBICSPLINE samplers on translation, scale,
//! rotation and morph weights, sampled inside, on and outside the keys (clamped).
//!
//! Cubic Hermite (glTF 2.0 Appendix C) with `s = (t − t₀)/Δt`:
//! `p = h00·v₀ + h10·Δt·b₀ + h01·v₁ + h11·Δt·a₁`, `h00 = 2s³−3s²+1`, `h10 = s³−2s²+s`,
//! `h01 = −2s³+3s²`, `h11 = s³−s²`. At s = ½: (½, ⅛, ½, −⅛); at s = ¼: (27/32, 9/64, 5/32, −3/64).

use mien_core::io::gltf::import_gltf_bytes;
use mien_core::rig::Character;
use serde_json::json;

mod gltf_common;
use gltf_common::{f32_bytes, with_data_uri};

/// The test file: node 0 has a 2-target triangle (weights: CUBICSPLINE), node 1 translation
/// LINEAR, node 2 scale STEP, node 3 translation CUBICSPLINE, node 4 rotation LINEAR.
fn character() -> Character {
    let h = std::f32::consts::FRAC_1_SQRT_2;
    #[rustfmt::skip]
    let floats: Vec<f32> = [
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0][..],          // 0: POSITION
        &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],                // 36: target 0
        &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],                // 72: target 1
        &[1.0, 2.0, 4.0],                                              // 108: times3
        &[0.0, 0.0, 0.0, 2.0, 4.0, -2.0, 3.0, 3.0, 3.0],               // 120: LINEAR translation
        &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0],                // 156: STEP scale
        &[0.0, 2.0],                                                   // 192: times2
        // 200: CUBICSPLINE weights, per key: 2 in-tangents, 2 values, 2 out-tangents.
        &[9.0, 9.0, 0.0, 2.0, 1.0, 0.0, 0.0, 3.0, 1.0, -2.0, 9.0, 9.0],
        // 248: CUBICSPLINE translation, per key: in-tangent, value, out-tangent.
        &[9.0, 9.0, 9.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 4.0, 0.0, 2.0, 0.0, 0.0, 9.0, 9.0, 9.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h, 0.0, 0.0, 1.0, 0.0],     // 320: rotations
    ]
    .concat();
    let bin = f32_bytes(&floats);
    assert_eq!(bin.len(), 368);
    let acc = |off: usize, ty: &str, count: usize| json!({"bufferView": 0, "byteOffset": off, "componentType": 5126, "type": ty, "count": count});
    let mut accessors = vec![acc(0, "VEC3", 3), acc(36, "VEC3", 3), acc(72, "VEC3", 3)];
    for a in accessors.iter_mut() {
        a["min"] = json!([-1, -1, -1]);
        a["max"] = json!([1, 1, 1]);
    }
    let mut times3 = acc(108, "SCALAR", 3);
    times3["min"] = json!([1.0]);
    times3["max"] = json!([4.0]);
    let mut times2 = acc(192, "SCALAR", 2);
    times2["min"] = json!([0.0]);
    times2["max"] = json!([2.0]);
    accessors.extend([
        times3,
        acc(120, "VEC3", 3),
        acc(156, "VEC3", 3),
        times2,
        acc(200, "SCALAR", 12),
        acc(248, "VEC3", 6),
        acc(320, "VEC4", 3),
    ]);
    let doc = json!({
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0, 1, 2, 3, 4]}],
        "nodes": [{"mesh": 0}, {}, {}, {}, {}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": [{"POSITION": 1}, {"POSITION": 2}]}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 368}],
        "accessors": accessors,
        "animations": [{
            "name": "all",
            "samplers": [
                {"input": 6, "output": 7, "interpolation": "CUBICSPLINE"},
                {"input": 3, "output": 4, "interpolation": "LINEAR"},
                {"input": 3, "output": 5, "interpolation": "STEP"},
                {"input": 6, "output": 8, "interpolation": "CUBICSPLINE"},
                {"input": 3, "output": 9}
            ],
            "channels": [
                {"sampler": 0, "target": {"node": 0, "path": "weights"}},
                {"sampler": 1, "target": {"node": 1, "path": "translation"}},
                {"sampler": 2, "target": {"node": 2, "path": "scale"}},
                {"sampler": 3, "target": {"node": 3, "path": "translation"}},
                {"sampler": 4, "target": {"node": 4, "path": "rotation"}}
            ]
        }]
    });
    import_gltf_bytes(&with_data_uri(doc, &bin), None, "sampling.gltf").unwrap()
}

fn close(a: &[f32], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (f64::from(*x) - y).abs() < 1e-6)
}

fn at(c: &Character, t: f64) -> mien_core::rig::Pose {
    let mut p = c.rest_pose();
    c.apply_clip(c.find_clip("all").unwrap(), t, &mut p);
    p
}

#[test]
fn linear_translation() {
    let c = character();
    for (t, want) in [
        (-3.0, [0.0, 0.0, 0.0]),
        (1.0, [0.0, 0.0, 0.0]),
        (1.5, [1.0, 2.0, -1.0]),
        (3.0, [2.5, 3.5, 0.5]),
        (4.0, [3.0; 3]),
        (10.0, [3.0; 3]),
    ] {
        assert!(
            close(&at(&c, t).locals[1].translation.to_array(), &want),
            "t={t}"
        );
    }
}

#[test]
fn step_scale() {
    let c = character();
    for (t, want) in [
        (0.5, 1.0),
        (1.0, 1.0),
        (1.99, 1.0),
        (2.0, 2.0),
        (3.9, 2.0),
        (4.0, 3.0),
        (9.0, 3.0),
    ] {
        assert!(
            close(&at(&c, t).locals[2].scale.to_array(), &[want; 3]),
            "t={t}: {:?}",
            at(&c, t).locals[2].scale
        );
    }
}

#[test]
fn cubic_spline_weights_use_the_per_key_in_value_out_layout() {
    let c = character();
    assert_eq!(c.clips[0].channels[0].sampler.width(), 2);
    let table = [
        (-1.0, [0.0, 2.0]),
        (0.0, [0.0, 2.0]),
        (0.5, [0.4375, 1.09375]),
        (1.0, [0.75, -0.75]),
        (2.0, [1.0, -2.0]),
        (5.0, [1.0, -2.0]),
    ];
    for (t, want) in table {
        assert!(
            close(&at(&c, t).weights[0], &want),
            "t={t}: {:?}",
            at(&c, t).weights[0]
        );
    }
}

#[test]
fn cubic_spline_translation() {
    let c = character();
    for (t, want) in [
        (-2.0, [0.0; 3]),
        (0.5, [0.59375, -0.375, 0.0]),
        (1.0, [1.25, -1.0, 0.0]),
        (2.0, [2.0, 0.0, 0.0]),
        (3.0, [2.0, 0.0, 0.0]),
    ] {
        assert!(
            close(&at(&c, t).locals[3].translation.to_array(), &want),
            "t={t}: {:?}",
            at(&c, t).locals[3].translation
        );
    }
}

#[test]
fn linear_rotation_is_slerp_about_z() {
    let c = character();
    for (t, deg) in [
        (0.0, 0.0f64),
        (1.5, 45.0),
        (2.0, 90.0),
        (3.0, 135.0),
        (4.0, 180.0),
        (7.0, 180.0),
    ] {
        let q = at(&c, t).locals[4].rotation;
        let half = deg.to_radians() / 2.0;
        let want = [0.0, 0.0, half.sin(), half.cos()];
        let dot: f64 = q
            .to_array()
            .iter()
            .zip(want)
            .map(|(a, b)| f64::from(*a) * b)
            .sum();
        assert!((dot.abs() - 1.0).abs() < 1e-6, "t={t}: {q:?} vs {want:?}");
    }
}

#[test]
fn posed_weights_move_the_triangle() {
    let c = character();
    // At t = 1 the weights are [0.75, −0.75]: vertex 0 = (0,0,0) + 0.75·(0,0,1) − 0.75·(1,0,0).
    let (_, posed) = gltf_common::pose(&c, Some("all"), 1.0, |_| {});
    assert!(close(&posed[0], &[-0.75, 0.0, 0.75]), "{:?}", posed[0]);
    assert!(close(&posed[1], &[1.0, 0.0, 0.75]), "{:?}", posed[1]);
}
