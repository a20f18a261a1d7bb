//! LOD filtering of the later layers (machine-learned behaviour and its extension, RBF, joint
//! metadata, twist/swing): the second half of [`super::lod`].
//!
//! Source: OpenRigLogic `src/dna/stream/FilteredBinaryInputArchive.cpp`
//! (`process(RawMachineLearnedBehavior&)`, `process(RawMachineLearnedBehaviorExt&)`,
//! `process(RawRBFBehavior&)`) and `src/dna/filters/JointFilter.cpp`, `MeshFilter.cpp`.

use std::collections::{BTreeMap, BTreeSet};

use super::Dna;
use super::definition::LodMapping;
use super::extensions::TwistSwingSetup;
use crate::error::{Error, Result};

/// Old → new numbering of the indices in `keep` below `count`.
fn numbering(count: usize, keep: &BTreeSet<u16>) -> BTreeMap<u16, u16> {
    keep.iter()
        .filter(|&&i| usize::from(i) < count)
        .enumerate()
        .map(|(n, &o)| (o, n as u16))
        .collect()
}

fn lookup(map: &BTreeMap<u16, u16>, i: u16, file: &str, field: &str, what: &str) -> Result<u16> {
    map.get(&i).copied().ok_or_else(|| {
        Error::format(
            file,
            field,
            format!("{what} {i} is not kept by the LOD selection (or does not exist)"),
        )
    })
}

/// Discard a mapping's LODs and return the numbering of the elements it still lists.
fn refit(
    m: &mut LodMapping,
    kept: &[u16],
    count: usize,
    file: &str,
    field: &str,
    what: &str,
) -> Result<(BTreeSet<u16>, BTreeMap<u16, u16>)> {
    let mut p = 0usize;
    m.lods.retain(|_| {
        let k = kept.contains(&(p as u16));
        p += 1;
        k
    });
    for idx in (0..m.indices.len()).rev() {
        if !m.lods.iter().any(|&l| usize::from(l) == idx) {
            m.indices.remove(idx);
            for l in &mut m.lods {
                if usize::from(*l) > idx {
                    *l -= 1;
                }
            }
        }
    }
    let passing: BTreeSet<u16> = m.indices.iter().flatten().copied().collect();
    let map = numbering(count, &passing);
    for list in &mut m.indices {
        for i in list.iter_mut() {
            *i = lookup(&map, *i, file, field, what)?;
        }
    }
    Ok((passing, map))
}

fn keep_by_index<T>(v: &mut Vec<T>, keep: impl Fn(u16) -> bool) {
    let mut i = 0u32;
    v.retain(|_| {
        let k = keep(i as u16);
        i += 1;
        k
    });
}

/// Filter the later layers for the kept LODs, meshes and joints.
pub(crate) fn filter_extensions(
    dna: &mut Dna,
    kept: &[u16],
    meshes: &BTreeSet<u16>,
    joints: &BTreeSet<u16>,
    joint_map: &BTreeMap<u16, u16>,
) -> Result<()> {
    let f = dna.file.clone();
    let f = f.as_str();
    let x = &mut dna.extensions;

    let ml = &mut x.machine_learned;
    keep_by_index(&mut ml.region_names, |i| meshes.contains(&i));
    keep_by_index(&mut ml.region_networks, |i| meshes.contains(&i));
    let (nets, net_map) = refit(
        &mut ml.lod_neural_networks,
        kept,
        ml.neural_networks.len(),
        f,
        "machineLearnedBehavior.lodNeuralNetworkMapping",
        "neural network",
    )?;
    for region in ml.region_networks.iter_mut().flatten() {
        region.retain(|n| nets.contains(n));
        for n in region.iter_mut() {
            *n = lookup(
                &net_map,
                *n,
                f,
                "machineLearnedBehavior.neuralNetworkToMeshRegion.indices",
                "neural network",
            )?;
        }
    }
    keep_by_index(&mut ml.neural_networks, |i| nets.contains(&i));

    for (t, ty) in x.machine_learned_ext.types.iter_mut().enumerate() {
        let field = format!("machineLearnedBehaviorExt.mlbTypeData[{t}]");
        if ty.lod_operations.len() != ty.operations.len() {
            return Err(Error::format(
                f,
                &field,
                format!(
                    "{} LOD mappings for {} operation sets",
                    ty.lod_operations.len(),
                    ty.operations.len()
                ),
            ));
        }
        for s in 0..ty.operations.len() {
            let (ops, map) = refit(
                &mut ty.lod_operations[s],
                kept,
                ty.operations[s].len(),
                f,
                &format!("{field}.lodMLOperationMappings[{s}]"),
                "ML operation",
            )?;
            keep_by_index(&mut ty.operations[s], |i| ops.contains(&i));
            for later in ty.operations.iter_mut().skip(s + 1) {
                for op in later.iter_mut() {
                    for (k, dep) in op.operation_dependencies.iter_mut().enumerate() {
                        let set = op.set_dependencies.get(k).copied().ok_or_else(|| {
                            Error::format(
                                f,
                                format!("{field}.operations"),
                                "an operation has more operation dependencies than set dependencies",
                            )
                        })?;
                        if usize::from(set) == s
                            && let Some(&n) = map.get(dep)
                        {
                            *dep = n;
                        }
                    }
                }
            }
        }
    }
    let mj = &mut x.machine_learned_ext.joints;
    let per_joint = super::ml_attributes_per_joint(&mj.parameter_keys, &mj.parameter_values);
    if let Some(step) = std::num::NonZeroU16::new(per_joint) {
        let mut keep_pos = Vec::new();
        let mut outs = Vec::new();
        for (p, &o) in mj.output_indices.iter().enumerate() {
            let j = o / step;
            if joints.contains(&j) {
                keep_pos.push(p);
                let nj = lookup(
                    joint_map,
                    j,
                    f,
                    "machineLearnedBehaviorExt.mlbJoints",
                    "joint",
                )?;
                outs.push(nj.wrapping_mul(per_joint).wrapping_add(o % step));
            }
        }
        mj.output_indices = outs;
        let mut p = 0usize;
        mj.input_indices.retain(|_| {
            let k = keep_pos.contains(&p);
            p += 1;
            k
        });
    }

    let rbf = &mut x.rbf;
    let (solvers, _) = refit(
        &mut rbf.lod_solvers,
        kept,
        rbf.solvers.len(),
        f,
        "rbfBehavior.lodSolverMapping",
        "RBF solver",
    )?;
    keep_by_index(&mut rbf.solvers, |i| solvers.contains(&i));

    let reps = &mut x.joint_metadata.joint_representations;
    let mut kept_reps = Vec::new();
    for (j, r) in reps.iter().enumerate() {
        let j = j as u16;
        if joints.contains(&j) {
            let nj = lookup(joint_map, j, f, "jointBehaviorMetadata", "joint")?;
            kept_reps.push((nj, *r));
        }
    }
    let n = kept_reps.len();
    for (nj, r) in kept_reps {
        if let Some(slot) = reps.get_mut(usize::from(nj)) {
            *slot = r;
        }
    }
    reps.truncate(n);

    let ts = &mut x.twist_swing;
    ts.twists = filter_setups(
        &ts.twists,
        joints,
        joint_map,
        f,
        "twistSwingBehavior.twists",
    )?;
    ts.swings = filter_setups(
        &ts.swings,
        joints,
        joint_map,
        f,
        "twistSwingBehavior.swings",
    )?;
    Ok(())
}

/// Keep each setup's kept output joints (renumbered) and the setups left with one or more.
fn filter_setups(
    setups: &[TwistSwingSetup],
    joints: &BTreeSet<u16>,
    joint_map: &BTreeMap<u16, u16>,
    file: &str,
    field: &str,
) -> Result<Vec<TwistSwingSetup>> {
    let mut out = Vec::new();
    for s in setups {
        let mut t = TwistSwingSetup {
            blend_weights: Vec::new(),
            output_joint_indices: Vec::new(),
            input_control_indices: s.input_control_indices.clone(),
            twist_axis: s.twist_axis,
        };
        for (k, &j) in s.output_joint_indices.iter().enumerate() {
            if joints.contains(&j) {
                t.output_joint_indices
                    .push(lookup(joint_map, j, file, field, "joint")?);
                t.blend_weights
                    .push(s.blend_weights.get(k).copied().unwrap_or(0.0));
            }
        }
        if !t.output_joint_indices.is_empty() {
            out.push(t);
        }
    }
    Ok(out)
}
