//! The CPU reference of a linear head: forward (neutral + basis × coefficients × scale), eye
//! rotation about each eye centre blended by the eye weights, the neck seam, then linear-blend
//! skinning against joint world matrices with the bind transform folded into the skin matrices;
//! joint overrides by name.
//!
//! Source: seed 000 (`gnmForward`, `gazeToEyeRotations`: `R = Rx(pitch) · Ry(yaw)`, pitch > 0 looks
//! down about +X, yaw > 0 toward character-left about +Y, head-local; the seam after the eyes; LBS;
//! `setJointOverrides`: parent-relative rotations on top of the rest, propagated down the pack's own
//! chain, rebuilt from rest on every call, unknown names skipped).

use glam::{Mat4, Quat, Vec3};

use super::pack::GnmPack;
use crate::error::{Error, Result};

/// The eye rotation of one eye's `(pitch, yaw)` radians: `q = qx(pitch) · qy(yaw)`.
pub fn eye_rotation(pitch: f32, yaw: f32) -> Quat {
    Quat::from_rotation_x(pitch) * Quat::from_rotation_y(yaw)
}

/// A row-major 4×4 as a glam (column-major) matrix.
pub fn from_row_major(m: &[f32; 16]) -> Mat4 {
    Mat4::from_cols_array(m).transpose()
}

/// Head-local positions `(V,3)` before the seam and skinning: `neutral + Σₑ cₑ·sₑ·Bₑ`, then each eye
/// `i` turns its vertices about its centre: `p ← p + wᵢ[v]·(Rᵢ(p − cᵢ) + cᵢ − p)` (left then right).
/// Coefficients are summed in index order in f32 (the order every backend uses).
///
/// # Errors
/// [`Error::Mismatch`] when `head_ext` is not the layout's length.
pub fn forward(pack: &GnmPack, head_ext: &[f32], out: &mut Vec<[f32; 3]>) -> Result<()> {
    let (coeffs, gaze) = pack.header.head_ext.split(head_ext)?;
    let scaled: Vec<f32> = coeffs
        .iter()
        .zip(&pack.basis_scale)
        .map(|(c, s)| c * s)
        .collect();
    let rot = [
        eye_rotation(gaze[0], gaze[1]),
        eye_rotation(gaze[2], gaze[3]),
    ];
    let centers = pack.eye_positions.map(Vec3::from);
    out.clear();
    out.reserve(pack.vertex_count());
    for v in 0..pack.vertex_count() {
        out.push(forward_vertex(pack, v, &scaled, &rot, &centers).to_array());
    }
    Ok(())
}

/// One vertex of [`forward`]: `neutral[v] + Σₑ scaled[e]·B[v,e]` (index order, zero terms
/// skipped, f32), then the eyes left then right. `scaled` `(E,)` are `cₑ·sₑ`; `rot` and `centers`
/// the eyes' rotations ([`eye_rotation`]) and centres (metres, head-local). Every CPU path calls
/// this, so they agree bit for bit.
#[inline]
pub fn forward_vertex(
    pack: &GnmPack,
    v: usize,
    scaled: &[f32],
    rot: &[Quat; 2],
    centers: &[Vec3; 2],
) -> Vec3 {
    let e = scaled.len();
    let mut p = Vec3::from(pack.neutral[v]);
    let row = v * e * 3;
    for (k, s) in scaled.iter().enumerate() {
        if *s == 0.0 {
            continue;
        }
        let i = row + 3 * k;
        p += *s * Vec3::new(pack.half_at(i), pack.half_at(i + 1), pack.half_at(i + 2));
    }
    eyes(pack, v, p, rot, centers)
}

/// [`forward_vertex`] with vertex `v`'s basis row already decoded (`row`: `(E,3)` from
/// [`GnmPack::basis_row`]): the same operations in the same order, so the same bits.
#[inline]
pub fn forward_vertex_row(
    pack: &GnmPack,
    v: usize,
    row: &[f32],
    scaled: &[f32],
    rot: &[Quat; 2],
    centers: &[Vec3; 2],
) -> Vec3 {
    let mut p = Vec3::from(pack.neutral[v]);
    for (s, b) in scaled.iter().zip(row.chunks_exact(3)) {
        if *s == 0.0 {
            continue;
        }
        p += *s * Vec3::new(b[0], b[1], b[2]);
    }
    eyes(pack, v, p, rot, centers)
}

/// The eyes of [`forward_vertex`] on vertex `v`'s blended position `p` (metres, head-local): left
/// then right, `p ← p + wᵢ[v]·(Rᵢ(p − cᵢ) + cᵢ − p)`, a zero weight leaving `p` untouched. Blocked
/// kernels that sum the basis themselves call this so they stay the reference bit for bit.
#[inline]
pub fn eyes(pack: &GnmPack, v: usize, mut p: Vec3, rot: &[Quat; 2], centers: &[Vec3; 2]) -> Vec3 {
    let v_n = pack.vertex_count();
    for i in 0..2 {
        let w = pack.eye_weights[i * v_n + v];
        if w != 0.0 {
            let turned = rot[i] * (p - centers[i]) + centers[i];
            p += w * (turned - p);
        }
    }
    p
}

/// The skin matrices of a frame `(J,)`: `world_j · rest_j⁻¹ · bind`, written into `out`.
///
/// # Errors
/// [`Error::Mismatch`] for a joint-matrix count other than the pack's.
pub fn skin_matrices(pack: &GnmPack, joint_world: &[Mat4], out: &mut Vec<Mat4>) -> Result<()> {
    if joint_world.len() != pack.header.joints.len() {
        return Err(Error::Mismatch {
            what: "joint world matrices".into(),
            expected: pack.header.joints.len() as u64,
            found: joint_world.len() as u64,
        });
    }
    let bind = from_row_major(&pack.header.bind_transform);
    out.clear();
    out.extend(
        joint_world
            .iter()
            .zip(&pack.rest_world)
            .map(|(w, r)| *w * from_row_major(r).inverse() * bind),
    );
    Ok(())
}

/// One vertex after [`forward_vertex`]: the seam, then LBS with `skin` ([`skin_matrices`]); a
/// vertex whose weights sum to 0 is moved by `bind` alone. Weights are renormalised (stored f16).
#[inline]
pub fn seam_and_skin_vertex(
    pack: &GnmPack,
    v: usize,
    p: Vec3,
    skin: &[Mat4],
    bind: &Mat4,
) -> [f32; 3] {
    let mut p = p;
    if let Some(s) = &pack.seam {
        p += Vec3::from(s[v]);
    }
    let (ix, w) = (pack.skin_index[v], pack.skin_weight[v]);
    let mut q = Vec3::ZERO;
    let mut total = 0.0;
    for k in 0..4 {
        if w[k] != 0.0 {
            q += w[k] * skin[ix[k] as usize].transform_point3(p);
            total += w[k];
        }
    }
    if total > 0.0 {
        (q / total).to_array()
    } else {
        bind.transform_point3(p).to_array()
    }
}

/// Joint world matrices `(J,)` of the pack's skeleton: the rest world matrices with
/// `overrides` (joint name → parent-relative rotation applied on top of the joint's rest local
/// rotation) propagated down the chain. Rebuilt from rest on every call; unknown names are
/// returned in `skipped`.
pub fn joint_world(
    pack: &GnmPack,
    overrides: &[(String, Quat)],
    out: &mut Vec<Mat4>,
    skipped: &mut Vec<String>,
) {
    let joints = &pack.header.joints;
    let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
    skipped.clear();
    let mut local_rot: Vec<Option<Quat>> = vec![None; joints.len()];
    for (name, q) in overrides {
        match joints.iter().position(|j| &j.name == name) {
            Some(i) => local_rot[i] = Some(*q),
            None => skipped.push(name.clone()),
        }
    }
    out.clear();
    for (i, j) in joints.iter().enumerate() {
        let parent_rest = (j.parent >= 0).then(|| rest[j.parent as usize]);
        // Rest local = parent_rest⁻¹ · rest; posed world = parent_posed · rest local · override.
        let local = match parent_rest {
            Some(pr) => pr.inverse() * rest[i],
            None => rest[i],
        };
        let local = match local_rot[i] {
            Some(q) => local * Mat4::from_quat(q),
            None => local,
        };
        let world = if j.parent >= 0 {
            out[j.parent as usize] * local
        } else {
            local
        };
        out.push(world);
    }
}

/// The full rig → vertices path on the CPU: [`forward`], the seam, then LBS with skin matrices
/// `world_j · rest_j⁻¹ · bind` (the bind transform folded in). `joint_world` is `(J,)`; output world
/// positions `(V,3)`, metres.
///
/// # Errors
/// [`Error::Mismatch`] for a wrong head_ext or joint-matrix count.
pub fn pose(
    pack: &GnmPack,
    head_ext: &[f32],
    joint_world: &[Mat4],
    out: &mut Vec<[f32; 3]>,
) -> Result<()> {
    let mut skin = Vec::new();
    skin_matrices(pack, joint_world, &mut skin)?;
    let mut local = Vec::new();
    forward(pack, head_ext, &mut local)?;
    let bind = from_row_major(&pack.header.bind_transform);
    out.clear();
    out.extend(
        local
            .iter()
            .enumerate()
            .map(|(v, p)| seam_and_skin_vertex(pack, v, Vec3::from(*p), &skin, &bind)),
    );
    Ok(())
}
