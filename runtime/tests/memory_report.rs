//! The memory report's byte counts (`MemoryReport::rig_bytes`, `sink_bytes`) on the CPU device,
//! against a count by hand of every buffer the CPU backend keeps for a character built here:
//! a quad of 4 vertices with normals and tangents, 2 triangles and one position morph target
//! that moves every vertex (4 morph entries), on one node without a skin.

use std::sync::Arc;

use mien_runtime::{Asset, Device, LiftOptions, Runtime, RuntimeOptions};

/// The quad as a GLB (JSON chunk + BIN chunk), written by hand.
fn quad_glb() -> Vec<u8> {
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut bin = f(&[0., 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0.]); // POSITION 0..48
    bin.extend(f(&[0., 0., 1., 0., 0., 1., 0., 0., 1., 0., 0., 1.])); // NORMAL 48..96
    bin.extend(f(&[
        1., 0., 0., 1., 1., 0., 0., 1., 1., 0., 0., 1., 1., 0., 0., 1.,
    ])); // TANGENT 96..160
    bin.extend(f(&[0., 0., 0.1, 0., 0., 0.2, 0., 0., 0.3, 0., 0., 0.4])); // target 0 POSITION 160..208
    bin.extend([0u16, 1, 2, 0, 2, 3].iter().flat_map(|i| i.to_le_bytes())); // 208..220
    let json = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
"nodes":[{"mesh":0}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0,"NORMAL":1,"TANGENT":2},"indices":4,
  "targets":[{"POSITION":3}]}],"weights":[0.5]}],
"buffers":[{"byteLength":220}],
"bufferViews":[{"buffer":0,"byteLength":208},{"buffer":0,"byteOffset":208,"byteLength":12}],
"accessors":[
 {"bufferView":0,"componentType":5126,"type":"VEC3","count":4,"min":[0,0,0],"max":[1,1,0]},
 {"bufferView":0,"byteOffset":48,"componentType":5126,"type":"VEC3","count":4},
 {"bufferView":0,"byteOffset":96,"componentType":5126,"type":"VEC4","count":4},
 {"bufferView":0,"byteOffset":160,"componentType":5126,"type":"VEC3","count":4,"min":[0,0,0.1],"max":[0,0,0.4]},
 {"bufferView":1,"componentType":5123,"type":"SCALAR","count":6}]}"#;
    let mut j = json.as_bytes().to_vec();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let total = 12 + 8 + j.len() + 8 + bin.len();
    let mut out = Vec::new();
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((j.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(j);
    out.extend((bin.len() as u32).to_le_bytes());
    out.extend(b"BIN\0");
    out.extend(bin);
    out
}

fn quad() -> Arc<Asset> {
    let ch = mien_core::io::gltf::import_gltf_bytes(&quad_glb(), None, "quad.glb").unwrap();
    Arc::new(Asset::from_character(ch).unwrap())
}

/// By hand, for `n` instances of the quad (V = 4 vertices, 4 morph entries, 4 tangents, one
/// weight, one palette entry: the mesh node, no skin):
///
/// - shared, once whatever `n` (the uploaded rig): per vertex position 12 + normal 12 + joints
///   16 + weights 16 = 56, so 4 · 56 = 224; the morph row offsets (V + 1) · 4 = 20; per morph
///   entry its target index 4 + position delta 12 + normal delta 12 = 28, so 4 · 28 = 112; the
///   tangents 4 · 16 = 64, and a tangent delta per morph entry 4 · 12 = 48 (zeros: the target has
///   none, but a rig with tangents carries one per entry, `RigData::morph_tangent`) — 468 bytes. No dense morph
///   blocks: 4 entries fill under a quarter of one 64-lane block.
/// - per instance: its weight 4, its palette entry (joint matrix 64 + normal matrix 36) 100,
///   posed position and normal 4 · 24 = 96 and tangents 4 · 16 = 64 — 264 bytes.
/// - the sink: one slot per vertex and instance (the debug lift), each centre 16 + colour 4 +
///   covariance 2 · 16 = 52 bytes.
fn by_hand(n: u64) -> (u64, u64) {
    let v = 4;
    let shared = v * (12 + 12 + 16 + 16) + (v + 1) * 4 + 4 * (4 + 12 + 12) + v * 16 + 4 * 12;
    assert_eq!(shared, 468);
    let per_instance = 4 + (64 + 36) + v * 24 + v * 16;
    assert_eq!(per_instance, 264);
    (shared + n * per_instance, n * v * 52)
}

#[test]
fn rig_and_sink_bytes_equal_a_count_by_hand() {
    let asset = quad();
    for n in [1u32, 3] {
        let o = RuntimeOptions {
            instances: n,
            // The debug lift: one gaussian per vertex (the count by hand below).
            lift: Some(LiftOptions {
                kind: mien_runtime::LiftKind::Debug,
                ..LiftOptions::default()
            }),
        };
        let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &o).unwrap();
        rt.update(0.0).unwrap();
        let m = rt.memory();
        let (rig, sink) = by_hand(u64::from(n));
        assert_eq!((m.vertices, m.instances), (4, n));
        assert_eq!(m.sink_slots, u64::from(n) * 4);
        assert_eq!(m.rig_bytes, rig, "rig bytes, {n} instances: {m:?}");
        assert_eq!(m.sink_bytes, sink, "sink bytes, {n} instances: {m:?}");
    }
    // Without a lift there is no sink; the rig is the same.
    let o = RuntimeOptions {
        instances: 2,
        lift: None,
    };
    let m = Runtime::new(Arc::clone(&asset), &Device::Cpu, &o)
        .unwrap()
        .memory();
    assert_eq!((m.rig_bytes, m.sink_bytes), (by_hand(2).0, 0), "{m:?}");
}
