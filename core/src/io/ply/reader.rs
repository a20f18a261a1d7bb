//! A generic binary little-endian PLY reader for 3DGS files (for tests and `mien inspect`).
//!
//! Source: the PLY format (Greg Turk 1994, as documented by Paul Bourke, "PLY – Polygon File
//! Format"): a text header `ply` / `format …` / `element <name> <count>` / `property <type>
//! <name>` / `property list …` / `comment …` / `end_header`, then each element's records in
//! header order. Only `binary_little_endian 1.0` is read; the `vertex` element needs the 3DGS
//! properties (any scalar type, any order); elements before it must have scalar properties only
//! (they are skipped), elements after it are not read, but must fit in the bytes that remain: each
//! of their records takes at least its scalar properties plus, per list property, the list's
//! count field (an empty list), so a header declaring four billion faces after the vertices with
//! no bytes for them is refused as a truncated or damaged file.
//!
//! Files are read through [`crate::io::read::read_file_capped`]: regular files only, at most
//! [`MAX_PLY_BYTES`].

use std::path::Path;

use super::gaussian::{compose_covariance, logit_to_opacity, sh_dc_to_rgb};
use crate::error::{Error, Result};
use crate::sink::{SlotRange, SplatBuffers, pack4x8unorm};

/// Longest header accepted, bytes (INRIA headers are about 1.5 KiB).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Largest `.ply` file [`read_splat_ply`] reads: 2 GiB (2³¹ bytes), about 8.6 million splats in
/// the full INRIA layout (248 B each) or 31 million without `f_rest` (68 B each): above the
/// largest published 3DGS scenes (about 6 million splats), far above a face.
pub const MAX_PLY_BYTES: u64 = 1 << 31;

/// The scalar types of the PLY format (both the classic and the sized spellings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ScalarKind {
    /// `char` / `int8`.
    I8,
    /// `uchar` / `uint8`.
    U8,
    /// `short` / `int16`.
    I16,
    /// `ushort` / `uint16`.
    U16,
    /// `int` / `int32`.
    I32,
    /// `uint` / `uint32`.
    U32,
    /// `float` / `float32`.
    F32,
    /// `double` / `float64`.
    F64,
}

impl ScalarKind {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "char" | "int8" => ScalarKind::I8,
            "uchar" | "uint8" => ScalarKind::U8,
            "short" | "int16" => ScalarKind::I16,
            "ushort" | "uint16" => ScalarKind::U16,
            "int" | "int32" => ScalarKind::I32,
            "uint" | "uint32" => ScalarKind::U32,
            "float" | "float32" => ScalarKind::F32,
            "double" | "float64" => ScalarKind::F64,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            ScalarKind::I8 | ScalarKind::U8 => 1,
            ScalarKind::I16 | ScalarKind::U16 => 2,
            ScalarKind::I32 | ScalarKind::U32 | ScalarKind::F32 => 4,
            ScalarKind::F64 => 8,
        }
    }

    /// The little-endian value at the start of `b` (`None` when `b` is too short).
    pub(super) fn read(self, b: &[u8]) -> Option<f64> {
        let a = |n: usize| b.get(..n);
        Some(match self {
            ScalarKind::I8 => f64::from(a(1)?[0] as i8),
            ScalarKind::U8 => f64::from(a(1)?[0]),
            ScalarKind::I16 => f64::from(i16::from_le_bytes(a(2)?.try_into().ok()?)),
            ScalarKind::U16 => f64::from(u16::from_le_bytes(a(2)?.try_into().ok()?)),
            ScalarKind::I32 => f64::from(i32::from_le_bytes(a(4)?.try_into().ok()?)),
            ScalarKind::U32 => f64::from(u32::from_le_bytes(a(4)?.try_into().ok()?)),
            ScalarKind::F32 => f64::from(f32::from_le_bytes(a(4)?.try_into().ok()?)),
            ScalarKind::F64 => f64::from_le_bytes(a(8)?.try_into().ok()?),
        })
    }
}

/// One scalar property of the vertex element.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PlyProperty {
    /// Its name (`f_dc_0`).
    pub name: String,
    /// Its type.
    pub kind: ScalarKind,
    /// Byte offset inside a vertex record.
    pub offset: usize,
}

/// Splats read back from a 3DGS `.ply`, `(N,…)` in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SplatCloud {
    /// Centres `(N,3)`, metres (`x y z`).
    pub center: Vec<[f32; 3]>,
    /// `(N,4)`: `0.5 + C0·f_dc_k` (not clamped; trained files go outside `[0,1]`) and
    /// `sigmoid(opacity)`.
    pub rgba: Vec<[f32; 4]>,
    /// `(N,3,3)` row-major, m²: `R·diag(exp(2·scale))·Rᵀ`, `R` from the normalised `rot_*`.
    pub covariance: Vec<[[f32; 3]; 3]>,
    /// The vertex element's properties, in file order.
    pub properties: Vec<PlyProperty>,
    /// Number of `f_rest_*` properties: 0, 9, 24 or 45 (SH degree 0–3, [`SplatCloud::sh_degree`];
    /// read past, never used).
    pub sh_rest: usize,
}

/// The SH degree whose rest coefficients number `rest` (`3·((d+1)² − 1)`: 0, 9, 24, 45 for
/// degrees 0–3), or `None` when no degree gives it. Source: the INRIA 3DGS layout
/// (`GaussianModel.construct_list_of_attributes`).
pub fn sh_degree_of(rest: usize) -> Option<u8> {
    (0u8..=3).find(|&d| 3 * ((usize::from(d) + 1).pow(2) - 1) == rest)
}

impl SplatCloud {
    /// The SH degree of the file (0–3), from its `f_rest_*` count (checked when read).
    pub fn sh_degree(&self) -> u8 {
        sh_degree_of(self.sh_rest).unwrap_or(0)
    }

    /// Number of splats.
    pub fn len(&self) -> usize {
        self.center.len()
    }

    /// Whether there are no splats.
    pub fn is_empty(&self) -> bool {
        self.center.is_empty()
    }

    /// The splats as sink buffers (slot `i` = splat `i`, colour packed with [`pack4x8unorm`],
    /// which clamps to `[0,1]`) and the one range covering them (none when empty).
    ///
    /// # Errors
    /// [`Error::Limit`] when there are more than `u32::MAX` splats.
    pub fn to_buffers(&self) -> Result<(SplatBuffers, Vec<SlotRange>)> {
        let n = u32::try_from(self.len()).map_err(|_| Error::Limit {
            what: "splats in one sink".into(),
            limit: u64::from(u32::MAX),
            found: self.len() as u64,
        })?;
        let mut b = SplatBuffers::new(n);
        for (i, (c, m)) in self.center.iter().zip(&self.covariance).enumerate() {
            b.center[i] = [c[0], c[1], c[2], 0.0];
            b.color[i] = pack4x8unorm(self.rgba[i]);
            b.cov_a[i] = [m[0][0], m[0][1], m[0][2], m[1][1]];
            b.cov_b[i] = [m[1][2], m[2][2], 0.0, 0.0];
        }
        let ranges = if n > 0 {
            vec![SlotRange {
                offset: 0,
                count: n,
            }]
        } else {
            Vec::new()
        };
        Ok((b, ranges))
    }
}

/// Read a 3DGS `.ply` file (see [`parse_splat_ply`]): a regular file of at most
/// [`MAX_PLY_BYTES`].
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::Format`] (field `file type`) when it is not
/// a regular file (a FIFO, a device); [`Error::Limit`] when it is larger than [`MAX_PLY_BYTES`];
/// otherwise as [`parse_splat_ply`].
pub fn read_splat_ply(path: &Path) -> Result<SplatCloud> {
    let bytes = crate::io::read::read_file_capped(path, MAX_PLY_BYTES)?;
    parse_splat_ply(&bytes, &path.display().to_string())
}

/// One element of the header.
pub(super) struct Element {
    pub(super) name: String,
    pub(super) count: u64,
    pub(super) props: Vec<PlyProperty>,
    /// The first list property, if any (such an element cannot be skipped or read).
    pub(super) list: Option<String>,
    /// Bytes of the scalar properties of one record.
    pub(super) stride: usize,
    /// Bytes of the count fields of the list properties of one record: what an empty list takes.
    list_counts: usize,
}

impl Element {
    /// The fewest bytes `count` records can take (lists empty), `None` on overflow.
    fn min_bytes(&self) -> Option<u64> {
        self.count
            .checked_mul((self.stride + self.list_counts) as u64)
    }
}

/// Parse the bytes of a 3DGS `.ply`; `file` names it in errors.
///
/// # Errors
/// [`Error::Format`] naming `file`, the field and (for header lines, 1-based) the line or (for
/// values) the vertex index when: the magic is not `ply`; the header has no `end_header` within
/// [`MAX_HEADER_BYTES`]; the format is `ascii` or `binary_big_endian` or the version is not 1.0;
/// a line is malformed; a type is unknown; there is no `vertex` element; a required property
/// (`x y z f_dc_0..2 opacity scale_0..2 rot_0..3`) is missing or a list; the declared records
/// need more bytes than the file holds (checked before anything is allocated), including an element
/// after `vertex` whose records (at least their scalars and list counts each) cannot fit in the
/// bytes after the vertices; a value is not finite, a quaternion has zero length, or a covariance
/// overflows.
///
/// A SuperSplat compressed file (a `chunk` element and a `vertex` element of packed words) is
/// decoded into the same cloud ([`super::compressed`]).
pub fn parse_splat_ply(bytes: &[u8], file: &str) -> Result<SplatCloud> {
    let (elements, data_offset) = parse_header(bytes, file)?;
    if super::compressed::is_compressed(&elements) {
        return super::compressed::parse_compressed(bytes, file, &elements, data_offset);
    }
    let Some(vi) = elements.iter().position(|e| e.name == "vertex") else {
        return Err(Error::format(file, "element vertex", "missing"));
    };
    let mut start = data_offset as u64;
    for e in &elements[..vi] {
        if let Some(list) = &e.list {
            let field = format!("element {}.property {list}", e.name);
            return Err(Error::format(
                file,
                field,
                "a list element before `vertex` cannot be skipped",
            ));
        }
        start = start.saturating_add(e.count.saturating_mul(e.stride as u64));
    }
    let v = &elements[vi];
    if let Some(list) = &v.list {
        return Err(Error::format(
            file,
            format!("property {list}"),
            "list properties in `vertex` are not supported",
        ));
    }
    // Spherical-harmonic rest coefficients: 3·((d+1)² − 1) for degree d, named f_rest_0 … in order.
    let rest: Vec<&str> = v
        .props
        .iter()
        .map(|p| p.name.as_str())
        .filter(|n| n.starts_with("f_rest_"))
        .collect();
    if sh_degree_of(rest.len()).is_none() {
        return Err(Error::format(
            file,
            "element vertex: f_rest_*",
            format!(
                "{} f_rest properties, which no SH degree gives (0, 9, 24 or 45 for degrees 0–3)",
                rest.len()
            ),
        ));
    }
    if let Some(k) = (0..rest.len()).find(|&k| rest[k] != format!("f_rest_{k}")) {
        return Err(Error::format(
            file,
            format!("element vertex: f_rest_{k}"),
            format!(
                "found `{}` in its place (f_rest_0 … must run in order)",
                rest[k]
            ),
        ));
    }
    let find = |name: &str| {
        v.props
            .iter()
            .find(|p| p.name == name)
            .map(|p| (p.offset, p.kind))
            .ok_or_else(|| {
                Error::format(
                    file,
                    format!("property {name}"),
                    "missing from element vertex",
                )
            })
    };
    let names = [
        "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
        "rot_0", "rot_1", "rot_2", "rot_3",
    ];
    let cols = names.iter().map(|n| find(n)).collect::<Result<Vec<_>>>()?;

    let need = v
        .count
        .checked_mul(v.stride as u64)
        .and_then(|b| b.checked_add(start));
    let have = bytes.len() as u64;
    if need.is_none_or(|n| n > have) {
        let reason = format!(
            "declares {} vertices × {} bytes but only {} bytes follow the header",
            v.count,
            v.stride,
            have.saturating_sub(start)
        );
        return Err(Error::format(file, "element vertex", reason));
    }
    // Elements after `vertex` are not read, but a file whose header declares more than its bytes
    // can hold is damaged: refuse it rather than return a cloud from a file that lies.
    let mut at = need.unwrap_or(have);
    for e in &elements[vi + 1..] {
        let min = e.min_bytes();
        let left = have.saturating_sub(at);
        match min {
            Some(m) if m <= left => at += m,
            _ => {
                let per = e.stride + e.list_counts;
                let lists = if e.list_counts > 0 {
                    " (lists counted empty)"
                } else {
                    ""
                };
                return Err(Error::format(
                    file,
                    format!("element {}", e.name),
                    format!(
                        "declares {} records of at least {per} byte{} each{lists}, but only {left} \
                         bytes follow the data before it: the file is truncated or its header is wrong",
                        e.count,
                        if per == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
    }
    let n = v.count as usize;
    let data = &bytes[start as usize..];
    let mut cloud = SplatCloud {
        center: Vec::with_capacity(n),
        rgba: Vec::with_capacity(n),
        covariance: Vec::with_capacity(n),
        properties: v.props.clone(),
        sh_rest: v
            .props
            .iter()
            .filter(|p| p.name.starts_with("f_rest_"))
            .count(),
    };
    let mut vals = [0.0f64; 14];
    for (i, rec) in data.chunks_exact(v.stride).take(n).enumerate() {
        for (k, &(off, kind)) in cols.iter().enumerate() {
            let x = rec.get(off..).and_then(|b| kind.read(b));
            vals[k] = match x {
                Some(x) if x.is_finite() => x,
                _ => {
                    return Err(Error::format_at(
                        file,
                        format!("property {}", names[k]),
                        i,
                        "not finite",
                    ));
                }
            };
        }
        let scale = [vals[7], vals[8], vals[9]];
        let rot = [vals[10], vals[11], vals[12], vals[13]];
        let Some(cov) = compose_covariance(scale, rot) else {
            let (field, why) = if rot.iter().all(|&q| q == 0.0) {
                ("property rot_0..rot_3", "zero-length quaternion")
            } else {
                ("property scale_0..scale_2", "covariance overflows")
            };
            return Err(Error::format_at(file, field, i, why));
        };
        let cov32 = cov.map(|row| row.map(|c| c as f32));
        if !cov32.iter().flatten().all(|c| c.is_finite()) {
            return Err(Error::format_at(
                file,
                "property scale_0..scale_2",
                i,
                "covariance overflows f32",
            ));
        }
        cloud
            .center
            .push([vals[0] as f32, vals[1] as f32, vals[2] as f32]);
        cloud.rgba.push([
            sh_dc_to_rgb(vals[3]) as f32,
            sh_dc_to_rgb(vals[4]) as f32,
            sh_dc_to_rgb(vals[5]) as f32,
            logit_to_opacity(vals[6]) as f32,
        ]);
        cloud.covariance.push(cov32);
    }
    Ok(cloud)
}

/// The header's elements and the byte offset just past `end_header\n`.
fn parse_header(bytes: &[u8], file: &str) -> Result<(Vec<Element>, usize)> {
    let head = &bytes[..bytes.len().min(MAX_HEADER_BYTES)];
    let mut elements: Vec<Element> = Vec::new();
    let mut format_seen = false;
    let mut pos = 0usize;
    let mut line_no = 0usize;
    loop {
        let Some(len) = head[pos..].iter().position(|&b| b == b'\n') else {
            let reason = if head.is_empty() {
                "the file is empty".to_string()
            } else {
                format!("no `end_header` line in the first {} bytes", head.len())
            };
            return Err(Error::format(file, "header", reason));
        };
        let raw = &head[pos..pos + len];
        pos += len + 1;
        line_no += 1;
        let err = |reason: String| Error::format_at(file, "header line", line_no, reason);
        let line = std::str::from_utf8(raw).map_err(|_| err("not ASCII text".into()))?;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let tok: Vec<&str> = line.split_whitespace().collect();
        if line_no == 1 {
            if line != "ply" {
                return Err(Error::format(
                    file,
                    "magic",
                    "the file does not start with `ply`",
                ));
            }
            continue;
        }
        match tok.as_slice() {
            ["end_header"] => break,
            [] | ["comment", ..] | ["obj_info", ..] => {}
            ["format", fmt, version] => {
                match *fmt {
                    "binary_little_endian" => {}
                    "ascii" | "binary_big_endian" => {
                        return Err(err(format!(
                            "format `{fmt}` is not supported: only binary_little_endian"
                        )));
                    }
                    _ => return Err(err(format!("unknown format `{fmt}`"))),
                }
                if *version != "1.0" {
                    return Err(err(format!("version `{version}` is not 1.0")));
                }
                format_seen = true;
            }
            ["element", name, count] => {
                let count = count
                    .parse::<u64>()
                    .map_err(|_| err(format!("bad count `{count}`")))?;
                elements.push(Element {
                    name: name.to_string(),
                    count,
                    props: Vec::new(),
                    list: None,
                    stride: 0,
                    list_counts: 0,
                });
            }
            ["property", "list", count_kind, item_kind, name] => {
                let e = elements
                    .last_mut()
                    .ok_or_else(|| err("property before any element".into()))?;
                let count_kind = ScalarKind::parse(count_kind)
                    .ok_or_else(|| err(format!("unknown list count type `{count_kind}`")))?;
                if ScalarKind::parse(item_kind).is_none() {
                    return Err(err(format!("unknown list item type `{item_kind}`")));
                }
                e.list.get_or_insert_with(|| name.to_string());
                e.list_counts += count_kind.size();
            }
            ["property", kind, name] => {
                let e = elements
                    .last_mut()
                    .ok_or_else(|| err("property before any element".into()))?;
                let kind =
                    ScalarKind::parse(kind).ok_or_else(|| err(format!("unknown type `{kind}`")))?;
                if e.props.iter().any(|p| p.name == *name) {
                    return Err(err(format!("duplicate property `{name}`")));
                }
                e.props.push(PlyProperty {
                    name: name.to_string(),
                    kind,
                    offset: e.stride,
                });
                e.stride += kind.size();
            }
            _ => {
                return Err(err(format!(
                    "cannot parse `{}`",
                    line.chars().take(80).collect::<String>()
                )));
            }
        }
        if !format_seen && line_no == 2 {
            return Err(err("the second line must be `format …`".into()));
        }
    }
    if !format_seen {
        return Err(Error::format(file, "format", "missing"));
    }
    Ok((elements, pos))
}
