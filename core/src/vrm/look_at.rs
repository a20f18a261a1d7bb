//! VRM lookAt: range maps (1.0) and curve maps (0.x), and what a gaze does to the eyes or the
//! look expressions.
//!
//! Source: VRMC_vrm-1.0 `lookAt.md` ("RangeMap", "Apply Yaw and Pitch to bone / expression");
//! VRM 0.x `firstPerson` (`lookAtHorizontalInner` … with `curve`, `xRange`, `yRange`; the curve is
//! a Unity AnimationCurve: keys `[time, value, inTangent, outTangent]`, cubic Hermite between
//! keys, held outside them).

use glam::Quat;

use super::{Gaze, VrmVersion};

/// What lookAt moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LookAtKind {
    /// The humanoid `leftEye` / `rightEye` bones (0.x `Bone`).
    #[default]
    Bone,
    /// The `lookUp/Down/Left/Right` expressions (0.x `BlendShape`).
    Expression,
}

/// One range map: `|angle|` degrees → eye degrees (bone) or an expression weight (expression).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RangeMap {
    /// `inputMaxValue` (0.x `xRange`), degrees, > 0; larger angles map as this one.
    pub input_max_deg: f32,
    /// `outputScale` (0.x `yRange`): degrees for a bone lookAt, a weight in [0, 1] for an
    /// expression lookAt.
    pub output_scale: f32,
    /// 0.x only: the curve keys `[time, value, inTangent, outTangent]` over t ∈ [0, 1], in time
    /// order; `None` is the straight line.
    pub curve: Option<Vec<[f32; 4]>>,
}

impl RangeMap {
    /// A straight map `input_max_deg` → `output_scale`.
    pub fn linear(input_max_deg: f32, output_scale: f32) -> Self {
        RangeMap {
            input_max_deg,
            output_scale,
            curve: None,
        }
    }

    /// Map `value` (degrees; its absolute value is used): `curve(min(|v|, max) / max) · scale`,
    /// the curve being the identity in 1.0. A zero angle maps to 0 whatever the curve's first key
    /// (a gaze straight ahead moves no look expression); a map whose `input_max_deg` is not above
    /// 0 gives 0.
    pub fn map(&self, value: f32) -> f32 {
        if self.input_max_deg.is_nan()
            || self.input_max_deg <= 0.0
            || !value.is_finite()
            || value == 0.0
        {
            return 0.0;
        }
        let t = value.abs().min(self.input_max_deg) / self.input_max_deg;
        let c = match &self.curve {
            None => t,
            Some(keys) => hermite(keys, t),
        };
        c * self.output_scale
    }
}

/// A Unity AnimationCurve at `t`: the first (last) key's value before (after) the keys, cubic
/// Hermite with the keys' out / in tangents between two keys.
pub fn hermite(keys: &[[f32; 4]], t: f32) -> f32 {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return t;
    };
    if t <= first[0] {
        return first[1];
    }
    if t >= last[0] {
        return last[1];
    }
    for w in keys.windows(2) {
        let (a, b) = (w[0], w[1]);
        if t >= a[0] && t <= b[0] {
            let dt = b[0] - a[0];
            if dt <= 0.0 {
                return b[1];
            }
            let s = (t - a[0]) / dt;
            let (s2, s3) = (s * s, s * s * s);
            let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
            let h10 = s3 - 2.0 * s2 + s;
            let h01 = -2.0 * s3 + 3.0 * s2;
            let h11 = s3 - s2;
            return h00 * a[1] + h10 * dt * a[3] + h01 * b[1] + h11 * dt * b[2];
        }
    }
    last[1]
}

/// A VRM's lookAt.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LookAt {
    /// Bone or expression.
    pub kind: LookAtKind,
    /// `offsetFromHeadBone` (0.x `firstPersonBoneOffset`), metres in the head's frame.
    pub offset_from_head: [f32; 3],
    /// Horizontal, toward the nose.
    pub horizontal_inner: RangeMap,
    /// Horizontal, away from the nose (the expression type uses it for both sides).
    pub horizontal_outer: RangeMap,
    /// Vertical, down.
    pub vertical_down: RangeMap,
    /// Vertical, up.
    pub vertical_up: RangeMap,
}

impl Default for LookAt {
    /// The spec's example values: bone, 90° → 10° on every map.
    fn default() -> Self {
        LookAt {
            kind: LookAtKind::Bone,
            offset_from_head: [0.0, 0.06, 0.0],
            horizontal_inner: RangeMap::linear(90.0, 10.0),
            horizontal_outer: RangeMap::linear(90.0, 10.0),
            vertical_down: RangeMap::linear(90.0, 10.0),
            vertical_up: RangeMap::linear(90.0, 10.0),
        }
    }
}

impl LookAt {
    /// The eyes' (yaw, pitch) in degrees, `[left, right]`: `Yaw>0` (left) through the left eye's
    /// outer and the right eye's inner map, `Yaw<0` the other way; `Pitch>0` (down) through the
    /// down map, `Pitch<0` through the up map; the sign of the gaze kept.
    pub fn eye_angles(&self, g: Gaze) -> [(f32, f32); 2] {
        let pitch = if g.pitch_deg > 0.0 {
            self.vertical_down.map(g.pitch_deg)
        } else {
            -self.vertical_up.map(g.pitch_deg)
        };
        let (left, right) = if g.yaw_deg > 0.0 {
            (
                self.horizontal_outer.map(g.yaw_deg),
                self.horizontal_inner.map(g.yaw_deg),
            )
        } else {
            (
                -self.horizontal_inner.map(g.yaw_deg),
                -self.horizontal_outer.map(g.yaw_deg),
            )
        };
        [(left, pitch), (right, pitch)]
    }

    /// Each eye's rotation in the character frame `[left, right]`: `qy(yaw) · qx(pitch)` (the
    /// spec's YXZ Euler) in the lookAt space — +Z forward for 1.0; 0.x models face −Z, so their
    /// lookAt space is turned 180° about +Y (yaw unchanged, pitch about −X).
    pub fn eye_rotations(&self, g: Gaze, version: VrmVersion) -> [Quat; 2] {
        let s = match version {
            VrmVersion::V1 => 1.0,
            VrmVersion::V0 => -1.0,
        };
        self.eye_angles(g).map(|(y, p)| {
            Quat::from_rotation_y(y.to_radians()) * Quat::from_rotation_x(s * p.to_radians())
        })
    }

    /// The look expressions' weights `[lookUp, lookDown, lookLeft, lookRight]` for an expression
    /// lookAt: yaw through the outer map, pitch through the down / up map, the other side 0.
    pub fn expression_weights(&self, g: Gaze) -> [f32; 4] {
        let (mut up, mut down, mut left, mut right) = (0.0, 0.0, 0.0, 0.0);
        if g.yaw_deg > 0.0 {
            left = self.horizontal_outer.map(g.yaw_deg);
        } else {
            right = self.horizontal_outer.map(g.yaw_deg);
        }
        if g.pitch_deg > 0.0 {
            down = self.vertical_down.map(g.pitch_deg);
        } else {
            up = self.vertical_up.map(g.pitch_deg);
        }
        [up, down, left, right]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_turns_the_eye_two_and_a_half_degrees() {
        // Yaw 15° through a map of input 30° → output 5°: 15/30 · 5 = 2.5°.
        let m = RangeMap::linear(30.0, 5.0);
        assert!((m.map(15.0) - 2.5).abs() < 1e-6);
        assert!((m.map(-15.0) - 2.5).abs() < 1e-6, "absolute value");
        assert!((m.map(90.0) - 5.0).abs() < 1e-6, "held at the input max");
        assert_eq!(RangeMap::linear(0.0, 5.0).map(10.0), 0.0);
    }

    #[test]
    fn yaw_left_uses_the_left_outer_and_right_inner_maps() {
        let l = LookAt {
            horizontal_inner: RangeMap::linear(30.0, 4.0),
            horizontal_outer: RangeMap::linear(30.0, 8.0),
            vertical_down: RangeMap::linear(30.0, 6.0),
            vertical_up: RangeMap::linear(30.0, 3.0),
            ..LookAt::default()
        };
        let [le, re] = l.eye_angles(Gaze {
            yaw_deg: 15.0,
            pitch_deg: 15.0,
        });
        assert_eq!(le, (4.0, 3.0));
        assert_eq!(re, (2.0, 3.0));
        let [le, re] = l.eye_angles(Gaze {
            yaw_deg: -15.0,
            pitch_deg: -15.0,
        });
        assert_eq!(le, (-2.0, -1.5));
        assert_eq!(re, (-4.0, -1.5));
        let w = l.expression_weights(Gaze {
            yaw_deg: -30.0,
            pitch_deg: 15.0,
        });
        assert_eq!(w, [0.0, 3.0, 0.0, 8.0]);
    }

    #[test]
    fn eye_rotation_turns_forward_left_and_down() {
        let l = LookAt {
            horizontal_outer: RangeMap::linear(90.0, 90.0),
            horizontal_inner: RangeMap::linear(90.0, 90.0),
            vertical_down: RangeMap::linear(90.0, 90.0),
            vertical_up: RangeMap::linear(90.0, 90.0),
            ..LookAt::default()
        };
        // 1.0: yaw 30° left turns +Z toward +X (the character's left).
        let [q, _] = l.eye_rotations(
            Gaze {
                yaw_deg: 30.0,
                pitch_deg: 0.0,
            },
            VrmVersion::V1,
        );
        let f = q * glam::Vec3::Z;
        assert!((f.x - 0.5).abs() < 1e-6 && f.z > 0.0, "{f}");
        // Pitch 30° down tips +Z toward −Y; a 0.x model (facing −Z) tips −Z toward −Y.
        let g = Gaze {
            yaw_deg: 0.0,
            pitch_deg: 30.0,
        };
        let [q1, _] = l.eye_rotations(g, VrmVersion::V1);
        assert!(((q1 * glam::Vec3::Z).y + 0.5).abs() < 1e-6);
        let [q0, _] = l.eye_rotations(g, VrmVersion::V0);
        assert!(((q0 * glam::Vec3::NEG_Z).y + 0.5).abs() < 1e-6);
    }

    #[test]
    fn the_curve_is_unitys_hermite() {
        // The 0.x default curve [0,0,0,1, 1,1,1,0]: key (0, 0) with out-tangent 1, key (1, 1)
        // with in-tangent 1 — the straight line.
        let keys = [[0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0]];
        // h10·1 + h01 + h11·1 at s = 0.5: 0.125 + 0.5 − 0.125 = 0.5.
        assert!((hermite(&keys, 0.5) - 0.5).abs() < 1e-6);
        assert_eq!(hermite(&keys, -1.0), 0.0);
        assert_eq!(hermite(&keys, 2.0), 1.0);
        // A flat-tangent ease: s = 0.25 gives h01 = −2/64 + 3/16 = 0.15625.
        let ease = [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]];
        assert!((hermite(&ease, 0.25) - 0.15625).abs() < 1e-6);
    }
}
