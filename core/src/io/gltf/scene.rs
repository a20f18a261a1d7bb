//! Nodes (rest transforms from TRS or a decomposed `matrix`), and the displayed scene's roots.
//!
//! Source: glTF 2.0 §3.5.2 "Transformations" (`matrix` or TRS; a matrix must be decomposable to TRS,
//! its last row `0 0 0 1`), §3.5.1 "Scenes" (`scene` is the one to display; when undefined the
//! loader chooses).

use glam::{Mat4, Quat, Vec3};
use gltf::json;

use super::Ctx;
use crate::error::{Error, Result};
use crate::rig::{Character, MeshId, Node, NodeId, SkinId, Transform};

/// Largest difference, relative to the largest entry, between a node matrix and the TRS it
/// decomposes into; above it the matrix has shear or projection and is refused. f32 round trips of
/// real files stay below 1e-6.
const DECOMPOSE_TOLERANCE: f32 = 1e-4;

/// Every node of the file, in file order.
///
/// # Errors
/// [`Error::Format`] naming `nodes[i].matrix` for a matrix that is not a TRS, or an index that
/// does not fit (all collected).
pub(super) fn nodes(ctx: &mut Ctx) -> Result<Vec<Node>> {
    let root = ctx.root;
    let mut problems = Vec::new();
    let mut parents: Vec<Option<NodeId>> = vec![None; root.nodes.len()];
    for (i, n) in root.nodes.iter().enumerate() {
        for c in n.children.iter().flatten() {
            if let Some(slot) = parents.get_mut(c.value()) {
                slot.get_or_insert(NodeId(i as u32));
            }
        }
    }
    let mut out = Vec::with_capacity(root.nodes.len());
    for (i, n) in root.nodes.iter().enumerate() {
        let rest = match rest_transform(n) {
            Ok(t) => t,
            Err(reason) => {
                problems.push(Error::format(
                    ctx.file,
                    format!("nodes[{i}].matrix"),
                    reason,
                ));
                Transform::default()
            }
        };
        if n.camera.is_some() {
            ctx.note(format!("nodes[{i}].camera"), "camera ignored");
        }
        if let Some(x) = n.extensions.as_ref().filter(|x| !x.others.is_empty()) {
            let names: Vec<&str> = x.others.keys().map(String::as_str).collect();
            ctx.note(
                format!("nodes[{i}].extensions"),
                format!("ignored: {}", names.join(", ")),
            );
        }
        out.push(Node {
            name: n.name.clone(),
            parent: parents[i],
            children: n
                .children
                .iter()
                .flatten()
                .map(|c| NodeId(c.value() as u32))
                .collect(),
            rest,
            mesh: n.mesh.map(|m| MeshId(m.value() as u32)),
            skin: n.skin.map(|s| SkinId(s.value() as u32)),
            weights: n.weights.clone(),
        });
    }
    Error::collect(problems)?;
    Ok(out)
}

/// The node's local transform: its TRS (rotation normalised; `links.rs` already refused
/// quaternions off unit length by more than the validator's tolerance), or its matrix decomposed.
fn rest_transform(n: &json::Node) -> std::result::Result<Transform, String> {
    let Some(m) = n.matrix else {
        let r = n.rotation.map_or(Quat::IDENTITY, |q| Quat::from_array(q.0));
        return Ok(Transform {
            translation: n.translation.map_or(Vec3::ZERO, Vec3::from),
            rotation: if r.length_squared() > 0.0 {
                r.normalize()
            } else {
                Quat::IDENTITY
            },
            scale: n.scale.map_or(Vec3::ONE, Vec3::from),
        });
    };
    let mat = Mat4::from_cols_array(&m);
    if mat.row(3) != glam::Vec4::new(0.0, 0.0, 0.0, 1.0) {
        return Err(format!(
            "last row is {:?}, must be [0, 0, 0, 1]",
            mat.row(3).to_array()
        ));
    }
    let t = Character::decompose(mat).ok_or(
        "not decomposable into translation/rotation/scale (not finite or a zero scale axis)",
    )?;
    let back = t.matrix();
    let scale = m.iter().fold(1.0f32, |a, x| a.max(x.abs()));
    let diff = back
        .to_cols_array()
        .iter()
        .zip(&m)
        .fold(0.0f32, |a, (x, y)| a.max((x - y).abs()));
    if diff > DECOMPOSE_TOLERANCE * scale {
        return Err(format!(
            "not a translation·rotation·scale matrix (shear or non-orthogonal axes: recomposed differs by {diff})"
        ));
    }
    Ok(t)
}

/// The displayed scene's root nodes: `scene`, else scene 0, else every parentless node.
///
/// # Errors
/// [`Error::Format`] naming `scene` when it points at a scene that does not exist.
pub(super) fn scene_roots(ctx: &mut Ctx, nodes: &[Node]) -> Result<Vec<NodeId>> {
    let root = ctx.root;
    let index = match root.scene {
        Some(s) => Some(s.value()),
        None if !root.scenes.is_empty() => {
            if root.scenes.len() > 1 {
                ctx.note(
                    "scene",
                    format!(
                        "no default scene: scene 0 of {} is displayed",
                        root.scenes.len()
                    ),
                );
            }
            Some(0)
        }
        None => None,
    };
    match index {
        Some(s) => {
            let scene = root
                .scenes
                .get(s)
                .ok_or_else(|| ctx.err("scene", format!("scene {s} does not exist")))?;
            Ok(scene
                .nodes
                .iter()
                .map(|n| NodeId(n.value() as u32))
                .collect())
        }
        None => {
            let roots: Vec<NodeId> = (0..nodes.len())
                .filter(|&i| nodes[i].parent.is_none())
                .map(|i| NodeId(i as u32))
                .collect();
            if !roots.is_empty() {
                ctx.note(
                    "scenes",
                    format!(
                        "the file has no scenes: all {} parentless nodes are shown",
                        roots.len()
                    ),
                );
            }
            Ok(roots)
        }
    }
}
