//! The linear head's tensor-core forward pass (`gnm_coop.wgsl`, `Entry::GnmCoop`), on every
//! device layer: where the device has it (`Caps::coop_gnm`: the H200's Vulkan backend), batches of
//! 16 instances and more run it and every instance stays within
//! `mien_cpu::conformance::gnm::coop_vertex_bounds` of the CPU reference (random packs, partial
//! instance blocks, coefficient counts that are not multiples of 16, a pack split into chunks, the
//! ICT-sized pack); a frame whose scaled coefficients do not fit fp16 runs the exact kernel and
//! meets the exact bound. Where the device lacks it (lavapipe) the same batches run the exact
//! kernel, which the tests confirm — CI exercises that fallback. wgpu runs the same kernel
//! through its experimental cooperative matrices where the adapter lists the shape.

mod common;

use common::{TestDevice, TestResult, msg};
use mien_core::gnm::{GnmBackend, GnmHandle};
use mien_core::rig::PosedVertices;
use mien_cpu::conformance::POISON;
use mien_cpu::conformance::gnm::{
    GnmCase, GnmFrameInput, compare_gnm, compare_gnm_coop, gnm_reference,
};
use mien_cpu::conformance::gnm_batch::{GnmBatchInput, ict_sized_case};
use mien_gpu::{GpuDevice, GpuGnmBackend};
use proptest::test_runner::TestCaseError;

/// Pose `input`'s frames as one batch; returns the vertices and the upload's tensor-core state.
fn run<G: TestDevice>(
    ctx: &G,
    input: &GnmBatchInput,
    limit: Option<u64>,
) -> Result<(Vec<PosedVertices>, (bool, bool)), String> {
    let mut b = match limit {
        Some(l) => GpuGnmBackend::with_binding_limit(ctx, l),
        None => GpuGnmBackend::new(ctx),
    };
    let hs: Vec<GnmHandle> = b
        .upload_gnm_batch(&input.pack, input.frames.len() as u32)
        .map_err(msg)?;
    b.poison_outputs(POISON).map_err(msg)?;
    let f = &input.frames;
    let at = |k: usize| (&f[k].head_ext[..], &f[k].joint_world[..]);
    b.set_head_ext_batch(&hs, &at).map_err(msg)?;
    let mut enc = ctx.begin().map_err(msg)?;
    b.encode(&mut enc).map_err(msg)?;
    ctx.submit(enc).map_err(msg)?;
    let state = b.tensor_core_state(hs[0]).map_err(msg)?;
    let got = hs
        .iter()
        .map(|h| b.read_vertices(*h))
        .collect::<Result<_, _>>()
        .map_err(msg)?;
    Ok((got, state))
}

fn check<G: TestDevice>(ctx: &G, input: &GnmBatchInput, limit: Option<u64>) -> TestResult {
    let (got, state) = run(ctx, input, limit)?;
    let want = gnm_reference(&input.pack, &input.frames).map_err(msg)?;
    let n = input.frames.len();
    let expect = ctx.caps().coop_gnm && n >= 16;
    if state != (expect, expect) {
        return Err(format!(
            "{n} instances: tensor-core state {state:?}, expected {:?}",
            (expect, expect)
        ));
    }
    let r = if expect {
        compare_gnm_coop(&input.pack, &input.frames, &got, &want)?
    } else {
        compare_gnm(&input.pack, &input.frames, &got, &want)?
    };
    eprintln!(
        "{} vertices × {} coefficients, {n} instances{}: tensor cores {expect}, max |diff| {:e} m \
         ({:.3} of the bound)",
        input.pack.vertex_count(),
        input.pack.coeff_count(),
        limit.map_or(String::new(), |l| format!(", binding limit {l}")),
        r.max_abs,
        r.max_ratio
    );
    Ok(())
}

fn batch(seed: u64, vertices: u32, coeffs: u32, instances: u32) -> GnmBatchInput {
    let mut case: GnmCase = ict_sized_case(instances);
    case.seed = seed;
    case.shape.vertices = vertices;
    case.shape.coeffs = coeffs;
    GnmBatchInput::new(&case)
}

fn batches_on<G: TestDevice>(ctx: &G) -> TestResult {
    // Coefficient counts below, at and past 16-multiples; partial instance blocks; one batch of
    // 15 (under the threshold: exact).
    for (seed, v, e, n) in [
        (1u64, 300u32, 7u32, 16u32),
        (2, 517, 16, 33),
        (3, 1000, 57, 64),
        (4, 130, 200, 17),
        (5, 640, 23, 15),
    ] {
        check(ctx, &batch(seed, v, e, n), None)?;
    }
    // A pack split into chunks (each chunk its own padded basis).
    check(ctx, &batch(6, 3000, 40, 20), Some(256 << 10))?;
    Ok(())
}

fn ict_on<G: TestDevice>(ctx: &G) -> TestResult {
    let mut input = GnmBatchInput::new(&ict_sized_case(3));
    // 48 instances: the case's 3 frames repeated.
    let frames: Vec<GnmFrameInput> = (0..48).map(|k| input.frames[k % 3].clone()).collect();
    input.frames = frames;
    check(ctx, &input, None)
}

fn out_of_fp16_on<G: TestDevice>(ctx: &G) -> TestResult {
    let mut input = batch(7, 200, 20, 16);
    // One coefficient so large that cₑ·sₑ exceeds fp16's range: the frame runs the exact kernel.
    let s = input.pack.basis_scale[3].abs().max(1e-30);
    input.frames[5].head_ext[3] = 1e6 / s;
    let (got, state) = run(ctx, &input, None)?;
    if ctx.caps().coop_gnm && state != (true, false) {
        return Err(format!(
            "tensor-core state {state:?}, expected (true, false)"
        ));
    }
    let want = gnm_reference(&input.pack, &input.frames).map_err(msg)?;
    compare_gnm(&input.pack, &input.frames, &got, &want)?;
    Ok(())
}

#[test]
fn batches_on_tensor_cores_stay_within_the_derived_bound() -> Result<(), TestCaseError> {
    on_devices!(batches_on);
    Ok(())
}

#[test]
fn the_ict_sized_pack_on_tensor_cores_stays_within_the_derived_bound() -> Result<(), TestCaseError>
{
    on_devices!(ict_on);
    Ok(())
}

#[test]
fn coefficients_past_fp16_run_the_exact_kernel() -> Result<(), TestCaseError> {
    on_devices!(out_of_fp16_on);
    Ok(())
}

/// wgpu takes the tensor-core path wherever the Vulkan backend does (the same GPU lists the same
/// shapes through wgpu's `Adapter::cooperative_matrix_properties`), so a missing feature request
/// or a wrong shape check shows here rather than as a silently slower wgpu.
#[test]
fn wgpu_uses_tensor_cores_where_vulkan_does() {
    let (Some(w), Some(v)) = (common::wgpu(), common::vulkan()) else {
        eprintln!("notice: needs both device layers");
        return;
    };
    if v.caps().coop_gnm {
        assert!(
            w.caps().coop_gnm,
            "Vulkan ({}) runs gnm_coop.wgsl but wgpu ({}) does not",
            v.name(),
            w.info().name
        );
    }
}
