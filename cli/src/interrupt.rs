//! Ctrl-C / SIGTERM / SIGHUP: a run stops, removes its staging folder and exits with code 130,
//! leaving the output folder as it was.
//!
//! The signal handler (the `ctrlc` crate, feature `termination`) only raises a flag; the run checks
//! it between frames and between preview cells ([`check`]) and unwinds normally, so the staging
//! folder is removed by its owner. Should the run not get back to a check within [`GRACE`] (a long
//! load, one huge preview cell), the handler removes the staging folder itself and exits. Folder
//! moves are never cut short: a [`Critical`] section holds the lock the handler needs, and a run
//! whose results are already in place is left to finish.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Exit code of an interrupted run (128 + SIGINT, the shell convention).
pub const EXIT_CODE: u8 = 130;

/// How long the handler waits for the run to stop on its own before cleaning up and exiting.
pub const GRACE: Duration = Duration::from_secs(2);

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// What the process owns on disk right now.
enum Phase {
    /// Nothing to clean up.
    Idle,
    /// A staging folder that must go if the run is stopped.
    Staging(PathBuf),
    /// The results are in place: let the run finish.
    Committed,
}

static PHASE: Mutex<Phase> = Mutex::new(Phase::Idle);

fn phase() -> MutexGuard<'static, Phase> {
    PHASE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The error a stopped run returns (main turns it into exit code [`EXIT_CODE`]).
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// The line printed when a run is stopped.
pub fn message(out: &Path) -> String {
    format!(
        "mien: interrupted; nothing was written ({} is as it was)",
        out.display()
    )
}

/// Install the handler. `out` is named in the message printed when the handler has to exit itself.
///
/// # Errors
/// When the platform refuses the handler (it is then simply not installed: a signal ends the run
/// the default way and the next run removes the staging folder it left).
pub fn install(out: &Path) -> Result<(), ctrlc::Error> {
    let out = out.to_path_buf();
    ctrlc::set_handler(move || {
        REQUESTED.store(true, Ordering::SeqCst);
        std::thread::sleep(GRACE);
        let mut p = phase();
        match std::mem::replace(&mut *p, Phase::Idle) {
            Phase::Committed => {
                *p = Phase::Committed;
                return;
            }
            Phase::Staging(dir) => remove_hard(&dir),
            Phase::Idle => {}
        }
        eprintln!("{}", message(&out));
        std::process::exit(i32::from(EXIT_CODE));
    })
}

/// Remove `dir`, retrying while the run may still be writing into it.
fn remove_hard(dir: &Path) {
    for _ in 0..5 {
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => return,
        }
    }
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// `Err(Interrupted)` once a stop was asked for.
///
/// # Errors
/// [`Interrupted`].
pub fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}

/// Record the staging folder the handler must remove (or `None` once it is gone).
pub fn set_staging(dir: Option<&Path>) {
    record(&mut phase(), dir);
}

fn record(p: &mut Phase, dir: Option<&Path>) {
    if !matches!(*p, Phase::Committed) {
        *p = dir.map_or(Phase::Idle, |d| Phase::Staging(d.to_path_buf()));
    }
}

/// Held while folders are being moved or created: the handler cannot clean up and exit until it
/// is dropped, so a rename pair is never cut in half.
pub struct Critical(MutexGuard<'static, Phase>);

/// Enter a critical section.
///
/// # Errors
/// [`Interrupted`] when a stop was already asked for (the section must not start).
pub fn critical() -> Result<Critical, Interrupted> {
    let guard = phase();
    check()?;
    Ok(Critical(guard))
}

impl Critical {
    /// Record the staging folder (before creating it, so the handler removes it should the
    /// process be stopped right after).
    pub fn set_staging(&mut self, dir: Option<&Path>) {
        record(&mut self.0, dir);
    }

    /// The results are in place: a later signal lets the run finish.
    pub fn committed(mut self) {
        *self.0 = Phase::Committed;
    }
}

/// Install a handler that only raises the flag: a live session stops at its next tick and writes
/// its take and report (stopping is its normal end, not a failure).
///
/// # Errors
/// When the platform refuses the handler.
pub fn install_stop_only() -> Result<(), ctrlc::Error> {
    ctrlc::set_handler(|| REQUESTED.store(true, Ordering::SeqCst))
}
