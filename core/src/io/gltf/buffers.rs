//! Buffer bytes and buffer-view slices, loaded lazily: the GLB BIN chunk (buffer 0 without a `uri`),
//! external files relative to the glTF, and base64 `data:` URIs. A buffer is only read when a view
//! that is actually decoded needs it, so a placeholder buffer without data (an
//! `EXT_meshopt_compression` fallback) is never an error by itself. Compressed views are decoded
//! once and kept.
//!
//! **External files** (a documented decision): a model may only read files inside its own folder.
//! A buffer `uri` must be a relative reference (no URI scheme such as `file:` or `http:`, no
//! absolute path, no drive letter) whose percent-decoded path never climbs above the glTF's folder
//! through `..`; anything else is refused naming `buffers[i].uri`. The file must be a regular file
//! ([`crate::io::read`]), only its first `byteLength` bytes are read (a longer file is fine, a
//! shorter one is an error), `byteLength` is at most [`MAX_GLTF_BYTES`], and the external buffers
//! of one import read at most [`MAX_GLTF_BYTES`] together. Symbolic links inside the folder are
//! followed (whoever made the folder placed them); the regular-file rule and the caps apply to
//! what they point at.
//!
//! Source: glTF 2.0 §3.6.1 "Buffers and Buffer Views", §3.6.1.2 "GLB-stored Buffer", §2.8 "URIs"
//! (relative references, RFC 3986); RFC 2397 (`data:` URIs); glTF-Validator
//! `BUFFER_EMBEDDED_BYTELENGTH_MISMATCH` (a data URI must decode to exactly `byteLength`) and
//! `BUFFER_EXTERNAL_BYTELENGTH_MISMATCH` (a file must hold at least `byteLength`).

use std::path::{Path, PathBuf};

use base64::Engine as _;
use gltf::json;

use super::{MAX_GLTF_BYTES, meshopt};
use crate::error::{Error, Result};
use crate::io::read::read_file_head;

/// Loaded buffers and decoded compressed views of one import.
pub(super) struct Buffers<'a> {
    file: &'a str,
    base_dir: Option<&'a Path>,
    bin: Option<&'a [u8]>,
    loaded: Vec<Option<Vec<u8>>>,
    decoded: Vec<Option<Vec<u8>>>,
    /// Bytes read from external files so far (at most [`MAX_GLTF_BYTES`]).
    external: u64,
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
            external: 0,
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

    /// The folder external files resolve against.
    pub fn base_dir(&self) -> Option<&'a Path> {
        self.base_dir
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
            if declared > MAX_GLTF_BYTES {
                return Err(Error::Limit {
                    what: format!("{file}: {field}.byteLength of an external buffer"),
                    limit: MAX_GLTF_BYTES,
                    found: declared,
                });
            }
            let total = self.external.saturating_add(declared);
            if total > MAX_GLTF_BYTES {
                return Err(Error::Limit {
                    what: format!(
                        "{file}: {field}: bytes read from external buffers in one import"
                    ),
                    limit: MAX_GLTF_BYTES,
                    found: total,
                });
            }
            let path = base.join(&rel);
            let data = read_file_head(&path, declared, MAX_GLTF_BYTES).map_err(|e| {
                Error::format(file, format!("{field}.uri"), format!("cannot read: {e}"))
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
            self.external = total;
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

/// Whether `uri` starts with a URI scheme (`scheme:` with `scheme = ALPHA *( ALPHA / DIGIT / "+" /
/// "-" / "." )`, RFC 3986 §3.1). A Windows drive letter (`C:`) matches too, and is refused with it.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A relative file URI as a path inside the model's folder: percent-decoded, and refused (with the
/// reason) when it is empty, has a scheme, is absolute, or climbs above the folder through `..`.
pub(super) fn relative_path(uri: &str) -> std::result::Result<PathBuf, String> {
    const RULE: &str = "a model may only read files inside its own folder";
    if uri.is_empty() {
        return Err("an empty URI names no file".into());
    }
    if has_scheme(uri) || uri.starts_with("//") {
        return Err(format!(
            "`{uri}`: only relative file URIs and data: URIs are supported ({RULE})"
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
    let decoded =
        String::from_utf8(out).map_err(|_| format!("`{uri}`: percent-decoded URI is not UTF-8"))?;
    let drive = decoded
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
        && decoded.as_bytes().get(1) == Some(&b':');
    if decoded.starts_with('/') || decoded.starts_with('\\') || drive {
        return Err(format!(
            "`{uri}` is an absolute path: only paths relative to the glTF's folder are read ({RULE})"
        ));
    }
    let mut depth = 0usize;
    for part in decoded.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    format!("`{uri}` leaves the glTF's folder through `..` ({RULE})")
                })?;
            }
            _ => depth += 1,
        }
    }
    Ok(PathBuf::from(decoded))
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
        assert_eq!(
            relative_path("sub/../a.bin").unwrap(),
            std::path::PathBuf::from("sub/../a.bin")
        );
        for bad in [
            "http://x/y.bin",
            "file:///etc/passwd",
            "file:x.bin",
            "//host/share/x.bin",
            "/etc/passwd",
            "%2Fetc%2Fpasswd",
            "C:/x.bin",
            "c:x.bin",
            "..",
            "../x.bin",
            "a/../../x.bin",
            "%2e%2e/x.bin",
            "a\\..\\..\\x.bin",
            "",
        ] {
            assert!(relative_path(bad).is_err(), "{bad}");
        }
    }
}
