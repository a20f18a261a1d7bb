//! The decoder through a real ONNX Runtime (the `onnxruntime` wheel's library: `ORT_DYLIB_PATH`,
//! else the one `python3` has). Skipped with a notice when there is none, unless
//! `MIEN_REQUIRE_ORT=1` (set by `.ci/run`), which makes that a failure.

use std::path::{Path, PathBuf};

use mien_decoder::{DecodeInputs, Decoded, Decoder, DecoderOptions, Error, Ort};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn ort() -> Option<Ort> {
    let path = mien_decoder::library_path();
    match path {
        Some(p) => Some(Ort::load_from(&p).unwrap_or_else(|e| panic!("{e}"))),
        None if std::env::var("MIEN_REQUIRE_ORT").as_deref() == Ok("1") => {
            panic!(
                "MIEN_REQUIRE_ORT=1 and no ONNX Runtime: set ORT_DYLIB_PATH or pip install onnxruntime"
            )
        }
        None => {
            eprintln!(
                "skipped: no ONNX Runtime (ORT_DYLIB_PATH unset, no onnxruntime wheel for python3)"
            );
            None
        }
    }
}

#[derive(serde::Deserialize)]
struct Golden {
    inputs: GoldenIn,
    outputs: GoldenOut,
    outputs_view_negated: GoldenRgb,
    tolerance_abs: f32,
}
#[derive(serde::Deserialize)]
struct GoldenIn {
    features: Vec<Vec<f32>>,
    view_dir: Vec<[f32; 3]>,
}
#[derive(serde::Deserialize)]
struct GoldenOut {
    rgb: Vec<[f32; 3]>,
    opacity: Vec<[f32; 1]>,
}
#[derive(serde::Deserialize)]
struct GoldenRgb {
    rgb: Vec<[f32; 3]>,
}

fn golden() -> Golden {
    let t = std::fs::read_to_string(data("onnx/tiny_view_decoder_golden.json")).unwrap();
    serde_json::from_str(&t).unwrap()
}

#[test]
fn tiny_view_decoder_matches_onnx_runtime_python() {
    let Some(ort) = ort() else { return };
    let d = Decoder::load(
        &ort,
        &data("onnx/tiny_view_decoder.onnx"),
        &DecoderOptions::default(),
    )
    .unwrap();
    let c = d.contract();
    assert_eq!(c.features, Some(16));
    assert_eq!(c.controls, None);
    assert!(c.view_dir);
    assert_eq!(c.fixed_n, None);
    assert!(!c.geometry.any());
    let g = golden();
    let feats: Vec<f32> = g.inputs.features.concat();
    let n = g.inputs.view_dir.len();
    let mut out = Decoded::default();
    d.decode(
        &DecodeInputs {
            n,
            features: Some(&feats),
            controls: None,
            view_dir: Some(&g.inputs.view_dir),
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(out.rgb.len(), n);
    for i in 0..n {
        for k in 0..3 {
            assert!(
                (out.rgb[i][k] - g.outputs.rgb[i][k]).abs() <= g.tolerance_abs,
                "rgb {i} {k}"
            );
        }
        assert!((out.opacity[i] - g.outputs.opacity[i][0]).abs() <= g.tolerance_abs);
    }
    assert_eq!(out.clamped, 0);
    // The opposite view: a different colour, ONNX Runtime's own.
    let neg: Vec<[f32; 3]> = g.inputs.view_dir.iter().map(|v| v.map(|x| -x)).collect();
    d.decode(
        &DecodeInputs {
            n,
            features: Some(&feats),
            controls: None,
            view_dir: Some(&neg),
        },
        &mut out,
    )
    .unwrap();
    let mut moved = 0f32;
    for i in 0..n {
        for k in 0..3 {
            assert!((out.rgb[i][k] - g.outputs_view_negated.rgb[i][k]).abs() <= g.tolerance_abs);
            moved = moved.max((out.rgb[i][k] - g.outputs.rgb[i][k]).abs());
        }
    }
    assert!(moved > 0.1, "the view changes the colour ({moved})");
}

#[test]
fn inputs_that_do_not_fit_are_named() {
    let Some(ort) = ort() else { return };
    let d = Decoder::load(
        &ort,
        &data("onnx/tiny_view_decoder.onnx"),
        &DecoderOptions::default(),
    )
    .unwrap();
    let feats = vec![0.0f32; 3 * 16];
    let view = [[0.0f32, 0.0, 1.0]; 3];
    let mut out = Decoded::default();
    let e = d
        .decode(
            &DecodeInputs {
                n: 3,
                features: Some(&feats[..47]),
                controls: None,
                view_dir: Some(&view),
            },
            &mut out,
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::Input { input, .. } if input == "features"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("47 values for 3 gaussians × 16 features"),
        "{e}"
    );
    let e = d
        .decode(
            &DecodeInputs {
                n: 3,
                features: Some(&feats),
                controls: None,
                view_dir: None,
            },
            &mut out,
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("view_dir") && e.to_string().contains("view-dependent"),
        "{e}"
    );
    let e = d
        .decode(
            &DecodeInputs {
                n: 3,
                features: Some(&feats),
                controls: None,
                view_dir: Some(&view[..2]),
            },
            &mut out,
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("2 directions for 3 gaussians"),
        "{e}"
    );
    // N = 0 runs (an empty branch) and gives nothing.
    d.decode(
        &DecodeInputs {
            n: 0,
            features: Some(&[]),
            controls: None,
            view_dir: Some(&[]),
        },
        &mut out,
    )
    .unwrap();
    assert!(out.rgb.is_empty() && out.opacity.is_empty());
}

#[test]
fn models_outside_the_contract_are_refused_with_every_problem() {
    let Some(ort) = ort() else { return };
    // ort's upsample model: one NHWC image in, one out.
    let e = Decoder::load(
        &ort,
        &data("onnx/ort_upsample.onnx"),
        &DecoderOptions::default(),
    )
    .unwrap_err();
    let Error::Contract { file, problems } = &e else {
        panic!("{e}")
    };
    assert!(file.ends_with("ort_upsample.onnx"));
    let text = problems.join("\n");
    assert!(
        text.contains("no output `rgb`") && text.contains("no output `opacity`"),
        "{text}"
    );
    assert!(problems.len() >= 4, "{text}");
    // bool and string inputs: named with their types.
    for f in std::fs::read_dir(data("onnx")).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("ort_") && name.ends_with(".onnx") {
            let e = Decoder::load(&ort, &p, &DecoderOptions::default()).unwrap_err();
            assert!(matches!(e, Error::Contract { .. }), "{name}: {e}");
        }
    }
    // Not a model at all.
    let e = Decoder::from_bytes(
        &ort,
        b"not an onnx model",
        "junk.onnx",
        &DecoderOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Model { file, .. } if file == "junk.onnx"),
        "{e}"
    );
    let e = Decoder::load(
        &ort,
        Path::new("/nonexistent/x.onnx"),
        &DecoderOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.onnx"), "{e}");
}

#[test]
fn a_second_library_is_refused_and_the_same_one_is_shared() {
    let Some(ort) = ort() else { return };
    let again = Ort::load_from(ort.path()).unwrap();
    assert_eq!(again.path(), ort.path());
    assert!(ort.version().starts_with("1."), "{}", ort.version());
    let e = Ort::load_from("/usr/lib/x86_64-linux-gnu/libm.so.6").unwrap_err();
    assert!(matches!(e, Error::OrtTwice { .. }), "{e}");
}

#[test]
fn absurd_sizes_and_thread_counts_are_refused() {
    let Some(ort) = ort() else { return };
    let path = data("onnx/tiny_view_decoder.onnx");
    for t in [0, mien_decoder::MAX_THREADS + 1, 100_000] {
        let e = Decoder::load(
            &ort,
            &path,
            &DecoderOptions {
                threads: Some(t),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains(&format!("{t} threads")), "{e}");
    }
    let d = Decoder::load(
        &ort,
        &path,
        &DecoderOptions {
            threads: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    let mut out = Decoded::default();
    let e = d
        .decode(
            &DecodeInputs {
                n: 1 << 60,
                features: Some(&[]),
                controls: None,
                view_dir: Some(&[]),
            },
            &mut out,
        )
        .unwrap_err();
    assert!(e.to_string().contains("more than memory holds"), "{e}");
}
