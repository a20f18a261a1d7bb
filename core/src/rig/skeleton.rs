//! The node hierarchy (joints are nodes) and world matrices.
//!
//! Source: glTF 2.0 §3.5 "Nodes and Hierarchy": a node's local matrix is `T·R·S`; its world matrix
//! is the parent's world matrix times its local matrix; the hierarchy is a forest (no cycles, one
//! parent per node).

use glam::{Mat4, Quat, Vec3};

use super::ids::{MeshId, NodeId, SkinId};
use crate::error::{Error, Result};

/// A node's local transform: translation (metres), rotation (unit quaternion), scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation, metres.
    pub translation: Vec3,
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Per-axis scale.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Transform {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            scale: Vec3::ONE,
        }
    }
}

impl Transform {
    /// `T·R·S` as a column-major matrix.
    pub fn matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// A node of the hierarchy.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// The file's name, if any.
    pub name: Option<String>,
    /// Parent node, `None` for a root.
    pub parent: Option<NodeId>,
    /// Child nodes in file order.
    pub children: Vec<NodeId>,
    /// Rest (bind-file) local transform. A node given as a matrix is decomposed on import.
    pub rest: Transform,
    /// The mesh this node instances, if any.
    pub mesh: Option<MeshId>,
    /// The skin that deforms this node's mesh, if any.
    pub skin: Option<SkinId>,
    /// The node's own default morph weights (override the mesh's), if any.
    pub weights: Option<Vec<f32>>,
}

/// The hierarchy in parent-before-child order, checked once so world matrices are one linear pass.
#[derive(Clone, Debug, Default)]
pub struct Hierarchy {
    order: Vec<NodeId>,
}

impl Hierarchy {
    /// Check that `nodes` form a forest and compute a parent-first order.
    ///
    /// # Errors
    /// [`Error::Format`] naming the node when a child index is out of range, a node has two parents,
    /// or the children form a cycle. All problems are collected.
    pub fn new(file: &str, nodes: &[Node]) -> Result<Self> {
        let n = nodes.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        let mut problems = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            for &c in &node.children {
                if c.index() >= n {
                    problems.push(Error::format_at(
                        file,
                        format!("nodes[{i}].children"),
                        c.index(),
                        "child index out of range",
                    ));
                } else if c.index() == i {
                    problems.push(Error::format(
                        file,
                        format!("nodes[{i}].children"),
                        "a node cannot be its own child",
                    ));
                } else if let Some(p) = parent[c.index()] {
                    problems.push(Error::format(
                        file,
                        format!("nodes[{}]", c.index()),
                        format!("has two parents: nodes[{p}] and nodes[{i}]"),
                    ));
                } else {
                    parent[c.index()] = Some(i);
                }
            }
        }
        Error::collect(problems)?;
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = (0..n).filter(|&i| parent[i].is_none()).rev().collect();
        while let Some(i) = stack.pop() {
            order.push(NodeId(i as u32));
            stack.extend(nodes[i].children.iter().rev().map(|c| c.index()));
        }
        if order.len() != n {
            let seen: std::collections::HashSet<_> = order.iter().map(|id| id.index()).collect();
            let first = (0..n).find(|i| !seen.contains(i)).unwrap_or(0);
            return Err(Error::format(
                file,
                format!("nodes[{first}]"),
                "is part of a cycle of children",
            ));
        }
        Ok(Hierarchy { order })
    }

    /// Nodes in parent-before-child order.
    pub fn order(&self) -> &[NodeId] {
        &self.order
    }

    /// World matrices `(N,)` from local matrices `(N,)`: `world[i] = world[parent] · local[i]`.
    /// `out` is resized to N; no other allocation.
    pub fn world_matrices(&self, nodes: &[Node], locals: &[Mat4], out: &mut Vec<Mat4>) {
        out.resize(nodes.len(), Mat4::IDENTITY);
        for &id in &self.order {
            let i = id.index();
            out[i] = match nodes[i].parent {
                Some(p) => out[p.index()] * locals[i],
                None => locals[i],
            };
        }
    }
}
