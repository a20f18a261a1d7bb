//! A linear head out as a morph-target glTF character, so a baked linear head plays in any engine
//! (issue 18): one skinned mesh whose targets are the basis, and the eyes as joints.
//!
//! The pack's forward model ([`super::forward`]) is `p = eyes(neutral + Σₑ cₑ·sₑ·Bₑ) + seam`, then
//! LBS with skin matrices `world_j · rest_j⁻¹ · bind`. In glTF:
//!
//! - **POSITION** = `neutral + seam` (the seam is a constant offset; a vertex the eyes turn must
//!   have no seam, checked), **targets** `Δₑ = sₑ·Bₑ` named by the pack's coefficient names, so
//!   morph weight `e` is the coefficient `cₑ` itself;
//! - **joints**: the pack's skeleton (local TRS from its rest world matrices) with
//!   **inverse bind matrices** `rest_j⁻¹ · bind`, so at rest the skin is `bind`;
//! - **eyes**: eye `i`'s turn `p ← p + wᵢ·(Rᵢ(p − cᵢ) + cᵢ − p)` is LBS with one more joint per
//!   eye, a child of the joint that carries the eye's vertices (H), placed at the eye centre in H's
//!   space (`X·cᵢ`, `X = rest_H⁻¹ · bind`), inverse bind `T(−X·cᵢ) · X`: a gaze `Rᵢ` is that
//!   joint's local rotation `Q·Rᵢ·Q⁻¹` (`Q` the rotation of `X`), and a vertex of eye weight `w`
//!   on H takes `1 − w` on H and `w` on the eye joint. Refused when an eye vertex is skinned to
//!   more than one joint or both eyes turn one vertex (no single LBS reproduces that).
//!
//! Source: glTF 2.0 §3.7.3 (skins: joint matrix = world · inverse bind), §3.7.2.2 (morph targets),
//! §3.11; the forward model of seed 000 as mien implements it.

use glam::{Mat4, Quat, Vec3};
use serde_json::{Value, json};

use super::forward::from_row_major;
use super::pack::GnmPack;
use crate::error::{Error, Result};

/// The names of the two eye joints the export adds (found by head motion's standard names).
pub const EYE_JOINT_NAMES: [&str; 2] = ["LeftEye", "RightEye"];

/// What the export built, for a caller that drives it: the node of each eye joint, the mesh
/// node, and the rotation `Q` that maps a pack gaze into the eye joint's local frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportedHead {
    /// The GLB bytes.
    pub glb: Vec<u8>,
    /// glTF node index of the mesh node.
    pub mesh_node: usize,
    /// glTF node indices of the left and right eye joints.
    pub eye_nodes: [usize; 2],
    /// `Q`: a pack gaze `R` becomes the eye joint's local rotation `Q·R·Q⁻¹`.
    pub eye_frame: Quat,
}

fn invalid(file: &str, reason: String) -> Error {
    Error::Invalid {
        what: format!("{file}: glTF export"),
        reason,
    }
}

/// Export `pack` (named `file` in messages) as a GLB character (module docs).
///
/// # Errors
/// [`Error::Invalid`] for a pack the glTF skin cannot reproduce: an eye vertex skinned to several
/// joints or turned by both eyes, an eye vertex with a seam offset, a joint whose rest matrix is
/// singular, no skeleton.
pub fn pack_to_glb(pack: &GnmPack, file: &str) -> Result<ExportedHead> {
    let v_n = pack.vertex_count();
    let e_n = pack.coeff_count();
    let joints = &pack.header.joints;
    if joints.is_empty() {
        return Err(invalid(file, "the pack has no skeleton".into()));
    }
    let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
    if let Some(j) = rest.iter().position(|m| m.determinant().abs() < 1e-12) {
        return Err(invalid(
            file,
            format!("joint {j}'s rest matrix is singular"),
        ));
    }
    let bind = from_row_major(&pack.header.bind_transform);
    // Normalised skin (the pack renormalises its f16 weights); a vertex without weights is held
    // by joint 0 (the pack moves it by `bind` alone: the same at rest).
    let mut skin_j: Vec<[u16; 4]> = Vec::with_capacity(v_n);
    let mut skin_w: Vec<[f32; 4]> = Vec::with_capacity(v_n);
    for v in 0..v_n {
        let (ix, w) = (pack.skin_index[v], pack.skin_weight[v]);
        let total: f32 = w.iter().sum();
        if total > 0.0 {
            skin_j.push(ix);
            skin_w.push(w.map(|x| x / total));
        } else {
            skin_j.push([0; 4]);
            skin_w.push([1.0, 0.0, 0.0, 0.0]);
        }
    }
    // The joint that carries each eye: the one joint every vertex it turns is skinned to.
    let eye_w = |i: usize, v: usize| pack.eye_weights.get(i * v_n + v).copied().unwrap_or(0.0);
    let mut carrier = [None::<u16>; 2];
    for v in 0..v_n {
        let (l, r) = (eye_w(0, v), eye_w(1, v));
        if l != 0.0 && r != 0.0 {
            return Err(invalid(file, format!("vertex {v} is turned by both eyes")));
        }
        for i in 0..2 {
            if eye_w(i, v) == 0.0 {
                continue;
            }
            let on: Vec<u16> = (0..4)
                .filter(|&k| skin_w[v][k] != 0.0)
                .map(|k| skin_j[v][k])
                .collect();
            let [j] = on[..] else {
                return Err(invalid(
                    file,
                    format!(
                        "eye vertex {v} is skinned to {} joints; an eye joint needs one",
                        on.len()
                    ),
                ));
            };
            if pack.seam.as_ref().is_some_and(|s| s[v] != [0.0; 3]) {
                return Err(invalid(
                    file,
                    format!("eye vertex {v} has a neck-seam offset"),
                ));
            }
            match carrier[i] {
                None => carrier[i] = Some(j),
                Some(c) if c == j => {}
                Some(c) => {
                    return Err(invalid(
                        file,
                        format!("eye {i}'s vertices are skinned to joints {c} and {j}"),
                    ));
                }
            }
        }
    }
    let head = carrier[0].or(carrier[1]).unwrap_or(0) as usize;
    let x = rest[head].inverse() * bind;
    let (_, q, _) = x.to_scale_rotation_translation();
    let eye_nodes = [joints.len(), joints.len() + 1];
    let mesh_node = joints.len() + 2;

    // Nodes: the skeleton (local TRS), the two eyes under their carriers, the mesh node.
    let mut nodes = Vec::new();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); joints.len() + 2];
    let mut roots = Vec::new();
    for (j, pj) in joints.iter().enumerate() {
        let local = if pj.parent >= 0 {
            children[pj.parent as usize].push(j);
            rest[pj.parent as usize].inverse() * rest[j]
        } else {
            roots.push(j);
            rest[j]
        };
        let (s, r, t) = local.to_scale_rotation_translation();
        nodes.push(json!({
            "name": pj.name, "translation": t.to_array(), "rotation": r.normalize().to_array(),
            "scale": s.to_array(),
        }));
    }
    let mut ibm: Vec<Mat4> = rest.iter().map(|r| r.inverse() * bind).collect();
    for i in 0..2 {
        let c = carrier[i].map_or(head, |c| c as usize);
        let xc = (rest[c].inverse() * bind).transform_point3(Vec3::from(pack.eye_positions[i]));
        children[c].push(eye_nodes[i]);
        nodes.push(json!({"name": EYE_JOINT_NAMES[i], "translation": xc.to_array()}));
        ibm.push(Mat4::from_translation(-xc) * rest[c].inverse() * bind);
    }
    for (n, ch) in children.iter().enumerate() {
        if !ch.is_empty() {
            nodes[n]["children"] = json!(ch);
        }
    }
    nodes.push(json!({"name": "head", "mesh": 0, "skin": 0}));
    roots.push(mesh_node);

    // Vertex data: positions (+ seam), eye-blended skin, targets.
    let mut pos: Vec<[f32; 3]> = pack.neutral.clone();
    if let Some(s) = &pack.seam {
        for (p, d) in pos.iter_mut().zip(s) {
            *p = [p[0] + d[0], p[1] + d[1], p[2] + d[2]];
        }
    }
    for v in 0..v_n {
        for i in 0..2 {
            let w = eye_w(i, v);
            if w != 0.0 {
                // One joint (checked): 1 − w on it, w on the eye.
                let k = (0..4).find(|&k| skin_w[v][k] != 0.0).unwrap_or(0);
                let j = skin_j[v][k];
                skin_j[v] = [j, eye_nodes[i] as u16, 0, 0];
                skin_w[v] = [1.0 - w, w, 0.0, 0.0];
            }
        }
    }
    let mut bin: Vec<u8> = Vec::new();
    let mut views: Vec<Value> = Vec::new();
    let mut accessors: Vec<Value> = Vec::new();
    let mut push = |bin: &mut Vec<u8>, bytes: &[u8], acc: Value, target: Option<u32>| -> usize {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let mut view = json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        bin.extend_from_slice(bytes);
        views.push(view);
        let mut a = acc;
        a["bufferView"] = json!(views.len() - 1);
        accessors.push(a);
        accessors.len() - 1
    };
    let f32s = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let bounds = |p: &[[f32; 3]]| {
        let mut lo = [f32::MAX; 3];
        let mut hi = [f32::MIN; 3];
        for q in p {
            for k in 0..3 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
        }
        (lo, hi)
    };
    let (lo, hi) = bounds(&pos);
    let flat: Vec<f32> = pos.iter().flatten().copied().collect();
    let a_pos = push(
        &mut bin,
        &f32s(&flat),
        json!({"componentType": 5126, "count": v_n, "type": "VEC3", "min": lo, "max": hi}),
        Some(34962),
    );
    let idx: Vec<u8> = pack
        .faces
        .iter()
        .flatten()
        .flat_map(|i| i.to_le_bytes())
        .collect();
    let a_idx = push(
        &mut bin,
        &idx,
        json!({"componentType": 5125, "count": pack.faces.len() * 3, "type": "SCALAR"}),
        Some(34963),
    );
    let jbytes: Vec<u8> = skin_j
        .iter()
        .flatten()
        .flat_map(|j| j.to_le_bytes())
        .collect();
    let a_j = push(
        &mut bin,
        &jbytes,
        json!({"componentType": 5123, "count": v_n, "type": "VEC4"}),
        Some(34962),
    );
    let wflat: Vec<f32> = skin_w.iter().flatten().copied().collect();
    let a_w = push(
        &mut bin,
        &f32s(&wflat),
        json!({"componentType": 5126, "count": v_n, "type": "VEC4"}),
        Some(34962),
    );
    let mut attributes = json!({"POSITION": a_pos, "JOINTS_0": a_j, "WEIGHTS_0": a_w});
    if let Some(uv) = &pack.uv {
        let flat: Vec<f32> = uv.iter().flatten().copied().collect();
        let a = push(
            &mut bin,
            &f32s(&flat),
            json!({"componentType": 5126, "count": v_n, "type": "VEC2"}),
            Some(34962),
        );
        attributes["TEXCOORD_0"] = json!(a);
    }
    let mut targets = Vec::with_capacity(e_n);
    for e in 0..e_n {
        let s = pack.basis_scale[e];
        let d: Vec<[f32; 3]> = (0..v_n)
            .map(|v| [0, 1, 2].map(|k| s * pack.basis_at(v, e, k)))
            .collect();
        let (lo, hi) = bounds(&d);
        let flat: Vec<f32> = d.iter().flatten().copied().collect();
        let a = push(
            &mut bin,
            &f32s(&flat),
            json!({"componentType": 5126, "count": v_n, "type": "VEC3", "min": lo, "max": hi}),
            Some(34962),
        );
        targets.push(json!({"POSITION": a}));
    }
    let ibm_flat: Vec<f32> = ibm.iter().flat_map(|m| m.to_cols_array()).collect();
    let a_ibm = push(
        &mut bin,
        &f32s(&ibm_flat),
        json!({"componentType": 5126, "count": ibm.len(), "type": "MAT4"}),
        None,
    );
    let names: Vec<String> = (0..e_n)
        .map(|e| {
            pack.header
                .names
                .get(e)
                .cloned()
                .unwrap_or_else(|| format!("coefficient_{e}"))
        })
        .collect();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let skin_joints: Vec<usize> = (0..joints.len() + 2).collect();
    let root = json!({
        "asset": {"version": "2.0", "generator": "mien (linear head export)"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
        "meshes": [{
            "name": "head",
            "primitives": [{"attributes": attributes, "indices": a_idx, "targets": targets, "mode": 4}],
            "weights": vec![0.0f32; e_n],
            "extras": {"targetNames": names},
        }],
        "skins": [{"joints": skin_joints, "inverseBindMatrices": a_ibm}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len()}],
        "extras": {"mien": {
            "linear_head": std::path::Path::new(file).file_name().map_or_else(|| file.to_string(), |f| f.to_string_lossy().into_owned()),
            "model": pack.header.model,
        }},
    });
    let glb = crate::io::gltf::write_glb(&root, bin, file)?;
    Ok(ExportedHead {
        glb,
        mesh_node,
        eye_nodes,
        eye_frame: q,
    })
}
