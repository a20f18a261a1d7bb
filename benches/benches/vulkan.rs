//! Criterion benches of the raw Vulkan backend (see `benches/README.md`). Without a hardware
//! device (or with `MIEN_BENCH_SOFTWARE=1`, a software one) every bench is skipped with a notice.

mod common;

use std::sync::OnceLock;

use criterion::{Criterion, criterion_group, criterion_main};
use mien_benches::gpu::VulkanBench;

/// The device, opened once for every bench of this file.
fn device() -> Option<&'static VulkanBench> {
    static DEVICE: OnceLock<Option<VulkanBench>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let software = std::env::var("MIEN_BENCH_SOFTWARE").is_ok_and(|v| v == "1");
            match VulkanBench::new(software) {
                Ok(b) => Some(b),
                Err(e) => {
                    eprintln!(
                        "vulkan benches skipped: {e:#} (MIEN_BENCH_SOFTWARE=1 accepts lavapipe)"
                    );
                    None
                }
            }
        })
        .as_ref()
}

fn vulkan(c: &mut Criterion) {
    if let Some(d) = device() {
        common::run(c, "vulkan", d, true);
    }
}

criterion_group!(benches, vulkan);
criterion_main!(benches);
