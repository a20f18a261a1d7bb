//! Skins and linear-blend skinning (LBS).
//!
//! Source: glTF 2.0 §3.7.3 "Skins" (joint matrix = world(joint) · inverseBindMatrix; the skinned
//! mesh node's own transform is ignored), DESIGN.md "Skin" (≤4 influences, JOINTS_1/WEIGHTS_1 merged
//! by keeping the 4 strongest and renormalising, sums renormalised and reported; morph first, skin
//! second).

use glam::{Mat3, Mat4, Vec3};

use super::ids::NodeId;

/// Per-vertex skin influences: up to 4 joints (indices into the skin's joint list, or into a rig's
/// palette once flattened) and their weights, which sum to 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Influences {
    /// Joint indices `(V,4)`; an unused slot has weight 0 (its joint index is then irrelevant).
    pub joints: Vec<[u32; 4]>,
    /// Weights `(V,4)`, non-negative, summing to 1 per vertex.
    pub weights: Vec<[f32; 4]>,
}

/// A weight sum further than this from 1 is reported as renormalised (sums closer are float noise
/// of the exporter and are normalised silently).
pub const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

/// What [`merge_influences`] had to change, for the import report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InfluenceFixes {
    /// Vertices with more than 4 non-zero influences (JOINTS_1 in use): the 4 strongest kept.
    pub truncated: u32,
    /// Vertices whose weight sum was off 1 by more than [`WEIGHT_SUM_TOLERANCE`] (every sum is
    /// normalised to 1; only these are reported).
    pub renormalised: u32,
    /// Vertices whose influences summed to zero: bound rigidly to the first joint.
    pub zero_sum: u32,
    /// Vertices naming the same joint in more than one slot: the weights were added together.
    pub duplicate_joints: u32,
}

/// Merge one vertex's influence sets (JOINTS_0/WEIGHTS_0, optionally JOINTS_1/WEIGHTS_1, …) into at
/// most 4 influences: duplicate joints are summed, the 4 largest weights kept (ties → lower slot),
/// sorted strongest first, and divided by their sum so they sum to 1 (a sum off by more than
/// [`WEIGHT_SUM_TOLERANCE`] is counted in `fixes.renormalised`).
///
/// Weights must be finite and ≥ 0 (the importer refuses others before calling this).
pub fn merge_influences(
    joints: &[u32],
    weights: &[f32],
    fixes: &mut InfluenceFixes,
) -> ([u32; 4], [f32; 4]) {
    debug_assert_eq!(joints.len(), weights.len());
    let mut pairs: Vec<(u32, f32)> = Vec::with_capacity(joints.len());
    let mut duplicate = false;
    for (&j, &w) in joints.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        if let Some(p) = pairs.iter_mut().find(|p| p.0 == j) {
            p.1 += w;
            duplicate = true;
        } else {
            pairs.push((j, w));
        }
    }
    if duplicate {
        fixes.duplicate_joints += 1;
    }
    // Stable sort keeps the file's slot order among equal weights.
    pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
    if pairs.len() > 4 {
        fixes.truncated += 1;
        pairs.truncate(4);
    }
    let sum: f32 = pairs.iter().map(|p| p.1).sum();
    let mut j = [0u32; 4];
    let mut w = [0.0f32; 4];
    if sum <= 0.0 {
        fixes.zero_sum += 1;
        j[0] = joints.first().copied().unwrap_or(0);
        w[0] = 1.0;
        return (j, w);
    }
    if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
        fixes.renormalised += 1;
    }
    for (k, (jj, ww)) in pairs.into_iter().enumerate() {
        j[k] = jj;
        w[k] = ww / sum;
    }
    (j, w)
}

/// A skin: the joints a skinned primitive's influences index, with their inverse bind matrices.
#[derive(Clone, Debug, Default)]
pub struct Skin {
    /// The file's name, if any.
    pub name: Option<String>,
    /// The joint nodes, in influence-index order.
    pub joints: Vec<NodeId>,
    /// One inverse bind matrix per joint (identity when the file gives none), column-major.
    pub inverse_bind: Vec<Mat4>,
}

/// The normal matrix of a joint matrix: the inverse transpose of its linear 3×3 part (so normals
/// stay perpendicular under non-uniform scale). A singular matrix yields its plain 3×3 part.
pub fn normal_matrix(m: &Mat4) -> Mat3 {
    let l = Mat3::from_mat4(*m);
    let det = l.determinant();
    if det.abs() > f32::MIN_POSITIVE && det.is_finite() {
        l.inverse().transpose()
    } else {
        l
    }
}

/// Skin one vertex: `p' = Σ wᵢ·(Mᵢ·p)`, `n' = normalize(Σ wᵢ·(Nᵢ·n))` with `Nᵢ` the normal matrix
/// of joint matrix `Mᵢ`. Joints are summed in slot order (the order every backend uses). A zero
/// normal stays zero.
///
/// # Panics
/// When a joint index with non-zero weight is outside `palette`/`normals`.
#[inline]
pub fn skin_vertex(
    position: [f32; 3],
    normal: [f32; 3],
    joints: [u32; 4],
    weights: [f32; 4],
    palette: &[Mat4],
    normal_palette: &[Mat3],
) -> ([f32; 3], [f32; 3]) {
    let p = Vec3::from(position);
    let n = Vec3::from(normal);
    let mut po = Vec3::ZERO;
    let mut no = Vec3::ZERO;
    for k in 0..4 {
        let w = weights[k];
        if w == 0.0 {
            continue;
        }
        let j = joints[k] as usize;
        po += w * palette[j].transform_point3(p);
        no += w * (normal_palette[j] * n);
    }
    (po.to_array(), no.normalize_or_zero().to_array())
}

/// Skin one tangent direction: `t' = normalize(Σ wᵢ·(Lᵢ·t))` with `Lᵢ` the linear 3×3 part of
/// joint matrix `Mᵢ` (tangents lie in the surface and transform like edges, not like normals:
/// glTF 2.0 §3.7.3; Lengyel, "Mathematics for 3D Game Programming", §7.8). Joints are summed in slot
/// order; a zero result stays zero. With one joint `t'·n' = 0` holds exactly for the skinned normal
/// of [`skin_vertex`]; a blend of joints keeps it to first order (every LBS engine's behaviour).
///
/// # Panics
/// When a joint index with non-zero weight is outside `palette`.
#[inline]
pub fn skin_tangent(
    tangent: [f32; 3],
    joints: [u32; 4],
    weights: [f32; 4],
    palette: &[Mat4],
) -> [f32; 3] {
    let t = Vec3::from(tangent);
    let mut to = Vec3::ZERO;
    for k in 0..4 {
        let w = weights[k];
        if w == 0.0 {
            continue;
        }
        to += w * palette[joints[k] as usize].transform_vector3(t);
    }
    to.normalize_or_zero().to_array()
}
