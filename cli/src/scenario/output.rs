//! The scenario's output folder, all or nothing, by the rules of `mien animate --out`
//! (`crate::outdir`): `DIR` is built in a sibling staging folder `PARENT/.NAME.mien-staging-<pid>`
//! and swapped in by renames (`DIR → .NAME.mien-old-<pid>`, staging → `DIR`, old removed), so a
//! failed write leaves `DIR` as it was. The working directory, `/` and the home folder are
//! refused. What differs is what `DIR` may hold: a scenario writes `report.json` and one
//! `<name>.png` per capture, so an existing `DIR` must hold only `report.json` and `.png` files
//! with such names (anything else is refused before any step runs: it would be deleted).
//!
//! The staging and old folders share `crate::outdir`'s names, so either command's stale-folder
//! clean-up recognises the other's leftovers.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use image::RgbImage;
use mien_core::io::atomic::write_atomic_bytes;
use mien_core::preview::write_png;

use mien_runtime::scenario::Report;
use mien_runtime::scenario::parse::is_name;

/// A checked output folder (it may not exist yet).
#[derive(Debug)]
pub struct Target {
    shown: PathBuf,
    dir: PathBuf,
    parent: PathBuf,
    name: OsString,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The first entry of `dir` a scenario run did not write, described.
fn foreign(dir: &Path) -> Result<Option<String>> {
    let mut names = Vec::new();
    for e in fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))? {
        let e = e.with_context(|| format!("{}: cannot list", dir.display()))?;
        let t = e.file_type()?;
        names.push((e.file_name().to_string_lossy().into_owned(), t));
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (n, t) in names {
        let ours =
            t.is_file() && (n == "report.json" || n.strip_suffix(".png").is_some_and(is_name));
        if !ours {
            return Ok(Some(if t.is_dir() {
                format!("a folder `{n}`")
            } else {
                format!("`{n}`")
            }));
        }
    }
    Ok(None)
}

impl Target {
    /// Check `out` before any work.
    ///
    /// # Errors
    /// `/`, the working directory, the home folder, something that is not a folder, a folder
    /// holding anything but `report.json` and `<name>.png` files.
    pub fn check(out: &Path) -> Result<Target> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        let abs = cwd.join(out);
        let dir = if fs::symlink_metadata(&abs).is_ok() {
            fs::canonicalize(&abs)
                .with_context(|| format!("--out {}: cannot resolve the path", out.display()))?
        } else {
            match (abs.parent(), abs.file_name()) {
                (Some(p), Some(n)) => {
                    fs::canonicalize(p).map_or_else(|_| abs.clone(), |p| p.join(n))
                }
                _ => bail!("--out {}: not a folder name", out.display()),
            }
        };
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            bail!(
                "--out {}: is the root folder; choose a folder of its own",
                out.display()
            );
        };
        for (what, place) in [
            ("the working directory", Some(cwd)),
            ("your home folder", home()),
        ] {
            if place
                .and_then(|p| fs::canonicalize(p).ok())
                .is_some_and(|p| p == dir)
            {
                bail!(
                    "--out {}: is {what}; a run replaces its output folder as a whole, choose a folder of its own",
                    out.display()
                );
            }
        }
        crate::outdir::writable_parent(parent, name, out)?;
        if let Ok(m) = fs::symlink_metadata(&dir) {
            if !m.is_dir() {
                bail!("--out {}: exists and is not a folder", out.display());
            }
            if let Some(what) = foreign(&dir)? {
                bail!(
                    "--out {}: holds {what}, which a scenario run did not write. A run replaces the whole folder, so it must be new or hold only report.json and <capture>.png files; choose another --out or move that away",
                    out.display()
                );
            }
        }
        let target = Target {
            shown: out.to_path_buf(),
            parent: parent.to_path_buf(),
            name: name.to_os_string(),
            dir,
        };
        target.clean_stale();
        Ok(target)
    }

    /// Remove the staging folders of runs whose process is gone, and put back a folder an
    /// interrupted swap left moved aside (Linux, where `/proc` tells; elsewhere they stay).
    fn clean_stale(&self) {
        let Ok(entries) = fs::read_dir(&self.parent) else {
            return;
        };
        let prefix = format!(".{}.mien-", self.name.to_string_lossy());
        let mut found: Vec<(PathBuf, bool)> = Vec::new();
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = n.strip_prefix(&prefix) else {
                continue;
            };
            let (kind, pid) = rest.split_once('-').unwrap_or(("", ""));
            let dead = !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && cfg!(target_os = "linux")
                && !Path::new("/proc").join(pid).exists();
            if dead && (kind == "staging" || kind == "old") {
                found.push((e.path(), kind == "old"));
            }
        }
        found.sort();
        for (path, old) in found {
            if old && fs::symlink_metadata(&self.dir).is_err() {
                let _ = fs::rename(&path, &self.dir);
            } else {
                let _ = fs::remove_dir_all(&path);
            }
        }
    }

    fn sibling(&self, kind: &str) -> PathBuf {
        let mut n = OsString::from(".");
        n.push(&self.name);
        n.push(format!(".mien-{kind}-{}", std::process::id()));
        self.parent.join(n)
    }
}

/// Removes the staging folder unless it was committed.
struct Staging(PathBuf, bool);

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.1 {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// Write `report.json` and the captures into `target`, replacing it as a whole. Returns notes
/// (previous results that could not be removed).
///
/// # Errors
/// I/O failures (the folder is then left as it was); a folder that meanwhile gained files a
/// scenario run does not write.
pub fn write(
    target: &Target,
    report: &Report,
    images: &[(String, RgbImage)],
) -> Result<Vec<String>> {
    // The whole write is one critical section: a Ctrl-C waits for it, then lets a committed run
    // finish, or ends an uncommitted one with the folder as it was.
    let section = crate::interrupt::critical()?;
    fs::create_dir_all(&target.parent)
        .with_context(|| format!("{}: cannot create the folder", target.parent.display()))?;
    let stage = target.sibling("staging");
    let _ = fs::remove_dir_all(&stage);
    fs::create_dir(&stage)
        .with_context(|| format!("{}: cannot create the staging folder", stage.display()))?;
    let mut staging = Staging(stage.clone(), false);
    for (file, image) in images {
        write_png(&stage.join(file), image)?;
    }
    let json = serde_json::to_vec_pretty(report).context("cannot serialise the report")?;
    write_atomic_bytes(&stage.join("report.json"), &json)?;

    let shown = target.shown.display();
    let old = target.sibling("old");
    let exists = fs::symlink_metadata(&target.dir).is_ok();
    if exists && let Some(what) = foreign(&target.dir)? {
        bail!(
            "--out {shown}: now holds {what}, which a scenario run did not write; nothing replaced"
        );
    }
    let _ = fs::remove_dir_all(&old);
    if exists {
        fs::rename(&target.dir, &old)
            .with_context(|| format!("--out {shown}: cannot move aside"))?;
    }
    if let Err(e) = fs::rename(&stage, &target.dir) {
        if exists {
            fs::rename(&old, &target.dir).with_context(|| {
                format!(
                    "{shown} was moved to {} and cannot be moved back",
                    old.display()
                )
            })?;
        }
        return Err(e).with_context(|| {
            format!(
                "{} → {shown}: cannot move the results into place",
                stage.display()
            )
        });
    }
    staging.1 = true;
    section.committed();
    let mut notes = Vec::new();
    if exists && let Err(e) = fs::remove_dir_all(&old) {
        notes.push(format!(
            "the previous results, moved to {}, could not be removed ({e}); remove them by hand",
            old.display()
        ));
    }
    Ok(notes)
}
