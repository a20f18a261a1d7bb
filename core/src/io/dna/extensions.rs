//! The layers added after 2.2: machine-learned behaviour (`mlbh`, 2.3+), RBF behaviour (`rbfb`,
//! 2.4+) and its extension (`rbfe`, 2.5+), joint-behaviour metadata (`jbmd`, 2.4+), twist/swing
//! behaviour (`twsw`, 2.4+) and the machine-learned behaviour extension (`mlbe`, 2.6+).
//!
//! mien reads them into typed structures so nothing in the file is dropped; it does not evaluate
//! them (a rig that uses them is reported as having behaviour mien does not run). Numeric codes are
//! kept as written; their meanings are listed on each field (OpenRigLogic `include/dna/layers/*.h`).
//!
//! Source: OpenRigLogic `src/dna/DNA.h` (`RawMachineLearnedBehavior`, `RawNeuralNetwork`,
//! `RawMeshRegionMembership`, `RawRBFBehavior`, `RawRBFSolver`, `RawRBFPose`, `RawRBFBehaviorExt`,
//! `RawJointBehaviorMetadata`, `RawTwistSwingBehavior`, `RawMachineLearnedBehaviorExt`) and
//! `DNA::postLoadActions` (the RBF extension a 2.4 file lacks, filled in).

use super::definition::LodMapping;
use super::stream::Cursor;
use crate::error::Result;

/// An activation function of a network layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActivationFunction {
    /// 0 linear, 1 ReLU, 2 leaky ReLU, 3 tanh, 4 sigmoid (`dna::ActivationFunction`).
    pub function_id: u16,
    /// Its parameters (the leaky ReLU's slope, …).
    pub parameters: Vec<f32>,
}

/// One layer of a neural network.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NeuralNetworkLayer {
    /// Biases `(outputs,)`.
    pub biases: Vec<f32>,
    /// Weights, a row-major `(outputs, inputs)` matrix.
    pub weights: Vec<f32>,
    /// Activation.
    pub activation: ActivationFunction,
}

/// One neural network.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NeuralNetwork {
    /// Outputs (control indices).
    pub output_indices: Vec<u16>,
    /// Inputs (control indices).
    pub input_indices: Vec<u16>,
    /// Layers in evaluation order.
    pub layers: Vec<NeuralNetworkLayer>,
}

/// The machine-learned behaviour layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineLearnedBehavior {
    /// ML control names; they follow the raw and PSD controls in the control vector.
    pub ml_control_names: Vec<String>,
    /// Networks of each LOD.
    pub lod_neural_networks: LodMapping,
    /// Region names per mesh `[mesh][region]`.
    pub region_names: Vec<Vec<String>>,
    /// Networks of each region per mesh `[mesh][region][k]`.
    pub region_networks: Vec<Vec<Vec<u16>>>,
    /// The networks.
    pub neural_networks: Vec<NeuralNetwork>,
}

/// One RBF solver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbfSolver {
    /// Name.
    pub name: String,
    /// Raw controls it reads.
    pub raw_control_indices: Vec<u16>,
    /// Its poses (indices into [`RbfBehavior::poses`]).
    pub pose_indices: Vec<u16>,
    /// The poses' target control values, `(poses, raw controls)` row-major.
    pub raw_control_values: Vec<f32>,
    /// Radius.
    pub radius: f32,
    /// Weight threshold.
    pub weight_threshold: f32,
    /// 0 additive, 1 interpolative.
    pub solver_type: u16,
    /// 0 on, 1 off.
    pub automatic_radius: u16,
    /// 0 Euclidean, 1 quaternion, 2 swing angle, 3 twist angle.
    pub distance_method: u16,
    /// 0 only above one, 1 always.
    pub normalize_method: u16,
    /// 0 Gaussian, 1 exponential, 2 linear, 3 cubic, 4 quintic.
    pub function_type: u16,
    /// 0 X, 1 Y, 2 Z.
    pub twist_axis: u16,
}

/// One RBF pose.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbfPose {
    /// Name.
    pub name: String,
    /// Scale.
    pub scale: f32,
}

/// The RBF behaviour layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbfBehavior {
    /// Solvers of each LOD.
    pub lod_solvers: LodMapping,
    /// Solvers.
    pub solvers: Vec<RbfSolver>,
    /// Poses.
    pub poses: Vec<RbfPose>,
}

/// The controls one RBF pose reads and drives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbfPoseExt {
    /// Input controls.
    pub input_control_indices: Vec<u16>,
    /// Output controls.
    pub output_control_indices: Vec<u16>,
    /// Weight of each output.
    pub output_control_weights: Vec<f32>,
}

/// The RBF behaviour extension: pose control names and per-pose controls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbfBehaviorExt {
    /// Pose control names; they follow the raw, PSD and ML controls.
    pub pose_control_names: Vec<String>,
    /// One entry per pose.
    pub poses: Vec<RbfPoseExt>,
}

/// How one joint's attributes are represented in the joint outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JointRepresentation {
    /// 0 vector.
    pub translation: u16,
    /// 0 Euler angles, 1 quaternion.
    pub rotation: u16,
    /// 0 vector.
    pub scale: u16,
}

/// The joint-behaviour metadata layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointBehaviorMetadata {
    /// One per joint.
    pub joint_representations: Vec<JointRepresentation>,
}

/// A twist or swing setup: an input quaternion's twist (or swing) about an axis, blended onto
/// output joints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TwistSwingSetup {
    /// Blend weight of each output joint.
    pub blend_weights: Vec<f32>,
    /// Output joints.
    pub output_joint_indices: Vec<u16>,
    /// Input controls (a quaternion's four components).
    pub input_control_indices: Vec<u16>,
    /// 0 X, 1 Y, 2 Z.
    pub twist_axis: u16,
}

/// The twist/swing behaviour layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TwistSwingBehavior {
    /// Twist setups.
    pub twists: Vec<TwistSwingSetup>,
    /// Swing setups.
    pub swings: Vec<TwistSwingSetup>,
}

/// One ML operation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MlOperation {
    /// Parameters (meaning depends on the type: a gather's indices, an MLP's network, …).
    pub parameters: Vec<u32>,
    /// Operation set of each dependency.
    pub set_dependencies: Vec<u16>,
    /// Operation (within its set) of each dependency.
    pub operation_dependencies: Vec<u16>,
    /// 0 unspecified, 1 gather, 2 scatter, 3 MLP, 4 weighted sum.
    pub operation_type: u16,
}

/// The operations of one ML type, in operation sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MlTypeData {
    /// Operations of each LOD, one mapping per operation set.
    pub lod_operations: Vec<LodMapping>,
    /// Operation sets `[set][operation]`.
    pub operations: Vec<Vec<MlOperation>>,
}

/// The ML joint outputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MlJoints {
    /// Parameter keys (0 translation type, 1 rotation type, 2 scale type, 3–5 axes, 6–8 rotation
    /// signs, 9 rotation sequence).
    pub parameter_keys: Vec<u16>,
    /// Parameter values.
    pub parameter_values: Vec<u16>,
    /// Inputs.
    pub input_indices: Vec<u16>,
    /// Outputs (joint attributes).
    pub output_indices: Vec<u16>,
}

/// The machine-learned behaviour extension layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineLearnedBehaviorExt {
    /// Per ML type.
    pub types: Vec<MlTypeData>,
    /// Joint outputs.
    pub joints: MlJoints,
}

/// Everything past the four core layers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extensions {
    /// `mlbh`.
    pub machine_learned: MachineLearnedBehavior,
    /// `rbfb`.
    pub rbf: RbfBehavior,
    /// `rbfe` (filled in from `rbfb` for a file without it, as OpenRigLogic does).
    pub rbf_ext: RbfBehaviorExt,
    /// `jbmd`.
    pub joint_metadata: JointBehaviorMetadata,
    /// `twsw`.
    pub twist_swing: TwistSwingBehavior,
    /// `mlbe`.
    pub machine_learned_ext: MachineLearnedBehaviorExt,
}

impl Extensions {
    /// Whether any of these layers holds data (a rig whose behaviour mien does not fully run).
    pub fn any(&self) -> bool {
        !self.machine_learned.ml_control_names.is_empty()
            || !self.machine_learned.neural_networks.is_empty()
            || !self.rbf.solvers.is_empty()
            || !self.rbf.poses.is_empty()
            || !self.twist_swing.twists.is_empty()
            || !self.twist_swing.swings.is_empty()
            || !self.machine_learned_ext.types.is_empty()
    }
}

/// The span after a `u32` byte size: returns the end, the content follows.
fn sized(c: &mut Cursor<'_>) -> Result<usize> {
    let at = c.pos();
    let size = c.u32("size")? as usize;
    let stop = c.pos().saturating_add(size);
    if stop > c.end() {
        return Err(c.fail_at(
            "size",
            at,
            format!("{size} bytes reach past byte {}", c.end()),
        ));
    }
    Ok(stop)
}

/// Read `mlbh`.
pub(crate) fn read_ml(c: &mut Cursor<'_>) -> Result<MachineLearnedBehavior> {
    let depth = c.key("machineLearnedBehavior");
    let ml_control_names = c.vec_string("mlControlNames")?;
    let lod_neural_networks = LodMapping::read(c, "lodNeuralNetworkMapping")?;
    let d = c.key("neuralNetworkToMeshRegion");
    let region_names = c.list("regionNames", 4, |c| c.vec_string("names"))?;
    let region_networks = c.list("indices", 4, |c| c.vec_vec_u16("regions"))?;
    c.back(d);
    let neural_networks = c.list("neuralNetworks", 4, |c| {
        let stop = sized(c)?;
        let end = c.end();
        let start = c.pos();
        c.region(start, stop, "")?;
        let net = NeuralNetwork {
            output_indices: c.vec_u16("outputIndices")?,
            input_indices: c.vec_u16("inputIndices")?,
            layers: c.list("layers", 14, |c| {
                Ok(NeuralNetworkLayer {
                    biases: c.vec_f32("biases")?,
                    weights: c.vec_f32("weights")?,
                    activation: ActivationFunction {
                        function_id: c.u16("activationFunction.functionId")?,
                        parameters: c.vec_f32("activationFunction.parameters")?,
                    },
                })
            })?,
        };
        c.region(stop, end, "")?;
        Ok(net)
    })?;
    c.back(depth);
    Ok(MachineLearnedBehavior {
        ml_control_names,
        lod_neural_networks,
        region_names,
        region_networks,
        neural_networks,
    })
}

/// Read `rbfb`.
pub(crate) fn read_rbf(c: &mut Cursor<'_>) -> Result<RbfBehavior> {
    let depth = c.key("rbfBehavior");
    let lod_solvers = LodMapping::read(c, "lodSolverMapping")?;
    let solvers = c.list("solvers", 4, |c| {
        let stop = sized(c)?;
        let end = c.end();
        let start = c.pos();
        c.region(start, stop, "")?;
        let s = RbfSolver {
            name: c.string("name")?,
            raw_control_indices: c.vec_u16("rawControlIndices")?,
            pose_indices: c.vec_u16("poseIndices")?,
            raw_control_values: c.vec_f32("rawControlValues")?,
            radius: c.f32("radius")?,
            weight_threshold: c.f32("weightThreshold")?,
            solver_type: c.u16("solverType")?,
            automatic_radius: c.u16("automaticRadius")?,
            distance_method: c.u16("distanceMethod")?,
            normalize_method: c.u16("normalizeMethod")?,
            function_type: c.u16("functionType")?,
            twist_axis: c.u16("twistAxis")?,
        };
        c.region(stop, end, "")?;
        Ok(s)
    })?;
    let poses = c.list("poses", 8, |c| {
        Ok(RbfPose {
            name: c.string("name")?,
            scale: c.f32("scale")?,
        })
    })?;
    c.back(depth);
    Ok(RbfBehavior {
        lod_solvers,
        solvers,
        poses,
    })
}

/// Read `rbfe`.
pub(crate) fn read_rbf_ext(c: &mut Cursor<'_>) -> Result<RbfBehaviorExt> {
    let depth = c.key("rbfBehaviorExt");
    let pose_control_names = c.vec_string("poseControlNames")?;
    let poses = c.list("poses", 12, |c| {
        Ok(RbfPoseExt {
            input_control_indices: c.vec_u16("inputControlIndices")?,
            output_control_indices: c.vec_u16("outputControlIndices")?,
            output_control_weights: c.vec_f32("outputControlWeights")?,
        })
    })?;
    c.back(depth);
    Ok(RbfBehaviorExt {
        pose_control_names,
        poses,
    })
}

/// Read `jbmd`.
pub(crate) fn read_joint_metadata(c: &mut Cursor<'_>) -> Result<JointBehaviorMetadata> {
    let depth = c.key("jointBehaviorMetadata");
    let joint_representations = c.list("jointRepresentations", 6, |c| {
        Ok(JointRepresentation {
            translation: c.u16("translation")?,
            rotation: c.u16("rotation")?,
            scale: c.u16("scale")?,
        })
    })?;
    c.back(depth);
    Ok(JointBehaviorMetadata {
        joint_representations,
    })
}

fn setup(c: &mut Cursor<'_>, prefix: bool) -> Result<TwistSwingSetup> {
    let (w, o, i) = if prefix {
        (
            "twistBlendWeights",
            "twistOutputJointIndices",
            "twistInputControlIndices",
        )
    } else {
        (
            "swingBlendWeights",
            "swingOutputJointIndices",
            "swingInputControlIndices",
        )
    };
    Ok(TwistSwingSetup {
        blend_weights: c.vec_f32(w)?,
        output_joint_indices: c.vec_u16(o)?,
        input_control_indices: c.vec_u16(i)?,
        twist_axis: c.u16("twistAxis")?,
    })
}

/// Read `twsw`.
pub(crate) fn read_twist_swing(c: &mut Cursor<'_>) -> Result<TwistSwingBehavior> {
    let depth = c.key("twistSwingBehavior");
    let twists = c.list("twists", 14, |c| setup(c, true))?;
    let swings = c.list("swings", 14, |c| setup(c, false))?;
    c.back(depth);
    Ok(TwistSwingBehavior { twists, swings })
}

/// Read `mlbe`.
pub(crate) fn read_ml_ext(c: &mut Cursor<'_>) -> Result<MachineLearnedBehaviorExt> {
    let depth = c.key("machineLearnedBehaviorExt");
    let types = c.list("mlbTypeData", 8, |c| {
        Ok(MlTypeData {
            lod_operations: c.list("lodMLOperationMappings", 8, |c| LodMapping::read(c, ""))?,
            operations: c.list("operations", 4, |c| {
                c.list("set", 14, |c| {
                    Ok(MlOperation {
                        parameters: c.vec_u32("parameters")?,
                        set_dependencies: c.vec_u16("mlOperationSetDependencyIndices")?,
                        operation_dependencies: c.vec_u16("mlOperationDependencyIndices")?,
                        operation_type: c.u16("operationType")?,
                    })
                })
            })?,
        })
    })?;
    let d = c.key("mlbJoints");
    let joints = MlJoints {
        parameter_keys: c.vec_u16("parameterKeys")?,
        parameter_values: c.vec_u16("parameterValues")?,
        input_indices: c.vec_u16("inputIndices")?,
        output_indices: c.vec_u16("outputIndices")?,
    };
    c.back(d);
    c.back(depth);
    Ok(MachineLearnedBehaviorExt { types, joints })
}

/// Fill in the RBF extension of a file that has RBF poses but no `rbfe` (format 2.4), as
/// `DNA::postLoadActions` does: each pose gets a control named after it, driving control
/// `raw + psd + ml + pose` with weight 1 and reading nothing.
pub(crate) fn fill_rbf_ext(ext: &mut Extensions, raw: usize, psd: usize) {
    if !ext.rbf_ext.poses.is_empty() || ext.rbf.poses.is_empty() {
        return;
    }
    let offset = raw + psd + ext.machine_learned.ml_control_names.len();
    ext.rbf_ext.pose_control_names = ext.rbf.poses.iter().map(|p| p.name.clone()).collect();
    ext.rbf_ext.poses = (0..ext.rbf.poses.len())
        .map(|i| RbfPoseExt {
            input_control_indices: Vec::new(),
            output_control_indices: vec![(offset + i) as u16],
            output_control_weights: vec![1.0],
        })
        .collect();
}
