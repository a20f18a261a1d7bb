//! From a DNA's units and axes to mien's: metres, radians, right-handed, +Y up, the character
//! facing +Z (glTF 2.0 §3.4), and from its layers to mien's types ([`crate::rig::Character`]: joint
//! nodes, one skinned mesh per DNA mesh of a LOD, sparse morph targets, a skin).
//!
//! **Axes.** Each DNA axis label is read as a direction of mien's frame: `Right` = +X, `Left` =
//! −X, `Up` = +Y, `Down` = −Y, `Front` = +Z (the way the character faces), `Back` = −Z — the
//! reading under which the ICT rig (`{x: right, y: up, z: front}`, documented as right-handed, Y
//! up, facing +z, its left on +x) lands on mien's axes unchanged. A system whose three labels are
//! not three different axes is refused, and so is a mirrored one (determinant −1, such as
//! `{x: left, y: up, z: front}`): mien does not reflect a character (it would turn its left side
//! into its right and every rotation's sense), so such a file must be converted by its author.
//!
//! **Units.** Translations, positions and deltas are scaled by 0.01 (cm) or 1 (m); Euler angles by
//! π/180 (degrees) or 1 (radians), then signed by the rotation signs (`dsce`), then composed in the
//! file's rotation sequence (`Xyz`: `R = Rz·Ry·Rx`, so `q = qz ⊗ qy ⊗ qx`; tdm's `euler_to_quat`),
//! then carried onto mien's axes (`q' = (M·q.xyz, q.w)` for the proper axis map `M`).
//!
//! **Meshes.** One mien vertex per DNA vertex layout (position, UV, normal); polygons are split
//! into fans from their first corner (clockwise-wound files reversed to counter-clockwise); UVs get
//! `v' = 1 − v` (DNA and OBJ put the origin bottom-left, glTF top-left); skin weights are those of
//! the layout's position, at most 4 kept (strongest) and normalised
//! ([`crate::rig::skin::merge_influences`]); each blend-shape target becomes a morph target named
//! after its channel, its deltas copied to every layout of the moved position (straight into the
//! CSR of [`MorphSet::from_sparse`]). A joint's neutral local transform is `T·R` (the ICT README:
//! `W = W_parent · T(t) · R(r)`); the skin's inverse bind matrices invert the neutral world
//! matrices.

use glam::{Mat4, Quat, Vec3};

use super::descriptor::{
    CoordinateSystem, Descriptor, Direction, FaceWinding, RotationDirection, RotationSequence,
    RotationUnit, TranslationUnit,
};
use super::{Dna, DnaMesh};
use crate::error::{Error, Result};
use crate::rig::skeleton::{Hierarchy, Node, Transform};
use crate::rig::skin::{InfluenceFixes, merge_influences};
use crate::rig::{
    Character, ImportNote, Influences, Mesh, MeshId, MorphSet, NodeId, Primitive, Skin, SkinId,
};

/// Most morph entries (vertex, target) one converted mesh may hold: 2²⁶, about 25 times a
/// MetaHuman head's LOD 0 (its deltas copied to every layout of their position).
pub const MAX_MORPH_ENTRIES: u64 = 1 << 26;

/// A proper rotation of axes: `mien = M · dna`, column `k` being mien's vector for DNA axis `k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisMap {
    /// The columns of `M`.
    pub columns: [[f32; 3]; 3],
}

fn direction_vector(d: Direction) -> Option<[f32; 3]> {
    Some(match d {
        Direction::Right => [1.0, 0.0, 0.0],
        Direction::Left => [-1.0, 0.0, 0.0],
        Direction::Up => [0.0, 1.0, 0.0],
        Direction::Down => [0.0, -1.0, 0.0],
        Direction::Front => [0.0, 0.0, 1.0],
        Direction::Back => [0.0, 0.0, -1.0],
        Direction::Code(_) => return None,
    })
}

impl AxisMap {
    /// The map of a DNA coordinate system onto mien's axes (see the module docs).
    ///
    /// # Errors
    /// [`Error::Invalid`]: an unknown direction code, two labels on one axis, or a mirrored
    /// (left-handed under this reading) system.
    pub fn new(cs: CoordinateSystem) -> Result<Self> {
        let bad = |reason: String| Error::Invalid {
            what: format!(
                "DNA coordinate system {{x: {:?}, y: {:?}, z: {:?}}}",
                cs.x, cs.y, cs.z
            ),
            reason,
        };
        let mut columns = [[0.0f32; 3]; 3];
        for (k, d) in [cs.x, cs.y, cs.z].into_iter().enumerate() {
            columns[k] =
                direction_vector(d).ok_or_else(|| bad(format!("unknown direction {d:?}")))?;
        }
        let [a, b, c] = columns.map(Vec3::from);
        let det = a.dot(b.cross(c));
        if det.abs() < 0.5 {
            return Err(bad("two axes point along the same line (degenerate)".into()));
        }
        if det < 0.0 {
            return Err(bad(
                "mirrored: mien reads right = +X, up = +Y, front = +Z (right-handed); this system is their reflection and is refused rather than mirrored"
                    .into(),
            ));
        }
        Ok(AxisMap { columns })
    }

    /// `M · v`: a direction carried onto mien's axes (no scaling).
    pub fn apply(&self, v: [f32; 3]) -> [f32; 3] {
        let c = &self.columns;
        let mut o = [0.0f32; 3];
        for (k, &x) in v.iter().enumerate() {
            for (r, out) in o.iter_mut().enumerate() {
                *out += c[k][r] * x;
            }
        }
        o
    }
}

/// Everything needed to carry DNA values into mien's conventions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Units {
    /// Axis map.
    pub axes: AxisMap,
    /// Metres per translation unit (0.01 for cm, 1 for m).
    pub metres: f32,
    /// Radians per rotation unit (π/180 for degrees, 1 for radians).
    pub radians: f32,
    /// Euler order.
    pub sequence: crate::rig::riglogic::RotationSequence,
    /// −1 or 1 per axis.
    pub signs: [f32; 3],
    /// Whether faces are wound clockwise (reversed on conversion).
    pub clockwise: bool,
}

impl Units {
    /// The conversions a descriptor calls for.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown unit, rotation sequence, sign or winding code, and
    /// those of [`AxisMap::new`].
    pub fn new(d: &Descriptor) -> Result<Self> {
        let bad = |what: &str, code: String| Error::Invalid {
            what: format!("DNA {what}"),
            reason: format!("unknown code {code}"),
        };
        let metres = match d.translation_unit {
            TranslationUnit::Cm => 0.01,
            TranslationUnit::M => 1.0,
            TranslationUnit::Code(c) => return Err(bad("translation unit", c.to_string())),
        };
        let radians = match d.rotation_unit {
            RotationUnit::Degrees => std::f32::consts::PI / 180.0,
            RotationUnit::Radians => 1.0,
            RotationUnit::Code(c) => return Err(bad("rotation unit", c.to_string())),
        };
        let Some(sequence) = euler_sequence(d.rotation_sequence) else {
            return Err(bad(
                "rotation sequence",
                format!("{:?}", d.rotation_sequence),
            ));
        };
        let mut signs = [1.0f32; 3];
        for (s, r) in signs.iter_mut().zip(d.rotation_sign) {
            *s = match r {
                RotationDirection::Positive => 1.0,
                RotationDirection::Negative => -1.0,
                RotationDirection::Code(c) => return Err(bad("rotation sign", c.to_string())),
            };
        }
        let clockwise = match d.face_winding {
            FaceWinding::Ccw => false,
            FaceWinding::Cw => true,
            FaceWinding::Code(c) => return Err(bad("face winding", c.to_string())),
        };
        Ok(Units {
            axes: AxisMap::new(d.coordinate_system)?,
            metres,
            radians,
            sequence,
            signs,
            clockwise,
        })
    }

    /// A position, translation or delta `(3,)` in the file's unit and axes → metres on mien's axes.
    pub fn position(&self, p: [f32; 3]) -> [f32; 3] {
        self.axes.apply(p).map(|x| x * self.metres)
    }

    /// A normal or other direction → mien's axes (unit length kept).
    pub fn direction(&self, n: [f32; 3]) -> [f32; 3] {
        self.axes.apply(n)
    }

    /// Euler angles `(3,)` in the file's unit, signs and sequence → a unit quaternion on mien's
    /// axes.
    pub fn rotation(&self, e: [f32; 3]) -> Quat {
        // Signs, then the sequence's composition (q = q_last ⊗ q_middle ⊗ q_first), in f64:
        // the same conversion RigLogic's quaternion output uses.
        let a = [0, 1, 2].map(|k| f64::from(e[k]) * f64::from(self.radians));
        let q = self.sequence.quaternion(a, self.signs).map(|c| c as f32);
        let q = Quat::from_xyzw(q[0], q[1], q[2], q[3]);
        let v = self.axes.apply([q.x, q.y, q.z]);
        Quat::from_xyzw(v[0], v[1], v[2], q.w).normalize()
    }
}

/// The Euler order a DNA's `rotationSequence` names, or `None` for an unknown code.
pub fn euler_sequence(s: RotationSequence) -> Option<crate::rig::riglogic::RotationSequence> {
    use crate::rig::riglogic::RotationSequence as R;
    Some(match s {
        RotationSequence::Xyz => R::Xyz,
        RotationSequence::Xzy => R::Xzy,
        RotationSequence::Yxz => R::Yxz,
        RotationSequence::Yzx => R::Yzx,
        RotationSequence::Zxy => R::Zxy,
        RotationSequence::Zyx => R::Zyx,
        RotationSequence::Code(_) => return None,
    })
}

/// One DNA mesh as a mien primitive (see the module docs): vertices are its layouts.
/// `target_names` names each target (by its channel); `fixes` counts the skin repairs.
///
/// # Errors
/// An index out of range (run [`Dna::validate`] first for the full list), more than
/// [`MAX_MORPH_ENTRIES`] morph entries ([`Error::Limit`]), or a morph entry
/// [`MorphSet::from_sparse`] refuses. A position listed twice by one target adds its deltas.
pub fn mesh_primitive(
    mesh: &DnaMesh,
    units: &Units,
    file: &str,
    field: &str,
    fixes: &mut InfluenceFixes,
) -> Result<Primitive> {
    let oob = |what: &str, i: usize| {
        Error::format_at(file, format!("{field}.{what}"), i, "index out of range")
    };
    let nl = mesh.layouts.len();
    let mut prim = Primitive {
        positions: Vec::with_capacity(nl),
        normals: Vec::with_capacity(nl),
        uvs: Vec::with_capacity(nl),
        ..Default::default()
    };
    for (i, l) in mesh.layouts.iter().enumerate() {
        let p = mesh
            .positions
            .get(l.position as usize)
            .ok_or_else(|| oob("layouts", i))?;
        let n = mesh
            .normals
            .get(l.normal as usize)
            .ok_or_else(|| oob("layouts", i))?;
        let uv = mesh
            .uvs
            .get(l.uv as usize)
            .ok_or_else(|| oob("layouts", i))?;
        prim.positions.push(units.position(*p));
        let n = Vec3::from(units.direction(*n)).normalize_or(Vec3::Z);
        prim.normals.push(n.to_array());
        prim.uvs.push([uv[0], 1.0 - uv[1]]);
    }
    for f in 0..mesh.faces.len() {
        let face = mesh.faces.face(f);
        if let Some(&bad) = face.iter().find(|&&x| x as usize >= nl) {
            return Err(oob("faces", bad as usize));
        }
        for k in 1..face.len().saturating_sub(1) {
            let (b, c) = (face[k], face[k + 1]);
            let (b, c) = if units.clockwise { (c, b) } else { (b, c) };
            prim.indices.extend_from_slice(&[face[0], b, c]);
        }
    }
    if !mesh.skin.is_empty() {
        let mut inf = Influences {
            joints: Vec::with_capacity(nl),
            weights: Vec::with_capacity(nl),
        };
        for (i, l) in mesh.layouts.iter().enumerate() {
            if l.position as usize >= mesh.skin.len() {
                return Err(oob("skinWeights", i));
            }
            let (w, j) = mesh.skin.vertex(l.position as usize);
            let j: Vec<u32> = j.iter().map(|&x| u32::from(x)).collect();
            let w: Vec<f32> = w.iter().map(|x| x.max(0.0)).collect();
            let (jj, ww) = merge_influences(&j, &w, fixes);
            inf.joints.push(jj);
            inf.weights.push(ww);
        }
        prim.influences = Some(inf);
    }
    // Layouts of each position (CSR), to copy a position's delta to all its vertices.
    let np = mesh.positions.len();
    let mut start = vec![0u32; np + 1];
    for l in &mesh.layouts {
        start[l.position as usize + 1] += 1;
    }
    for i in 0..np {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut of_position = vec![0u32; nl];
    for (v, l) in mesh.layouts.iter().enumerate() {
        let s = &mut fill[l.position as usize];
        of_position[*s as usize] = v as u32;
        *s += 1;
    }
    // Count first: a position shared by many layouts, hit by many deltas, would otherwise
    // multiply into an allocation the file's size does not bound.
    let mut total = 0u64;
    for (t, target) in mesh.blend_shape_targets.iter().enumerate() {
        for (k, &p) in target
            .vertex_indices
            .iter()
            .take(target.deltas.len())
            .enumerate()
        {
            let p = p as usize;
            if p >= np {
                return Err(oob(&format!("blendShapeTargets[{t}].vertexIndices"), k));
            }
            total += u64::from(start[p + 1] - start[p]);
        }
    }
    if total > MAX_MORPH_ENTRIES {
        return Err(Error::Limit {
            what: format!("{file}: {field} morph entries (deltas × layouts per position)"),
            limit: MAX_MORPH_ENTRIES,
            found: total,
        });
    }
    let mut entries: Vec<(u32, u32, [f32; 3])> = Vec::with_capacity(total as usize);
    for (t, target) in mesh.blend_shape_targets.iter().enumerate() {
        for (k, (&p, d)) in target.vertex_indices.iter().zip(&target.deltas).enumerate() {
            if p as usize >= np {
                return Err(oob(&format!("blendShapeTargets[{t}].vertexIndices"), k));
            }
            let d = units.position(*d);
            for &v in &of_position[start[p as usize] as usize..start[p as usize + 1] as usize] {
                entries.push((v, t as u32, d));
            }
        }
    }
    entries.sort_by_key(|e| (e.0, e.1));
    entries.dedup_by(|later, kept| {
        if (later.0, later.1) == (kept.0, kept.1) {
            for k in 0..3 {
                kept.2[k] += later.2[k];
            }
            true
        } else {
            false
        }
    });
    prim.morph = MorphSet::from_sparse(nl, mesh.blend_shape_targets.len(), &entries)?;
    Ok(prim)
}

/// The neutral skeleton: one node per joint (name, parent, local `T·R` in metres and a unit
/// quaternion on mien's axes), in the DNA's joint order.
///
/// # Errors
/// A parent out of range or after its child (run [`Dna::validate`] first).
pub fn skeleton(dna: &Dna, units: &Units) -> Result<Vec<Node>> {
    let df = &dna.definition;
    let mut nodes: Vec<Node> = Vec::with_capacity(df.joint_names.len());
    for (j, name) in df.joint_names.iter().enumerate() {
        let p = usize::from(*df.joint_parents.get(j).ok_or_else(|| {
            Error::format_at(&dna.file, "definition.jointHierarchy", j, "no parent")
        })?);
        if p > j {
            return Err(Error::format_at(
                &dna.file,
                "definition.jointHierarchy",
                j,
                "parent after child",
            ));
        }
        let t = df
            .neutral_joint_translations
            .get(j)
            .copied()
            .unwrap_or_default();
        let r = df
            .neutral_joint_rotations
            .get(j)
            .copied()
            .unwrap_or_default();
        nodes.push(Node {
            name: Some(name.clone()),
            parent: (p != j).then_some(NodeId(p as u32)),
            rest: Transform {
                translation: Vec3::from(units.position(t)),
                rotation: units.rotation(r),
                scale: Vec3::ONE,
            },
            ..Default::default()
        });
        if p != j {
            nodes[p].children.push(NodeId(j as u32));
        }
    }
    Ok(nodes)
}

/// The rig at LOD `lod` as a mien character: the joints, then one node per mesh of the LOD,
/// skinned by one skin over every joint, morph targets named by channel.
///
/// # Errors
/// Those of [`Dna::validate`] (the model must be consistent), [`Units::new`], and a LOD the file
/// does not have.
pub fn to_character(dna: &Dna, lod: u16) -> Result<Character> {
    dna.validate()?;
    if lod >= dna.descriptor.lod_count {
        return Err(Error::Invalid {
            what: format!("{}: LOD {lod}", dna.file),
            reason: format!("the file has {} LODs", dna.descriptor.lod_count),
        });
    }
    let units = Units::new(&dna.descriptor)?;
    let mut nodes = skeleton(dna, &units)?;
    let joints = nodes.len();
    let mut world: Vec<Mat4> = Vec::with_capacity(joints);
    for n in &nodes {
        let local = n.rest.matrix();
        world.push(n.parent.map_or(local, |p| world[p.index()] * local));
    }
    let skin = Skin {
        name: Some(dna.descriptor.name.clone()),
        joints: (0..joints as u32).map(NodeId).collect(),
        inverse_bind: world.iter().map(|m| m.inverse()).collect(),
    };
    let mut scene_roots: Vec<NodeId> = (0..joints)
        .filter(|&j| nodes[j].parent.is_none())
        .map(|j| NodeId(j as u32))
        .collect();
    let mut meshes = Vec::new();
    let mut notes = Vec::new();
    let channel_name = |c: u16| -> String {
        let file_index = |k: &[u16]| k.iter().position(|&x| x == c);
        let at = match &dna.lod_filter {
            Some(f) => file_index(&f.blend_shape_channels),
            None => Some(usize::from(c)),
        };
        at.and_then(|i| dna.definition.blend_shape_channel_names.get(i))
            .cloned()
            .unwrap_or_else(|| format!("channel_{c}"))
    };
    for &m in dna.definition.mesh_indices_for_lod(lod) {
        let mi = usize::from(m);
        let dm = dna.meshes.get(mi).ok_or_else(|| {
            Error::format_at(
                &dna.file,
                "definition.lodMeshMapping",
                mi,
                "mesh not loaded",
            )
        })?;
        let field = format!("geometry.meshes[{mi}]");
        let mut fixes = InfluenceFixes::default();
        let prim = mesh_primitive(dm, &units, &dna.file, &field, &mut fixes)?;
        if fixes != InfluenceFixes::default() {
            notes.push(ImportNote {
                field: format!("{field}.skinWeights"),
                message: format!(
                    "{} vertices over 4 influences cut to the strongest 4, {} renormalised, {} with zero weight bound to their first joint",
                    fixes.truncated, fixes.renormalised, fixes.zero_sum
                ),
            });
        }
        let target_names: Vec<String> = dm
            .blend_shape_targets
            .iter()
            .map(|t| channel_name(t.channel))
            .collect();
        let skinned = prim.influences.is_some();
        meshes.push(Mesh {
            name: dna.definition.mesh_names.get(mi).cloned(),
            default_weights: vec![0.0; target_names.len()],
            target_names,
            primitives: vec![prim],
        });
        let id = NodeId(nodes.len() as u32);
        nodes.push(Node {
            name: dna.definition.mesh_names.get(mi).cloned(),
            mesh: Some(MeshId(meshes.len() as u32 - 1)),
            skin: skinned.then_some(SkinId(0)),
            ..Default::default()
        });
        scene_roots.push(id);
    }
    let hierarchy = Hierarchy::new(&dna.file, &nodes)?;
    let ch = Character {
        source: dna.file.clone(),
        nodes,
        hierarchy,
        scene_roots,
        meshes,
        skins: vec![skin],
        notes,
        ..Default::default()
    };
    ch.validate()?;
    Ok(ch)
}
