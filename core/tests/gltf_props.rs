//! Property tests of the glTF importer (fixed-seed proptest):
//!
//! - sparse accessors (with and without a base buffer view, any index and value component type,
//!   normalized or not) decode to the dense array computed here (glTF 2.0 §3.6.2.3, §3.11);
//! - TRIANGLE_STRIP / TRIANGLE_FAN index lists become the triangles of §3.7.2.1;
//! - random byte damage to a valid GLB never panics: the import succeeds or names the file.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mien_core::io::gltf::import_gltf_bytes;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::json;

mod gltf_common;
use gltf_common::{data, with_data_uri};

/// Fixed seed, no persistence files (STYLE 9).
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(7),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A one-vertex, one-target mesh whose weights animation (STEP, keys at 0..n) has the output
/// accessor under test; returns the file and the expected weight per key.
#[derive(Debug, Clone)]
struct SparseCase {
    /// componentType of the values: 5126, 5120, 5121, 5122, 5123 (ints normalized).
    value_type: u32,
    /// componentType of the sparse indices: 5121, 5123, 5125.
    index_type: u32,
    /// Dense base values as raw components (None: no bufferView, zeros).
    base: Option<Vec<i64>>,
    /// Overridden element indices (strictly increasing) and their raw values.
    overrides: Vec<(usize, i64)>,
    count: usize,
}

fn value_range(t: u32) -> (i64, i64) {
    match t {
        5120 => (-128, 127),
        5121 => (0, 255),
        5122 => (-32768, 32767),
        5123 => (0, 65535),
        _ => (-1000, 1000),
    }
}

fn sparse_case() -> impl Strategy<Value = SparseCase> {
    (
        prop::sample::select(vec![5126u32, 5120, 5121, 5122, 5123]),
        prop::sample::select(vec![5121u32, 5123, 5125]),
        1usize..60,
        any::<bool>(),
    )
        .prop_flat_map(|(vt, it, count, has_base)| {
            let (lo, hi) = value_range(vt);
            let base = if has_base {
                prop::collection::vec(lo..=hi, count).prop_map(Some).boxed()
            } else {
                Just(None).boxed()
            };
            let overrides = prop::collection::btree_map(0..count, lo..=hi, 1..=count)
                .prop_map(|m| m.into_iter().collect::<Vec<_>>());
            (base, overrides).prop_map(move |(base, overrides)| SparseCase {
                value_type: vt,
                index_type: it,
                base,
                overrides,
                count,
            })
        })
}

fn raw_bytes(t: u32, v: i64) -> Vec<u8> {
    match t {
        5120 => (v as i8).to_le_bytes().to_vec(),
        5121 => (v as u8).to_le_bytes().to_vec(),
        5122 => (v as i16).to_le_bytes().to_vec(),
        5123 => (v as u16).to_le_bytes().to_vec(),
        5125 => (v as u32).to_le_bytes().to_vec(),
        _ => (v as f32 / 8.0).to_le_bytes().to_vec(),
    }
}

/// The spec's decode of one raw value (normalized for integers).
fn decoded(t: u32, v: i64) -> f64 {
    let v = v as f64;
    match t {
        5120 => (v / 127.0).max(-1.0),
        5121 => v / 255.0,
        5122 => (v / 32767.0).max(-1.0),
        5123 => v / 65535.0,
        _ => v / 8.0,
    }
}

fn pad4(b: &mut Vec<u8>) {
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
}

fn build(case: &SparseCase) -> Vec<u8> {
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut view = |bin: &mut Vec<u8>, bytes: Vec<u8>| {
        pad4(bin);
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()}));
        bin.extend(bytes);
        views.len() - 1
    };
    let pos = view(
        &mut bin,
        [0f32, 0.0, 0.0, 0.0, 1.0, 0.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
    );
    let times = view(
        &mut bin,
        (0..case.count)
            .flat_map(|k| (k as f32).to_le_bytes())
            .collect(),
    );
    let idx = view(
        &mut bin,
        case.overrides
            .iter()
            .flat_map(|(i, _)| raw_bytes(case.index_type, *i as i64))
            .collect(),
    );
    let vals = view(
        &mut bin,
        case.overrides
            .iter()
            .flat_map(|(_, v)| raw_bytes(case.value_type, *v))
            .collect(),
    );
    let mut output = json!({
        "componentType": case.value_type, "type": "SCALAR", "count": case.count, "normalized": case.value_type != 5126,
        "sparse": {"count": case.overrides.len(), "indices": {"bufferView": idx, "componentType": case.index_type}, "values": {"bufferView": vals}}
    });
    if let Some(base) = &case.base {
        output["bufferView"] = json!(view(
            &mut bin,
            base.iter()
                .flat_map(|v| raw_bytes(case.value_type, *v))
                .collect()
        ));
    }
    pad4(&mut bin);
    let doc = json!({
        "asset": {"version": "2.0"},
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": [{"POSITION": 1}]}]}],
        "accessors": [
            {"bufferView": pos, "componentType": 5126, "type": "VEC3", "count": 1, "min": [0, 0, 0], "max": [0, 0, 0]},
            {"bufferView": pos, "byteOffset": 12, "componentType": 5126, "type": "VEC3", "count": 1, "min": [0, 1, 0], "max": [0, 1, 0]},
            {"bufferView": times, "componentType": 5126, "type": "SCALAR", "count": case.count, "min": [0], "max": [case.count - 1]},
            output
        ],
        "bufferViews": views,
        "animations": [{"samplers": [{"input": 2, "output": 3, "interpolation": "STEP"}], "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}]
    });
    with_data_uri(doc, &bin)
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn sparse_accessors_decode_to_the_dense_array(case in sparse_case()) {
        let bytes = build(&case);
        let c = import_gltf_bytes(&bytes, None, "sparse.gltf").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let s = &c.clips[0].channels[0].sampler;
        let mut want: Vec<f64> = match &case.base {
            Some(b) => b.iter().map(|&v| decoded(case.value_type, v)).collect(),
            None => vec![0.0; case.count],
        };
        for &(i, v) in &case.overrides {
            want[i] = decoded(case.value_type, v);
        }
        for (k, w) in want.iter().enumerate() {
            let got = f64::from(s.key_value(k)[0]);
            prop_assert!((got - w).abs() <= 1e-7 * w.abs().max(1.0), "key {}: {} vs {}", k, got, w);
        }
    }

    #[test]
    fn strips_and_fans_follow_the_spec(nv in 3usize..12, raw in prop::collection::vec(0u16..12, 0..30), fan in any::<bool>()) {
        let raw: Vec<u16> = raw.into_iter().map(|i| i % nv as u16).collect();
        let positions: Vec<f32> = (0..nv).flat_map(|i| [i as f32, (i * i) as f32, 0.0]).collect();
        let mut bin: Vec<u8> = positions.iter().flat_map(|x| x.to_le_bytes()).collect();
        let idx_off = bin.len();
        bin.extend(raw.iter().flat_map(|i| i.to_le_bytes()));
        pad4(&mut bin);
        let mut prim = json!({"attributes": {"POSITION": 0}, "mode": if fan { 6 } else { 5 }});
        let mut accessors = vec![json!({"bufferView": 0, "componentType": 5126, "type": "VEC3", "count": nv, "min": [0, 0, 0], "max": [nv, nv * nv, 0]})];
        let mut views = vec![json!({"buffer": 0, "byteLength": idx_off})];
        if !raw.is_empty() {
            prim["indices"] = json!(1);
            accessors.push(json!({"bufferView": 1, "componentType": 5123, "type": "SCALAR", "count": raw.len()}));
            views.push(json!({"buffer": 0, "byteOffset": idx_off, "byteLength": 2 * raw.len()}));
        }
        let doc = json!({"asset": {"version": "2.0"}, "meshes": [{"primitives": [prim]}], "accessors": accessors, "bufferViews": views});
        let c = import_gltf_bytes(&with_data_uri(doc, &bin), None, "strip.gltf").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let v: Vec<u32> = if raw.is_empty() { (0..nv as u32).collect() } else { raw.iter().map(|&i| u32::from(i)).collect() };
        let mut want = Vec::new();
        for i in 0..v.len().saturating_sub(2) {
            if fan {
                want.extend([v[i + 1], v[i + 2], v[0]]);
            } else {
                want.extend([v[i], v[i + 1 + i % 2], v[i + 2 - i % 2]]);
            }
        }
        prop_assert_eq!(&c.meshes[0].primitives[0].indices, &want);
    }
}

#[test]
fn out_of_order_sparse_indices_are_named() {
    let case = SparseCase {
        value_type: 5126,
        index_type: 5121,
        base: None,
        overrides: vec![(3, 8), (1, 16)],
        count: 5,
    };
    let e = import_gltf_bytes(&build(&case), None, "bad.gltf")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("accessors[3].sparse.indices") && e.contains("strictly increase"),
        "{e}"
    );
    let case = SparseCase {
        overrides: vec![(1, 8), (7, 16)],
        ..case
    };
    let e = import_gltf_bytes(&build(&case), None, "bad.gltf")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("accessors[3].sparse.indices") && e.contains("≥ accessor count 5"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn damaged_glb_never_panics(flips in prop::collection::vec((0usize..2100, any::<u8>()), 1..8), cut in prop::option::of(0usize..2100)) {
        let good = std::fs::read(data().join("khronos/gltf-rs__box_sparse.glb")).unwrap();
        prop_assert_eq!(good.len(), 2100);
        let mut b = good.clone();
        for (at, v) in flips {
            b[at] = v;
        }
        if let Some(n) = cut {
            b.truncate(n);
        }
        let r = catch_unwind(AssertUnwindSafe(|| import_gltf_bytes(&b, None, "damaged.glb")));
        prop_assert!(r.is_ok(), "panicked");
        if let Ok(Err(e)) = r {
            prop_assert!(e.to_string().contains("damaged.glb"), "{}", e);
        }
    }
}

#[test]
fn undamaged_glb_imports() {
    import_gltf_bytes(
        &std::fs::read(data().join("khronos/gltf-rs__box_sparse.glb")).unwrap(),
        None,
        "box.glb",
    )
    .unwrap();
}

/// An accessor without a bufferView costs no file bytes: its size is capped before anything is
/// allocated (a 200-byte file asking for 2²¹ MAT4 zeros is refused at once).
#[test]
fn implicit_zero_accessors_are_capped() {
    let doc = br#"{"asset":{"version":"2.0"},"accessors":[{"componentType":5126,"type":"MAT4","count":2097152}]}"#;
    let e = import_gltf_bytes(doc, None, "big.gltf")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("big.gltf") && e.contains("accessors[0].count"),
        "{e}"
    );
}
