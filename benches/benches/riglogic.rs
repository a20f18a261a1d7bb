//! Criterion benches of RigLogic (issue 29 item 3): the ICT MetaHuman-style DNA rig
//! (`metahuman_dna/mien_ict_rig.dna`: 57 raw controls, 7 PSDs, 4 joint groups of 108 × 64, 63
//! channels, 6 animated maps) solved for many instances sharing one compiled rig — every instance's
//! 57 raw controls set (OpenRigLogic's own benchmark animates 60) and `calculate` at LOD 0 —
//! one instance, then 1,024 one after another on one core, then 1,024 in parallel over the host's
//! cores (rayon). Throughput is instances solved per second. Skipped when the data is absent.
//!
//! ```sh
//! cargo bench -p mien-benches --bench riglogic   # MIEN_DATA=DIR reads the inputs from DIR
//! ```

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mien_core::io::dna::{DnaLayers, DnaLoad, LodSelection, read_dna_file, riglogic_spec};
use mien_core::rig::riglogic::{
    JointOutput, JointPrecision, RigLogic, RigLogicConfig, RigLogicInstance,
};
use rayon::prelude::*;

fn riglogic(c: &mut Criterion) {
    let path = mien_benches::workloads::data_dir().join("metahuman_dna/mien_ict_rig.dna");
    if !path.exists() {
        eprintln!("riglogic bench: {} is absent; skipped", path.display());
        return;
    }
    let load = DnaLoad {
        layers: DnaLayers::Behavior,
        lods: LodSelection::All,
    };
    let spec = riglogic_spec(&read_dna_file(&path, &load).unwrap()).unwrap();
    let mut g = c.benchmark_group("riglogic");
    for (label, precision, output) in [
        ("float_euler", JointPrecision::Float, JointOutput::Euler),
        (
            "half_quaternion",
            JointPrecision::Half,
            JointOutput::Quaternion,
        ),
    ] {
        let rig = RigLogic::new(&spec, RigLogicConfig { precision, output }).unwrap();
        let raw_count = rig.raw_count();
        let controls = |i: usize, k: usize| -> Vec<f32> {
            (0..raw_count)
                .map(|c| {
                    (0.5 + 0.5 * ((0.37 * c as f32) + 0.11 * i as f32 + 0.05 * k as f32).sin())
                        .clamp(0.0, 1.0)
                })
                .collect()
        };
        for n in [1usize, 1024] {
            let mut states: Vec<RigLogicInstance> =
                (0..n).map(|_| RigLogicInstance::new(&rig)).collect();
            let inputs: Vec<Vec<f32>> = (0..n).map(|i| controls(i, 0)).collect();
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(BenchmarkId::new(format!("{label}/serial"), n), |b| {
                b.iter(|| {
                    for (s, x) in states.iter_mut().zip(&inputs) {
                        s.set_raw(&rig, x).unwrap();
                        s.calculate(&rig);
                    }
                })
            });
            if n > 1 {
                g.bench_function(BenchmarkId::new(format!("{label}/rayon"), n), |b| {
                    b.iter(|| {
                        states.par_iter_mut().zip(&inputs).for_each(|(s, x)| {
                            s.set_raw(&rig, x).unwrap();
                            s.calculate(&rig);
                        })
                    })
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, riglogic);
criterion_main!(benches);
