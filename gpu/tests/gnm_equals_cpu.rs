//! The GPU linear-head stage equals the CPU reference (`forward::pose`) within the derived GNM
//! bound (`mien_cpu::conformance::gnm`) on random packs and frames, on every device layer (wgpu,
//! and Vulkan with validation), with every output poisoned before each frame; bases split by a
//! small binding limit give the same bits as unsplit ones; the hand-worked pack poses where the
//! arithmetic says; bad packs and frames get typed errors; batches equal their reference poses.

mod common;

use common::{TestDevice, TestResult};
use mien_core::gnm::{GnmBackend, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack};
use mien_cpu::conformance::POISON;
use mien_cpu::conformance::gnm::{
    GnmCase, GnmFrameInput, GnmHarness, GnmInputs, check_gnm, check_pack, gnm_cases,
    one_vertex_pack,
};
use mien_cpu::conformance::gnm_batch::{
    GnmBatchInput, check_batch, gnm_batch_cases, ict_sized_case,
};
use mien_gpu::GpuGnmBackend;
use proptest::prelude::*;

/// One backend per run (optionally with a forced small binding limit); poisons before each frame;
/// records the chunk sizes of the last upload.
struct Gpu<'a, G: TestDevice> {
    ctx: &'a G,
    binding_limit: Option<u64>,
    chunks: Vec<u32>,
}

impl<'a, G: TestDevice> Gpu<'a, G> {
    fn new(ctx: &'a G, binding_limit: Option<u64>) -> Self {
        Gpu {
            ctx,
            binding_limit,
            chunks: Vec::new(),
        }
    }
}

impl<G: TestDevice> Gpu<'_, G> {
    /// The exact kernel always (these tests hold it to the exact bound; the tensor-core pass
    /// has its own test, `gnm_coop.rs`).
    fn backend(&self) -> GpuGnmBackend<G> {
        let mut b = match self.binding_limit {
            Some(l) => GpuGnmBackend::with_binding_limit(self.ctx, l),
            None => GpuGnmBackend::new(self.ctx),
        };
        b.set_tensor_cores(false);
        b
    }
}

impl<G: TestDevice> GnmHarness for Gpu<'_, G> {
    fn run(
        &mut self,
        pack: &GnmPack,
        frames: &[GnmFrameInput],
    ) -> mien_core::Result<Vec<PosedVertices>> {
        let mut b = self.backend();
        let h = b.upload_gnm(pack)?;
        self.chunks = b.chunk_sizes(h)?;
        let mut out = Vec::new();
        for f in frames {
            b.set_head_ext(h, &f.head_ext, &f.joint_world)?;
            b.poison_outputs(POISON)?;
            let mut enc = self.ctx.begin().map_err(Into::into)?;
            b.encode(&mut enc)?;
            self.ctx.submit(enc).map_err(Into::into)?;
            out.push(b.read_vertices(h)?);
        }
        Ok(out)
    }

    fn run_batch(
        &mut self,
        uploads: &[GnmBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        let mut b = self.backend();
        let mut handles = Vec::new();
        for u in uploads {
            let hs = b.upload_gnm_batch(&u.pack, u.frames.len() as u32)?;
            self.chunks = b.chunk_sizes(hs[0])?;
            handles.push(hs);
        }
        b.poison_outputs(POISON)?;
        // Every upload's instances at once (the backends' parallel batch path).
        for (u, hs) in uploads.iter().zip(&handles) {
            let input = |k: usize| (&u.frames[k].head_ext[..], &u.frames[k].joint_world[..]);
            b.set_head_ext_batch(hs, &input)?;
        }
        let mut enc = self.ctx.begin().map_err(Into::into)?;
        b.encode(&mut enc)?;
        self.ctx.submit(enc).map_err(Into::into)?;
        let read = |hs: &Vec<GnmHandle>| hs.iter().map(|h| b.read_vertices(*h)).collect();
        handles.iter().map(read).collect()
    }
}

fn bits(p: &[PosedVertices]) -> Vec<u32> {
    p.iter()
        .flat_map(|v| v.positions.iter().flatten().map(|x| x.to_bits()))
        .collect()
}

proptest! {
    #![proptest_config(common::config(12))]

    #[test]
    fn random_heads_equal_the_cpu_reference(case in gnm_cases(400, 200)) {
        on_devices!(heads_equal_cpu, &case);
    }

    #[test]
    fn split_bases_equal_the_reference_and_the_unsplit_bits(case in gnm_cases(300, 60), tiles in 1u64..5, extra in 0u64..64) {
        // A limit of about `tiles` 64-vertex tiles of basis (never below one tile's static data).
        // (Never below the joint palette, which is bound whole.)
        let limit = (6 * u64::from(case.shape.coeffs) * 64 * tiles + 4 * extra).max(64 * 32).max(128 * (u64::from(case.shape.joints) + 1));
        on_devices!(split_equals_unsplit, &case, limit);
    }

    #[test]
    fn batches_of_instances_equal_their_reference_poses(cases in gnm_batch_cases(3, 200, 80), split in proptest::option::of(1u64..8)) {
        let uploads: Vec<GnmBatchInput> = cases.iter().map(GnmBatchInput::new).collect();
        // Optionally a binding limit of about `rows` tiles of the largest upload (split + batch).
        let limit = split.map(|rows| {
            let e = cases.iter().map(|c| u64::from(c.shape.coeffs)).max().unwrap_or(1);
            let n = cases.iter().map(|c| u64::from(c.frames)).max().unwrap_or(1);
            (6 * e).max(24 * n) * 64 * rows + n * 128 * 9
        });
        on_devices!(batch_on, limit, &uploads);
    }
}

fn heads_equal_cpu<G: TestDevice>(ctx: &G, case: &GnmCase) -> TestResult {
    check_gnm(&mut Gpu::new(ctx, None), case).map(|_| ())
}

fn split_equals_unsplit<G: TestDevice>(ctx: &G, case: &GnmCase, limit: u64) -> TestResult {
    let mut split = Gpu::new(ctx, Some(limit));
    check_gnm(&mut split, case)?;
    let expected = mien_shaders::data::gnm::plan_gnm_chunks(
        case.shape.vertices,
        case.shape.coeffs,
        1,
        limit.max(256),
    )
    .unwrap();
    if split.chunks.len() != expected.len() {
        return Err(format!(
            "{} chunks, planned {}",
            split.chunks.len(),
            expected.len()
        ));
    }
    let inputs = GnmInputs::new(case);
    let a = split
        .run(&inputs.pack, &inputs.frames)
        .map_err(common::msg)?;
    let b = Gpu::new(ctx, None)
        .run(&inputs.pack, &inputs.frames)
        .map_err(common::msg)?;
    if bits(&a) != bits(&b) {
        return Err("a split basis changed the result bits".into());
    }
    Ok(())
}

fn batch_on<G: TestDevice>(ctx: &G, limit: Option<u64>, uploads: &[GnmBatchInput]) -> TestResult {
    check_batch(&mut Gpu::new(ctx, limit), uploads).map(|_| ())
}

#[test]
fn the_hand_worked_vertex_poses_where_the_arithmetic_says() -> Result<(), TestCaseError> {
    on_devices!(the_hand_worked_vertex_poses_where_the_arithmetic_says_on);
    Ok(())
}

fn the_hand_worked_vertex_poses_where_the_arithmetic_says_on<G: TestDevice>(ctx: &G) -> TestResult {
    let hand = one_vertex_pack();
    let frames = std::slice::from_ref(&hand.frame);
    check_pack(&mut Gpu::new(ctx, None), &hand.pack, frames).unwrap();
    let got = Gpu::new(ctx, None).run(&hand.pack, frames).unwrap();
    for a in 0..3 {
        assert!(
            (got[0].positions[0][a] - hand.expected[a]).abs() <= 1e-6,
            "axis {a}: {} vs {}",
            got[0].positions[0][a],
            hand.expected[a]
        );
    }
    assert_eq!(got[0].normals[0], [0.0; 3]);
    Ok(())
}

#[test]
fn a_big_basis_is_split_into_many_chunks_and_still_equals_the_reference()
-> Result<(), TestCaseError> {
    on_devices!(a_big_basis_is_split_into_many_chunks_and_still_equals_the_reference_on);
    Ok(())
}

fn a_big_basis_is_split_into_many_chunks_and_still_equals_the_reference_on<G: TestDevice>(
    ctx: &G,
) -> TestResult {
    // 383 coefficients (the seed's layout size) × 700 vertices = 1.6 MB of basis under a 160 KiB
    // limit: one 64-vertex tile (147,072 bytes) per chunk, 11 chunks.
    let case = GnmCase {
        shape: GnmShape {
            vertices: 700,
            coeffs: 383,
            regions: 5,
            joints: 6,
            seam: true,
        },
        seed: 3,
        frames: 2,
    };
    let mut h = Gpu::new(ctx, Some(160 << 10));
    let report = check_gnm(&mut h, &case).unwrap();
    assert_eq!(h.chunks.len(), 11, "{:?}", h.chunks);
    eprintln!(
        "383 coefficients: max |diff| {:e} m, {:.3} of the bound",
        report.max_abs, report.max_ratio
    );
    Ok(())
}

#[test]
fn bad_packs_and_frames_get_typed_errors() -> Result<(), TestCaseError> {
    on_devices!(bad_packs_and_frames_get_typed_errors_on);
    Ok(())
}

fn bad_packs_and_frames_get_typed_errors_on<G: TestDevice>(ctx: &G) -> TestResult {
    // One 64-vertex tile of 100 coefficients needs 38,400 bytes of basis; the limit is 512.
    let pack = random_gnm_pack(
        5,
        GnmShape {
            vertices: 4,
            coeffs: 100,
            regions: 2,
            joints: 2,
            seam: false,
        },
    );
    let mut b = GpuGnmBackend::with_binding_limit(ctx, 512);
    let e = b.upload_gnm(&pack).unwrap_err();
    assert_eq!(
        G::limit_error(&e),
        Some((common::OVERRIDE, 512, 38_400)),
        "{e}"
    );
    assert!(e.to_string().contains("64-vertex tile"), "{e}");
    // A palette of 5 joints + bind = 768 bytes under 512.
    let pack = random_gnm_pack(
        5,
        GnmShape {
            vertices: 4,
            coeffs: 2,
            regions: 1,
            joints: 5,
            seam: false,
        },
    );
    let e = b.upload_gnm(&pack).unwrap_err();
    assert_eq!(G::limit_error(&e).map(|o| o.2), Some(768), "{e}");

    let hand = one_vertex_pack();
    let mut b = GpuGnmBackend::new(ctx);
    let h = b.upload_gnm(&hand.pack).unwrap();
    assert_eq!(b.vertex_count(h), 1);
    assert!(b.bytes() >= 4 * hand.pack.basis.len() as u64);
    b.set_head_ext(h, &hand.frame.head_ext, &hand.frame.joint_world)
        .unwrap();
    let e = b
        .set_head_ext(h, &hand.frame.head_ext[..5], &hand.frame.joint_world)
        .unwrap_err();
    assert!(
        matches!(
            e,
            mien_core::Error::Mismatch {
                expected: 6,
                found: 5,
                ..
            }
        ),
        "{e}"
    );
    let mut nan = hand.frame.head_ext.clone();
    nan[0] = f32::NAN;
    assert!(b.set_head_ext(h, &nan, &hand.frame.joint_world).is_err());
    assert!(
        b.set_head_ext(GnmHandle(7), &hand.frame.head_ext, &hand.frame.joint_world)
            .is_err()
    );
    assert!(b.read_vertices(GnmHandle(7)).is_err());
    // The refused frames left the good one in place.
    let mut enc = ctx.begin().unwrap();
    b.encode(&mut enc).unwrap();
    ctx.submit(enc).unwrap();
    let p = b.read_vertices(h).unwrap();
    assert!(
        (p.positions[0][1] - hand.expected[1]).abs() <= 1e-6,
        "{:?}",
        p.positions
    );
    Ok(())
}

#[test]
fn a_batch_of_three_equals_three_cpu_poses_and_instances_do_not_touch_each_other()
-> Result<(), TestCaseError> {
    on_devices!(a_batch_of_three_equals_three_cpu_poses_and_instances_do_not_touch_each_other_on);
    Ok(())
}

fn a_batch_of_three_equals_three_cpu_poses_and_instances_do_not_touch_each_other_on<
    G: TestDevice,
>(
    ctx: &G,
) -> TestResult {
    let case = GnmCase {
        shape: GnmShape {
            vertices: 90,
            coeffs: 21,
            regions: 3,
            joints: 3,
            seam: true,
        },
        seed: 11,
        frames: 3,
    };
    let batch = GnmBatchInput::new(&case);
    // Three different head_ext vectors (and joint worlds) on one shared basis, one encode.
    assert!(batch.frames[0].head_ext != batch.frames[1].head_ext);
    let mut h = Gpu::new(ctx, None);
    check_batch(&mut h, std::slice::from_ref(&batch)).unwrap();
    // Re-pose instance 1 alone: 0 and 2 keep their bits, 1 equals the reference of its new frame.
    let mut b = GpuGnmBackend::new(ctx);
    let hs = b.upload_gnm_batch(&batch.pack, 3).unwrap();
    assert_eq!(hs.len(), 3);
    // The basis is held once: three instances cost less than three single uploads by at least two
    // bases (and every instance has the pack's vertex count).
    let mut single = GpuGnmBackend::new(ctx);
    single.upload_gnm(&batch.pack).unwrap();
    let basis = 4 * batch.pack.basis.len() as u64;
    assert!(
        b.bytes() + 2 * basis <= 3 * single.bytes(),
        "{} vs {}",
        b.bytes(),
        single.bytes()
    );
    assert!(hs.iter().all(|h| b.vertex_count(*h) == 90));
    let pose = |b: &mut GpuGnmBackend<G>| {
        b.poison_outputs(POISON).unwrap();
        let mut enc = ctx.begin().unwrap();
        b.encode(&mut enc).unwrap();
        ctx.submit(enc).unwrap();
        hs.iter()
            .map(|h| b.read_vertices(*h).unwrap())
            .collect::<Vec<_>>()
    };
    for (f, h) in batch.frames.iter().zip(&hs) {
        b.set_head_ext(*h, &f.head_ext, &f.joint_world).unwrap();
    }
    let before = pose(&mut b);
    let other = &batch.frames[2];
    b.set_head_ext(hs[1], &other.head_ext, &other.joint_world)
        .unwrap();
    let after = pose(&mut b);
    assert_eq!(bits(&before[0..1]), bits(&after[0..1]));
    assert_eq!(bits(&before[2..3]), bits(&after[2..3]));
    // Instance 1 now poses frame 2 exactly as instance 2 does (same kernel, same inputs).
    assert_eq!(bits(&after[1..2]), bits(&after[2..3]));
    assert!(b.upload_gnm_batch(&batch.pack, 0).is_err());
    Ok(())
}

#[test]
fn the_ict_sized_pack_equals_the_reference_whole_and_split() -> Result<(), TestCaseError> {
    on_devices!(the_ict_sized_pack_equals_the_reference_whole_and_split_on);
    Ok(())
}

fn the_ict_sized_pack_equals_the_reference_whole_and_split_on<G: TestDevice>(
    ctx: &G,
) -> TestResult {
    // 26,719 vertices × 57 coefficients (9.1 MB of fp16 basis), two frames; then as a batch of 2
    // under a 4 MiB binding limit (3 chunks).
    let case = ict_sized_case(2);
    let mut h = Gpu::new(ctx, None);
    let whole = check_gnm(&mut h, &case).unwrap();
    assert_eq!(h.chunks.len(), 1);
    let mut split = Gpu::new(ctx, Some(4 << 20));
    let r = check_batch(&mut split, &[GnmBatchInput::new(&case)]).unwrap();
    assert!(split.chunks.len() >= 3, "{:?}", split.chunks);
    eprintln!(
        "ICT-sized: max |diff| {:e} m ({:.3} of the bound); split batch {:e} m ({:.3})",
        whole.max_abs, whole.max_ratio, r.max_abs, r.max_ratio
    );
    Ok(())
}

#[test]
fn the_real_ict_pack_driven_by_live_link_equals_the_reference() -> Result<(), TestCaseError> {
    on_devices!(the_real_ict_pack_driven_by_live_link_equals_the_reference_on);
    Ok(())
}

fn the_real_ict_pack_driven_by_live_link_equals_the_reference_on<G: TestDevice>(
    ctx: &G,
) -> TestResult {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let pack = mien_cpu::conformance::gnm_real::ict_pack(&data).unwrap();
    let frames =
        mien_cpu::conformance::gnm_real::livelink_frames(&pack, &data, 1.0, 0.5, 4).unwrap();
    assert!(
        frames.iter().any(|f| f.head_ext.iter().any(|x| *x != 0.0)),
        "the recording drives the head"
    );
    let r = check_pack(&mut Gpu::new(ctx, None), &pack, &frames).unwrap();
    eprintln!(
        "real ICT pack, 4 Live Link frames: max |diff| {:e} m ({:.3} of the bound)",
        r.max_abs, r.max_ratio
    );
    Ok(())
}

/// A batch set at once with one refused input (a NaN gaze) changes nothing: every instance still
/// poses its previous frame; a subset of a batch is set one by one and poses as the reference.
#[test]
fn a_refused_batch_frame_changes_nothing() -> Result<(), TestCaseError> {
    on_devices!(a_refused_batch_frame_changes_nothing_on);
    Ok(())
}

fn a_refused_batch_frame_changes_nothing_on<G: TestDevice>(ctx: &G) -> TestResult {
    let case = GnmCase {
        shape: GnmShape {
            vertices: 130,
            coeffs: 30,
            regions: 3,
            joints: 4,
            seam: true,
        },
        seed: 21,
        // 40 instances: over mien_shaders::data::PARALLEL_MIN, so the parallel path.
        frames: 40,
    };
    let u = GnmBatchInput::new(&case);
    let h = Gpu::new(ctx, None);
    let mut b = h.backend();
    let hs = b.upload_gnm_batch(&u.pack, 40).unwrap();
    let input = |k: usize| (&u.frames[k].head_ext[..], &u.frames[k].joint_world[..]);
    b.set_head_ext_batch(&hs, &input).unwrap();
    let pose = |b: &mut GpuGnmBackend<G>| {
        b.poison_outputs(POISON).unwrap();
        let mut enc = ctx.begin().unwrap();
        b.encode(&mut enc).unwrap();
        ctx.submit(enc).unwrap();
        hs.iter()
            .map(|h| b.read_vertices(*h).unwrap())
            .collect::<Vec<_>>()
    };
    let before = pose(&mut b);
    let mut bad = u.frames[3].head_ext.clone();
    let gaze = bad.len() - 1;
    bad[gaze] = f32::NAN;
    let refused = |k: usize| {
        if k == 7 {
            (&bad[..], &u.frames[0].joint_world[..])
        } else {
            (
                &u.frames[39 - k].head_ext[..],
                &u.frames[39 - k].joint_world[..],
            )
        }
    };
    assert!(b.set_head_ext_batch(&hs, &refused).is_err());
    assert_eq!(bits(&pose(&mut b)), bits(&before));
    // Instances 2..5 only (not a whole batch): set one by one, each equal to the reference of the
    // frame it was given.
    let swapped = |k: usize| {
        (
            &u.frames[39 - k].head_ext[..],
            &u.frames[39 - k].joint_world[..],
        )
    };
    b.set_head_ext_batch(&hs[2..5], &swapped).unwrap();
    let after = pose(&mut b);
    assert_eq!(bits(&after[5..]), bits(&before[5..]));
    for (k, lifted) in after.iter().enumerate().take(5).skip(2) {
        let want = GnmInputs {
            pack: u.pack.clone(),
            frames: vec![u.frames[39 - (k - 2)].clone()],
        };
        let r = mien_cpu::conformance::gnm::gnm_reference(&want.pack, &want.frames).unwrap();
        let got = &lifted.positions;
        let max = got
            .iter()
            .zip(&r[0])
            .flat_map(|(a, b)| (0..3).map(move |i| (a[i] - b[i]).abs()))
            .fold(0.0f32, f32::max);
        assert!(max < 1e-3, "instance {k}: {max}");
    }
    Ok(())
}
