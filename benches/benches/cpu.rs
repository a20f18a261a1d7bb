//! Criterion benches of the CPU backend (see `benches/README.md`).

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use mien_benches::cpu::CpuBench;

fn cpu(c: &mut Criterion) {
    common::run(c, "cpu", &CpuBench::EXACT, false);
}

criterion_group!(benches, cpu);
criterion_main!(benches);
