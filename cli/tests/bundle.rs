//! `mien animate` and `mien inspect` on a character bundle: the GNM head `mien pack` bakes from
//! ICT-FaceKit (MIT, © 2020 USC ICT) with the branches and decoders of
//! `docs/bundles/make_test_bundle.py`, driven by the Live Link Face recording (JMTechArt, MIT).
//! ONNX Runtime comes from `ORT_DYLIB_PATH` or the `onnxruntime` wheel; skipped without it unless
//! `MIEN_REQUIRE_ORT=1`.

use std::path::{Path, PathBuf};

mod common;

use common::{command, data, finish, mien, report};

fn ort_library() -> Option<PathBuf> {
    let lib = mien_runtime::decoder::library_path();
    let py = std::process::Command::new("python3")
        .args(["-c", "import numpy, onnx, onnxruntime"])
        .status()
        .is_ok_and(|s| s.success());
    match (lib, py) {
        (Some(l), true) => Some(l),
        _ if std::env::var("MIEN_REQUIRE_ORT").as_deref() == Ok("1") => {
            panic!(
                "MIEN_REQUIRE_ORT=1 but no ONNX Runtime or python3 with numpy, onnx, onnxruntime"
            )
        }
        _ => {
            eprintln!("skipped: needs ONNX Runtime and python3 with numpy, onnx, onnxruntime");
            None
        }
    }
}

/// mien's test bundle in `dir`: the manifest's path.
fn make_bundle(dir: &Path) -> PathBuf {
    mien_runtime::bundle::make_test_bundle(&data("ict-facekit"), dir).unwrap()
}

#[test]
fn a_bundle_animates_from_live_link_and_reports_its_decoders_and_branches() {
    let Some(lib) = ort_library() else { return };
    let dir = tempfile::tempdir().unwrap();
    let manifest = make_bundle(dir.path());
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let out = dir.path().join("out");
    let mut c = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--character",
        manifest.to_str().unwrap(),
        "--arkit",
        csv.to_str().unwrap(),
        "--start",
        "1",
        "--frames",
        "8",
        "--sheet",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    c.env("ORT_DYLIB_PATH", &lib);
    let run = finish(c);
    assert!(run.ok(), "{}", run.stderr);
    let r = report(&out);
    assert_eq!(r["splats"]["lift"], "bundle");
    let a = &r["appearance"];
    // The head re-decodes as the take moves its controls; the eyes once (the camera stands still).
    let decodes = a["decodes"].as_u64().unwrap();
    assert!((5..=9).contains(&decodes), "{a}");
    assert_eq!(a["skipped"].as_u64().unwrap() + decodes, 8 * 2, "{a}");
    let branches = a["memory"]["branches"].as_array().unwrap();
    let names: Vec<&str> = branches
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["head", "eyes", "teeth"]);
    let slots: u64 = branches.iter().map(|b| b["slots"].as_u64().unwrap()).sum();
    assert_eq!(slots, r["memory"]["character_slots"].as_u64().unwrap());
    assert!(
        run.stdout.is_empty() || run.stdout.contains("decoders"),
        "{}",
        run.stdout
    );

    // The camera is the user's to set; a camera on a character without decoders is refused.
    let out2 = dir.path().join("out2");
    let mut c = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--character",
        manifest.to_str().unwrap(),
        "--frames",
        "2",
        "--sheet",
        "0",
        "--camera",
        "0.1,0,0.5",
        "--out",
        out2.to_str().unwrap(),
    ]);
    c.env("ORT_DYLIB_PATH", &lib);
    let run = finish(c);
    assert!(run.ok(), "{}", run.stderr);
    assert_eq!(
        report(&out2)["appearance"]["camera_eye"],
        serde_json::json!([0.1, 0.0, 0.5])
    );
    let run = mien(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--frames",
        "1",
        "--sheet",
        "0",
        "--character",
        "builtin",
        "--camera",
        "0,0,1",
        "--out",
        dir.path().join("out3").to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("only a character bundle with a view-dependent decoder takes a camera"),
        "{}",
        run.stderr
    );

    // The fp16 siblings on request; --fp16 on a plain character is refused.
    let out5 = dir.path().join("out5");
    let mut c = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--character",
        manifest.to_str().unwrap(),
        "--frames",
        "1",
        "--sheet",
        "0",
        "--fp16",
        "on",
        "--out",
        out5.to_str().unwrap(),
    ]);
    c.env("ORT_DYLIB_PATH", &lib);
    let run = finish(c);
    assert!(run.ok(), "{}", run.stderr);
    let run = mien(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--frames",
        "1",
        "--sheet",
        "0",
        "--character",
        "builtin",
        "--fp16",
        "on",
        "--out",
        dir.path().join("out6").to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("--fp16 applies to a character bundle"),
        "{}",
        run.stderr
    );

    // Another lift's flags name the bundle's own lifts.
    let mut c = command(&[
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--character",
        manifest.to_str().unwrap(),
        "--frames",
        "1",
        "--texel-res",
        "64",
        "--out",
        dir.path().join("out4").to_str().unwrap(),
    ]);
    c.env("ORT_DYLIB_PATH", &lib);
    let run = finish(c);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("this character is a bundle whose branches set their own lifts"),
        "{}",
        run.stderr
    );

    // inspect: the branches, their decoders' contracts, the library.
    let mut c = command(&["inspect", "--json", manifest.to_str().unwrap()]);
    c.env("ORT_DYLIB_PATH", &lib);
    let run = finish(c);
    assert!(run.ok(), "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["kind"], "character bundle (mien-character)");
    assert_eq!(
        v["bundle"]["branches"][0]["decoders"][0]["contract"]["features"],
        8
    );
    assert_eq!(
        v["bundle"]["branches"][1]["decoders"][0]["contract"]["geometry"]["rotation"],
        true
    );
    assert!(
        v["bundle"]["onnxruntime"]["version"]
            .as_str()
            .unwrap()
            .starts_with("1.")
    );
}

#[test]
fn a_missing_onnx_runtime_is_a_clear_error_and_writes_nothing() {
    let Some(lib) = ort_library() else { return };
    let dir = tempfile::tempdir().unwrap();
    let manifest = make_bundle(dir.path());
    let _ = lib;
    for (var, want) in [
        (None, "ORT_DYLIB_PATH is not set"),
        (
            Some("/nonexistent/libonnxruntime.so"),
            "ORT_DYLIB_PATH=/nonexistent/libonnxruntime.so: no such file",
        ),
    ] {
        let out = dir.path().join("out");
        let mut c = command(&[
            "animate",
            "--quiet",
            "--backend",
            "cpu",
            "--character",
            manifest.to_str().unwrap(),
            "--frames",
            "2",
            "--out",
            out.to_str().unwrap(),
        ]);
        match var {
            Some(v) => c.env("ORT_DYLIB_PATH", v),
            None => c.env_remove("ORT_DYLIB_PATH"),
        };
        let run = finish(c);
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert!(
            run.stderr.contains(want) && run.stderr.contains("/decoders"),
            "{}",
            run.stderr
        );
        assert!(!out.exists(), "nothing written");
    }
}
