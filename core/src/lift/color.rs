//! Where a bound gaussian's colour comes from: its triangle's material (base-colour texture at the
//! gaussian's UV through the sampler and `KHR_texture_transform`, times `baseColorFactor`, times
//! `COLOR_0`), or — for a surface with no material and no vertex colours — its rest normal
//! (`0.5 + 0.5·n`, the debug lift's normal shading, so an untextured head stays legible).
//!
//! Colours are blended in linear light and stored sRGB-encoded (splat files and viewers hold
//! display colours). Source: glTF 2.0 §3.9.2 (base colour = texture × factor × `COLOR_0`),
//! §3.9.4 "Alpha Coverage" (OPAQUE ignores alpha, MASK compares with `alphaCutoff`).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::rig::material::{AlphaMode, Material};
use crate::rig::{Character, RigData};
use crate::texture::{Texture, decode, linear_to_srgb, transform_uv};

/// How one drawn primitive is coloured.
#[derive(Clone, Debug)]
struct Span {
    /// Triangles `first..first + count` of the rig.
    first: u32,
    count: u32,
    material: Option<usize>,
    texture: Option<usize>,
    has_colors: bool,
    uvs_transformed: bool,
    has_uvs: bool,
}

/// What the colouring used, for reports.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ColorReport {
    /// Textures decoded: `(image label, format, width, height)`.
    pub textures: Vec<(String, String, u32, u32)>,
    /// Textures that could not be decoded, with why (their triangles use the factor).
    pub failed: Vec<String>,
    /// Triangles coloured from a texture.
    pub textured_triangles: u64,
    /// Triangles coloured by factor and vertex colour only.
    pub plain_triangles: u64,
    /// Triangles coloured by their rest normal (no material, no vertex colours).
    pub normal_triangles: u64,
}

/// A character's surface colours, per triangle of its [`RigData`].
#[derive(Clone, Debug)]
pub struct SurfaceColors {
    spans: Vec<Span>,
    materials: Vec<Material>,
    textures: Vec<Arc<Texture>>,
    uvs: Vec<[f32; 2]>,
    colors: Vec<[f32; 4]>,
    normals: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
    /// What was used.
    pub report: ColorReport,
}

impl SurfaceColors {
    /// Colours of `character`'s drawn primitives, in `rig`'s triangle order
    /// ([`RigData::from_character`]). Textures are decoded once each; one that fails is reported
    /// and its triangles use the factor.
    ///
    /// # Errors
    /// [`Error::Mismatch`] when `rig` was not flattened from `character` (another triangle count).
    pub fn from_character(character: &Character, rig: &RigData) -> Result<Self> {
        let mut spans = Vec::new();
        let mut first = 0u32;
        let mut decoded: BTreeMap<usize, Option<usize>> = BTreeMap::new();
        let mut textures = Vec::new();
        let mut report = ColorReport::default();
        for node in character.mesh_nodes() {
            let Some((_, mesh)) = character.node_mesh(node) else {
                continue;
            };
            for p in &mesh.primitives {
                let count = (p.indices.len() / 3) as u32;
                let material = p.material.filter(|&m| m < character.materials.len());
                let image = material
                    .and_then(|m| character.materials[m].texture.as_ref())
                    .map(|t| t.image);
                let texture = image.and_then(|i| {
                    *decoded.entry(i).or_insert_with(|| {
                        let enc = character.images.get(i)?.as_ref()?;
                        match decode(enc) {
                            Ok(t) => {
                                report.textures.push((
                                    enc.label.clone(),
                                    t.format.clone(),
                                    t.width,
                                    t.height,
                                ));
                                textures.push(Arc::new(t));
                                Some(textures.len() - 1)
                            }
                            Err(e) => {
                                report.failed.push(e.to_string());
                                None
                            }
                        }
                    })
                });
                let has_colors = p.colors.len() == p.positions.len() && !p.colors.is_empty();
                let has_uvs = p.uvs.len() == p.positions.len() && !p.uvs.is_empty();
                let texture = texture.filter(|_| has_uvs);
                let n = u64::from(count);
                if texture.is_some() {
                    report.textured_triangles += n;
                } else if material.is_some() || has_colors {
                    report.plain_triangles += n;
                } else {
                    report.normal_triangles += n;
                }
                spans.push(Span {
                    first,
                    count,
                    material,
                    texture,
                    has_colors,
                    uvs_transformed: p.uvs_transformed,
                    has_uvs,
                });
                first += count;
            }
        }
        if first as usize != rig.triangles.len() {
            return Err(Error::Mismatch {
                what: format!("{}: triangles of the drawn primitives", character.source),
                expected: rig.triangles.len() as u64,
                found: u64::from(first),
            });
        }
        Ok(SurfaceColors {
            spans,
            materials: character.materials.clone(),
            textures,
            uvs: rig.uvs.clone(),
            colors: rig.colors.clone(),
            normals: rig.normals.clone(),
            triangles: rig.triangles.clone(),
            report,
        })
    }

    /// Colours for a surface with no materials: vertex colours `(V,4)` linear when given (else the
    /// rest normals `(V,3)` shade it).
    pub fn untextured(
        triangles: &[[u32; 3]],
        normals: &[[f32; 3]],
        colors: Option<&[[f32; 4]]>,
    ) -> Self {
        let count = triangles.len() as u32;
        let has_colors = colors.is_some();
        let mut report = ColorReport::default();
        if has_colors {
            report.plain_triangles = u64::from(count);
        } else {
            report.normal_triangles = u64::from(count);
        }
        SurfaceColors {
            spans: vec![Span {
                first: 0,
                count,
                material: None,
                texture: None,
                has_colors,
                uvs_transformed: false,
                has_uvs: false,
            }],
            materials: Vec::new(),
            textures: Vec::new(),
            uvs: Vec::new(),
            colors: colors.map(<[_]>::to_vec).unwrap_or_default(),
            normals: normals.to_vec(),
            triangles: triangles.to_vec(),
            report,
        }
    }

    fn span(&self, tri: u32) -> &Span {
        let i = self.spans.partition_point(|s| s.first + s.count <= tri);
        &self.spans[i.min(self.spans.len() - 1)]
    }

    /// Colour of triangle `tri` at barycentrics `bary` `(3,)` (summing to 1): sRGB-encoded RGB and
    /// the opacity its alpha mode gives, each in `[0, 1]`.
    pub fn color(&self, tri: u32, bary: [f32; 3]) -> [f32; 4] {
        let s = self.span(tri);
        let t = self.triangles[tri as usize];
        let mix = |a: [f32; 4], b: [f32; 4]| std::array::from_fn::<f32, 4, _>(|k| a[k] * b[k]);
        let interp4 = |arr: &[[f32; 4]]| -> [f32; 4] {
            std::array::from_fn(|k| {
                bary[0] * arr[t[0] as usize][k]
                    + bary[1] * arr[t[1] as usize][k]
                    + bary[2] * arr[t[2] as usize][k]
            })
        };
        let mut rgba = [1.0f32; 4];
        let material = s.material.map(|m| &self.materials[m]);
        if material.is_none() && !s.has_colors {
            let n: [f32; 3] = std::array::from_fn(|k| {
                bary[0] * self.normals[t[0] as usize][k]
                    + bary[1] * self.normals[t[1] as usize][k]
                    + bary[2] * self.normals[t[2] as usize][k]
            });
            let n = crate::rig::morph::normalize_or(n, [0.0, 0.0, 1.0]);
            return [0.5 + 0.5 * n[0], 0.5 + 0.5 * n[1], 0.5 + 0.5 * n[2], 1.0];
        }
        if let Some(m) = material {
            rgba = m.base_color;
            if let (Some(ti), Some(tr)) = (s.texture, m.texture.as_ref())
                && s.has_uvs
            {
                let uv: [f32; 2] = std::array::from_fn(|k| {
                    bary[0] * self.uvs[t[0] as usize][k]
                        + bary[1] * self.uvs[t[1] as usize][k]
                        + bary[2] * self.uvs[t[2] as usize][k]
                });
                let uv = if s.uvs_transformed {
                    uv
                } else {
                    transform_uv(&tr.transform, uv)
                };
                rgba = mix(rgba, self.textures[ti].sample(uv, &tr.sampler));
            }
        }
        if s.has_colors {
            rgba = mix(rgba, interp4(&self.colors));
        }
        let alpha = match material.map_or(AlphaMode::Opaque, |m| m.alpha) {
            AlphaMode::Opaque => 1.0,
            AlphaMode::Mask(c) => {
                if rgba[3] >= c {
                    1.0
                } else {
                    0.0
                }
            }
            AlphaMode::Blend => rgba[3].clamp(0.0, 1.0),
        };
        [
            linear_to_srgb(rgba[0].clamp(0.0, 1.0)),
            linear_to_srgb(rgba[1].clamp(0.0, 1.0)),
            linear_to_srgb(rgba[2].clamp(0.0, 1.0)),
            alpha,
        ]
    }

    /// Texels a triangle's UVs cover in its texture (`None` when it is not textured): the density
    /// cap of the surface lift.
    pub fn texels_covered(&self, tri: u32) -> Option<f64> {
        let s = self.span(tri);
        let ti = s.texture?;
        let m = &self.materials[s.material?];
        let tr = m.texture.as_ref()?;
        let t = self.triangles[tri as usize];
        let uv = t.map(|v| {
            let u = self.uvs[v as usize];
            if s.uvs_transformed {
                u
            } else {
                transform_uv(&tr.transform, u)
            }
        });
        let a = 0.5
            * ((f64::from(uv[1][0]) - f64::from(uv[0][0]))
                * (f64::from(uv[2][1]) - f64::from(uv[0][1]))
                - (f64::from(uv[2][0]) - f64::from(uv[0][0]))
                    * (f64::from(uv[1][1]) - f64::from(uv[0][1])))
            .abs();
        let tex = &self.textures[ti];
        Some(a * f64::from(tex.width) * f64::from(tex.height))
    }
}

/// Area-weighted vertex normals `(V,3)` of a mesh (the sum of each vertex's triangles' cross
/// products, normalised; `+z` for a vertex with no triangle of non-zero area), for surfaces
/// posed without normals (a linear head pack).
pub fn vertex_normals(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Vec<[f32; 3]> {
    let mut acc = vec![[0.0f64; 3]; positions.len()];
    for t in triangles {
        let Some(p) = t
            .iter()
            .map(|&v| positions.get(v as usize).map(|q| q.map(f64::from)))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let e1 = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
        let e2 = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
        let c = [
            e1[1] * e2[2] - e1[2] * e2[1],
            e1[2] * e2[0] - e1[0] * e2[2],
            e1[0] * e2[1] - e1[1] * e2[0],
        ];
        for &v in t {
            for k in 0..3 {
                acc[v as usize][k] += c[k];
            }
        }
    }
    acc.iter()
        .map(|a| {
            let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
            if l > 0.0 && l.is_finite() {
                [(a[0] / l) as f32, (a[1] / l) as f32, (a[2] / l) as f32]
            } else {
                [0.0, 0.0, 1.0]
            }
        })
        .collect()
}
