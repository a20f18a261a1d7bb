//! Helpers shared by the glTF import tests.
//!
//! The shared data folder stores files from nested upstream folders flat, with `/` spelled `__`
//! (`base/data/animation_data/x.gltf` → `base__data__animation_data__x.gltf`). A `.gltf` keeps its
//! original buffer URIs (`x.bin`), so [`stage`] rebuilds the original layout in a temporary folder
//! (never in the repository) when a referenced buffer is only present under its flattened name.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/data` from the crate.
pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// A path to import `path` from: `path` itself when its external buffers sit beside it, else a copy
/// in a temporary folder (returned to keep it alive) with each buffer under its original URI.
pub fn stage(path: &Path) -> (Option<tempfile::TempDir>, PathBuf) {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(path).unwrap())
    else {
        return (None, path.to_path_buf());
    };
    let dir = path.parent().unwrap();
    let uris: Vec<String> = json["buffers"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(|b| b["uri"].as_str())
                .filter(|u| !u.starts_with("data:"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if uris.iter().all(|u| dir.join(u).exists()) {
        return (None, path.to_path_buf());
    }
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let prefix = name.rfind("__").map_or("", |i| &name[..i + 2]);
    let tmp = tempfile::tempdir().unwrap();
    for u in &uris {
        let flat = dir.join(format!("{prefix}{u}"));
        assert!(
            flat.exists(),
            "{name}: buffer `{u}` is neither beside it nor at {}",
            flat.display()
        );
        std::fs::copy(&flat, tmp.path().join(u)).unwrap();
    }
    let staged = tmp.path().join(&name);
    std::fs::copy(path, &staged).unwrap();
    (Some(tmp), staged)
}

/// A column-major 4×4 matrix in f64 (`m[col][row]`), for reference computations.
pub type M4 = [[f64; 4]; 4];

/// The identity.
pub const IDENTITY: M4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// `a · b`.
pub fn mul(a: &M4, b: &M4) -> M4 {
    let mut m = [[0.0; 4]; 4];
    for c in 0..4 {
        for r in 0..4 {
            m[c][r] = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    m
}

/// `T·R·S` from glTF TRS (quaternion x, y, z, w), glTF 2.0 §3.5.3.
pub fn trs(t: [f64; 3], q: [f64; 4], s: [f64; 3]) -> M4 {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let [x, y, z, w] = q.map(|v| v / n);
    let r = [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + z * w),
            2.0 * (x * z - y * w),
        ],
        [
            2.0 * (x * y - z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + x * w),
        ],
        [
            2.0 * (x * z + y * w),
            2.0 * (y * z - x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ];
    let mut m = IDENTITY;
    for c in 0..3 {
        for k in 0..3 {
            m[c][k] = r[c][k] * s[c];
        }
    }
    m[3] = [t[0], t[1], t[2], 1.0];
    m
}

/// `m · (p, 1)`.
pub fn apply(m: &M4, p: [f64; 3]) -> [f64; 3] {
    let mut o = [0.0; 3];
    for (r, out) in o.iter_mut().enumerate() {
        *out = m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r];
    }
    o
}

/// The local matrix of a glTF node JSON object (TRS or `matrix`), in f64.
pub fn local_of(node: &serde_json::Value) -> M4 {
    let f = |k: &str, d: &[f64]| -> Vec<f64> {
        node[k].as_array().map_or(d.to_vec(), |a| {
            a.iter().map(|x| x.as_f64().unwrap()).collect()
        })
    };
    if let Some(m) = node["matrix"].as_array() {
        let v: Vec<f64> = m.iter().map(|x| x.as_f64().unwrap()).collect();
        let mut out = [[0.0; 4]; 4];
        for c in 0..4 {
            for r in 0..4 {
                out[c][r] = v[4 * c + r];
            }
        }
        return out;
    }
    let t = f("translation", &[0.0, 0.0, 0.0]);
    let q = f("rotation", &[0.0, 0.0, 0.0, 1.0]);
    let s = f("scale", &[1.0, 1.0, 1.0]);
    trs(
        [t[0], t[1], t[2]],
        [q[0], q[1], q[2], q[3]],
        [s[0], s[1], s[2]],
    )
}

/// World matrix of `node` from the glTF JSON (parents found from `children`), in f64.
pub fn world_of(json: &serde_json::Value, node: usize) -> M4 {
    let nodes = json["nodes"].as_array().unwrap();
    let parent = nodes.iter().position(|n| {
        n["children"]
            .as_array()
            .is_some_and(|c| c.iter().any(|x| x.as_u64() == Some(node as u64)))
    });
    let local = local_of(&nodes[node]);
    match parent {
        Some(p) => mul(&world_of(json, p), &local),
        None => local,
    }
}

/// The JSON of a `.gltf` or `.glb` file, read independently of the importer.
pub fn json_of(path: &Path) -> serde_json::Value {
    let b = std::fs::read(path).unwrap();
    if b.starts_with(b"glTF") {
        let len = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
        serde_json::from_slice(&b[20..20 + len]).unwrap()
    } else {
        serde_json::from_slice(&b).unwrap()
    }
}

/// The GLB BIN chunk of `path` (the chunk after the JSON one).
pub fn glb_bin(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    let len = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let at = 20 + len;
    let blen = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    b[at + 8..at + 8 + blen].to_vec()
}

/// A glTF JSON document with `bin` as buffer 0 in a base64 `data:` URI.
pub fn with_data_uri(mut json: serde_json::Value, bin: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bin)
    );
    json["buffers"] = serde_json::json!([{ "byteLength": bin.len(), "uri": uri }]);
    serde_json::to_vec(&json).unwrap()
}

/// Little-endian bytes of `v`.
pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Pose `character` at time `t` with `clip` (if any) through the core API and return every
/// flattened vertex's world position, with the rig (for instance lookup).
pub fn pose(
    character: &mien_core::rig::Character,
    clip: Option<&str>,
    t: f64,
    edit: impl Fn(&mut mien_core::rig::Pose),
) -> (mien_core::rig::RigData, Vec<[f32; 3]>) {
    use mien_core::rig::{ControlStats, LimitStats, MorphLimiter, RigControls, RigData};
    let mut pose = character.rest_pose();
    if let Some(c) = clip {
        character.apply_clip(character.find_clip(c).unwrap(), t, &mut pose);
    }
    edit(&mut pose);
    let (mut locals, mut world) = (Vec::new(), Vec::new());
    character.world_matrices(&pose, &mut locals, &mut world);
    let rig = RigData::from_character(character).unwrap();
    rig.validate().unwrap();
    let mut controls = RigControls::default();
    rig.controls_from_pose(&pose, &world, &mut controls);
    let (mut limiter, mut scratch, mut stats) = (
        MorphLimiter::new(),
        LimitStats::default(),
        ControlStats::default(),
    );
    rig.limit_weights(
        &mut controls.weights,
        &mut limiter,
        &mut scratch,
        &mut stats,
    );
    let mut normals = Vec::new();
    RigData::normal_palette(&controls.palette, &mut normals);
    let out = (0..rig.vertex_count())
        .map(|v| {
            rig.pose_vertex(v, &controls.weights, &controls.palette, &normals)
                .0
        })
        .collect();
    (rig, out)
}
