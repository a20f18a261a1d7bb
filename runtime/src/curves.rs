//! A take's ARKit-52 curves: instance 0 of a runtime sampled at a fixed rate, each ARKit channel
//! read from the first mesh target the character names after it ([`mien_core::anim::canon`]), and
//! the head and eye angles of an ARKit stream's auxiliary channels — written out by
//! [`mien_core::io::curves`] as a Live Link Face CSV or an Audio2Face JSON.

use mien_core::anim::Drive;
use mien_core::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use mien_core::anim::canon::canonical_name;
use mien_core::io::curves::ArkitCurves;
use mien_core::io::livelink_csv::LIVELINK_AUX_COLUMNS;

use crate::error::{Context, Error, Result};
use crate::runtime::Runtime;

/// What sampling found: the curves and the ARKit channels the character has no target for
/// (written as zeros).
#[derive(Clone, Debug, PartialEq)]
pub struct SampledCurves {
    /// The curves.
    pub curves: ArkitCurves,
    /// ARKit names without a target on the character.
    pub missing: Vec<&'static str>,
}

/// Sample instance 0 of `rt` at `fps` from `start_s`, `frames` frames.
///
/// # Errors
/// A rate or span out of domain; a character with no ARKit-named morph target at all; the
/// runtime's frame errors.
pub fn sample_arkit(
    rt: &mut Runtime,
    fps: f64,
    start_s: f64,
    frames: u32,
) -> Result<SampledCurves> {
    if !(fps.is_finite() && fps > 0.0 && start_s.is_finite() && start_s >= 0.0) || frames == 0 {
        return Err(Error::invalid(
            "ARKit curves",
            format!(
                "{fps} fps from {start_s} s, {frames} frames: a positive rate, a start ≥ 0 s and at least one frame"
            ),
        ));
    }
    let asset = std::sync::Arc::clone(rt.asset());
    let ch = asset.character();
    // (node, target) of each ARKit channel: the first mesh node naming it.
    let mut at: [Option<(usize, usize)>; ARKIT_COUNT] = [None; ARKIT_COUNT];
    for node in ch.mesh_nodes() {
        let Some((_, mesh)) = ch.node_mesh(node) else {
            continue;
        };
        for (t, name) in mesh.target_names.iter().enumerate() {
            if let Some(c) = canonical_name(name)
                && let Some(i) = ARKIT_52.iter().position(|n| *n == c)
                && at[i].is_none()
            {
                at[i] = Some((node.index(), t));
            }
        }
    }
    if at.iter().all(Option::is_none) {
        return Err(Error::invalid(
            asset.source(),
            "has no morph target named after an ARKit-52 channel: there are no ARKit curves to write",
        ));
    }
    let missing = ARKIT_52
        .iter()
        .zip(&at)
        .filter_map(|(n, a)| a.is_none().then_some(*n))
        .collect();
    let mut weights = Vec::with_capacity(frames as usize);
    let mut angles = Vec::with_capacity(frames as usize);
    let mut aux = Vec::new();
    for f in 0..frames {
        let t = start_s + f64::from(f) / fps;
        rt.update(t)
            .with_context(|| format!("sampling ARKit curves at {t} s"))?;
        let inst = rt.instance(0)?;
        let pose = inst.pose();
        weights.push(std::array::from_fn(|i| {
            at[i].map_or(0.0, |(n, k)| pose.weights[n].get(k).copied().unwrap_or(0.0))
        }));
        // An ARKit stream's head and eye angles (radians), by the Live Link column names.
        let mut a = [0.0f32; 9];
        if let Drive::Stream(s) = inst.drive() {
            let stream = s.stream();
            aux.resize(stream.aux_channels.len(), 0.0);
            stream.sample_aux(inst.drive_time(ch, t), &mut aux);
            for (k, name) in LIVELINK_AUX_COLUMNS.iter().enumerate() {
                if let Some(j) = stream
                    .aux_channels
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
                {
                    a[k] = aux[j];
                }
            }
        }
        angles.push(a);
    }
    Ok(SampledCurves {
        curves: ArkitCurves {
            fps,
            weights,
            angles,
        },
        missing,
    })
}
