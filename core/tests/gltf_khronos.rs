//! The glTF importer on the Khronos sample models (`../shared/data/khronos`, CC0 / CC-BY 4.0, see
//! DATA.md) and gltf-rs's sparse box (MIT/Apache): counts read independently from each file's JSON,
//! SimpleMorph posed against the `.bin` bytes read by hand, sparse weights, CesiumMan's skin,
//! MorphStressTest's clips, and MorphPrimitivesTest's shared weight array.

use std::path::{Path, PathBuf};

use mien_core::anim::Property;
use mien_core::io::gltf::import_gltf;
use mien_core::rig::{Character, NodeId};

mod gltf_common;
use gltf_common::{apply, data, json_of, pose, stage, world_of};

fn khronos(rel: &str) -> PathBuf {
    data().join("khronos").join(rel)
}

fn load(path: &Path) -> Character {
    let (_keep, p) = stage(path);
    import_gltf(&p).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn f32_at(b: &[u8], at: usize) -> f64 {
    f64::from(f32::from_le_bytes(b[at..at + 4].try_into().unwrap()))
}

const MODELS: &[&str] = &[
    "AnimatedMorphCube/AnimatedMorphCube.gltf",
    "AnimatedMorphSphere/AnimatedMorphSphere.gltf",
    "CesiumMan/CesiumMan_chromedays.glb",
    "MorphPrimitivesTest/MorphPrimitivesTest.gltf",
    "MorphStressTest/MorphStressTest.gltf",
    "MorphStressTest_embedded.gltf",
    "SimpleMorph/SimpleMorph.gltf",
    "gltf-rs__box_sparse.gltf",
    "gltf-rs__box_sparse.glb",
    "simple_skin/simple_skin.gltf",
    "simple_skin/quad_skin.glb",
];

/// Counts from the JSON alone: per mesh, per primitive (vertices, triangles, targets); joints per
/// skin; clip names; target names when `extras.targetNames` is there.
#[test]
fn every_model_imports_with_the_counts_its_json_declares() {
    for rel in MODELS {
        let path = khronos(rel);
        let j = json_of(&path);
        let c = load(&path);
        let acc = |i: &serde_json::Value| {
            j["accessors"][i.as_u64().unwrap() as usize]["count"]
                .as_u64()
                .unwrap() as usize
        };
        assert_eq!(
            c.nodes.len(),
            j["nodes"].as_array().map_or(0, Vec::len),
            "{rel}: nodes"
        );
        let meshes = j["meshes"].as_array().unwrap();
        assert_eq!(c.meshes.len(), meshes.len(), "{rel}: meshes");
        for (mi, m) in meshes.iter().enumerate() {
            let prims = m["primitives"].as_array().unwrap();
            assert_eq!(
                c.meshes[mi].primitives.len(),
                prims.len(),
                "{rel}: primitives"
            );
            for (pi, p) in prims.iter().enumerate() {
                let ours = &c.meshes[mi].primitives[pi];
                assert_eq!(
                    p["mode"].as_u64().unwrap_or(4),
                    4,
                    "{rel}: all samples are triangle lists"
                );
                assert_eq!(
                    ours.vertex_count(),
                    acc(&p["attributes"]["POSITION"]),
                    "{rel}: vertices"
                );
                assert_eq!(ours.indices.len(), acc(&p["indices"]), "{rel}: indices");
                let targets = p["targets"].as_array().map_or(0, Vec::len);
                assert_eq!(ours.morph.target_count(), targets, "{rel}: targets");
                assert_eq!(
                    ours.normals.len(),
                    ours.vertex_count(),
                    "{rel}: normals (read or computed)"
                );
                assert_eq!(
                    ours.influences.is_some(),
                    p["attributes"].get("JOINTS_0").is_some(),
                    "{rel}: skinned"
                );
            }
            if let Some(names) = m["extras"]["targetNames"].as_array() {
                let names: Vec<&str> = names.iter().map(|n| n.as_str().unwrap()).collect();
                assert_eq!(c.meshes[mi].target_names, names, "{rel}: target names");
            } else {
                let want: Vec<String> = (0..c.meshes[mi].target_count())
                    .map(|i| format!("target_{i}"))
                    .collect();
                assert_eq!(
                    c.meshes[mi].target_names, want,
                    "{rel}: default target names"
                );
            }
        }
        let skins: Vec<usize> = j["skins"].as_array().map_or(vec![], |s| {
            s.iter()
                .map(|s| s["joints"].as_array().unwrap().len())
                .collect()
        });
        assert_eq!(
            c.skins.iter().map(|s| s.joints.len()).collect::<Vec<_>>(),
            skins,
            "{rel}: joints"
        );
        let clips: Vec<Option<String>> = j["animations"].as_array().map_or(vec![], |a| {
            a.iter()
                .map(|a| a["name"].as_str().map(str::to_owned))
                .collect()
        });
        assert_eq!(
            c.clips.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            clips,
            "{rel}: clips"
        );
        let scene = j["scene"].as_u64().unwrap_or(0) as usize;
        let roots: Vec<NodeId> = j["scenes"][scene]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| NodeId(n.as_u64().unwrap() as u32))
            .collect();
        assert_eq!(c.scene_roots, roots, "{rel}: scene roots");
    }
}

/// Hand-checked numbers (from reading the files): vertices / triangles / targets.
#[test]
fn hand_checked_counts() {
    let c = load(&khronos("AnimatedMorphCube/AnimatedMorphCube.gltf"));
    let p = &c.meshes[0].primitives[0];
    assert_eq!(
        (
            p.vertex_count(),
            p.indices.len() / 3,
            p.morph.target_count(),
            p.tangents.len()
        ),
        (24, 12, 2, 24)
    );
    assert!(
        p.morph.entry_tangent().is_some() && p.morph.entry_normal().is_some(),
        "tangent and normal deltas kept"
    );
    let c = load(&khronos("AnimatedMorphSphere/AnimatedMorphSphere.gltf"));
    assert_eq!(c.meshes[0].primitives[0].vertex_count(), 1876);
    assert_eq!(c.clips[0].name.as_deref(), Some("Globe"));
    let c = load(&khronos("simple_skin/quad_skin.glb"));
    assert_eq!((c.nodes.len(), c.skins[0].joints.len()), (23, 10));
    // JOINTS_0..2 / WEIGHTS_0..2 merged to 4 influences, renormalised, reported.
    assert!(
        c.notes
            .iter()
            .any(|n| n.message.contains("3 influence sets merged")),
        "{:?}",
        c.notes
    );
    for w in &c.meshes[0].primitives[0]
        .influences
        .as_ref()
        .unwrap()
        .weights
    {
        assert!(
            (w.iter().sum::<f32>() - 1.0).abs() < 1e-6 && w.windows(2).all(|p| p[0] >= p[1]),
            "{w:?}"
        );
    }
    let c = load(&khronos("simple_skin/simple_skin.gltf"));
    assert_eq!(
        (
            c.meshes[0].primitives[0].vertex_count(),
            c.skins[0].joints.len(),
            c.clips.len()
        ),
        (10, 2, 1)
    );
    assert_eq!(c.clips[0].channels[0].property, Property::Rotation);
}

/// SimpleMorph posed at several times equals `base + Σ w·δ` in f64 from the `.bin` bytes (read at
/// the accessor offsets by hand), with weights interpolated by hand from the animation `.bin`,
/// then transformed by the node's world matrix (identity here, computed from the JSON anyway).
/// Tolerance 1e-6 m: values are ≤ 1 in magnitude and the f32 path rounds a handful of times
/// (≈ 6e-8 each).
#[test]
fn simple_morph_pose_equals_hand_decoded_blend() {
    let dir = khronos("SimpleMorph");
    let c = load(&dir.join("SimpleMorph.gltf"));
    let j = json_of(&dir.join("SimpleMorph.gltf"));
    let geo = std::fs::read(dir.join("simpleMorphGeometry.bin")).unwrap();
    let anim = std::fs::read(dir.join("simpleMorphAnimation.bin")).unwrap();
    // bufferView 1 starts at byte 8, stride 12; accessors 1, 2, 3 at offsets 0, 36, 72.
    let vec3 =
        |acc_off: usize, v: usize| [0, 1, 2].map(|k| f32_at(&geo, 8 + acc_off + 12 * v + 4 * k));
    let base: Vec<[f64; 3]> = (0..3).map(|v| vec3(0, v)).collect();
    let d: Vec<Vec<[f64; 3]>> = [36, 72]
        .iter()
        .map(|&o| (0..3).map(|v| vec3(o, v)).collect())
        .collect();
    // Indices (u16 at byte 0): 0 1 2.
    assert_eq!(c.meshes[0].primitives[0].indices, vec![0, 1, 2]);
    assert_eq!(
        [0, 2, 4].map(|o| u16::from_le_bytes([geo[o], geo[o + 1]])),
        [0, 1, 2]
    );
    let times: Vec<f64> = (0..5).map(|k| f32_at(&anim, 4 * k)).collect();
    let keys: Vec<[f64; 2]> = (0..5)
        .map(|k| [f32_at(&anim, 20 + 8 * k), f32_at(&anim, 24 + 8 * k)])
        .collect();
    let world = world_of(&j, 0);
    for t in [-1.0, 0.0, 0.3, 1.0, 1.75, 2.5, 3.99, 4.0, 9.0] {
        let w = if t <= times[0] {
            keys[0]
        } else if t >= times[4] {
            keys[4]
        } else {
            let k = times.iter().rposition(|&x| x <= t).unwrap();
            let s = (t - times[k]) / (times[k + 1] - times[k]);
            [0, 1].map(|i| keys[k][i] + s * (keys[k + 1][i] - keys[k][i]))
        };
        let (_, posed) = pose(&c, Some("0"), t, |_| {});
        for v in 0..3 {
            let local = [0, 1, 2].map(|k| base[v][k] + w[0] * d[0][v][k] + w[1] * d[1][v][k]);
            let want = apply(&world, local);
            for k in 0..3 {
                assert!(
                    (f64::from(posed[v][k]) - want[k]).abs() < 1e-6,
                    "t={t} v={v}: {:?} vs {want:?}",
                    posed[v]
                );
            }
        }
    }
    // The rest pose uses mesh.weights [0.5, 0.5].
    assert_eq!(c.rest_pose().weights[0], vec![0.5, 0.5]);
}

/// The weights output accessor of box_sparse has no bufferView and one sparse value: decoded as
/// [0, 1] over times [1, 2] in both the .gltf and the .glb.
#[test]
fn sparse_weights_without_buffer_view() {
    for rel in ["gltf-rs__box_sparse.gltf", "gltf-rs__box_sparse.glb"] {
        let c = load(&khronos(rel));
        let s = &c.clips[0].channels[0].sampler;
        assert_eq!(s.times(), &[1.0, 2.0], "{rel}");
        assert_eq!(
            (s.key_value(0), s.key_value(1)),
            (&[0.0f32][..], &[1.0f32][..]),
            "{rel}"
        );
        let mut w = [9.0f32];
        for (t, want) in [
            (0.0, 0.0),
            (1.0, 0.0),
            (1.25, 0.25),
            (1.5, 0.5),
            (2.0, 1.0),
            (7.0, 1.0),
        ] {
            s.sample(t, &mut w);
            assert!((w[0] - want).abs() < 1e-7, "{rel} t={t}: {w:?}");
        }
    }
    // In place, the .gltf's `box_sparse.bin` is missing (the data folder renamed it): a clear error.
    let e = import_gltf(&khronos("gltf-rs__box_sparse.gltf"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("buffers[0].uri") && e.contains("box_sparse.bin"),
        "{e}"
    );
}

/// CesiumMan: a 19-joint skin, JOINTS_0 stored as u16 (checked in the JSON), every vertex's
/// weights sum to 1 and name joints inside the skin.
#[test]
fn cesium_man_skin() {
    let path = khronos("CesiumMan/CesiumMan_chromedays.glb");
    let c = load(&path);
    let j = json_of(&path);
    let joints_acc = j["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(
        j["accessors"][joints_acc]["componentType"], 5123,
        "JOINTS_0 is u16"
    );
    assert_eq!(c.skins.len(), 1);
    assert_eq!(c.skins[0].joints.len(), 19);
    assert_eq!(c.skins[0].inverse_bind.len(), 19);
    let inf = c.meshes[0].primitives[0].influences.as_ref().unwrap();
    assert_eq!(inf.weights.len(), 3273);
    for (v, (w, jn)) in inf.weights.iter().zip(&inf.joints).enumerate() {
        assert!(
            (w.iter().map(|&x| f64::from(x)).sum::<f64>() - 1.0).abs() < 1e-6,
            "vertex {v}: {w:?}"
        );
        assert!(
            (0..4).all(|k| w[k] == 0.0 || jn[k] < 19),
            "vertex {v}: {jn:?}"
        );
    }
    assert_eq!(c.nodes.iter().filter(|n| n.skin.is_some()).count(), 1);
    // Node matrices (Z_UP, Armature) were decomposed: their TRS reproduces the JSON matrix.
    for (i, n) in j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.get("matrix").is_some())
    {
        let want = gltf_common::local_of(n);
        let got = c.nodes[i].rest.matrix().to_cols_array();
        for k in 0..16 {
            assert!(
                (f64::from(got[k]) - want[k / 4][k % 4]).abs() < 1e-5,
                "node {i}"
            );
        }
    }
    // Posing at t = 1 s runs the whole skinning path without NaN.
    let (_, posed) = pose(&c, Some("0"), 1.0, |_| {});
    assert!(posed.iter().all(|p| p.iter().all(|x| x.is_finite())));
}

/// MorphStressTest: 8 targets on both primitives, 3 clips, "Pulse" drives all 8 weights (each
/// target non-zero at some key); its missing PNGs do not matter.
#[test]
fn morph_stress_test() {
    for rel in [
        "MorphStressTest/MorphStressTest.gltf",
        "MorphStressTest_embedded.gltf",
    ] {
        let c = load(&khronos(rel));
        assert_eq!(c.meshes[0].target_count(), 8, "{rel}");
        assert!(
            c.meshes[0]
                .primitives
                .iter()
                .all(|p| p.morph.target_count() == 8)
        );
        assert_eq!(c.meshes[0].primitives.len(), 2);
        assert_eq!(c.clips.len(), 3);
        assert_eq!(
            c.meshes[0].target_names,
            (1..=8).map(|i| format!("Key {i}")).collect::<Vec<_>>()
        );
        let pulse = &c.clips[c.find_clip("Pulse").unwrap().index()];
        assert_eq!(pulse.channels.len(), 1);
        let s = &pulse.channels[0].sampler;
        assert_eq!(
            (pulse.channels[0].property, s.width()),
            (Property::Weights, 8)
        );
        for t in 0..8 {
            assert!(
                (0..s.times().len()).any(|k| s.key_value(k)[t] != 0.0),
                "{rel}: Pulse leaves target {t} at 0"
            );
        }
    }
    assert!(
        !khronos("MorphStressTest/Base_AO.png").exists(),
        "the PNGs are missing on purpose"
    );
}

/// MorphPrimitivesTest: one mesh weight drives both primitives. Posed with weight w, every vertex
/// of both primitives equals `world · (base + w·δ)` with base and δ read from the `.bin` by hand.
#[test]
fn morph_primitives_share_one_weight() {
    let dir = khronos("MorphPrimitivesTest");
    let c = load(&dir.join("MorphPrimitivesTest.gltf"));
    let j = json_of(&dir.join("MorphPrimitivesTest.gltf"));
    let bin = std::fs::read(dir.join("MorphPrimitivesTest.bin")).unwrap();
    let read_vec3 = |acc: usize| -> Vec<[f64; 3]> {
        let a = &j["accessors"][acc];
        assert_eq!(a["componentType"], 5126);
        let v = &j["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let start = v["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let stride = v["byteStride"].as_u64().unwrap_or(12) as usize;
        (0..a["count"].as_u64().unwrap() as usize)
            .map(|i| [0, 1, 2].map(|k| f32_at(&bin, start + stride * i + 4 * k)))
            .collect()
    };
    let node = c.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
    let world = world_of(&j, node);
    let rig_w = [0.0f32, 0.25, 1.0];
    for w in rig_w {
        let (rig, posed) = pose(&c, None, 0.0, |p| p.weights[node] = vec![w]);
        assert_eq!(
            rig.weight_count, 1,
            "one weight slot for the two primitives"
        );
        let mut v0 = rig.instances[0].vertex_base as usize;
        for p in j["meshes"][0]["primitives"].as_array().unwrap() {
            let base = read_vec3(p["attributes"]["POSITION"].as_u64().unwrap() as usize);
            let delta = read_vec3(p["targets"][0]["POSITION"].as_u64().unwrap() as usize);
            for (i, (b, d)) in base.iter().zip(&delta).enumerate() {
                let want = apply(&world, [0, 1, 2].map(|k| b[k] + f64::from(w) * d[k]));
                let got = posed[v0 + i];
                assert!(
                    (0..3).all(|k| (f64::from(got[k]) - want[k]).abs() < 1e-5),
                    "w={w} vertex {}: {got:?} vs {want:?}",
                    v0 + i
                );
            }
            v0 += base.len();
        }
        assert_eq!(v0, posed.len());
    }
    // Both primitives have entries, all pointing at weight slot 0.
    let rig = mien_core::rig::RigData::from_character(&c).unwrap();
    assert!(!rig.morph_target.is_empty() && rig.morph_target.iter().all(|&t| t == 0));
    assert_eq!(c.meshes[0].default_weights, vec![0.5]);
}
