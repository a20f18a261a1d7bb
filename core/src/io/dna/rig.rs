//! A DNA as a rig mien animates: its behaviour layer as a [`RigLogicSpec`], and a
//! [`Character`] at one LOD carrying its [`RigLogicCharacter`] (the ORL rig backend of seed 000:
//! controls → joints through the skin, channels through the morph blend, on every backend).

use std::sync::Arc;

use super::Dna;
use super::convert::{Units, to_character};
use super::descriptor::{RotationDirection, RotationUnit};
use crate::error::{Error, Result};
use crate::rig::riglogic::{
    ArkitBoardMap, CONTROL_NODE_NAME, ConditionalTableSpec, JointGroupSpec, RigLogic,
    RigLogicCharacter, RigLogicConfig, RigLogicSpec, control_target_names,
};
use crate::rig::{Character, Mesh, MeshId, Node, NodeId};

fn table(t: &super::behavior::ConditionalTable) -> ConditionalTableSpec {
    ConditionalTableSpec {
        input: t.input_indices.clone(),
        output: t.output_indices.clone(),
        from: t.from_values.clone(),
        to: t.to_values.clone(),
        slope: t.slope_values.clone(),
        cut: t.cut_values.clone(),
    }
}

/// The behaviour layer of `dna` as RigLogic's tables (file order and units), with the layers
/// RigLogic would run that mien does not evaluate listed in `not_evaluated`.
///
/// # Errors
/// [`Error::Invalid`] for an unknown rotation sequence code; an output index outside the LODs a
/// subset load kept.
///
/// ```
/// use mien_core::io::dna::{DnaLoad, read_dna_file, riglogic_spec};
/// use mien_core::rig::riglogic::{RigLogic, RigLogicConfig, RigLogicInstance};
/// let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
///     .join("../../shared/data/metahuman_dna/mien_ict_rig.dna");
/// # if !path.exists() { return Ok(()); }
/// let dna = read_dna_file(&path, &DnaLoad::default())?;
/// let rig = RigLogic::new(&riglogic_spec(&dna)?, RigLogicConfig::default())?;
/// let mut s = RigLogicInstance::new(&rig);
/// let gui = &dna.definition.gui_control_names;
/// let mut values = vec![0.0; gui.len()];
/// values[gui.iter().position(|n| n == "CTRL_C_jaw.ty").unwrap()] = 1.0; // open the jaw
/// s.set_gui(&values)?;
/// s.map_gui_to_raw(&rig);
/// s.calculate(&rig);
/// let jaw = dna.definition.joint_names.iter().position(|n| n == "FACIAL_C_Jaw").unwrap();
/// assert!((s.joints()[jaw * 9 + 3] - 24.6).abs() < 1e-4); // rx, degrees (the DNA's unit)
/// let open = dna.definition.blend_shape_channel_names.iter().position(|n| n == "jaw_open").unwrap();
/// assert_eq!(s.blend_shapes()[open], 1.0);
/// # Ok::<(), mien_core::Error>(())
/// ```
pub fn riglogic_spec(dna: &Dna) -> Result<RigLogicSpec> {
    let b = &dna.behavior;
    let d = &dna.descriptor;
    let df = &dna.definition;
    let ext = &dna.extensions;
    let rotation_sequence =
        super::convert::euler_sequence(d.rotation_sequence).ok_or_else(|| Error::Invalid {
            what: format!("{}: descriptor.rotationSequence", dna.file),
            reason: format!("unknown code {:?}", d.rotation_sequence),
        })?;
    let raw = df.raw_control_names.len();
    let psd = usize::from(b.psd_count);
    let ml = ext.machine_learned.ml_control_names.len();
    let rbf = ext.rbf_ext.pose_control_names.len();
    // RigLogic starts quaternion-w controls at 1 (ControlsFactory): raw controls read by RBF
    // solvers or twist/swing whose names end in `.w`/`.qw`, and ML controls so named.
    let is_w = |n: &str| n.ends_with(".w") || n.ends_with(".qw");
    let mut initial = Vec::new();
    let raw_ws = ext
        .rbf
        .solvers
        .iter()
        .flat_map(|s| s.raw_control_indices.iter())
        .chain(
            ext.twist_swing
                .twists
                .iter()
                .chain(&ext.twist_swing.swings)
                .flat_map(|s| s.input_control_indices.iter()),
        );
    for &c in raw_ws {
        if df
            .raw_control_names
            .get(usize::from(c))
            .is_some_and(|n| is_w(n))
            && !initial.contains(&(usize::from(c), 1.0))
        {
            initial.push((usize::from(c), 1.0));
        }
    }
    for (k, n) in ext.machine_learned.ml_control_names.iter().enumerate() {
        if is_w(n) {
            initial.push((raw + psd + k, 1.0));
        }
    }
    let mut not_evaluated = Vec::new();
    if !ext.machine_learned.neural_networks.is_empty() {
        not_evaluated.push(format!(
            "machine-learned behaviour: {} networks, {} ML controls (read, not evaluated: their controls stay at their start value)",
            ext.machine_learned.neural_networks.len(),
            ml
        ));
    }
    if !ext.rbf.solvers.is_empty() {
        not_evaluated.push(format!(
            "RBF behaviour: {} solvers, {} poses (read, not evaluated: pose controls stay 0)",
            ext.rbf.solvers.len(),
            ext.rbf.poses.len()
        ));
    }
    let ts = &ext.twist_swing;
    if !ts.twists.is_empty() || !ts.swings.is_empty() {
        not_evaluated.push(format!(
            "twist/swing behaviour: {} twists, {} swings (read, not evaluated)",
            ts.twists.len(),
            ts.swings.len()
        ));
    }
    // A DNA loaded at a LOD subset keeps the file's numbering in its blend-shape and animated-map
    // outputs (as Epic's reader does; `Dna::lod_filter` lists the kept file indices): RigLogic's
    // tables are renumbered onto the kept channels and maps here.
    let renumber = |outputs: &[u16], kept: Option<&Vec<u16>>, field: &str| -> Result<Vec<u16>> {
        let Some(kept) = kept else {
            return Ok(outputs.to_vec());
        };
        outputs
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                kept.iter()
                    .position(|&k| k == o)
                    .map(|p| p as u16)
                    .ok_or_else(|| {
                        Error::format_at(
                            &dna.file,
                            field,
                            i,
                            format!("output {o} is not among the LODs loaded"),
                        )
                    })
            })
            .collect()
    };
    let filter = dna.lod_filter.as_ref();
    let blend_shape_outputs = renumber(
        &b.blend_shapes.output_indices,
        filter.map(|f| &f.blend_shape_channels),
        "behavior.blendShapeChannels.outputIndices",
    )?;
    let mut animated_maps = table(&b.animated_maps.conditionals);
    animated_maps.output = renumber(
        &animated_maps.output,
        filter.map(|f| &f.animated_maps),
        "behavior.animatedMaps.conditionals.outputIndices",
    )?;
    let n16 = |n: usize, what: &str| {
        u16::try_from(n).map_err(|_| Error::Limit {
            what: format!("{}: {what}", dna.file),
            limit: u64::from(u16::MAX),
            found: n as u64,
        })
    };
    Ok(RigLogicSpec {
        file: dna.file.clone(),
        lod_count: d.lod_count,
        gui_count: n16(df.gui_control_names.len(), "GUI controls")?,
        raw_count: n16(raw, "raw controls")?,
        psd_count: b.psd_count,
        ml_count: n16(ml, "ML controls")?,
        rbf_count: n16(rbf, "RBF pose controls")?,
        gui_to_raw: table(&b.gui_to_raw),
        psd_rows: b.psds.rows.clone(),
        psd_columns: b.psds.columns.clone(),
        psd_values: b.psds.values.clone(),
        joint_count: n16(df.joint_names.len(), "joints")?,
        joint_groups: b
            .joints
            .groups
            .iter()
            .map(|g| JointGroupSpec {
                lods: g.lods.clone(),
                inputs: g.input_indices.clone(),
                outputs: g.output_indices.clone(),
                values: g.values.clone(),
                joints: g.joint_indices.clone(),
            })
            .collect(),
        channel_count: n16(df.blend_shape_channel_names.len(), "blend-shape channels")?,
        blend_shape_lods: b.blend_shapes.lods.clone(),
        blend_shape_inputs: b.blend_shapes.input_indices.clone(),
        blend_shape_outputs,
        map_count: n16(df.animated_map_names.len(), "animated maps")?,
        animated_map_lods: b.animated_maps.lods.clone(),
        animated_maps,
        rotation_sequence,
        rotation_signs: d.rotation_sign.map(|s| {
            if s == RotationDirection::Negative {
                -1.0
            } else {
                1.0
            }
        }),
        rotation_in_degrees: d.rotation_unit == RotationUnit::Degrees,
        initial_controls: initial,
        not_evaluated,
    })
}

/// `dna` at LOD `lod` as an animated character: [`to_character`]'s joints and meshes, plus the
/// control node ([`CONTROL_NODE_NAME`]: targets ARKit-52 then the raw controls) and the
/// [`RigLogicCharacter`] that evaluates the behaviour each frame (Euler output, f32 coefficients).
///
/// # Errors
/// Those of [`to_character`] and [`RigLogic::new`] (every behaviour index out of range, named), and
/// a DNA without a behaviour layer (loaded without it, or with no raw controls).
pub fn dna_character(dna: &Dna, lod: u16) -> Result<Character> {
    if dna.definition.raw_control_names.is_empty() {
        return Err(Error::Invalid {
            what: dna.file.clone(),
            reason: "no raw controls: the DNA was loaded without its definition and behaviour layers, or has none".into(),
        });
    }
    let mut ch = to_character(dna, lod)?;
    let spec = riglogic_spec(dna)?;
    let logic = RigLogic::new(&spec, RigLogicConfig::default())?;
    let units = Units::new(&dna.descriptor)?;
    let raw_names = dna.definition.raw_control_names.clone();

    // Channel → (mesh node, target): the meshes' targets are named by channel.
    let mut channel_targets = vec![Vec::new(); dna.definition.blend_shape_channel_names.len()];
    for (n, node) in ch.nodes.iter().enumerate() {
        let Some(m) = node.mesh.and_then(|m| ch.meshes.get(m.index())) else {
            continue;
        };
        for (t, name) in m.target_names.iter().enumerate() {
            if let Some(c) = dna
                .definition
                .blend_shape_channel_names
                .iter()
                .position(|x| x == name)
            {
                channel_targets[c].push((NodeId(n as u32), t as u32));
            }
        }
    }
    let joint_nodes = (0..dna.definition.joint_names.len() as u32)
        .map(NodeId)
        .collect();

    let names = control_target_names(&raw_names);
    let mesh = MeshId(ch.meshes.len() as u32);
    ch.meshes.push(Mesh {
        name: Some(CONTROL_NODE_NAME.to_string()),
        primitives: Vec::new(),
        default_weights: vec![0.0; names.len()],
        target_names: names,
    });
    let control = NodeId(ch.nodes.len() as u32);
    ch.nodes.push(Node {
        name: Some(CONTROL_NODE_NAME.to_string()),
        mesh: Some(mesh),
        ..Default::default()
    });
    ch.scene_roots.push(control);
    ch.hierarchy = crate::rig::Hierarchy::new(&dna.file, &ch.nodes)?;
    ch.rig_logic = Some(Arc::new(RigLogicCharacter {
        logic: Arc::new(logic),
        lod: usize::from(lod),
        arkit: ArkitBoardMap::new(&raw_names),
        raw_names,
        control_node: control,
        channel_targets,
        joint_nodes,
        units,
    }));
    ch.validate()?;
    Ok(ch)
}
