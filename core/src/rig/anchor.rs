//! Joint anchors: one small triangle per palette entry appended to a flattened rig, skinned with
//! weight 1 to that entry, so anything bound to it moves rigidly with the joint (or, for a rigid
//! mesh, with its node).
//!
//! Captured gaussians far from the surface (hair strands, a hat brim, floaters) are left rigid to
//! their nearest joint this way ([`crate::lift::FarGaussians::Joint`]): the bound lift poses them
//! in the anchor triangle's frame like every other bound gaussian, so no backend needs a second
//! kind of binding. Posing an anchor vertex is LBS with one influence, `palette[p]·v`; the triangle
//! `(o, o + a·x̂, o + a·ŷ)` (`o` the entry's origin in the mesh's bind space, `a` =
//! [`ANCHOR_EDGE_M`]) is carried by that affine map, and the bound lift's frame of a triangle is
//! carried with it (`lift::bound`: a rigid motion of the triangle moves its gaussians rigidly).
//!
//! Layout, for a rig of `V` vertices, `T` triangles and `P` palette entries: entry `p`'s vertices
//! are `V + 3p .. V + 3p + 3` and its triangle is `T + p`. The anchors have no morph entries,
//! normal `+z`, UV `(0, 0)`, and [`super::rigdata::DEFAULT_TINT`]; they belong to no
//! [`super::MeshInstance`] (no morph weights reach them).

use glam::Vec3;

use super::rigdata::{DEFAULT_TINT, PaletteEntry, RigData};
use crate::error::{Error, Result};

/// Edge of an anchor triangle along its two axes, metres (its bound-lift scale `k` is the mean
/// edge, `a·(2 + √2)/3 ≈ 0.114 m`).
pub const ANCHOR_EDGE_M: f32 = 0.1;

impl RigData {
    /// The palette entry `(V,)` that carries the largest skin weight at each vertex (the first
    /// of equal weights): the joint a surface point follows most.
    pub fn dominant_palette(&self) -> Vec<u32> {
        self.joints
            .iter()
            .zip(&self.weights)
            .map(|(j, w)| {
                let k = (1..4).fold(0, |b, k| if w[k] > w[b] { k } else { b });
                j[k]
            })
            .collect()
    }

    /// This rig with one anchor triangle per palette entry appended (see the module docs for
    /// the layout): entry `p`'s origin is `inverse(inverse_bind)·(0,0,0,1)` for a joint (the
    /// joint's bind-pose position in the mesh's space) and the mesh origin for a rigid node.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a joint whose inverse bind matrix is singular or not finite;
    /// [`Error::Limit`] when the counts no longer fit `u32`.
    pub fn with_joint_anchors(&self) -> Result<RigData> {
        let p = self.palette.len();
        let (v0, t0) = (self.vertex_count(), self.triangles.len());
        if (v0 + 3 * p) as u64 > u64::from(u32::MAX) - 1 || (t0 + p) as u64 > u64::from(u32::MAX) {
            return Err(Error::Limit {
                what: "vertices with joint anchors".into(),
                limit: u64::from(u32::MAX) - 1,
                found: (v0 + 3 * p) as u64,
            });
        }
        let mut rig = self.clone();
        let nnz = *rig.morph_offsets.last().unwrap_or(&0);
        for (i, entry) in self.palette.iter().enumerate() {
            let origin = match entry {
                PaletteEntry::Joint { inverse_bind, .. } => {
                    let det = inverse_bind.determinant();
                    if !(det.is_finite() && det.abs() > 1e-12) {
                        return Err(Error::Invalid {
                            what: format!("rig palette[{i}]"),
                            reason:
                                "its inverse bind matrix is singular: no joint origin to anchor to"
                                    .into(),
                        });
                    }
                    inverse_bind.inverse().w_axis.truncate()
                }
                PaletteEntry::Rigid { .. } => Vec3::ZERO,
            };
            let base = rig.positions.len() as u32;
            for d in [Vec3::ZERO, Vec3::X, Vec3::Y] {
                rig.positions.push((origin + ANCHOR_EDGE_M * d).to_array());
                rig.normals.push([0.0, 0.0, 1.0]);
                rig.uvs.push([0.0; 2]);
                rig.colors.push(DEFAULT_TINT);
                if !rig.tangents.is_empty() {
                    rig.tangents.push([0.0; 4]);
                }
                rig.morph_offsets.push(nnz);
                rig.joints.push([i as u32; 4]);
                rig.weights.push([1.0, 0.0, 0.0, 0.0]);
            }
            rig.triangles.push([base, base + 1, base + 2]);
        }
        Ok(rig)
    }
}

#[cfg(test)]
mod tests {
    use glam::{Mat4, Quat};

    use super::*;
    use crate::rig::NodeId;
    use crate::rig::skin::skin_vertex;

    fn rig_with_joint(inverse_bind: Mat4) -> RigData {
        RigData {
            palette: vec![
                PaletteEntry::Joint {
                    node: NodeId(0),
                    inverse_bind,
                },
                PaletteEntry::Rigid { node: NodeId(1) },
            ],
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            normals: vec![[0.0, 0.0, 1.0]; 3],
            uvs: vec![[0.0; 2]; 3],
            colors: vec![DEFAULT_TINT; 3],
            triangles: vec![[0, 1, 2]],
            morph_offsets: vec![0; 4],
            joints: vec![[0, 1, 0, 0], [1, 0, 0, 0], [0; 4]],
            weights: vec![
                [0.25, 0.75, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [0.5, 0.5, 0.0, 0.0],
            ],
            ..Default::default()
        }
    }

    #[test]
    fn anchors_sit_at_the_joint_and_move_with_it() {
        // A joint at (0.2, 1.5, -0.1) in bind pose: its inverse bind matrix moves it to the origin.
        let at = Vec3::new(0.2, 1.5, -0.1);
        let rig = rig_with_joint(Mat4::from_translation(-at));
        let a = rig.with_joint_anchors().unwrap();
        a.validate().unwrap();
        assert_eq!(a.vertex_count(), 3 + 6);
        assert_eq!(a.triangles[1], [3, 4, 5]);
        assert_eq!(a.triangles[2], [6, 7, 8]);
        assert_eq!(a.positions[3], at.to_array());
        assert_eq!(a.positions[5], (at + Vec3::Y * ANCHOR_EDGE_M).to_array());
        assert_eq!(a.positions[6], [0.0; 3]);
        assert_eq!(a.joints[7], [1; 4]);
        // The original rows are untouched.
        assert_eq!(a.positions[..3], rig.positions[..]);
        // Posed by the joint's palette matrix world·IB, the anchor is the joint's world frame:
        // a turned and moved joint carries the triangle rigidly (hand-worked: origin → world
        // position of the joint, edges rotated).
        let world =
            Mat4::from_rotation_translation(Quat::from_rotation_z(0.5), Vec3::new(1.0, 0.0, 2.0));
        let palette = [world * Mat4::from_translation(-at), Mat4::IDENTITY];
        let normals = palette.map(|m| crate::rig::skin::normal_matrix(&m));
        let pose = |v: usize| {
            Vec3::from(
                skin_vertex(
                    a.positions[v],
                    a.normals[v],
                    a.joints[v],
                    a.weights[v],
                    &palette,
                    &normals,
                )
                .0,
            )
        };
        let o = pose(3);
        assert!((o - world.w_axis.truncate()).length() < 1e-6);
        let e = (pose(4) - o) / ANCHOR_EDGE_M;
        let want = Quat::from_rotation_z(0.5) * Vec3::X;
        assert!((e - want).length() < 1e-5, "{e} vs {want}");
    }

    #[test]
    fn dominant_palette_takes_the_largest_weight_then_the_first() {
        let rig = rig_with_joint(Mat4::IDENTITY);
        assert_eq!(rig.dominant_palette(), vec![1, 1, 0]);
    }

    #[test]
    fn a_singular_inverse_bind_is_refused() {
        let rig = rig_with_joint(Mat4::ZERO);
        let e = rig.with_joint_anchors().unwrap_err().to_string();
        assert!(e.contains("palette[0]") && e.contains("singular"), "{e}");
    }
}
