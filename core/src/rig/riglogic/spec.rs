//! [`RigLogicSpec`]: the behaviour tables RigLogic evaluates, as plain data in the DNA's order and
//! units, and their index checks.

use crate::error::{Error, Result};

/// A DNA rotation sequence (the descriptor's `rotationSequence`, tdm's `rot_seq` order): the
/// letters name the axes in the order their rotations are applied, so `Xyz` is
/// `R = Rz·Ry·Rx` on column vectors and `q = qz ⊗ qy ⊗ qx` (Hamilton).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RotationSequence {
    /// X, then Y, then Z (the DNA default).
    #[default]
    Xyz,
    /// X, Z, Y.
    Xzy,
    /// Y, X, Z.
    Yxz,
    /// Y, Z, X.
    Yzx,
    /// Z, X, Y.
    Zxy,
    /// Z, Y, X.
    Zyx,
}

impl RotationSequence {
    /// From the DNA's stored value (0 = xyz … 5 = zyx); `None` for anything else.
    pub fn from_dna(v: u32) -> Option<Self> {
        use RotationSequence::*;
        [Xyz, Xzy, Yxz, Yzx, Zxy, Zyx].get(v as usize).copied()
    }

    /// The axes (0 = x, 1 = y, 2 = z) in application order.
    pub fn axes(self) -> [usize; 3] {
        match self {
            RotationSequence::Xyz => [0, 1, 2],
            RotationSequence::Xzy => [0, 2, 1],
            RotationSequence::Yxz => [1, 0, 2],
            RotationSequence::Yzx => [1, 2, 0],
            RotationSequence::Zxy => [2, 0, 1],
            RotationSequence::Zyx => [2, 1, 0],
        }
    }

    /// The unit quaternion `[x, y, z, w]` of Euler angles `angles` (radians, per axis x, y, z,
    /// each multiplied by its sign first): `q = q₃ ⊗ q₂ ⊗ q₁` for the axes in application order,
    /// computed in f64 (tdm's `euler_to_quat`, whose closed forms this equals).
    pub fn quaternion(self, angles: [f64; 3], signs: [f32; 3]) -> [f64; 4] {
        let mut q = [0.0, 0.0, 0.0, 1.0];
        for axis in self.axes() {
            let h = 0.5 * angles[axis] * f64::from(signs[axis]);
            let mut a = [0.0, 0.0, 0.0, h.cos()];
            a[axis] = h.sin();
            q = hamilton(a, q);
        }
        q
    }
}

/// Hamilton product `l ⊗ r` of `[x, y, z, w]` quaternions.
fn hamilton(l: [f64; 4], r: [f64; 4]) -> [f64; 4] {
    [
        l[3] * r[0] + l[0] * r[3] + l[1] * r[2] - l[2] * r[1],
        l[3] * r[1] + l[1] * r[3] + l[2] * r[0] - l[0] * r[2],
        l[3] * r[2] + l[2] * r[3] + l[0] * r[1] - l[1] * r[0],
        l[3] * r[3] - l[0] * r[0] - l[1] * r[1] - l[2] * r[2],
    ]
}

/// A conditional table (GUI → raw, animated maps): parallel columns, one entry per row, in file
/// order. A row maps input value g in `[from, to]` to `slope·g + cut` added at its output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConditionalTableSpec {
    /// Input index per row.
    pub input: Vec<u16>,
    /// Output index per row.
    pub output: Vec<u16>,
    /// Interval start per row (input units).
    pub from: Vec<f32>,
    /// Interval end per row.
    pub to: Vec<f32>,
    /// Slope per row.
    pub slope: Vec<f32>,
    /// Offset per row.
    pub cut: Vec<f32>,
}

/// One joint group: a dense block of `outputs.len() × inputs.len()` coefficients.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointGroupSpec {
    /// Rows used at each LOD `(L,)`: prefix lengths of `outputs`.
    pub lods: Vec<u16>,
    /// Input control per column (index into raw ‖ PSD ‖ ML ‖ RBF).
    pub inputs: Vec<u16>,
    /// Output per row: joint × 9 + attribute (`tx ty tz rx ry rz sx sy sz`).
    pub outputs: Vec<u16>,
    /// Coefficients, row-major `(rows, columns)`, per unit of input: DNA translation unit,
    /// rotation unit, or scale.
    pub values: Vec<f32>,
    /// The joints the group drives (informational; RigLogic addresses rows by `outputs`).
    pub joints: Vec<u16>,
}

/// A DNA's behaviour layer as RigLogic needs it, in the file's order and units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RigLogicSpec {
    /// The DNA file, for messages.
    pub file: String,
    /// LOD count: every `lods` list has this many entries.
    pub lod_count: u16,
    /// GUI control count.
    pub gui_count: u16,
    /// Raw control count.
    pub raw_count: u16,
    /// PSD control count (controls `raw_count .. raw_count + psd_count`).
    pub psd_count: u16,
    /// ML control count (after the PSDs; not evaluated).
    pub ml_count: u16,
    /// RBF pose control count (after the ML controls; not evaluated).
    pub rbf_count: u16,
    /// GUI → raw table (inputs GUI controls, outputs raw controls).
    pub gui_to_raw: ConditionalTableSpec,
    /// PSD entry rows (control index in `[raw, raw + psd)`).
    pub psd_rows: Vec<u16>,
    /// PSD entry columns (input control).
    pub psd_columns: Vec<u16>,
    /// PSD entry weights.
    pub psd_values: Vec<f32>,
    /// Joint count.
    pub joint_count: u16,
    /// Joint groups.
    pub joint_groups: Vec<JointGroupSpec>,
    /// Blend-shape channel count.
    pub channel_count: u16,
    /// Blend-shape mapping entries used per LOD `(L,)`.
    pub blend_shape_lods: Vec<u16>,
    /// Blend-shape mapping inputs (control index).
    pub blend_shape_inputs: Vec<u16>,
    /// Blend-shape mapping outputs (channel index).
    pub blend_shape_outputs: Vec<u16>,
    /// Animated map count.
    pub map_count: u16,
    /// Animated-map rows used per LOD `(L,)`.
    pub animated_map_lods: Vec<u16>,
    /// Animated-map table (inputs raw ‖ PSD controls, outputs maps).
    pub animated_maps: ConditionalTableSpec,
    /// The DNA's rotation sequence.
    pub rotation_sequence: RotationSequence,
    /// The DNA's rotation signs (±1 per axis).
    pub rotation_signs: [f32; 3],
    /// Whether rotations are in degrees (else radians).
    pub rotation_in_degrees: bool,
    /// Controls that start at a value other than 0 (`.w`/`.qw` quaternion controls of RBF, ML,
    /// twist/swing inputs: 1), as `(control index, value)`.
    pub initial_controls: Vec<(usize, f32)>,
    /// Layers present but not evaluated, one line each.
    pub not_evaluated: Vec<String>,
}

impl RigLogicSpec {
    /// raw + PSD + ML + RBF.
    pub fn control_count(&self) -> usize {
        self.raw_count as usize
            + self.psd_count as usize
            + self.ml_count as usize
            + self.rbf_count as usize
    }

    /// Every index checked; all problems collected.
    ///
    /// # Errors
    /// [`Error::Many`] of [`Error::Format`]s, one per bad element (see [`super::RigLogic::new`]).
    pub fn validate(&self) -> Result<()> {
        let mut p = Vec::new();
        let file = self.file.as_str();
        let mut bad = |field: String, index: usize, reason: String| {
            p.push(Error::Format {
                file: file.to_string(),
                field,
                index: Some(index),
                reason,
            });
        };
        let lods = self.lod_count as usize;
        let raw = self.raw_count as usize;
        let psd = self.psd_count as usize;
        let controls = self.control_count();

        let table = |name: &str,
                     t: &ConditionalTableSpec,
                     inputs: usize,
                     outputs: usize,
                     bad: &mut dyn FnMut(String, usize, String)| {
            let n = t.input.len();
            for (col, len) in [
                ("outputIndices", t.output.len()),
                ("fromValues", t.from.len()),
                ("toValues", t.to.len()),
                ("slopeValues", t.slope.len()),
                ("cutValues", t.cut.len()),
            ] {
                if len != n {
                    bad(
                        format!("{name}.{col}"),
                        len,
                        format!("{len} entries where inputIndices has {n}"),
                    );
                }
            }
            for (i, &v) in t.input.iter().enumerate() {
                if v as usize >= inputs {
                    bad(
                        format!("{name}.inputIndices"),
                        i,
                        format!("input {v} ≥ {inputs}"),
                    );
                }
            }
            for (i, &v) in t.output.iter().enumerate() {
                if v as usize >= outputs {
                    bad(
                        format!("{name}.outputIndices"),
                        i,
                        format!("output {v} ≥ {outputs}"),
                    );
                }
            }
            for (i, v) in t
                .from
                .iter()
                .chain(&t.to)
                .chain(&t.slope)
                .chain(&t.cut)
                .enumerate()
            {
                if !v.is_finite() {
                    bad(
                        format!("{name}.values"),
                        i % n.max(1),
                        format!("{v} is not finite"),
                    );
                    break;
                }
            }
        };
        table(
            "behavior.controls.conditionals",
            &self.gui_to_raw,
            self.gui_count as usize,
            raw,
            &mut bad,
        );
        table(
            "behavior.animatedMaps.conditionals",
            &self.animated_maps,
            raw + psd,
            self.map_count as usize,
            &mut bad,
        );

        let lod_list =
            |field: &str, l: &[u16], len: usize, bad: &mut dyn FnMut(String, usize, String)| {
                if l.len() != lods {
                    bad(
                        field.to_string(),
                        l.len(),
                        format!("{} LOD entries for {lods} LODs", l.len()),
                    );
                }
                for (i, &c) in l.iter().enumerate() {
                    if c as usize > len {
                        bad(
                            field.to_string(),
                            i,
                            format!("LOD {i} uses {c} rows of {len}"),
                        );
                    }
                }
            };
        lod_list(
            "behavior.animatedMaps.lods",
            &self.animated_map_lods,
            self.animated_maps.input.len(),
            &mut bad,
        );
        lod_list(
            "behavior.blendShapeChannels.lods",
            &self.blend_shape_lods,
            self.blend_shape_inputs.len(),
            &mut bad,
        );

        if self.psd_columns.len() != self.psd_rows.len()
            || self.psd_values.len() != self.psd_rows.len()
        {
            bad(
                "behavior.controls.psds".into(),
                self.psd_rows.len(),
                format!(
                    "{} rows, {} columns, {} values",
                    self.psd_rows.len(),
                    self.psd_columns.len(),
                    self.psd_values.len()
                ),
            );
        } else {
            for (i, (&r, &c)) in self.psd_rows.iter().zip(&self.psd_columns).enumerate() {
                if (r as usize) < raw || r as usize >= raw + psd {
                    bad(
                        "behavior.controls.psdRowIndices".into(),
                        i,
                        format!(
                            "PSD row {r} is outside [{raw}, {}) (the raw controls end at {raw})",
                            raw + psd
                        ),
                    );
                }
                if c as usize >= controls {
                    bad(
                        "behavior.controls.psdColumnIndices".into(),
                        i,
                        format!("input {c} ≥ {controls} controls"),
                    );
                }
            }
            for (i, v) in self.psd_values.iter().enumerate() {
                if !v.is_finite() {
                    bad(
                        "behavior.controls.psdValues".into(),
                        i,
                        format!("{v} is not finite"),
                    );
                }
            }
        }

        let rows = self.joint_count as usize * 9;
        for (g, jg) in self.joint_groups.iter().enumerate() {
            let field = |f: &str| format!("behavior.joints.jointGroups[{g}].{f}");
            lod_list(&field("lods"), &jg.lods, jg.outputs.len(), &mut bad);
            if jg.values.len() != jg.outputs.len() * jg.inputs.len() {
                bad(
                    field("values"),
                    jg.values.len(),
                    format!(
                        "{} values for {} rows × {} columns",
                        jg.values.len(),
                        jg.outputs.len(),
                        jg.inputs.len()
                    ),
                );
            }
            for (i, &o) in jg.outputs.iter().enumerate() {
                if o as usize >= rows {
                    bad(
                        field("outputIndices"),
                        i,
                        format!("output row {o} ≥ {rows} (joints × 9)"),
                    );
                }
            }
            for (i, &c) in jg.inputs.iter().enumerate() {
                if c as usize >= controls {
                    bad(
                        field("inputIndices"),
                        i,
                        format!("input {c} ≥ {controls} controls"),
                    );
                }
            }
            for (i, &j) in jg.joints.iter().enumerate() {
                if j >= self.joint_count {
                    bad(
                        field("jointIndices"),
                        i,
                        format!("joint {j} ≥ {}", self.joint_count),
                    );
                }
            }
            if let Some(i) = jg.values.iter().position(|v| !v.is_finite()) {
                bad(
                    field("values"),
                    i,
                    format!("{} is not finite", jg.values[i]),
                );
            }
        }

        let n = self.blend_shape_inputs.len();
        if self.blend_shape_outputs.len() != n {
            bad(
                "behavior.blendShapeChannels.outputIndices".into(),
                self.blend_shape_outputs.len(),
                format!("{} outputs for {n} inputs", self.blend_shape_outputs.len()),
            );
        }
        for (i, &c) in self.blend_shape_inputs.iter().enumerate() {
            if c as usize >= controls {
                bad(
                    "behavior.blendShapeChannels.inputIndices".into(),
                    i,
                    format!("input {c} ≥ {controls} controls"),
                );
            }
        }
        for (i, &c) in self.blend_shape_outputs.iter().enumerate() {
            if c >= self.channel_count {
                bad(
                    "behavior.blendShapeChannels.outputIndices".into(),
                    i,
                    format!("channel {c} ≥ {}", self.channel_count),
                );
            }
        }
        for (i, &(c, _)) in self.initial_controls.iter().enumerate() {
            if c >= controls {
                bad(
                    "initialControls".into(),
                    i,
                    format!("control {c} ≥ {controls}"),
                );
            }
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(Error::Many(p))
        }
    }
}
