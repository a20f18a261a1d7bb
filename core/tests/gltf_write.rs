//! The character → GLB writer (`io::gltf::write`): a MetaHuman DNA character (the ICT rig,
//! `metahuman_dna/mien_ict_rig.dna`) and Face Cap (`facecap/facecap.glb`) written and read back
//! with mien's own importer — nodes, rests, hierarchy, vertices, indices, UVs, normals, skin
//! influences, inverse binds and every morph entry as they were; deterministic bytes; the DNA
//! control node left out; empty, sparse and dense targets (with normal and tangent deltas) on a
//! small made-up mesh; and the Khronos glTF-Validator (npm `gltf-validator` through
//! `browser/validate.mjs`, as `cli/tests/browser.rs` runs it) reporting no error on either file.
//!
//! Tests needing the shared data skip with a notice when it is absent; the validator test skips
//! with a notice without `node` and `browser/node_modules` (`npm ci` in `browser/`), unless
//! `MIEN_REQUIRE_BROWSER=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::{Quat, Vec3};
use mien_core::io::dna::{DnaLoad, dna_character, read_dna_file};
use mien_core::io::gltf::{WriteOptions, character_to_glb, import_gltf, import_gltf_bytes};
use mien_core::rig::fingerprint::PartFingerprint;
use mien_core::rig::riglogic::CONTROL_NODE_NAME;
use mien_core::rig::{
    Character, DenseTarget, Hierarchy, Influences, Mesh, MeshId, MorphSet, Node, NodeId, Primitive,
    Skin, SkinId, Transform,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn present(rel: &str) -> Option<PathBuf> {
    let p = data(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("notice: skipped, ../shared/data/{rel} not found");
        None
    }
}

fn dna() -> Option<Character> {
    let p = present("metahuman_dna/mien_ict_rig.dna")?;
    let dna = read_dna_file(&p, &DnaLoad::default()).unwrap();
    Some(dna_character(&dna, 0).unwrap())
}

fn facecap() -> Option<Character> {
    Some(import_gltf(&present("facecap/facecap.glb")?).unwrap())
}

fn close3(a: [f32; 3], b: [f32; 3], tol: f32) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
}

/// `b` (read back) holds `a`'s written part: node `i` of `a` is `map[i]` of `b`.
fn assert_same(a: &Character, b: &Character, map: &[Option<usize>]) {
    let kept = map.iter().flatten().count();
    assert_eq!(b.nodes.len(), kept);
    for (i, n) in a.nodes.iter().enumerate() {
        let Some(j) = map[i] else { continue };
        let m = &b.nodes[j];
        assert_eq!(m.name, n.name, "node {i}");
        assert_eq!(
            m.parent.map(|p| p.index()),
            n.parent.and_then(|p| map[p.index()])
        );
        assert_eq!(
            m.rest.translation, n.rest.translation,
            "node {i} translation"
        );
        assert_eq!(m.rest.scale, n.rest.scale, "node {i} scale");
        assert!(
            m.rest.rotation.angle_between(n.rest.rotation) < 1e-6,
            "node {i} rotation {:?} vs {:?}",
            m.rest.rotation,
            n.rest.rotation
        );
        assert_eq!(m.weights, n.weights);
        assert_eq!(m.skin.is_some(), n.skin.is_some(), "node {i} skin");
        let (Some(ma), Some(mb)) = (n.mesh, m.mesh) else {
            assert_eq!(n.mesh.is_some(), m.mesh.is_some(), "node {i} mesh");
            continue;
        };
        assert_same_mesh(&a.meshes[ma.index()], &b.meshes[mb.index()]);
        if let (Some(sa), Some(sb)) = (n.skin, m.skin) {
            let (sa, sb) = (&a.skins[sa.index()], &b.skins[sb.index()]);
            let joints: Vec<usize> = sa.joints.iter().map(|j| map[j.index()].unwrap()).collect();
            let got: Vec<usize> = sb.joints.iter().map(|j| j.index()).collect();
            assert_eq!(got, joints);
            assert_eq!(sb.inverse_bind, sa.inverse_bind);
        }
    }
    let roots: Vec<usize> = a
        .scene_roots
        .iter()
        .filter_map(|r| map[r.index()])
        .collect();
    let got: Vec<usize> = b.scene_roots.iter().map(|r| r.index()).collect();
    assert_eq!(got, roots);
}

fn assert_same_mesh(a: &Mesh, b: &Mesh) {
    let name = a.name.as_deref().unwrap_or("");
    assert_eq!(b.name, a.name);
    assert_eq!(b.target_names, a.target_names, "{name}");
    assert_eq!(b.default_weights, a.default_weights, "{name}");
    assert_eq!(b.primitives.len(), a.primitives.len(), "{name}");
    assert_eq!(PartFingerprint::of(b), PartFingerprint::of(a), "{name}");
    for (pa, pb) in a.primitives.iter().zip(&b.primitives) {
        assert_eq!(pb.positions, pa.positions, "{name} positions");
        assert_eq!(pb.indices, pa.indices, "{name} indices");
        assert_eq!(pb.uvs, pa.uvs, "{name} uvs");
        assert_eq!(pb.colors, pa.colors, "{name} colours");
        assert_eq!(pb.normals.len(), pa.normals.len(), "{name} normals");
        for (v, (x, y)) in pa.normals.iter().zip(&pb.normals).enumerate() {
            assert!(close3(*x, *y, 1e-6), "{name} normal {v}: {x:?} vs {y:?}");
        }
        assert_eq!(pb.tangents.len(), pa.tangents.len(), "{name} tangents");
        // The morph set, entry for entry (CSR rows, targets, every stream).
        let (ma, mb) = (&pa.morph, &pb.morph);
        assert_eq!(mb.target_count(), ma.target_count(), "{name}");
        assert_eq!(
            mb.vertex_offsets(),
            ma.vertex_offsets(),
            "{name} morph rows"
        );
        assert_eq!(mb.entry_target(), ma.entry_target(), "{name} morph targets");
        assert_eq!(
            mb.entry_position(),
            ma.entry_position(),
            "{name} morph deltas"
        );
        assert_eq!(mb.entry_normal(), ma.entry_normal(), "{name} normal deltas");
        assert_eq!(
            mb.entry_tangent(),
            ma.entry_tangent(),
            "{name} tangent deltas"
        );
        match (&pa.influences, &pb.influences) {
            (None, None) => {}
            (Some(ia), Some(ib)) => {
                for v in 0..ia.joints.len() {
                    for k in 0..4 {
                        let (wa, wb) = (ia.weights[v][k], ib.weights[v][k]);
                        assert!((wa - wb).abs() < 1e-6, "{name} vertex {v} weight {k}");
                        if wa != 0.0 {
                            assert_eq!(ib.joints[v][k], ia.joints[v][k], "{name} vertex {v}");
                        }
                    }
                }
            }
            _ => panic!("{name}: skinned on one side only"),
        }
    }
}

/// The ICT DNA character: written without its control node, read back as it was; the same
/// bytes twice; the bind pose's world matrices equal.
#[test]
fn a_dna_character_writes_and_reads_back() {
    let Some(ch) = dna() else { return };
    let w = character_to_glb(&ch, &WriteOptions::for_character(&ch)).unwrap();
    let control = ch.rig_logic.as_ref().unwrap().control_node;
    assert_eq!(
        control.index(),
        ch.nodes.len() - 1,
        "the control node is last"
    );
    assert_eq!(w.node_index[control.index()], None);
    assert_eq!(w.mesh_index.last(), Some(&None));
    let back = import_gltf_bytes(&w.glb, None, "ict.glb").unwrap();
    assert!(
        back.nodes
            .iter()
            .all(|n| n.name.as_deref() != Some(CONTROL_NODE_NAME))
    );
    assert_same(&ch, &back, &w.node_index);
    // 12 joints and the LOD-0 head; targets named by blend-shape channel.
    assert_eq!(back.nodes.len(), 13);
    assert_eq!(back.skins[0].joints.len(), 12);
    let head = &back.meshes[0];
    assert_eq!(head.name.as_deref(), Some("head_lod0_mesh"));
    assert!(head.target_count() > 50, "{}", head.target_count());
    assert!(head.primitives[0].morph.entry_count() > 0);
    let (mut wa, mut wb) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut Vec::new(), &mut wa);
    back.world_matrices(&back.rest_pose(), &mut Vec::new(), &mut wb);
    for j in 0..12 {
        assert!(wa[j].abs_diff_eq(wb[j], 1e-6), "joint {j} world");
    }
    // Deterministic.
    let again = character_to_glb(&ch, &WriteOptions::for_character(&ch)).unwrap();
    assert_eq!(again.glb, w.glb);
    // Smaller than dense targets would be: the targets went sparse.
    let v = head.vertex_count();
    assert!(
        w.glb.len() < v * 12 * head.target_count(),
        "{} bytes",
        w.glb.len()
    );
    eprintln!(
        "ICT DNA: {} vertices, {} targets, {} morph entries → {} bytes",
        v,
        head.target_count(),
        head.primitives[0].morph.entry_count(),
        w.glb.len()
    );
}

/// Face Cap (morph targets, eyes, several nodes): written and read back as it was.
#[test]
fn facecap_writes_and_reads_back() {
    let Some(ch) = facecap() else { return };
    let w = character_to_glb(&ch, &WriteOptions::for_character(&ch)).unwrap();
    assert!(w.node_index.iter().all(Option::is_some));
    let back = import_gltf_bytes(&w.glb, None, "facecap_out.glb").unwrap();
    assert_same(&ch, &back, &w.node_index);
    assert_eq!(back.meshes.len(), ch.meshes.len());
    let again = character_to_glb(&ch, &WriteOptions::for_character(&ch)).unwrap();
    assert_eq!(again.glb, w.glb);
}

/// Without leaving it out, the geometry-less control node is refused by name; an omitted node
/// that does not exist is refused too, and both problems are reported at once.
#[test]
fn a_control_node_left_in_is_refused() {
    let Some(ch) = dna() else { return };
    let e = character_to_glb(
        &ch,
        &WriteOptions {
            omit: vec![NodeId(10_000)],
        },
    )
    .unwrap_err()
    .to_string();
    let control = ch.nodes.len() - 1;
    assert!(e.contains(&format!("nodes[{control}].mesh")), "{e}");
    assert!(e.contains("no primitive"), "{e}");
    assert!(e.contains("node 10000 does not exist"), "{e}");
}

/// A joint left out of the file while a written mesh is skinned to it is refused.
#[test]
fn a_skin_joint_left_out_is_refused() {
    let ch = tiny();
    let e = character_to_glb(
        &ch,
        &WriteOptions {
            omit: vec![NodeId(1)],
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("skins[0].joints[1]"), "{e}");
}

/// Two joints (root, child) and a skinned 4-vertex mesh with tangents and three targets: one
/// moving nothing, one moving one vertex (position and normal), one moving every vertex
/// (position, normal, tangent).
fn tiny() -> Character {
    let positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.5],
    ];
    let d = |v: [f32; 3]| vec![v; 4];
    let mut one = vec![[0.0; 3]; 4];
    one[2] = [0.0, 0.0, 0.25];
    let mut one_n = vec![[0.0; 3]; 4];
    one_n[2] = [0.1, 0.0, 0.0];
    let morph = MorphSet::from_dense(
        4,
        &[
            DenseTarget::default(),
            DenseTarget {
                position: Some(one),
                normal: Some(one_n),
                tangent: None,
            },
            DenseTarget {
                position: Some(d([0.01, -0.02, 0.03])),
                normal: Some(d([0.0, 0.1, 0.0])),
                tangent: Some(d([0.0, 0.0, 0.1])),
            },
        ],
    )
    .unwrap();
    let prim = Primitive {
        normals: vec![[0.0, 0.0, 1.0]; 4],
        tangents: vec![[1.0, 0.0, 0.0, 1.0]; 4],
        uvs: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
        indices: vec![0, 1, 2, 2, 1, 3],
        morph,
        influences: Some(Influences {
            joints: vec![[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 7, 0]],
            weights: vec![
                [0.5, 0.5, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [0.75, 0.25, 0.0, 0.0],
            ],
        }),
        positions,
        ..Default::default()
    };
    let nodes = vec![
        Node {
            name: Some("root".into()),
            children: vec![NodeId(1)],
            rest: Transform {
                translation: Vec3::new(0.0, 1.5, 0.0),
                ..Default::default()
            },
            ..Default::default()
        },
        Node {
            name: Some("child".into()),
            parent: Some(NodeId(0)),
            rest: Transform {
                translation: Vec3::new(0.0, 0.1, 0.0),
                rotation: Quat::from_rotation_x(0.3),
                scale: Vec3::splat(2.0),
            },
            ..Default::default()
        },
        Node {
            name: Some("face".into()),
            mesh: Some(MeshId(0)),
            skin: Some(SkinId(0)),
            weights: Some(vec![0.0, 0.5, 0.25]),
            ..Default::default()
        },
    ];
    let hierarchy = Hierarchy::new("tiny", &nodes).unwrap();
    let ch = Character {
        source: "/some/folder/tiny".into(),
        nodes,
        hierarchy,
        scene_roots: vec![NodeId(0), NodeId(2)],
        meshes: vec![Mesh {
            name: Some("face".into()),
            primitives: vec![prim],
            target_names: vec!["none".into(), "one".into(), "all".into()],
            default_weights: vec![0.0, 0.0, 0.1],
        }],
        skins: vec![Skin {
            name: Some("skin".into()),
            joints: vec![NodeId(0), NodeId(1)],
            inverse_bind: vec![
                glam::Mat4::from_translation(Vec3::new(0.0, -1.5, 0.0)),
                glam::Mat4::from_translation(Vec3::new(0.0, -1.6, 0.0)),
            ],
        }],
        ..Default::default()
    };
    ch.validate().unwrap();
    ch
}

/// Empty, sparse and dense targets, normal and tangent deltas, node weights, a zero weight's
/// joint written as 0: read back entry for entry; the JSON stores each target as documented.
#[test]
fn empty_sparse_and_dense_targets_read_back() {
    let ch = tiny();
    let w = character_to_glb(&ch, &WriteOptions::default()).unwrap();
    let back = import_gltf_bytes(&w.glb, None, "tiny.glb").unwrap();
    assert_same(&ch, &back, &w.node_index);
    assert_eq!(
        back.meshes[0].primitives[0]
            .influences
            .as_ref()
            .unwrap()
            .joints[3],
        [1, 0, 0, 0]
    );
    let jl = u32::from_le_bytes(w.glb[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&w.glb[20..20 + jl]).unwrap();
    assert_eq!(json["asset"]["extras"]["mien"]["source"], "tiny");
    let targets = &json["meshes"][0]["primitives"][0]["targets"];
    let acc = |t: usize, s: &str| &json["accessors"][targets[t][s].as_u64().unwrap() as usize];
    // None: no data at all; one vertex: sparse; every vertex: dense.
    assert!(acc(0, "POSITION")["bufferView"].is_null() && acc(0, "POSITION")["sparse"].is_null());
    assert_eq!(
        acc(0, "POSITION")["min"],
        serde_json::json!([0.0, 0.0, 0.0])
    );
    assert_eq!(acc(1, "POSITION")["sparse"]["count"], 1);
    assert_eq!(acc(1, "NORMAL")["sparse"]["count"], 1);
    assert_eq!(
        acc(1, "POSITION")["min"],
        serde_json::json!([0.0, 0.0, 0.0])
    );
    assert_eq!(
        acc(1, "POSITION")["max"],
        serde_json::json!([0.0, 0.0, 0.25])
    );
    assert!(acc(2, "POSITION")["bufferView"].is_u64());
    assert!(acc(2, "TANGENT")["bufferView"].is_u64());
    assert_eq!(
        acc(2, "POSITION")["min"],
        serde_json::json!([0.01f32, -0.02f32, 0.03f32])
    );
}

/// The Khronos glTF-Validator's report on `glb` (written to a file named `name`), or `None`
/// (with a notice) when node or the npm package is missing.
fn validate(glb: &[u8], name: &str) -> Option<serde_json::Value> {
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("../browser");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let module = browser.join("node_modules/gltf-validator").is_dir();
    if !(node && module) {
        if std::env::var("MIEN_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
            panic!("MIEN_REQUIRE_BROWSER=1 but node or browser/node_modules is missing");
        }
        eprintln!(
            "notice: glTF-Validator check skipped, missing: {}",
            if node {
                "browser/node_modules (npm ci in browser/)"
            } else {
                "node"
            }
        );
        return None;
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, glb).unwrap();
    let o = Command::new("node")
        .current_dir(&browser)
        .arg("validate.mjs")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

/// The written DNA character, Face Cap and the small mesh pass the glTF-Validator with no error
/// (its warnings and infos printed).
#[test]
fn written_characters_pass_the_gltf_validator() {
    let mut cases = vec![("tiny.glb", tiny())];
    cases.extend(dna().map(|c| ("ict_dna.glb", c)));
    cases.extend(facecap().map(|c| ("facecap_written.glb", c)));
    for (name, ch) in cases {
        let w = character_to_glb(&ch, &WriteOptions::for_character(&ch)).unwrap();
        let Some(report) = validate(&w.glb, name) else {
            return;
        };
        let issues = &report["issues"];
        let messages = issues["messages"].as_array().unwrap();
        let codes: Vec<String> = messages
            .iter()
            .map(|m| format!("{} {} {}", m["severity"], m["code"], m["pointer"]))
            .collect();
        eprintln!(
            "{name}: glTF-Validator {} errors, {} warnings, {} infos: {codes:?}",
            issues["numErrors"], issues["numWarnings"], issues["numInfos"]
        );
        assert_eq!(issues["numErrors"], 0, "{name}: {messages:?}");
    }
}
