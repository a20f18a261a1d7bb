//! All-or-nothing output folders: a run writes into a staging folder inside the output folder and
//! moves its results into place only when everything succeeded; a failed run leaves the previous
//! results untouched and no partial files.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// A staging folder `DIR/.mien-staging-<pid>` removed on drop unless committed.
pub struct Staging {
    out: PathBuf,
    dir: PathBuf,
    committed: bool,
}

/// Names a run owns inside the output folder.
pub const OWNED: [&str; 3] = ["frames", "preview.png", "report.json"];

impl Staging {
    /// Create `out` (if missing) and a fresh staging folder inside it.
    ///
    /// # Errors
    /// When `out` exists and is not a folder, or `out/frames` holds files mien did not write (a
    /// name other than `frame_*.ply`), or the folders cannot be created.
    pub fn new(out: &Path) -> Result<Self> {
        if out.exists() && !out.is_dir() {
            bail!("{}: exists and is not a folder", out.display());
        }
        fs::create_dir_all(out)
            .with_context(|| format!("{}: cannot create the output folder", out.display()))?;
        let frames = out.join("frames");
        if frames.is_dir() {
            for e in fs::read_dir(&frames)
                .with_context(|| format!("{}: cannot list", frames.display()))?
            {
                let name = e?.file_name();
                let name = name.to_string_lossy();
                if !(name.starts_with("frame_") && name.ends_with(".ply")) {
                    bail!(
                        "{}: holds `{name}`, which mien did not write; choose another --out",
                        frames.display()
                    );
                }
            }
        }
        let dir = out.join(format!(".mien-staging-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).with_context(|| {
                format!("{}: cannot clear a stale staging folder", dir.display())
            })?;
        }
        fs::create_dir_all(dir.join("frames"))
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        Ok(Staging {
            out: out.to_path_buf(),
            dir,
            committed: false,
        })
    }

    /// The staging folder (write results here).
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Move the staged results into the output folder, replacing the previous run's.
    ///
    /// # Errors
    /// When a rename fails (the staging folder is then left for inspection and named).
    pub fn commit(mut self) -> Result<()> {
        for name in OWNED {
            let staged = self.dir.join(name);
            let target = self.out.join(name);
            if !staged.exists() {
                // Not produced this run (e.g. --ply none): remove the previous run's copy.
                if target.is_dir() {
                    fs::remove_dir_all(&target)
                        .with_context(|| format!("{}: cannot remove", target.display()))?;
                } else if target.exists() {
                    fs::remove_file(&target)
                        .with_context(|| format!("{}: cannot remove", target.display()))?;
                }
                continue;
            }
            if target.is_dir() {
                let old = self.dir.join(format!("{name}.old"));
                fs::rename(&target, &old)
                    .with_context(|| format!("{}: cannot move aside", target.display()))?;
            }
            fs::rename(&staged, &target).with_context(|| {
                format!(
                    "{} → {}: cannot move into place",
                    staged.display(),
                    target.display()
                )
            })?;
        }
        fs::remove_dir_all(&self.dir)
            .with_context(|| format!("{}: cannot remove the staging folder", self.dir.display()))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}
