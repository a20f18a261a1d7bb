//! Skin influences (`JOINTS_n` / `WEIGHTS_n`, any number of sets, merged into ≤ 4 per vertex) and
//! skins (joints, inverse bind matrices).
//!
//! Source: glTF 2.0 §3.7.3 "Skins" (JOINTS u8/u16, WEIGHTS float or normalized u8/u16, weights
//! non-negative, a joint used at most once per vertex, joint indices < the skin's joint count,
//! inverse bind matrices identity when absent), DESIGN.md "Skin" (merge keeping the 4 strongest,
//! renormalise, report); glTF-Validator `ACCESSOR_JOINTS_INDEX_OOB`, `ACCESSOR_JOINTS_INDEX_DUPLICATE`,
//! `ACCESSOR_WEIGHTS_NEGATIVE` (errors). An inverse bind matrix must be invertible (it is the
//! inverse of the joint's bind-pose world matrix, §3.7.3.1): a singular one (all zeros, a zero
//! scale axis) collapses every vertex bound to the joint and is refused by index.

use glam::Mat4;
use gltf::json;
use json::mesh::Semantic;
use json::validation::Checked;

use super::Ctx;
use super::accessor::{read_f32, read_u32};
use crate::error::{Error, Result};
use crate::rig::skin::merge_influences;
use crate::rig::{InfluenceFixes, Influences, NodeId, Skin};

/// For each mesh, the skins (index, joint count) of the nodes that instance it with a skin.
pub(super) fn mesh_skins(root: &json::Root) -> Vec<Vec<(usize, usize)>> {
    let mut out = vec![Vec::new(); root.meshes.len()];
    for n in &root.nodes {
        if let (Some(m), Some(s)) = (n.mesh, n.skin)
            && let (Some(list), Some(skin)) = (out.get_mut(m.value()), root.skins.get(s.value()))
            && !list.iter().any(|&(k, _)| k == s.value())
        {
            list.push((s.value(), skin.joints.len()));
        }
    }
    out
}

/// The influences of one primitive with `vertices` vertices, merged to ≤ 4 per vertex, or `None`
/// when it has no `JOINTS_0`. Joint indices are checked against every skin in `skins`.
///
/// # Errors
/// [`Error::Format`] naming `<prim>.attributes.JOINTS_n` / `WEIGHTS_n` and the vertex for a joint
/// index outside a skin, a joint used twice with non-zero weight, or a negative / non-finite weight
/// (first of each kind, collected).
pub(super) fn influences(
    ctx: &mut Ctx,
    pf: &str,
    prim: &json::mesh::Primitive,
    vertices: usize,
    skins: &[(usize, usize)],
) -> Result<Option<Influences>> {
    let attr = |s: Semantic| prim.attributes.get(&Checked::Valid(s)).map(|a| a.value());
    let mut joints: Vec<Vec<u32>> = Vec::new();
    let mut weights: Vec<Vec<f32>> = Vec::new();
    for set in 0u32.. {
        let (Some(j), Some(w)) = (attr(Semantic::Joints(set)), attr(Semantic::Weights(set))) else {
            break;
        };
        let (_, jv) = read_u32(ctx, j)?;
        let (_, wv) = read_f32(ctx, w)?;
        for (name, len) in [("JOINTS", jv.len()), ("WEIGHTS", wv.len())] {
            if len != vertices * 4 {
                return Err(ctx.err(
                    format!("{pf}.attributes.{name}_{set}"),
                    format!("{} elements for {vertices} vertices", len / 4),
                ));
            }
        }
        joints.push(jv);
        weights.push(wv);
    }
    if joints.is_empty() {
        return Ok(None);
    }
    let limit = skins.iter().min_by_key(|s| s.1).copied();
    let sets = joints.len();
    let (mut oob, mut dup, mut neg): (Option<Error>, Option<Error>, Option<Error>) =
        (None, None, None);
    let mut js = vec![0u32; 4 * sets];
    let mut ws = vec![0f32; 4 * sets];
    let mut fixes = InfluenceFixes::default();
    let mut out = Influences {
        joints: Vec::with_capacity(vertices),
        weights: Vec::with_capacity(vertices),
    };
    for v in 0..vertices {
        for s in 0..sets {
            for c in 0..4 {
                let (j, w) = (joints[s][4 * v + c], weights[s][4 * v + c]);
                let slot = 4 * s + c;
                if let Some((skin, count)) = limit.filter(|l| j as usize >= l.1) {
                    oob.get_or_insert_with(|| {
                        ctx.err(format!("{pf}.attributes.JOINTS_{s}"), format!("vertex {v} component {c}: joint {j} ≥ the {count} joints of skins[{skin}]"))
                    });
                }
                if !w.is_finite() || w < 0.0 {
                    neg.get_or_insert_with(|| {
                        ctx.err(
                            format!("{pf}.attributes.WEIGHTS_{s}"),
                            format!(
                                "vertex {v} component {c}: weight {w} is negative or not finite"
                            ),
                        )
                    });
                }
                if w != 0.0 && (0..slot).any(|k| js[k] == j && ws[k] != 0.0) {
                    dup.get_or_insert_with(|| {
                        ctx.err(
                            format!("{pf}.attributes.JOINTS_{s}"),
                            format!(
                                "vertex {v} component {c}: joint {j} is already used by this vertex"
                            ),
                        )
                    });
                }
                js[slot] = j;
                ws[slot] = w;
            }
        }
        if oob.is_none() && dup.is_none() && neg.is_none() {
            let (j, w) = merge_influences(&js, &ws, &mut fixes);
            out.joints.push(j);
            out.weights.push(w);
        }
    }
    Error::collect([oob, dup, neg].into_iter().flatten().collect())?;
    let field = format!("{pf}.attributes.WEIGHTS_0");
    if sets > 1 {
        ctx.note(format!("{pf}.attributes.JOINTS_1"), format!("{sets} influence sets merged; {} vertices had more than 4 influences (the 4 strongest kept)", fixes.truncated));
    }
    if fixes.renormalised > 0 {
        ctx.note(
            field.clone(),
            format!(
                "{} vertices' weights did not sum to 1 (±2e-3) and were renormalised",
                fixes.renormalised
            ),
        );
    }
    if fixes.zero_sum > 0 {
        ctx.note(
            field,
            format!(
                "{} vertices have all-zero weights: bound rigidly to their first joint",
                fixes.zero_sum
            ),
        );
    }
    Ok(Some(out))
}

/// Every skin: joints as node ids, inverse bind matrices (identity when absent).
///
/// # Errors
/// [`Error::Format`] naming `skins[i].inverseBindMatrices` when the matrices cannot be read or are
/// not finite, and `skins[i].inverseBindMatrices[j]` for the first matrix `j` of a skin that is
/// not invertible (determinant 0, or an inverse that is not finite).
pub(super) fn skins(ctx: &mut Ctx) -> Result<Vec<Skin>> {
    let root = ctx.root;
    let mut out = Vec::with_capacity(root.skins.len());
    for (i, s) in root.skins.iter().enumerate() {
        let joints: Vec<NodeId> = s.joints.iter().map(|j| NodeId(j.value() as u32)).collect();
        let inverse_bind = match s.inverse_bind_matrices {
            None => vec![Mat4::IDENTITY; joints.len()],
            Some(a) => {
                let (_, m) = read_f32(ctx, a.value())?;
                if m.len() != 16 * joints.len() {
                    return Err(ctx.err(
                        format!("skins[{i}].inverseBindMatrices"),
                        format!("{} matrices for {} joints", m.len() / 16, joints.len()),
                    ));
                }
                let mats: Vec<Mat4> = m.chunks_exact(16).map(Mat4::from_cols_slice).collect();
                if let Some((j, det)) = mats
                    .iter()
                    .map(Mat4::determinant)
                    .enumerate()
                    .zip(&mats)
                    .find(|((_, d), m)| *d == 0.0 || !d.is_finite() || !m.inverse().is_finite())
                    .map(|(jd, _)| jd)
                {
                    return Err(ctx.err(
                        format!("skins[{i}].inverseBindMatrices[{j}]"),
                        format!(
                            "the inverse bind matrix of joint {j} (node {}) is not invertible \
                             (determinant {det}); it must be the inverse of the joint's bind-pose \
                             world matrix",
                            joints[j].0
                        ),
                    ));
                }
                mats
            }
        };
        out.push(Skin {
            name: s.name.clone(),
            joints,
            inverse_bind,
        });
    }
    Ok(out)
}
