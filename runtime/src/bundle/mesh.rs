//! A branch's mesh (an OBJ over a run of the rig's vertices, checked against the rig's rest) and
//! a decoder's per-vertex features (a float32 `.npy`).

use std::path::Path;

use mien_core::gnm::bake::obj::{ObjParts, read_obj};

use super::{Branch, BranchDef, BranchLift};
use crate::asset::{Asset, Model};

/// Largest features file read, bytes.
const MAX_FEATURES: u64 = 1 << 30;

/// The rig's rest positions `(V,3)`, metres: a linear head posed at rest on the CPU, a rig's
/// bind-pose vertices.
pub(crate) fn rest_positions(asset: &Asset) -> Vec<[f32; 3]> {
    match asset.model() {
        Model::Head { pack, .. } => {
            let joints: Vec<glam::Mat4> = pack
                .rest_world
                .iter()
                .map(mien_core::gnm::forward::from_row_major)
                .collect();
            let ext = vec![0.0; pack.header.head_ext.dim()];
            let mut out = Vec::new();
            match mien_core::gnm::forward::pose(pack, &ext, &joints, &mut out) {
                Ok(()) => out,
                Err(_) => pack.neutral.clone(),
            }
        }
        Model::Rig(r) => r.positions.clone(),
    }
}

/// Resolve one branch; push its problems and return `None` when it has any.
pub(crate) fn branch(
    b: &BranchDef,
    field: &str,
    asset: &Asset,
    rest: &[[f32; 3]],
    dir: &Path,
    problems: &mut Vec<String>,
) -> Option<Branch> {
    let before = problems.len();
    let v = u64::from(asset.vertex_count());
    let [first, end] = b.vertices.unwrap_or([0, v]);
    if !(first < end && end <= v) {
        problems.push(format!(
            "{field}/vertices: [{first}, {end}) is not a non-empty run of the rig's {v} vertices"
        ));
        return None;
    }
    let lift = match &b.lift {
        None => BranchLift::Texel(mien_core::lift::TexelOptions::default()),
        Some(l) => {
            match l.kind.as_str() {
                "texel" => {
                    let mut o = mien_core::lift::TexelOptions::default();
                    if let Some(r) = l.resolution {
                        o.resolution = r;
                    }
                    if l.target.is_some() {
                        problems.push(format!(
                            "{field}/lift/target: the texel lift takes a resolution, not a target"
                        ));
                    }
                    if let Err(e) = o.validate() {
                        problems.push(format!("{field}/lift/resolution: {e}"));
                    }
                    BranchLift::Texel(o)
                }
                "surface" => {
                    let mut o = mien_core::lift::SurfaceOptions::default();
                    if let Some(t) = l.target {
                        o.target = t;
                    }
                    if l.resolution.is_some() {
                        problems.push(format!("{field}/lift/resolution: the surface lift takes a target, not a resolution"));
                    }
                    if o.target == 0 {
                        problems.push(format!("{field}/lift/target: 0 gaussians"));
                    }
                    BranchLift::Surface(o)
                }
                other => {
                    problems.push(format!(
                        "{field}/lift/kind: `{other}` is not texel or surface"
                    ));
                    BranchLift::Texel(mien_core::lift::TexelOptions::default())
                }
            }
        }
    };
    let color = b.color.unwrap_or([0.5; 3]);
    if !color.iter().all(|c| (0.0..=1.0).contains(c)) {
        problems.push(format!(
            "{field}/color: {color:?} is not three values in 0–1"
        ));
    }
    let path = dir.join(&b.mesh);
    let mesh = match read_obj(&path, ObjParts::All) {
        Ok(m) => m,
        Err(e) => {
            problems.push(format!("{field}/mesh: {e}"));
            return None;
        }
    };
    let count = (end - first) as usize;
    if mesh.positions.len() != count {
        problems.push(format!(
            "{field}/mesh: {} has {} vertices but the branch covers {count} rig vertices [{first}, {end})",
            path.display(),
            mesh.positions.len()
        ));
        return None;
    }
    // Units: the scale that lands the mesh on the rig's rest.
    let scales: &[(&str, f64)] = &[("m", 1.0), ("cm", 0.01), ("mm", 0.001)];
    let run = &rest[first as usize..end as usize];
    let err_at = |s: f64| -> (f64, usize) {
        let mut worst = (0.0f64, 0usize);
        for (i, (p, r)) in mesh.positions.iter().zip(run).enumerate() {
            let d = (0..3)
                .map(|k| (p[k] * s - f64::from(r[k])).powi(2))
                .sum::<f64>()
                .sqrt();
            if d > worst.0 || !d.is_finite() {
                worst = (d, i);
            }
        }
        worst
    };
    let tol = 1e-4; // metres
    let units = b.units.as_deref().unwrap_or("auto");
    let candidates: Vec<&(&str, f64)> = match units {
        "auto" => scales.iter().collect(),
        u => match scales.iter().find(|s| s.0 == u) {
            Some(s) => vec![s],
            None => {
                problems.push(format!("{field}/units: `{u}` is not m, cm, mm or auto"));
                return None;
            }
        },
    };
    let best = candidates
        .iter()
        .map(|s| (s.0, err_at(s.1)))
        .min_by(|a, b| a.1.0.total_cmp(&b.1.0));
    if let Some((u, (e, i))) = best
        && (e.is_nan() || e > tol)
    {
        problems.push(format!(
                "{field}/mesh: {} does not lie on the rig's rest over [{first}, {end}): vertex {i} is {:.3} mm away (units {u}; tolerance 0.1 mm)",
                path.display(),
                e * 1000.0
            ));
    }
    // Polygons fanned into triangles, in rig-vertex indices; texture coordinates per corner.
    let mut triangles = Vec::new();
    let mut corner_uv = Vec::new();
    let mut all_uv = !mesh.texcoords.is_empty();
    for p in 0..mesh.polygon_count() {
        let poly = mesh.polygon(p);
        for k in 1..poly.len().saturating_sub(1) {
            let c = [poly[0], poly[k], poly[k + 1]];
            triangles.push(c.map(|(v, _)| first as u32 + v));
            if all_uv {
                let uv = c.map(|(_, t)| {
                    mesh.texcoords
                        .get(t as usize)
                        .map(|x| [x[0] as f32, x[1] as f32])
                });
                if uv.iter().all(Option::is_some) {
                    corner_uv.push(uv.map(|x| x.unwrap_or_default()));
                } else {
                    all_uv = false;
                }
            }
        }
    }
    if triangles.is_empty() {
        problems.push(format!("{field}/mesh: {} has no polygons", path.display()));
    }
    if matches!(lift, BranchLift::Texel(_)) && !all_uv {
        problems.push(format!(
            "{field}/mesh: {} lacks texture coordinates on some corners; the texel lift needs them (use \"lift\": {{\"kind\": \"surface\"}})",
            path.display()
        ));
    }
    if problems.len() > before {
        return None;
    }
    Some(Branch {
        name: b.name.clone(),
        vertices: [first as u32, end as u32],
        triangles,
        corner_uv: all_uv.then_some(corner_uv),
        lift,
        color,
        decoders: Vec::new(),
        mesh_bytes: std::fs::metadata(&path).map_or(0, |m| m.len()),
    })
}

/// A float32 (or float16) `.npy` of shape `(V, width)`: its values row-major and the file's bytes.
pub(crate) fn read_features(path: &Path, width: usize) -> Result<(Vec<f32>, u64), String> {
    let name = path.display().to_string();
    let bytes =
        mien_core::io::read::read_file_capped(path, MAX_FEATURES).map_err(|e| e.to_string())?;
    let npy =
        npyz::NpyFile::new(&bytes[..]).map_err(|e| format!("{name}: not a .npy file: {e}"))?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 || shape[1] != width as u64 {
        return Err(format!(
            "{name}: shape {shape:?}, but the decoder takes {width} features per vertex: (V, {width})"
        ));
    }
    if npy.order() != npyz::Order::C {
        return Err(format!(
            "{name}: Fortran order; write it C-ordered (numpy's default)"
        ));
    }
    let descr = npy.dtype().descr();
    let values: Vec<f32> = match descr.trim_matches('\'') {
        "<f4" => npy.into_vec::<f32>().map_err(|e| format!("{name}: {e}"))?,
        "<f2" => npy
            .into_vec::<half::f16>()
            .map_err(|e| format!("{name}: {e}"))?
            .into_iter()
            .map(f32::from)
            .collect(),
        other => {
            return Err(format!(
                "{name}: dtype {other}; features are float32 (<f4) or float16 (<f2)"
            ));
        }
    };
    if let Some(i) = values.iter().position(|x| !x.is_finite()) {
        return Err(format!(
            "{name}: row {} holds {} (not finite)",
            i / width.max(1),
            values[i]
        ));
    }
    Ok((values, bytes.len() as u64))
}
