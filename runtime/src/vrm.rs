//! A VRM avatar's expressions and lookAt, evaluated last in an instance's frame
//! ([`mien_core::vrm`]): the drivers have written the expression inputs on the control node; this
//! step applies `isBinary`, the overrides and the binds, and feeds lookAt a gaze.
//!
//! **The gaze** (degrees in the lookAt space, yaw > 0 toward the character's left, pitch > 0
//! down), first found of:
//! 1. the caller's ([`crate::InstanceMut::set_vrm_gaze`]);
//! 2. the face driver's look-at point, through the lookAt space (the humanoid head's world
//!    matrix × `offsetFromHeadBone`, turned back by the head's rest rotation; VRMC_vrm-1.0
//!    `lookAt.md` "Yaw and Pitch in lookAt space");
//! 3. the stream's eye angles (Live Link Face `LeftEyeYaw` … radians, both eyes averaged).
//!
//! Without one, lookAt leaves the eyes and look expressions as the drivers set them.

use glam::{Mat4, Vec3};
use mien_core::anim::head::AngleChannels;
use mien_core::rig::{Character, Pose};
use mien_core::vrm::{ApplyCounts, Gaze, Vrm, VrmVersion};

use crate::error::{Error, Result};

/// Per-instance VRM state.
#[derive(Clone, Debug, Default)]
pub(crate) struct VrmState {
    rest_world: Vec<Mat4>,
    head_rest_rotation: glam::Quat,
    scratch: Vec<f32>,
    aux: Vec<f32>,
    /// The caller's gaze, if set.
    pub(crate) gaze: Option<Gaze>,
    /// Expression inputs set in the `vrm` space, if any.
    pub(crate) direct: Option<Vec<f32>>,
    /// The last frame's counts.
    pub(crate) last: ApplyCounts,
    /// Expression inputs outside [0, 1] clamped, over all frames.
    pub(crate) clamped: u64,
}

impl VrmState {
    pub(crate) fn new(ch: &Character) -> Option<Self> {
        let vrm = ch.vrm.as_ref()?;
        let (mut l, mut w) = (Vec::new(), Vec::new());
        ch.world_matrices(&ch.rest_pose(), &mut l, &mut w);
        let head_rest_rotation = vrm
            .bone("head")
            .and_then(|h| w.get(h.index()))
            .map(|m| m.to_scale_rotation_translation().1.normalize())
            .unwrap_or_default();
        Some(VrmState {
            rest_world: w,
            head_rest_rotation,
            ..VrmState::default()
        })
    }

    /// The gaze toward world point `p` from the lookAt space of `world` (the pose's node world
    /// matrices).
    pub(crate) fn gaze_toward(&self, vrm: &Vrm, world: &[Mat4], p: Vec3) -> Option<Gaze> {
        let head = world.get(vrm.bone("head")?.index())?;
        let space = *head
            * Mat4::from_translation(Vec3::from(vrm.look_at.offset_from_head))
            * Mat4::from_quat(self.head_rest_rotation.inverse());
        let local = space.inverse().transform_point3(p);
        if !local.is_finite() {
            return None;
        }
        // 0.x models face −Z: their lookAt space is turned 180° about +Y.
        let (x, z) = match vrm.version {
            VrmVersion::V1 => (local.x, local.z),
            VrmVersion::V0 => (-local.x, -local.z),
        };
        let yaw = x.atan2(z).to_degrees();
        let pitch = (-local.y).atan2((x * x + z * z).sqrt()).to_degrees();
        Some(Gaze {
            yaw_deg: yaw,
            pitch_deg: pitch,
        })
    }

    /// The gaze of a stream's eye angles at aux row `aux` (both eyes averaged, degrees).
    pub(crate) fn stream_gaze(channels: &AngleChannels, aux: &[f32]) -> Option<Gaze> {
        if !channels.has(1) && !channels.has(2) {
            return None;
        }
        let a = channels.read(aux);
        let n = f32::from(u8::from(channels.has(1)) + u8::from(channels.has(2)));
        Some(Gaze {
            yaw_deg: (a[1][0] + a[2][0]).to_degrees() / n,
            pitch_deg: (a[1][1] + a[2][1]).to_degrees() / n,
        })
    }

    /// The aux row buffer for `n` aux channels.
    pub(crate) fn aux(&mut self, n: usize) -> &mut Vec<f32> {
        self.aux.resize(n, 0.0);
        &mut self.aux
    }

    /// Apply `vrm` to `pose` with `gaze`.
    pub(crate) fn apply(&mut self, vrm: &Vrm, pose: &mut Pose, gaze: Option<Gaze>) {
        let c = vrm.apply(pose, &self.rest_world, gaze, &mut self.scratch);
        self.clamped += u64::from(c.clamped);
        self.last = c;
    }
}

impl crate::InstanceMut<'_> {
    /// Set (or clear, `None`) the gaze of a VRM avatar's lookAt, degrees in its lookAt space
    /// (yaw > 0 toward the character's left, pitch > 0 down): it takes precedence over the face
    /// driver's look-at point and the stream's eye angles ([`mien_core::vrm`]: the gaze's
    /// yaw and pitch go through the avatar's lookAt range maps).
    ///
    /// # Errors
    /// A character that is not a VRM avatar; a non-finite angle.
    pub fn set_vrm_gaze(&mut self, gaze: Option<mien_core::vrm::Gaze>) -> Result<&mut Self> {
        let Some(state) = self.inst.vrm.as_mut() else {
            return Err(Error::invalid(
                format!("{}: VRM gaze", self.asset.source()),
                "the character is not a VRM avatar (it has no VRM or VRMC_vrm extension)",
            ));
        };
        if let Some(g) = gaze
            && !(g.yaw_deg.is_finite() && g.pitch_deg.is_finite())
        {
            return Err(Error::invalid(
                "VRM gaze",
                format!("yaw {} / pitch {} is not finite", g.yaw_deg, g.pitch_deg),
            ));
        }
        state.gaze = gaze;
        Ok(self)
    }
}
