//! A folder of blendshape OBJs → a pack: one neutral (the file named by `--neutral`, else the one
//! `.obj` whose name contains `neutral`), every other `.obj` a shape named by its file stem, each a
//! full mesh with the neutral's vertex count; deltas = shape − neutral, in f64, times the unit
//! factor. Topology (polygons, texture coordinates) comes from the neutral; a shape's faces, when it
//! has any, must list the same vertices polygon by polygon (else the bake is refused, naming the
//! shape's file and the first polygon that differs); a shape of positions only is accepted and
//! noted. Other files (`.mtl`, `.json`, licences) and hidden files are ignored; sub-folders are
//! not entered. Skin: one root joint, identity.
//!
//! Polygons: a triangle is a face; a quad is kept in `quads` and split `(0,1,2) (0,2,3)` into
//! `faces`; a larger polygon is fanned from its first corner (counted in the notes). Texture
//! coordinates are stored per vertex only when every corner of a vertex names the same `vt` value;
//! a head with UV seams (ICT-FaceKit: 28,911 `vt` for 26,719 `v`) gets no `uv` blob, and the report
//! says how many vertices have several.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::assemble::{Collected, SkinData, assemble};
use super::eyes::{EyeSource, ICT_EYEBALLS, ICT_VERTICES, eyes};
use super::obj::{ObjMesh, ObjParts, read_obj};
use super::{BakeOptions, Baked, Progress, file_label};
use crate::error::{Error, Result};
use crate::gnm::pack::MAX_COEFFS;

/// ICT-FaceKit's neutral file name (recognised for its eyeball range).
const ICT_NEUTRAL: &str = "generic_neutral_mesh.obj";

/// The `.obj` files of `dir` (regular files, not hidden), sorted by name.
fn obj_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let what = || format!("OBJ folder {}", dir.display());
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(Error::Invalid {
                what: what(),
                reason: format!("file name {:?} is not UTF-8", entry.file_name()),
            });
        };
        let is_obj = name.len() > 4 && name[name.len() - 4..].eq_ignore_ascii_case(".obj");
        if name.starts_with('.') || !is_obj {
            continue;
        }
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            // A shape the user meant to bake must not vanish from the pack.
            return Err(Error::Invalid {
                what: what(),
                reason: format!(
                    "{name} is not a readable regular file (a dangling link, a folder or a device); remove or fix it"
                ),
            });
        }
        if out.len() > MAX_COEFFS as usize {
            return Err(Error::Limit {
                what: format!("{}: .obj files", what()),
                limit: MAX_COEFFS + 1,
                found: out.len() as u64 + 1,
            });
        }
        out.push((name, path));
    }
    out.sort();
    Ok(out)
}

/// Triangles, quads and the fan count of the neutral's polygons.
fn topology(mesh: &ObjMesh) -> (Vec<[u32; 3]>, Vec<[u32; 4]>, usize) {
    let (mut tris, mut quads, mut fanned) = (Vec::new(), Vec::new(), 0);
    for i in 0..mesh.polygon_count() {
        let c: Vec<u32> = mesh.polygon(i).iter().map(|x| x.0).collect();
        if c.len() == 4 {
            quads.push([c[0], c[1], c[2], c[3]]);
        } else if c.len() > 4 {
            fanned += 1;
        }
        for k in 1..c.len() - 1 {
            tris.push([c[0], c[k], c[k + 1]]);
        }
    }
    (tris, quads, fanned)
}

/// The first polygon (zero-based) where a shape's faces differ from the neutral's, by vertex indices
/// (texture coordinates may differ), with the reason; `None` when they agree.
fn topology_difference(
    neutral: &ObjMesh,
    shape: &ObjMesh,
    neutral_name: &str,
) -> Option<(usize, String)> {
    let (n, s) = (neutral.polygon_count(), shape.polygon_count());
    let one_based = |p: &[(u32, u32)]| {
        p.iter()
            .map(|c| (c.0 + 1).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for i in 0..n.min(s) {
        let (a, b) = (neutral.polygon(i), shape.polygon(i));
        if !a.iter().map(|c| c.0).eq(b.iter().map(|c| c.0)) {
            return Some((
                i,
                format!(
                    "polygon {} is `f {}`, the neutral {neutral_name} has `f {}` (a different topology)",
                    i + 1,
                    one_based(b),
                    one_based(a)
                ),
            ));
        }
    }
    (n != s).then(|| {
        (
            n.min(s),
            format!("{s} polygons, the neutral {neutral_name} has {n} (a different topology)"),
        )
    })
}

/// Per-vertex texture coordinates when consistent, and what happened.
fn per_vertex_uv(mesh: &ObjMesh) -> (Option<Vec<[f32; 2]>>, String) {
    if mesh.texcoords.is_empty() {
        return (None, "none in the source".into());
    }
    let mut uv: Vec<Option<[f64; 2]>> = vec![None; mesh.positions.len()];
    let mut several = vec![false; mesh.positions.len()];
    for &(v, t) in &mesh.corners {
        if t == u32::MAX {
            continue;
        }
        let tc = mesh.texcoords[t as usize];
        match uv[v as usize] {
            None => uv[v as usize] = Some(tc),
            Some(old) if old != tc => several[v as usize] = true,
            Some(_) => {}
        }
    }
    let seams = several.iter().filter(|x| **x).count();
    if seams > 0 {
        return (
            None,
            format!(
                "omitted: {seams} vertices have several texture coordinates (UV seams); the pack's uv is one per vertex"
            ),
        );
    }
    let missing = uv.iter().filter(|x| x.is_none()).count();
    let out = uv
        .into_iter()
        .map(|t| t.map_or([0.0; 2], |t| [t[0] as f32, t[1] as f32]))
        .collect();
    (
        Some(out),
        if missing > 0 {
            format!("stored ({missing} vertices without a texture coordinate get (0, 0))")
        } else {
            "stored".into()
        },
    )
}

pub(super) fn bake(dir: &Path, options: &BakeOptions, progress: Progress<'_>) -> Result<Baked> {
    let files = obj_files(dir)?;
    let what = || format!("OBJ folder {}", dir.display());
    if files.is_empty() {
        return Err(Error::Invalid {
            what: what(),
            reason: "holds no .obj files (a neutral and one file per shape)".into(),
        });
    }
    let neutral_at =
        match &options.neutral {
            Some(n) => files
                .iter()
                .position(|(f, _)| f == n)
                .ok_or_else(|| Error::Invalid {
                    what: what(),
                    reason: format!("the neutral `{n}` is not one of its .obj files"),
                })?,
            None => {
                let c: Vec<usize> = (0..files.len())
                    .filter(|&i| files[i].0.to_ascii_lowercase().contains("neutral"))
                    .collect();
                match c.as_slice() {
                    [i] => *i,
                    [] => return Err(Error::Invalid {
                        what: what(),
                        reason:
                            "no .obj file has `neutral` in its name; name it with --neutral FILE"
                                .into(),
                    }),
                    _ => {
                        return Err(Error::Invalid {
                            what: what(),
                            reason: format!(
                                "several neutral candidates ({}); choose one with --neutral FILE",
                                c.iter()
                                    .map(|&i| files[i].0.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        });
                    }
                }
            }
        };
    let total = files.len();
    let (neutral_name, neutral_path) = files[neutral_at].clone();
    progress(0, total, &neutral_name);
    let mesh = read_obj(&neutral_path, ObjParts::All)?;
    let v = mesh.positions.len();
    if v == 0 {
        return Err(Error::format(
            neutral_path.display().to_string(),
            "v",
            "the neutral has no vertices",
        ));
    }
    let extent = (0..3)
        .map(|k| {
            let lo = mesh
                .positions
                .iter()
                .map(|p| p[k])
                .fold(f64::INFINITY, f64::min);
            let hi = mesh
                .positions
                .iter()
                .map(|p| p[k])
                .fold(f64::NEG_INFINITY, f64::max);
            hi - lo
        })
        .fold(0.0, f64::max);
    let units = options.units.resolve(extent, false)?;
    let f = units.to_metres;
    let neutral: Vec<[f64; 3]> = mesh.positions.iter().map(|p| p.map(|x| x * f)).collect();
    let (triangles, quads, fanned) = topology(&mesh);
    let (uv, uv_note) = per_vertex_uv(&mesh);
    let mut notes = Vec::new();
    if fanned > 0 {
        notes.push(format!(
            "{fanned} polygons of more than 4 corners fanned into triangles"
        ));
    }
    for (k, n) in &mesh.skipped {
        notes.push(format!("{neutral_name}: skipped {n} `{k}` statements"));
    }
    let (range, label) = match options.eyes {
        EyeSource::None => (None, String::new()),
        EyeSource::Range { first, last } => (Some((first, last)), format!("range {first}-{last}")),
        EyeSource::Auto if neutral_name == ICT_NEUTRAL && v == ICT_VERTICES => (
            Some(ICT_EYEBALLS),
            format!("ICT-FaceKit eyeballs {}-{}", ICT_EYEBALLS.0, ICT_EYEBALLS.1),
        ),
        EyeSource::Auto => (None, String::new()),
    };
    let (eye_positions, eye_weights, eye_fig) = eyes(&neutral, range, &label)?;

    let shapes: Vec<&(String, PathBuf)> = files
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != neutral_at)
        .map(|(_, f)| f)
        .collect();
    let names: Vec<String> = shapes
        .iter()
        .map(|(n, _)| n[..n.len() - 4].to_owned())
        .collect();
    let provenance = json!({
        "kind": "obj-folder",
        "neutral": neutral_name,
        "shapes": shapes.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
    });
    let collected = Collected {
        kind: "obj-folder",
        input: file_label(dir),
        neutral,
        triangles,
        quads: (!quads.is_empty()).then_some(quads),
        uv,
        uv_note,
        names,
        skin: SkinData::single_root(v),
        eye_positions,
        eye_weights,
        eyes: eye_fig,
        units,
        provenance,
        notes,
    };
    let raw_neutral = &mesh.positions;
    let mut done = 1;
    let mut skipped_notes = Vec::new();
    let mut baked = assemble(collected, &mut |src, out| {
        let (name, path) = shapes[src];
        progress(done, total, name);
        let shape = read_obj(path, ObjParts::All)?;
        done += 1;
        if shape.positions.len() != v {
            return Err(Error::format(
                path.display().to_string(),
                "v",
                format!(
                    "{} vertices, the neutral {neutral_name} has {v}",
                    shape.positions.len()
                ),
            ));
        }
        if shape.polygon_count() == 0 {
            skipped_notes.push(format!("{name}: no faces; its topology was not compared"));
        } else if let Some((i, reason)) = topology_difference(&mesh, &shape, &neutral_name) {
            return Err(Error::format_at(path.display().to_string(), "f", i, reason));
        }
        for (k, n) in &shape.skipped {
            skipped_notes.push(format!("{name}: skipped {n} `{k}` statements"));
        }
        out.extend(
            shape
                .positions
                .iter()
                .zip(raw_neutral)
                .map(|(s, n)| [0, 1, 2].map(|k| (s[k] - n[k]) * f)),
        );
        Ok(())
    })?;
    progress(total, total, "");
    baked.report.notes.extend(skipped_notes);
    Ok(baked)
}
