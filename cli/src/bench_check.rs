//! `mien bench`'s argument checks, done before anything is timed or written, and its outputs:
//! `--out`'s two files written all-or-nothing, `--export` into an empty folder only.

use std::path::{Path, PathBuf};

use anyhow::Context;
use mien_benches::workloads::{self, ALL, Workload};

use crate::bench::BenchArgs;

/// The most characters one row poses: a sink of the largest workload (W4's 17,821 vertices) at this
/// batch is 3.6 × 10⁹ slots, past what one sink addresses; larger batches are refused up front.
pub const MAX_BATCH: u32 = 200_000;

/// The most timed frames per row (as `mien animate` caps its frames): more would run for hours.
pub const MAX_FRAMES: u32 = 100_000;

/// Refuse combinations that would be ignored, and values that cannot run: `--export` and `--plot`
/// with the table's flags or with each other (`--export` also with `--allow-software`), frames
/// outside 1..=[`MAX_FRAMES`], a batch of 0 or over [`MAX_BATCH`], a batch or backend named twice
/// (workloads: [`workload_ids`]).
///
/// # Errors
/// A message naming the flag.
pub fn check_args(a: &BenchArgs) -> anyhow::Result<()> {
    if a.dynamics {
        let mut other = Vec::new();
        for (f, set) in [
            ("--export", a.export.is_some()),
            ("--plot", a.plot.is_some()),
            ("--lift", a.lift.is_some()),
        ] {
            if set {
                other.push(f);
            }
        }
        anyhow::ensure!(
            other.is_empty(),
            "--dynamics times whole characters with their cloth and hair (no lift choice, export or sweep): drop {}",
            other.join(", ")
        );
    }
    let table_flags = [
        ("--out", a.out.is_some()),
        ("--batch", !a.batch.is_empty()),
        ("--lift", a.lift.is_some()),
        ("--quick", a.quick),
    ];
    if a.export.is_some() {
        let mut other: Vec<&str> = table_flags
            .iter()
            .filter(|(_, set)| *set)
            .map(|(f, _)| *f)
            .collect();
        for (f, set) in [
            ("--plot", a.plot.is_some()),
            ("--backend", !a.backend.is_empty()),
            ("--frames", a.frames.is_some()),
            ("--allow-software", a.allow_software),
        ] {
            if set {
                other.push(f);
            }
        }
        anyhow::ensure!(
            other.is_empty(),
            "--export writes the workloads' arrays and times nothing: drop {}",
            other.join(", ")
        );
    }
    if a.plot.is_some() {
        let mut other: Vec<&str> = table_flags
            .iter()
            .filter(|(_, set)| *set)
            .map(|(f, _)| *f)
            .filter(|f| *f != "--quick")
            .collect();
        if !a.workload.is_empty() {
            other.push("--workload");
        }
        if a.data.is_some() {
            other.push("--data");
        }
        anyhow::ensure!(
            other.is_empty(),
            "--plot sweeps a synthetic morph rig over vertices, active targets and batch (its own \
             workloads and batches, no real inputs; --frames and --quick set its frames): drop {}",
            other.join(", ")
        );
    }
    if let Some(f) = a.frames {
        anyhow::ensure!(
            (1..=MAX_FRAMES).contains(&f),
            "--frames {f}: 1 to {MAX_FRAMES} timed frames per row"
        );
    }
    if let Some(b) = a.batch.iter().find(|b| **b == 0 || **b > MAX_BATCH) {
        anyhow::bail!("--batch {b}: a batch is 1 to {MAX_BATCH} characters");
    }
    let batches: Vec<String> = a.batch.iter().map(u32::to_string).collect();
    if let Some(d) = first_repeat(&batches) {
        anyhow::bail!("--batch: `{d}` is named twice");
    }
    let backends: Vec<String> = a
        .backend
        .iter()
        .map(|s| s.trim().to_ascii_lowercase())
        .collect();
    for (flag, names) in [("--backend", &a.backend), ("--workload", &a.workload)] {
        anyhow::ensure!(
            names.iter().all(|n| !n.trim().is_empty()),
            "{flag}: an empty name (a trailing or doubled comma?)"
        );
    }
    if let Some(d) = first_repeat(&backends) {
        anyhow::bail!("--backend: `{d}` is named twice");
    }
    Ok(())
}

/// The dynamics workloads asked for (`body`, `sintel`; both by default), lower-cased, each known
/// and named once.
///
/// # Errors
/// An unknown or repeated name, naming it and the known ones.
pub fn dynamics_ids(a: &BenchArgs) -> anyhow::Result<Vec<String>> {
    pick_ids(
        a,
        &mien_benches::dynamics::WORKLOADS,
        str::to_ascii_lowercase,
        "dynamics workload",
        "known with --dynamics",
    )
}

/// `--workload`'s names normalised by `norm`, each one of `known` and named once; all of
/// `known` when none is given.
fn pick_ids(
    a: &BenchArgs,
    known: &[&str],
    norm: impl Fn(&str) -> String,
    what: &str,
    known_label: &str,
) -> anyhow::Result<Vec<String>> {
    if a.workload.is_empty() {
        return Ok(known.iter().map(|s| (*s).to_owned()).collect());
    }
    let ids: Vec<String> = a.workload.iter().map(|s| norm(s.trim())).collect();
    if let Some(k) = ids.iter().position(|id| !known.contains(&id.as_str())) {
        // Named as the user typed it.
        let bad = a.workload[k].trim();
        anyhow::bail!(
            "--workload: unknown {what} `{bad}` ({known_label}: {})",
            known.join(", ")
        );
    }
    if let Some(d) = first_repeat(&ids) {
        anyhow::bail!("--workload: `{d}` is named twice");
    }
    Ok(ids)
}

/// The first value that appears twice.
fn first_repeat(items: &[String]) -> Option<&String> {
    items
        .iter()
        .enumerate()
        .find(|(i, x)| items[..*i].contains(x))
        .map(|(_, x)| x)
}

/// The workloads asked for, split: the rig table's (`W1` … `W6`, upper-cased) and the whole
/// characters with cloth and hair (`body`, `sintel`, lower-cased), each known and named once. By
/// default all of both — except with `--export` or `--plot` (the rig workloads only; `body` and
/// `sintel` have no arrays to export) and with `--lift` alone naming no rig workload.
///
/// # Errors
/// An unknown or repeated id, naming it and the known ones; `body` or `sintel` with `--export`;
/// `--lift` when every workload named is `body` or `sintel` (their lifts are their own).
pub fn workload_ids(a: &BenchArgs) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let dynamics = mien_benches::dynamics::WORKLOADS;
    let norm = |s: &str| {
        let l = s.to_ascii_lowercase();
        if dynamics.contains(&l.as_str()) {
            l
        } else {
            s.to_ascii_uppercase()
        }
    };
    let mut known: Vec<&str> = ALL.to_vec();
    known.extend(dynamics);
    let ids = pick_ids(a, &known, norm, "workload", "known")?;
    let (rig, dyn_ids): (Vec<String>, Vec<String>) = ids
        .into_iter()
        .partition(|id| !dynamics.contains(&id.as_str()));
    let explicit = !a.workload.is_empty();
    if a.export.is_some() || a.plot.is_some() {
        anyhow::ensure!(
            !explicit || dyn_ids.is_empty(),
            "--workload {}: whole characters with cloth and hair have no arrays to export",
            dyn_ids.join(",")
        );
        return Ok((rig, Vec::new()));
    }
    anyhow::ensure!(
        !(explicit && rig.is_empty() && a.lift.is_some()),
        "--lift chooses the rig workloads' rows (W1 … W6); body and sintel run their own lifts: \
         drop --lift or name a rig workload"
    );
    Ok((rig, dyn_ids))
}

/// `--export DIR`: every workload built first (a missing input fails before anything is written),
/// then written into `DIR/<id>/`; `DIR` must be empty or new, so no array of an older export is
/// left beside the new ones (the peer scripts read every folder with a manifest).
///
/// # Errors
/// A non-empty or unwritable `DIR`, a workload that cannot be built, a write failure.
pub fn export(ids: &[String], data: &Path, dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        anyhow::ensure!(dir.is_dir(), "--export {}: not a folder", dir.display());
        let mut entries =
            std::fs::read_dir(dir).with_context(|| format!("--export {}", dir.display()))?;
        anyhow::ensure!(
            entries.next().is_none(),
            "--export {}: the folder is not empty (an older export's arrays would stay beside \
             the new ones); name a new or empty folder",
            dir.display()
        );
    }
    let loaded = ids
        .iter()
        .map(|id| workloads::load(id, data).with_context(|| format!("workload {id}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let lifted = |w: &Workload| mien_benches::export::LIFT_EXPORTS.contains(&w.id.as_str());
    // The surface lifts are built before anything is written, as the workloads are.
    for w in loaded.iter().filter(|w| lifted(w)) {
        anyhow::ensure!(
            w.surface().is_some(),
            "workload {}: the surface lift cannot be built",
            w.id
        );
    }
    // Built beside `dir` and moved into place whole: a failed or interrupted export leaves `dir`
    // as it was.
    let staged = crate::outdir::StagedDir::new("--export", dir)?;
    let final_dir = dir;
    let dir = staged.path();
    for w in &loaded {
        crate::interrupt::check()?;
        let m = mien_benches::export::export(w, dir)
            .with_context(|| format!("exporting {} into {}", w.id, final_dir.display()))?;
        println!(
            "{}: {} (tolerance {:.3e} in the mesh's position units, {} bytes per character)",
            w.id,
            final_dir.join(&w.id).display(),
            m["tolerance_m"].as_f64().unwrap_or(0.0),
            m["bytes_per_character"]
        );
        if lifted(w) {
            let m = mien_benches::export::export_lift(w, dir).with_context(|| {
                format!(
                    "exporting {}'s surface lift into {}",
                    w.id,
                    final_dir.display()
                )
            })?;
            println!(
                "{}: {} ({} gaussians; tolerance {:.3e} (centres), {:.3e} (covariances, units²), \
                 {} bytes per character)",
                m["workload"].as_str().unwrap_or_default(),
                final_dir
                    .join(m["workload"].as_str().unwrap_or_default())
                    .display(),
                m["gaussians"],
                m["tolerance_m"].as_f64().unwrap_or(0.0),
                m["tolerance_cov"].as_f64().unwrap_or(0.0),
                m["bytes_per_character"]
            );
        }
    }
    staged.commit_folder()
}

/// `--out DIR`, checked before the first row: a folder (created if missing) where `bench.json` and
/// `table.txt` can be written; both are written to temporary files and renamed into place
/// together at the end. A folder it created is removed again (when still empty) if the run stops
/// before writing.
pub struct OutFiles {
    dir: PathBuf,
    /// `dir` did not exist before [`OutFiles::prepare`].
    created: bool,
    /// [`OutFiles::write`] succeeded.
    written: std::cell::Cell<bool>,
}

impl OutFiles {
    /// Create `dir` if needed and check it takes the two files.
    ///
    /// # Errors
    /// A path that is not a folder, the filesystem's root, an unwritable folder, `bench.json` or
    /// `table.txt` being a folder.
    pub fn prepare(dir: &Path) -> anyhow::Result<Self> {
        anyhow::ensure!(
            !dir.exists() || dir.is_dir(),
            "--out {}: not a folder",
            dir.display()
        );
        // The filesystem's root is nobody's results folder (a typo of `--out /tmp/x`, most likely).
        let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        anyhow::ensure!(
            resolved.parent().is_some(),
            "--out {}: is the root folder; name a folder for bench.json and table.txt (e.g. --out bench-out)",
            dir.display()
        );
        let created = !dir.exists();
        std::fs::create_dir_all(dir).with_context(|| format!("--out {}", dir.display()))?;
        let out = Self {
            dir: dir.to_path_buf(),
            created,
            written: std::cell::Cell::new(false),
        };
        for name in ["bench.json", "table.txt"] {
            let p = dir.join(name);
            anyhow::ensure!(
                !p.is_dir(),
                "--out: {} is a folder, not a file",
                p.display()
            );
        }
        tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("--out {}: cannot write there", dir.display()))?;
        Ok(out)
    }

    /// Write `bench.json` and `table.txt` (mode 0644 before the umask, like mien's other outputs):
    /// both staged as temporary files, then renamed.
    ///
    /// # Errors
    /// A write or rename failure (then neither file has changed, unless the second rename failed).
    pub fn write(&self, json: &str, table: &str) -> anyhow::Result<PathBuf> {
        use std::io::Write;
        let stage = |text: &str| -> anyhow::Result<tempfile::NamedTempFile> {
            let mut b = tempfile::Builder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                b.permissions(std::fs::Permissions::from_mode(0o644));
            }
            let mut f = b.tempfile_in(&self.dir)?;
            f.write_all(text.as_bytes())?;
            Ok(f)
        };
        let (j, t) = (stage(json)?, stage(table)?);
        let json_path = self.dir.join("bench.json");
        j.persist(&json_path)
            .with_context(|| format!("writing {}", json_path.display()))?;
        t.persist(self.dir.join("table.txt"))
            .with_context(|| format!("writing {}", self.dir.join("table.txt").display()))?;
        self.written.set(true);
        Ok(json_path)
    }
}

impl OutFiles {
    /// The folder, when this run created it (it is removed again if the run stops before writing).
    pub fn created_dir(&self) -> Option<&Path> {
        self.created.then_some(self.dir.as_path())
    }
}

impl Drop for OutFiles {
    /// A run that stops before writing leaves no folder it created (only an empty one is removed).
    fn drop(&mut self) {
        if self.created && !self.written.get() {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}
