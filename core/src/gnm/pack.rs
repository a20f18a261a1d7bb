//! The `.aosrig` container of a linear head (docs/formats/aosrig.md): an 8-byte magic, a header
//! length, a JSON header with a fixed key order, then 8-byte-aligned blobs the header describes
//! (name, dtype, shape, offset, length). Packing the same input twice gives the same bytes.
//!
//! Source: seed 000 (`AosRigHeader`, `AosRigPack`, `parseAosRig`: refuse anything it cannot trust,
//! since a head that silently loads half its basis moves a little and looks nearly right).

use serde::{Deserialize, Serialize};

use super::layout::HeadExtLayout;
use crate::error::{Error, Result};

/// The first 8 bytes of every pack (`\x89` catches 7-bit transfers, `\n` line-ending rewrites).
pub const MAGIC: [u8; 8] = *b"\x89AOSRIG\n";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;
/// Largest header, bytes.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// Largest vertex count of a pack.
pub const MAX_VERTICES: u64 = 1 << 22;
/// Largest coefficient count.
pub const MAX_COEFFS: u64 = 4096;
/// Largest joint count.
pub const MAX_JOINTS: u64 = 1024;
/// Largest basis, bytes (fp16): 2 GiB.
pub const MAX_BASIS_BYTES: u64 = 2 << 30;

/// Largest pack file read: the largest basis plus 1 GiB for everything else.
pub const MAX_FILE_BYTES: u64 = MAX_BASIS_BYTES + (1 << 30);

/// A joint of the pack's own skeleton.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackJoint {
    /// Name (body joints: `neck_01`, `head`, eyes…).
    pub name: String,
    /// Parent index, -1 for a root.
    pub parent: i32,
}

/// One blob's description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackBuffer {
    /// Blob name.
    pub name: String,
    /// `f32`, `f16`, `u32`, `u16`, `i32`.
    pub dtype: String,
    /// Shape (element counts per axis).
    pub shape: Vec<u64>,
    /// Offset from the start of the blob area, bytes (a multiple of 8).
    pub offset: u64,
    /// Length, bytes (= product of the shape × the dtype size).
    pub length: u64,
}

/// The JSON header, keys in this order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PackHeader {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// `gnm`.
    pub model: String,
    /// `m` or `cm` (converted to metres on load, and reported).
    pub units: String,
    /// V.
    pub vertex_count: u64,
    /// E, the expression coefficients (the layout's `expr_dim`).
    pub coeff_count: u64,
    /// The control layout.
    pub head_ext: HeadExtLayout,
    /// Skin influences per vertex (4).
    pub max_influence: u64,
    /// The pack's skeleton.
    pub joints: Vec<PackJoint>,
    /// The eye joints' indices `(left, right)` into `joints`, if the skeleton has them.
    pub eye_joints: Option<[u32; 2]>,
    /// Row-major 4×4: head-local → the body's bind space (identity when none).
    pub bind_transform: [f32; 16],
    /// A display name per expression coefficient `(E,)` (the source shape a baked coefficient came
    /// from), or empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// The ARKit-52 → coefficient table baked with the pack (see [`super::arkit`]), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arkit: Option<super::arkit::ArkitGnmTable>,
    /// Free-form provenance written by the packer; never read by the runtime.
    pub source: serde_json::Value,
    /// The blobs.
    pub buffers: Vec<PackBuffer>,
}

/// A linear head, parsed and validated. Arrays in metres.
#[derive(Clone, Debug, PartialEq)]
pub struct GnmPack {
    /// The header (buffers as read).
    pub header: PackHeader,
    /// Neutral positions `(V,3)`, metres, head-local.
    pub neutral: Vec<[f32; 3]>,
    /// The expression basis `(V,E,3)` as fp16, vertex-major, two per `u32` (low half first).
    pub basis: Vec<u32>,
    /// Per-coefficient scale `(E,)`: delta = scale × coefficient × basis.
    pub basis_scale: Vec<f32>,
    /// Eye rotation centres `(2,3)`, metres, head-local (left, right).
    pub eye_positions: [[f32; 3]; 2],
    /// Per-vertex eye weights `(2,V)`: how much each vertex turns with each eye.
    pub eye_weights: Vec<f32>,
    /// Triangles `(F,3)`.
    pub faces: Vec<[u32; 3]>,
    /// Quads `(Q,4)`, when the source had them.
    pub quads: Option<Vec<[u32; 4]>>,
    /// Texture coordinates `(V,2)`.
    pub uv: Option<Vec<[f32; 2]>>,
    /// Neck-seam displacement `(V,3)`, metres, head-local.
    pub seam: Option<Vec<[f32; 3]>>,
    /// Skin joints `(V,4)` into `header.joints`.
    pub skin_index: Vec<[u16; 4]>,
    /// Skin weights `(V,4)` (stored as f16).
    pub skin_weight: Vec<[f32; 4]>,
    /// Rest world matrices `(J,16)`, row-major, metres.
    pub rest_world: Vec<[f32; 16]>,
}

/// The blobs a version-1 pack may hold, in the order the writer puts them.
pub const BLOB_NAMES: [&str; 13] = [
    "neutral",
    "basis",
    "basis_scale",
    "eye_positions",
    "eye_weights",
    "faces",
    "quads",
    "uv",
    "seam",
    "skin_index",
    "skin_weight",
    "joint_parents",
    "rest_world",
];

/// Every f16 bit pattern as f32 (the exact value), built once.
fn f16_table() -> &'static [f32] {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=u16::MAX)
            .map(|h| half::f16::from_bits(h).to_f32())
            .collect()
    })
}

fn dtype_size(d: &str) -> Option<u64> {
    Some(match d {
        "f32" | "u32" | "i32" => 4,
        "f16" | "u16" => 2,
        _ => return None,
    })
}

/// Blob writer: 8-byte aligned, in call order.
struct Blobs {
    bytes: Vec<u8>,
    buffers: Vec<PackBuffer>,
}

impl Blobs {
    fn push(&mut self, name: &str, dtype: &str, shape: &[u64], data: &[u8]) {
        while self.bytes.len() % 8 != 0 {
            self.bytes.push(0);
        }
        self.buffers.push(PackBuffer {
            name: name.into(),
            dtype: dtype.into(),
            shape: shape.to_vec(),
            offset: self.bytes.len() as u64,
            length: data.len() as u64,
        });
        self.bytes.extend_from_slice(data);
    }
}

impl GnmPack {
    /// V.
    pub fn vertex_count(&self) -> usize {
        self.neutral.len()
    }

    /// E.
    pub fn coeff_count(&self) -> usize {
        self.basis_scale.len()
    }

    /// The basis entry `(v, e, axis)` as f32.
    pub fn basis_at(&self, v: usize, e: usize, axis: usize) -> f32 {
        self.half_at((v * self.coeff_count() + e) * 3 + axis)
    }

    /// Vertex `v`'s basis row `(E,3)` decoded into `out` (`3E` values, exact), with SIMD where the
    /// CPU has it (`half`'s slice conversion).
    ///
    /// # Panics
    /// Never for `v < V` and `out.len() == 3E` (callers size it; other lengths fill what fits).
    pub fn basis_row(&self, v: usize, out: &mut [f32]) {
        use half::slice::HalfFloatSliceExt;
        let n = self.coeff_count() * 3;
        let halves: &[u16] = bytemuck::cast_slice(&self.basis);
        let start = (v * n).min(halves.len());
        let end = (start + n.min(out.len())).min(halves.len());
        let row: &[half::f16] = bytemuck::cast_slice(&halves[start..end]);
        row.convert_to_f32_slice(&mut out[..end - start]);
    }

    /// The basis half at flat index `i` of `(V,E,3)` as f32 (exact: every f16 is an f32), through
    /// a 65,536-entry table built once.
    #[inline]
    pub fn half_at(&self, i: usize) -> f32 {
        let w = self.basis[i / 2];
        let h = if i % 2 == 0 {
            w as u16
        } else {
            (w >> 16) as u16
        };
        f16_table()[usize::from(h)]
    }

    /// Total bytes of the arrays, for the memory report.
    pub fn byte_len(&self) -> u64 {
        let v = self.vertex_count() as u64;
        v * 12
            + self.basis.len() as u64 * 4
            + self.basis_scale.len() as u64 * 4
            + 2 * v * 4
            + self.faces.len() as u64 * 12
            + v * 8
            + v * 8
            + self.rest_world.len() as u64 * 64
    }

    /// Serialise: magic, header length, header JSON (keys in [`PackHeader`] order, buffers
    /// rewritten from the blobs), padding to 8, blobs. Deterministic.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the arrays disagree with each other (the same checks as parsing).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        super::check::shapes(self, "<pack being written>")?;
        let v = self.vertex_count() as u64;
        let e = self.coeff_count() as u64;
        let j = self.header.joints.len() as u64;
        let mut b = Blobs {
            bytes: Vec::new(),
            buffers: Vec::new(),
        };
        b.push(
            "neutral",
            "f32",
            &[v, 3],
            bytemuck::cast_slice(&self.neutral),
        );
        b.push(
            "basis",
            "f16",
            &[v, e, 3],
            &bytemuck::cast_slice::<u32, u8>(&self.basis)[..(v * e * 3 * 2) as usize],
        );
        b.push(
            "basis_scale",
            "f32",
            &[e],
            bytemuck::cast_slice(&self.basis_scale),
        );
        b.push(
            "eye_positions",
            "f32",
            &[2, 3],
            bytemuck::cast_slice(&self.eye_positions),
        );
        b.push(
            "eye_weights",
            "f32",
            &[2, v],
            bytemuck::cast_slice(&self.eye_weights),
        );
        b.push(
            "faces",
            "u32",
            &[self.faces.len() as u64, 3],
            bytemuck::cast_slice(&self.faces),
        );
        if let Some(q) = &self.quads {
            b.push(
                "quads",
                "u32",
                &[q.len() as u64, 4],
                bytemuck::cast_slice(q),
            );
        }
        if let Some(uv) = &self.uv {
            b.push("uv", "f32", &[v, 2], bytemuck::cast_slice(uv));
        }
        if let Some(s) = &self.seam {
            b.push("seam", "f32", &[v, 3], bytemuck::cast_slice(s));
        }
        b.push(
            "skin_index",
            "u16",
            &[v, 4],
            bytemuck::cast_slice(&self.skin_index),
        );
        let w16: Vec<u16> = self
            .skin_weight
            .iter()
            .flatten()
            .map(|x| half::f16::from_f32(*x).to_bits())
            .collect();
        b.push("skin_weight", "f16", &[v, 4], bytemuck::cast_slice(&w16));
        let parents: Vec<i32> = self.header.joints.iter().map(|x| x.parent).collect();
        b.push("joint_parents", "i32", &[j], bytemuck::cast_slice(&parents));
        b.push(
            "rest_world",
            "f32",
            &[j, 16],
            bytemuck::cast_slice(&self.rest_world),
        );
        let mut header = self.header.clone();
        header.buffers = b.buffers;
        header.vertex_count = v;
        header.coeff_count = e;
        let mut json = serde_json::to_vec(&header).map_err(|e| Error::Invalid {
            what: "pack header".into(),
            reason: e.to_string(),
        })?;
        while json.len() % 8 != 0 {
            json.push(b' ');
        }
        let mut out = Vec::with_capacity(16 + json.len() + b.bytes.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&b.bytes);
        Ok(out)
    }

    /// Parse and validate a pack. Sizes are checked against the header and the file before any
    /// array is allocated; `units: cm` is converted to metres (positions, eye centres, seam, rest
    /// translations, basis scale).
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the field: bad magic, a header length past the file,
    /// unparsable JSON or unknown keys, an unknown version, model or units, a blob missing, out of
    /// bounds, misaligned or of the wrong dtype, or a length or shape that contradicts V, E, the
    /// joint list or the influence count; [`Error::Limit`] for sizes over the documented caps.
    pub fn parse(bytes: &[u8], file: &str) -> Result<Self> {
        let fmt = |field: &str, reason: String| Error::format(file, field, reason);
        if bytes.len() < 16 || bytes[..8] != MAGIC {
            return Err(fmt("magic", "not an .aosrig pack (bad magic)".into()));
        }
        let h = u64::from(u32::from_le_bytes([
            bytes[8], bytes[9], bytes[10], bytes[11],
        ]));
        if h > MAX_HEADER_BYTES || 16 + h > bytes.len() as u64 {
            return Err(fmt(
                "header length",
                format!("{h} bytes past the file's {}", bytes.len()),
            ));
        }
        let header: PackHeader = serde_json::from_slice(&bytes[16..16 + h as usize])
            .map_err(|e| fmt("header", e.to_string()))?;
        if header.version != VERSION {
            return Err(fmt(
                "version",
                format!("{} (this build reads {VERSION})", header.version),
            ));
        }
        if header.model != "gnm" {
            return Err(fmt(
                "model",
                format!("`{}` (this build reads gnm)", header.model),
            ));
        }
        let unit = match header.units.as_str() {
            "m" => 1.0f32,
            "cm" => 0.01,
            u => return Err(fmt("units", format!("`{u}` is not m or cm"))),
        };
        header.head_ext.validate(file)?;
        let (v, e, j) = (
            header.vertex_count,
            header.coeff_count,
            header.joints.len() as u64,
        );
        for (what, n, cap) in [
            ("vertexCount", v, MAX_VERTICES),
            ("coeffCount", e, MAX_COEFFS),
            ("joints", j, MAX_JOINTS),
        ] {
            if n > cap {
                return Err(Error::Limit {
                    what: format!("{file}: {what}"),
                    limit: cap,
                    found: n,
                });
            }
        }
        if v == 0 {
            return Err(fmt("vertexCount", "0".into()));
        }
        if header.head_ext.expr_dim() as u64 != e {
            return Err(fmt(
                "coeffCount",
                format!(
                    "{e}, the head_ext regions sum to {}",
                    header.head_ext.expr_dim()
                ),
            ));
        }
        if header.max_influence != 4 {
            return Err(fmt(
                "maxInfluence",
                format!("{} (this build reads 4)", header.max_influence),
            ));
        }
        if v * e * 3 * 2 > MAX_BASIS_BYTES {
            return Err(Error::Limit {
                what: format!("{file}: basis bytes"),
                limit: MAX_BASIS_BYTES,
                found: v * e * 6,
            });
        }
        for (i, jt) in header.joints.iter().enumerate() {
            if jt.parent < -1 || jt.parent >= i as i32 {
                return Err(Error::format_at(
                    file,
                    "joints",
                    i,
                    format!("parent {} must be -1 or an earlier joint", jt.parent),
                ));
            }
        }
        if let Some([l, r]) = header.eye_joints {
            if u64::from(l) >= j || u64::from(r) >= j {
                return Err(fmt(
                    "eyeJoints",
                    format!("[{l}, {r}] outside the {j} joints"),
                ));
            }
        }
        if !header.names.is_empty() && header.names.len() as u64 != e {
            return Err(fmt(
                "names",
                format!("{} names for {e} coefficients", header.names.len()),
            ));
        }
        if !header.bind_transform.iter().all(|x| x.is_finite()) {
            return Err(fmt("bindTransform", "not finite".into()));
        }
        let area = &bytes[16 + h as usize..];
        super::check::blob_names(&header.buffers, file)?;
        let blob =
            |name: &str, dtype: &str, shape: &[u64], required: bool| -> Result<Option<&[u8]>> {
                let Some(b) = header.buffers.iter().find(|b| b.name == name) else {
                    return if required {
                        Err(fmt(
                            &format!("buffers.{name}"),
                            "required blob is missing".into(),
                        ))
                    } else {
                        Ok(None)
                    };
                };
                let size = dtype_size(&b.dtype).ok_or_else(|| {
                    fmt(
                        &format!("buffers.{name}.dtype"),
                        format!("unknown dtype `{}`", b.dtype),
                    )
                })?;
                if b.dtype != dtype {
                    return Err(fmt(
                        &format!("buffers.{name}.dtype"),
                        format!("`{}`, expected `{dtype}`", b.dtype),
                    ));
                }
                if b.shape != shape {
                    return Err(fmt(
                        &format!("buffers.{name}.shape"),
                        format!("{:?} contradicts the header (expected {shape:?})", b.shape),
                    ));
                }
                let want = shape
                    .iter()
                    .try_fold(size, |a, s| a.checked_mul(*s))
                    .ok_or_else(|| fmt(&format!("buffers.{name}.shape"), "overflows".into()))?;
                if b.length != want {
                    return Err(fmt(
                        &format!("buffers.{name}.length"),
                        format!("{} bytes, the shape needs {want}", b.length),
                    ));
                }
                if b.offset % 8 != 0 {
                    return Err(fmt(
                        &format!("buffers.{name}.offset"),
                        format!("{} is not 8-byte aligned", b.offset),
                    ));
                }
                let end = b
                    .offset
                    .checked_add(b.length)
                    .filter(|&x| x <= area.len() as u64)
                    .ok_or_else(|| {
                        fmt(
                            &format!("buffers.{name}"),
                            format!(
                                "bytes {}..{} past the blob area of {}",
                                b.offset,
                                b.offset.saturating_add(b.length),
                                area.len()
                            ),
                        )
                    })?;
                Ok(Some(&area[b.offset as usize..end as usize]))
            };
        let faces_n = header
            .buffers
            .iter()
            .find(|b| b.name == "faces")
            .and_then(|b| b.shape.first().copied())
            .unwrap_or(0);
        let quads_n = header
            .buffers
            .iter()
            .find(|b| b.name == "quads")
            .and_then(|b| b.shape.first().copied())
            .unwrap_or(0);
        let f32s = |b: &[u8]| -> Vec<f32> {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let neutral_b = blob("neutral", "f32", &[v, 3], true)?.unwrap_or_default();
        let basis_b = blob("basis", "f16", &[v, e, 3], true)?.unwrap_or_default();
        let scale_b = blob("basis_scale", "f32", &[e], true)?.unwrap_or_default();
        let eyes_b = blob("eye_positions", "f32", &[2, 3], true)?.unwrap_or_default();
        let eyew_b = blob("eye_weights", "f32", &[2, v], true)?.unwrap_or_default();
        let faces_b = blob("faces", "u32", &[faces_n, 3], true)?.unwrap_or_default();
        let quads_b = blob("quads", "u32", &[quads_n, 4], false)?;
        let uv_b = blob("uv", "f32", &[v, 2], false)?;
        let seam_b = blob("seam", "f32", &[v, 3], false)?;
        let si_b = blob("skin_index", "u16", &[v, 4], true)?.unwrap_or_default();
        let sw_b = blob("skin_weight", "f16", &[v, 4], true)?.unwrap_or_default();
        let par_b = blob("joint_parents", "i32", &[j], true)?.unwrap_or_default();
        let rest_b = blob("rest_world", "f32", &[j, 16], true)?.unwrap_or_default();
        super::check::blob_spans(&header.buffers, area.len() as u64, file)?;

        let v3 = |x: Vec<f32>| -> Vec<[f32; 3]> {
            x.chunks_exact(3)
                .map(|c| [c[0] * unit, c[1] * unit, c[2] * unit])
                .collect()
        };
        let neutral = v3(f32s(neutral_b));
        let mut basis: Vec<u32> = basis_b
            .chunks(4)
            .map(|c| c.iter().rev().fold(0u32, |a, b| (a << 8) | u32::from(*b)))
            .collect();
        if basis_b.len() % 4 == 2 {
            // The last pair's high half is padding.
            if let Some(last) = basis.last_mut() {
                *last &= 0xffff;
            }
        }
        let basis_scale: Vec<f32> = f32s(scale_b).into_iter().map(|s| s * unit).collect();
        let ep = f32s(eyes_b);
        let eye_positions = [
            [ep[0] * unit, ep[1] * unit, ep[2] * unit],
            [ep[3] * unit, ep[4] * unit, ep[5] * unit],
        ];
        let eye_weights = f32s(eyew_b);
        let faces: Vec<[u32; 3]> = faces_b
            .chunks_exact(12)
            .map(|c| {
                [0, 1, 2].map(|k| {
                    u32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])
                })
            })
            .collect();
        let quads = quads_b.map(|q| {
            q.chunks_exact(16)
                .map(|c| {
                    [0, 1, 2, 3].map(|k| {
                        u32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])
                    })
                })
                .collect()
        });
        let uv = uv_b.map(|b| f32s(b).chunks_exact(2).map(|c| [c[0], c[1]]).collect());
        let seam = seam_b.map(|b| v3(f32s(b)));
        let skin_index: Vec<[u16; 4]> = si_b
            .chunks_exact(8)
            .map(|c| [0, 1, 2, 3].map(|k| u16::from_le_bytes([c[2 * k], c[2 * k + 1]])))
            .collect();
        let skin_weight: Vec<[f32; 4]> = sw_b
            .chunks_exact(8)
            .map(|c| {
                [0, 1, 2, 3].map(|k| {
                    half::f16::from_bits(u16::from_le_bytes([c[2 * k], c[2 * k + 1]])).to_f32()
                })
            })
            .collect();
        let parents: Vec<i32> = par_b
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(i) = parents
            .iter()
            .zip(&header.joints)
            .position(|(p, jt)| *p != jt.parent)
        {
            return Err(Error::format_at(
                file,
                "buffers.joint_parents",
                i,
                "disagrees with the header's joint list",
            ));
        }
        let rest_world: Vec<[f32; 16]> = f32s(rest_b)
            .chunks_exact(16)
            .map(|c| {
                let mut m: [f32; 16] = c.try_into().unwrap_or([0.0; 16]);
                for r in 0..3 {
                    m[4 * r + 3] *= unit;
                }
                m
            })
            .collect();
        let mut header = header;
        if unit != 1.0 {
            header.units = "m".into();
            for r in 0..3 {
                header.bind_transform[4 * r + 3] *= unit;
            }
        }
        let pack = GnmPack {
            header,
            neutral,
            basis,
            basis_scale,
            eye_positions,
            eye_weights,
            faces,
            quads,
            uv,
            seam,
            skin_index,
            skin_weight,
            rest_world,
        };
        super::check::shapes(&pack, file)?;
        Ok(pack)
    }

    /// Read and [`parse`](Self::parse) a pack file, refusing files over [`MAX_FILE_BYTES`] before
    /// reading them.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file, [`Error::Limit`] for an oversized file, and every
    /// [`parse`](Self::parse) error.
    pub fn read(path: &std::path::Path) -> Result<Self> {
        let bytes = crate::io::read::read_file_capped(path, MAX_FILE_BYTES)?;
        Self::parse(&bytes, &path.display().to_string())
    }

    /// Bytes per blob as stored (name, bytes), in header order, for the memory report.
    pub fn blob_bytes(&self) -> Vec<(String, u64)> {
        self.header
            .buffers
            .iter()
            .map(|b| (b.name.clone(), b.length))
            .collect()
    }
}
