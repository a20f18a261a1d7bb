//! The glTF importer on facecap.glb (Face Cap, bannaflak.com, via three.js examples, MIT; see
//! DATA.md): quantised (`KHR_mesh_quantization`) and meshopt-compressed (`EXT_meshopt_compression`).
//!
//! The reference values here are decoded independently of the importer: the compressed buffer views
//! with meshoptimizer directly, quantised integers dequantised by hand, the weights compared with
//! `facecap_anim_weights_decoded.csv`, and the node world matrix computed in f64 from the JSON.

use std::path::PathBuf;

use mien_core::io::gltf::import_gltf;
use mien_core::rig::{ACTIVE_MORPH_LIMIT, Character, NodeId};

mod gltf_common;
use gltf_common::{apply, data, glb_bin, json_of, pose, world_of};

const WEIGHTS_CLIP: &str = "Key|Take 001|BaseLayer";
/// The head: node 2 instances mesh 2.
const HEAD_NODE: usize = 2;

fn path() -> PathBuf {
    data().join("facecap/facecap.glb")
}

fn load() -> Character {
    import_gltf(&path()).unwrap()
}

/// The CSV: header names and rows (time, 52 weights).
fn csv() -> (Vec<String>, Vec<Vec<f64>>) {
    let text =
        std::fs::read_to_string(data().join("facecap/facecap_anim_weights_decoded.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    (header, rows)
}

/// Decode `bufferViews[v]` from the GLB BIN chunk with meshoptimizer (views used here: ATTRIBUTES,
/// no filter, stride 4 or 8) or slice it when it is not compressed.
fn view_bytes(j: &serde_json::Value, bin: &[u8], v: usize) -> Vec<u8> {
    let view = &j["bufferViews"][v];
    let Some(x) = view["extensions"].get("EXT_meshopt_compression") else {
        let off = view["byteOffset"].as_u64().unwrap_or(0) as usize;
        return bin[off..off + view["byteLength"].as_u64().unwrap() as usize].to_vec();
    };
    assert_eq!(x["mode"], "ATTRIBUTES");
    assert!(x.get("filter").is_none_or(|f| f == "NONE"));
    let off = x["byteOffset"].as_u64().unwrap() as usize;
    let src = &bin[off..off + x["byteLength"].as_u64().unwrap() as usize];
    let count = x["count"].as_u64().unwrap() as usize;
    match x["byteStride"].as_u64().unwrap() {
        4 => meshopt::encoding::decode_vertex_buffer::<[u8; 4]>(src, count)
            .unwrap()
            .concat(),
        8 => meshopt::encoding::decode_vertex_buffer::<[u8; 8]>(src, count)
            .unwrap()
            .concat(),
        s => panic!("stride {s} not used by the views this test reads"),
    }
}

/// Accessor `a` as raw (non-normalized) VEC3 integers or scalars, dequantised by hand: the value of
/// each component as stored.
fn accessor_values(j: &serde_json::Value, bin: &[u8], a: usize) -> Vec<f64> {
    let acc = &j["accessors"][a];
    let v = acc["bufferView"].as_u64().unwrap() as usize;
    let bytes = view_bytes(j, bin, v);
    let stride = j["bufferViews"][v]["byteStride"]
        .as_u64()
        .map(|s| s as usize);
    let width = match acc["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        t => panic!("{t}"),
    };
    let ct = acc["componentType"].as_u64().unwrap();
    let size = match ct {
        5120 | 5121 => 1,
        5122 | 5123 => 2,
        _ => 4,
    };
    let stride = stride.unwrap_or(size * width);
    let off = acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    let mut out = Vec::new();
    for e in 0..acc["count"].as_u64().unwrap() as usize {
        for k in 0..width {
            let at = off + e * stride + k * size;
            out.push(match ct {
                5120 => f64::from(bytes[at] as i8),
                5121 => f64::from(bytes[at]),
                5122 => f64::from(i16::from_le_bytes([bytes[at], bytes[at + 1]])),
                5123 => f64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]])),
                5126 => f64::from(f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())),
                c => panic!("{c}"),
            });
        }
    }
    out
}

#[test]
fn imports_quickly_with_the_declared_counts() {
    let bytes = std::fs::read(path()).unwrap();
    let t = std::time::Instant::now();
    let c = mien_core::io::gltf::import_gltf_bytes(&bytes, None, "facecap.glb").unwrap();
    let took = t.elapsed();
    assert!(took.as_secs_f64() < 1.0, "import took {took:?}");
    let j = json_of(&path());
    assert_eq!(c.nodes.len(), 13);
    assert_eq!(c.meshes.len(), 4);
    for (m, want) in [530usize, 530, 2694, 614].into_iter().enumerate() {
        assert_eq!(c.meshes[m].primitives[0].vertex_count(), want);
        let idx = j["meshes"][m]["primitives"][0]["indices"].as_u64().unwrap() as usize;
        assert_eq!(
            c.meshes[m].primitives[0].indices.len() as u64,
            j["accessors"][idx]["count"].as_u64().unwrap()
        );
    }
    assert_eq!(c.meshes[2].target_count(), 52);
    assert_eq!(
        c.required_extensions,
        [
            "KHR_mesh_quantization",
            "EXT_meshopt_compression",
            "KHR_texture_basisu"
        ]
    );
    assert_eq!(c.clips.len(), 4);
    assert_eq!(c.scene_roots, vec![NodeId(12)]);
    // Target names: the 52 `_L/_R` names, in the CSV's column order.
    let (header, _) = csv();
    assert_eq!(c.meshes[2].target_names, header[1..]);
    let names = &c.meshes[2].target_names;
    let left: Vec<&String> = names.iter().filter(|n| n.ends_with("_L")).collect();
    assert!(
        left.len() == 18 && names.iter().any(|n| n == "eyeBlink_L"),
        "{names:?}"
    );
    assert!(
        left.iter()
            .all(|l| names.contains(&format!("{}_R", &l[..l.len() - 2]))),
        "every _L has its _R"
    );
    // tongueOut is an empty target: no CSR entries for target 51.
    assert!(
        c.meshes[2].primitives[0]
            .morph
            .entry_target()
            .iter()
            .all(|&t| t != 51)
    );
    // Quantised UVs were dequantised with the KHR_texture_transform (into [0, 1]).
    assert!(
        c.meshes[2].primitives[0]
            .uvs
            .iter()
            .all(|uv| uv.iter().all(|x| (-0.01..=1.01).contains(x)))
    );
}

/// Our weights clip equals the CSV at every key (the exact u8 code: |Δ| < 1/255, in fact the CSV's
/// 4-decimal rounding), and the raw u8 bytes of the output accessor read by hand; first key at
/// t = 0.0475 s.
#[test]
fn weights_clip_equals_the_csv() {
    let c = load();
    let clip = &c.clips[c.find_clip(WEIGHTS_CLIP).unwrap().index()];
    let s = &clip.channels[0].sampler;
    assert_eq!(clip.channels[0].node, NodeId(HEAD_NODE as u32));
    assert_eq!((s.times().len(), s.width()), (335, 52));
    assert!((s.times()[0] - 0.0475).abs() < 1e-7);
    let (_, rows) = csv();
    assert_eq!(rows.len(), 335);
    let j = json_of(&path());
    let bin = glb_bin(&path());
    let raw = accessor_values(&j, &bin, 121);
    for (k, row) in rows.iter().enumerate() {
        assert!(
            (f64::from(s.times()[k]) - row[0]).abs() < 1e-5,
            "key {k} time"
        );
        let ours = s.key_value(k);
        for t in 0..52 {
            let w = f64::from(ours[t]);
            assert!(
                (w - row[1 + t]).abs() <= 0.5e-4 + 1e-7,
                "key {k} target {t}: {w} vs {}",
                row[1 + t]
            );
            assert_eq!(
                (row[1 + t] * 255.0).round(),
                raw[52 * k + t],
                "CSV vs raw u8, key {k} target {t}"
            );
            assert!((w - raw[52 * k + t] / 255.0).abs() < 1e-7);
        }
    }
}

/// Posed head vertices equal `world · (base + Σ w·δ)` computed in f64 from meshopt-decoded views,
/// with weights from the raw keys (LINEAR between keys, clamped outside) limited by the documented
/// rule (the 32 largest |w|, ties → lower index: every facecap frame has 37–43 non-zero weights).
///
/// Tolerance: 1e-5 × the largest |coordinate|. The f32 path sums up to 32 deltas onto quantised
/// positions up to 14 187 (f32 spacing there 2⁻¹⁰), then applies an f32 world matrix; each step
/// rounds by about 2⁻²⁴ of the largest magnitude involved, a few dozen roundings in all.
#[test]
fn posed_head_equals_independent_decode() {
    let c = load();
    let j = json_of(&path());
    let bin = glb_bin(&path());
    let prim = &j["meshes"][2]["primitives"][0];
    let base = accessor_values(
        &j,
        &bin,
        prim["attributes"]["POSITION"].as_u64().unwrap() as usize,
    );
    let deltas: Vec<Vec<f64>> = prim["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| accessor_values(&j, &bin, t["POSITION"].as_u64().unwrap() as usize))
        .collect();
    assert_eq!((base.len(), deltas.len()), (2694 * 3, 52));
    let times = accessor_values(&j, &bin, 120);
    let raw = accessor_values(&j, &bin, 121);
    let key = |k: usize| -> Vec<f64> { (0..52).map(|t| raw[52 * k + t] / 255.0).collect() };
    let world = world_of(&j, HEAD_NODE);
    let mid = (times[100] + times[101]) / 2.0;
    let mut worst = 0.0f64;
    for t in [0.0, times[0], times[7], mid, 5.0, times[334], 30.0] {
        let mut w = if t <= times[0] {
            key(0)
        } else if t >= times[334] {
            key(334)
        } else {
            let k = times.iter().rposition(|&x| x <= t).unwrap();
            let s = (t - times[k]) / (times[k + 1] - times[k]);
            key(k)
                .iter()
                .zip(key(k + 1))
                .map(|(a, b)| a + s * (b - a))
                .collect()
        };
        // The active limit, computed here from DESIGN.md's rule.
        let mut order: Vec<usize> = (0..52).filter(|&i| w[i] != 0.0).collect();
        order.sort_by(|&a, &b| w[b].abs().total_cmp(&w[a].abs()).then(a.cmp(&b)));
        for &i in order.iter().skip(ACTIVE_MORPH_LIMIT) {
            w[i] = 0.0;
        }
        let (rig, posed) = pose(&c, Some(WEIGHTS_CLIP), t, |_| {});
        let inst = rig
            .instances
            .iter()
            .find(|i| i.node == NodeId(HEAD_NODE as u32))
            .unwrap();
        assert_eq!(inst.vertex_count, 2694);
        let want: Vec<[f64; 3]> = (0..2694)
            .map(|v| {
                let local = [0, 1, 2].map(|k| {
                    base[3 * v + k] + (0..52).map(|tg| w[tg] * deltas[tg][3 * v + k]).sum::<f64>()
                });
                apply(&world, local)
            })
            .collect();
        let scale = want.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
        let tol = 1e-5 * scale;
        for (v, want) in want.iter().enumerate() {
            let got = posed[inst.vertex_base as usize + v];
            for k in 0..3 {
                let e = (f64::from(got[k]) - want[k]).abs();
                worst = worst.max(e / scale);
                assert!(
                    e <= tol,
                    "t={t} vertex {v}: {got:?} vs {want:?} (tol {tol})"
                );
            }
        }
    }
    println!("facecap posed head: worst error {worst:.2e} of the largest coordinate");
}
