//! Atomic file writes: everything goes to a temporary file in the target's folder, which is
//! flushed, fsynced and then renamed over the target.
//!
//! Source: DESIGN.md "Errors" (nothing is written partially: write to a temp file, then rename).
//! A rename within one folder is atomic on POSIX file systems (`rename(2)`), so a reader sees
//! either the old file or the complete new one, never a prefix. The temporary file comes from
//! the `tempfile` crate (`Builder::tempfile_in`), which deletes it when it is dropped: on every
//! error path nothing new is left at the target and no temporary file remains.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::error::{Error, Result};

/// Write `path` atomically through `write`, which receives a buffered writer.
///
/// The data goes to a hidden temporary file `.<name>.<random>.tmp` next to `path`; after `write`
/// returns `Ok` the buffer is flushed, the file is fsynced (`File::sync_all`) and renamed over
/// `path` (`NamedTempFile::persist`), then the folder is fsynced (best effort: a failure there
/// is not reported, the file is already complete in place). On Unix the new file is created with
/// mode `0o666` minus the process umask, like `File::create`.
///
/// # Errors
/// [`Error::Io`] naming `path` when the temporary file cannot be created, `write` fails, or the
/// flush, fsync or rename fails. In every error case `path` keeps its previous content (or stays
/// absent) and the temporary file is removed.
pub fn write_atomic<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let io_err = |e: io::Error| Error::io(path, e);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io_err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path does not name a file",
        ))
    })?;
    if !dir.is_dir() {
        return Err(io_err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the folder {} does not exist", dir.display()),
        )));
    }
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");

    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let temp = builder.tempfile_in(dir).map_err(io_err)?;

    let mut out = BufWriter::new(temp);
    write(&mut out).map_err(io_err)?;
    out.flush().map_err(io_err)?;
    let temp = out.into_inner().map_err(|e| io_err(e.into_error()))?;
    temp.as_file().sync_all().map_err(io_err)?;
    temp.persist(path).map_err(|e| io_err(e.error))?;
    sync_dir(dir);
    Ok(())
}

/// Write `bytes` to `path` atomically (see [`write_atomic`]).
///
/// # Errors
/// As [`write_atomic`].
pub fn write_atomic_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

/// Fsync the folder so the rename itself is durable (POSIX leaves that to the folder's fsync).
/// Best effort: some file systems refuse to open or sync a folder.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
