//! The KHR_gaussian_splatting `.glb` writer: the container and JSON read back here byte by byte
//! (an independent parse), every attribute's values against the sink buffers (linear scales,
//! activated opacity, the DC coefficient, xyzw rotations reproducing the covariance), the
//! cleared slot skipped, degenerate geometry never non-finite.

use mien_core::io::ply::gaussian::{SH_C0, compose_covariance};
use mien_core::io::splat_glb::encode_splat_glb;
use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};

fn sample() -> SplatBuffers {
    let mut b = SplatBuffers::new(4);
    let covs = [
        ([1e-4, 0.0, 0.0, 4e-4], [0.0, 9e-4, 0.0, 0.0]),
        ([2e-4, 5e-5, 0.0, 1e-4], [1e-5, 3e-4, 0.0, 0.0]),
        // Degenerate: a flat, zero-thickness splat (floored, never −∞).
        ([1e-6, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
        ([0.0; 4], [0.0; 4]),
    ];
    for (i, (a, c)) in covs.iter().enumerate() {
        b.center[i] = [0.1 * i as f32, -0.25, 1.5, 0.0];
        b.cov_a[i] = *a;
        b.cov_b[i] = *c;
        b.color[i] = pack4x8unorm([0.2, 0.6, 0.9, if i == 3 { 0.0 } else { 0.8 }]);
    }
    b
}

/// The JSON and BIN chunks of a GLB (glTF 2.0 §4.4), checked.
fn chunks(g: &[u8]) -> (serde_json::Value, &[u8]) {
    let u = |k: usize| u32::from_le_bytes(g[k..k + 4].try_into().unwrap()) as usize;
    assert_eq!(&g[..4], b"glTF");
    assert_eq!(u(4), 2);
    assert_eq!(u(8), g.len());
    let jl = u(12);
    assert_eq!(&g[16..20], b"JSON");
    assert_eq!(jl % 4, 0);
    let json: serde_json::Value = serde_json::from_slice(&g[20..20 + jl]).unwrap();
    let bl = u(20 + jl);
    assert_eq!(&g[24 + jl..28 + jl], b"BIN\0");
    assert_eq!(28 + jl + bl, g.len());
    (json, &g[28 + jl..])
}

fn floats(json: &serde_json::Value, bin: &[u8], name: &str) -> (String, Vec<f32>) {
    let prim = &json["meshes"][0]["primitives"][0];
    let a = &json["accessors"][prim["attributes"][name].as_u64().unwrap() as usize];
    assert_eq!(a["componentType"], 5126);
    let v = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let (o, l) = (
        v["byteOffset"].as_u64().unwrap() as usize,
        v["byteLength"].as_u64().unwrap() as usize,
    );
    let data = bin[o..o + l]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (a["type"].as_str().unwrap().to_string(), data)
}

#[test]
fn every_attribute_carries_the_sink_values() {
    let b = sample();
    let (glb, rep) = encode_splat_glb(
        &b,
        &[SlotRange {
            offset: 0,
            count: 4,
        }],
    )
    .unwrap();
    assert_eq!((rep.written, rep.transparent_skipped), (3, 1));
    let (json, bin) = chunks(&glb);
    assert_eq!(json["extensionsUsed"][0], "KHR_gaussian_splatting");
    assert!(
        json.get("extensionsRequired").is_none(),
        "a points fallback, not required"
    );
    let prim = &json["meshes"][0]["primitives"][0];
    assert_eq!(prim["mode"], 0);
    assert_eq!(
        prim["extensions"]["KHR_gaussian_splatting"]["kernel"],
        "ellipse"
    );
    let (t, pos) = floats(&json, bin, "POSITION");
    assert_eq!(t, "VEC3");
    let (_, rot) = floats(&json, bin, "KHR_gaussian_splatting:ROTATION");
    let (_, scl) = floats(&json, bin, "KHR_gaussian_splatting:SCALE");
    let (_, opa) = floats(&json, bin, "KHR_gaussian_splatting:OPACITY");
    let (_, dc) = floats(&json, bin, "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0");
    let (_, col) = floats(&json, bin, "COLOR_0");
    assert!(
        pos.iter()
            .chain(&rot)
            .chain(&scl)
            .chain(&opa)
            .chain(&dc)
            .chain(&col)
            .all(|x| x.is_finite())
    );
    let acc = &json["accessors"][prim["attributes"]["POSITION"].as_u64().unwrap() as usize];
    assert_eq!(acc["min"][0].as_f64().unwrap() as f32, 0.0);
    assert!((acc["max"][0].as_f64().unwrap() as f32 - 0.2).abs() < 1e-7);
    for i in 0..3 {
        assert_eq!(&pos[3 * i..3 * i + 3], &b.center[i][..3]);
        let rgba = b.rgba(i);
        assert!((opa[i] - rgba[3]).abs() < 1e-7);
        for k in 0..3 {
            let want = (f64::from(rgba[k]) - 0.5) / SH_C0;
            assert!((f64::from(dc[3 * i + k]) - want).abs() < 1e-5);
        }
        // Linear σ and an xyzw quaternion rebuild the covariance (composed here in f64).
        let q = &rot[4 * i..4 * i + 4];
        let ls = [0, 1, 2].map(|k| f64::from(scl[3 * i + k]).ln());
        let c = compose_covariance(ls, [q[3], q[0], q[1], q[2]].map(f64::from)).unwrap();
        let w = b.covariance(i);
        let big = w.iter().flatten().fold(1e-14f32, |m, x| m.max(x.abs()));
        for r in 0..3 {
            for s in 0..3 {
                assert!(
                    ((c[r][s] as f32) - w[r][s]).abs() <= 1e-4 * big,
                    "slot {i}: {c:?} vs {w:?}"
                );
            }
        }
    }
}
