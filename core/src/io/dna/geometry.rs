//! The geometry layer (`geom`): per mesh, positions, UVs, normals, vertex layouts, faces, skin
//! weights and blend-shape targets.
//!
//! Source: OpenRigLogic `src/dna/DNA.h` (`RawMesh::serialize`: in 2.1 each mesh starts with the
//! absolute offset of its end, from 2.2 on with its byte size; `RawTextureCoordinateVector`,
//! `RawVertexLayoutVector`, `RawFace`, `RawVertexSkinWeights`, `RawBlendShapeTarget`) and
//! `src/dna/stream/FilteredBinaryInputArchive.cpp` (a load without blend shapes skips the targets).

use super::stream::Cursor;
use crate::error::Result;

/// A vertex layout: one rendered vertex, made of a position, a UV and a normal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexLayout {
    /// Index into [`DnaMesh::positions`].
    pub position: u32,
    /// Index into [`DnaMesh::uvs`].
    pub uv: u32,
    /// Index into [`DnaMesh::normals`].
    pub normal: u32,
}

/// A mesh's faces in compressed rows: face `f` is `layout_indices[offsets[f]..offsets[f+1]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Faces {
    /// Row starts `(F+1,)`.
    pub offsets: Vec<u32>,
    /// Vertex-layout indices of every face, face after face.
    pub layout_indices: Vec<u32>,
}

impl Default for Faces {
    fn default() -> Self {
        Faces {
            offsets: vec![0],
            layout_indices: Vec::new(),
        }
    }
}

impl Faces {
    /// Number of faces.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no faces.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The layout indices of face `f` (a polygon, in winding order), empty when out of range.
    pub fn face(&self, f: usize) -> &[u32] {
        match (self.offsets.get(f), self.offsets.get(f + 1)) {
            (Some(&a), Some(&b)) => self
                .layout_indices
                .get(a as usize..b as usize)
                .unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// Skin weights per position, in compressed rows: vertex `v` has joints
/// `joint_indices[offsets[v]..offsets[v+1]]` with the weights at the same places.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinWeights {
    /// Row starts `(V+1,)` (one row per entry of the file's list, normally one per position).
    pub offsets: Vec<u32>,
    /// Weights, row after row.
    pub weights: Vec<f32>,
    /// Joint indices, row after row.
    pub joint_indices: Vec<u16>,
}

impl Default for SkinWeights {
    fn default() -> Self {
        SkinWeights {
            offsets: vec![0],
            weights: Vec::new(),
            joint_indices: Vec::new(),
        }
    }
}

impl SkinWeights {
    /// Number of rows (skinned vertices).
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Weights and joints of vertex `v` (empty when out of range).
    pub fn vertex(&self, v: usize) -> (&[f32], &[u16]) {
        match (self.offsets.get(v), self.offsets.get(v + 1)) {
            (Some(&a), Some(&b)) => (
                self.weights.get(a as usize..b as usize).unwrap_or(&[]),
                self.joint_indices
                    .get(a as usize..b as usize)
                    .unwrap_or(&[]),
            ),
            _ => (&[], &[]),
        }
    }

    /// Append one row.
    pub(crate) fn push(&mut self, weights: &[f32], joints: &[u16]) {
        self.weights.extend_from_slice(weights);
        self.joint_indices.extend_from_slice(joints);
        self.offsets.push(self.weights.len() as u32);
    }
}

/// One blend-shape target of a mesh: the sparse position deltas of one channel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlendShapeTarget {
    /// The blend-shape channel that drives it.
    pub channel: u16,
    /// Position indices moved, in file order (the `deltas` at the same places).
    pub vertex_indices: Vec<u32>,
    /// Deltas `(N,3)` in the file's translation unit and axes.
    pub deltas: Vec<[f32; 3]>,
}

/// One mesh of the geometry layer, in the file's units and axes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DnaMesh {
    /// Positions `(P,3)`.
    pub positions: Vec<[f32; 3]>,
    /// Texture coordinates `(U,2)` as written (`u`, `v`; origin at the bottom left in authored
    /// MetaHuman and ICT files).
    pub uvs: Vec<[f32; 2]>,
    /// Normals `(N,3)`.
    pub normals: Vec<[f32; 3]>,
    /// Vertex layouts `(L,)`.
    pub layouts: Vec<VertexLayout>,
    /// Faces: polygons of layout indices.
    pub faces: Faces,
    /// Most joints influencing one vertex, as declared.
    pub max_influences: u16,
    /// Skin weights per position.
    pub skin: SkinWeights,
    /// Blend-shape targets in file order (empty when loaded without blend shapes).
    pub blend_shape_targets: Vec<BlendShapeTarget>,
}

/// How each mesh marks its end: 2.1 writes the absolute offset of the next mesh, 2.2+ the byte
/// size of the mesh after the size field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MeshEnd {
    Offset,
    Size,
}

/// Byte span of one mesh's content and its end, after its offset or size field.
fn mesh_span(c: &mut Cursor<'_>, end: MeshEnd) -> Result<(usize, usize)> {
    let at = c.pos();
    let (start, stop) = match end {
        MeshEnd::Offset => {
            let o = c.u32("offset")? as usize;
            (c.pos(), o)
        }
        MeshEnd::Size => {
            let s = c.u32("size")? as usize;
            (c.pos(), c.pos().saturating_add(s))
        }
    };
    if stop < start || stop > c.end() {
        return Err(c.fail_at(
            if end == MeshEnd::Offset {
                "offset"
            } else {
                "size"
            },
            at,
            format!(
                "the mesh would end at byte {stop}, outside bytes {start}..{}",
                c.end()
            ),
        ));
    }
    Ok((start, stop))
}

/// Read the geometry (`RawGeometry`): the meshes, or only walk over them (`rest == false`, the
/// layer not requested, as OpenRigLogic does to find a 2.1 file's footer). Returns the meshes and
/// the byte after the last mesh.
///
/// # Errors
/// A field cut short, a length prefix past the mesh, a mesh end outside the region, an array
/// whose halves differ in length (`xs`/`ys`/`zs`, `us`/`vs`, the three layout columns, a
/// vertex's weights and joints).
pub(crate) fn read_geometry(
    c: &mut Cursor<'_>,
    end: MeshEnd,
    rest: bool,
    blend_shapes: bool,
) -> Result<(Vec<DnaMesh>, usize)> {
    let depth = c.key("geometry");
    let n = c.count("meshes", 4)?;
    let mut meshes = Vec::with_capacity(Cursor::reserve(n));
    let region_end = c.end();
    let dm = c.key("meshes");
    for i in 0..n {
        c.at(i);
        let (start, stop) = mesh_span(c, end)?;
        if rest {
            c.region(start, stop, "")?;
            meshes.push(read_mesh(c, blend_shapes)?);
        }
        c.region(stop, region_end, "")?;
        c.back(dm + 1);
    }
    c.back(depth);
    Ok((meshes, c.pos()))
}

fn read_mesh(c: &mut Cursor<'_>, blend_shapes: bool) -> Result<DnaMesh> {
    let mut m = DnaMesh {
        positions: c.vec3s("positions")?,
        ..Default::default()
    };
    let d = c.key("textureCoordinates");
    let at = c.pos();
    let us = c.vec_f32("us")?;
    let vs = c.vec_f32("vs")?;
    if us.len() != vs.len() {
        return Err(c.fail_at(
            "",
            at,
            format!("{} us for {} vs; they must be equal", us.len(), vs.len()),
        ));
    }
    c.back(d);
    m.uvs = us.into_iter().zip(vs).map(|(u, v)| [u, v]).collect();
    m.normals = c.vec3s("normals")?;
    let d = c.key("layouts");
    let at = c.pos();
    let p = c.vec_u32("positions")?;
    let t = c.vec_u32("textureCoordinates")?;
    let nn = c.vec_u32("normals")?;
    if p.len() != t.len() || t.len() != nn.len() {
        return Err(c.fail_at(
            "",
            at,
            format!(
                "{}, {} and {} position, UV and normal indices; they must be equal",
                p.len(),
                t.len(),
                nn.len()
            ),
        ));
    }
    c.back(d);
    m.layouts = p
        .into_iter()
        .zip(t)
        .zip(nn)
        .map(|((position, uv), normal)| VertexLayout {
            position,
            uv,
            normal,
        })
        .collect();
    let nf = c.count("faces", 4)?;
    let d = c.key("faces");
    m.faces.offsets.reserve(Cursor::reserve(nf));
    for f in 0..nf {
        c.at(f);
        let face = c.vec_u32("layoutIndices")?;
        m.faces.layout_indices.extend_from_slice(&face);
        m.faces.offsets.push(m.faces.layout_indices.len() as u32);
        c.back(d + 1);
    }
    c.back(d);
    m.max_influences = c.u16("maximumInfluencePerVertex")?;
    let nv = c.count("skinWeights", 8)?;
    let d = c.key("skinWeights");
    m.skin.offsets.reserve(Cursor::reserve(nv));
    for v in 0..nv {
        c.at(v);
        let at = c.pos();
        let w = c.vec_f32("weights")?;
        let j = c.vec_u16("jointIndices")?;
        if w.len() != j.len() {
            return Err(c.fail_at(
                "",
                at,
                format!(
                    "{} weights for {} joints; they must pair up",
                    w.len(),
                    j.len()
                ),
            ));
        }
        m.skin.push(&w, &j);
        c.back(d + 1);
    }
    c.back(d);
    if blend_shapes {
        m.blend_shape_targets = c.list("blendShapeTargets", 30, |c| {
            let deltas = c.vec3s("deltas")?;
            let vertex_indices = c.vec_u32("vertexIndices")?;
            let channel = c.u16("blendShapeChannelIndex")?;
            Ok(BlendShapeTarget {
                channel,
                vertex_indices,
                deltas,
            })
        })?;
    }
    Ok(m)
}
