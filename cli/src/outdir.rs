//! All-or-nothing output folders. A run's result is the whole folder `DIR`: it is built in a
//! sibling staging folder `PARENT/.NAME.mien-staging-<pid>` (same filesystem, so renames are
//! atomic) and committed by `rename(DIR → PARENT/.NAME.mien-old-<pid>)`, `rename(staging → DIR)`,
//! then removing the old folder. A failed or interrupted run leaves `DIR` as it was; two runs
//! into one `DIR` end with one run's folder, never a mix (the commit retries when another run
//! wins the race).
//!
//! `DIR` must be new, or hold only what mien writes there (a regular file `report.json`, a regular
//! file `preview.png`, a folder `frames/` of regular files `frame_<digits>.ply` / `.spz` /
//! `.glb`): anything else is refused before any work, as are the working directory, `/` and the
//! home folder.

use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::interrupt;

/// How many times a commit is tried when concurrent runs keep replacing `DIR`.
pub const COMMIT_ATTEMPTS: u32 = 5;

/// A checked output folder (it may not exist yet).
#[derive(Debug)]
pub struct Target {
    /// As the user gave it (for messages).
    shown: PathBuf,
    /// Absolute, symlinks resolved where the folder exists.
    dir: PathBuf,
    parent: PathBuf,
    name: OsString,
    /// What the check did or left (stale folders of earlier runs).
    pub notes: Vec<String>,
}

impl Target {
    /// Check `out` before any work: refuse the working directory, `/`, the home folder, a path
    /// that is not a folder, and a folder holding anything mien does not write; remove (or, on
    /// systems without `/proc`, report) stale staging and old folders of runs whose process is
    /// gone, restoring `DIR` from an old folder when an interrupted commit left it missing.
    ///
    /// # Errors
    /// Each refusal above, naming `out` and what it holds; I/O errors listing the folder.
    pub fn check(out: &Path) -> Result<Target> {
        let shown = out.to_path_buf();
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        let abs = cwd.join(out);
        let dir = if fs::symlink_metadata(&abs).is_ok() {
            fs::canonicalize(&abs)
                .with_context(|| format!("--out {}: cannot resolve the path", out.display()))?
        } else {
            let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
                bail!("--out {}: not a folder name", out.display());
            };
            if abs.components().next_back() != Some(Component::Normal(name)) {
                bail!("--out {}: not a folder name", out.display());
            }
            fs::canonicalize(parent).map_or_else(|_| abs.clone(), |p| p.join(name))
        };
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            bail!(
                "--out {}: is the root folder; mien replaces its output folder as a whole, choose a folder of its own",
                out.display()
            );
        };
        for (what, place) in [
            ("the working directory", Some(cwd)),
            ("your home folder", home()),
        ] {
            if let Some(p) = place.and_then(|p| fs::canonicalize(p).ok())
                && p == dir
            {
                bail!(
                    "--out {}: is {what}; mien replaces its output folder as a whole, choose a folder of its own (e.g. --out mien-out)",
                    out.display()
                );
            }
        }
        let mut target = Target {
            shown,
            parent: parent.to_path_buf(),
            name: name.to_os_string(),
            dir: dir.clone(),
            notes: Vec::new(),
        };
        writable_parent(&target.parent, &target.name, out)?;
        target.clean_stale();
        match fs::symlink_metadata(&dir) {
            Ok(m) if !m.is_dir() => bail!("--out {}: exists and is not a folder", out.display()),
            Ok(_) => {
                if let Some(what) = foreign(&dir)? {
                    bail!(
                        "--out {}: holds {what}, which mien did not write. A run replaces the whole folder, so it must be new or hold only mien's report.json, preview.png and frames/frame_NNNNN.ply (.spz, .glb); choose another --out or move that away",
                        out.display()
                    );
                }
            }
            Err(_) => {}
        }
        Ok(target)
    }

    fn sibling(&self, kind: &str, pid: u32) -> PathBuf {
        let mut n = OsString::from(".");
        n.push(&self.name);
        n.push(format!(".mien-{kind}-{pid}"));
        self.parent.join(n)
    }

    /// Remove the leftovers of runs whose process is gone.
    fn clean_stale(&mut self) {
        let Ok(entries) = fs::read_dir(&self.parent) else {
            return;
        };
        let prefix = format!(".{}.mien-", self.name.to_string_lossy());
        let me = std::process::id();
        let mut found: Vec<(PathBuf, &'static str, u32)> = Vec::new();
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = n.strip_prefix(&prefix) else {
                continue;
            };
            for kind in ["staging", "old"] {
                if let Some(pid) = rest
                    .strip_prefix(kind)
                    .and_then(|r| r.strip_prefix('-'))
                    .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|p| p.parse::<u32>().ok())
                {
                    found.push((e.path(), kind, pid));
                }
            }
        }
        found.sort();
        for (path, kind, pid) in found {
            match process_alive(pid) {
                Some(true) if pid != me => continue,
                None if pid != me => {
                    self.notes.push(format!(
                        "left {}: this system cannot tell whether process {pid} is still running; remove it by hand once no mien run writes {}",
                        path.display(),
                        self.shown.display()
                    ));
                    continue;
                }
                _ => {}
            }
            if kind == "old" && fs::symlink_metadata(&self.dir).is_err() {
                match fs::rename(&path, &self.dir) {
                    Ok(()) => self.notes.push(format!(
                        "restored {} from {}, where an interrupted run (process {pid}) had moved it",
                        self.shown.display(),
                        path.display()
                    )),
                    Err(e) => self
                        .notes
                        .push(format!("could not restore {}: {e}", path.display())),
                }
                continue;
            }
            match fs::remove_dir_all(&path) {
                Ok(()) => self.notes.push(format!(
                    "removed {}, left by an earlier run (process {pid}) that was stopped",
                    path.display()
                )),
                Err(e) => self.notes.push(format!(
                    "could not remove {}, left by an earlier run: {e}",
                    path.display()
                )),
            }
        }
    }

    /// Create the staging folder (with `frames/`), after checking that `DIR` can be moved aside
    /// at commit time (it cannot be on a mount point or when marked immutable).
    ///
    /// # Errors
    /// When the parent or the staging folder cannot be created, or `DIR` cannot be moved.
    pub fn stage(&self) -> Result<Staging> {
        fs::create_dir_all(&self.parent)
            .with_context(|| format!("{}: cannot create the folder", self.parent.display()))?;
        let pid = std::process::id();
        let old = self.sibling("old", pid);
        let mut section = interrupt::critical()?;
        if fs::symlink_metadata(&self.dir).is_ok() {
            match fs::rename(&self.dir, &old) {
                // Gone since the look above: a concurrent run moved it aside; nothing to probe.
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => {
                    // EACCES: the parent's permissions (EPERM is an immutable or append-only folder).
                    if e.raw_os_error() == Some(EACCES) || e.kind() == ErrorKind::ReadOnlyFilesystem
                    {
                        bail!("{}", not_writable(&self.shown, &self.parent, &e));
                    }
                    return Err(e).with_context(|| {
                    format!(
                        "--out {}: cannot be moved aside, which is how a run replaces it (is it a mount point, or marked immutable?)",
                        self.shown.display()
                    )
                });
                }
                Ok(()) => {
                    if let Err(e) = fs::rename(&old, &self.dir) {
                        // Another run committed in between: its results supersede the ones
                        // moved here.
                        if fs::symlink_metadata(&self.dir).is_err() {
                            bail!(
                                "{} was moved to {} and cannot be moved back: {e}",
                                self.shown.display(),
                                old.display()
                            );
                        }
                        fs::remove_dir_all(&old).ok();
                    }
                }
            }
        }
        let dir = self.sibling("staging", pid);
        section.set_staging(Some(&dir));
        if let Err(e) = fs::create_dir(&dir).and_then(|()| fs::create_dir(dir.join("frames"))) {
            let _ = fs::remove_dir_all(&dir);
            section.set_staging(None);
            return Err(e)
                .with_context(|| format!("{}: cannot create the staging folder", dir.display()));
        }
        Ok(Staging {
            out: self.dir.clone(),
            shown: self.shown.clone(),
            old,
            dir,
            committed: false,
        })
    }
}

/// `EACCES`, "Permission denied" (the same value on Linux and macOS).
const EACCES: i32 = 13;

/// The refusal of an output folder whose parent cannot be written.
fn not_writable(out: &Path, parent: &Path, e: &std::io::Error) -> String {
    format!(
        "--out {}: its parent folder {} is not writable ({e}); a run builds its results in a folder beside --out and swaps them in, so choose an --out inside a folder you can write",
        out.display(),
        parent.display()
    )
}

/// Refuse, before any work, an existing `parent` in which a folder cannot be created (no write
/// permission, a read-only file system): probed by creating and removing
/// `PARENT/.NAME.mien-probe-<pid>`, as the permission bits alone do not tell (root, ACLs,
/// read-only mounts). A parent that does not exist yet is created later, and its errors named
/// then.
///
/// # Errors
/// Naming `--out` and the parent folder.
pub fn writable_parent(parent: &Path, name: &std::ffi::OsStr, out: &Path) -> Result<()> {
    if !parent.is_dir() {
        return Ok(());
    }
    let mut n = OsString::from(".");
    n.push(name);
    n.push(format!(".mien-probe-{}", std::process::id()));
    let probe = parent.join(n);
    match fs::create_dir(&probe) {
        Ok(()) => {
            let _ = fs::remove_dir(&probe);
            Ok(())
        }
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            bail!("{}", not_writable(out, parent, &e))
        }
        Err(_) => Ok(()),
    }
}

/// The first thing in `dir` mien did not write (described), if any.
fn foreign(dir: &Path) -> Result<Option<String>> {
    let list = |d: &Path| -> Result<Vec<(String, fs::FileType)>> {
        let mut v = Vec::new();
        let entries = match fs::read_dir(d) {
            // Gone between the caller's look and this listing: a concurrent run moved it aside,
            // so it holds nothing of anyone's here (the commit's rename loop handles the race).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(v),
            r => r.with_context(|| format!("{}: cannot list", d.display()))?,
        };
        for e in entries {
            let e = e.with_context(|| format!("{}: cannot list", d.display()))?;
            let t = e
                .file_type()
                .with_context(|| format!("{}: cannot read", e.path().display()))?;
            v.push((e.file_name().to_string_lossy().into_owned(), t));
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(v)
    };
    for (name, t) in list(dir)? {
        let ok = match name.as_str() {
            "report.json" | "preview.png" => t.is_file(),
            "frames" if t.is_dir() => {
                for (f, ft) in list(&dir.join("frames"))? {
                    if !(ft.is_file() && is_frame_name(&f)) {
                        return Ok(Some(format!("`frames/{f}`")));
                    }
                }
                true
            }
            _ => false,
        };
        if !ok {
            return Ok(Some(if t.is_dir() {
                format!("a folder `{name}`")
            } else if t.is_symlink() {
                format!("a link `{name}`")
            } else {
                format!("`{name}`")
            }));
        }
    }
    Ok(None)
}

/// `frame_<digits>.ply`, `.spz` or `.glb` (every `--format`).
fn is_frame_name(f: &str) -> bool {
    f.strip_prefix("frame_")
        .and_then(|r| {
            r.strip_suffix(".ply")
                .or_else(|| r.strip_suffix(".spz"))
                .or_else(|| r.strip_suffix(".glb"))
        })
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Whether process `pid` exists: `Some` on Linux (`/proc/<pid>`), `None` where it cannot be told.
fn process_alive(pid: u32) -> Option<bool> {
    if cfg!(target_os = "linux") {
        Some(Path::new("/proc").join(pid.to_string()).exists())
    } else {
        None
    }
}

/// A staging folder, removed on drop unless committed.
pub struct Staging {
    out: PathBuf,
    shown: PathBuf,
    old: PathBuf,
    dir: PathBuf,
    committed: bool,
}

impl Staging {
    /// The staging folder (write results here).
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Make the staged folder the output folder. Returns notes (an old folder that could not be
    /// removed).
    ///
    /// # Errors
    /// [`interrupt::Interrupted`] when a stop was asked for (nothing is moved); a rename that fails for another
    /// reason than a concurrent run (the output folder is then put back as it was); a folder that
    /// meanwhile gained files mien did not write; [`COMMIT_ATTEMPTS`] lost races.
    pub fn commit(mut self) -> Result<Vec<String>> {
        let section = interrupt::critical()?;
        let shown = self.shown.display().to_string();
        for _ in 0..COMMIT_ATTEMPTS {
            let exists = fs::symlink_metadata(&self.out).is_ok();
            if exists && let Some(what) = foreign(&self.out)? {
                bail!(
                    "--out {shown}: now holds {what}, which mien did not write; nothing replaced"
                );
            }
            if fs::symlink_metadata(&self.old).is_ok() {
                // A previous attempt moved results here that a concurrent run then superseded.
                fs::remove_dir_all(&self.old)
                    .with_context(|| format!("{}: cannot remove", self.old.display()))?;
            }
            let moved = match fs::rename(&self.out, &self.old) {
                Ok(()) => true,
                Err(e) if e.kind() == ErrorKind::NotFound => false,
                Err(e) => {
                    return Err(e).with_context(|| format!("--out {shown}: cannot move aside"));
                }
            };
            match fs::rename(&self.dir, &self.out) {
                Ok(()) => {
                    self.committed = true;
                    section.committed();
                    let mut notes = Vec::new();
                    if moved && let Err(e) = fs::remove_dir_all(&self.old) {
                        notes.push(format!(
                            "the previous results, moved to {}, could not be removed ({e}); remove them by hand",
                            self.old.display()
                        ));
                    }
                    return Ok(notes);
                }
                // Another run put its folder in place between the two renames: try again.
                Err(_) if fs::symlink_metadata(&self.out).is_ok() => {}
                Err(e) => {
                    if moved {
                        fs::rename(&self.old, &self.out).with_context(|| {
                            format!(
                                "{shown} was moved to {} and cannot be moved back",
                                self.old.display()
                            )
                        })?;
                    }
                    return Err(e).with_context(|| {
                        format!(
                            "{} → {shown}: cannot move the results into place",
                            self.dir.display()
                        )
                    });
                }
            }
        }
        bail!(
            "--out {shown}: other runs kept replacing it; gave up after {COMMIT_ATTEMPTS} attempts (their results are in place)"
        )
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
            interrupt::set_staging(None);
        }
    }
}

/// Whether `x` and `y` name one file: the same path, or the same file once both resolve (links,
/// `..`). An output must never replace an input.
/// Refuse, before anything is written, an output whose folder does not exist or is not a folder
/// (so a run with several outputs never leaves some written and others not for that reason).
///
/// # Errors
/// The flag and path, and what is wrong with its folder.
pub(crate) fn check_output_folders(outputs: &[(&str, &Path)]) -> anyhow::Result<()> {
    for (flag, p) in outputs {
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            anyhow::bail!(
                "{flag} {}: the folder {} does not exist (nothing was written)",
                p.display(),
                parent.display()
            );
        }
        if p.is_dir() {
            anyhow::bail!(
                "{flag} {}: is a folder, not a file (nothing was written)",
                p.display()
            );
        }
    }
    Ok(())
}

pub(crate) fn same_file(x: &Path, y: &Path) -> bool {
    x == y
        || matches!((std::fs::canonicalize(x), std::fs::canonicalize(y)), (Ok(p), Ok(q)) if p == q)
}

/// A folder of results built beside its destination (`PARENT/.NAME.mien-staging-<pid>`, the same
/// filesystem) and moved into place only when complete — `mien bench --export` (a whole new folder)
/// and `--plot` (the charts and `sweep.json` replacing their older copies). A failed or
/// interrupted run removes the staging folder and leaves the destination as it was.
#[derive(Debug)]
pub(crate) struct StagedDir {
    staging: PathBuf,
    dest: PathBuf,
    done: bool,
}

impl StagedDir {
    /// Create the staging folder for `dest` (recorded for the signal handler first).
    ///
    /// # Errors
    /// `flag dest` and the I/O error; [`interrupt::Interrupted`] when a stop was already asked.
    pub(crate) fn new(flag: &str, dest: &Path) -> Result<Self> {
        let parent = dest
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let Some(name) = dest.file_name() else {
            bail!("{flag} {}: not a folder name", dest.display());
        };
        let mut staged = OsString::from(".");
        staged.push(name);
        staged.push(format!(".mien-staging-{}", std::process::id()));
        let staging = parent.join(staged);
        let mut c = interrupt::critical()?;
        c.set_staging(Some(&staging));
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging).with_context(|| {
            format!(
                "{flag} {}: cannot create {}",
                dest.display(),
                staging.display()
            )
        })?;
        drop(c);
        Ok(StagedDir {
            staging,
            dest: dest.to_path_buf(),
            done: false,
        })
    }

    /// Where to write.
    pub(crate) fn path(&self) -> &Path {
        &self.staging
    }

    /// Move the whole staging folder to the destination (which must be missing or empty).
    ///
    /// # Errors
    /// The destination gained entries meanwhile; the rename's I/O error.
    pub(crate) fn commit_folder(mut self) -> Result<()> {
        let c = interrupt::critical()?;
        if self.dest.is_dir() {
            fs::remove_dir(&self.dest).with_context(|| {
                format!(
                    "{}: no longer empty; the results stay in {}",
                    self.dest.display(),
                    self.staging.display()
                )
            })?;
        }
        fs::rename(&self.staging, &self.dest).with_context(|| {
            format!(
                "moving {} to {}",
                self.staging.display(),
                self.dest.display()
            )
        })?;
        self.done = true;
        c.committed();
        Ok(())
    }

    /// Move every file of the staging folder into the destination (created if missing), replacing
    /// files of the same names, then remove the staging folder.
    ///
    /// # Errors
    /// The I/O errors of creating the destination and renaming.
    pub(crate) fn commit_files(mut self) -> Result<Vec<PathBuf>> {
        let c = interrupt::critical()?;
        fs::create_dir_all(&self.dest)
            .with_context(|| format!("creating {}", self.dest.display()))?;
        let mut moved = Vec::new();
        let mut names: Vec<_> = fs::read_dir(&self.staging)?
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.sort();
        for n in names {
            let to = self.dest.join(&n);
            fs::rename(self.staging.join(&n), &to)
                .with_context(|| format!("moving into {}", to.display()))?;
            moved.push(to);
        }
        let _ = fs::remove_dir(&self.staging);
        self.done = true;
        c.committed();
        Ok(moved)
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.staging);
            interrupt::set_staging(None);
        }
    }
}
