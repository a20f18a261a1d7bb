//! The cross-references of the later layers for [`super::Dna::validate`]: ML networks and
//! regions, RBF solvers and poses, joint metadata, twist/swing setups, ML operations.
//!
//! Source: OpenRigLogic `src/dna/DNA.h` (what each index addresses: controls are raw, then PSD,
//! then ML, then RBF pose controls; twist/swing outputs are joints; ML operation dependencies name
//! an operation set and an operation in it).

use super::Dna;

/// Problems found, as `(field, index, reason)`; the caller files them.
pub(crate) type Found = Vec<(String, Option<usize>, String)>;

fn below(out: &mut Found, field: &str, v: &[u16], limit: usize, what: &str) {
    if let Some((i, &x)) = v
        .iter()
        .enumerate()
        .find(|&(_, &x)| usize::from(x) >= limit)
    {
        out.push((
            field.to_string(),
            Some(i),
            format!("{what} {x} does not exist ({limit} of them)"),
        ));
    }
}

/// Check the later layers of `d` against its counts: `controls` = raw + PSD + ML controls,
/// `joints`, `meshes`, `raw`.
pub(crate) fn check(d: &Dna, controls: usize, joints: usize, meshes: usize, raw: usize) -> Found {
    let mut out = Found::new();
    let x = &d.extensions;
    let ml = &x.machine_learned;
    let nets = ml.neural_networks.len();
    if !ml.region_names.is_empty() && ml.region_names.len() != meshes {
        out.push((
            "machineLearnedBehavior.neuralNetworkToMeshRegion.regionNames".into(),
            None,
            format!(
                "{} meshes' regions for {meshes} meshes",
                ml.region_names.len()
            ),
        ));
    }
    for (m, regions) in ml.region_networks.iter().enumerate() {
        for (r, list) in regions.iter().enumerate() {
            let f = format!("machineLearnedBehavior.neuralNetworkToMeshRegion.indices[{m}][{r}]");
            below(&mut out, &f, list, nets, "neural network");
        }
    }
    for (n, net) in ml.neural_networks.iter().enumerate() {
        let f = format!("machineLearnedBehavior.neuralNetworks[{n}]");
        below(
            &mut out,
            &format!("{f}.inputIndices"),
            &net.input_indices,
            controls,
            "control",
        );
        below(
            &mut out,
            &format!("{f}.outputIndices"),
            &net.output_indices,
            controls,
            "control",
        );
    }
    let rbf = &x.rbf;
    let poses = rbf.poses.len();
    for (s, sol) in rbf.solvers.iter().enumerate() {
        let f = format!("rbfBehavior.solvers[{s}]");
        below(
            &mut out,
            &format!("{f}.poseIndices"),
            &sol.pose_indices,
            poses,
            "pose",
        );
        below(
            &mut out,
            &format!("{f}.rawControlIndices"),
            &sol.raw_control_indices,
            raw,
            "raw control",
        );
        let want = sol.pose_indices.len() * sol.raw_control_indices.len();
        if sol.raw_control_values.len() != want {
            out.push((
                format!("{f}.rawControlValues"),
                None,
                format!(
                    "{} values for {} poses × {} raw controls",
                    sol.raw_control_values.len(),
                    sol.pose_indices.len(),
                    sol.raw_control_indices.len()
                ),
            ));
        }
    }
    let ext = &x.rbf_ext;
    if !ext.poses.is_empty() && ext.poses.len() != poses {
        out.push((
            "rbfBehaviorExt.poses".into(),
            None,
            format!("{} for {poses} RBF poses", ext.poses.len()),
        ));
    }
    let all_controls = controls + ext.pose_control_names.len();
    for (p, pose) in ext.poses.iter().enumerate() {
        let f = format!("rbfBehaviorExt.poses[{p}]");
        let (i, o) = (&pose.input_control_indices, &pose.output_control_indices);
        below(
            &mut out,
            &format!("{f}.inputControlIndices"),
            i,
            all_controls,
            "control",
        );
        below(
            &mut out,
            &format!("{f}.outputControlIndices"),
            o,
            all_controls,
            "control",
        );
        if pose.output_control_weights.len() != o.len() {
            out.push((
                format!("{f}.outputControlWeights"),
                None,
                format!(
                    "{} weights for {} outputs",
                    pose.output_control_weights.len(),
                    o.len()
                ),
            ));
        }
    }
    let reps = x.joint_metadata.joint_representations.len();
    if reps != 0 && reps != joints {
        out.push((
            "jointBehaviorMetadata.jointRepresentations".into(),
            None,
            format!("{reps} for {joints} joints"),
        ));
    }
    let ts = &x.twist_swing;
    for (name, setups) in [("twists", &ts.twists), ("swings", &ts.swings)] {
        for (k, s) in setups.iter().enumerate() {
            let f = format!("twistSwingBehavior.{name}[{k}]");
            below(
                &mut out,
                &format!("{f}.outputJointIndices"),
                &s.output_joint_indices,
                joints,
                "joint",
            );
            below(
                &mut out,
                &format!("{f}.inputControlIndices"),
                &s.input_control_indices,
                all_controls,
                "control",
            );
            if s.blend_weights.len() != s.output_joint_indices.len() {
                out.push((
                    format!("{f}.blendWeights"),
                    None,
                    format!(
                        "{} weights for {} joints",
                        s.blend_weights.len(),
                        s.output_joint_indices.len()
                    ),
                ));
            }
        }
    }
    for (t, ty) in x.machine_learned_ext.types.iter().enumerate() {
        let f = format!("machineLearnedBehaviorExt.mlbTypeData[{t}]");
        if ty.lod_operations.len() != ty.operations.len() {
            out.push((
                f.clone(),
                None,
                format!(
                    "{} LOD mappings for {} operation sets",
                    ty.lod_operations.len(),
                    ty.operations.len()
                ),
            ));
        }
        for (s, set) in ty.operations.iter().enumerate() {
            for (o, op) in set.iter().enumerate() {
                let field = format!("{f}.operations[{s}][{o}]");
                if op.set_dependencies.len() != op.operation_dependencies.len() {
                    out.push((
                        field.clone(),
                        None,
                        "set and operation dependencies do not pair up".into(),
                    ));
                }
                for (&ds, &dop) in op.set_dependencies.iter().zip(&op.operation_dependencies) {
                    let ok = ty
                        .operations
                        .get(usize::from(ds))
                        .is_some_and(|dset| usize::from(ds) < s && usize::from(dop) < dset.len());
                    if !ok {
                        out.push((
                            field.clone(),
                            None,
                            format!("depends on operation {dop} of set {ds}, which is not an earlier set's operation"),
                        ));
                    }
                }
            }
        }
    }
    out
}
