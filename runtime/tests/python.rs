//! The Python package end to end: build its wheel with maturin (`python/`, abi3 for CPython ≥
//! 3.11), install it into a fresh virtual environment, and run its pytest suite
//! (`python/tests/`: the API against the Rust API's own vertices, typed errors, the interpreter
//! lock released during bakes, the Ray batch bake with a worker killed mid-run), then the README's
//! Python example.
//!
//! The reference the suite compares against is computed here, through the Rust API: Face Cap
//! driven by the Live Link Face CSV, posed on the CPU at a few media times; pytest must read the
//! same vertices bit for bit through `mien.Runtime`.
//!
//! Needs `python3` with `maturin`, `pytest`, `numpy` and `ray[data]` (`pip install maturin pytest
//! numpy "ray[data]"`; `.ci/run` installs them). Without them the test prints a notice and passes,
//! unless `MIEN_REQUIRE_PYTHON=1` (CI), which makes a missing piece a failure. The wheel is built
//! in `target/python/` (its own target folder: the test cannot use the one `cargo test` holds).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn data() -> PathBuf {
    std::env::var_os("MIEN_DATA").map_or_else(|| root().join("../shared/data"), PathBuf::from)
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether python3 has the modules the suite needs; a missing one fails under
/// `MIEN_REQUIRE_PYTHON=1`.
fn ready() -> bool {
    let has = |m: &str| {
        Command::new(python())
            .args(["-c", &format!("import {m}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<&str> = ["maturin", "pytest", "numpy", "ray"]
        .into_iter()
        .filter(|m| !has(m))
        .collect();
    if missing.is_empty() {
        return true;
    }
    if std::env::var("MIEN_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
        panic!(
            "MIEN_REQUIRE_PYTHON=1 but {} lacks: {} (pip install maturin pytest numpy 'ray[data]')",
            python(),
            missing.join(", ")
        );
    }
    eprintln!(
        "notice: Python test skipped, {} lacks: {}",
        python(),
        missing.join(", ")
    );
    false
}

/// A command with cargo's per-package variables removed (maturin runs its own cargo).
fn clean(mut c: Command) -> Command {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("CARGO_") && k != "CARGO_HOME" {
            c.env_remove(&k);
        }
    }
    c
}

fn run(mut c: Command, what: &str) -> String {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// Face Cap driven by the Live Link CSV through the Rust API: `(times, (T,V,3) f32)`.
fn reference(dir: &Path) {
    let asset = Arc::new(Asset::load(data().join("facecap/facecap.glb")).unwrap());
    let mut rt = Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    rt.instance_mut(0)
        .unwrap()
        .play_stream_file(data().join("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"))
        .unwrap();
    let times = [0.0, 0.5, 1.25, 2.5, 5.0, 8.0];
    let mut bytes = Vec::new();
    let mut v = 0;
    for t in times {
        rt.update(t).unwrap();
        let p = rt.posed(0).unwrap().positions;
        v = p.len();
        for x in p.iter().flatten() {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(dir.join("facecap_livelink.f32"), bytes).unwrap();
    std::fs::write(
        dir.join("facecap_livelink.json"),
        serde_json::json!({"times": times, "vertices": v}).to_string(),
    )
    .unwrap();
}

/// mien's test bundle (docs/bundles/make_test_bundle.py around the ICT pack) in `dir/bundle`, and
/// the ONNX Runtime library, when python3 has onnx and onnxruntime.
fn test_bundle(dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let lib = mien_runtime::decoder::library_path()?;
    let ok = Command::new(python())
        .args(["-c", "import numpy, onnx, onnxruntime"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return None;
    }
    let b = dir.join("bundle");
    mien_runtime::bundle::make_test_bundle(&data().join("ict-facekit"), &b).unwrap();
    Some((b, lib))
}

/// The README's Python example: the code block after `<!-- python-example -->`.
fn readme_example() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = readme
        .find("<!-- python-example -->")
        .expect("README.md has no `<!-- python-example -->` block");
    let rest = &readme[at..];
    let start = rest.find("```python\n").expect("a ```python block") + "```python\n".len();
    let end = rest[start..].find("```").unwrap();
    rest[start..start + end].to_string()
}

#[test]
fn the_wheel_installs_and_its_suite_passes() {
    if !ready() {
        return;
    }
    let root = root();
    let target = root.join("target/python");
    let wheels = target.join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    std::fs::create_dir_all(&wheels).unwrap();

    // The wheel, as a user builds it (`maturin build`), in its own target folder.
    let mut c = clean(Command::new(python()));
    c.args(["-m", "maturin", "build", "--profile", "dev", "--out"])
        .arg(&wheels)
        .current_dir(root.join("python"))
        .env("CARGO_TARGET_DIR", &target);
    run(c, "maturin build");
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("maturin wrote no wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.contains("-cp311-abi3-"),
        "{name}: not an abi3 wheel for CPython ≥ 3.11"
    );

    // A fresh environment (seeing the system's numpy, pytest and Ray), the wheel pip-installed.
    let venv = target.join("venv");
    let _ = std::fs::remove_dir_all(&venv);
    let mut c = Command::new(python());
    c.args(["-m", "venv", "--system-site-packages"]).arg(&venv);
    run(c, "python -m venv");
    let py = venv.join("bin/python");
    let mut c = Command::new(&py);
    c.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--force-reinstall",
    ])
    .arg(&wheel);
    run(c, "pip install the wheel");

    let refs = tempfile::tempdir().unwrap();
    reference(refs.path());
    let bundle = test_bundle(refs.path());
    let mut c = clean(Command::new(&py));
    c.args([
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "python/tests",
    ])
    .current_dir(&root)
    .env("MIEN_REFERENCE_DIR", refs.path())
    .env("MIEN_DATA", data())
    .env("RAY_DISABLE_USAGE_STATS", "1");
    if let Some((dir, lib)) = &bundle {
        c.env("MIEN_TEST_BUNDLE", dir).env("ORT_DYLIB_PATH", lib);
    }
    let text = run(c, "pytest python/tests");
    eprintln!("{text}");
    // The reference comparison always runs here; the GPU cases may skip without an adapter,
    // unless MIEN_REQUIRE_GPU=1 (CI), where nothing may skip.
    assert!(
        !text.contains("MIEN_REFERENCE_DIR is not set"),
        "the reference test was skipped:\n{text}"
    );
    if std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        assert!(
            !text.contains(" skipped"),
            "a Python test was skipped:\n{text}"
        );
    }

    // The README's example, as written, from the repository root.
    let example = refs.path().join("readme_example.py");
    std::fs::write(&example, readme_example()).unwrap();
    let mut c = clean(Command::new(&py));
    c.arg(&example)
        .current_dir(&root)
        .env("RAY_DISABLE_USAGE_STATS", "1");
    let text = run(c, "the README's Python example");
    eprintln!("{text}");
}
