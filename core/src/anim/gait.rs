//! What a walk clip is made for: the ground speed at which its stance feet stand still.
//!
//! A walk cycle played in place moves each foot backward (against the character's forward)
//! while it carries the weight; carried through the world at that speed, the foot stands still.
//! [`stride_speed`] samples the clip at 120 Hz over its span, takes each ankle's stance as the
//! frames within [`STANCE_BAND_M`] of that ankle's lowest height, and returns the median of the
//! ankles' backward speeds over consecutive stance frames (model space, metres per second). The
//! locomotion blend ([`crate::anim`]'s users: `mien-runtime`'s character file) plays the walk at
//! `speed / stride_speed`× so a planted foot neither slides forward nor back.

use glam::{DVec3, Mat4};

use crate::rig::{Character, ClipId, NodeId};

/// Height above an ankle's lowest point that still counts as stance, metres.
pub const STANCE_BAND_M: f64 = 0.02;
/// Sampling rate, Hz.
pub const SAMPLE_HZ: f64 = 120.0;
/// Fewest stance velocity samples a measurement needs.
pub const MIN_SAMPLES: usize = 4;

/// The ground speed (m/s, ≥ 0) clip `clip` of `ch` is made for, measured on the ankles `ankles`
/// along `forward` (the character's forward in model space, e.g. +Z for glTF) — the module doc's
/// method. `None` when the clip is shorter than two samples or its stance gives fewer than
/// [`MIN_SAMPLES`] velocities (a clip that does not walk).
pub fn stride_speed(
    ch: &Character,
    clip: ClipId,
    ankles: &[NodeId],
    forward: DVec3,
) -> Option<f64> {
    let c = ch.clips.get(clip.index())?;
    let (a, b) = (c.start(), c.end());
    let n = ((b - a) * SAMPLE_HZ).floor() as usize;
    if n < 2 || forward.length_squared() == 0.0 {
        return None;
    }
    let fwd = forward.normalize();
    let dt = (b - a) / n as f64;
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    let (mut scratch, mut world): (Vec<Mat4>, Vec<Mat4>) = (Vec::new(), Vec::new());
    let mut tracks: Vec<Vec<DVec3>> = vec![Vec::with_capacity(n + 1); ankles.len()];
    for k in 0..=n {
        pose.clone_from(&rest);
        ch.apply_clip(clip, a + k as f64 * dt, &mut pose);
        ch.world_matrices(&pose, &mut scratch, &mut world);
        for (t, id) in tracks.iter_mut().zip(ankles) {
            t.push(world.get(id.index())?.w_axis.truncate().as_dvec3());
        }
    }
    let mut v = Vec::new();
    for t in &tracks {
        let low = t.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        for w in t.windows(2) {
            if w[0].y <= low + STANCE_BAND_M && w[1].y <= low + STANCE_BAND_M {
                v.push(-(w[1] - w[0]).dot(fwd) / dt);
            }
        }
    }
    if v.len() < MIN_SAMPLES {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2].max(0.0))
}
