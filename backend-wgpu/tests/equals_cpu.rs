//! The wgpu backend equals the CPU reference on random rigs (the shared conformance harness of
//! `mien-cpu`), with every output buffer poisoned before each run, including rigs split into chunks
//! by a small binding limit, batches of rigs in one submission, and a caller-owned device.
//!
//! Without an adapter these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1`.

use mien_core::lift::Lift;
use mien_core::rig::{PosedVertices, RigBackend};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_cpu::conformance::{self, Harness, Inputs, POISON};
use mien_wgpu::{WgpuContext, WgpuDebugLift, WgpuRigBackend, WgpuSplatSink};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: cases_from_env(cases),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// The shared context, or `None` (with a notice) when there is no adapter and none is required.
fn context() -> Option<WgpuContext> {
    static CTX: std::sync::OnceLock<Option<WgpuContext>> = std::sync::OnceLock::new();
    CTX.get_or_init(|| match WgpuContext::new(&Default::default()) {
        Ok(c) => {
            eprintln!(
                "wgpu tests on {} ({:?}, {})",
                c.info().name,
                c.info().device_type,
                c.info().driver_info
            );
            Some(c)
        }
        Err(e) if mien_wgpu::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => {
            eprintln!("notice: skipping wgpu tests: {e}");
            None
        }
    })
    .clone()
}

/// The harness: one backend (optionally with a forced small binding limit), one sink, one encoder.
struct Wgpu {
    ctx: WgpuContext,
    binding_limit: Option<u64>,
}

impl Harness for Wgpu {
    fn run(&mut self, inputs: &Inputs) -> mien_core::Result<(Vec<PosedVertices>, SplatBuffers)> {
        let mut backend = match self.binding_limit {
            Some(l) => WgpuRigBackend::with_binding_limit(&self.ctx, l),
            None => WgpuRigBackend::new(&self.ctx),
        };
        let mut sink = WgpuSplatSink::new(&self.ctx, inputs.capacity)?;
        sink.fill(POISON);
        let mut handles = Vec::new();
        for (rig, c) in inputs.rigs.iter().zip(&inputs.controls) {
            let h = backend.upload(rig)?;
            backend.set_controls(h, c)?;
            handles.push(h);
        }
        backend.poison_outputs(POISON);
        if let Some(first) = inputs.lifts.first()
            && first.range.offset > 0
        {
            sink.allocate(first.range.offset)?;
        }
        let mut lifts = Vec::new();
        for (h, p) in handles.iter().zip(&inputs.lifts) {
            let r = sink.allocate(p.range.count)?;
            assert_eq!(r, p.range);
            lifts.push(WgpuDebugLift::new(&backend, *h, &sink, *p)?);
        }
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&Default::default());
        backend.encode(&mut enc)?;
        for l in &mut lifts {
            l.encode(&mut enc, &backend, &mut sink)?;
        }
        self.ctx.submit(enc);
        let posed = handles
            .iter()
            .map(|h| backend.read_vertices(*h))
            .collect::<mien_core::Result<Vec<_>>>()?;
        let all = sink.read(SlotRange {
            offset: 0,
            count: inputs.capacity,
        })?;
        Ok((posed, all))
    }
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn random_batches_equal_the_cpu_reference(case in conformance::cases(3000)) {
        let Some(ctx) = context() else { return Ok(()) };
        conformance::check(&mut Wgpu { ctx, binding_limit: None }, &case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn rigs_split_by_a_small_binding_limit_equal_the_cpu_reference(case in conformance::cases(1500), limit in 3072u64..8192) {
        let Some(ctx) = context() else { return Ok(()) };
        conformance::check(&mut Wgpu { ctx, binding_limit: Some(limit) }, &case).map_err(TestCaseError::fail)?;
    }
}

/// `cases`, or `$MIEN_PROPTEST_CASES` when set (more cases on a fast machine).
fn cases_from_env(cases: u32) -> u32 {
    std::env::var("MIEN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases)
}
