//! The container: a GLB (12-byte header, then a JSON chunk and an optional BIN chunk) or plain glTF
//! JSON. Every length in a GLB header is checked against the bytes actually present before anything
//! is parsed, so a truncated, CR-stripped or re-encoded file is refused with a message that says
//! what happened.
//!
//! Source: glTF 2.0 §4.4 "Binary glTF Layout" (header `magic, version, length`; chunks
//! `chunkLength, chunkType, chunkData` with 4-byte aligned lengths; JSON first, BIN second) and
//! §2.7 "JSON Encoding" (glTF JSON is UTF-8 **without a BOM**; a file that starts with one is
//! refused by name rather than with the JSON parser's "expected value at line 1 column 1").

use crate::error::{Error, Result};
use crate::rig::ImportNote;

/// GLB magic `glTF`.
const MAGIC: &[u8; 4] = b"glTF";
/// Chunk type `JSON` (little-endian u32 of the ASCII bytes).
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type `BIN\0`.
const CHUNK_BIN: u32 = 0x004E_4942;
/// The UTF-8 encoding of U+FEFF, the byte order mark.
const UTF8_BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// The reason given for JSON that starts with a byte order mark.
const BOM_REASON: &str = "starts with a UTF-8 byte order mark (bytes EF BB BF), which glTF forbids: \
     glTF JSON must be UTF-8 without a BOM (glTF 2.0 §2.7 \"JSON Encoding\"); save the file \
     without it";

/// The parts of a glTF file.
pub(super) struct Parts<'a> {
    /// Whether the file is a GLB.
    pub glb: bool,
    /// The JSON text (the whole file for a `.gltf`).
    pub json: &'a [u8],
    /// The GLB BIN chunk, if any.
    pub bin: Option<&'a [u8]>,
    /// What was skipped (unknown chunks).
    pub notes: Vec<ImportNote>,
}

/// Split `bytes` into JSON and BIN after checking the GLB header and chunk lengths.
///
/// # Errors
/// [`Error::Format`] naming `file` when the bytes are neither a GLB nor a JSON object, or when a
/// GLB header/chunk length disagrees with the file.
pub(super) fn split<'a>(bytes: &'a [u8], file: &str) -> Result<Parts<'a>> {
    if bytes.starts_with(MAGIC) {
        return split_glb(bytes, file);
    }
    if bytes.starts_with(UTF8_BOM) {
        return Err(Error::format(file, "JSON", BOM_REASON));
    }
    let first = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &bytes[i..]);
    let looks_json = first.is_some_and(|s| s.starts_with(b"{"));
    let says_glb = file.to_ascii_lowercase().ends_with(".glb");
    if says_glb || !looks_json {
        let what = describe_start(bytes);
        let expected = if says_glb {
            "a GLB starting with the magic `glTF`"
        } else {
            "a GLB (magic `glTF`) or glTF JSON (an object `{…}`)"
        };
        return Err(Error::format(
            file,
            "header",
            format!("not a glTF file: expected {expected}, found {what}"),
        ));
    }
    Ok(Parts {
        glb: false,
        json: bytes,
        bin: None,
        notes: Vec::new(),
    })
}

/// A short description of the first bytes, for messages.
fn describe_start(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "an empty file".into();
    }
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    let head: String = bytes[start..]
        .iter()
        .take(24)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    let lower = head.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        format!("an HTML page (`{head}`…), e.g. a web page saved in place of the model")
    } else if lower.starts_with('<') {
        format!("an XML/HTML document (`{head}`…)")
    } else {
        format!("bytes `{head}`…")
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn split_glb<'a>(bytes: &'a [u8], file: &str) -> Result<Parts<'a>> {
    let err = |field: &str, reason: String| Error::format(file, field, reason);
    let n = bytes.len();
    let (Some(version), Some(length)) = (u32_at(bytes, 4), u32_at(bytes, 8)) else {
        return Err(err(
            "header",
            format!("file is {n} bytes, shorter than the 12-byte GLB header"),
        ));
    };
    if version != 2 {
        return Err(err(
            "header.version",
            format!("GLB version {version}; only version 2 (glTF 2.0) is supported"),
        ));
    }
    let length = length as usize;
    if length != n {
        let why = if n < length {
            "the file is shorter than its header says: it was truncated, or bytes were removed (a text-mode \
             copy that strips CR bytes does this)"
        } else {
            "the file is longer than its header says: bytes were added (a text/UTF-8 conversion that \
             replaces invalid bytes does this) or data was appended"
        };
        return Err(err(
            "header.length",
            format!("header says {length} bytes but the file has {n}: {why}"),
        ));
    }
    let mut at = 12usize;
    let mut json: Option<&[u8]> = None;
    let mut bin: Option<&[u8]> = None;
    let mut notes = Vec::new();
    let mut index = 0usize;
    while at < n {
        let field = format!("chunks[{index}]");
        let (Some(len), Some(ty)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) else {
            return Err(err(
                &field,
                format!(
                    "chunk header at byte {at} is cut off ({} bytes left, 8 needed)",
                    n - at
                ),
            ));
        };
        let len = len as usize;
        let start = at + 8;
        let Some(end) = start.checked_add(len).filter(|&e| e <= n) else {
            return Err(err(
                &field,
                format!(
                    "chunk at byte {at} claims {len} bytes but only {} remain in the file",
                    n - start
                ),
            ));
        };
        if !len.is_multiple_of(4) {
            return Err(err(
                &field,
                format!("chunk length {len} is not a multiple of 4 (GLB chunks are padded)"),
            ));
        }
        let data = &bytes[start..end];
        match (index, ty) {
            (0, CHUNK_JSON) => json = Some(data),
            (0, _) => {
                return Err(err(
                    &field,
                    format!("the first chunk must be JSON, found type 0x{ty:08X}"),
                ));
            }
            (_, CHUNK_JSON) => return Err(err(&field, "a second JSON chunk".to_string())),
            (1, CHUNK_BIN) => bin = Some(data),
            (_, CHUNK_BIN) => {
                return Err(err(
                    &field,
                    "a BIN chunk that is not the second chunk".to_string(),
                ));
            }
            _ => notes.push(ImportNote {
                field: field.clone(),
                message: format!("unknown chunk type 0x{ty:08X} ({len} bytes) skipped"),
            }),
        }
        at = end;
        index += 1;
    }
    let Some(json) = json else {
        return Err(err("chunks[0]", "the GLB has no JSON chunk".to_string()));
    };
    if json.starts_with(UTF8_BOM) {
        return Err(err("chunks[0]", format!("the JSON chunk {BOM_REASON}")));
    }
    if let Err(e) = std::str::from_utf8(json) {
        return Err(err(
            "chunks[0]",
            format!(
                "JSON chunk is not valid UTF-8 at byte {}",
                20 + e.valid_up_to()
            ),
        ));
    }
    Ok(Parts {
        glb: true,
        json,
        bin,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glb(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        let chunk = |out: &mut Vec<u8>, data: &[u8], ty: u32, pad: u8| {
            let mut d = data.to_vec();
            while !d.len().is_multiple_of(4) {
                d.push(pad);
            }
            out.extend_from_slice(&(d.len() as u32).to_le_bytes());
            out.extend_from_slice(&ty.to_le_bytes());
            out.extend_from_slice(&d);
        };
        chunk(&mut out, json, CHUNK_JSON, b' ');
        if let Some(b) = bin {
            chunk(&mut out, b, CHUNK_BIN, 0);
        }
        let mut file = Vec::new();
        file.extend_from_slice(MAGIC);
        file.extend_from_slice(&2u32.to_le_bytes());
        file.extend_from_slice(&((out.len() + 12) as u32).to_le_bytes());
        file.extend_from_slice(&out);
        file
    }

    #[test]
    fn well_formed_glb_splits() {
        let f = glb(br#"{"asset":{"version":"2.0"}}"#, Some(&[1, 2, 3]));
        let p = split(&f, "a.glb").unwrap();
        assert!(p.glb);
        assert!(p.json.starts_with(b"{\"asset\""));
        assert_eq!(p.bin.unwrap(), &[1, 2, 3, 0]);
    }

    #[test]
    fn every_truncation_is_an_error_never_a_panic() {
        let f = glb(br#"{"asset":{"version":"2.0"}}"#, Some(&[9; 16]));
        for cut in 0..f.len() {
            let e = split(&f[..cut], "cut.glb").err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|m| m.contains("cut.glb")),
                "cut at {cut}: {e:?}"
            );
        }
    }

    #[test]
    fn html_is_named() {
        let e = split(b"\n\n<!DOCTYPE html><html>", "x.glb")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("x.glb") && e.contains("HTML"), "{e}");
    }

    #[test]
    fn length_mismatch_both_ways() {
        let mut f = glb(br#"{"asset":{"version":"2.0"}}"#, None);
        f.push(0);
        let e = split(&f, "long.glb").err().unwrap().to_string();
        assert!(e.contains("longer"), "{e}");
        let e = split(&f[..f.len() - 2], "short.glb")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("shorter"), "{e}");
    }
}

/// A GLB from a glTF JSON value and its BIN chunk (glTF 2.0 §4.4): the JSON padded with spaces,
/// the BIN with zeros, both to 4 bytes; `what` names the file in messages. Every writer of mien's
/// GLBs (splat frames, bakes, LODs, exported linear heads) ends here.
///
/// # Errors
/// [`Error::Format`] when the JSON cannot be serialised; [`Error::Limit`] for a file over the
/// format's 32-bit length.
pub fn write_glb(root: &serde_json::Value, mut bin: Vec<u8>, what: &str) -> Result<Vec<u8>> {
    let mut text =
        serde_json::to_vec(root).map_err(|e| Error::format(what, "JSON", e.to_string()))?;
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + text.len() as u64 + 8 + bin.len() as u64;
    if total > u64::from(u32::MAX) {
        return Err(Error::Limit {
            what: format!("{what}: GLB bytes"),
            limit: u64::from(u32::MAX),
            found: total,
        });
    }
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
    out.extend_from_slice(&bin);
    Ok(out)
}
