//! The criterion driver every backend's bench file shares: one benchmark per workload × batch ×
//! lift, set up (upload, sink, lifts) before the timed closure, each iteration one whole frame
//! (set controls, encode, submit, wait) through [`mien_benches::harness::Case::frame`]; on a GPU,
//! a second benchmark per case whose time is the GPU's own (timestamp queries, summed stages).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use criterion::Criterion;
use mien_benches::harness::{Bench, CaseError, LiftMode};
use mien_benches::workloads::{self, ALL, Workload};

/// Batches benched.
pub const BATCHES: [u32; 3] = [1, 16, 256];

/// Each workload, built once per process (`None` when it cannot be built: its error is printed).
pub fn workload(id: &str) -> Option<Arc<Workload>> {
    static CACHE: OnceLock<Mutex<Vec<(String, Option<Arc<Workload>>)>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
    let mut c = cache.lock().ok()?;
    if let Some((_, w)) = c.iter().find(|(k, _)| k == id) {
        return w.clone();
    }
    let w = match workloads::load(id, &workloads::data_dir()) {
        Ok(w) => Some(Arc::new(w)),
        Err(e) => {
            eprintln!("skipping {id}: {e:#}");
            None
        }
    };
    c.push((id.to_owned(), w.clone()));
    w
}

/// Register every workload × batch × lift of `bench` under the group `name`.
pub fn run(c: &mut Criterion, name: &str, bench: &dyn Bench, gpu: bool) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for id in ALL {
        for batch in BATCHES {
            for lift in [LiftMode::Off, LiftMode::Debug, LiftMode::Surface] {
                let label = format!("{id}/b{batch}/lift-{}", lift.name());
                group.bench_function(&label, |b| {
                    let Some(w) = workload(id) else { return };
                    let mut case = match bench.case(&w, batch, lift) {
                        Ok(c) => c,
                        Err(CaseError::NotApplicable(why)) => {
                            eprintln!("{name}/{label}: n/a: {why}");
                            return;
                        }
                        Err(CaseError::Failed(e)) => {
                            eprintln!("{name}/{label}: {e:#}");
                            return;
                        }
                    };
                    let mut k = 0u64;
                    b.iter(|| {
                        k += 1;
                        if let Err(e) = case.frame(k) {
                            eprintln!("{name}/{label}: {e:#}");
                        }
                    });
                });
                if gpu {
                    group.bench_function(format!("{label}/gpu-time"), |b| {
                        let Some(w) = workload(id) else { return };
                        let Ok(mut case) = bench.case(&w, batch, lift) else {
                            return;
                        };
                        let mut k = 0u64;
                        b.iter_custom(|iters| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                k += 1;
                                if let Ok(Some(t)) = case.gpu_times(k) {
                                    let ms = t.morph.unwrap_or(0.0)
                                        + t.skin.unwrap_or(0.0)
                                        + t.lift.unwrap_or(0.0);
                                    total += Duration::from_secs_f64(ms * 1e-3);
                                }
                            }
                            total
                        });
                    });
                }
            }
        }
    }
    group.finish();
}
