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

/// A library made here that passes for ONNX Runtime `version` but gives no API (compiled with the
/// system C compiler; `None` when there is none).
fn fake_library(dir: &std::path::Path, version: &str) -> Option<std::path::PathBuf> {
    let src = dir.join("fake.c");
    std::fs::write(
        &src,
        format!(
            "#include <stddef.h>\n\
             typedef struct {{ const void* (*GetApi)(unsigned); const char* (*GetVersionString)(void); }} B;\n\
             static const void* api(unsigned v) {{ (void)v; return NULL; }}\n\
             static const char* ver(void) {{ return \"{version}\"; }}\n\
             static B base = {{ api, ver }};\n\
             const B* OrtGetApiBase(void) {{ return &base; }}\n"
        ),
    )
    .unwrap();
    let lib = dir.join(format!("libonnxruntime.so.{version}"));
    let ok = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(lib)
}

#[test]
fn a_library_that_is_too_old_or_gives_no_api_is_an_error_not_a_crash() {
    if in_child() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("mien-fake-ort-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(old) = fake_library(&dir, "1.20.1") else {
        eprintln!("skipped: no C compiler");
        return;
    };
    let (ok, text) = child("load_in_child", Some(old.to_str().unwrap()));
    assert!(ok, "{text}");
    assert!(
        text.contains("ONNX Runtime 1.20.1 is too old") && text.contains("ORT_DYLIB_PATH="),
        "{text}"
    );
    let new = fake_library(&dir, "1.40.0").unwrap();
    let (ok, text) = child("load_in_child", Some(new.to_str().unwrap()));
    assert!(ok, "{text}");
    assert!(
        text.contains("ERROR ORT_DYLIB_PATH=") && text.contains("not a working ONNX Runtime"),
        "{text}"
    );
    let (ok, text) = child("load_in_child", Some(dir.to_str().unwrap()));
    assert!(ok, "{text}");
    assert!(
        text.contains("a directory, not ONNX Runtime's shared library"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
