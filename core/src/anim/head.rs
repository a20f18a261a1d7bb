//! Head and eye motion from a capture's angle channels (Live Link Face's `HeadYaw`, `HeadPitch`,
//! `HeadRoll` and each eye's yaw / pitch / roll, radians) applied as joint overrides.
//!
//! **Rule (seed 000 "setJointOverrides").** An override is a rotation applied on top of the joint's
//! local rotation of the frame (the rest's when no clip moves it), rebuilt from the pose every
//! frame so overrides never accumulate, and carried down the joint's chain by the world matrices
//! (turning the head carries the eyes with it, exactly as skinning would).
//!
//! **Angles.** mien's character frame is glTF's: +Y up, the character looks toward +Z, +X is its
//! left. A yaw / pitch / roll triple is the character-frame rotation `q = qy(yaw) · qx(pitch) ·
//! qz(roll)`: yaw > 0 turns the face toward the character's left, pitch > 0 tips it down, roll > 0
//! tilts the top of the head toward the character's right (DESIGN "GNM": pitch above 0 looks
//! down, yaw above 0 toward character-left). Each joint receives it in its own frame, `r⁻¹ · q ·
//! r` with `r` the joint's rest world rotation, so rigs whose joint axes point anywhere (Mixamo's
//! Y-along-the-bone, VRM's world-aligned joints) all turn about the character's axes.
//!
//! **Joints** are found by standard names ([`HeadJoints::find`]): `head`, `Head`, `mixamorig:Head`,
//! `J_Bip_C_Head`, `CC_Base_Head`, `Head_M`; `neck`, …; `LeftEye`, `eye_L`, `eyeLeft`,
//! `J_Adj_L_FaceEye`, `CC_Base_L_Eye`, …, or named by the caller. With a neck and a head, each takes
//! half of every angle. When the eyes found are not below a head found by standard name (a rigid
//! export such as Face Cap's, where face, eyes and teeth are sibling nodes), the head's share is
//! applied to the lowest common ancestor of the head and the eyes, which is what carries them all;
//! a head the caller names is turned as it is.

use glam::{Mat4, Quat};

/// The angle channels a stream may carry, in [`AngleChannels`] order: head, left eye, right eye;
/// each yaw, pitch, roll (radians).
pub const ANGLE_CHANNELS: [[&str; 3]; 3] = [
    ["HeadYaw", "HeadPitch", "HeadRoll"],
    ["LeftEyeYaw", "LeftEyePitch", "LeftEyeRoll"],
    ["RightEyeYaw", "RightEyePitch", "RightEyeRoll"],
];

/// Where a stream's auxiliary channels hold the angles (index into the aux row), per
/// [`ANGLE_CHANNELS`] entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AngleChannels {
    /// `[head, left eye, right eye][yaw, pitch, roll]` → aux column.
    pub columns: [[Option<usize>; 3]; 3],
}

impl AngleChannels {
    /// Find the angle channels among `aux` names (compared case-insensitively).
    pub fn find(aux: &[String]) -> Self {
        let mut columns = [[None; 3]; 3];
        for (g, names) in ANGLE_CHANNELS.iter().enumerate() {
            for (k, n) in names.iter().enumerate() {
                columns[g][k] = aux.iter().position(|a| a.eq_ignore_ascii_case(n));
            }
        }
        AngleChannels { columns }
    }

    /// Whether the head (`0`), left eye (`1`) or right eye (`2`) has any angle channel.
    pub fn has(&self, group: usize) -> bool {
        self.columns[group].iter().any(Option::is_some)
    }

    /// The angles `[head, left eye, right eye][yaw, pitch, roll]` of one aux row (radians; 0
    /// where a channel is missing or not finite).
    pub fn read(&self, aux_row: &[f32]) -> [[f32; 3]; 3] {
        self.columns.map(|g| {
            g.map(|c| {
                c.and_then(|c| aux_row.get(c).copied())
                    .filter(|x| x.is_finite())
                    .unwrap_or(0.0)
            })
        })
    }
}

/// The character-frame rotation of a yaw / pitch / roll triple (radians): `qy(yaw) · qx(pitch) ·
/// qz(roll)` (module docs for the signs).
pub fn angles_to_quat(a: [f32; 3]) -> Quat {
    Quat::from_rotation_y(a[0]) * Quat::from_rotation_x(a[1]) * Quat::from_rotation_z(a[2])
}

/// A character-frame rotation `q` in the frame of a joint whose rest world matrix is `rest_world`:
/// `r⁻¹ · q · r`, `r` its rotation (scale and translation removed).
pub fn to_joint_frame(q: Quat, rest_world: &Mat4) -> Quat {
    let (_, r, _) = rest_world.to_scale_rotation_translation();
    let r = if r.is_finite() {
        r.normalize()
    } else {
        Quat::IDENTITY
    };
    (r.inverse() * q * r).normalize()
}

/// A joint name reduced for matching: the part after the last `:` (`mixamorig:Head`), lower case,
/// a known rig prefix removed (`cc_base_`, `j_bip_c_`, `j_bip_`, `j_adj_`, `def-`, `bip01 `), then
/// only letters and digits.
pub fn normalize(name: &str) -> String {
    let tail = name.rsplit(':').next().unwrap_or(name).to_ascii_lowercase();
    let mut t = tail.as_str();
    for p in ["cc_base_", "j_bip_c_", "j_bip_", "j_adj_", "def-", "bip01 "] {
        if let Some(rest) = t.strip_prefix(p) {
            t = rest;
            break;
        }
    }
    t.chars().filter(char::is_ascii_alphanumeric).collect()
}

const HEAD: &[&str] = &["head", "headm", "headjnt", "headbone"];
const NECK: &[&str] = &["neck", "neckm", "neckjnt", "neck1", "necktwist01"];
const LEFT_EYE: &[&str] = &[
    "lefteye",
    "eyel",
    "eyeleft",
    "leye",
    "lefteyeball",
    "eyeballl",
    "eyeballleft",
    "lfaceeye",
];
const RIGHT_EYE: &[&str] = &[
    "righteye",
    "eyer",
    "eyeright",
    "reye",
    "righteyeball",
    "eyeballr",
    "eyeballright",
    "rfaceeye",
];

/// The joints head motion turns, as node (or pack joint) indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadJoints {
    /// The head.
    pub head: Option<usize>,
    /// The neck.
    pub neck: Option<usize>,
    /// The left eye.
    pub left_eye: Option<usize>,
    /// The right eye.
    pub right_eye: Option<usize>,
    /// The head was named by the caller: it is turned as it is, never its carrier.
    pub head_named: bool,
}

/// Joint names the caller gives instead of the standard ones (`None`: find by standard name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadJointNames {
    /// The head joint's exact name.
    pub head: Option<String>,
    /// The neck joint's exact name.
    pub neck: Option<String>,
    /// The left and right eye joints' exact names.
    pub eyes: Option<(String, String)>,
}

impl HeadJoints {
    /// Find the joints among `names` (`(J,)`, a node's or joint's name, `None` for unnamed):
    /// each role by the caller's exact name when given, else the first name whose
    /// [`normalize`]d form is one of the role's standard names.
    ///
    /// # Errors
    /// A name the caller gave that no joint has, as `(role, name)`.
    pub fn find(
        names: &[Option<&str>],
        given: &HeadJointNames,
    ) -> Result<Self, (&'static str, String)> {
        let exact = |role: &'static str, n: &str| {
            names
                .iter()
                .position(|x| *x == Some(n))
                .ok_or((role, n.to_string()))
        };
        let standard = |set: &[&str]| {
            names
                .iter()
                .position(|x| x.is_some_and(|n| set.contains(&normalize(n).as_str())))
        };
        let head = match &given.head {
            Some(n) => Some(exact("head", n)?),
            None => standard(HEAD),
        };
        let neck = match &given.neck {
            Some(n) => Some(exact("neck", n)?),
            None => standard(NECK),
        };
        let (left_eye, right_eye) = match &given.eyes {
            Some((l, r)) => (Some(exact("left eye", l)?), Some(exact("right eye", r)?)),
            None => (standard(LEFT_EYE), standard(RIGHT_EYE)),
        };
        Ok(HeadJoints {
            head,
            neck,
            left_eye,
            right_eye,
            head_named: given.head.is_some(),
        })
    }

    /// Whether no joint was found.
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
            && self.neck.is_none()
            && self.left_eye.is_none()
            && self.right_eye.is_none()
    }

    /// The joint that carries the head's share: the head, or — when it was found by standard
    /// name and the eyes found are not below it — the lowest common ancestor of the head and the
    /// eyes (`parent[j]`: each joint's parent).
    pub fn head_carrier(&self, parent: &[Option<usize>]) -> Option<usize> {
        let head = self.head?;
        if self.head_named {
            return Some(head);
        }
        let eyes: Vec<usize> = [self.left_eye, self.right_eye]
            .into_iter()
            .flatten()
            .collect();
        let chain = |mut j: usize| {
            let mut c = vec![j];
            while let Some(p) = parent.get(j).copied().flatten() {
                if c.len() > parent.len() {
                    break; // a cycle: never in a validated scene
                }
                c.push(p);
                j = p;
            }
            c
        };
        if eyes.iter().all(|&e| chain(e).contains(&head)) {
            return Some(head);
        }
        let mut common = chain(head);
        for e in eyes {
            let c = chain(e);
            common.retain(|j| c.contains(j));
        }
        common.first().copied().or(Some(head))
    }
}

/// The per-joint rotations (in each joint's own frame) of one frame's angles: `(joint, q)` for the
/// head carrier (and the neck, half each when both exist) and each eye found. `rest_world` `(J,)`
/// is each joint's rest world matrix, `parent` `(J,)` each joint's parent.
pub fn overrides(
    joints: &HeadJoints,
    angles: &[[f32; 3]; 3],
    channels: &AngleChannels,
    rest_world: &[Mat4],
    parent: &[Option<usize>],
    out: &mut Vec<(usize, Quat)>,
) {
    out.clear();
    let local = |j: usize, q: Quat| {
        (
            j,
            rest_world
                .get(j)
                .map_or(Quat::IDENTITY, |m| to_joint_frame(q, m)),
        )
    };
    if channels.has(0) {
        let carrier = joints.head_carrier(parent);
        let share = if carrier.is_some() && joints.neck.is_some() {
            0.5
        } else {
            1.0
        };
        let q = angles_to_quat(angles[0].map(|a| a * share));
        for j in [joints.neck, carrier].into_iter().flatten() {
            out.push(local(j, q));
        }
    }
    for (g, j) in [(1, joints.left_eye), (2, joints.right_eye)] {
        if let (true, Some(j)) = (channels.has(g), j) {
            out.push(local(j, angles_to_quat(angles[g])));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn standard_names_are_found_across_rigs() {
        for (names, want) in [
            (
                vec![
                    "Hips",
                    "mixamorig:Neck",
                    "mixamorig:Head",
                    "mixamorig:LeftEye",
                    "mixamorig:RightEye",
                ],
                [Some(2), Some(1), Some(3), Some(4)],
            ),
            (
                vec![
                    "J_Bip_C_Neck",
                    "J_Bip_C_Head",
                    "J_Adj_L_FaceEye",
                    "J_Adj_R_FaceEye",
                ],
                [Some(1), Some(0), Some(2), Some(3)],
            ),
            (
                vec!["grp", "head", "eyeLeft", "eyeRight"],
                [Some(1), None, Some(2), Some(3)],
            ),
            (
                vec!["CC_Base_Head", "CC_Base_L_Eye", "CC_Base_R_Eye"],
                [Some(0), None, Some(1), Some(2)],
            ),
            (vec!["HeadTop_End", "Spine"], [None, None, None, None]),
        ] {
            let n: Vec<Option<&str>> = names.iter().map(|s| Some(*s)).collect();
            let j = HeadJoints::find(&n, &HeadJointNames::default()).unwrap();
            assert_eq!([j.head, j.neck, j.left_eye, j.right_eye], want, "{names:?}");
        }
        let n = [Some("a"), Some("b")];
        let given = HeadJointNames {
            head: Some("b".into()),
            ..Default::default()
        };
        assert_eq!(HeadJoints::find(&n, &given).unwrap().head, Some(1));
        let given = HeadJointNames {
            head: Some("c".into()),
            ..Default::default()
        };
        assert_eq!(
            HeadJoints::find(&n, &given).unwrap_err(),
            ("head", "c".into())
        );
    }

    #[test]
    fn angle_signs_follow_the_character_frame() {
        // Yaw > 0 turns the face (+Z) toward the character's left (+X).
        let f = angles_to_quat([0.3, 0.0, 0.0]) * Vec3::Z;
        assert!(f.x > 0.29 && (f.x - 0.3f32.sin()).abs() < 1e-6);
        // Pitch > 0 tips the face down (−Y).
        let f = angles_to_quat([0.0, 0.3, 0.0]) * Vec3::Z;
        assert!((f.y + 0.3f32.sin()).abs() < 1e-6);
        // In a joint whose frame is turned 90° about Y, the character's yaw is still a yaw: the
        // joint-frame rotation applied to the joint's rest world reproduces q · r.
        let r = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let q = angles_to_quat([0.2, 0.1, -0.05]);
        let local = to_joint_frame(q, &Mat4::from_quat(r));
        assert!((r * local).abs_diff_eq(q * r, 1e-6));
    }

    #[test]
    fn a_rigid_export_turns_the_common_parent_and_a_neck_splits_the_angle() {
        // Face Cap: grp(0) → head(1), eyeL(2), eyeR(3), siblings.
        let parent = [None, Some(0), Some(0), Some(0)];
        let mut j = HeadJoints {
            head: Some(1),
            neck: None,
            left_eye: Some(2),
            right_eye: Some(3),
            head_named: false,
        };
        assert_eq!(j.head_carrier(&parent), Some(0));
        // Named by the caller: turned as it is.
        j.head_named = true;
        assert_eq!(j.head_carrier(&parent), Some(1));
        // A skinned rig: neck(0) → head(1) → eyes(2, 3).
        let parent = [None, Some(0), Some(1), Some(1)];
        let j = HeadJoints {
            head: Some(1),
            neck: Some(0),
            left_eye: Some(2),
            right_eye: Some(3),
            head_named: false,
        };
        assert_eq!(j.head_carrier(&parent), Some(1));
        let ch = AngleChannels::find(&["HeadYaw".to_string(), "LeftEyePitch".to_string()]);
        let angles = ch.read(&[0.4, 0.2]);
        let rest = vec![Mat4::IDENTITY; 4];
        let mut out = Vec::new();
        overrides(&j, &angles, &ch, &rest, &parent, &mut out);
        // Neck and head half each; the left eye its pitch; no right-eye channel, no override.
        assert_eq!(out.len(), 3);
        assert!(out[0].1.abs_diff_eq(Quat::from_rotation_y(0.2), 1e-6));
        assert!(out[1].1.abs_diff_eq(Quat::from_rotation_y(0.2), 1e-6));
        assert_eq!(out[2].0, 2);
        assert!(out[2].1.abs_diff_eq(Quat::from_rotation_x(0.2), 1e-6));
    }
}
