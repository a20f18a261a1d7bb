//! Small glTF files written here that ask for too much or break a rule the glTF-Validator
//! enforces: each is refused before memory is spent, with a message naming the field.

use mien_core::Error;
use mien_core::io::gltf::{
    MAX_CHARACTER_MORPH_DELTAS, MAX_CHARACTER_VERTICES, MAX_IMPLICIT_VERTICES, import_gltf_bytes,
};
use mien_core::rig::{Hierarchy, Node, NodeId};
use serde_json::{Value, json};

mod gltf_common;
use gltf_common::{data, f32_bytes, with_data_uri};

/// A one-triangle mesh on node 0; `edit` changes the document; buffer 0 holds `bin` (the
/// triangle's positions first).
fn doc_with(extra: &[f32], edit: impl Fn(&mut Value)) -> Vec<u8> {
    let mut v = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    v.extend_from_slice(extra);
    let bin = f32_bytes(&v);
    let mut d = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "bufferViews": [{"buffer": 0, "byteLength": bin.len()}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "type": "VEC3", "count": 3,
                       "min": [0, 0, 0], "max": [1, 1, 0]}]
    });
    edit(&mut d);
    with_data_uri(d, &bin)
}

fn err(bytes: &[u8]) -> Error {
    import_gltf_bytes(bytes, None, "h.gltf").unwrap_err()
}

/// The reviewer's file: 684 bytes of JSON asking for 5,000,000 vertices stored nowhere.
#[test]
fn a_tiny_file_cannot_ask_for_a_huge_mesh() {
    let bytes = serde_json::to_vec(&json!({
        "asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "scene": 0,
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"componentType": 5126, "type": "VEC3", "count": 5_000_000,
                       "min": [0, 0, 0], "max": [0, 0, 0]}]
    }))
    .unwrap();
    assert!(bytes.len() < 700);
    let e = err(&bytes).to_string();
    assert!(
        e.contains("h.gltf: meshes[0].primitives[0].attributes.POSITION: vertices of accessors[0], which has no bufferView")
            && e.contains("5000000 exceeds the limit of 65536"),
        "{e}"
    );
    assert!(
        e.contains("meshes: vertices in the character") && e.contains("limit of 4194304"),
        "{e}"
    );
    // Under the character cap, the implicit-vertex cap alone refuses it.
    let bytes = String::from_utf8(bytes)
        .unwrap()
        .replace("5000000", "100000");
    match err(bytes.as_bytes()) {
        Error::Limit { what, limit, found } => {
            assert!(
                what.contains("meshes[0].primitives[0].attributes.POSITION"),
                "{what}"
            );
            assert_eq!((limit, found), (MAX_IMPLICIT_VERTICES, 100_000));
        }
        other => panic!("{other}"),
    }
    assert_eq!(MAX_IMPLICIT_VERTICES, 65_536);
}

/// A mesh of 70,000 vertices drawn by 60 nodes is 4.2 million vertices once flattened: refused
/// from the JSON alone (the buffer is never read: its data URI is even empty).
#[test]
fn vertices_are_counted_once_per_drawing_node() {
    let mut d = json!({
        "asset": {"version": "2.0"}, "scenes": [{"nodes": (0..60).collect::<Vec<_>>()}],
        "nodes": (0..60).map(|_| json!({"mesh": 0})).collect::<Vec<_>>(),
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "buffers": [{"byteLength": 840_000, "uri": "data:application/octet-stream;base64,"}],
        "bufferViews": [{"buffer": 0, "byteLength": 840_000}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "type": "VEC3", "count": 70_000,
                       "min": [0, 0, 0], "max": [1, 1, 1]}]
    });
    match err(&serde_json::to_vec(&d).unwrap()) {
        Error::Limit { what, limit, found } => {
            assert!(
                what.contains("h.gltf: meshes: vertices in the character")
                    && what.contains("meshes[0], has 70000 and is drawn by 60 nodes"),
                "{what}"
            );
            assert_eq!((limit, found), (MAX_CHARACTER_VERTICES, 60 * 70_000));
        }
        other => panic!("{other}"),
    }
    assert_eq!(MAX_CHARACTER_VERTICES, 1 << 22);
    // Drawn by 59 nodes it is under the cap: the next problem is the (empty) buffer itself.
    d["nodes"] = json!((0..59).map(|_| json!({"mesh": 0})).collect::<Vec<_>>());
    d["scenes"] = json!([{"nodes": (0..59).collect::<Vec<_>>()}]);
    let e = err(&serde_json::to_vec(&d).unwrap()).to_string();
    assert!(e.contains("buffers[0].byteLength"), "{e}");
}

/// 60,000 vertices × 1,200 morph targets (all sharing one accessor) is 72 million deltas.
#[test]
fn morph_deltas_are_capped() {
    let acc = |v: usize| json!({"bufferView": v, "componentType": 5126, "type": "VEC3", "count": 60_000, "min": [0, 0, 0], "max": [1, 1, 1]});
    let d = json!({
        "asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0},
            "targets": (0..1200).map(|_| json!({"POSITION": 1})).collect::<Vec<_>>()}]}],
        "buffers": [{"byteLength": 1_440_000, "uri": "data:application/octet-stream;base64,"}],
        "bufferViews": [{"buffer": 0, "byteLength": 720_000},
                        {"buffer": 0, "byteOffset": 720_000, "byteLength": 720_000}],
        "accessors": [acc(0), acc(1)]
    });
    match err(&serde_json::to_vec(&d).unwrap()) {
        Error::Limit { what, limit, found } => {
            assert!(
                what.contains("meshes: vertex × morph-target pairs"),
                "{what}"
            );
            assert_eq!((limit, found), (MAX_CHARACTER_MORPH_DELTAS, 72_000_000));
        }
        other => panic!("{other}"),
    }
}

/// A sampler over `times` driving node 0's translation.
fn animated(times: &[f32]) -> Vec<u8> {
    let n = times.len();
    let mut extra = times.to_vec();
    extra.extend(std::iter::repeat_n(0.0, 3 * n));
    doc_with(&extra, move |d| {
        d["bufferViews"] = json!([
            {"buffer": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 4 * n},
            {"buffer": 0, "byteOffset": 36 + 4 * n, "byteLength": 12 * n}
        ]);
        let lo = times.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = times.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        d["accessors"].as_array_mut().unwrap().extend([
            json!({"bufferView": 1, "componentType": 5126, "type": "SCALAR", "count": n, "min": [lo], "max": [hi]}),
            json!({"bufferView": 2, "componentType": 5126, "type": "VEC3", "count": n}),
        ]);
        d["animations"] = json!([{"samplers": [{"input": 1, "output": 2}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}]);
    })
}

#[test]
fn negative_key_times_are_refused() {
    import_gltf_bytes(&animated(&[0.0, 1.0]), None, "h.gltf").unwrap();
    match err(&animated(&[-5.0, -1.0, 2.0])) {
        Error::Format {
            field,
            index,
            reason,
            ..
        } => {
            assert_eq!(
                (field.as_str(), index),
                ("animations[0].samplers[0].input", Some(0))
            );
            assert!(
                reason.contains("-5") && reason.contains("ACCESSOR_ANIMATION_INPUT_NEGATIVE"),
                "{reason}"
            );
        }
        other => panic!("{other}"),
    }
}

/// Node 0 draws a skinned triangle bound to joints 1 and 2 with the given inverse bind matrices.
fn skinned(ibm: &[[f32; 16]; 2]) -> Vec<u8> {
    let mut extra: Vec<f32> = Vec::new();
    // JOINTS_0 as u16 ×4 per vertex = 8 bytes = 2 floats of bits; WEIGHTS_0 f32 ×4.
    let joints: Vec<u8> = (0..3).flat_map(|_| [0u8, 0, 1, 0, 0, 0, 0, 0]).collect();
    extra.extend(
        joints
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    for _ in 0..3 {
        extra.extend([0.5, 0.5, 0.0, 0.0]);
    }
    extra.extend(ibm.iter().flatten());
    doc_with(&extra, |d| {
        d["bufferViews"] = json!([
            {"buffer": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": 60, "byteLength": 48},
            {"buffer": 0, "byteOffset": 108, "byteLength": 128}
        ]);
        d["accessors"].as_array_mut().unwrap().extend([
            json!({"bufferView": 1, "componentType": 5123, "type": "VEC4", "count": 3}),
            json!({"bufferView": 2, "componentType": 5126, "type": "VEC4", "count": 3}),
            json!({"bufferView": 3, "componentType": 5126, "type": "MAT4", "count": 2}),
        ]);
        d["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(1);
        d["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(2);
        d["nodes"] = json!([{"mesh": 0, "skin": 0}, {"children": [2]}, {"translation": [0, 1, 0]}]);
        d["scenes"] = json!([{"nodes": [0, 1]}]);
        d["skins"] = json!([{"joints": [1, 2], "inverseBindMatrices": 3}]);
    })
}

#[test]
fn singular_inverse_bind_matrices_are_refused_by_index() {
    let id = [
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    let c = import_gltf_bytes(&skinned(&[id, id]), None, "h.gltf").unwrap();
    assert_eq!(c.skins[0].inverse_bind.len(), 2);
    for (mats, j, node) in [([[0.0; 16], id], 0, 1), ([id, [0.0; 16]], 1, 2)] {
        let e = err(&skinned(&mats));
        let (field, reason) = match &e {
            Error::Format { field, reason, .. } => (field.clone(), reason.clone()),
            other => panic!("{other}"),
        };
        assert_eq!(field, format!("skins[0].inverseBindMatrices[{j}]"));
        assert!(
            reason.contains("not invertible") && reason.contains(&format!("(node {node})")),
            "{reason}"
        );
    }
    // A zero scale axis is singular too (determinant 0), not only the all-zero matrix.
    let mut flat = id;
    flat[5] = 0.0;
    let e = err(&skinned(&[id, flat])).to_string();
    assert!(e.contains("skins[0].inverseBindMatrices[1]"), "{e}");
}

#[test]
fn a_byte_order_mark_is_refused_as_gltf_forbids_it() {
    let good = doc_with(&[], |_| {});
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&good);
    match err(&bom) {
        Error::Format { field, reason, .. } => {
            assert_eq!(field, "JSON");
            assert!(
                reason.contains("byte order mark") && reason.contains("§2.7"),
                "{reason}"
            );
        }
        other => panic!("{other}"),
    }
    // The same in a GLB's JSON chunk.
    let mut json = b"\xEF\xBB\xBF".to_vec();
    json.extend_from_slice(&good);
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut glb = b"glTF".to_vec();
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&(20 + json.len() as u32).to_le_bytes());
    glb.extend_from_slice(&(json.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&json);
    let e = import_gltf_bytes(&glb, None, "h.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("h.glb: chunks[0]") && e.contains("byte order mark"),
        "{e}"
    );
}

fn with_nodes(nodes: Value, roots: Value) -> Vec<u8> {
    doc_with(&[], move |d| {
        d["nodes"] = nodes.clone();
        d["scenes"] = json!([{"nodes": roots.clone()}]);
    })
}

#[test]
fn hierarchy_problems_are_named_for_what_they_are() {
    // A two-node cycle listed as a scene root: a cycle, not "node 0 is not a root node".
    let e = err(&with_nodes(
        json!([{"mesh": 0, "children": [1]}, {"children": [0]}]),
        json!([0]),
    ))
    .to_string();
    assert_eq!(
        e,
        "h.gltf: nodes[0].children: the children form a cycle: nodes[0] → nodes[1] → nodes[0] \
         (the hierarchy must be a set of trees)"
    );
    // A three-node cycle is named in child order from its lowest node.
    let e = err(&with_nodes(
        json!([{"mesh": 0}, {"children": [3]}, {"children": [1]}, {"children": [2]}]),
        json!([0]),
    ))
    .to_string();
    assert!(
        e.contains("nodes[1].children: the children form a cycle: nodes[1] → nodes[3] → nodes[2] → nodes[1]"),
        "{e}"
    );
    // A node that is its own child.
    let e = err(&with_nodes(
        json!([{"mesh": 0, "children": [0]}]),
        json!([0]),
    ))
    .to_string();
    assert!(
        e.contains("nodes[0].children: lists node 0 itself") && !e.contains("root node"),
        "{e}"
    );
    // The same child listed twice is said so, once, not "two parents: nodes[0] and nodes[0]".
    let e = err(&with_nodes(
        json!([{"children": [1, 1, 1]}, {"mesh": 0}]),
        json!([0]),
    ))
    .to_string();
    assert_eq!(e, "h.gltf: nodes[0].children: lists node 1 twice");
    // Two real parents are still two parents.
    let e = err(&with_nodes(
        json!([{"children": [1, 2]}, {"mesh": 0, "children": [2]}, {"mesh": 0}]),
        json!([0]),
    ))
    .to_string();
    assert_eq!(
        e,
        "h.gltf: nodes[2]: has two parents: nodes[0] and nodes[1]"
    );
}

#[test]
fn the_rig_hierarchy_names_the_same_problems() {
    let node = |children: &[u32]| Node {
        children: children.iter().map(|&c| NodeId(c)).collect(),
        ..Node::default()
    };
    let e = Hierarchy::new("r", &[node(&[2, 2]), node(&[]), node(&[])])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "r: nodes[0].children: lists node 2 twice");
    let e = Hierarchy::new("r", &[node(&[]), node(&[2]), node(&[1])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nodes[1] → nodes[2] → nodes[1]"), "{e}");
    let e = Hierarchy::new("r", &[node(&[5])]).unwrap_err().to_string();
    assert!(
        e.contains("nodes[0].children [0]: node 5 does not exist"),
        "{e}"
    );
    let h = Hierarchy::new("r", &[node(&[2]), node(&[]), node(&[1])]).unwrap();
    assert_eq!(h.order(), &[NodeId(0), NodeId(2), NodeId(1)]);
}

/// Three accessors of 3 VEC3 each on one 12-byte view: one problem (the view is too short), not
/// three.
#[test]
fn accessors_overflowing_one_view_are_one_problem() {
    let bytes = doc_with(&[], |d| {
        d["bufferViews"] =
            json!([{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteLength": 12}]);
        let acc = json!({"bufferView": 1, "componentType": 5126, "type": "VEC3", "count": 3});
        d["accessors"]
            .as_array_mut()
            .unwrap()
            .extend([acc.clone(), acc.clone(), acc]);
    });
    let e = err(&bytes).to_string();
    assert_eq!(
        e,
        "h.gltf: accessors[1]: 3 elements of 12 bytes (stride 12, offset 0) do not fit \
         bufferViews[1] (12 bytes); 2 more accessors on bufferViews[1] do not fit either: \
         accessors[2], accessors[3]"
    );
}

/// facecap.glb with the compressed bytes of `bufferViews[1]` (read by every mesh's positions)
/// overwritten: the decode failure is one problem, reported once.
#[test]
fn a_broken_compressed_view_is_reported_once() {
    let mut b = std::fs::read(data().join("facecap/facecap.glb")).unwrap();
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let json: Value = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let x = &json["bufferViews"][1]["extensions"]["EXT_meshopt_compression"];
    let (off, len) = (
        x["byteOffset"].as_u64().unwrap() as usize,
        x["byteLength"].as_u64().unwrap() as usize,
    );
    let bin = 20 + jl + 8;
    // Keep the stream header byte, break the rest.
    b[bin + off + 1..bin + off + len].fill(0xFF);
    let e = import_gltf_bytes(&b, None, "f.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("f.glb: bufferViews[1].extensions.EXT_meshopt_compression: meshoptimizer could not decode"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}
