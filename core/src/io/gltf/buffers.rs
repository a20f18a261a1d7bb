//! Buffer bytes and buffer-view slices, loaded lazily: the GLB BIN chunk (buffer 0 without a `uri`),
//! external files relative to the glTF, and base64 `data:` URIs. A buffer is only read when a view
//! that is actually decoded needs it, so a placeholder buffer without data (an
//! `EXT_meshopt_compression` fallback) is never an error by itself. Compressed views are decoded
//! once and kept.
//!
//! Source: glTF 2.0 §3.6.1 "Buffers and Buffer Views", §3.6.1.2 "GLB-stored Buffer"; RFC 2397
//! (`data:` URIs); glTF-Validator `BUFFER_EMBEDDED_BYTELENGTH_MISMATCH` (a data URI must decode to
//! exactly `byteLength`) and `BUFFER_EXTERNAL_BYTELENGTH_MISMATCH` (a file must hold at least
//! `byteLength`).

use std::path::Path;

use base64::Engine as _;
use gltf::json;

use super::meshopt;
use crate::error::{Error, Result};

/// Loaded buffers and decoded compressed views of one import.
pub(super) struct Buffers<'a> {
    file: &'a str,
    base_dir: Option<&'a Path>,
    bin: Option<&'a [u8]>,
    loaded: Vec<Option<Vec<u8>>>,
    decoded: Vec<Option<Vec<u8>>>,
}

/// The data of buffer `i`: the BIN chunk for a GLB's buffer 0 without a URI, else what was loaded.
fn bytes_of<'s>(
    root: &json::Root,
    bin: Option<&'s [u8]>,
    loaded: &'s [Option<Vec<u8>>],
    i: usize,
) -> Option<&'s [u8]> {
    if uses_bin(root, bin, i) {
        bin
    } else {
        loaded.get(i)?.as_deref()
    }
}

fn uses_bin(root: &json::Root, bin: Option<&[u8]>, i: usize) -> bool {
    i == 0 && bin.is_some() && root.buffers.first().is_some_and(|b| b.uri.is_none())
}

impl<'a> Buffers<'a> {
    /// Nothing loaded yet; `bin` is the GLB BIN chunk.
    pub fn new(
        file: &'a str,
        base_dir: Option<&'a Path>,
        bin: Option<&'a [u8]>,
        buffers: usize,
        views: usize,
    ) -> Self {
        Buffers {
            file,
            base_dir,
            bin,
            loaded: vec![None; buffers],
            decoded: vec![None; views],
        }
    }

    /// The bytes of `bufferViews[v]` (decompressed when the view is `EXT_meshopt_compression`).
    ///
    /// # Errors
    /// [`Error::Format`] naming the view or buffer when the data is missing, unreadable, shorter than
    /// declared or fails to decompress.
    pub fn view(&mut self, root: &json::Root, v: usize) -> Result<&[u8]> {
        let file = self.file;
        let view = root
            .buffer_views
            .get(v)
            .ok_or_else(|| Error::format(file, format!("bufferViews[{v}]"), "does not exist"))?;
        if let Some(ext) = view
            .extensions
            .as_ref()
            .and_then(|e| e.others.get(meshopt::NAME))
        {
            if self.decoded[v].is_none() {
                let c = meshopt::parse(
                    file,
                    v,
                    ext,
                    view.byte_length.0,
                    view.byte_stride.map(|s| s.0),
                )?;
                self.ensure(root, c.buffer)?;
                let src = bytes_of(root, self.bin, &self.loaded, c.buffer).unwrap_or(&[]);
                let range = c
                    .byte_offset
                    .checked_add(c.byte_length)
                    .filter(|&e| e <= src.len())
                    .map(|e| c.byte_offset..e);
                let Some(range) = range else {
                    return Err(Error::format(
                        file,
                        format!("bufferViews[{v}].extensions.{}.byteLength", meshopt::NAME),
                        format!(
                            "compressed bytes {}+{} lie outside buffers[{}] ({} bytes)",
                            c.byte_offset,
                            c.byte_length,
                            c.buffer,
                            src.len()
                        ),
                    ));
                };
                self.decoded[v] = Some(meshopt::decode(file, v, &c, &src[range])?);
            }
            return match &self.decoded[v] {
                Some(d) => Ok(d),
                None => Err(Error::format(
                    file,
                    format!("bufferViews[{v}]"),
                    "decompression produced nothing",
                )),
            };
        }
        let b = view.buffer.value();
        self.ensure(root, b)?;
        let src = bytes_of(root, self.bin, &self.loaded, b).unwrap_or(&[]);
        let off = usize::try_from(view.byte_offset.map_or(0, |o| o.0)).unwrap_or(usize::MAX);
        let len = usize::try_from(view.byte_length.0).unwrap_or(usize::MAX);
        off.checked_add(len)
            .and_then(|end| src.get(off..end))
            .ok_or_else(|| {
                Error::format(
                    file,
                    format!("bufferViews[{v}].byteLength"),
                    format!(
                        "bytes {off}+{len} lie outside buffers[{b}] ({} bytes)",
                        src.len()
                    ),
                )
            })
    }

    /// Load buffer `i` if not yet loaded.
    fn ensure(&mut self, root: &json::Root, i: usize) -> Result<()> {
        let file = self.file;
        let field = format!("buffers[{i}]");
        let buffer = root
            .buffers
            .get(i)
            .ok_or_else(|| Error::format(file, &field, "does not exist"))?;
        let declared = buffer.byte_length.0;
        if uses_bin(root, self.bin, i) {
            let have = self.bin.map_or(0, <[u8]>::len) as u64;
            if have < declared {
                return Err(Error::format(
                    file,
                    format!("{field}.byteLength"),
                    format!("{declared} bytes declared but the GLB BIN chunk holds {have}"),
                ));
            }
            return Ok(());
        }
        if self.loaded[i].is_some() {
            return Ok(());
        }
        let Some(uri) = buffer.uri.as_deref() else {
            let fallback = buffer
                .extensions
                .as_ref()
                .is_some_and(|e| e.others.contains_key(meshopt::NAME));
            let why = if fallback {
                " (an EXT_meshopt_compression fallback buffer, read by an uncompressed view)"
            } else {
                ""
            };
            return Err(Error::format(
                file,
                field,
                format!("has no data: no uri and not the GLB BIN chunk{why}"),
            ));
        };
        let data = if let Some(rest) = uri.strip_prefix("data:") {
            let data = decode_data_uri(rest)
                .map_err(|r| Error::format(file, format!("{field}.uri"), r))?;
            if data.len() as u64 != declared {
                return Err(Error::format(
                    file,
                    format!("{field}.byteLength"),
                    format!(
                        "{declared} bytes declared but the data URI holds {}",
                        data.len()
                    ),
                ));
            }
            data
        } else {
            let rel =
                relative_path(uri).map_err(|r| Error::format(file, format!("{field}.uri"), r))?;
            let Some(base) = self.base_dir else {
                return Err(Error::format(
                    file,
                    format!("{field}.uri"),
                    format!("external buffer `{uri}` but no base directory was given"),
                ));
            };
            let path = base.join(&rel);
            let data = std::fs::read(&path).map_err(|e| {
                Error::format(
                    file,
                    format!("{field}.uri"),
                    format!("cannot read `{}`: {e}", path.display()),
                )
            })?;
            if (data.len() as u64) < declared {
                return Err(Error::format(
                    file,
                    format!("{field}.byteLength"),
                    format!(
                        "{declared} bytes declared but `{}` has {}",
                        path.display(),
                        data.len()
                    ),
                ));
            }
            data
        };
        self.loaded[i] = Some(data);
        Ok(())
    }
}

/// Decode the part of a `data:` URI after `data:`. Only base64 buffers of type
/// `application/octet-stream` or `application/gltf-buffer` are accepted (glTF 2.0 §3.6.1.1).
fn decode_data_uri(rest: &str) -> std::result::Result<Vec<u8>, String> {
    let (meta, payload) = rest
        .split_once(',')
        .ok_or("a data URI needs a `,` before its payload")?;
    let Some(mime) = meta.strip_suffix(";base64") else {
        return Err(format!(
            "only base64 data URIs are supported, found `data:{meta},…`"
        ));
    };
    if !matches!(
        mime,
        "application/octet-stream" | "application/gltf-buffer" | ""
    ) {
        return Err(format!(
            "data URI MIME type must be application/octet-stream or application/gltf-buffer, found `{mime}`"
        ));
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(payload.trim())
        .map_err(|e| format!("invalid base64: {e}"))
}

/// A relative file URI as a path: percent-decoded; absolute paths and other schemes refused.
fn relative_path(uri: &str) -> std::result::Result<std::path::PathBuf, String> {
    if uri.contains("://")
        || uri.starts_with('/')
        || uri.starts_with('\\')
        || uri.get(1..2) == Some(":")
    {
        return Err(format!(
            "`{uri}`: only relative file URIs and data: URIs are supported"
        ));
    }
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        if b[k] == b'%'
            && let Some(v) = uri
                .get(k + 1..k + 3)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            k += 3;
            continue;
        }
        out.push(b[k]);
        k += 1;
    }
    String::from_utf8(out)
        .map(std::path::PathBuf::from)
        .map_err(|_| format!("`{uri}`: percent-decoded URI is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uris() {
        assert_eq!(
            decode_data_uri("application/octet-stream;base64,AAECAw==").unwrap(),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            decode_data_uri("application/gltf-buffer;base64,AAECAw").unwrap(),
            vec![0, 1, 2, 3]
        );
        assert!(decode_data_uri("image/png;base64,AAAA").is_err());
        assert!(decode_data_uri("application/octet-stream,plain").is_err());
        assert!(decode_data_uri("application/octet-stream;base64,@@@@").is_err());
    }

    #[test]
    fn relative_uris() {
        assert_eq!(
            relative_path("a%20b.bin").unwrap(),
            std::path::PathBuf::from("a b.bin")
        );
        assert_eq!(
            relative_path("sub/x%2").unwrap(),
            std::path::PathBuf::from("sub/x%2")
        );
        assert!(relative_path("http://x/y.bin").is_err());
        assert!(relative_path("/etc/passwd").is_err());
        assert!(relative_path("C:/x.bin").is_err());
    }
}
