//! Animations → clips: one channel per glTF channel, its sampler's input (seconds) and output
//! (floats, or normalized integers decoded per §3.11) handed to [`Sampler::new`], which checks key
//! times and counts. A `CUBICSPLINE` output is stored per key as in-tangents, values, out-tangents
//! (for weights: all in-tangents of the key, then all values, then all out-tangents), exactly the
//! layout [`Sampler`] expects, so it is passed through unchanged.
//!
//! Source: glTF 2.0 §3.11 "Animations" and Appendix C; glTF-Validator
//! `ACCESSOR_ANIMATION_SAMPLER_OUTPUT_NON_NORMALIZED_QUATERNION` with its `unitLengthThresholdVec4`
//! (0.00769) tolerance, checked on key values (not on cubic tangents), and
//! `ACCESSOR_ANIMATION_INPUT_NEGATIVE` (an error: key times are seconds from the start of the
//! animation, never before it), checked on the decoded times whatever `accessor.min` says.

use gltf::json;
use json::animation::{Interpolation as JInterp, Property as JProp};
use json::validation::Checked;

use super::Ctx;
use super::accessor::read_f32;
use super::links::UNIT_QUATERNION_TOLERANCE;
use crate::anim::clip::{Channel, Clip, Interpolation, Property, Sampler};
use crate::error::{Error, Result};
use crate::rig::{Mesh, NodeId};

/// Every animation of the file as a clip, in file order.
///
/// # Errors
/// Every channel's problems (collected), each naming the channel or sampler field.
pub(super) fn clips(ctx: &mut Ctx, meshes: &[Mesh]) -> Result<Vec<Clip>> {
    let root = ctx.root;
    let mut out = Vec::with_capacity(root.animations.len());
    let mut problems = Vec::new();
    for (a, anim) in root.animations.iter().enumerate() {
        let mut channels = Vec::with_capacity(anim.channels.len());
        for (c, ch) in anim.channels.iter().enumerate() {
            match channel(ctx, a, c, anim, ch, meshes) {
                Ok(x) => channels.push(x),
                Err(e) => problems.push(e),
            }
        }
        out.push(Clip {
            name: anim.name.clone(),
            channels,
        });
    }
    Error::collect(problems)?;
    Ok(out)
}

fn channel(
    ctx: &mut Ctx,
    a: usize,
    c: usize,
    anim: &json::Animation,
    ch: &json::animation::Channel,
    meshes: &[Mesh],
) -> Result<Channel> {
    let root = ctx.root;
    let field = format!("animations[{a}].channels[{c}]");
    let s = ch.sampler.value();
    let smp = anim.samplers.get(s).ok_or_else(|| {
        ctx.err(
            format!("{field}.sampler"),
            format!("sampler {s} does not exist"),
        )
    })?;
    let node = ch.target.node.value();
    let (property, width) = match ch.target.path {
        Checked::Valid(JProp::Translation) => (Property::Translation, 3),
        Checked::Valid(JProp::Scale) => (Property::Scale, 3),
        Checked::Valid(JProp::Rotation) => (Property::Rotation, 4),
        Checked::Valid(JProp::MorphTargetWeights) => {
            let targets = root
                .nodes
                .get(node)
                .and_then(|n| n.mesh)
                .and_then(|m| meshes.get(m.value()))
                .map_or(0, Mesh::target_count);
            if targets == 0 {
                return Err(ctx.err(
                    format!("{field}.target"),
                    "animates weights of a node whose mesh has no morph targets",
                ));
            }
            (Property::Weights, targets)
        }
        Checked::Invalid => return Err(ctx.err(format!("{field}.target.path"), "invalid path")),
    };
    let interpolation = match smp.interpolation {
        Checked::Valid(JInterp::Linear) => Interpolation::Linear,
        Checked::Valid(JInterp::Step) => Interpolation::Step,
        Checked::Valid(JInterp::CubicSpline) => Interpolation::CubicSpline,
        Checked::Invalid => {
            return Err(ctx.err(
                format!("animations[{a}].samplers[{s}].interpolation"),
                "invalid interpolation",
            ));
        }
    };
    let (_, times) = read_f32(ctx, smp.input.value())?;
    if let Some(k) = times.iter().position(|&t| t < 0.0) {
        return Err(Error::format_at(
            ctx.file,
            format!("animations[{a}].samplers[{s}].input"),
            k,
            format!(
                "key time {} s is negative: animation times count from the start of the animation \
                 (glTF-Validator ACCESSOR_ANIMATION_INPUT_NEGATIVE)",
                times[k]
            ),
        ));
    }
    let (_, values) = read_f32(ctx, smp.output.value())?;
    if property == Property::Rotation {
        let per_key = if interpolation == Interpolation::CubicSpline {
            12
        } else {
            4
        };
        let skip = if interpolation == Interpolation::CubicSpline {
            4
        } else {
            0
        };
        for (k, key) in values.chunks_exact(per_key).enumerate() {
            let q = &key[skip..skip + 4];
            let len = q.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            if (len - 1.0).abs() > f64::from(UNIT_QUATERNION_TOLERANCE) {
                return Err(Error::format_at(
                    ctx.file,
                    format!("{field}.sampler"),
                    k,
                    format!("rotation key {q:?} is not of unit length ({len:.6})"),
                ));
            }
        }
    }
    let sampler = Sampler::new(
        ctx.file,
        &format!("animations[{a}].samplers[{s}]"),
        interpolation,
        times,
        values,
        width,
    )?;
    Ok(Channel {
        node: NodeId(node as u32),
        property,
        sampler,
    })
}
