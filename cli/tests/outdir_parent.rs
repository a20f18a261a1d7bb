//! An output folder whose parent cannot be written is refused before any work, saying so (not
//! "cannot be moved aside … mount point, or immutable?"), for `mien animate` and
//! `mien scenario run`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{bin, finish};

/// Run the mien binary with `args` as an unprivileged user when the tests run as root (root may
/// write anywhere), else as the current user.
fn mien_unprivileged(args: &[&str]) -> common::Run {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin());
        c
    } else {
        Command::new(bin())
    };
    c.args(args)
        .env("NODEVICE_SELECT", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    finish(c)
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_parent_folder_that_cannot_be_written_is_named() {
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o755);
    let parent = dir.path().join("locked");
    let out = parent.join("out");
    std::fs::create_dir_all(&out).unwrap();
    chmod(&out, 0o777);
    chmod(&parent, 0o555);
    let scenario = dir.path().join("s.json");
    std::fs::write(
        &scenario,
        r#"{"format":"mien-scenario","version":1,"character":"builtin","steps":[{"step":{"frames":1,"dt":0.1}}]}"#,
    )
    .unwrap();
    chmod(&scenario, 0o644);
    let o = out.to_str().unwrap();
    for args in [
        &[
            "animate",
            "--quiet",
            "--backend",
            "cpu",
            "--frames",
            "1",
            "--out",
            o,
        ][..],
        &["scenario", "run", scenario.to_str().unwrap(), "--out", o][..],
    ] {
        let r = mien_unprivileged(args);
        chmod(&parent, 0o755);
        assert!(!r.ok(), "{args:?} must fail");
        assert!(
            r.stderr.contains("parent folder") && r.stderr.contains("not writable"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("locked"), "{}", r.stderr);
        assert!(!r.stderr.contains("mount point"), "{}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        chmod(&parent, 0o555);
    }
    chmod(&parent, 0o755);
}
