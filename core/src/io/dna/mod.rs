//! A reader for Epic's MetaHuman DNA binary format (formats 2.1–2.8), in safe Rust.
//!
//! [`read_dna`] decodes a file into a typed model in the file's own units, axes and order
//! ([`Dna`]): the descriptor, the definition, the behaviour, the meshes and the later layers
//! (machine-learned behaviour, RBF behaviour and its extension, joint-behaviour metadata,
//! twist/swing, the ML extension, the descriptor extension), as OpenRigLogic's
//! `BinaryStreamReader` (DNA library 10.1.3, RigLogic 13.2.5) returns them, with the same layer
//! and LOD selection ([`DnaLoad`]). [`Dna::validate`] then checks the model's cross-references and
//! reports every problem; [`convert`] turns a validated model into mien's units, axes and types
//! (metres, radians, right-handed +Y up facing +Z; [`crate::rig::Character`]).
//!
//! | format | frame | sections |
//! |---|---|---|
//! | 2.1 | `DNA`, version, 8 section offsets, … , footer `AND` | descriptor, definition, behaviour (4 parts at their own offsets), geometry (each mesh ends at an absolute offset) |
//! | 2.2 | `DNA`, version, index table `{id, layer version, offset, size}` | `desc` `defn` `bhvr` `geom` (each mesh prefixed by its size) |
//! | 2.3 | index table | + `mlbh` |
//! | 2.4 | index table | + `rbfb` `jbmd` `twsw` (the RBF extension is filled in from the poses) |
//! | 2.5 | index table | + `rbfe` |
//! | 2.6 | index table | + `mlbe` |
//! | 2.7 | index table | + `dsce` (rotation sequence and signs) |
//! | 2.8 | index table | `dsce` also holds the face winding |
//!
//! Sections of an unknown id or layer version are skipped (listed in [`FileLayout::Indexed`]); a
//! version above 2.8 is read with the 2.8 rules, as OpenRigLogic does.
//!
//! Every length prefix is checked against the bytes left before anything is allocated, and every
//! failure is an [`crate::Error::Format`] naming the field path
//! (`behavior.joints.jointGroups[2].outputIndices`) and the byte offset. No input panics.
//!
//! Source: OpenRigLogic (MIT) `src/dna/DNA.h`, `src/dna/stream/FilteredBinaryInputArchive.cpp`,
//! `src/dna/filters/*`, `src/dna/LODConstraint.cpp`, `src/dna/LODMapping.cpp`,
//! `src/terse/archives/binary/InputArchive.h`; the facts only, in mien's own code.

pub mod behavior;
mod container;
pub mod convert;
pub mod definition;
pub mod descriptor;
pub mod extensions;
pub mod geometry;
pub mod lod;
mod lod_ext;
pub mod rig;
mod stream;
mod validate;
mod validate_ext;

pub use behavior::{
    AnimatedMaps, Behavior, BlendShapeChannels, ConditionalTable, JOINT_ATTRIBUTES, JointGroup,
    Joints, PsdMatrix,
};
pub use definition::{Definition, LodMapping, MeshChannel};
pub use descriptor::{
    Archetype, CoordinateSystem, Descriptor, Direction, FaceWinding, Gender, MAX_LOD_COUNT,
    RotationDirection, RotationSequence, RotationUnit, TranslationUnit,
};
pub use extensions::Extensions;
pub use geometry::{BlendShapeTarget, DnaMesh, Faces, SkinWeights, VertexLayout};
pub use lod::{LodFilter, LodSelection};
pub use rig::{dna_character, riglogic_spec};

use crate::error::Result;

/// Largest DNA file [`read_dna_file`] reads, bytes (a MetaHuman head with all LODs is about
/// 100 MB).
pub const MAX_DNA_BYTES: u64 = 1 << 30;

/// Which layers to load, as OpenRigLogic's `dna::DataLayer` (each implies the ones it builds on:
/// everything implies the descriptor, everything but the descriptor implies the definition).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DnaLayers {
    /// The descriptor (and the descriptor extension).
    Descriptor,
    /// + the definition.
    Definition,
    /// + the behaviour.
    Behavior,
    /// The definition and the geometry with blend-shape targets.
    Geometry,
    /// The definition and the geometry without blend-shape targets.
    GeometryWithoutBlendShapes,
    /// The definition and the machine-learned behaviour (and its extension).
    MachineLearnedBehavior,
    /// The behaviour and the RBF behaviour (and its extension).
    RbfBehavior,
    /// The definition and the joint-behaviour metadata.
    JointBehaviorMetadata,
    /// The definition and the twist/swing behaviour.
    TwistSwingBehavior,
    /// Everything.
    #[default]
    All,
}

/// What [`read_dna`] loads: the layers and the LODs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnaLoad {
    /// Layers.
    pub layers: DnaLayers,
    /// LODs.
    pub lods: LodSelection,
}

/// The format version from the file's header (`2.8` is generation 2, version 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FormatVersion {
    /// Generation (always 2 for a file this reader accepts).
    pub generation: u16,
    /// Version within the generation.
    pub version: u16,
}

/// One entry of a 2.2+ file's index table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Four-character id (`desc`, `defn`, `bhvr`, `geom`, `mlbh`, `rbfb`, `rbfe`, `jbmd`, `twsw`,
    /// `mlbe`, `dsce`, or one this reader does not know).
    pub id: [u8; 4],
    /// Layer version: major in the high 16 bits, minor in the low.
    pub version: u32,
    /// Byte offset of the section.
    pub offset: u32,
    /// Byte size of the section.
    pub size: u32,
    /// Whether this reader knows the id and layer version (unknown sections are skipped).
    pub known: bool,
}

/// How the file locates its sections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileLayout {
    /// 2.1: byte offsets of the descriptor, definition, behaviour, controls, joints, blend-shape
    /// channels, animated maps and geometry.
    V21 {
        /// The eight offsets in that order.
        offsets: [u32; 8],
    },
    /// 2.2+: the index table in file order.
    Indexed {
        /// The sections.
        sections: Vec<Section>,
    },
}

impl Default for FileLayout {
    fn default() -> Self {
        FileLayout::Indexed {
            sections: Vec::new(),
        }
    }
}

/// A decoded DNA file, in the file's own units (see [`Descriptor::translation_unit`] and
/// [`Descriptor::rotation_unit`]), axes ([`Descriptor::coordinate_system`]) and order. Layers the
/// load did not ask for are empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dna {
    /// Label of the file, for messages.
    pub file: String,
    /// Format version.
    pub version: FormatVersion,
    /// Where the sections were.
    pub layout: FileLayout,
    /// The descriptor (with the descriptor extension's fields).
    pub descriptor: Descriptor,
    /// The definition.
    pub definition: Definition,
    /// The behaviour.
    pub behavior: Behavior,
    /// The meshes of the geometry layer.
    pub meshes: Vec<DnaMesh>,
    /// The later layers.
    pub extensions: Extensions,
    /// What was asked to be loaded.
    pub load: DnaLoad,
    /// What a LOD-filtered load kept (`None` when the selection covers every LOD of the file).
    pub lod_filter: Option<LodFilter>,
}

impl Dna {
    /// The joint attributes (`joint · 9 + attribute`) any behaviour writes at LOD `lod`, sorted
    /// (`getJointVariableAttributeIndices`): every joint group's first `lods[lod]` output rows,
    /// the rotations of every twist and swing output joint (at every LOD, as OpenRigLogic does)
    /// and the ML joint outputs of joints in the LOD.
    pub fn joint_variable_attribute_indices(&self, lod: u16) -> Vec<u16> {
        let mut set = std::collections::BTreeSet::new();
        let ts = &self.extensions.twist_swing;
        for s in ts.twists.iter().chain(&ts.swings) {
            for &j in &s.output_joint_indices {
                for r in 3..6u32 {
                    set.insert((u32::from(j) * 9 + r) as u16);
                }
            }
        }
        let ml = &self.extensions.machine_learned_ext.joints;
        let per_joint = ml_attributes_per_joint(&ml.parameter_keys, &ml.parameter_values);
        if let Some(step) = std::num::NonZeroU16::new(per_joint) {
            let in_lod = self.definition.joint_indices_for_lod(lod);
            for &o in &ml.output_indices {
                let (joint, rel) = (o / step, o % step);
                if rel == 6 {
                    continue;
                }
                let rel = if rel < 6 {
                    i32::from(rel)
                } else {
                    9 - i32::from(per_joint) + i32::from(rel)
                };
                if in_lod.contains(&joint) {
                    set.insert((i32::from(joint) * 9 + rel) as u16);
                }
            }
        }
        for g in &self.behavior.joints.groups {
            let rows = g.lods.get(usize::from(lod)).copied().unwrap_or(0);
            set.extend(g.output_indices.iter().take(usize::from(rows)));
        }
        set.into_iter().collect()
    }
}

/// Attributes per joint of the ML joint outputs (OpenRigLogic's `getNumMLAttributesPerJoint`): 3
/// for a vector translation, 3 for Euler or 4 for quaternion rotations, 3 for a vector scale.
pub(crate) fn ml_attributes_per_joint(keys: &[u16], values: &[u16]) -> u16 {
    let mut n = 0u16;
    for (&k, &v) in keys.iter().zip(values) {
        n = n.saturating_add(match (k, v) {
            (0, 0) | (2, 0) => 3,
            (1, 0) => 3,
            (1, 1) => 4,
            _ => 0,
        });
    }
    n
}

/// Decode a DNA file from its bytes. `file` labels messages.
///
/// # Errors
/// [`crate::Error::Format`] naming the field path and byte offset: a wrong signature, a format
/// generation other than 2 (or version 0), a field cut short, a length prefix larger than the
/// bytes left, a section or mesh reaching past its region or the file, a known section listed
/// twice, a 2.1 footer other than `AND`, more than [`MAX_LOD_COUNT`] LODs, arrays that must pair
/// up of different lengths, and (for a LOD-filtered load) an index the filtering must renumber
/// that does not exist. [`crate::Error::Invalid`] for a LOD selection that names no LOD of the
/// file.
pub fn read_dna(bytes: &[u8], file: &str, opts: &DnaLoad) -> Result<Dna> {
    let mut dna = container::read_frame(bytes, file, opts.layers)?;
    dna.file = file.to_string();
    dna.load = opts.clone();
    lod::apply(&mut dna, &opts.lods)?;
    Ok(dna)
}

/// Read and decode a DNA file (a regular file of at most [`MAX_DNA_BYTES`]).
///
/// # Errors
/// [`crate::Error::Io`] when the file cannot be read, [`crate::Error::Limit`] over the size cap,
/// and those of [`read_dna`].
pub fn read_dna_file(path: &std::path::Path, opts: &DnaLoad) -> Result<Dna> {
    let bytes = super::read::read_file_capped(path, MAX_DNA_BYTES)?;
    read_dna(&bytes, &path.display().to_string(), opts)
}
