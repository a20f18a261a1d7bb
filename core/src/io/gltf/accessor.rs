//! Accessors decoded by their own `componentType`, `type` and `normalized` flag, with `byteOffset`
//! and the view's `byteStride`, bounds-checked against the (decompressed) view, plus sparse
//! substitution over either the view's data or implicit zeros.
//!
//! Source: glTF 2.0 §3.6.2 "Accessors" (element size, matrix columns aligned to 4 bytes, accessors
//! without a buffer view are zeros, §3.6.2.3 sparse accessors: indices strictly increasing),
//! §3.11 "Animations" and `KHR_mesh_quantization` for normalized integers:
//! `i8: max(c/127, −1)`, `u8: c/255`, `i16: max(c/32767, −1)`, `u16: c/65535`.

use gltf::json;
use json::accessor::{ComponentType, Type};
use json::validation::Checked;

use super::Ctx;
use crate::error::{Error, Result};

/// Largest component count (`count × components`) of an accessor with no buffer view (all zeros,
/// possibly with sparse values): such an accessor costs no file bytes, so its size is capped.
pub const MAX_IMPLICIT_COMPONENTS: u64 = 1 << 24;

/// Most components one import may decode from accessors in total: 2²⁸ = 268,435,456. Accessors can
/// be shared (every morph target of a mesh may name the same accessor), so decoded data is not
/// bounded by the file size; this bound stops a small file from asking for unbounded memory.
///
/// Exactly what it costs: every component is decoded straight into its 4-byte output (`f32`, or
/// `u32` for indices and joints; no wider temporary), so the components decoded in one import
/// occupy at most 2²⁸ × 4 B = 1 GiB. (Morph deltas are then also stored sparsely, at most 28 B
/// per non-zero vertex delta, see [`super::MAX_CHARACTER_MORPH_DELTAS`].) A 27k-vertex head with
/// 57 position+normal targets decodes about 9·10⁶ components, 1/29 of the cap.
pub const MAX_DECODED_COMPONENTS: u64 = 1 << 28;

/// An accessor's storage format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Format {
    /// Component type.
    pub ct: ComponentType,
    /// Element type.
    pub ty: Type,
    /// Whether integers are normalized.
    pub normalized: bool,
}

impl Format {
    /// Components per element.
    pub fn width(&self) -> usize {
        self.ty.multiplicity()
    }

    /// Bytes per element, with matrix columns padded to 4 bytes (§3.6.2.4).
    pub fn element_size(&self) -> usize {
        let cs = self.ct.size();
        match self.ty {
            Type::Mat2 => 2 * align4(2 * cs),
            Type::Mat3 => 3 * align4(3 * cs),
            Type::Mat4 => 4 * align4(4 * cs),
            t => t.multiplicity() * cs,
        }
    }

    /// Byte offset of component `c` inside an element.
    fn offset(&self, c: usize) -> usize {
        let cs = self.ct.size();
        let rows = match self.ty {
            Type::Mat2 => 2,
            Type::Mat3 => 3,
            Type::Mat4 => 4,
            _ => return c * cs,
        };
        (c / rows) * align4(rows * cs) + (c % rows) * cs
    }

    /// A short spelling (`u16 normalized VEC3`) for messages.
    pub fn describe(&self) -> String {
        let ct = match self.ct {
            ComponentType::I8 => "i8",
            ComponentType::U8 => "u8",
            ComponentType::I16 => "i16",
            ComponentType::U16 => "u16",
            ComponentType::U32 => "u32",
            ComponentType::F32 => "f32",
        };
        format!(
            "{ct}{} {:?}",
            if self.normalized { " normalized" } else { "" },
            self.ty
        )
    }
}

fn align4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// The format of `accessors[i]`, or `None` when its component type or type is invalid (the crate's
/// validation has already reported that).
pub(super) fn format(root: &json::Root, i: usize) -> Option<Format> {
    let a = root.accessors.get(i)?;
    match (&a.component_type, &a.type_) {
        (Checked::Valid(ct), Checked::Valid(ty)) => Some(Format {
            ct: ct.0,
            ty: *ty,
            normalized: a.normalized,
        }),
        _ => None,
    }
}

/// Raw component value at `at` (bounds checked by the caller).
#[inline]
fn component(b: &[u8], at: usize, ct: ComponentType) -> f64 {
    match ct {
        ComponentType::I8 => f64::from(b[at] as i8),
        ComponentType::U8 => f64::from(b[at]),
        ComponentType::I16 => f64::from(i16::from_le_bytes([b[at], b[at + 1]])),
        ComponentType::U16 => f64::from(u16::from_le_bytes([b[at], b[at + 1]])),
        ComponentType::U32 => {
            f64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
        }
        ComponentType::F32 => {
            f64::from(f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
        }
    }
}

/// Normalized-integer decode (glTF 2.0 §3.11 table; `KHR_mesh_quantization`).
#[inline]
pub(super) fn normalize(c: f64, ct: ComponentType) -> f64 {
    match ct {
        ComponentType::I8 => (c / 127.0).max(-1.0),
        ComponentType::U8 => c / 255.0,
        ComponentType::I16 => (c / 32767.0).max(-1.0),
        ComponentType::U16 => c / 65535.0,
        ComponentType::U32 | ComponentType::F32 => c,
    }
}

/// `accessors[i]` as floats `(count·width,)`: floats as stored, normalized integers per
/// [`normalize`], other integers as their value.
///
/// # Errors
/// [`Error::Format`] naming `accessors[i]` when it is out of its view, a float is NaN/∞, a sparse
/// index is out of order or range, or the data cannot be read.
pub(super) fn read_f32(ctx: &mut Ctx, i: usize) -> Result<(Format, Vec<f32>)> {
    let Some(fmt) = format(ctx.root, i) else {
        return Err(ctx.err(format!("accessors[{i}]"), "invalid componentType or type"));
    };
    let out = if fmt.normalized {
        read_as(ctx, i, fmt, |c| normalize(c, fmt.ct) as f32)?
    } else {
        read_as(ctx, i, fmt, |c| c as f32)?
    };
    // An f32 component goes through f64 and back unchanged, so NaN / ±∞ survive to be found here.
    if fmt.ct == ComponentType::F32
        && let Some(k) = out.iter().position(|x| !x.is_finite())
    {
        return Err(Error::format_at(
            ctx.file,
            format!("accessors[{i}]"),
            k / fmt.width(),
            format!("component {} is {}", k % fmt.width(), out[k]),
        ));
    }
    Ok((fmt, out))
}

/// `accessors[i]` as unsigned integers `(count·width,)` (indices, joints).
///
/// # Errors
/// As [`read_f32`], and when the accessor is not a non-normalized unsigned integer type (checked
/// before anything is decoded).
pub(super) fn read_u32(ctx: &mut Ctx, i: usize) -> Result<(Format, Vec<u32>)> {
    let Some(fmt) = format(ctx.root, i) else {
        return Err(ctx.err(format!("accessors[{i}]"), "invalid componentType or type"));
    };
    if fmt.normalized
        || !matches!(
            fmt.ct,
            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
        )
    {
        return Err(ctx.err(
            format!("accessors[{i}]"),
            format!("{} where unsigned integers are required", fmt.describe()),
        ));
    }
    // Unsigned integers of at most 32 bits are exact in f64, so `as u32` is exact.
    let out = read_as(ctx, i, fmt, |c| c as u32)?;
    Ok((fmt, out))
}

/// Decode every component of `accessors[i]` (whose format is `fmt`) through `conv`, which maps the
/// raw component value to the output type; sparse values are converted the same way.
fn read_as<T: Copy>(
    ctx: &mut Ctx,
    i: usize,
    fmt: Format,
    conv: impl Fn(f64) -> T,
) -> Result<Vec<T>> {
    let root = ctx.root;
    let file = ctx.file;
    let field = format!("accessors[{i}]");
    let acc = root
        .accessors
        .get(i)
        .ok_or_else(|| Error::format(file, &field, "does not exist"))?;
    let width = fmt.width();
    let esize = fmt.element_size();
    let count = usize::try_from(acc.count.0)
        .map_err(|_| Error::format(file, format!("{field}.count"), "too large"))?;
    let total = count
        .checked_mul(width)
        .ok_or_else(|| Error::format(file, format!("{field}.count"), "too large"))?;

    ctx.decoded = ctx.decoded.saturating_add(total as u64);
    if ctx.decoded > MAX_DECODED_COMPONENTS {
        return Err(Error::Limit {
            what: format!("{file}: {field}: components decoded from accessors in one import"),
            limit: MAX_DECODED_COMPONENTS,
            found: ctx.decoded,
        });
    }
    let mut out = match acc.buffer_view {
        Some(v) => {
            let stride = root
                .buffer_views
                .get(v.value())
                .and_then(|bv| bv.byte_stride)
                .map_or(esize, |s| s.0);
            let offset = acc.byte_offset.map_or(0, |o| o.0) as usize;
            if stride < esize {
                return Err(Error::format(
                    file,
                    &field,
                    format!(
                        "bufferView {} byteStride {stride} is smaller than the {esize}-byte element",
                        v.value()
                    ),
                ));
            }
            let bytes = ctx.buffers.view(root, v.value())?;
            let need = match count {
                0 => Some(0),
                n => (n - 1)
                    .checked_mul(stride)
                    .and_then(|x| x.checked_add(offset))
                    .and_then(|x| x.checked_add(esize)),
            };
            if need.is_none_or(|n| n > bytes.len()) {
                return Err(Error::format(
                    file,
                    &field,
                    format!(
                        "{count} elements of {esize} bytes (stride {stride}, offset {offset}) do not fit bufferViews[{}] ({} bytes)",
                        v.value(),
                        bytes.len()
                    ),
                ));
            }
            let mut out = Vec::with_capacity(total);
            for e in 0..count {
                let base = offset + e * stride;
                for c in 0..width {
                    out.push(conv(component(bytes, base + fmt.offset(c), fmt.ct)));
                }
            }
            out
        }
        None => {
            if total as u64 > MAX_IMPLICIT_COMPONENTS {
                return Err(Error::Limit {
                    what: format!("{file}: {field}: components of an accessor without bufferView"),
                    limit: MAX_IMPLICIT_COMPONENTS,
                    found: total as u64,
                });
            }
            vec![conv(0.0); total]
        }
    };
    if let Some(sparse) = &acc.sparse {
        apply_sparse(ctx, i, fmt, count, sparse, &mut out, &conv)?;
    }
    Ok(out)
}

/// Overwrite the elements a sparse part names (§3.6.2.3).
fn apply_sparse<T>(
    ctx: &mut Ctx,
    i: usize,
    fmt: Format,
    count: usize,
    sparse: &json::accessor::sparse::Sparse,
    out: &mut [T],
    conv: &impl Fn(f64) -> T,
) -> Result<()> {
    let root = ctx.root;
    let file = ctx.file;
    let field = format!("accessors[{i}].sparse");
    let n = usize::try_from(sparse.count.0).unwrap_or(usize::MAX);
    if n > count {
        return Err(Error::format(
            file,
            format!("{field}.count"),
            format!("{n} overrides for {count} elements"),
        ));
    }
    let Checked::Valid(ict) = sparse.indices.component_type else {
        return Err(Error::format(
            file,
            format!("{field}.indices.componentType"),
            "must be 5121, 5123 or 5125",
        ));
    };
    let ict = ict.0;
    let isize = ict.size();
    let ioff = sparse.indices.byte_offset.0 as usize;
    let bytes = ctx.buffers.view(root, sparse.indices.buffer_view.value())?;
    if n.checked_mul(isize)
        .and_then(|x| x.checked_add(ioff))
        .is_none_or(|e| e > bytes.len())
    {
        return Err(Error::format(
            file,
            format!("{field}.indices"),
            format!(
                "{n} indices at offset {ioff} do not fit the bufferView ({} bytes)",
                bytes.len()
            ),
        ));
    }
    let mut indices = Vec::with_capacity(n);
    for k in 0..n {
        let idx = component(bytes, ioff + k * isize, ict) as usize;
        if idx >= count {
            return Err(Error::format_at(
                file,
                format!("{field}.indices"),
                k,
                format!("index {idx} ≥ accessor count {count}"),
            ));
        }
        if let Some(&prev) = indices.last()
            && idx <= prev
        {
            return Err(Error::format_at(
                file,
                format!("{field}.indices"),
                k,
                format!("indices must strictly increase ({prev} then {idx})"),
            ));
        }
        indices.push(idx);
    }
    let esize = fmt.element_size();
    let voff = sparse.values.byte_offset.0 as usize;
    let bytes = ctx.buffers.view(root, sparse.values.buffer_view.value())?;
    if n.checked_mul(esize)
        .and_then(|x| x.checked_add(voff))
        .is_none_or(|e| e > bytes.len())
    {
        return Err(Error::format(
            file,
            format!("{field}.values"),
            format!(
                "{n} values at offset {voff} do not fit the bufferView ({} bytes)",
                bytes.len()
            ),
        ));
    }
    let width = fmt.width();
    for (k, &idx) in indices.iter().enumerate() {
        for c in 0..width {
            out[idx * width + c] = conv(component(bytes, voff + k * esize + fmt.offset(c), fmt.ct));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_decode_matches_the_spec_table() {
        assert_eq!(normalize(-128.0, ComponentType::I8), -1.0);
        assert_eq!(normalize(127.0, ComponentType::I8), 1.0);
        assert_eq!(normalize(-32768.0, ComponentType::I16), -1.0);
        assert_eq!(normalize(255.0, ComponentType::U8), 1.0);
        assert_eq!(normalize(65535.0, ComponentType::U16), 1.0);
        assert_eq!(normalize(51.0, ComponentType::U8), 0.2);
    }

    /// glTF-Validator's `get_elements_sparse.gltf`: a sparse accessor fully covering implicit zeros
    /// (u8 indices) and one partially overriding u32 data; values worked out from its base64.
    #[test]
    fn validator_sparse_elements() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../shared/data/gltf-validator/base__data__accessor_data__get_elements_sparse.gltf",
        );
        let bytes = std::fs::read(&path).unwrap();
        let g = gltf::Gltf::from_slice_without_validation(&bytes).unwrap();
        let root = g.document.as_json();
        let mut ctx = Ctx {
            file: "t",
            root,
            buffers: super::super::buffers::Buffers::new(
                "t",
                None,
                None,
                root.buffers.len(),
                root.buffer_views.len(),
            ),
            notes: Vec::new(),
            decoded: 0,
        };
        assert_eq!(read_f32(&mut ctx, 0).unwrap().1, vec![0.0, 0.0]);
        assert_eq!(read_f32(&mut ctx, 1).unwrap().1, vec![0.125, 1024.0]);
        assert_eq!(
            read_u32(&mut ctx, 2).unwrap().1,
            vec![70_000, 100_001, 54_321, 200_002]
        );
        assert!(
            read_u32(&mut ctx, 1).is_err(),
            "floats are not unsigned integers"
        );
    }

    #[test]
    fn matrix_columns_are_padded() {
        let f = Format {
            ct: ComponentType::U8,
            ty: Type::Mat3,
            normalized: false,
        };
        assert_eq!(f.element_size(), 12);
        assert_eq!((f.offset(2), f.offset(3), f.offset(8)), (2, 4, 10));
        let f = Format {
            ct: ComponentType::I16,
            ty: Type::Mat2,
            normalized: false,
        };
        assert_eq!((f.element_size(), f.offset(2)), (8, 4));
        let f = Format {
            ct: ComponentType::F32,
            ty: Type::Mat4,
            normalized: false,
        };
        assert_eq!((f.element_size(), f.offset(15)), (64, 60));
    }
}
