//! The automatic T-pose reference ([`super::Reference::TPose`]).

use std::collections::BTreeMap;

use glam::{DQuat, DVec3, Quat};

use super::{World, dquat};
use crate::error::{Error, Result};
use crate::rig::{Character, NodeId, Transform};

/// The limb chains a T-pose levels, root first, and the direction each bone points in it: `1` the
/// character's left (horizontal), `-1` its right, `0` straight down.
const CHAINS: &[(&[&str], i8)] = &[
    (
        &[
            "leftUpperArm",
            "leftLowerArm",
            "leftHand",
            "leftMiddleProximal",
        ],
        1,
    ),
    (
        &[
            "rightUpperArm",
            "rightLowerArm",
            "rightHand",
            "rightMiddleProximal",
        ],
        -1,
    ),
    (&["leftUpperLeg", "leftLowerLeg", "leftFoot"], 0),
    (&["rightUpperLeg", "rightLowerLeg", "rightFoot"], 0),
];

/// The skeleton's rest pose turned into a T-pose: each bone of the arm chains (upper arm → lower
/// arm → hand → middle finger) turned by the shortest arc that points it level toward its side,
/// each bone of the leg chains (upper leg → lower leg → foot) straight down, root first, every
/// other joint at rest. "Left" is the horizontal direction from the right upper arm to the left
/// one (else the upper legs, the shoulders), in glTF world space (+Y up). Only a bone's direction
/// to the next bone of its chain is set: twist about the bone stays the rest's.
///
/// `roles` is the humanoid map (role → node) the retargeter found.
///
/// # Errors
/// [`Error::Invalid`] when no left/right pair is found to tell the sides, or no chain has two
/// bones.
pub fn t_pose(ch: &Character, roles: &BTreeMap<&'static str, NodeId>) -> Result<Vec<Transform>> {
    let mut locals = ch.rest_pose().locals;
    let mut w = World::of(ch, &locals);
    let left = [
        ("leftUpperArm", "rightUpperArm"),
        ("leftUpperLeg", "rightUpperLeg"),
        ("leftShoulder", "rightShoulder"),
    ]
    .iter()
    .find_map(|(l, r)| {
        let (a, b) = (roles.get(l)?, roles.get(r)?);
        let mut d = w.pos(a.index()) - w.pos(b.index());
        d.y = 0.0;
        (d.length() > 1e-6).then(|| d.normalize())
    })
    .ok_or_else(|| Error::Invalid {
        what: format!("T-pose of {}", ch.source),
        reason: "no left and right arms, legs or shoulders to tell the sides apart".into(),
    })?;
    let mut turned = 0;
    for (chain, dir) in CHAINS {
        let want = match dir {
            1 => left,
            -1 => -left,
            _ => DVec3::NEG_Y,
        };
        let nodes: Vec<NodeId> = chain.iter().filter_map(|r| roles.get(r).copied()).collect();
        for pair in nodes.windows(2) {
            let (a, b) = (pair[0].index(), pair[1].index());
            let cur = w.pos(b) - w.pos(a);
            if cur.length() < 1e-6 {
                continue;
            }
            let arc = DQuat::from_rotation_arc(cur.normalize(), want);
            let parent_rot = ch.nodes[a]
                .parent
                .map_or(DQuat::IDENTITY, |p| w.rot[p.index()]);
            let world = (arc * w.rot[a]).normalize();
            let local = (parent_rot.inverse() * world).normalize();
            locals[a].rotation = Quat::from_xyzw(
                local.x as f32,
                local.y as f32,
                local.z as f32,
                local.w as f32,
            )
            .normalize();
            w = World::of(ch, &locals);
            turned += 1;
        }
    }
    if turned == 0 {
        return Err(Error::Invalid {
            what: format!("T-pose of {}", ch.source),
            reason:
                "no arm or leg chain of two bones (upper arm → lower arm, upper leg → lower leg)"
                    .into(),
        });
    }
    // Keep the rest's f32 rotation where a bone did not move (no rounding drift).
    for (l, r) in locals.iter_mut().zip(ch.nodes.iter()) {
        if dquat(l.rotation).dot(dquat(r.rest.rotation)).abs() > 1.0 - 1e-15 {
            l.rotation = r.rest.rotation;
        }
    }
    Ok(locals)
}
