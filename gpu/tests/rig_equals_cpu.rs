//! The GPU rig stage equals the CPU reference on random rigs (the shared conformance harness of
//! `mien-cpu`) on every device layer — wgpu and Vulkan (validation on) — with every output buffer
//! poisoned before each run, including rigs split into chunks by a small binding limit and
//! batches of rigs in one submission.

mod common;

use common::TestDevice;
use mien_core::lift::Lift;
use mien_core::rig::{PosedVertices, RigBackend};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_cpu::conformance::{self, Harness, Inputs, POISON};
use mien_gpu::{GpuDebugLift, GpuRigBackend, GpuSplatSink};
use proptest::prelude::*;

/// The harness: one backend (optionally with a forced small binding limit), one sink, one encoder.
struct Gpu<'a, G: TestDevice> {
    g: &'a G,
    binding_limit: Option<u64>,
}

impl<G: TestDevice> Harness for Gpu<'_, G> {
    fn run(&mut self, inputs: &Inputs) -> mien_core::Result<(Vec<PosedVertices>, SplatBuffers)> {
        let g = self.g;
        let mut backend = match self.binding_limit {
            Some(l) => GpuRigBackend::with_binding_limit(g, l),
            None => GpuRigBackend::new(g),
        };
        let mut sink = GpuSplatSink::new(g, inputs.capacity)?;
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
            lifts.push(GpuDebugLift::new(&backend, *h, &sink, *p)?);
        }
        let mut enc = g.begin().map_err(Into::into)?;
        backend.encode(&mut enc)?;
        for l in &mut lifts {
            l.encode(&mut enc, &backend, &mut sink)?;
        }
        g.submit(enc).map_err(Into::into)?;
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

fn check<G: TestDevice>(
    g: &G,
    binding_limit: Option<u64>,
    case: &conformance::Case,
) -> Result<(), String> {
    conformance::check(&mut Gpu { g, binding_limit }, case)
}

proptest! {
    #![proptest_config(common::config(16))]

    #[test]
    fn random_batches_equal_the_cpu_reference(case in conformance::cases(3000)) {
        on_devices!(check, None, &case);
    }

    #[test]
    fn rigs_split_by_a_small_binding_limit_equal_the_cpu_reference(case in conformance::cases(1500), limit in 3072u64..8192) {
        on_devices!(check, Some(limit), &case);
    }
}

/// Each device layer states its limits and optional features in the API's own terms, and the
/// stages plan within them: a binding limit, dispatch sizes of at least the 65,535 both APIs
/// guarantee, an offset alignment that is a power of two.
fn caps_are_stated<G: TestDevice>(g: &G) -> Result<(), String> {
    let c = g.caps();
    eprintln!("{}: {c:?}", G::NAME);
    let ok = c.binding_limit >= 128 << 20
        && c.max_buffer >= c.binding_limit.min(c.max_buffer)
        && c.max_groups_xy >= 65_535
        && c.max_groups_z >= 65_535
        && c.offset_alignment.is_power_of_two()
        && !c.binding_limit_name.is_empty()
        && !c.max_groups_z_name.is_empty();
    if !ok {
        return Err(format!("{c:?}"));
    }
    if let Some(s) = c.subgroup_size
        && !s.is_power_of_two()
    {
        return Err(format!("subgroup size {s}"));
    }
    Ok(())
}

#[test]
fn every_device_states_its_limits_and_features() -> Result<(), TestCaseError> {
    on_devices!(caps_are_stated);
    Ok(())
}
