//! Game-face LODs (seed 002's budget rules): a GLB's triangle total brought under a budget without
//! touching its face. Parts are the mesh primitives; a part **kept whole** is one whose mesh has
//! morph targets (the face and mouth — and any other morph-bearing mesh: the simplifier cannot
//! carry targets onto new topology, so such parts are refused by it, not resampled) or sits on an
//! eye joint (head motion's standard eye names); those are reserved first and never simplified. Every other
//! part is reserved `min(32, its triangles)`; the rest of the budget is shared out in proportion to
//! their triangles; each is reduced with meshoptimizer's simplifier (borders locked) to its share.
//! The actual total is checked after simplification and any excess reclaimed from the reducible
//! parts, largest first, never below their reserve. A budget below 128 with facial parts, or one
//! that cannot be met, is refused before anything is written.
//!
//! Only index buffers change: a reduced part gets a new index accessor appended to the BIN chunk,
//! its vertices (positions, skin, UVs) stay, so the facial parts — and their fingerprints — are
//! byte-identical across LODs of one character.

use meshopt::{SimplifyOptions, simplify_decoder};
use serde_json::{Value, json};

use super::container;
use crate::error::{Error, Result};
use crate::rig::Character;

/// Smallest budget accepted for a character with facial parts (seed 002).
pub const MIN_FACIAL_BUDGET: u64 = 128;
/// Triangles reserved for every non-facial part (or all of its own, when it has fewer).
pub const PART_RESERVE: u64 = 32;

/// One part and what the LOD did to it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LodPart {
    /// glTF mesh and primitive.
    pub mesh: usize,
    /// Primitive index in the mesh.
    pub primitive: usize,
    /// Whether it is a facial part (kept whole).
    pub facial: bool,
    /// Triangles before.
    pub before: u64,
    /// Triangles after.
    pub after: u64,
}

/// What [`apply_lod`] did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LodReport {
    /// The budget asked for.
    pub budget: u64,
    /// Triangles of the facial parts (reserved whole).
    pub facial: u64,
    /// Triangles after.
    pub total: u64,
    /// Every part.
    pub parts: Vec<LodPart>,
}

fn refuse(file: &str, reason: String) -> Error {
    Error::Invalid {
        what: format!("{file}: LOD"),
        reason,
    }
}

/// Simplify `indices` (triangles over `positions`) toward `target` triangles, borders locked.
fn reduce(indices: &[u32], positions: &[[f32; 3]], target: u64) -> Vec<u32> {
    if indices.len() as u64 <= 3 * target {
        return indices.to_vec();
    }
    simplify_decoder(
        indices,
        positions,
        (3 * target) as usize,
        1.0,
        SimplifyOptions::LockBorder,
        None,
    )
}

/// `glb` (the bytes `ch` was imported from, named `file`) with every non-facial part reduced so
/// the triangle total is at most `budget` (module docs).
///
/// # Errors
/// [`Error::Invalid`] naming the file: a budget below [`MIN_FACIAL_BUDGET`] with facial parts, a
/// budget below the facial triangles plus every other part's reserve, a total the simplifier
/// cannot bring under the budget, a file whose meshes do not match `ch`; [`Error::Format`] for
/// bytes that are not a GLB.
pub fn apply_lod(
    glb: &[u8],
    ch: &Character,
    budget: u64,
    file: &str,
) -> Result<(Vec<u8>, LodReport)> {
    let parts_in = container::split(glb, file)?;
    if !parts_in.glb {
        return Err(Error::format(
            file,
            "container",
            "a LOD is written into a GLB",
        ));
    }
    let mut root: Value = serde_json::from_slice(parts_in.json)
        .map_err(|e| Error::format(file, "JSON", e.to_string()))?;
    let meshes = root["meshes"].as_array().map_or(0, Vec::len);
    if meshes != ch.meshes.len() {
        return Err(refuse(
            file,
            format!("{meshes} meshes in the file, {} imported", ch.meshes.len()),
        ));
    }
    // The eyes: meshes on the eye joints (by head motion's standard names) or below them.
    let names: Vec<Option<&str>> = ch.nodes.iter().map(|n| n.name.as_deref()).collect();
    let eyes = crate::anim::head::HeadJoints::find(&names, &Default::default())
        .map(|j| [j.left_eye, j.right_eye])
        .unwrap_or([None, None]);
    let mut on_eye = vec![false; ch.nodes.len()];
    for &id in ch.hierarchy.order() {
        let i = id.index();
        on_eye[i] =
            eyes.contains(&Some(i)) || ch.nodes[i].parent.is_some_and(|p| on_eye[p.index()]);
    }
    let eye_mesh: Vec<bool> = (0..ch.meshes.len())
        .map(|m| {
            ch.nodes
                .iter()
                .enumerate()
                .any(|(i, n)| n.mesh.is_some_and(|x| x.index() == m) && on_eye[i])
        })
        .collect();
    let mut parts = Vec::new();
    for (m, mesh) in ch.meshes.iter().enumerate() {
        // Kept whole: the face and mouth (meshes with morph targets: the simplifier cannot carry
        // targets onto new topology) and the eyes.
        let facial = mesh.target_count() > 0 || eye_mesh[m];
        let prims = root["meshes"][m]["primitives"]
            .as_array()
            .map_or(0, Vec::len);
        if prims != mesh.primitives.len() {
            return Err(refuse(
                file,
                format!(
                    "mesh {m}: {prims} primitives in the file, {} imported",
                    mesh.primitives.len()
                ),
            ));
        }
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let t = (prim.indices.len() / 3) as u64;
            if t > 0 {
                parts.push(LodPart {
                    mesh: m,
                    primitive: p,
                    facial,
                    before: t,
                    after: t,
                });
            }
        }
    }
    let facial: u64 = parts.iter().filter(|p| p.facial).map(|p| p.before).sum();
    let others: Vec<usize> = (0..parts.len()).filter(|&i| !parts[i].facial).collect();
    let reserves: Vec<u64> = parts.iter().map(|p| p.before.min(PART_RESERVE)).collect();
    let reserve = |i: usize| reserves[i];
    let reserved: u64 = others.iter().map(|&i| reserve(i)).sum();
    if facial > 0 && budget < MIN_FACIAL_BUDGET {
        return Err(refuse(
            file,
            format!(
                "a budget of {budget} triangles: a character with facial animation needs at least {MIN_FACIAL_BUDGET}"
            ),
        ));
    }
    if budget < facial + reserved {
        let kept: Vec<String> = parts
            .iter()
            .filter(|p| p.facial)
            .map(|p| {
                let m = &ch.meshes[p.mesh];
                format!(
                    "{} ({} triangles, {})",
                    m.name
                        .as_deref()
                        .map_or_else(|| format!("mesh {}", p.mesh), |n| format!("`{n}`")),
                    p.before,
                    if m.target_count() > 0 {
                        "morph targets"
                    } else {
                        "an eye"
                    }
                )
            })
            .collect();
        return Err(refuse(
            file,
            format!(
                "a budget of {budget} triangles cannot be met: the parts kept whole hold {facial} — {} — and the {} other parts need {reserved} in reserve",
                kept.join(", "),
                others.len()
            ),
        ));
    }
    // Shares: the reserve plus the rest in proportion to size.
    let spare = budget - facial - reserved;
    let pool: u64 = others.iter().map(|&i| parts[i].before - reserve(i)).sum();
    let mut new_indices: Vec<Option<Vec<u32>>> = vec![None; parts.len()];
    for &i in &others {
        let p = &parts[i];
        let extra = if pool == 0 {
            0
        } else {
            ((p.before - reserve(i)) as u128 * spare as u128 / pool as u128) as u64
        };
        let share = (reserve(i) + extra).min(p.before);
        let prim = &ch.meshes[p.mesh].primitives[p.primitive];
        if share < p.before {
            let r = reduce(&prim.indices, &prim.positions, share);
            parts[i].after = (r.len() / 3) as u64;
            new_indices[i] = Some(r);
        }
    }
    // Reclaim any excess, largest reducible part first, never below its reserve.
    let mut total: u64 = parts.iter().map(|p| p.after).sum();
    let mut order = others.clone();
    order.sort_by_key(|&i| std::cmp::Reverse(parts[i].after));
    for &i in &order {
        if total <= budget {
            break;
        }
        let excess = total - budget;
        let target = parts[i].after.saturating_sub(excess).max(reserve(i));
        if target >= parts[i].after {
            continue;
        }
        let prim = &ch.meshes[parts[i].mesh].primitives[parts[i].primitive];
        let r = reduce(&prim.indices, &prim.positions, target);
        let after = (r.len() / 3) as u64;
        if after < parts[i].after {
            total = total - parts[i].after + after;
            parts[i].after = after;
            new_indices[i] = Some(r);
        }
    }
    if total > budget {
        return Err(refuse(
            file,
            format!(
                "the simplifier brings the total to {total} triangles, over the budget of {budget} (borders locked; facial parts kept whole)"
            ),
        ));
    }
    // Write: new u32 index accessors at the end of the BIN chunk.
    let mut bin = parts_in.bin.map(<[u8]>::to_vec).unwrap_or_default();
    if parts_in.bin.is_none() {
        return Err(Error::format(
            file,
            "container",
            "a GLB without a BIN chunk has no geometry to reduce",
        ));
    }
    for (i, idx) in new_indices.iter().enumerate() {
        let Some(idx) = idx else { continue };
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let offset = bin.len();
        for v in idx {
            bin.extend_from_slice(&v.to_le_bytes());
        }
        let views = root["bufferViews"]
            .as_array_mut()
            .ok_or_else(|| Error::format(file, "bufferViews", "missing"))?;
        views.push(json!({"buffer": 0, "byteOffset": offset, "byteLength": idx.len() * 4, "target": 34963}));
        let view = views.len() - 1;
        let accs = root["accessors"]
            .as_array_mut()
            .ok_or_else(|| Error::format(file, "accessors", "missing"))?;
        accs.push(json!({"bufferView": view, "componentType": 5125, "count": idx.len(), "type": "SCALAR"}));
        let acc = accs.len() - 1;
        root["meshes"][parts[i].mesh]["primitives"][parts[i].primitive]["indices"] = json!(acc);
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    root["buffers"][0]["byteLength"] = json!(bin.len());
    let out = container::write_glb(&root, bin, file)?;
    Ok((
        out,
        LodReport {
            budget,
            facial,
            total,
            parts,
        },
    ))
}
