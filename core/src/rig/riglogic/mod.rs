//! RigLogic: a MetaHuman DNA's behaviour layer evaluated on the CPU — GUI controls → raw controls
//! (piecewise-linear conditional table), PSD correctives (products of clamped inputs), joints
//! (block-sparse joint groups addressed by their output indices), blend-shape channels and animated
//! maps (conditional tables), in RigLogic's order, at a chosen LOD.
//!
//! The tables come from a DNA's behaviour layer ([`RigLogicSpec`], usually built by
//! `io::dna`); [`RigLogic::new`] checks every index once, so evaluation never bounds-fails. One
//! [`RigLogic`] is shared by any number of [`RigLogicInstance`]s (one per character instance).
//!
//! # The rules (source: Epic's OpenRigLogic 13.2.5 — `ConditionalTable`, `PSDNetImpl`,
//! `BlendShapesImpl`, `AnimatedMapsFactory`, the BPCM joint builder; restated and confirmed case by
//! case in `../shared/data/metahuman_dna/mien_ict_rig_README.md`, "Rules a reimplementation must
//! reproduce")
//!
//! 1. **GUI → raw** ([`RigLogicInstance::map_gui_to_raw`]): every raw control is reset to 0; each
//!    row in file order whose GUI input g lies in `[from, to]` (ends inclusive, swapped when
//!    `from > to`) adds `slope·g + cut` to its raw output, and within a *run* of consecutive rows
//!    with the same (input, output) pair only the first matching row counts; then every raw control
//!    is clamped to `[0, 1]`. A GUI value outside all of its rows' intervals contributes 0. GUI values
//!    are never clamped.
//! 2. **Raw controls set directly are not clamped** (joints and blend shapes see 1.5 as 1.5).
//! 3. **PSD** k = `min(1, Π wᵢ · Π clamp₀₁(inputᵢ))`, the weights multiplied first in row order, then
//!    the clamped inputs in row order (f32). A PSD is evaluated only when something at the current
//!    LOD consumes it; otherwise its slot keeps its previous value (0 in a fresh instance).
//! 4. **Joints**: outputs reset to 0; for each joint group, each of its first `lods[lod]` rows is
//!    *assigned* `Σ_c coeff[row][c] · input[inputs[c]]` at `outputs[row]` (joint × 9 + attribute,
//!    attributes `tx ty tz rx ry rz sx sy sz`), the input vector being raw ‖ PSD ‖ ML ‖ RBF controls.
//!    Translations in the DNA's translation unit, rotations in its rotation unit, scale as a delta
//!    from 1 — all deltas from the neutral pose in the joint's parent space.
//! 5. **Blend-shape channels**: outputs reset to 0; `out[outputs[i]] = input[inputs[i]]` for the
//!    first `lods[lod]` entries, unclamped.
//! 6. **Animated maps**: rule 1's conditional table over the first `lods[lod]` rows, inputs raw ‖
//!    PSD, outputs reset to 0 and clamped to `[0, 1]`.
//! 7. **LODs**: behaviour LOD counts are prefix lengths.
//!
//! RBF solvers, ML networks and twist/swing are **not evaluated** here: a spec that has them says so
//! in [`RigLogicSpec::not_evaluated`] and the caller reports it (`mien inspect`); their output slots
//! stay 0 (ML/RBF controls whose names end in `.w`/`.qw` start at 1, as RigLogic initialises them).
//!
//! # Precision
//! RigLogic stores joint coefficients as IEEE binary16 when built with half floats and SIMD
//! ("`default_config`" of the oracle), else as f32. [`JointPrecision`] picks either: `Half` rounds
//! each coefficient to binary16 (round to nearest even) once, at [`RigLogic::new`]. Sums are f32 in
//! column order (RigLogic's SIMD order differs by a few ulp: tests use 1e-5 absolute for joints,
//! 1e-6 for the rest, the tolerances the oracle's README derives).

pub mod arkit;
pub mod character;
mod eval;
mod spec;

pub use arkit::{ArkitBoardMap, ArkitBoardTerm, ArkitReach};
pub use character::{CONTROL_NODE_NAME, RigLogicCharacter, RigLogicStats, control_target_names};
pub use eval::RigLogicInstance;
pub use spec::{ConditionalTableSpec, JointGroupSpec, RigLogicSpec, RotationSequence};

use crate::error::{Error, Result};

/// How joint coefficients are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JointPrecision {
    /// f32, as the DNA stores them (RigLogic `FloatingPointType::Float`).
    #[default]
    Float,
    /// Rounded once to IEEE binary16, round-to-nearest-even (RigLogic `HalfFloat`; its default
    /// configuration on SIMD builds). Relative error per coefficient ≤ 2⁻¹¹.
    Half,
}

/// How joint outputs are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JointOutput {
    /// 9 floats per joint: `[tx, ty, tz, rx, ry, rz, sx, sy, sz]`, rotations in the DNA's unit.
    #[default]
    Euler,
    /// 10 floats per joint: `[tx, ty, tz, qx, qy, qz, qw, sx, sy, sz]`; the delta quaternion is
    /// built from the linearly combined Euler delta in the DNA's rotation sequence; joints with no
    /// rotation row at the LOD stay `(0, 0, 0, 1)`.
    Quaternion,
}

impl JointOutput {
    /// Floats per joint (9 or 10).
    pub fn attributes(self) -> usize {
        match self {
            JointOutput::Euler => 9,
            JointOutput::Quaternion => 10,
        }
    }
}

/// Evaluation options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RigLogicConfig {
    /// Joint coefficient storage.
    pub precision: JointPrecision,
    /// Joint output layout.
    pub output: JointOutput,
}

/// A conditional table compiled for evaluation (rule 1): `from ≤ to` and the run-skip counts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conditionals {
    pub input: Vec<u16>,
    pub output: Vec<u16>,
    pub from: Vec<f32>,
    pub to: Vec<f32>,
    pub slope: Vec<f32>,
    pub cut: Vec<f32>,
    /// For row r: how many rows after r belong to the same run of equal (input, output) pairs.
    pub run_rest: Vec<u16>,
}

impl Conditionals {
    fn compile(t: &ConditionalTableSpec) -> Self {
        let n = t.input.len();
        let mut from = t.from.clone();
        let mut to = t.to.clone();
        for i in 0..n {
            if from[i] > to[i] {
                std::mem::swap(&mut from[i], &mut to[i]);
            }
        }
        let mut run_rest = vec![0u16; n];
        let mut i = 0;
        while i < n {
            let mut j = i + 1;
            while j < n && t.input[j] == t.input[i] && t.output[j] == t.output[i] {
                j += 1;
            }
            for (k, r) in run_rest[i..j].iter_mut().enumerate() {
                *r = (j - i - 1 - k) as u16;
            }
            i = j;
        }
        Conditionals {
            input: t.input.clone(),
            output: t.output.clone(),
            from,
            to,
            slope: t.slope.clone(),
            cut: t.cut.clone(),
            run_rest,
        }
    }

    /// Rule 1 over the first `rows` rows: `out` reset to 0, accumulated, clamped to [0, 1].
    pub fn forward(&self, inputs: &[f32], out: &mut [f32], rows: usize) {
        out.fill(0.0);
        let mut r = 0;
        while r < rows {
            let v = inputs[self.input[r] as usize];
            if self.from[r] <= v && v <= self.to[r] {
                out[self.output[r] as usize] += self.slope[r] * v + self.cut[r];
                r += self.run_rest[r] as usize;
            }
            r += 1;
        }
        for o in out.iter_mut() {
            *o = o.clamp(0.0, 1.0);
        }
    }
}

/// One PSD compiled: its weight product and its input columns.
#[derive(Clone, Debug, Default)]
pub(crate) struct Psd {
    pub weight: f32,
    pub inputs: Vec<u16>,
}

/// A joint group compiled: rows × columns of coefficients (row-major), LOD prefix lengths.
#[derive(Clone, Debug, Default)]
pub(crate) struct JointGroup {
    pub lods: Vec<u16>,
    pub inputs: Vec<u16>,
    pub outputs: Vec<u16>,
    pub values: Vec<f32>,
}

/// A DNA's behaviour layer, checked and compiled for evaluation; shared by its instances.
#[derive(Clone, Debug)]
pub struct RigLogic {
    pub(crate) config: RigLogicConfig,
    pub(crate) gui_count: usize,
    pub(crate) raw_count: usize,
    pub(crate) psd_count: usize,
    pub(crate) control_count: usize,
    pub(crate) joint_count: usize,
    pub(crate) channel_count: usize,
    pub(crate) map_count: usize,
    pub(crate) lod_count: usize,
    pub(crate) gui_to_raw: Conditionals,
    pub(crate) psds: Vec<Psd>,
    /// Per LOD: the PSDs consumed (ascending control indices) and the inputs they read (sorted, unique).
    pub(crate) psd_lod_outputs: Vec<Vec<u16>>,
    pub(crate) psd_lod_inputs: Vec<Vec<u16>>,
    pub(crate) joint_groups: Vec<JointGroup>,
    /// Per LOD: the joints with a rotation row among the LOD's rows (quaternion conversion).
    pub(crate) rotated_joints: Vec<Vec<u16>>,
    pub(crate) blend_lods: Vec<u16>,
    pub(crate) blend_inputs: Vec<u16>,
    pub(crate) blend_outputs: Vec<u16>,
    pub(crate) map_lods: Vec<u16>,
    pub(crate) maps: Conditionals,
    pub(crate) rotation: RotationSequence,
    pub(crate) rotation_signs: [f32; 3],
    pub(crate) degrees: bool,
    pub(crate) initial_controls: Vec<(usize, f32)>,
    pub(crate) not_evaluated: Vec<String>,
}

impl RigLogic {
    /// Check `spec` and compile it.
    ///
    /// # Errors
    /// [`Error::Many`] with every index out of range (GUI→raw inputs ≥ GUI count or outputs ≥ raw
    /// count, PSD rows outside `[raw, raw + psd)`, PSD columns ≥ control count, joint-group output
    /// rows ≥ joints × 9, inputs ≥ control count, value counts ≠ rows × columns, LOD prefixes longer
    /// than their lists or not one per LOD, blend-shape and animated-map indices), each an
    /// [`Error::Format`] naming `spec.file`, the field and the element.
    pub fn new(spec: &RigLogicSpec, config: RigLogicConfig) -> Result<Self> {
        spec.validate()?;
        let raw = spec.raw_count as usize;
        let psd_count = spec.psd_count as usize;
        let control_count = spec.control_count();
        let lod_count = spec.lod_count as usize;

        // PSDs: weight product and columns per PSD, in row order (PSDNetFactory's grouping: all
        // entries of a PSD row, wherever they appear, gathered at its first appearance).
        let mut psds = vec![
            Psd {
                weight: 1.0,
                inputs: Vec::new()
            };
            psd_count
        ];
        let mut seen = vec![false; psd_count];
        for (start, &row) in spec.psd_rows.iter().enumerate() {
            let k = row as usize - raw;
            if seen[k] {
                continue;
            }
            seen[k] = true;
            for i in start..spec.psd_rows.len() {
                if spec.psd_rows[i] == row {
                    psds[k].inputs.push(spec.psd_columns[i]);
                    psds[k].weight *= spec.psd_values[i];
                }
            }
        }

        let joint_groups: Vec<JointGroup> = spec
            .joint_groups
            .iter()
            .map(|g| JointGroup {
                lods: g.lods.clone(),
                inputs: g.inputs.clone(),
                outputs: g.outputs.clone(),
                values: match config.precision {
                    JointPrecision::Float => g.values.clone(),
                    JointPrecision::Half => g
                        .values
                        .iter()
                        .map(|&v| half::f16::from_f32(v).to_f32())
                        .collect(),
                },
            })
            .collect();

        // What each LOD consumes (rule 3): joint columns with a non-zero coefficient in the LOD's
        // rows, blend-shape inputs and animated-map inputs within the LOD's prefix.
        let mut consumed = vec![vec![false; control_count]; lod_count];
        let mut rotated_joints = vec![Vec::new(); lod_count];
        for (lod, used) in consumed.iter_mut().enumerate() {
            let mut rotated = vec![false; spec.joint_count as usize];
            for g in &spec.joint_groups {
                let cols = g.inputs.len();
                for r in 0..g.lods[lod] as usize {
                    let out = g.outputs[r] as usize;
                    if (3..6).contains(&(out % 9)) {
                        rotated[out / 9] = true;
                    }
                    for (c, &input) in g.inputs.iter().enumerate() {
                        if g.values[r * cols + c] != 0.0 {
                            used[input as usize] = true;
                        }
                    }
                }
            }
            rotated_joints[lod] = (0..rotated.len() as u16)
                .filter(|&j| rotated[j as usize])
                .collect();
            for &i in &spec.blend_shape_inputs[..spec.blend_shape_lods[lod] as usize] {
                used[i as usize] = true;
            }
            for &i in &spec.animated_maps.input[..spec.animated_map_lods[lod] as usize] {
                used[i as usize] = true;
            }
        }
        let mut psd_lod_outputs = vec![Vec::new(); lod_count];
        let mut psd_lod_inputs = vec![Vec::new(); lod_count];
        for lod in 0..lod_count {
            let mut inputs = Vec::new();
            for k in 0..psd_count {
                if consumed[lod][raw + k] && !psds[k].inputs.is_empty() {
                    psd_lod_outputs[lod].push((raw + k) as u16);
                    inputs.extend_from_slice(&psds[k].inputs);
                }
            }
            inputs.sort_unstable();
            inputs.dedup();
            psd_lod_inputs[lod] = inputs;
        }

        let (rotation, rotation_signs, degrees) = (
            spec.rotation_sequence,
            spec.rotation_signs,
            spec.rotation_in_degrees,
        );
        Ok(RigLogic {
            config,
            gui_count: spec.gui_count as usize,
            raw_count: raw,
            psd_count,
            control_count,
            joint_count: spec.joint_count as usize,
            channel_count: spec.channel_count as usize,
            map_count: spec.map_count as usize,
            lod_count,
            gui_to_raw: Conditionals::compile(&spec.gui_to_raw),
            psds,
            psd_lod_outputs,
            psd_lod_inputs,
            joint_groups,
            rotated_joints,
            blend_lods: spec.blend_shape_lods.clone(),
            blend_inputs: spec.blend_shape_inputs.clone(),
            blend_outputs: spec.blend_shape_outputs.clone(),
            map_lods: spec.animated_map_lods.clone(),
            maps: Conditionals::compile(&spec.animated_maps),
            rotation,
            rotation_signs,
            degrees,
            initial_controls: spec.initial_controls.clone(),
            not_evaluated: spec.not_evaluated.clone(),
        })
    }

    /// The configuration it was compiled with.
    pub fn config(&self) -> RigLogicConfig {
        self.config
    }

    /// LOD count.
    pub fn lod_count(&self) -> usize {
        self.lod_count
    }

    /// GUI control count.
    pub fn gui_count(&self) -> usize {
        self.gui_count
    }

    /// Raw control count.
    pub fn raw_count(&self) -> usize {
        self.raw_count
    }

    /// PSD control count.
    pub fn psd_count(&self) -> usize {
        self.psd_count
    }

    /// Joint count (joint outputs are `joint_count × config.output.attributes()` floats).
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Blend-shape channel count.
    pub fn channel_count(&self) -> usize {
        self.channel_count
    }

    /// Animated map count.
    pub fn map_count(&self) -> usize {
        self.map_count
    }

    /// The blend-shape channels that exist at `lod`, in mapping order (RigLogic
    /// `getBlendShapeChannelIndicesForLOD`).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `lod ≥ lod_count()`.
    pub fn channels_at_lod(&self, lod: usize) -> Result<&[u16]> {
        self.check_lod(lod)?;
        Ok(&self.blend_outputs[..self.blend_lods[lod] as usize])
    }

    /// The layers present in the DNA but not evaluated (RBF solvers, ML networks, twist/swing),
    /// one line each, for the caller's report.
    pub fn not_evaluated(&self) -> &[String] {
        &self.not_evaluated
    }

    pub(crate) fn check_lod(&self, lod: usize) -> Result<()> {
        if lod >= self.lod_count {
            return Err(Error::Invalid {
                what: "RigLogic LOD".into(),
                reason: format!("LOD {lod} requested, the rig has {} LODs", self.lod_count),
            });
        }
        Ok(())
    }
}
