//! Bake a take: sample instance 0 of a runtime at `fps` (its drive, speech, face driver, head
//! motion and VRM expressions, exactly as a frame poses it) and append the result to the
//! character's own GLB as one animation ([`mien_core::io::gltf::bake`]), so any glTF engine plays
//! what mien posed.
//!
//! **What is baked.** Per frame, the morph weights mien poses with — after the per-frame rules
//! (clamp ±2, zeroed non-finite, at most [`mien_core::rig::ACTIVE_MORPH_LIMIT`] active targets per
//! mesh: [`mien_core::rig::FrameControls`]) — as a `weights` channel for every mesh node whose
//! weights are not all zero in some frame, and the local translation, rotation and scale of every
//! node that leaves its rest value in some frame (joints the clip or the head motion moves). Keys
//! at every frame, LINEAR, so at the key times an engine's pose equals mien's; rotations are kept
//! in one hemisphere from key to key (the shortest slerp).

use std::sync::Arc;

use glam::Quat;
use mien_core::io::gltf::bake::{BakedAnimation, BakedTrack, TrackPath, append_animation};
use mien_core::rig::{FrameControls, RigControls};

use crate::error::{Context, Error, Result};
use crate::runtime::Runtime;

/// What to sample.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeOptions {
    /// Key rate, frames per second (> 0).
    pub fps: f64,
    /// Media time of the first key, seconds (≥ 0).
    pub start_s: f64,
    /// Keys (≥ 1).
    pub frames: u32,
    /// The glTF animation's name.
    pub name: String,
    /// `animation.extras.mien` — the take's record (JSON object), or `Null`.
    pub record: serde_json::Value,
}

/// What a bake wrote.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BakeReport {
    /// Keys per channel.
    pub keys: u32,
    /// `weights` channels (mesh nodes).
    pub weight_channels: u32,
    /// Translation, rotation and scale channels (nodes).
    pub transform_channels: u32,
    /// Bytes of the baked file.
    pub bytes: u64,
}

/// Sample instance 0 of `rt` and append the take to `source`, the bytes of the character's GLB
/// (the file `rt`'s asset was loaded from).
///
/// # Errors
/// Options out of domain; a linear head (its pack has no glTF to bake into); a `source` that is
/// not the asset's GLB (another node count); the runtime's frame errors; the writer's refusals.
pub fn bake(rt: &mut Runtime, source: &[u8], opts: &BakeOptions) -> Result<(Vec<u8>, BakeReport)> {
    if !(opts.fps.is_finite() && opts.fps > 0.0) {
        return Err(Error::invalid(
            format!("bake fps {}", opts.fps),
            "must be a frame rate above 0",
        ));
    }
    if !(opts.start_s.is_finite() && opts.start_s >= 0.0) || opts.frames == 0 {
        return Err(Error::invalid(
            "bake span",
            format!(
                "start {} s, {} frames: the start must be ≥ 0 s and there must be a frame",
                opts.start_s, opts.frames
            ),
        ));
    }
    let asset = Arc::clone(rt.asset());
    let Some(rig) = asset.rig() else {
        return Err(Error::invalid(
            asset.source(),
            "a linear head pack has no glTF to bake a take into",
        ));
    };
    let ch = asset.character();
    // A VRM's expression control node is mien's own, appended last: not in the file.
    let nodes = ch.nodes.len() - usize::from(ch.vrm.is_some());
    let rest = ch.rest_pose();
    let k = opts.frames as usize;
    let mut times = Vec::with_capacity(k);
    let mut locals = Vec::with_capacity(k);
    let mut weights: Vec<Vec<f32>> = Vec::with_capacity(k);
    let mut fc = FrameControls::new(rig);
    let mut rc = RigControls::default();
    for f in 0..opts.frames {
        let t = opts.start_s + f64::from(f) / opts.fps;
        rt.update(t)
            .with_context(|| format!("baking frame {f} at {t} s"))?;
        let inst = rt.instance(0)?;
        rig.controls_from_pose(inst.pose(), inst.world(), &mut rc);
        fc.set(&rc)?;
        times.push(t as f32);
        locals.push(inst.pose().locals[..nodes].to_vec());
        weights.push(fc.weights.clone());
    }
    let mut tracks = Vec::new();
    let mut report = BakeReport {
        keys: opts.frames,
        ..Default::default()
    };
    for n in 0..nodes {
        let r = &rest.locals[n];
        let moved = |f: &dyn Fn(&mien_core::rig::Transform) -> bool| locals.iter().any(|l| f(&l[n]));
        if moved(&|l| l.translation != r.translation) {
            tracks.push(BakedTrack {
                node: n,
                path: TrackPath::Translation,
                width: 3,
                values: locals.iter().flat_map(|l| l[n].translation.to_array()).collect(),
            });
        }
        if moved(&|l| l.rotation != r.rotation) {
            let mut prev = Quat::IDENTITY;
            let mut values = Vec::with_capacity(4 * k);
            for (i, l) in locals.iter().enumerate() {
                let mut q = l[n].rotation;
                if i > 0 && q.dot(prev) < 0.0 {
                    q = -q;
                }
                prev = q;
                values.extend_from_slice(&q.to_array());
            }
            tracks.push(BakedTrack {
                node: n,
                path: TrackPath::Rotation,
                width: 4,
                values,
            });
        }
        if moved(&|l| l.scale != r.scale) {
            tracks.push(BakedTrack {
                node: n,
                path: TrackPath::Scale,
                width: 3,
                values: locals.iter().flat_map(|l| l[n].scale.to_array()).collect(),
            });
        }
    }
    report.transform_channels = tracks.len() as u32;
    for inst in &rig.instances {
        let n = inst.node.index();
        let (a, b) = (
            inst.weight_base as usize,
            (inst.weight_base + inst.target_count) as usize,
        );
        if n >= nodes || inst.target_count == 0 || weights.iter().all(|w| w[a..b].iter().all(|x| *x == 0.0)) {
            continue;
        }
        tracks.push(BakedTrack {
            node: n,
            path: TrackPath::Weights,
            width: inst.target_count as usize,
            values: weights.iter().flat_map(|w| w[a..b].iter().copied()).collect(),
        });
        report.weight_channels += 1;
    }
    let anim = BakedAnimation {
        name: opts.name.clone(),
        times,
        tracks,
        extras: if opts.record.is_null() {
            serde_json::Value::Null
        } else {
            serde_json::json!({ "mien": opts.record })
        },
    };
    let bytes = append_animation(source, asset.source(), &anim)?;
    report.bytes = bytes.len() as u64;
    Ok((bytes, report))
}
