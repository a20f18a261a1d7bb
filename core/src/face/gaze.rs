//! Gaze: each eye turns toward a world point on its own (so the eyes converge), within yaw and
//! pitch limits, at a bounded angular speed, expressed either as eye-joint rotations or as ARKit
//! `eyeLook*` weights.
//!
//! Angles follow DESIGN.md: yaw > 0 turns toward the character's left (+X, the character faces +Z),
//! pitch > 0 looks down. Source: seed 003 "Face" (`set_look_at(point, weight)` turns each eye bone on
//! its own within the yaw and pitch limits at the speed limit).

use glam::{Mat4, Quat, Vec3};

/// One eye's angles, radians.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EyeAngles {
    /// Toward the character's left (+X), radians.
    pub yaw: f32,
    /// Downward, radians.
    pub pitch: f32,
}

/// The yaw and pitch that aim an eye at `target` from `center` (world, metres), measured in the
/// eye's frame: `forward` and `up` are the frame's axes in world space (unit); yaw turns toward
/// `up × forward` (the character's left when forward is +Z and up +Y), pitch > 0 looks down. A
/// target at the centre gives straight ahead.
pub fn aim(center: Vec3, target: Vec3, forward: Vec3, up: Vec3) -> EyeAngles {
    let d = target - center;
    let side = up.cross(forward);
    let (x, y, z) = (d.dot(side), d.dot(up), d.dot(forward));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) || x * x + y * y + z * z < 1e-12 {
        return EyeAngles::default();
    }
    EyeAngles {
        yaw: x.atan2(z),
        pitch: (-y).atan2((x * x + z * z).sqrt()),
    }
}

/// Move `current` toward `desired` (first clamped to ±`yaw_limit`, ±`pitch_limit`) by at most
/// `max_speed × dt` radians of yaw and of pitch. `dt ≤ 0` (a first frame or a seek) jumps straight
/// to the clamped desire.
pub fn step(
    current: EyeAngles,
    desired: EyeAngles,
    yaw_limit: f32,
    pitch_limit: f32,
    max_speed: f32,
    dt: f64,
) -> EyeAngles {
    let want = EyeAngles {
        yaw: desired.yaw.clamp(-yaw_limit, yaw_limit),
        pitch: desired.pitch.clamp(-pitch_limit, pitch_limit),
    };
    if !(dt > 0.0) {
        return want;
    }
    let max = (f64::from(max_speed) * dt) as f32;
    let toward = |c: f32, w: f32| c + (w - c).clamp(-max, max);
    EyeAngles {
        yaw: toward(current.yaw, want.yaw),
        pitch: toward(current.pitch, want.pitch),
    }
}

/// ARKit `eyeLook*` weights of one eye for `angles`: `[up, down, in, out]`, each
/// `|angle| / radians_per_unit` clamped to [0, 1]. `left_eye` decides whether yaw toward +X is
/// out (left eye) or in (right eye).
pub fn look_weights(angles: EyeAngles, left_eye: bool, radians_per_unit: f32) -> [f32; 4] {
    let w = |a: f32| (a / radians_per_unit).clamp(0.0, 1.0);
    let (toward_left, toward_right) = (w(angles.yaw), w(-angles.yaw));
    let (out, inward) = if left_eye {
        (toward_left, toward_right)
    } else {
        (toward_right, toward_left)
    };
    [w(-angles.pitch), w(angles.pitch), inward, out]
}

/// The rotation that turns an eye joint by `angles` about its own `up` axis (yaw) and then its own
/// right axis (`up × forward`, pitch), applied after the joint's rest rotation:
/// `q = q_up(yaw) · q_right(pitch)`.
pub fn eye_rotation(angles: EyeAngles, forward: Vec3, up: Vec3) -> Quat {
    let right = up.cross(forward).normalize_or_zero();
    // Positive pitch looks down: a rotation about `right` that takes forward toward −up.
    Quat::from_axis_angle(up, angles.yaw) * Quat::from_axis_angle(right, angles.pitch)
}

/// The world position of a node from its world matrix.
pub fn world_position(m: &Mat4) -> Vec3 {
    m.w_axis.truncate()
}
