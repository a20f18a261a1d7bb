//! ARKit-52 → head_ext: a table of signed gains per ARKit channel into `(region, coefficient)`,
//! resolved once against a pack's layout to absolute slots, so the per-frame map is a loop over a
//! flat array that allocates nothing. Gaze comes from the `eyeLook*` channels at
//! [`GAZE_RADIANS_PER_UNIT`].
//!
//! Source: seed 000 (`ArkitGnmTerm`, `createArkitToGnmMap`: terms outside the layout are dropped at
//! build time and reported, never clamped into a neighbour; every coefficient clamped, default 4;
//! `EyeLookUp/Down/In/Out` → the four gaze angles). Angle conventions: DESIGN.md (pitch > 0 looks
//! down, yaw > 0 toward the character's left).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::layout::HeadExtLayout;
use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT, arkit_index};
use crate::error::{Error, Result};

/// Gaze radians per unit of `eyeLook*` weight: 20°.
pub const GAZE_RADIANS_PER_UNIT: f32 = 20.0 * std::f32::consts::PI / 180.0;

/// The default clamp on every produced coefficient.
pub const DEFAULT_CLAMP: f32 = 4.0;

/// Canonical indices of `eyeLookDownLeft, eyeLookUpLeft, eyeLookOutLeft, eyeLookInLeft,
/// eyeLookDownRight, eyeLookUpRight, eyeLookInRight, eyeLookOutRight` (ARKit-52 order, DESIGN.md).
pub(crate) const GAZE_CHANNELS: [usize; 8] = [1, 4, 3, 2, 8, 11, 9, 10];

/// One coefficient an ARKit channel drives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArkitGnmTerm {
    /// head_ext region name.
    pub region: String,
    /// Coefficient index within that region.
    pub index: usize,
    /// Coefficient units per unit of ARKit weight; signed.
    pub gain: f32,
}

/// ARKit-52 channel name (canonical camelCase) → the coefficients it drives. A `BTreeMap`, so it
/// serialises in a stable order.
pub type ArkitGnmTable = BTreeMap<String, Vec<ArkitGnmTerm>>;

/// A table resolved against one layout.
#[derive(Clone, Debug, PartialEq)]
pub struct ArkitGnmMap {
    /// The head_ext length it fills (E + 4).
    pub dim: usize,
    /// `(arkit channel, absolute slot, gain)`, in table order.
    terms: Vec<(u8, u32, f32)>,
    /// Clamp on every produced coefficient, ±.
    pub clamp: f32,
    /// Whether the gaze angles are filled from `eyeLook*`.
    pub gaze: bool,
    /// Terms discarded at build time, each with its reason.
    pub dropped: Vec<String>,
}

impl ArkitGnmMap {
    /// Resolve `table` against `layout`. Terms naming a region the layout lacks or an index past
    /// its region are dropped and listed in `dropped`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a channel that is not ARKit-52, a non-finite gain, or a clamp that is
    /// not positive and finite.
    pub fn build(
        layout: &HeadExtLayout,
        table: &ArkitGnmTable,
        clamp: f32,
        gaze: bool,
    ) -> Result<Self> {
        if !(clamp.is_finite() && clamp > 0.0) {
            return Err(Error::Invalid {
                what: "ARKit→GNM clamp".into(),
                reason: format!("{clamp} is not positive and finite"),
            });
        }
        let slices = layout.slices();
        let mut terms = Vec::new();
        let mut dropped = Vec::new();
        for (channel, list) in table {
            let ch = arkit_index(channel).ok_or_else(|| Error::Invalid {
                what: format!("ARKit→GNM table `{channel}`"),
                reason: "not an ARKit-52 channel".into(),
            })?;
            for (i, t) in list.iter().enumerate() {
                if !t.gain.is_finite() {
                    return Err(Error::Invalid {
                        what: format!("ARKit→GNM table `{channel}`[{i}].gain"),
                        reason: format!("{} is not finite", t.gain),
                    });
                }
                match slices.iter().find(|(n, _)| *n == t.region) {
                    None => dropped.push(format!(
                        "{channel}[{i}]: region `{}` is not in this layout",
                        t.region
                    )),
                    Some((_, r)) if t.index >= r.len() => dropped.push(format!(
                        "{channel}[{i}]: {}[{}] is past the region's {} coefficients",
                        t.region,
                        t.index,
                        r.len()
                    )),
                    Some((_, r)) => terms.push((ch as u8, (r.start + t.index) as u32, t.gain)),
                }
            }
        }
        Ok(ArkitGnmMap {
            dim: layout.dim(),
            terms,
            clamp,
            gaze,
            dropped,
        })
    }

    /// Terms kept.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// Fill `out` (`(dim,)`) from one frame of ARKit-52 weights (canonical order): zero, add
    /// `gain × weight` per term, clamp every coefficient to ±`clamp`, then (when `gaze`) the four
    /// angles `[pitch_L, yaw_L, pitch_R, yaw_R]`: pitch = (down − up) × 20°, yaw_L = (out − in)
    /// × 20°, yaw_R = (in − out) × 20°. Allocates nothing. A wrong `out` length fills only what
    /// fits; callers size it with `dim`. Returns how many coefficients the clamp changed (a
    /// non-finite input weight yields a non-finite coefficient, which the clamp leaves alone and
    /// the backends refuse).
    pub fn map(&self, arkit: &[f32; ARKIT_COUNT], out: &mut [f32]) -> u32 {
        out.fill(0.0);
        for &(ch, slot, gain) in &self.terms {
            if let Some(o) = out.get_mut(slot as usize) {
                *o += gain * arkit[ch as usize];
            }
        }
        let e = self.dim.saturating_sub(4).min(out.len());
        let mut clamped = 0;
        for o in &mut out[..e] {
            if o.abs() > self.clamp {
                *o = o.clamp(-self.clamp, self.clamp);
                clamped += 1;
            }
        }
        if self.gaze && out.len() >= self.dim && self.dim >= 4 {
            let [dl, ul, ol, il, dr, ur, ir, or] = GAZE_CHANNELS.map(|i| arkit[i]);
            let k = GAZE_RADIANS_PER_UNIT;
            out[e] = (dl - ul) * k;
            out[e + 1] = (ol - il) * k;
            out[e + 2] = (dr - ur) * k;
            out[e + 3] = (ir - or) * k;
        }
        clamped
    }
}

/// The name of every ARKit-52 channel a table may use (for messages and docs).
pub fn channels() -> &'static [&'static str; ARKIT_COUNT] {
    &ARKIT_52
}
