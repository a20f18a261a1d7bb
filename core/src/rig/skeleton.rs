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
    /// [`Error::Format`] naming the node when a child index is out of range, a node lists itself
    /// or the same child twice, a node has two parents, or the children form a cycle (named with
    /// its nodes in child order, `nodes[0] → nodes[1] → nodes[0]`). All problems are collected.
    pub fn new(file: &str, nodes: &[Node]) -> Result<Self> {
        let children: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| n.children.iter().map(|c| c.index()).collect())
            .collect();
        let forest = check_forest(file, &children);
        Error::collect(forest.problems)?;
        Ok(Hierarchy {
            order: forest.order.into_iter().map(|i| NodeId(i as u32)).collect(),
        })
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

/// The result of [`check_forest`].
#[derive(Debug, Default)]
pub(crate) struct Forest {
    /// Every problem found, in node order, then the cycles.
    pub problems: Vec<Error>,
    /// Nodes reachable from a parentless node, parent before child (all nodes when there is no
    /// cycle).
    pub order: Vec<usize>,
    /// Whether each node lies on a cycle of children.
    pub in_cycle: Vec<bool>,
}

/// Most nodes spelled out when a cycle is named.
const CYCLE_NAMED: usize = 8;

/// Check that `children` (node `i`'s child indices, `(N,)`) form a forest (glTF 2.0 §3.5.2: "the
/// node hierarchy MUST be a set of disjoint strict trees": no cycles, one parent per node), and
/// find a parent-first order.
///
/// Problems, each naming the node: a child index `≥ N` (`nodes[i].children [k]`); a node listing
/// itself; a node listing the same child twice (`nodes[0].children lists node 3 twice`); a child
/// with two parents (`nodes[c]: has two parents`); and every cycle of children, named once with
/// its nodes in child order from its lowest index (`nodes[0] → nodes[1] → nodes[0]`). The first
/// listing of a child is the edge kept when it has two parents. Linear in nodes plus child
/// entries.
pub(crate) fn check_forest(file: &str, children: &[Vec<usize>]) -> Forest {
    let n = children.len();
    let mut parent: Vec<Option<usize>> = vec![None; n];
    let mut in_cycle = vec![false; n];
    let mut problems = Vec::new();
    // `listed_by[c] == i` while node i's list is scanned and already named c; `dup_named[c] == i`
    // once that duplicate was reported (so `[3, 3, 3]` is one problem).
    let (mut listed_by, mut dup_named) = (vec![usize::MAX; n], vec![usize::MAX; n]);
    for (i, list) in children.iter().enumerate() {
        let field = format!("nodes[{i}].children");
        for (k, &c) in list.iter().enumerate() {
            if c >= n {
                problems.push(Error::format_at(
                    file,
                    &field,
                    k,
                    format!("node {c} does not exist ({n} nodes)"),
                ));
            } else if c == i {
                in_cycle[i] = true;
                if dup_named[c] != i {
                    dup_named[c] = i;
                    problems.push(Error::format(
                        file,
                        &field,
                        format!("lists node {i} itself: a node cannot be its own child (a cycle)"),
                    ));
                }
            } else if listed_by[c] == i {
                if dup_named[c] != i {
                    dup_named[c] = i;
                    problems.push(Error::format(file, &field, format!("lists node {c} twice")));
                }
            } else {
                listed_by[c] = i;
                match parent[c] {
                    Some(p) => problems.push(Error::format(
                        file,
                        format!("nodes[{c}]"),
                        format!("has two parents: nodes[{p}] and nodes[{i}]"),
                    )),
                    None => parent[c] = Some(i),
                }
            }
        }
    }
    // Parent-first order over the kept edges, from the parentless nodes.
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = (0..n).filter(|&i| parent[i].is_none()).rev().collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(
            children[i]
                .iter()
                .rev()
                .copied()
                .filter(|&c| c < n && parent[c] == Some(i)),
        );
    }
    // Nodes not reached have a parent chain that never ends at a root: it loops. Walk each chain
    // once (state 0 unvisited, 1 on the current walk, 2 done) and name every loop found.
    if order.len() != n {
        let mut state = vec![0u8; n];
        for &i in &order {
            state[i] = 2;
        }
        for start in 0..n {
            let mut path = Vec::new();
            let mut x = start;
            while state[x] == 0 {
                state[x] = 1;
                path.push(x);
                // Every unreached node has a parent (the parentless ones started the order).
                let Some(p) = parent[x] else { break };
                x = p;
            }
            if state[x] == 1
                && let Some(at) = path.iter().position(|&y| y == x)
            {
                // `path[at..]` follows parents; children go the other way.
                let mut cycle: Vec<usize> = path[at..].iter().rev().copied().collect();
                let low = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                cycle.rotate_left(low);
                for &y in &cycle {
                    in_cycle[y] = true;
                }
                problems.push(cycle_error(file, &cycle));
            }
            for y in path {
                state[y] = 2;
            }
        }
    }
    Forest {
        problems,
        order,
        in_cycle,
    }
}

/// The error naming a cycle `cycle` (child order, lowest index first).
fn cycle_error(file: &str, cycle: &[usize]) -> Error {
    let mut chain: Vec<String> = cycle
        .iter()
        .take(CYCLE_NAMED)
        .map(|y| format!("nodes[{y}]"))
        .collect();
    if cycle.len() > CYCLE_NAMED {
        chain.push(format!("… ({} nodes in all)", cycle.len()));
    }
    chain.push(format!("nodes[{}]", cycle[0]));
    Error::format(
        file,
        format!("nodes[{}].children", cycle[0]),
        format!(
            "the children form a cycle: {} (the hierarchy must be a set of trees)",
            chain.join(" → ")
        ),
    )
}
