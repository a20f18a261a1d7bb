//! Meshes: primitives with positions, normals, tangents, UVs, triangles, morph targets and skin
//! influences. Several primitives of one mesh share one weight array (glTF 2.0 §3.7.2.2).

use super::morph::MorphSet;
use super::skin::Influences;
use crate::error::{Error, Result};

/// One drawable piece of a mesh: a vertex array with its own attributes and targets.
#[derive(Clone, Debug, Default)]
pub struct Primitive {
    /// Bind-pose positions `(V,3)`, metres, in the mesh's own space.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals `(V,3)`; computed from the triangles (area-weighted) when the file has none.
    pub normals: Vec<[f32; 3]>,
    /// Unit tangents xyz + handedness w `(V,4)`, or empty.
    pub tangents: Vec<[f32; 4]>,
    /// Texture coordinates `(V,2)`, or empty.
    pub uvs: Vec<[f32; 2]>,
    /// Linear RGBA vertex colours `(V,4)` in `[0,1]` (glTF `COLOR_0`), or empty.
    pub colors: Vec<[f32; 4]>,
    /// Triangle list `(T*3,)` of vertex indices (< V). Strips and fans are converted on import;
    /// points and lines leave it empty.
    pub indices: Vec<u32>,
    /// The morph targets of this primitive (possibly zero targets); its `target_count` equals the
    /// mesh's.
    pub morph: MorphSet,
    /// Skin influences (≤4 per vertex), or `None` for a rigid primitive.
    pub influences: Option<Influences>,
    /// Index into [`crate::rig::Character::materials`], or `None` for glTF's default material.
    pub material: Option<usize>,
    /// Whether `uvs` already went through the material's `KHR_texture_transform` (quantised UVs
    /// are dequantised with it on import), so sampling must not apply it again.
    pub uvs_transformed: bool,
}

impl Primitive {
    /// Vertex count V.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Check the invariants the rest of mien relies on: attribute lengths equal V, indices < V and
    /// a multiple of 3, finite positions, a morph set with V rows.
    ///
    /// # Errors
    /// All problems, each naming `label` (e.g. `meshes[2].primitives[0]`) and the offending index.
    pub fn validate(&self, file: &str, label: &str) -> Result<()> {
        let nv = self.vertex_count();
        let mut problems = Vec::new();
        let mut len = |name: &str, n: usize, optional: bool| {
            if n != nv && !(optional && n == 0) {
                problems.push(Error::format(
                    file,
                    format!("{label}.{name}"),
                    format!("{n} elements, the primitive has {nv} vertices"),
                ));
            }
        };
        len("NORMAL", self.normals.len(), true);
        len("TANGENT", self.tangents.len(), true);
        len("TEXCOORD_0", self.uvs.len(), true);
        len("COLOR_0", self.colors.len(), true);
        len("morph rows", self.morph.vertex_count(), false);
        if let Some(inf) = &self.influences {
            len("JOINTS_0", inf.joints.len(), false);
            len("WEIGHTS_0", inf.weights.len(), false);
        }
        if !self.indices.len().is_multiple_of(3) {
            problems.push(Error::format(
                file,
                format!("{label}.indices"),
                format!(
                    "{} indices is not a whole number of triangles",
                    self.indices.len()
                ),
            ));
        }
        if let Some(i) = self.indices.iter().position(|&i| i as usize >= nv) {
            problems.push(Error::format_at(
                file,
                format!("{label}.indices"),
                i,
                format!("vertex index {} ≥ vertex count {nv}", self.indices[i]),
            ));
        }
        if let Some(i) = self
            .positions
            .iter()
            .position(|p| !p.iter().all(|x| x.is_finite()))
        {
            problems.push(Error::format_at(
                file,
                format!("{label}.POSITION"),
                i,
                "not finite",
            ));
        }
        Error::collect(problems)
    }

    /// Area-weighted smooth vertex normals from the triangles (unit length; `[0,0,1]` for a vertex
    /// in no non-degenerate triangle). Used when a file has no normals.
    pub fn computed_normals(positions: &[[f32; 3]], indices: &[u32]) -> Vec<[f32; 3]> {
        let mut acc = vec![[0.0f64; 3]; positions.len()];
        for tri in indices.chunks_exact(3) {
            let [a, b, c] = [tri[0] as usize, tri[1] as usize, tri[2] as usize];
            if a >= positions.len() || b >= positions.len() || c >= positions.len() {
                continue;
            }
            let (pa, pb, pc) = (positions[a], positions[b], positions[c]);
            let e1 = [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]].map(f64::from);
            let e2 = [pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]].map(f64::from);
            let n = [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ];
            for &v in &[a, b, c] {
                for k in 0..3 {
                    acc[v][k] += n[k];
                }
            }
        }
        acc.into_iter()
            .map(|n| {
                let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                if l > 0.0 && l.is_finite() {
                    [(n[0] / l) as f32, (n[1] / l) as f32, (n[2] / l) as f32]
                } else {
                    [0.0, 0.0, 1.0]
                }
            })
            .collect()
    }
}

/// A mesh: primitives sharing one morph-weight array.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    /// The file's name for the mesh, if any.
    pub name: Option<String>,
    /// The primitives, each with the same target count.
    pub primitives: Vec<Primitive>,
    /// One name per target: `extras.targetNames` when the file has a list of the right length,
    /// else `target_<i>`.
    pub target_names: Vec<String>,
    /// The mesh's default weights `(target_count,)` (`mesh.weights`, else zeros). A node's own
    /// `weights` override these per instance.
    pub default_weights: Vec<f32>,
}

impl Mesh {
    /// Number of morph targets (the length of its weight array).
    pub fn target_count(&self) -> usize {
        self.target_names.len()
    }

    /// Total vertices over all primitives.
    pub fn vertex_count(&self) -> usize {
        self.primitives.iter().map(Primitive::vertex_count).sum()
    }
}
