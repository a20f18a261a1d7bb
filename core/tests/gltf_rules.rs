//! Import rules on small glTF files written here: target names, node matrices, required
//! extensions, never-opened images, quantised morph deltas and the notes the importer leaves.

use mien_core::io::gltf::import_gltf_bytes;
use serde_json::{Value, json};

mod gltf_common;
use gltf_common::{f32_bytes, with_data_uri};

/// A one-triangle mesh with two position targets on node 0; `edit` changes the document.
fn doc(edit: impl Fn(&mut Value)) -> Vec<u8> {
    let bin = f32_bytes(&[
        0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0,
    ]);
    let acc = |off: usize| json!({"bufferView": 0, "byteOffset": off, "componentType": 5126, "type": "VEC3", "count": 3, "min": [0, 0, 0], "max": [1, 1, 1]});
    let mut d = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": [{"POSITION": 1}, {"POSITION": 1}]}]}],
        "bufferViews": [{"buffer": 0, "byteLength": 72}],
        "accessors": [acc(0), acc(36)]
    });
    edit(&mut d);
    with_data_uri(d, &bin)
}

#[test]
fn target_names_of_the_right_length_are_used_others_noted() {
    let c = import_gltf_bytes(
        &doc(|d| d["meshes"][0]["extras"] = json!({"targetNames": ["a", "b"]})),
        None,
        "t.gltf",
    )
    .unwrap();
    assert_eq!(c.meshes[0].target_names, ["a", "b"]);
    let c = import_gltf_bytes(
        &doc(|d| d["meshes"][0]["extras"] = json!({"targetNames": ["a", "b", "c"]})),
        None,
        "t.gltf",
    )
    .unwrap();
    assert_eq!(c.meshes[0].target_names, ["target_0", "target_1"]);
    assert!(
        c.notes
            .iter()
            .any(|n| n.field == "meshes[0].extras.targetNames"
                && n.message.contains("3 names for 2")),
        "{:?}",
        c.notes
    );
    assert_eq!(c.meshes[0].default_weights, [0.0, 0.0]);
}

#[test]
fn node_matrices_are_decomposed_or_refused() {
    // Translation (1,2,3), 90° about Y, scale 2 — column-major.
    let m = json!([0, 0, -2, 0, 0, 2, 0, 0, 2, 0, 0, 0, 1, 2, 3, 1]);
    let c = import_gltf_bytes(
        &doc(|d| d["nodes"][0]["matrix"] = m.clone()),
        None,
        "t.gltf",
    )
    .unwrap();
    let t = c.nodes[0].rest;
    assert!((t.translation - glam::Vec3::new(1.0, 2.0, 3.0)).length() < 1e-6);
    assert!((t.scale - glam::Vec3::splat(2.0)).length() < 1e-6);
    let q = glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    assert!(t.rotation.dot(q).abs() > 1.0 - 1e-6, "{:?}", t.rotation);
    // Shear: not a TRS.
    let shear = json!([1, 0, 0, 0, 0.5, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    let e = import_gltf_bytes(
        &doc(|d| d["nodes"][0]["matrix"] = shear.clone()),
        None,
        "t.gltf",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nodes[0].matrix") && e.contains("shear"), "{e}");
    let e = import_gltf_bytes(
        &doc(|d| d["nodes"][0]["matrix"] = json!(vec![0; 16])),
        None,
        "t.gltf",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nodes[0].matrix"), "{e}");
}

#[test]
fn unhandled_required_extensions_are_named_texture_ones_pass() {
    let e = import_gltf_bytes(
        &doc(|d| {
            d["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
            d["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
        }),
        None,
        "t.gltf",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("extensionsRequired[0]") && e.contains("KHR_draco_mesh_compression"),
        "{e}"
    );
    let c = import_gltf_bytes(
        &doc(|d| {
            d["extensionsUsed"] = json!([
                "KHR_texture_basisu",
                "EXT_texture_webp",
                "KHR_texture_transform"
            ]);
            d["extensionsRequired"] = json!([
                "KHR_texture_basisu",
                "EXT_texture_webp",
                "KHR_texture_transform"
            ]);
        }),
        None,
        "t.gltf",
    )
    .unwrap();
    assert_eq!(c.required_extensions.len(), 3);
}

/// A base colour's image that cannot be read is a note naming it, never an error: the geometry
/// loads and the material falls back to its factor.
#[test]
fn a_missing_image_is_a_note_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = doc(|d| {
        d["images"] = json!([{"uri": "missing.png"}]);
        d["textures"] = json!([{"source": 0}]);
        d["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
        d["meshes"][0]["primitives"][0]["material"] = json!(0);
    });
    let c = import_gltf_bytes(&bytes, Some(dir.path()), "t.gltf").unwrap();
    assert!(
        c.notes
            .iter()
            .any(|n| n.field == "images[0]" && n.message.contains("fall back to the factor")),
        "{:?}",
        c.notes
    );
    assert_eq!(c.images, vec![None]);
    assert_eq!(c.materials[0].texture.as_ref().map(|t| t.image), Some(0));
}

#[test]
fn weights_on_a_node_need_the_right_count() {
    let e = import_gltf_bytes(
        &doc(|d| d["nodes"][0]["weights"] = json!([1.0])),
        None,
        "t.gltf",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nodes[0].weights"), "{e}");
    let c = import_gltf_bytes(
        &doc(|d| d["nodes"][0]["weights"] = json!([0.25, 0.5])),
        None,
        "t.gltf",
    )
    .unwrap();
    assert_eq!(c.rest_pose().weights[0], [0.25, 0.5]);
}

/// `KHR_mesh_quantization`: u16 POSITION, i8 normalized NORMAL, i16 and i8 non-normalized
/// position deltas decode as stored (normalized per §3.11); the same file without the extension
/// is refused, naming the attribute.
#[test]
fn quantised_attributes_and_deltas() {
    let mut bin = Vec::new();
    for v in [[100u16, 0, 0], [0, 200, 0], [0, 0, 300]] {
        bin.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        bin.extend([0, 0]); // pad each element to 8 bytes
    }
    for v in [[127i8, 0, 0], [0, -127, 0], [0, 0, 64]] {
        bin.extend(v.iter().map(|&x| x as u8));
        bin.push(0);
    }
    for v in [[-5i16, 7, 0], [0, 0, 0], [1000, -1000, 2]] {
        bin.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        bin.extend([0, 0]);
    }
    for v in [[-3i8, 4, 5], [0, 0, 0], [1, 1, 1]] {
        bin.extend(v.iter().map(|&x| x as u8));
        bin.push(0);
    }
    let make = |required: bool| {
        let mut d = json!({
            "asset": {"version": "2.0"},
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1}, "targets": [{"POSITION": 2}, {"POSITION": 3}]}]}],
            "bufferViews": [
                {"buffer": 0, "byteLength": 24, "byteStride": 8},
                {"buffer": 0, "byteOffset": 24, "byteLength": 12, "byteStride": 4},
                {"buffer": 0, "byteOffset": 36, "byteLength": 24, "byteStride": 8},
                {"buffer": 0, "byteOffset": 60, "byteLength": 12, "byteStride": 4}
            ],
            "accessors": [
                {"bufferView": 0, "componentType": 5123, "type": "VEC3", "count": 3, "min": [0, 0, 0], "max": [100, 200, 300]},
                {"bufferView": 1, "componentType": 5120, "normalized": true, "type": "VEC3", "count": 3},
                {"bufferView": 2, "componentType": 5122, "type": "VEC3", "count": 3, "min": [-5, -1000, 0], "max": [1000, 7, 2]},
                {"bufferView": 3, "componentType": 5120, "type": "VEC3", "count": 3, "min": [-3, 0, 0], "max": [1, 4, 5]}
            ]
        });
        if required {
            d["extensionsUsed"] = json!(["KHR_mesh_quantization"]);
            d["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
        }
        with_data_uri(d, &bin)
    };
    let c = import_gltf_bytes(&make(true), None, "q.gltf").unwrap();
    let p = &c.meshes[0].primitives[0];
    assert_eq!(
        p.positions,
        [[100.0, 0.0, 0.0], [0.0, 200.0, 0.0], [0.0, 0.0, 300.0]]
    );
    assert_eq!(
        p.normals,
        [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]],
        "renormalised (64/127 → 1)"
    );
    // Vertex 0: target 0 (−5, 7, 0), target 1 (−3, 4, 5); vertex 1: none; vertex 2: both.
    assert_eq!(p.morph.vertex_offsets(), [0, 2, 2, 4]);
    assert_eq!(
        p.morph.entry_position(),
        [
            [-5.0, 7.0, 0.0],
            [-3.0, 4.0, 5.0],
            [1000.0, -1000.0, 2.0],
            [1.0, 1.0, 1.0]
        ]
    );
    let e = import_gltf_bytes(&make(false), None, "q.gltf")
        .unwrap_err()
        .to_string();
    for f in [
        "meshes[0].primitives[0].attributes.POSITION",
        "meshes[0].primitives[0].attributes.NORMAL",
        "meshes[0].primitives[0].targets[0].POSITION",
    ] {
        assert!(
            e.contains(f) && e.contains("KHR_mesh_quantization"),
            "{f}: {e}"
        );
    }
}
