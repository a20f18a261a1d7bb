//! A strict, bounded Wavefront OBJ reader for blendshape exports: positions (`v`), texture
//! coordinates (`vt`) and polygons (`f` with `v`, `v/vt`, `v//vn`, `v/vt/vn` corners, negative
//! indices relative to the elements read so far). Everything else a mesh export writes (`vn`, `o`,
//! `g`, `s`, `usemtl`, `mtllib`, `l`, `p`, comments) is skipped; any other keyword is skipped and
//! listed in [`ObjMesh::skipped`] so it reaches the bake report.
//!
//! Bad input is refused with [`Error::Format`] naming the file, the line and the field
//! (`line 12: v.y: `1.2.3` is not a number`): a non-numeric or non-finite number, too few or too
//! many numbers, a face index of 0 or outside the elements defined before it, a polygon of fewer
//! than 3 corners. Sizes are capped ([`MAX_OBJ_BYTES`], [`MAX_OBJ_VERTICES`], [`MAX_OBJ_CORNERS`],
//! [`MAX_POLYGON_CORNERS`]) and checked before the arrays grow past them, so no file can make the
//! reader allocate without bound.
//!
//! Source: the Wavefront OBJ specification (Appendix B1 of the Advanced Visualizer manual: `v x y z
//! [w]`, `vt u [v [w]]`, `f v1/vt1/vn1 …`, negative references), and the vertex-colour extension
//! (`v x y z r g b`) that MeshLab, ZBrush and Blender write.

use std::path::Path;

use crate::error::{Error, Result};

/// Largest OBJ file read, bytes (1 GiB: forty times a 26k-vertex head at full float precision).
pub const MAX_OBJ_BYTES: u64 = 1 << 30;
/// Largest vertex (`v`) or texture-coordinate (`vt`) count of one file (the pack's own cap).
pub const MAX_OBJ_VERTICES: usize = crate::gnm::pack::MAX_VERTICES as usize;
/// Largest number of polygon corners of one file (all `f` corners together).
pub const MAX_OBJ_CORNERS: usize = 1 << 26;
/// Largest number of corners of one polygon.
pub const MAX_POLYGON_CORNERS: usize = 256;

/// What to read from a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjParts {
    /// Positions only (texture coordinates and polygons skipped).
    Positions,
    /// Positions, texture coordinates and polygons (the neutral).
    All,
}

/// An OBJ file as read: positions in the file's units, polygons as corner lists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjMesh {
    /// Positions `(V,3)`, the file's units, parsed as f64 (correctly rounded from the text).
    pub positions: Vec<[f64; 3]>,
    /// Texture coordinates `(T,2)` (`u`, `v`; a missing `v` reads 0).
    pub texcoords: Vec<[f64; 2]>,
    /// Start of each polygon in `corners` `(F+1,)` (empty when polygons were not read).
    pub polygon_start: Vec<u32>,
    /// Each corner's `(vertex, texcoord)`, zero-based; `u32::MAX` for a corner without `vt`.
    pub corners: Vec<(u32, u32)>,
    /// Keywords skipped that a mesh export does not normally write, with their counts (first 16
    /// distinct keywords).
    pub skipped: Vec<(String, usize)>,
}

impl ObjMesh {
    /// Number of polygons.
    pub fn polygon_count(&self) -> usize {
        self.polygon_start.len().saturating_sub(1)
    }

    /// The corners of polygon `i`.
    ///
    /// # Panics
    /// When `i >= polygon_count()`.
    pub fn polygon(&self, i: usize) -> &[(u32, u32)] {
        &self.corners[self.polygon_start[i] as usize..self.polygon_start[i + 1] as usize]
    }
}

/// Keywords a mesh export writes that carry nothing the baker needs.
const QUIET_KEYWORDS: [&str; 9] = ["vn", "o", "g", "s", "usemtl", "mtllib", "l", "p", "mg"];

/// Read `path` (a regular file of at most [`MAX_OBJ_BYTES`]).
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::Limit`] for a file or a count over the caps;
/// [`Error::Format`] naming the file, the line and the field for malformed content.
pub fn read_obj(path: &Path, parts: ObjParts) -> Result<ObjMesh> {
    let bytes = crate::io::read::read_file_capped(path, MAX_OBJ_BYTES)?;
    parse_obj(&bytes, &path.display().to_string(), parts)
}

/// Parse OBJ text; `file` names the source in messages.
///
/// # Errors
/// As [`read_obj`].
pub fn parse_obj(bytes: &[u8], file: &str, parts: ObjParts) -> Result<ObjMesh> {
    let mut mesh = ObjMesh::default();
    let mut normals = 0usize;
    let all = parts == ObjParts::All;
    if all {
        mesh.polygon_start.push(0);
    }
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = n + 1;
        let raw = raw.split(|&b| b == b'#').next().unwrap_or_default();
        let mut tokens = raw.split(u8::is_ascii_whitespace).filter(|t| !t.is_empty());
        let Some(keyword) = tokens.next() else {
            continue;
        };
        let bad = |field: &str, reason: String| {
            Error::format(file, format!("line {line_no}: {field}"), reason)
        };
        match keyword {
            b"v" => {
                if mesh.positions.len() >= MAX_OBJ_VERTICES {
                    return Err(Error::Limit {
                        what: format!("{file}: line {line_no}: vertices"),
                        limit: MAX_OBJ_VERTICES as u64,
                        found: mesh.positions.len() as u64 + 1,
                    });
                }
                let mut p = [0.0f64; 3];
                let mut count = 0usize;
                for (k, t) in tokens.enumerate() {
                    let x = number(t).map_err(|r| bad(&format!("v.{}", axis_name(k)), r))?;
                    if k < 3 {
                        if x.abs() > MAX_OBJ_COORDINATE {
                            return Err(bad(
                                &format!("v.{}", axis_name(k)),
                                format!("{x:e} is beyond ±1e6, the bound on any mien position"),
                            ));
                        }
                        p[k] = x;
                    }
                    count = k + 1;
                }
                if !matches!(count, 3 | 4 | 6 | 7) {
                    return Err(bad(
                        "v",
                        format!(
                            "{count} numbers; a vertex has x y z, then optionally w, r g b, or w r g b"
                        ),
                    ));
                }
                mesh.positions.push(p);
            }
            b"vt" if all => {
                if mesh.texcoords.len() >= MAX_OBJ_VERTICES {
                    return Err(Error::Limit {
                        what: format!("{file}: line {line_no}: texture coordinates"),
                        limit: MAX_OBJ_VERTICES as u64,
                        found: mesh.texcoords.len() as u64 + 1,
                    });
                }
                let mut uv = [0.0f64; 2];
                let mut count = 0usize;
                for (k, t) in tokens.enumerate() {
                    let x = number(t).map_err(|r| {
                        bad(
                            &format!("vt.{}", ["u", "v", "w"].get(k).unwrap_or(&"extra")),
                            r,
                        )
                    })?;
                    if k < 2 {
                        uv[k] = x;
                    }
                    count = k + 1;
                }
                if !(1..=3).contains(&count) {
                    return Err(bad(
                        "vt",
                        format!("{count} numbers; a texture coordinate has u [v [w]]"),
                    ));
                }
                mesh.texcoords.push(uv);
            }
            b"vn" => normals += 1,
            b"f" if all => {
                let start = mesh.corners.len();
                for (k, t) in tokens.enumerate() {
                    if k >= MAX_POLYGON_CORNERS {
                        return Err(Error::Limit {
                            what: format!("{file}: line {line_no}: corners of one polygon"),
                            limit: MAX_POLYGON_CORNERS as u64,
                            found: k as u64 + 1,
                        });
                    }
                    if mesh.corners.len() >= MAX_OBJ_CORNERS {
                        return Err(Error::Limit {
                            what: format!("{file}: line {line_no}: polygon corners"),
                            limit: MAX_OBJ_CORNERS as u64,
                            found: mesh.corners.len() as u64 + 1,
                        });
                    }
                    let corner = corner(t, mesh.positions.len(), mesh.texcoords.len(), normals)
                        .map_err(|r| bad(&format!("f corner {}", k + 1), r))?;
                    mesh.corners.push(corner);
                }
                let count = mesh.corners.len() - start;
                if count < 3 {
                    return Err(bad(
                        "f",
                        format!("{count} corners; a polygon needs at least 3"),
                    ));
                }
                mesh.polygon_start.push(mesh.corners.len() as u32);
            }
            b"vt" | b"f" => {}
            k => {
                let k = String::from_utf8_lossy(k);
                if !QUIET_KEYWORDS.contains(&k.as_ref()) {
                    let full = mesh.skipped.len() >= 16;
                    match mesh.skipped.iter_mut().find(|(s, _)| *s == k) {
                        Some((_, c)) => *c += 1,
                        None if !full => mesh.skipped.push((k.into_owned(), 1)),
                        None => {}
                    }
                }
            }
        }
    }
    Ok(mesh)
}

fn axis_name(k: usize) -> &'static str {
    ["x", "y", "z", "w", "r", "g", "b"]
        .get(k)
        .copied()
        .unwrap_or("extra")
}

/// The largest |coordinate| of a vertex position, in the file's units (mien bounds every position
/// at ±1e6 m; a head in centimetres stays far inside it).
const MAX_OBJ_COORDINATE: f64 = 1.0e6;

/// A finite decimal number.
fn number(t: &[u8]) -> std::result::Result<f64, String> {
    let s = std::str::from_utf8(t).map_err(|_| "not UTF-8 text".to_owned())?;
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("`{s}` is not finite")),
        Err(_) => Err(format!(
            "`{}` is not a number",
            s.chars().take(40).collect::<String>()
        )),
    }
}

/// One OBJ reference (1-based, or negative = relative to `count`) → a zero-based index.
fn reference(t: &[u8], count: usize, what: &str) -> std::result::Result<u32, String> {
    let s = std::str::from_utf8(t).map_err(|_| "not UTF-8 text".to_owned())?;
    let i: i64 = s.parse().map_err(|_| {
        format!(
            "{what} index `{}` is not an integer",
            s.chars().take(40).collect::<String>()
        )
    })?;
    let zero_based = if i > 0 { i - 1 } else { count as i64 + i };
    if i == 0 || zero_based < 0 || zero_based >= count as i64 {
        return Err(format!(
            "{what} index {i} is outside the {count} defined before this line"
        ));
    }
    Ok(zero_based as u32)
}

/// A face corner `v`, `v/vt`, `v//vn` or `v/vt/vn` → (vertex, texcoord or `u32::MAX`).
fn corner(t: &[u8], nv: usize, nvt: usize, nvn: usize) -> std::result::Result<(u32, u32), String> {
    let mut parts = t.split(|&b| b == b'/');
    let v = reference(parts.next().unwrap_or_default(), nv, "vertex")?;
    let vt = match parts.next() {
        None | Some(b"") => u32::MAX,
        Some(x) => reference(x, nvt, "texture coordinate")?,
    };
    if let Some(x) = parts.next() {
        reference(x, nvn, "normal")?;
    }
    if parts.next().is_some() {
        return Err(format!(
            "`{}` has more than three parts",
            String::from_utf8_lossy(t)
        ));
    }
    Ok((v, vt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_and_references() {
        let m = parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0 1\nv 0 1 0 0.5 0.5 0.5\nvt 0 0\nvt 1\nvn 0 0 1\nf 1/1/1 2/2/1 3//1 -1\n", "t.obj", ObjParts::All).unwrap();
        assert_eq!(m.positions.len(), 4);
        assert_eq!(m.texcoords, vec![[0.0, 0.0], [1.0, 0.0]]);
        assert_eq!(
            m.polygon(0),
            &[(0, 0), (1, 1), (2, u32::MAX), (3, u32::MAX)]
        );
        let e = parse_obj(b"v 0 0 0\nf 1 2 1\n", "t.obj", ObjParts::All)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.obj: line 2: f corner 2") && e.contains("outside the 1"),
            "{e}"
        );
        let e = parse_obj(b"v 0 0 0\n\nv 1 nan 0\n", "t.obj", ObjParts::Positions)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3: v.y") && e.contains("not finite"), "{e}");
        let e = parse_obj(b"v 0 0\n", "t.obj", ObjParts::Positions)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1: v: 2 numbers"), "{e}");
        let m = parse_obj(
            b"v 0 0 0 # c\ncurv 1 2\nf 9 9 9\n",
            "t.obj",
            ObjParts::Positions,
        )
        .unwrap();
        assert_eq!(m.skipped, vec![("curv".to_owned(), 1)]);
        assert_eq!(m.polygon_count(), 0);
    }
}
