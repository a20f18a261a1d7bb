//! One glTF mesh with morph targets → a pack that poses like the morph path (`rig::RigData`).
//!
//! - **Mesh**: `--mesh NAME|INDEX`, default the mesh with the most targets (lower index on a tie);
//!   its primitives are concatenated in order (vertices, triangles offset). It must be drawn by a
//!   node of the displayed scene; the first such node (parent-first order) is used.
//! - **Space**: the morph path poses a rigid mesh by its node's world matrix `M` at the rest pose,
//!   so the neutral is `M·p` and each delta `L·δ` (`L` the linear part of `M`), computed in f64
//!   from the imported f32 values: the pack then lives in world space with one identity root joint.
//!   A skinned mesh is posed by `world(joint)·inverseBind` from mesh space (glTF 2.0 §3.7.3: the
//!   node's own transform is ignored), so the neutral and deltas stay in mesh space and the skin is
//!   carried over: the skin's joints in parent-first order (parent = nearest ancestor in the skin),
//!   rest world = inverseBind⁻¹, the importer's ≤ 4 influences per vertex (a primitive without
//!   influences binds to the skin's first joint, as the morph path does).
//! - **Coefficients**: one per morph target, named by `extras.targetNames` (else `target_<i>`).
//! - **Eyes**: none unless `--eyeballs FIRST-LAST` names the vertices (a glTF's eyeballs are
//!   usually meshes of their own, turned by nodes).

use std::collections::HashMap;

use glam::{DMat4, DVec3, Mat4};
use serde_json::json;

use super::assemble::{Collected, SkinData, assemble};
use super::eyes::{EyeSource, eyes};
use super::{BakeOptions, Baked, file_label};
use crate::error::{Error, Result};
use crate::gnm::pack::{MAX_JOINTS, PackJoint};
use crate::rig::{Character, NodeId};

/// The mesh index chosen by `key` (name, else index), or the one with the most targets.
fn choose_mesh(ch: &Character, key: Option<&str>, what: &str) -> Result<usize> {
    match key {
        Some(k) => ch
            .meshes
            .iter()
            .position(|m| m.name.as_deref() == Some(k))
            .or_else(|| k.parse::<usize>().ok().filter(|&i| i < ch.meshes.len()))
            .ok_or_else(|| Error::Invalid {
                what: format!("{what}: --mesh {k}"),
                reason: format!(
                    "no such mesh; it has [{}]",
                    ch.meshes
                        .iter()
                        .enumerate()
                        .map(|(i, m)| format!(
                            "{i}: {} ({} targets)",
                            m.name.as_deref().unwrap_or("(unnamed)"),
                            m.target_count()
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        None => ch
            .meshes
            .iter()
            .enumerate()
            .max_by(|a, b| {
                a.1.target_count()
                    .cmp(&b.1.target_count())
                    .then(b.0.cmp(&a.0))
            })
            .map(|(i, _)| i)
            .ok_or_else(|| Error::Invalid {
                what: what.into(),
                reason: "has no meshes".into(),
            }),
    }
}

/// Row-major f32 of a glam matrix.
fn row_major(m: DMat4) -> [f32; 16] {
    let t = m.transpose().to_cols_array();
    t.map(|x| x as f32)
}

/// The skin of `node` carried into the pack; returns the skin data and the map from the skin's
/// joint index to the pack's.
fn carry_skin(
    ch: &Character,
    skin_index: usize,
    what: &str,
    f: f64,
) -> Result<(SkinData, Vec<u16>)> {
    let sk = &ch.skins[skin_index];
    if sk.joints.len() as u64 > MAX_JOINTS {
        return Err(Error::Limit {
            what: format!("{what}: skins[{skin_index}].joints"),
            limit: MAX_JOINTS,
            found: sk.joints.len() as u64,
        });
    }
    let mut first_of: HashMap<NodeId, usize> = HashMap::new();
    for (j, n) in sk.joints.iter().enumerate() {
        first_of.entry(*n).or_insert(j);
    }
    let order: Vec<NodeId> = ch
        .hierarchy
        .order()
        .iter()
        .copied()
        .filter(|n| first_of.contains_key(n))
        .collect();
    let new_of: HashMap<NodeId, u16> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (*n, i as u16))
        .collect();
    let mut joints = Vec::with_capacity(order.len());
    let mut rest_world = Vec::with_capacity(order.len());
    for n in &order {
        let mut p = ch.nodes[n.index()].parent;
        while let Some(q) = p {
            if new_of.contains_key(&q) {
                break;
            }
            p = ch.nodes[q.index()].parent;
        }
        let parent = p.and_then(|q| new_of.get(&q)).map_or(-1, |&i| i32::from(i));
        joints.push(PackJoint {
            name: ch.nodes[n.index()]
                .name
                .clone()
                .unwrap_or_else(|| format!("node_{}", n.index())),
            parent,
        });
        let j = first_of[n];
        let ib = sk.inverse_bind[j].as_dmat4();
        let det = ib.determinant();
        if !(det.is_finite() && det.abs() > 1e-12) {
            return Err(Error::Invalid {
                what: format!("{what}: skins[{skin_index}].inverseBindMatrices[{j}]"),
                reason: format!("singular (determinant {det})"),
            });
        }
        let mut rest = ib.inverse();
        rest.w_axis.x *= f;
        rest.w_axis.y *= f;
        rest.w_axis.z *= f;
        rest_world.push(row_major(rest));
    }
    let map = sk.joints.iter().map(|n| new_of[n]).collect();
    let label = format!(
        "glTF skins[{skin_index}]{}: {} joints",
        sk.name
            .as_ref()
            .map(|n| format!(" `{n}`"))
            .unwrap_or_default(),
        order.len()
    );
    Ok((
        SkinData {
            joints,
            rest_world,
            index: Vec::new(),
            weight: Vec::new(),
            label,
        },
        map,
    ))
}

pub(super) fn bake(path: &std::path::Path, options: &BakeOptions) -> Result<Baked> {
    let ch = crate::io::gltf::import_gltf(path)?;
    let what = path.display().to_string();
    let m = choose_mesh(&ch, options.mesh.as_deref(), &what)?;
    let mesh = &ch.meshes[m];
    if mesh.target_count() == 0 {
        return Err(Error::Invalid {
            what: format!("{what}: meshes[{m}]"),
            reason: "has no morph targets to bake".into(),
        });
    }
    let nodes: Vec<NodeId> = ch
        .mesh_nodes()
        .into_iter()
        .filter(|n| ch.nodes[n.index()].mesh.map(|x| x.index()) == Some(m))
        .collect();
    let node = *nodes.first().ok_or_else(|| Error::Invalid {
        what: format!("{what}: meshes[{m}]"),
        reason: "is not drawn by any node of the scene".into(),
    })?;
    let mut notes: Vec<String> = ch
        .notes
        .iter()
        .take(20)
        .map(|n| format!("import: {}: {}", n.field, n.message))
        .collect();
    if nodes.len() > 1 {
        notes.push(format!(
            "meshes[{m}] is drawn by {} nodes; baked under the first, nodes[{}]",
            nodes.len(),
            node.index()
        ));
    }
    let units = options.units.resolve(0.0, true)?;
    let f = units.to_metres;
    let skin_id = ch.nodes[node.index()].skin.map(|s| s.index());
    let (mut skin, joint_map) = match skin_id {
        Some(s) => {
            let (d, map) = carry_skin(&ch, s, &what, f)?;
            (Some(d), map)
        }
        None => (None, Vec::new()),
    };
    // Rigid: world matrix of the node at the rest pose; skinned: mesh space.
    let transform = match skin_id {
        Some(_) => DMat4::IDENTITY,
        None => {
            let (mut scratch, mut world) = (Vec::new(), Vec::new());
            ch.world_matrices(&ch.rest_pose(), &mut scratch, &mut world);
            world
                .get(node.index())
                .copied()
                .unwrap_or(Mat4::IDENTITY)
                .as_dmat4()
        }
    };
    let units_m = DMat4::from_scale(DVec3::splat(f)) * transform;
    let mut neutral = Vec::new();
    let mut triangles = Vec::new();
    let mut uv = Some(Vec::new());
    for p in &mesh.primitives {
        let base = neutral.len() as u32;
        neutral.extend(p.positions.iter().map(|q| {
            units_m
                .transform_point3(DVec3::from(q.map(f64::from)))
                .to_array()
        }));
        triangles.extend(
            p.indices
                .chunks_exact(3)
                .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
        );
        match (&mut uv, p.uvs.len() == p.positions.len()) {
            (Some(u), true) => u.extend_from_slice(&p.uvs),
            _ => uv = None,
        }
        if let Some(s) = &mut skin {
            match &p.influences {
                Some(inf) => {
                    s.index.extend(
                        inf.joints
                            .iter()
                            .map(|j| j.map(|x| joint_map.get(x as usize).copied().unwrap_or(0))),
                    );
                    s.weight.extend_from_slice(&inf.weights);
                }
                None => {
                    s.index.extend(std::iter::repeat_n(
                        [joint_map.first().copied().unwrap_or(0); 4],
                        p.positions.len(),
                    ));
                    s.weight
                        .extend(std::iter::repeat_n([1.0, 0.0, 0.0, 0.0], p.positions.len()));
                }
            }
        }
    }
    let v = neutral.len();
    let uv_note = if uv.is_some() {
        "stored".to_owned()
    } else {
        "omitted: not every primitive has TEXCOORD_0".to_owned()
    };
    let (range, label) = match options.eyes {
        EyeSource::Range { first, last } => (Some((first, last)), format!("range {first}-{last}")),
        _ => (None, String::new()),
    };
    let (eye_positions, eye_weights, eye_fig) = eyes(&neutral, range, &label)?;
    let provenance = json!({
        "kind": "gltf",
        "file": file_label(path),
        "mesh": m,
        "meshName": mesh.name,
        "node": node.index(),
        "primitives": mesh.primitives.len(),
        "space": if skin_id.is_some() { "mesh space (skinned)" } else { "world space at the rest pose (rigid)" },
    });
    let collected = Collected {
        kind: "gltf",
        input: file_label(path),
        neutral,
        triangles,
        quads: None,
        uv,
        uv_note,
        names: mesh.target_names.clone(),
        skin: skin.unwrap_or_else(|| SkinData::single_root(v)),
        eye_positions,
        eye_weights,
        eyes: eye_fig,
        units,
        provenance,
        notes,
    };
    let linear = units_m;
    assemble(collected, &mut |t, out| {
        out.resize(v, [0.0; 3]);
        let mut base = 0;
        for p in &mesh.primitives {
            let ms = &p.morph;
            for row in 0..ms.vertex_count() {
                let (a, b) = (
                    ms.vertex_offsets()[row] as usize,
                    ms.vertex_offsets()[row + 1] as usize,
                );
                for e in a..b {
                    if ms.entry_target()[e] as usize == t {
                        out[base + row] = linear
                            .transform_vector3(DVec3::from(ms.entry_position()[e].map(f64::from)))
                            .to_array();
                    }
                }
            }
            base += p.positions.len();
        }
        Ok(())
    })
}
