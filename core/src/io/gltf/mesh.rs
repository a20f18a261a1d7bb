//! Meshes: every primitive's positions, normals, tangents, `TEXCOORD_0`, `COLOR_0`, triangle list, morph
//! targets and skin influences; target names and default weights.
//!
//! Source: glTF 2.0 §3.7.2.1 "Topology" (strip `pᵢ = {vᵢ, v_{i+(1+i%2)}, v_{i+(2−i%2)}}`, fan
//! `pᵢ = {v_{i+1}, v_{i+2}, v₀}`; no indices means `0..V`), §3.7.2.2 "Morph Targets" (deltas, default
//! weights `mesh.weights` else zeros, `extras.targetNames` by convention), `KHR_mesh_quantization`
//! (quantised normals renormalised), `KHR_texture_transform` (UV transform `T·R·S`).

use gltf::json;
use json::accessor::ComponentType as C;
use json::mesh::{Mode, Semantic};
use json::validation::Checked;
use serde_json::Value;

use super::accessor::{read_f32, read_u32};
use super::checks::target_count;
use super::validate::semantic_name;
use super::{Ctx, prim_field, skin};
use crate::error::{Error, Result};
use crate::rig::{DenseTarget, Mesh, MorphSet, Primitive};

/// glTF-Validator's `unitLengthThresholdVec3`: normals off unit length by more are reported.
const UNIT_VEC3_TOLERANCE: f32 = 0.00674;

/// Every mesh of the file, in file order.
///
/// # Errors
/// Every mesh's problems (collected), each naming the field.
pub(super) fn meshes(ctx: &mut Ctx) -> Result<Vec<Mesh>> {
    let root = ctx.root;
    let users = skin::mesh_skins(root);
    let mut out = Vec::with_capacity(root.meshes.len());
    let mut problems = Vec::new();
    for (mi, m) in root.meshes.iter().enumerate() {
        let t = target_count(root, mi);
        let mut primitives = Vec::with_capacity(m.primitives.len());
        for (pi, p) in m.primitives.iter().enumerate() {
            match primitive(ctx, mi, pi, p, t, &users[mi]) {
                Ok(x) => primitives.push(x),
                Err(e) => problems.push(e),
            }
        }
        let target_names = target_names(ctx, mi, m, t);
        out.push(Mesh {
            name: m.name.clone(),
            primitives,
            target_names,
            default_weights: m.weights.clone().unwrap_or_else(|| vec![0.0; t]),
        });
    }
    Error::collect(problems)?;
    Ok(out)
}

fn vec3(v: &[f32]) -> Vec<[f32; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

fn primitive(
    ctx: &mut Ctx,
    mi: usize,
    pi: usize,
    p: &json::mesh::Primitive,
    t: usize,
    skins: &[(usize, usize)],
) -> Result<Primitive> {
    let pf = prim_field(mi, pi);
    let attr = |s: Semantic| p.attributes.get(&Checked::Valid(s)).map(|a| a.value());
    let pos = attr(Semantic::Positions).ok_or_else(|| {
        ctx.err(
            format!("{pf}.attributes.POSITION"),
            "required attribute is missing",
        )
    })?;
    let positions = vec3(&read_f32(ctx, pos)?.1);
    let nv = positions.len();

    let raw: Vec<u32> = match p.indices {
        Some(i) => read_u32(ctx, i.value())?.1,
        None => (0..u32::try_from(nv)
            .map_err(|_| ctx.err(format!("{pf}.attributes.POSITION"), "too many vertices"))?)
            .collect(),
    };
    if let Some(k) = raw.iter().position(|&x| x as usize >= nv) {
        return Err(Error::format_at(
            ctx.file,
            format!("{pf}.indices"),
            k,
            format!("vertex index {} ≥ vertex count {nv}", raw[k]),
        ));
    }
    let mode = match p.mode {
        Checked::Valid(m) => m,
        Checked::Invalid => return Err(ctx.err(format!("{pf}.mode"), "invalid primitive mode")),
    };
    let indices = triangulate(ctx, &pf, mode, raw);

    let normals = match attr(Semantic::Normals) {
        Some(a) => {
            let (fmt, n) = read_f32(ctx, a)?;
            let mut computed: Option<Vec<[f32; 3]>> = None;
            let (mut off, mut zero) = (0usize, 0usize);
            let mut out = vec3(&n);
            for (v, n) in out.iter_mut().enumerate() {
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                if len > 0.0 && len.is_finite() {
                    off += usize::from((len - 1.0).abs() > UNIT_VEC3_TOLERANCE);
                    *n = [n[0] / len, n[1] / len, n[2] / len];
                } else {
                    zero += 1;
                    *n = computed
                        .get_or_insert_with(|| Primitive::computed_normals(&positions, &indices))
                        [v];
                }
            }
            if fmt.ct != C::F32 {
                ctx.note(
                    format!("{pf}.attributes.NORMAL"),
                    format!(
                        "quantised normals ({}) renormalised to unit length",
                        fmt.describe()
                    ),
                );
            } else if off > 0 {
                ctx.note(format!("{pf}.attributes.NORMAL"), format!("{off} normals off unit length by more than {UNIT_VEC3_TOLERANCE} renormalised"));
            }
            if zero > 0 {
                ctx.note(
                    format!("{pf}.attributes.NORMAL"),
                    format!("{zero} zero-length normals replaced by computed ones"),
                );
            }
            out
        }
        None => {
            ctx.note(
                format!("{pf}.attributes.NORMAL"),
                "no normals in the file: computed from the triangles (area-weighted)",
            );
            Primitive::computed_normals(&positions, &indices)
        }
    };

    let tangents = match attr(Semantic::Tangents) {
        Some(a) => {
            let (_, v) = read_f32(ctx, a)?;
            let mut signs = 0usize;
            let out: Vec<[f32; 4]> = v
                .chunks_exact(4)
                .map(|c| {
                    let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
                    let w = if c[3] < 0.0 { -1.0 } else { 1.0 };
                    signs += usize::from(w != c[3]);
                    if len > 0.0 && len.is_finite() {
                        [c[0] / len, c[1] / len, c[2] / len, w]
                    } else {
                        [1.0, 0.0, 0.0, w]
                    }
                })
                .collect();
            if signs > 0 {
                ctx.note(
                    format!("{pf}.attributes.TANGENT"),
                    format!("{signs} tangent handedness values were not ±1 and were snapped"),
                );
            }
            out
        }
        None => Vec::new(),
    };

    let mut uvs_transformed = false;
    let uvs = match attr(Semantic::TexCoords(0)) {
        Some(a) => {
            let (fmt, v) = read_f32(ctx, a)?;
            let mut uv: Vec<[f32; 2]> = v.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
            if fmt.ct != C::F32 && !fmt.normalized {
                let field = format!("{pf}.attributes.TEXCOORD_0");
                match uv_transform(ctx.root, p) {
                    Some(m) => {
                        for q in &mut uv {
                            *q = [m[0] * q[0] + m[1] * q[1] + m[2], m[3] * q[0] + m[4] * q[1] + m[5]];
                        }
                        uvs_transformed = true;
                        ctx.note(field, format!("quantised UVs ({}) dequantised with the material's KHR_texture_transform", fmt.describe()));
                    }
                    None => ctx.note(field, format!("quantised UVs ({}) kept as stored: no KHR_texture_transform to dequantise them", fmt.describe())),
                }
            }
            uv
        }
        None => Vec::new(),
    };

    let colors = match attr(Semantic::Colors(0)) {
        Some(a) => {
            let (fmt, v) = read_f32(ctx, a)?;
            let w = fmt.width();
            if w != 3 && w != 4 {
                return Err(ctx.err(
                    format!("{pf}.attributes.COLOR_0"),
                    format!("{w} components; COLOR_0 is VEC3 or VEC4"),
                ));
            }
            let mut clamped = 0usize;
            let out: Vec<[f32; 4]> = v
                .chunks_exact(w)
                .map(|c| {
                    let mut rgba = [1.0f32; 4];
                    for (k, x) in c.iter().enumerate() {
                        clamped += usize::from(!(0.0..=1.0).contains(x));
                        rgba[k] = x.clamp(0.0, 1.0);
                    }
                    rgba
                })
                .collect();
            if clamped > 0 {
                ctx.note(
                    format!("{pf}.attributes.COLOR_0"),
                    format!("{clamped} colour components outside [0, 1] clamped"),
                );
            }
            out
        }
        None => Vec::new(),
    };

    let ignored: Vec<String> = p
        .attributes
        .keys()
        .filter(|s| {
            !matches!(
                s,
                Checked::Valid(
                    Semantic::Positions
                        | Semantic::Normals
                        | Semantic::Tangents
                        | Semantic::TexCoords(0)
                        | Semantic::Colors(0)
                        | Semantic::Joints(_)
                        | Semantic::Weights(_)
                )
            )
        })
        .map(semantic_name)
        .collect();
    if !ignored.is_empty() {
        ctx.note(
            format!("{pf}.attributes"),
            format!("ignored: {}", ignored.join(", ")),
        );
    }

    let morph = morph_targets(ctx, &pf, p, nv, t)?;
    let influences = skin::influences(ctx, &pf, p, nv, skins)?;
    Ok(Primitive {
        positions,
        normals,
        tangents,
        uvs,
        colors,
        indices,
        morph,
        influences,
        material: p.material.map(|m| m.value()),
        uvs_transformed,
    })
}

/// Convert `raw` (validated < V) for `mode` to a triangle list (§3.7.2.1).
fn triangulate(ctx: &mut Ctx, pf: &str, mode: Mode, raw: Vec<u32>) -> Vec<u32> {
    let n = raw.len();
    match mode {
        Mode::Triangles => {
            if !n.is_multiple_of(3) {
                ctx.note(
                    format!("{pf}.indices"),
                    format!(
                        "{n} indices is not a multiple of 3: the last {} dropped",
                        n % 3
                    ),
                );
            }
            let mut raw = raw;
            raw.truncate(n - n % 3);
            raw
        }
        Mode::TriangleStrip | Mode::TriangleFan => {
            let mut out = Vec::with_capacity(3 * n.saturating_sub(2));
            for i in 0..n.saturating_sub(2) {
                let tri = if mode == Mode::TriangleFan {
                    [raw[i + 1], raw[i + 2], raw[0]]
                } else {
                    [raw[i], raw[i + 1 + i % 2], raw[i + 2 - i % 2]]
                };
                out.extend_from_slice(&tri);
            }
            ctx.note(
                format!("{pf}.mode"),
                format!(
                    "{mode:?} converted to a list of {} triangles",
                    out.len() / 3
                ),
            );
            out
        }
        Mode::Points | Mode::Lines | Mode::LineLoop | Mode::LineStrip => {
            ctx.note(
                format!("{pf}.mode"),
                format!("{mode:?} primitive: kept its vertices with no triangles"),
            );
            Vec::new()
        }
    }
}

/// `KHR_texture_transform` of the material's base colour texture as a 2×3 row-major affine
/// `[a, b, c, d, e, f]` (`u' = a·u + b·v + c`), when it applies to `TEXCOORD_0`.
fn uv_transform(root: &json::Root, p: &json::mesh::Primitive) -> Option<[f32; 6]> {
    let info = root
        .materials
        .get(p.material?.value())?
        .pbr_metallic_roughness
        .base_color_texture
        .as_ref()?;
    texture_transform(info)
}

/// `KHR_texture_transform` of a texture reference as a 2×3 row-major affine, when present and
/// applying to `TEXCOORD_0`.
pub(super) fn texture_transform(info: &json::texture::Info) -> Option<[f32; 6]> {
    let x = info
        .extensions
        .as_ref()?
        .others
        .get("KHR_texture_transform")?;
    let set = x
        .get("texCoord")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(info.tex_coord));
    if set != 0 {
        return None;
    }
    let pair = |k: &str, d: [f32; 2]| {
        x.get(k)
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .map_or(Some(d), |a| {
                Some([a[0].as_f64()? as f32, a[1].as_f64()? as f32])
            })
    };
    let (o, s) = (pair("offset", [0.0, 0.0])?, pair("scale", [1.0, 1.0])?);
    let r = x.get("rotation").and_then(Value::as_f64).unwrap_or(0.0) as f32;
    let (sin, cos) = r.sin_cos();
    Some([cos * s[0], sin * s[1], o[0], -sin * s[0], cos * s[1], o[1]])
}

/// The primitive's targets as a CSR morph set with `t` targets over `nv` vertices.
fn morph_targets(
    ctx: &mut Ctx,
    pf: &str,
    p: &json::mesh::Primitive,
    nv: usize,
    t: usize,
) -> Result<MorphSet> {
    let targets = p.targets.as_deref().unwrap_or(&[]);
    let mut dense = Vec::with_capacity(targets.len());
    for (k, tg) in targets.iter().enumerate() {
        let mut d = DenseTarget::default();
        for (name, acc, slot) in [
            ("POSITION", tg.positions, &mut d.position),
            ("NORMAL", tg.normals, &mut d.normal),
            ("TANGENT", tg.tangents, &mut d.tangent),
        ] {
            if let Some(a) = acc {
                let v = vec3(&read_f32(ctx, a.value())?.1);
                if v.len() != nv {
                    return Err(ctx.err(
                        format!("{pf}.targets[{k}].{name}"),
                        format!("{} deltas for {nv} vertices", v.len()),
                    ));
                }
                *slot = Some(v);
            }
        }
        dense.push(d);
    }
    if dense.len() != t {
        return Err(ctx.err(
            format!("{pf}.targets"),
            format!("{} targets, the mesh has {t}", dense.len()),
        ));
    }
    MorphSet::from_dense(nv, &dense).map_err(|e| ctx.err(format!("{pf}.targets"), e.to_string()))
}

/// `extras.targetNames` (the mesh's, else its first primitive's) when it is a list of `t` strings,
/// else `target_<i>` (with a note when a
/// list was there but unusable).
fn target_names(ctx: &mut Ctx, mi: usize, m: &json::Mesh, t: usize) -> Vec<String> {
    let defaults = || (0..t).map(|i| format!("target_{i}")).collect::<Vec<_>>();
    // The mesh's extras, else the first primitive's (UniVRM and VRM 0.x exports write them there).
    let has_names = |e: &Option<Box<serde_json::value::RawValue>>| {
        e.as_ref().is_some_and(|r| {
            serde_json::from_str::<Value>(r.get()).is_ok_and(|v| v.get("targetNames").is_some())
        })
    };
    let (raw, field) = if has_names(&m.extras) {
        (
            m.extras.as_ref(),
            format!("meshes[{mi}].extras.targetNames"),
        )
    } else if let Some(p) = m.primitives.first().filter(|p| has_names(&p.extras)) {
        (
            p.extras.as_ref(),
            format!("meshes[{mi}].primitives[0].extras.targetNames"),
        )
    } else {
        (
            m.extras.as_ref(),
            format!("meshes[{mi}].extras.targetNames"),
        )
    };
    let Some(raw) = raw else {
        return defaults();
    };
    let names = match serde_json::from_str::<Value>(raw.get()) {
        Ok(v) => match v.get("targetNames") {
            None => return defaults(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>(),
            Some(_) => None,
        },
        Err(_) => None,
    };
    match names {
        Some(n) if n.len() == t => n,
        Some(n) => {
            ctx.note(
                field,
                format!(
                    "ignored: {} names for {t} morph targets; using target_<i>",
                    n.len()
                ),
            );
            defaults()
        }
        None => {
            ctx.note(field, "ignored: not a list of strings; using target_<i>");
            defaults()
        }
    }
}
