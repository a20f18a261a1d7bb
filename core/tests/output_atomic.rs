//! Atomic writes: a failed write leaves the target as it was and no temporary file behind.

use mien_core::io::atomic::{write_atomic, write_atomic_bytes};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn failing_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let err = write_atomic(&path, |w| {
        w.write_all(&[7u8; 100_000])?;
        Err(std::io::Error::other("encoder gave up"))
    })
    .unwrap_err();
    match err {
        mien_core::Error::Io { path: p, source } => {
            assert_eq!(p, path);
            assert!(source.to_string().contains("encoder gave up"));
        }
        other => panic!("{other:?}"),
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn existing_file_is_replaced_only_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frame.ply");
    std::fs::write(&path, b"old").unwrap();
    assert!(
        write_atomic(&path, |w| {
            w.write_all(b"new but partial")?;
            Err(std::io::Error::other("no"))
        })
        .is_err()
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["frame.ply"]);

    write_atomic_bytes(&path, b"new").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert_eq!(names(dir.path()), ["frame.ply"]);
}

#[test]
fn relative_path_and_bad_targets() {
    // A bare file name writes into the current folder (the test's crate root), then is removed.
    let name = format!("output_atomic_{}.tmp-test", std::process::id());
    write_atomic_bytes(std::path::Path::new(&name), b"x").unwrap();
    assert_eq!(std::fs::read(&name).unwrap(), b"x");
    std::fs::remove_file(&name).unwrap();

    assert!(matches!(
        write_atomic_bytes(std::path::Path::new("/nonexistent/mien/x"), b"x"),
        Err(mien_core::Error::Io { .. })
    ));
    let dir = tempfile::tempdir().unwrap();
    // A folder cannot be replaced by a file: the rename fails, the temp file is cleaned up.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/keep"), b"k").unwrap();
    assert!(write_atomic_bytes(&dir.path().join("sub"), b"x").is_err());
    assert_eq!(names(dir.path()), ["sub"]);
    assert!(write_atomic_bytes(std::path::Path::new("/"), b"x").is_err());
}

#[test]
#[cfg(unix)]
fn new_files_get_ordinary_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.bin");
    write_atomic_bytes(&path, b"x").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    // 0o666 minus the umask: at least owner read/write, never executable.
    assert_eq!(mode & 0o600, 0o600);
    assert_eq!(mode & 0o111, 0);
}
