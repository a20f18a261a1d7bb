//! Criterion benches of the wgpu backend (see `benches/README.md`). Without a hardware adapter
//! (or with `MIEN_BENCH_SOFTWARE=1`, a software one) every bench is skipped with a notice.

mod common;

use std::sync::OnceLock;

use criterion::{Criterion, criterion_group, criterion_main};
use mien_benches::gpu::WgpuBench;

/// The device, opened once for every bench of this file.
fn device() -> Option<&'static WgpuBench> {
    static DEVICE: OnceLock<Option<WgpuBench>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let software = std::env::var("MIEN_BENCH_SOFTWARE").is_ok_and(|v| v == "1");
            match WgpuBench::new(software) {
                Ok(b) if software || !b.context().is_software() => Some(b),
                Ok(b) => {
                    eprintln!("wgpu benches skipped: only a software adapter ({}); set MIEN_BENCH_SOFTWARE=1 to bench it", b.context().info().name);
                    None
                }
                Err(e) => {
                    eprintln!("wgpu benches skipped: no adapter ({e:#})");
                    None
                }
            }
        })
        .as_ref()
}

fn wgpu(c: &mut Criterion) {
    if let Some(d) = device() {
        common::run(c, "wgpu", d, true);
    }
}

criterion_group!(benches, wgpu);
criterion_main!(benches);
