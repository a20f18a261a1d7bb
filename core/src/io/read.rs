//! Bounded reads of input files, shared by every reader (glTF / GLB and their buffers, 3DGS PLY,
//! Live Link Face CSV).
//!
//! Three rules, so that no input can hang a reader or make it allocate without bound:
//!
//! 1. **Regular files only.** A named pipe (FIFO) blocks `open` until someone writes to it, and a
//!    device such as `/dev/zero` never ends; both are refused before any byte is read. The type is
//!    checked on the path (following symlinks) *before* opening, so a FIFO is never opened, and
//!    again on the open handle, so a file swapped for a device between the two checks is refused
//!    too. (A FIFO swapped in between the two checks would still block in `open`; that needs
//!    someone racing the reader on the same path.)
//! 2. **A documented size cap, checked twice.** The file's metadata length is compared with the cap
//!    before reading, and the read itself goes through [`Read::take`]`(cap + 1)`, so a file that
//!    grows while it is read, or whose metadata lies (procfs, some network file systems), still
//!    cannot make the reader hold more than `cap + 1` bytes.
//! 3. **Read only what is needed.** [`read_file_head`] reads the first `len` bytes and never more,
//!    however large the file is (a glTF buffer needs `byteLength` bytes; the file may be longer).
//!
//! Source: POSIX `stat(2)` file types (`S_ISREG`, `S_ISFIFO`, `S_ISCHR`, `S_ISBLK`, `S_ISSOCK`),
//! `std::io::Read::take`.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// A short description of a file type that is not a regular file (`a named pipe (FIFO)`).
fn describe_kind(meta: &Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The [`Error::Format`] for a path that is not a regular file.
fn not_regular(path: &Path, meta: &Metadata) -> Error {
    Error::format(
        path.display().to_string(),
        "file type",
        format!(
            "is {}, not a regular file: mien reads only regular files (a pipe or device may block \
             or never end)",
            describe_kind(meta)
        ),
    )
}

/// Open `path` for reading after checking (before and after opening) that it is a regular file;
/// returns the file and its metadata length in bytes.
///
/// # Errors
/// [`Error::Io`] when the path cannot be inspected or opened; [`Error::Format`] (field
/// `file type`) when it is not a regular file.
pub fn open_regular(path: &Path) -> Result<(File, u64)> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok((file, meta.len()))
}

/// The [`Error::Limit`] for a file over `cap` bytes.
fn too_big(path: &Path, cap: u64, found: u64) -> Error {
    Error::Limit {
        what: format!("{}: file size in bytes", path.display()),
        limit: cap,
        found,
    }
}

/// Read the whole of `path`, a regular file of at most `cap` bytes.
///
/// The metadata length is checked against `cap` before reading, and at most `cap + 1` bytes are
/// ever read (module docs), so memory stays below `cap + 1` bytes whatever the file does.
///
/// # Errors
/// [`Error::Io`] when the file cannot be opened or read; [`Error::Format`] (field `file type`) when
/// it is not a regular file (a FIFO, a device, a directory); [`Error::Limit`] naming the file when
/// it holds more than `cap` bytes (by its metadata or by what was read).
pub fn read_file_capped(path: &Path, cap: u64) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path)?;
    if len > cap {
        return Err(too_big(path, cap, len));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(path, cap, bytes.len() as u64));
    }
    Ok(bytes)
}

/// Read the first `len` bytes of `path`, a regular file, and never more; the result is shorter
/// than `len` when the file is (the caller decides whether that is an error). `len` itself must
/// not exceed `cap`.
///
/// # Errors
/// [`Error::Limit`] when `len > cap` (nothing is opened); otherwise as [`read_file_capped`] (except
/// that a long file is not an error: only its head is read).
pub fn read_file_head(path: &Path, len: u64, cap: u64) -> Result<Vec<u8>> {
    if len > cap {
        return Err(Error::Limit {
            what: format!("{}: bytes to read", path.display()),
            limit: cap,
            found: len,
        });
    }
    let (file, have) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(have)).unwrap_or(0));
    file.take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_heads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        std::fs::write(&p, [1u8, 2, 3, 4, 5]).unwrap();
        assert_eq!(read_file_capped(&p, 5).unwrap(), vec![1, 2, 3, 4, 5]);
        let e = read_file_capped(&p, 4).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Limit {
                    limit: 4,
                    found: 5,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(read_file_head(&p, 2, 10).unwrap(), vec![1, 2]);
        assert_eq!(read_file_head(&p, 9, 10).unwrap(), vec![1, 2, 3, 4, 5]);
        assert!(matches!(
            read_file_head(&p, 11, 10),
            Err(Error::Limit { .. })
        ));
        let e = read_file_capped(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        assert!(matches!(
            read_file_capped(&dir.path().join("missing"), 10),
            Err(Error::Io { .. })
        ));
    }
}

/// Parse `text` as strict JSON into `T` (its serde rules: unknown keys refused where the type says
/// `deny_unknown_fields`), naming the JSON pointer of the first problem (`/bones/2/source`).
///
/// # Errors
/// [`crate::Error::Format`] naming `file`, the pointer (`/` for the document) and serde's reason.
pub fn json_strict<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> crate::error::Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let pointer = if path == "." {
            "/".to_string()
        } else {
            format!("/{}", path.replace(['.', '['], "/").replace(']', ""))
        };
        crate::Error::format(file, pointer, e.into_inner().to_string())
    })
}
