//! Loading ONNX Runtime goes wrong clearly: each case runs in a child process of this test binary
//! (a process loads one library, and an unset variable must be seen unset), which must exit with
//! the error printed, never abort.

use std::process::Command;

/// Run `case` in a child process with `ORT_DYLIB_PATH` set to `var` (or unset).
fn child(case: &str, var: Option<&str>) -> (bool, String) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", case, "--nocapture", "--test-threads=1"])
        .env("MIEN_LOADER_CHILD", "1");
    match var {
        Some(v) => c.env("ORT_DYLIB_PATH", v),
        None => c.env_remove("ORT_DYLIB_PATH"),
    };
    let out = c.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    // A signal (an abort) has no exit code.
    assert!(
        out.status.code().is_some(),
        "{case} died by a signal: {text}"
    );
    (out.status.success(), text)
}

fn in_child() -> bool {
    std::env::var("MIEN_LOADER_CHILD").as_deref() == Ok("1")
}

#[test]
fn load_in_child() {
    if !in_child() {
        return;
    }
    match mien_decoder::Ort::load() {
        Ok(o) => println!("LOADED {}", o.version()),
        Err(e) => println!("ERROR {e}"),
    }
}

#[test]
fn unset_missing_and_wrong_libraries_are_errors_naming_the_variable() {
    if in_child() {
        return;
    }
    let (ok, text) = child("load_in_child", None);
    assert!(ok, "{text}");
    assert!(text.contains("ERROR ORT_DYLIB_PATH is not set"), "{text}");
    assert!(
        text.contains(&format!("1.{}.0 or newer", mien_decoder::MIN_MINOR)),
        "{text}"
    );
    let (ok, text) = child("load_in_child", Some("/nonexistent/libonnxruntime.so"));
    assert!(ok, "{text}");
    assert!(
        text.contains("ERROR ORT_DYLIB_PATH=/nonexistent/libonnxruntime.so: no such file"),
        "{text}"
    );
    // A file that is no shared library, and a shared library that is not ONNX Runtime.
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let (ok, text) = child("load_in_child", Some(manifest));
    assert!(ok, "{text}");
    assert!(
        text.contains("ERROR ORT_DYLIB_PATH=") && text.contains("cannot load ONNX Runtime"),
        "{text}"
    );
    let libm = "/usr/lib/x86_64-linux-gnu/libm.so.6";
    if std::path::Path::new(libm).exists() {
        let (ok, text) = child("load_in_child", Some(libm));
        assert!(ok, "{text}");
        assert!(text.contains("does not export `OrtGetApiBase`"), "{text}");
    }
}
