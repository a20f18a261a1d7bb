//! Bake throughput on the CPU: whole takes baked into Face Cap's GLB per second — the Live Link
//! take (164 keys at 30 fps), a Gentle alignment and a Rhubarb track (their first 10 s, 300 keys)
//! — each from a fresh runtime (load excluded: the asset is loaded once), sampling, record and
//! fingerprints, GLB assembly. `cargo bench -p mien-runtime --bench bake`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mien_runtime::bake::{BakeOptions, bake};
use mien_runtime::speech::SpeechOptions;
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions, Speech};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn takes(c: &mut Criterion) {
    let file = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let source = std::fs::read(&file).unwrap();
    let mut g = c.benchmark_group("bake");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    let cases: [(&str, u32); 3] = [("livelink", 164), ("gentle", 300), ("rhubarb", 300)];
    for (name, frames) in cases {
        g.bench_function(format!("facecap/{name}/{frames}-keys"), |b| {
            b.iter(|| {
                let opts = RuntimeOptions {
                    instances: 1,
                    lift: None,
                };
                let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &opts).unwrap();
                let ch = asset.character();
                match name {
                    "livelink" => {
                        rt.instance_mut(0)
                            .unwrap()
                            .play_livelink_csv(data(
                                "livelinkface/MySlate_3_Jason_Millers_iPhone.csv",
                            ))
                            .unwrap();
                    }
                    _ => {
                        let f = if name == "gentle" {
                            data("gentle/lucier_golden.json")
                        } else {
                            data("rhubarb/pangram_rhubarb_tpi.tsv")
                        };
                        let sp = Speech::from_file(&f, &SpeechOptions::default(), ch).unwrap();
                        rt.instance_mut(0).unwrap().set_speech(Some(sp)).unwrap();
                    }
                }
                let o = BakeOptions {
                    fps: 30.0,
                    start_s: 0.0,
                    frames,
                    name: "mien take".into(),
                    take: serde_json::json!({"kind": name, "name": name}),
                    tolerance: None,
                };
                bake(&mut rt, &source, &o).unwrap().0.len()
            });
        });
    }
    g.finish();
}

/// What a bake key costs: the Live Link take's 164 frames through `Runtime::sample` (drivers and
/// controls, what `bake` keys since the Python issue) against `Runtime::update` (every vertex posed
/// as well, what `bake` ran before it), one runtime each, in one run.
fn sample_vs_update(c: &mut Criterion) {
    let file = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut g = c.benchmark_group("bake-keys");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for posing in [false, true] {
        let opts = RuntimeOptions {
            instances: 1,
            lift: None,
        };
        let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &opts).unwrap();
        rt.instance_mut(0)
            .unwrap()
            .play_livelink_csv(data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"))
            .unwrap();
        let name = if posing { "update" } else { "sample" };
        g.bench_function(format!("facecap/livelink/164-keys/{name}"), |b| {
            b.iter(|| {
                for f in 0..164 {
                    let t = f64::from(f) / 30.0;
                    if posing {
                        rt.update(t).unwrap();
                    } else {
                        rt.sample(t).unwrap();
                    }
                }
            });
        });
    }
    g.finish();
}

criterion_group!(benches, takes, sample_vs_update);
criterion_main!(benches);
