//! Bounded reads (`mien_core::io::read`): every reader refuses what is not a regular file (a FIFO
//! named `x.glb` used to hang, `/dev/zero` named `z.glb` used to read until memory ran out), refuses
//! a file over its cap before reading it, never holds more than the cap when the metadata lies, and
//! reads only `byteLength` bytes of a glTF buffer; buffer URIs stay inside the model's folder.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use mien_core::Error;
use mien_core::io::gltf::{MAX_GLTF_BYTES, import_gltf};
use mien_core::io::livelink_csv::{MAX_LIVELINK_CSV_BYTES, read_livelink_csv};
use mien_core::io::ply::{MAX_PLY_BYTES, read_splat_ply};
use mien_core::io::read::{read_file_capped, read_file_head};
use serde_json::json;

/// Run `f` on another thread and fail (instead of hanging the suite) when it takes over 20 s.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what}: the reader hung"))
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// `path` as a sparse file of `len` bytes (no disk space, instant).
fn sparse(path: &Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

/// The message, file and field of a [`Error::Format`].
fn format_parts(e: &Error) -> (String, String, String) {
    match e {
        Error::Format {
            file,
            field,
            reason,
            ..
        } => (file.clone(), field.clone(), reason.clone()),
        other => panic!("expected a format error, got {other}"),
    }
}

#[test]
fn a_fifo_is_refused_by_every_reader_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["x.glb", "x.gltf", "x.ply", "x.csv"] {
        let p = dir.path().join(name);
        mkfifo(&p);
        let q = p.clone();
        let e = within(name, move || match name {
            "x.ply" => read_splat_ply(&q).map(|_| ()),
            "x.csv" => read_livelink_csv(&q).map(|_| ()),
            _ => import_gltf(&q).map(|_| ()),
        })
        .unwrap_err();
        let (file, field, reason) = format_parts(&e);
        assert_eq!(file, p.display().to_string());
        assert_eq!(field, "file type");
        assert!(reason.contains("named pipe (FIFO)"), "{e}");
    }
}

#[test]
fn a_device_behind_a_symlink_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["z.glb", "z.ply", "z.csv"] {
        let p = dir.path().join(name);
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        let q = p.clone();
        let e = within(name, move || match name {
            "z.ply" => read_splat_ply(&q).map(|_| ()),
            "z.csv" => read_livelink_csv(&q).map(|_| ()),
            _ => import_gltf(&q).map(|_| ()),
        })
        .unwrap_err();
        let (file, field, reason) = format_parts(&e);
        assert_eq!(
            (file.as_str(), field.as_str()),
            (p.to_str().unwrap(), "file type")
        );
        assert!(reason.contains("character device"), "{e}");
    }
}

#[test]
fn files_over_the_cap_are_refused_from_their_size() {
    let dir = tempfile::tempdir().unwrap();
    for (name, cap) in [
        ("big.glb", MAX_GLTF_BYTES),
        ("big.ply", MAX_PLY_BYTES),
        ("big.csv", MAX_LIVELINK_CSV_BYTES),
    ] {
        let p = dir.path().join(name);
        sparse(&p, cap + 1);
        let q = p.clone();
        let e = within(name, move || match name {
            "big.ply" => read_splat_ply(&q).map(|_| ()),
            "big.csv" => read_livelink_csv(&q).map(|_| ()),
            _ => import_gltf(&q).map(|_| ()),
        })
        .unwrap_err();
        match e {
            Error::Limit {
                ref what,
                limit,
                found,
            } => {
                assert!(what.contains(name), "{e}");
                assert_eq!((limit, found), (cap, cap + 1));
            }
            other => panic!("{name}: {other}"),
        }
    }
    // The documented caps.
    assert_eq!(MAX_GLTF_BYTES, 2 << 30);
    assert_eq!(MAX_PLY_BYTES, 2 << 30);
    assert_eq!(MAX_LIVELINK_CSV_BYTES, 256 << 20);
}

/// procfs reports a length of 0 for files that hold text: the cap must hold on what is read.
#[test]
#[cfg(target_os = "linux")]
fn lying_metadata_cannot_pass_the_cap() {
    let p = Path::new("/proc/self/status");
    let meta = std::fs::metadata(p).unwrap();
    assert_eq!(meta.len(), 0, "procfs reports no length");
    match read_file_capped(p, 16).unwrap_err() {
        Error::Limit { limit, found, .. } => assert_eq!((limit, found), (16, 17)),
        other => panic!("{other}"),
    }
    assert!(read_file_capped(p, 1 << 20).unwrap().len() > 16);
    assert_eq!(read_file_head(p, 4, 1 << 20).unwrap(), b"Name");
}

/// A one-triangle glTF whose buffer 0 is the external file `uri` of `len` bytes.
fn gltf_with_buffer(uri: &str, len: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "buffers": [{"byteLength": len, "uri": uri}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "type": "VEC3", "count": 3,
                       "min": [0, 0, 0], "max": [1, 1, 0]}]
    }))
    .unwrap()
}

/// The triangle's 36 bytes of positions.
fn triangle() -> Vec<u8> {
    [0f32, 0., 0., 1., 0., 0., 0., 1., 0.]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect()
}

fn write_model(dir: &Path, uri: &str, len: u64) -> PathBuf {
    let p = dir.join("m.gltf");
    std::fs::write(&p, gltf_with_buffer(uri, len)).unwrap();
    p
}

#[test]
fn only_byte_length_bytes_of_a_buffer_file_are_read() {
    let dir = tempfile::tempdir().unwrap();
    // A 3 GiB (sparse) buffer file of which the model needs 36 bytes: only those are read.
    let bin = dir.path().join("m.bin");
    sparse(&bin, 3 << 30);
    {
        use std::os::unix::fs::FileExt;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&bin)
            .unwrap()
            .write_all_at(&triangle(), 0)
            .unwrap();
    }
    let p = write_model(dir.path(), "m.bin", 36);
    let c = within("head of a huge buffer", move || import_gltf(&p)).unwrap();
    assert_eq!(
        c.meshes[0].primitives[0].positions,
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    );

    // A file shorter than byteLength is refused naming buffers[0].byteLength.
    std::fs::write(&bin, &triangle()[..20]).unwrap();
    let p = write_model(dir.path(), "m.bin", 36);
    let (_, field, reason) = format_parts(&import_gltf(&p).unwrap_err());
    assert_eq!(field, "buffers[0].byteLength");
    assert!(
        reason.contains("36 bytes declared") && reason.contains("has 20"),
        "{reason}"
    );

    // A byteLength over the cap is refused before anything is opened.
    let p = write_model(dir.path(), "m.bin", MAX_GLTF_BYTES + 1);
    match import_gltf(&p).unwrap_err() {
        Error::Limit { what, limit, found } => {
            assert!(what.contains("buffers[0].byteLength"), "{what}");
            assert_eq!((limit, found), (MAX_GLTF_BYTES, MAX_GLTF_BYTES + 1));
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_buffer_that_is_a_fifo_or_a_device_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("pipe.bin"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.bin")).unwrap();
    for (uri, kind) in [("pipe.bin", "named pipe"), ("zero.bin", "character device")] {
        let p = write_model(dir.path(), uri, 36);
        let e = within(uri, move || import_gltf(&p)).unwrap_err();
        let (_, field, reason) = format_parts(&e);
        assert_eq!(field, "buffers[0].uri", "{e}");
        assert!(reason.contains(kind) && reason.contains(uri), "{e}");
    }
}

#[test]
fn buffer_uris_may_not_leave_the_model_folder() {
    let root = tempfile::tempdir().unwrap();
    let model_dir = root.path().join("model");
    std::fs::create_dir(&model_dir).unwrap();
    // A real file just outside the folder: reaching it must be refused, not read.
    std::fs::write(root.path().join("outside.bin"), triangle()).unwrap();
    std::fs::create_dir(model_dir.join("sub")).unwrap();
    std::fs::write(model_dir.join("inside.bin"), triangle()).unwrap();
    let outside = root.path().join("outside.bin");
    for uri in [
        "../outside.bin",
        "sub/../../outside.bin",
        "%2E%2E/outside.bin",
        "../../../../../../dev/zero",
        outside.to_str().unwrap(),
        &format!("file://{}", outside.display()),
        "file:outside.bin",
    ] {
        let p = write_model(&model_dir, uri, 36);
        let e = within(uri, move || import_gltf(&p)).unwrap_err();
        let (file, field, reason) = format_parts(&e);
        assert!(file.ends_with("m.gltf"), "{e}");
        assert_eq!(field, "buffers[0].uri", "{uri}: {e}");
        assert!(reason.contains("inside its own folder"), "{uri}: {e}");
    }
    // Inside the folder, `..` that stays inside is fine.
    for uri in ["inside.bin", "sub/../inside.bin", "./inside.bin"] {
        let p = write_model(&model_dir, uri, 36);
        import_gltf(&p).unwrap_or_else(|e| panic!("{uri}: {e}"));
    }
}
