//! The Vulkan backend equals the CPU reference on random rigs — the same conformance harness the
//! wgpu backend runs (`mien_cpu::conformance`) — with every output poisoned before each run, rigs split
//! by a small binding limit, and the Khronos validation layer on: any validation message fails.
//!
//! Without a Vulkan device these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1` (then
//! the validation layer is required too).

use mien_core::lift::Lift;
use mien_core::rig::{PosedVertices, RigBackend};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_cpu::conformance::{self, Harness, Inputs, POISON};
use mien_vulkan::{
    ContextOptions, VulkanContext, VulkanDebugLift, VulkanRigBackend, VulkanSplatSink,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    let cases = std::env::var("MIEN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// A context with validation, or `None` (with a notice) when there is no device and none is
/// required.
fn context() -> Option<VulkanContext> {
    static CTX: std::sync::OnceLock<Option<VulkanContext>> = std::sync::OnceLock::new();
    CTX.get_or_init(|| {
        let options = ContextOptions {
            validation: true,
            require_validation: mien_vulkan::gpu_required(),
            allow_software: true,
        };
        match VulkanContext::new(&options) {
            Ok(c) => {
                eprintln!("vulkan tests on {}", c.name());
                Some(c)
            }
            Err(e) if mien_vulkan::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
            Err(e) => {
                eprintln!("notice: skipping Vulkan tests: {e}");
                None
            }
        }
    })
    .clone()
}

struct Vulkan {
    ctx: VulkanContext,
    binding_limit: Option<u64>,
}

impl Harness for Vulkan {
    fn run(&mut self, inputs: &Inputs) -> mien_core::Result<(Vec<PosedVertices>, SplatBuffers)> {
        let mut backend = match self.binding_limit {
            Some(l) => VulkanRigBackend::with_binding_limit(&self.ctx, l),
            None => VulkanRigBackend::new(&self.ctx),
        };
        let mut sink = VulkanSplatSink::new(&self.ctx, inputs.capacity)?;
        sink.fill(POISON)?;
        let mut handles = Vec::new();
        for (rig, c) in inputs.rigs.iter().zip(&inputs.controls) {
            let h = backend.upload(rig)?;
            backend.set_controls(h, c)?;
            handles.push(h);
        }
        backend.poison_outputs(POISON)?;
        if let Some(first) = inputs.lifts.first()
            && first.range.offset > 0
        {
            sink.allocate(first.range.offset)?;
        }
        let mut lifts = Vec::new();
        for (h, p) in handles.iter().zip(&inputs.lifts) {
            let r = sink.allocate(p.range.count)?;
            assert_eq!(r, p.range);
            lifts.push(VulkanDebugLift::new(&backend, *h, &sink, *p)?);
        }
        let mut enc = self.ctx.begin()?;
        backend.encode(&mut enc)?;
        for l in &mut lifts {
            l.encode(&mut enc, &backend, &mut sink)?;
        }
        self.ctx.submit(enc)?;
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

fn check(
    ctx: VulkanContext,
    limit: Option<u64>,
    case: &conformance::Case,
) -> Result<(), TestCaseError> {
    let mut h = Vulkan {
        ctx: ctx.clone(),
        binding_limit: limit,
    };
    let result = conformance::check(&mut h, case);
    drop(h);
    let messages = ctx.take_validation_messages();
    prop_assert!(
        messages.is_empty(),
        "validation layer: {}",
        messages.join("\n")
    );
    result.map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(config(16))]

    #[test]
    fn random_batches_equal_the_cpu_reference(case in conformance::cases(3000)) {
        let Some(ctx) = context() else { return Ok(()) };
        check(ctx, None, &case)?;
    }

    #[test]
    fn rigs_split_by_a_small_binding_limit_equal_the_cpu_reference(case in conformance::cases(1500), limit in 3072u64..8192) {
        let Some(ctx) = context() else { return Ok(()) };
        check(ctx, Some(limit), &case)?;
    }
}
