//! A linear head's per-frame CPU work, shared by every GPU backend's `set_head_ext`: check the
//! head_ext vector and the joint world matrices, then compute what the kernels read — the scaled
//! coefficients `cₑ·sₑ`, one rotation matrix per eye and the skin matrices `world_j · rest_j⁻¹ ·
//! bind`. Allocation-free after construction; no GPU type (STYLE 1).
//!
//! Every value is computed with the same f32 expressions as [`super::forward::pose`], so the scaled
//! coefficients and the skin matrices a GPU uses are bit-identical to the reference's; only the eye
//! rotation differs in form (a matrix from the quaternion instead of the quaternion itself).
//!
//! Source: seed 000 (`gnmForward`, `gazeToEyeRotations`, `gnmPose`, `setJointWorlds`: "the skin rows
//! are recomputed here, not per frame" — here once per `set`).

use glam::{Mat3, Mat4, Vec3};

use super::forward::{eye_rotation, from_row_major};
use super::pack::GnmPack;
use crate::error::{Error, Result};

/// Check one frame's inputs against a pack of `coeffs` coefficients and `joints` joints:
/// `head_ext` is `(coeffs + 4,)` (coefficients, then `[pitch_L, yaw_L, pitch_R, yaw_R]` radians),
/// `joint_world` is `(joints,)` column-major world matrices (metres), every number finite.
///
/// # Errors
/// [`Error::Mismatch`] for a wrong length; [`Error::Invalid`] naming the first non-finite entry.
pub fn check_inputs(
    coeffs: usize,
    joints: usize,
    head_ext: &[f32],
    joint_world: &[Mat4],
) -> Result<()> {
    if head_ext.len() != coeffs + super::GAZE_DIM {
        return Err(Error::Mismatch {
            what: "head_ext length".into(),
            expected: (coeffs + super::GAZE_DIM) as u64,
            found: head_ext.len() as u64,
        });
    }
    if joint_world.len() != joints {
        return Err(Error::Mismatch {
            what: "joint world matrices".into(),
            expected: joints as u64,
            found: joint_world.len() as u64,
        });
    }
    if let Some(i) = head_ext.iter().position(|x| !x.is_finite()) {
        return Err(Error::Invalid {
            what: format!("head_ext[{i}]"),
            reason: format!("{} is not finite", head_ext[i]),
        });
    }
    if let Some(i) = joint_world.iter().position(|m| !m.is_finite()) {
        return Err(Error::Invalid {
            what: format!("joint world matrix [{i}]"),
            reason: "not finite".into(),
        });
    }
    Ok(())
}

/// The kernel inputs of one frame of one pack, and what is needed to compute them (a few floats per
/// coefficient and per joint; never the basis).
#[derive(Clone, Debug, PartialEq)]
pub struct GnmFrame {
    basis_scale: Vec<f32>,
    rest_inverse: Vec<Mat4>,
    /// Eye rotation centres `(2,)`, metres, head-local (left, right): the pack's.
    pub eye_centres: [Vec3; 2],
    /// Scaled coefficients `cₑ·sₑ` `(E,)`, metres per basis unit.
    pub scaled: Vec<f32>,
    /// Each eye's rotation `Rx(pitch)·Ry(yaw)` as a matrix (left, right).
    pub eye_rotation: [Mat3; 2],
    /// Skin matrices `(J,)`, column-major: head-local → world, metres.
    pub skin: Vec<Mat4>,
    /// The bind transform (head-local → body bind space), which poses a vertex whose skin weights
    /// sum to 0 (as [`super::forward::pose`] does).
    pub bind: Mat4,
}

impl GnmFrame {
    /// The frame of `pack` at rest: every coefficient and gaze angle 0, joints at the pack's rest
    /// (so the skin matrices are `bind`, up to rounding).
    pub fn new(pack: &GnmPack) -> Self {
        let bind = from_row_major(&pack.header.bind_transform);
        let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
        let mut f = GnmFrame {
            basis_scale: pack.basis_scale.clone(),
            rest_inverse: rest.iter().map(|r| r.inverse()).collect(),
            bind,
            eye_centres: pack.eye_positions.map(Vec3::from),
            scaled: vec![0.0; pack.coeff_count()],
            eye_rotation: [Mat3::IDENTITY; 2],
            skin: vec![Mat4::IDENTITY; rest.len()],
        };
        let zeros = vec![0.0; pack.coeff_count() + super::GAZE_DIM];
        // The rest inputs are finite and of the right lengths (the pack was validated).
        let _ = f.set(&zeros, &rest);
        f
    }

    /// Expression coefficients E.
    pub fn coeff_count(&self) -> usize {
        self.basis_scale.len()
    }

    /// Joints J.
    pub fn joint_count(&self) -> usize {
        self.rest_inverse.len()
    }

    /// Take one frame: `head_ext` `(E+4,)` and `joint_world` `(J,)` (see [`check_inputs`]).
    /// `scaled[e] = head_ext[e] · scale[e]`, `eye_rotation[i] = Mat3(Rx(pitch_i)·Ry(yaw_i))`,
    /// `skin[j] = joint_world[j] · rest_j⁻¹ · bind`. Nothing is changed when the inputs are refused.
    ///
    /// # Errors
    /// As [`check_inputs`].
    pub fn set(&mut self, head_ext: &[f32], joint_world: &[Mat4]) -> Result<()> {
        check_inputs(
            self.coeff_count(),
            self.joint_count(),
            head_ext,
            joint_world,
        )?;
        let e = self.coeff_count();
        for ((o, c), s) in self
            .scaled
            .iter_mut()
            .zip(&head_ext[..e])
            .zip(&self.basis_scale)
        {
            *o = c * s;
        }
        let g = &head_ext[e..];
        self.eye_rotation = [
            Mat3::from_quat(eye_rotation(g[0], g[1])),
            Mat3::from_quat(eye_rotation(g[2], g[3])),
        ];
        for ((o, w), r) in self
            .skin
            .iter_mut()
            .zip(joint_world)
            .zip(&self.rest_inverse)
        {
            *o = *w * *r * self.bind;
        }
        Ok(())
    }
}
