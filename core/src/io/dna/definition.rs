//! The definition layer (`defn`): control, joint, channel, map and mesh names, the LOD mappings,
//! the mesh → blend-shape-channel mapping, the joint hierarchy and the neutral joint transforms.
//!
//! Source: OpenRigLogic `src/dna/DNA.h` (`RawDefinition::serialize`, `RawLODMapping`,
//! `RawSurjectiveMapping`, `RawVector3Vector`) and `src/dna/LODMapping.cpp` (`getIndices`).

use super::stream::Cursor;
use crate::error::Result;

/// Which elements (joints, channels, maps, meshes, networks, …) each LOD uses.
///
/// `lods[l]` names the index list of LOD `l`; several LODs may share one list. The lists are in
/// file order and may repeat an index (the animated-map lists of OpenRigLogic's writer do).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LodMapping {
    /// For each LOD, the position of its list in `indices`.
    pub lods: Vec<u16>,
    /// The index lists.
    pub indices: Vec<Vec<u16>>,
}

impl LodMapping {
    /// The indices of LOD `lod` (`LODMapping::getIndices`): empty when the LOD does not exist or
    /// names a list that does not exist.
    pub fn indices_for_lod(&self, lod: u16) -> &[u16] {
        self.lods
            .get(usize::from(lod))
            .and_then(|&l| self.indices.get(usize::from(l)))
            .map_or(&[], Vec::as_slice)
    }

    /// Number of LODs the mapping describes.
    pub fn lod_count(&self) -> usize {
        self.lods.len()
    }

    pub(crate) fn read(c: &mut Cursor<'_>, leaf: &'static str) -> Result<Self> {
        let depth = c.key(leaf);
        let lods = c.vec_u16("lods")?;
        let indices = c.vec_vec_u16("indices")?;
        c.back(depth);
        Ok(LodMapping { lods, indices })
    }
}

/// One entry of the mesh → blend-shape-channel mapping: mesh `mesh` has a target for channel
/// `channel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshChannel {
    /// Mesh index.
    pub mesh: u16,
    /// Blend-shape channel index.
    pub channel: u16,
}

/// The definition: names and structure, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Definition {
    /// Joints of each LOD.
    pub lod_joints: LodMapping,
    /// Blend-shape channels of each LOD.
    pub lod_blend_shape_channels: LodMapping,
    /// Animated maps of each LOD.
    pub lod_animated_maps: LodMapping,
    /// Meshes of each LOD.
    pub lod_meshes: LodMapping,
    /// GUI control names `(G,)`.
    pub gui_control_names: Vec<String>,
    /// Raw control names `(R,)`; the raw controls are inputs `0..R` of the behaviour.
    pub raw_control_names: Vec<String>,
    /// Joint names `(J,)`.
    pub joint_names: Vec<String>,
    /// Blend-shape channel names `(C,)`.
    pub blend_shape_channel_names: Vec<String>,
    /// Animated map names `(A,)`.
    pub animated_map_names: Vec<String>,
    /// Mesh names `(M,)`.
    pub mesh_names: Vec<String>,
    /// Mesh → channel pairs in file order.
    pub mesh_blend_shape_channels: Vec<MeshChannel>,
    /// Parent of each joint `(J,)`; a root is its own parent.
    pub joint_parents: Vec<u16>,
    /// Neutral local translation of each joint `(J,3)`, in the file's translation unit.
    pub neutral_joint_translations: Vec<[f32; 3]>,
    /// Neutral local rotation of each joint `(J,3)`: Euler angles in the file's rotation unit and
    /// rotation sequence.
    pub neutral_joint_rotations: Vec<[f32; 3]>,
}

impl Definition {
    /// The joints of LOD `lod` (`getJointIndicesForLOD`).
    pub fn joint_indices_for_lod(&self, lod: u16) -> &[u16] {
        self.lod_joints.indices_for_lod(lod)
    }

    /// The blend-shape channels of LOD `lod` (`getBlendShapeChannelIndicesForLOD`).
    pub fn blend_shape_channel_indices_for_lod(&self, lod: u16) -> &[u16] {
        self.lod_blend_shape_channels.indices_for_lod(lod)
    }

    /// The animated maps of LOD `lod` (`getAnimatedMapIndicesForLOD`).
    pub fn animated_map_indices_for_lod(&self, lod: u16) -> &[u16] {
        self.lod_animated_maps.indices_for_lod(lod)
    }

    /// The meshes of LOD `lod` (`getMeshIndicesForLOD`).
    pub fn mesh_indices_for_lod(&self, lod: u16) -> &[u16] {
        self.lod_meshes.indices_for_lod(lod)
    }

    /// Positions in [`Definition::mesh_blend_shape_channels`] whose mesh and channel both belong
    /// to LOD `lod` (`getMeshBlendShapeChannelMappingIndicesForLOD`).
    pub fn mesh_blend_shape_mapping_indices_for_lod(&self, lod: u16) -> Vec<u16> {
        let meshes = self.mesh_indices_for_lod(lod);
        let channels = self.blend_shape_channel_indices_for_lod(lod);
        self.mesh_blend_shape_channels
            .iter()
            .enumerate()
            .filter(|(_, m)| meshes.contains(&m.mesh) && channels.contains(&m.channel))
            .map(|(i, _)| i as u16)
            .collect()
    }
}

/// Read the definition (`RawDefinition::serialize`).
///
/// # Errors
/// A field cut short, a length prefix past the region, the two halves of the mesh → channel
/// mapping or the `xs`/`ys`/`zs` of a neutral transform of different lengths.
pub(crate) fn read_definition(c: &mut Cursor<'_>) -> Result<Definition> {
    let depth = c.key("definition");
    let lod_joints = LodMapping::read(c, "lodJointMapping")?;
    let lod_blend_shape_channels = LodMapping::read(c, "lodBlendShapeMapping")?;
    let lod_animated_maps = LodMapping::read(c, "lodAnimatedMapMapping")?;
    let lod_meshes = LodMapping::read(c, "lodMeshMapping")?;
    let gui_control_names = c.vec_string("guiControlNames")?;
    let raw_control_names = c.vec_string("rawControlNames")?;
    let joint_names = c.vec_string("jointNames")?;
    let blend_shape_channel_names = c.vec_string("blendShapeChannelNames")?;
    let animated_map_names = c.vec_string("animatedMapNames")?;
    let mesh_names = c.vec_string("meshNames")?;
    let m = c.key("meshBlendShapeChannelMapping");
    let at = c.pos();
    let from = c.vec_u16("from")?;
    let to = c.vec_u16("to")?;
    if from.len() != to.len() {
        return Err(c.fail_at(
            "",
            at,
            format!(
                "{} mesh indices for {} channel indices; they must pair up",
                from.len(),
                to.len()
            ),
        ));
    }
    c.back(m);
    let mesh_blend_shape_channels = from
        .into_iter()
        .zip(to)
        .map(|(mesh, channel)| MeshChannel { mesh, channel })
        .collect();
    let joint_parents = c.vec_u16("jointHierarchy")?;
    let neutral_joint_translations = c.vec3s("neutralJointTranslations")?;
    let neutral_joint_rotations = c.vec3s("neutralJointRotations")?;
    c.back(depth);
    Ok(Definition {
        lod_joints,
        lod_blend_shape_channels,
        lod_animated_maps,
        lod_meshes,
        gui_control_names,
        raw_control_names,
        joint_names,
        blend_shape_channel_names,
        animated_map_names,
        mesh_names,
        mesh_blend_shape_channels,
        joint_parents,
        neutral_joint_translations,
        neutral_joint_rotations,
    })
}
