//! `EXT_meshopt_compression` buffer views: the extension object parsed and checked against the
//! specification's rules, then decoded with meshoptimizer (the `meshopt` crate).
//!
//! Source: Khronos `EXT_meshopt_compression` README ("For the extension object to be valid…",
//! modes ATTRIBUTES / TRIANGLES / INDICES, filters NONE / OCTAHEDRAL / QUATERNION / EXPONENTIAL,
//! fallback buffers).

use serde_json::Value;

use crate::error::{Error, Result};

/// The extension's name.
pub(super) const NAME: &str = "EXT_meshopt_compression";

/// Largest expansion (decoded bytes per encoded byte) accepted before allocating. The attribute
/// codec can describe a 256-byte column of zeros in 2 bits (≈1024×); anything claiming more than
/// this is refused rather than trusted.
const MAX_EXPANSION: usize = 2048;
/// Slack added to the expansion bound for tiny streams (the tail block alone is 32 bytes).
const EXPANSION_SLACK: usize = 1 << 16;

/// Compression mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Attributes,
    Triangles,
    Indices,
}

/// Post-decompression filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Filter {
    None,
    Octahedral,
    Quaternion,
    Exponential,
}

/// A parsed extension object of one buffer view.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Compressed {
    /// Buffer holding the compressed bytes.
    pub buffer: usize,
    /// Offset of the compressed bytes in that buffer.
    pub byte_offset: usize,
    /// Length of the compressed bytes.
    pub byte_length: usize,
    /// Decoded element stride.
    pub byte_stride: usize,
    /// Decoded element count.
    pub count: usize,
    /// Mode.
    pub mode: Mode,
    /// Filter.
    pub filter: Filter,
}

/// Parse the extension object of `bufferViews[view]` and check the rules that involve only it and
/// its parent view (`parent_length`, `parent_stride`).
///
/// # Errors
/// Every broken rule, each naming `bufferViews[view].extensions.EXT_meshopt_compression.<field>`.
pub(super) fn parse(
    file: &str,
    view: usize,
    ext: &Value,
    parent_length: u64,
    parent_stride: Option<usize>,
) -> Result<Compressed> {
    let base = format!("bufferViews[{view}].extensions.{NAME}");
    let err = |f: &str, r: String| Error::format(file, format!("{base}.{f}"), r);
    let uint = |f: &str, required: bool| -> Result<usize> {
        match ext.get(f) {
            None if !required => Ok(0),
            None => Err(err(f, "required property is missing".into())),
            Some(v) => v
                .as_u64()
                .and_then(|x| usize::try_from(x).ok())
                .ok_or_else(|| err(f, format!("must be a non-negative integer, found {v}"))),
        }
    };
    if !ext.is_object() {
        return Err(Error::format(file, base, "must be an object"));
    }
    let (buffer, byte_offset, byte_length, byte_stride, count) = (
        uint("buffer", true)?,
        uint("byteOffset", false)?,
        uint("byteLength", true)?,
        uint("byteStride", true)?,
        uint("count", true)?,
    );
    let mode = match ext.get("mode").and_then(Value::as_str) {
        Some("ATTRIBUTES") => Mode::Attributes,
        Some("TRIANGLES") => Mode::Triangles,
        Some("INDICES") => Mode::Indices,
        other => {
            return Err(err(
                "mode",
                format!("must be ATTRIBUTES, TRIANGLES or INDICES, found {other:?}"),
            ));
        }
    };
    let filter = match ext.get("filter").map(|v| v.as_str()) {
        None | Some(Some("NONE")) => Filter::None,
        Some(Some("OCTAHEDRAL")) => Filter::Octahedral,
        Some(Some("QUATERNION")) => Filter::Quaternion,
        Some(Some("EXPONENTIAL")) => Filter::Exponential,
        Some(other) => {
            return Err(err(
                "filter",
                format!("must be NONE, OCTAHEDRAL, QUATERNION or EXPONENTIAL, found {other:?}"),
            ));
        }
    };
    let c = Compressed {
        buffer,
        byte_offset,
        byte_length,
        byte_stride,
        count,
        mode,
        filter,
    };
    let mut problems = Vec::new();
    if let Some(s) = parent_stride.filter(|&s| s != byte_stride) {
        problems.push(err(
            "byteStride",
            format!("{byte_stride} differs from the parent bufferView's byteStride {s}"),
        ));
    }
    match count.checked_mul(byte_stride) {
        Some(n) if n as u64 == parent_length => {}
        _ => problems.push(err("count", format!("count {count} × byteStride {byte_stride} must equal the parent bufferView's byteLength {parent_length}"))),
    }
    match mode {
        Mode::Attributes if byte_stride == 0 || byte_stride % 4 != 0 || byte_stride > 256 => {
            problems.push(err(
                "byteStride",
                format!("{byte_stride}: ATTRIBUTES needs a multiple of 4 up to 256"),
            ));
        }
        Mode::Triangles | Mode::Indices if byte_stride != 2 && byte_stride != 4 => {
            problems.push(err(
                "byteStride",
                format!("{byte_stride}: {mode:?} needs 2 or 4"),
            ));
        }
        _ => {}
    }
    if mode == Mode::Triangles && count % 3 != 0 {
        problems.push(err(
            "count",
            format!("{count} is not a multiple of 3 (TRIANGLES)"),
        ));
    }
    if mode != Mode::Attributes && filter != Filter::None {
        problems.push(err(
            "filter",
            format!("{filter:?} is only allowed with ATTRIBUTES"),
        ));
    }
    match filter {
        Filter::Octahedral if byte_stride != 4 && byte_stride != 8 => problems.push(err(
            "filter",
            format!("OCTAHEDRAL needs byteStride 4 or 8, found {byte_stride}"),
        )),
        Filter::Quaternion if byte_stride != 8 => problems.push(err(
            "filter",
            format!("QUATERNION needs byteStride 8, found {byte_stride}"),
        )),
        Filter::Exponential if byte_stride % 4 != 0 => problems.push(err(
            "filter",
            format!("EXPONENTIAL needs byteStride divisible by 4, found {byte_stride}"),
        )),
        _ => {}
    }
    Error::collect(problems)?;
    Ok(c)
}

/// Decode `encoded` (the compressed bytes) into `count · byte_stride` bytes and apply the filter.
///
/// # Errors
/// [`Error::Limit`] when the claimed size is implausible for the encoded length (checked before
/// allocating); [`Error::Format`] naming `bufferViews[view]` when meshoptimizer rejects the stream.
pub(super) fn decode(file: &str, view: usize, c: &Compressed, encoded: &[u8]) -> Result<Vec<u8>> {
    let field = format!("bufferViews[{view}].extensions.{NAME}");
    let size = c
        .count
        .checked_mul(c.byte_stride)
        .ok_or_else(|| Error::format(file, &field, "count × byteStride overflows"))?;
    let bound = encoded
        .len()
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(EXPANSION_SLACK);
    if size > bound {
        return Err(Error::Limit {
            what: format!(
                "{file}: {field}: decoded size of {} compressed bytes",
                encoded.len()
            ),
            limit: bound as u64,
            found: size as u64,
        });
    }
    let failed = |code: String| {
        Error::format(
            file,
            &field,
            format!(
                "meshoptimizer could not decode the {:?} stream ({code})",
                c.mode
            ),
        )
    };
    match (c.mode, c.byte_stride) {
        (Mode::Attributes, stride) if stride > 0 && stride % 4 == 0 && stride <= 256 => {
            let mut words = vec![0u32; size / 4];
            // SAFETY: `words` holds `count · stride` bytes, 4-byte aligned; `stride` is a non-zero
            // multiple of 4 no larger than 256 (the decoder's preconditions, checked above); `encoded`
            // is a live slice of `encoded.len()` bytes. The decoder writes only inside the
            // destination and reads only inside the source (it bounds-checks the stream).
            let rc = unsafe {
                ::meshopt::ffi::meshopt_decodeVertexBuffer(
                    words.as_mut_ptr().cast(),
                    c.count,
                    stride,
                    encoded.as_ptr(),
                    encoded.len(),
                )
            };
            if rc != 0 {
                return Err(failed(format!("error code {rc}")));
            }
            apply_filter(c, &mut words);
            Ok(bytemuck::cast_slice(&words).to_vec())
        }
        (Mode::Triangles, 2) if c.count.is_multiple_of(3) => index_bytes::<u16>(
            ::meshopt::encoding::decode_index_buffer::<u16>(encoded, c.count),
            failed,
        ),
        (Mode::Triangles, 4) if c.count.is_multiple_of(3) => index_bytes::<u32>(
            ::meshopt::encoding::decode_index_buffer::<u32>(encoded, c.count),
            failed,
        ),
        (Mode::Indices, 2) => index_bytes::<u16>(
            ::meshopt::encoding::decode_index_sequence::<u16>(encoded, c.count),
            failed,
        ),
        (Mode::Indices, 4) => index_bytes::<u32>(
            ::meshopt::encoding::decode_index_sequence::<u32>(encoded, c.count),
            failed,
        ),
        _ => Err(Error::format(
            file,
            field,
            format!("byteStride {} is not valid for {:?}", c.byte_stride, c.mode),
        )),
    }
}

fn index_bytes<T: bytemuck::Pod>(
    r: ::meshopt::Result<Vec<T>>,
    failed: impl Fn(String) -> Error,
) -> Result<Vec<u8>> {
    r.map(|v| bytemuck::cast_slice(&v).to_vec())
        .map_err(|e| failed(e.to_string()))
}

/// Apply the view's filter in place (strides were checked by [`parse`]).
fn apply_filter(c: &Compressed, words: &mut [u32]) {
    match (c.filter, c.byte_stride) {
        (Filter::Octahedral, 4) => {
            ::meshopt::encoding::decode_filter_oct::<i8>(bytemuck::cast_slice_mut(words))
        }
        (Filter::Octahedral, 8) => {
            ::meshopt::encoding::decode_filter_oct::<i16>(bytemuck::cast_slice_mut(words))
        }
        (Filter::Quaternion, 8) => {
            ::meshopt::encoding::decode_filter_quat(bytemuck::cast_slice_mut(words))
        }
        // The exponential filter decodes every 32-bit word on its own.
        (Filter::Exponential, _) => {
            ::meshopt::encoding::decode_filter_exp::<1>(bytemuck::cast_slice_mut(words))
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_are_checked_and_named() {
        let ok = json!({"buffer":0,"byteLength":10,"byteStride":8,"mode":"ATTRIBUTES","filter":"QUATERNION","count":3});
        assert_eq!(
            parse("f", 2, &ok, 24, Some(8)).unwrap().filter,
            Filter::Quaternion
        );
        let bad = json!({"buffer":0,"byteLength":10,"byteStride":6,"mode":"ATTRIBUTES","filter":"QUATERNION","count":3});
        let e = parse("f", 2, &bad, 24, None).unwrap_err().to_string();
        assert!(
            e.contains("bufferViews[2].extensions.EXT_meshopt_compression.byteStride"),
            "{e}"
        );
        assert!(e.contains(".count"), "{e}");
        let tri = json!({"buffer":0,"byteLength":10,"byteStride":2,"mode":"TRIANGLES","count":4});
        assert!(
            parse("f", 0, &tri, 8, None)
                .unwrap_err()
                .to_string()
                .contains("multiple of 3")
        );
    }

    #[test]
    fn round_trip_attributes_and_indices() {
        let verts: Vec<[u8; 8]> = (0..100u8)
            .map(|i| [i, i / 2, 3, 4, 200 - i, 0, 7, i % 5])
            .collect();
        let enc = ::meshopt::encoding::encode_vertex_buffer(&verts).unwrap();
        let c = Compressed {
            buffer: 0,
            byte_offset: 0,
            byte_length: enc.len(),
            byte_stride: 8,
            count: 100,
            mode: Mode::Attributes,
            filter: Filter::None,
        };
        let out = decode("f", 0, &c, &enc).unwrap();
        assert_eq!(out, verts.concat());
        let idx: Vec<u32> = vec![0, 1, 2, 2, 1, 3, 3, 1, 4];
        let enc = ::meshopt::encoding::encode_index_buffer(&idx, 5).unwrap();
        let c = Compressed {
            byte_stride: 4,
            count: 9,
            mode: Mode::Triangles,
            ..c
        };
        assert_eq!(
            decode("f", 0, &c, &enc).unwrap(),
            bytemuck::cast_slice::<u32, u8>(&idx)
        );
    }

    #[test]
    fn garbage_is_an_error_and_huge_claims_are_refused() {
        let c = Compressed {
            buffer: 0,
            byte_offset: 0,
            byte_length: 5,
            byte_stride: 4,
            count: 10,
            mode: Mode::Attributes,
            filter: Filter::None,
        };
        assert!(
            decode("f", 3, &c, &[1, 2, 3, 4, 5])
                .unwrap_err()
                .to_string()
                .contains("bufferViews[3]")
        );
        let c = Compressed {
            count: usize::MAX / 8,
            ..c
        };
        assert!(matches!(
            decode("f", 3, &c, &[0xa0; 8]),
            Err(Error::Limit { .. })
        ));
    }
}
