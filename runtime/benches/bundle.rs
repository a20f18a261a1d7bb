//! Appearance decoders (issue 31, docs/decoders.md): decodes per second and characters per second
//! with a decoder per branch, on mien's test bundle (the ICT-FaceKit head: head branch ~67k texel
//! gaussians with the skin decoder, eyes ~6k with the eye decoder, teeth ~9k undecoded).
//!
//! - `bundle/decode/<model>`: one decoder run over the head branch through `mien_decoder` (ONNX
//!   Runtime alone, inputs ready) — the peer the full path is measured against in the same run.
//! - `bundle/update/<backend>/every-frame/<N>`: N instances, each with new controls and the camera
//!   moved 5 mm every frame, so every decoded branch of every instance decodes: features, views,
//!   ONNX Runtime, records rebuilt and written, then the rig and lift. Throughput = characters/s.
//! - `bundle/update/<backend>/static/<N>`: nothing changes, nothing decodes: the rig and lift only.
//!
//! ONNX Runtime from `ORT_DYLIB_PATH` (else the `onnxruntime` wheel); the bundle from
//! `MIEN_BENCH_BUNDLE` (a folder holding `head.character.json`), else built into
//! `target/bench-bundle` with `docs/bundles/make_test_bundle.py`. `MIEN_BENCH_BACKENDS`
//! (`cpu,vulkan,wgpu`; default `cpu`) and `MIEN_BENCH_INSTANCES` (default `1,4,16`) choose the
//! cases. `cargo bench -p mien-runtime --bench bundle`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mien_runtime::decoder::{DecodeInputs, Decoded, Decoder, DecoderOptions, Ort};
use mien_runtime::{
    Backend, Camera, CharacterDef, Device, DeviceOptions, ExpressionSpace, Runtime, RuntimeOptions,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn data(rel: &str) -> PathBuf {
    root().join("../shared/data").join(rel)
}

/// The bundle's folder: `MIEN_BENCH_BUNDLE`, else built once into target/bench-bundle.
fn bundle_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MIEN_BENCH_BUNDLE") {
        return PathBuf::from(d);
    }
    let dir = root().join("target/bench-bundle");
    if dir.join("head.character.json").is_file() {
        return dir;
    }
    mien_runtime::bundle::make_test_bundle(&data("ict-facekit"), &dir).unwrap();
    dir
}

fn ort() -> Ort {
    let lib = mien_runtime::decoder::library_path()
        .expect("ONNX Runtime: set ORT_DYLIB_PATH or pip install onnxruntime");
    Ort::load_from(lib).unwrap()
}

fn list<T: std::str::FromStr>(var: &str, default: &str) -> Vec<T> {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn bundle(c: &mut Criterion) {
    let ort = ort();
    println!("ONNX Runtime {} ({})", ort.version(), ort.path().display());
    let dir = bundle_dir();
    let manifest = dir.join("head.character.json");
    let mut g = c.benchmark_group("bundle");
    g.sample_size(10).measurement_time(Duration::from_secs(5));

    // The head branch's inputs, as the runtime builds them.
    let ch = CharacterDef::load(&manifest).unwrap();
    let asset = Arc::new(ch.asset.clone());
    let opts = RuntimeOptions {
        instances: 1,
        lift: Some(ch.lift_options()),
    };
    let rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &opts).unwrap();
    let head = rt.lift().unwrap().branches[0].1;
    let n = head.count as usize;
    let controls = vec![0.1f32; asset.space_len(ExpressionSpace::Gnm).unwrap()];
    let features: Vec<f32> = (0..n * 8).map(|i| (i % 7) as f32 * 0.1).collect();
    let view: Vec<[f32; 3]> = (0..n)
        .map(|i| {
            let a = i as f32 * 0.001;
            [a.sin() * 0.2, 0.1, -1.0]
        })
        .collect();
    drop(rt);
    for model in ["skin.onnx", "skin.fp16.onnx"] {
        let d = Decoder::load(&ort, &dir.join(model), &DecoderOptions::default()).unwrap();
        let mut out = Decoded::default();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("decode/{model}/{n}-gaussians"), |b| {
            b.iter(|| {
                d.decode(
                    &DecodeInputs {
                        n,
                        features: Some(&features),
                        controls: Some(&controls),
                        view_dir: Some(&view),
                    },
                    &mut out,
                )
                .unwrap();
            });
        });
    }

    let backends: Vec<String> = list("MIEN_BENCH_BACKENDS", "cpu");
    let counts: Vec<u32> = list("MIEN_BENCH_INSTANCES", "1,4,16");
    for be in &backends {
        let device = match be.as_str() {
            "cpu" => Device::Cpu,
            other => {
                let b: Backend = other.parse().unwrap();
                match Device::open_with(b, &DeviceOptions::from_env()) {
                    Ok((d, _)) => d,
                    Err(e) => {
                        println!("{other}: no device ({}); skipped", e.chain_text());
                        continue;
                    }
                }
            }
        };
        for &inst in &counts {
            let opts = RuntimeOptions {
                instances: inst,
                lift: Some(ch.lift_options()),
            };
            let mut rt = Runtime::new(Arc::clone(&asset), &device, &opts).unwrap();
            let mut k = 0u64;
            let dim = controls.len();
            g.throughput(Throughput::Elements(u64::from(inst)));
            g.bench_function(format!("update/{be}/every-frame/{inst}"), |b| {
                b.iter(|| {
                    k += 1;
                    for i in 0..inst as usize {
                        let mut v = vec![0.0f32; dim];
                        v[(k as usize + i) % (dim - 4)] = 0.5;
                        rt.instance_mut(i)
                            .unwrap()
                            .set_controls(ExpressionSpace::Gnm, &v)
                            .unwrap();
                    }
                    let z = 0.6 + 0.005 * (k % 2) as f64;
                    rt.set_camera(Camera::look_at([0.0, 0.0, z], [0.0, 0.0, 0.0], 0.6).unwrap())
                        .unwrap();
                    rt.update(k as f64 / 30.0).unwrap();
                });
                rt.finish().unwrap();
            });
            let s = rt.appearance_stats().unwrap();
            println!(
                "  {be} ×{inst}: {} decodes, {:.2} ms decoding and {:.2} ms records per decode, {} record bytes per decode",
                s.decodes,
                s.decode_time.as_secs_f64() * 1e3 / s.decodes.max(1) as f64,
                s.record_time.as_secs_f64() * 1e3 / s.decodes.max(1) as f64,
                s.record_bytes / s.decodes.max(1)
            );
            g.bench_function(format!("update/{be}/static/{inst}"), |b| {
                b.iter(|| {
                    rt.update(1.0).unwrap();
                });
                rt.finish().unwrap();
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bundle);
criterion_main!(benches);
