//! Size budgets of a character, checked from the JSON alone before any buffer is read, so that a
//! small file cannot ask for a mesh that exhausts memory after import (in the flattened rig, the
//! backends, the splat sink and the preview).
//!
//! Three caps, each a documented decision:
//!
//! * [`MAX_CHARACTER_VERTICES`]: vertices over every primitive of every mesh, and again over every
//!   node that draws a mesh ([`crate::rig::RigData`] flattens a mesh once per drawing node, so a
//!   mesh drawn by 1000 nodes costs 1000 copies); the larger count is compared.
//! * [`MAX_CHARACTER_MORPH_DELTAS`]: vertex × morph-target pairs, counted the same two ways. It bounds
//!   the sparse morph entries of the imported meshes and of the flattened rig whatever the data.
//! * [`MAX_IMPLICIT_VERTICES`]: vertices of a `POSITION` accessor without a `bufferView`. Such
//!   vertices are stored nowhere in the file (glTF 2.0 §3.6.2.1: they are zeros, all at the
//!   origin), so a 700-byte file could otherwise describe millions of them. Real files use
//!   implicit accessors for sparse morph targets (bounded by their base `POSITION`, which the
//!   mesh checks keep equal in count) and for tiny placeholders (glTF-Validator's samples hold 3
//!   vertices); base geometry of real size always has data. A cap relative to the file size was
//!   considered and not taken: the size of external and meshopt-compressed buffers is not known
//!   before they are read, and compressed files are legitimately small for their vertex count.
//!
//! Source: glTF 2.0 §3.6.2.1 (accessors without a buffer view), §3.7.2 (meshes), §3.7.4
//! (instantiation: a mesh may be drawn by many nodes).

use gltf::json;
use json::mesh::Semantic;
use json::validation::Checked;

use super::prim_field;
use crate::error::Error;

/// Most vertices one character may have: 4,194,304 (2²²), counted over every primitive of every
/// mesh and over every node that draws a mesh (module docs).
///
/// What that costs at the cap: positions and normals are 24 B per vertex at import (96 MiB); the
/// flattened rig adds about 110 B per drawn vertex (positions, normals, UVs, colours, joints,
/// weights, about two triangles); the splat sink 52 B per splat and the posed output 24 B. In all
/// about 0.9 GiB before morph targets. Face characters are far below it: facecap.glb has 4,368
/// vertices, a production head mesh 20–30 thousand, a full character with hair cards a few hundred
/// thousand.
pub const MAX_CHARACTER_VERTICES: u64 = 1 << 22;

/// Most vertex × morph-target pairs one character may have: 67,108,864 (2²⁶), counted like
/// [`MAX_CHARACTER_VERTICES`]. A morph entry costs at most 28 B (target index 4 B, position delta
/// 12 B, normal delta 12 B) in the imported mesh and again in the flattened rig, so at the cap
/// and with every delta non-zero about 1.75 GiB each; real targets move a fraction of the
/// vertices. A 30,000-vertex head with 700 targets (a large production rig) is 21·10⁶.
pub const MAX_CHARACTER_MORPH_DELTAS: u64 = 1 << 26;

/// Most vertices a primitive may take from a `POSITION` accessor without a `bufferView`: 65,536
/// (module docs).
pub const MAX_IMPLICIT_VERTICES: u64 = 1 << 16;

/// Vertices and vertex × target pairs of one mesh.
#[derive(Clone, Copy, Default)]
struct MeshSize {
    vertices: u64,
    deltas: u64,
}

/// Append a [`Error::Limit`] for every budget the file exceeds.
pub(super) fn check(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    let mut sizes = Vec::with_capacity(root.meshes.len());
    for (mi, m) in root.meshes.iter().enumerate() {
        let mut size = MeshSize::default();
        for (pi, prim) in m.primitives.iter().enumerate() {
            let Some((ai, acc)) = prim
                .attributes
                .get(&Checked::Valid(Semantic::Positions))
                .and_then(|a| root.accessors.get(a.value()).map(|acc| (a.value(), acc)))
            else {
                continue;
            };
            let v = acc.count.0;
            if acc.buffer_view.is_none() && v > MAX_IMPLICIT_VERTICES {
                p.push(Error::Limit {
                    what: format!(
                        "{file}: {}.attributes.POSITION: vertices of accessors[{ai}], which has no \
                         bufferView (they are stored nowhere in the file, all at the origin)",
                        prim_field(mi, pi)
                    ),
                    limit: MAX_IMPLICIT_VERTICES,
                    found: v,
                });
            }
            let targets = prim.targets.as_ref().map_or(0, Vec::len) as u64;
            size.vertices = size.vertices.saturating_add(v);
            size.deltas = size.deltas.saturating_add(v.saturating_mul(targets));
        }
        sizes.push(size);
    }
    let mut imported = MeshSize::default();
    for s in &sizes {
        imported.vertices = imported.vertices.saturating_add(s.vertices);
        imported.deltas = imported.deltas.saturating_add(s.deltas);
    }
    let mut drawn = MeshSize::default();
    let mut drawers = vec![0u64; sizes.len()];
    for n in &root.nodes {
        if let Some(s) = n.mesh.and_then(|m| sizes.get(m.value())) {
            drawn.vertices = drawn.vertices.saturating_add(s.vertices);
            drawn.deltas = drawn.deltas.saturating_add(s.deltas);
            if let Some(d) = n.mesh.and_then(|m| drawers.get_mut(m.value())) {
                *d += 1;
            }
        }
    }
    // The mesh that contributes most, named in the message.
    let largest = |key: fn(&MeshSize) -> u64| {
        (0..sizes.len())
            .max_by_key(|&m| key(&sizes[m]).saturating_mul(drawers[m].max(1)))
            .map(|m| {
                format!(
                    " (the largest, meshes[{m}], has {} and is drawn by {} node{})",
                    key(&sizes[m]),
                    drawers[m],
                    if drawers[m] == 1 { "" } else { "s" }
                )
            })
            .unwrap_or_default()
    };
    let vertices = imported.vertices.max(drawn.vertices);
    if vertices > MAX_CHARACTER_VERTICES {
        p.push(Error::Limit {
            what: format!(
                "{file}: meshes: vertices in the character, over all primitives and every node \
                 that draws a mesh{}",
                largest(|s| s.vertices)
            ),
            limit: MAX_CHARACTER_VERTICES,
            found: vertices,
        });
    }
    let deltas = imported.deltas.max(drawn.deltas);
    if deltas > MAX_CHARACTER_MORPH_DELTAS {
        p.push(Error::Limit {
            what: format!(
                "{file}: meshes: vertex × morph-target pairs in the character, over all primitives \
                 and every node that draws a mesh{}",
                largest(|s| s.deltas)
            ),
            limit: MAX_CHARACTER_MORPH_DELTAS,
            found: deltas,
        });
    }
}
