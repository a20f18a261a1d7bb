//! [`RigLogicInstance`]: one character's control state and outputs, evaluated in RigLogic's order
//! (PSD → joints → blend shapes → animated maps; the rules are in the module docs).

use super::{JointOutput, RigLogic};
use crate::error::{Error, Result};

/// One instance's state: GUI controls `(G,)`, the control vector raw ‖ PSD ‖ ML ‖ RBF `(C,)`, and
/// the outputs of the last [`RigLogicInstance::calculate`]: joint deltas `(J·9,)` or `(J·10,)`,
/// blend-shape channel weights `(B,)`, animated-map values `(M,)`.
///
/// Units are the DNA's (its translation unit, its rotation unit); `io::dna` converts them to
/// mien's metres and radians when it poses a character.
#[derive(Clone, Debug)]
pub struct RigLogicInstance {
    lod: usize,
    gui: Vec<f32>,
    controls: Vec<f32>,
    clamped: Vec<f32>,
    joints: Vec<f32>,
    channels: Vec<f32>,
    maps: Vec<f32>,
}

impl RigLogicInstance {
    /// A fresh instance at LOD 0: every control 0 (quaternion-`w` controls 1), outputs 0.
    pub fn new(rig: &RigLogic) -> Self {
        let mut controls = vec![0.0; rig.control_count];
        for &(c, v) in &rig.initial_controls {
            controls[c] = v;
        }
        let attrs = rig.config.output.attributes();
        let mut s = RigLogicInstance {
            lod: 0,
            gui: vec![0.0; rig.gui_count],
            controls,
            clamped: vec![0.0; rig.control_count],
            joints: vec![0.0; rig.joint_count * attrs],
            channels: vec![0.0; rig.channel_count],
            maps: vec![0.0; rig.map_count],
        };
        s.reset_joints(rig);
        s
    }

    /// Select the LOD the next [`Self::calculate`] evaluates.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `lod ≥ rig.lod_count()`.
    pub fn set_lod(&mut self, rig: &RigLogic, lod: usize) -> Result<()> {
        rig.check_lod(lod)?;
        self.lod = lod;
        Ok(())
    }

    /// The current LOD.
    pub fn lod(&self) -> usize {
        self.lod
    }

    /// GUI control values `(G,)` (unclamped; GUI units, usually −1..1 or 0..1).
    pub fn gui(&self) -> &[f32] {
        &self.gui
    }

    /// Set every GUI control.
    ///
    /// # Errors
    /// [`Error::Mismatch`] on a length other than G; [`Error::Invalid`] on a non-finite value
    /// (named by index).
    pub fn set_gui(&mut self, values: &[f32]) -> Result<()> {
        check_values("GUI controls", values, self.gui.len())?;
        self.gui.copy_from_slice(values);
        Ok(())
    }

    /// Raw controls `(R,)`.
    pub fn raw(&self, rig: &RigLogic) -> &[f32] {
        &self.controls[..rig.raw_count]
    }

    /// Set every raw control (not clamped: rule 2).
    ///
    /// # Errors
    /// [`Error::Mismatch`] on a length other than R; [`Error::Invalid`] on a non-finite value.
    /// Values are not bounded (rule 2): a raw control of 1e38 may overflow a joint output to ∞.
    pub fn set_raw(&mut self, rig: &RigLogic, values: &[f32]) -> Result<()> {
        check_values("raw controls", values, rig.raw_count)?;
        self.controls[..rig.raw_count].copy_from_slice(values);
        Ok(())
    }

    /// PSD control values `(P,)` as last evaluated (stale where the LOD did not consume them).
    pub fn psd(&self, rig: &RigLogic) -> &[f32] {
        &self.controls[rig.raw_count..rig.raw_count + rig.psd_count]
    }

    /// The whole control vector raw ‖ PSD ‖ ML ‖ RBF `(C,)`.
    pub fn controls(&self) -> &[f32] {
        &self.controls
    }

    /// Joint deltas from the neutral pose, `(J, 9)` Euler or `(J, 10)` quaternion per the config.
    pub fn joints(&self) -> &[f32] {
        &self.joints
    }

    /// Blend-shape channel weights `(B,)` (unclamped).
    pub fn blend_shapes(&self) -> &[f32] {
        &self.channels
    }

    /// Animated-map values `(M,)` in [0, 1].
    pub fn animated_maps(&self) -> &[f32] {
        &self.maps
    }

    /// Rule 1: raw controls from the GUI controls (reset, accumulate, clamp to [0, 1]).
    pub fn map_gui_to_raw(&mut self, rig: &RigLogic) {
        let rows = rig.gui_to_raw.input.len();
        rig.gui_to_raw
            .forward(&self.gui, &mut self.controls[..rig.raw_count], rows);
    }

    fn reset_joints(&mut self, rig: &RigLogic) {
        self.joints.fill(0.0);
        if rig.config.output == JointOutput::Quaternion {
            for j in 0..rig.joint_count {
                self.joints[j * 10 + 6] = 1.0;
            }
        }
    }

    /// Evaluate PSDs, joints, blend shapes and animated maps at the current LOD (rules 3–7).
    pub fn calculate(&mut self, rig: &RigLogic) {
        let lod = self.lod;
        // PSD (rule 3): clamp the inputs the LOD's PSDs read, then each PSD in ascending order.
        for &i in &rig.psd_lod_inputs[lod] {
            self.clamped[i as usize] = self.controls[i as usize].clamp(0.0, 1.0);
        }
        for &k in &rig.psd_lod_outputs[lod] {
            let psd = &rig.psds[k as usize - rig.raw_count];
            let mut v = psd.weight;
            for &c in &psd.inputs {
                v *= self.clamped[c as usize];
            }
            self.controls[k as usize] = v.min(1.0);
        }

        // Joints (rule 4): assignment per output row, columns in order.
        self.reset_joints(rig);
        let quat = rig.config.output == JointOutput::Quaternion;
        for g in &rig.joint_groups {
            let cols = g.inputs.len();
            for r in 0..g.lods[lod] as usize {
                let row = &g.values[r * cols..(r + 1) * cols];
                let mut s = 0.0f32;
                for (&w, &c) in row.iter().zip(&g.inputs) {
                    s += w * self.controls[c as usize];
                }
                let out = g.outputs[r] as usize;
                let (j, a) = (out / 9, out % 9);
                let slot = if quat {
                    j * 10 + if a < 6 { a } else { a + 1 }
                } else {
                    out
                };
                self.joints[slot] = s;
            }
        }
        if quat {
            let to_rad = if rig.degrees {
                std::f64::consts::PI / 180.0
            } else {
                1.0
            };
            for &j in &rig.rotated_joints[lod] {
                let b = j as usize * 10 + 3;
                let e = [0, 1, 2].map(|k| f64::from(self.joints[b + k]) * to_rad);
                let q = rig.rotation.quaternion(e, rig.rotation_signs);
                for k in 0..4 {
                    self.joints[b + k] = q[k] as f32;
                }
            }
        }

        // Blend shapes (rule 5).
        self.channels.fill(0.0);
        for i in 0..rig.blend_lods[lod] as usize {
            self.channels[rig.blend_outputs[i] as usize] =
                self.controls[rig.blend_inputs[i] as usize];
        }

        // Animated maps (rule 6).
        let inputs = &self.controls[..rig.raw_count + rig.psd_count];
        rig.maps
            .forward(inputs, &mut self.maps, rig.map_lods[lod] as usize);
    }
}

fn check_values(what: &str, values: &[f32], n: usize) -> Result<()> {
    if values.len() != n {
        return Err(Error::Mismatch {
            what: what.into(),
            expected: n as u64,
            found: values.len() as u64,
        });
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(Error::Invalid {
            what: format!("{what}[{i}]"),
            reason: format!("{} is not finite", values[i]),
        });
    }
    Ok(())
}
