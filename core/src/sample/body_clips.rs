//! The built-in body's clips ([`super::sample_body`]): `idle` (4 s of breathing and sway),
//! `walk` (a compass gait of [`WALK_CYCLE_S`] made for [`WALK_SPEED`]; the formulas are in
//! [`super::body`]'s module doc) and `wave` (2 s), keyed at [`CLIP_KEYS_PER_S`], all looping.

use std::f32::consts::PI;

use glam::{Quat, Vec3};

use super::body::{BODY_SOURCE, CLIP_KEYS_PER_S, LEG_LENGTH, WALK_CYCLE_S, WALK_SPEED, at, joint};
use crate::anim::clip::{Channel, Clip, Interpolation, Property, Sampler};
use crate::rig::NodeId;

/// Keys of one rotation channel sampled from `f(t)` over `[0, span]` at [`CLIP_KEYS_PER_S`] (the
/// last key equals the first for a loop when `f` is periodic).
fn rotation(node: &str, span: f32, f: impl Fn(f32) -> Quat) -> Channel {
    let n = (span * CLIP_KEYS_PER_S).round() as usize;
    let times: Vec<f32> = (0..=n).map(|k| span * k as f32 / n as f32).collect();
    let values: Vec<f32> = times
        .iter()
        .flat_map(|&t| f(t).normalize().to_array())
        .collect();
    Channel {
        node: NodeId(joint(node) as u32),
        property: Property::Rotation,
        sampler: Sampler::new(BODY_SOURCE, node, Interpolation::Linear, times, values, 4)
            .unwrap_or_else(|e| unreachable!("generated keys are valid: {e}")),
    }
}

fn translation(node: &str, span: f32, f: impl Fn(f32) -> Vec3) -> Channel {
    let n = (span * CLIP_KEYS_PER_S).round() as usize;
    let times: Vec<f32> = (0..=n).map(|k| span * k as f32 / n as f32).collect();
    let values: Vec<f32> = times.iter().flat_map(|&t| f(t).to_array()).collect();
    Channel {
        node: NodeId(joint(node) as u32),
        property: Property::Translation,
        sampler: Sampler::new(BODY_SOURCE, node, Interpolation::Linear, times, values, 3)
            .unwrap_or_else(|e| unreachable!("generated keys are valid: {e}")),
    }
}

/// The arms hanging 80° down from the T-pose, the elbows bent `elbow` radians forward.
fn arms_down(side: f32, swing: f32, elbow: f32) -> (Quat, Quat) {
    let upper = Quat::from_rotation_x(swing) * Quat::from_rotation_z(-side * 80f32.to_radians());
    let lower = Quat::from_rotation_y(-side * elbow);
    (upper, lower)
}

pub(super) fn idle() -> Clip {
    let span = 4.0;
    let w = 2.0 * PI / span;
    let mut ch = vec![
        rotation("Chest", span, |t| {
            Quat::from_rotation_x(0.025 * (w * t).sin())
        }),
        rotation("Spine", span, |t| {
            Quat::from_rotation_y(0.03 * (w * t).cos())
        }),
        rotation("Head", span, |t| {
            Quat::from_rotation_y(0.06 * (w * t + 1.0).sin())
                * Quat::from_rotation_x(0.02 * (2.0 * w * t).sin())
        }),
        translation("Hips", span, move |t| {
            at("Hips") + Vec3::new(0.01 * (w * t).sin(), 0.0, 0.0)
        }),
    ];
    for (s, side) in [("Left", 1.0f32), ("Right", -1.0)] {
        let phase = if side > 0.0 { 0.0 } else { 1.3 };
        ch.push(rotation(&format!("{s}UpperArm"), span, move |t| {
            arms_down(side, 0.04 * (w * t + phase).sin(), 0.2).0
        }));
        ch.push(rotation(&format!("{s}LowerArm"), span, move |_| {
            arms_down(side, 0.0, 0.2).1
        }));
    }
    Clip {
        name: Some("idle".into()),
        channels: ch,
    }
}

/// The stance / swing angles of a leg at cycle phase `u` (0–1; stance in the first half):
/// `(forward angle φ, knee bend κ)`, radians.
fn leg(u: f32) -> (f32, f32) {
    let s0 = (WALK_SPEED as f32 * WALK_CYCLE_S / (4.0 * LEG_LENGTH)).min(0.9);
    let u = u.rem_euclid(1.0);
    if u < 0.5 {
        // Stance: sin φ falls linearly, the leg straight.
        ((s0 * (1.0 - 4.0 * u)).asin(), 0.0)
    } else {
        // Swing: back to front along a smooth curve, the knee bending.
        let v = (u - 0.5) * 2.0;
        let phi = -(s0.asin()) * (PI * v).cos();
        (phi, 60f32.to_radians() * (PI * v).sin())
    }
}

pub(super) fn walk() -> Clip {
    let span = WALK_CYCLE_S;
    let mut ch = Vec::new();
    for (s, off) in [("Left", 0.0f32), ("Right", 0.5)] {
        let u = move |t: f32| t / span + off;
        ch.push(rotation(&format!("{s}UpperLeg"), span, move |t| {
            Quat::from_rotation_x(-leg(u(t)).0)
        }));
        ch.push(rotation(&format!("{s}LowerLeg"), span, move |t| {
            Quat::from_rotation_x(leg(u(t)).1)
        }));
        // The foot level: world pitch −φ + κ + f = 0.
        ch.push(rotation(&format!("{s}Foot"), span, move |t| {
            let (phi, kappa) = leg(u(t));
            Quat::from_rotation_x(phi - kappa)
        }));
        // The arm swings against the other leg.
        let side = if off == 0.0 { 1.0f32 } else { -1.0 };
        ch.push(rotation(&format!("{s}UpperArm"), span, move |t| {
            arms_down(side, -0.6 * leg(u(t) + 0.5).0, 0.3).0
        }));
        ch.push(rotation(&format!("{s}LowerArm"), span, move |_| {
            arms_down(side, 0.0, 0.3).1
        }));
    }
    // The hips bob with the stance leg: L·(cos φ − 1), and turn a little with the stride.
    ch.push(translation("Hips", span, |t| {
        let u = t / span;
        let stance = if u.rem_euclid(1.0) < 0.5 {
            leg(u).0
        } else {
            leg(u + 0.5).0
        };
        at("Hips") + Vec3::new(0.0, LEG_LENGTH * (stance.cos() - 1.0), 0.0)
    }));
    ch.push(rotation("Spine", span, |t| {
        Quat::from_rotation_y(0.08 * (2.0 * PI * t / span).sin())
    }));
    Clip {
        name: Some("walk".into()),
        channels: ch,
    }
}

pub(super) fn wave() -> Clip {
    let span = 2.0;
    let mut ch = vec![
        rotation("Head", span, |t| {
            Quat::from_rotation_z(0.08 + 0.02 * (PI * t).sin())
        }),
        rotation("Chest", span, |t| {
            Quat::from_rotation_y(-0.05 + 0.02 * (PI * t).sin())
        }),
    ];
    // The left arm down, the right raised with the forearm up, waving about the elbow at 1.5 Hz.
    ch.push(rotation("LeftUpperArm", span, |_| {
        arms_down(1.0, 0.0, 0.2).0
    }));
    ch.push(rotation("LeftLowerArm", span, |_| {
        arms_down(1.0, 0.0, 0.2).1
    }));
    ch.push(rotation("RightUpperArm", span, |_| {
        Quat::from_rotation_x(-0.3) * Quat::from_rotation_z(-20f32.to_radians())
    }));
    ch.push(rotation("RightLowerArm", span, |t| {
        Quat::from_rotation_z(-(70f32.to_radians() + 0.45 * (3.0 * PI * t).sin()))
    }));
    Clip {
        name: Some("wave".into()),
        channels: ch,
    }
}
