//! N characters sharing one rig (`RigBackend::upload_batch`), on every device layer (wgpu, and
//! Vulkan with validation): every instance of a batch equals a separate CPU reference pose of its
//! own controls within the conformance bound, also with the rig split by a small binding limit;
//! re-posing one instance leaves the others' bits alone; the rig's arrays are held once
//! (`bytes()` grows by the per-instance arrays only); lifting instance k of a batch (rig or linear
//! head) writes the same sink bits as lifting a single upload posed the same way; oversized
//! batches get typed errors naming the array.

mod common;

use common::{OVERRIDE, TestDevice, TestResult};
use mien_core::gnm::GnmBackend;
use mien_core::lift::{DebugLiftParams, DebugShading};
use mien_core::rig::{PosedVertices, RigBackend, RigControls, RigData};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_cpu::conformance::POISON;
use mien_cpu::conformance::gnm::GnmCase;
use mien_cpu::conformance::gnm_batch::GnmBatchInput;
use mien_cpu::conformance::rig_batch::{
    RigBatchHarness, RigBatchInput, check_rig_batch, gpu_batch_extra_bytes, many_active_targets,
    rig_batch_cases,
};
use mien_gpu::{GpuDebugLift, GpuGnmBackend, GpuRigBackend, GpuSplatSink, PosedPart};
use proptest::prelude::*;

fn backend<G: TestDevice>(ctx: &G, limit: Option<u64>) -> GpuRigBackend<G> {
    match limit {
        Some(l) => GpuRigBackend::with_binding_limit(ctx, l),
        None => GpuRigBackend::new(ctx),
    }
}

fn submit<G: TestDevice>(ctx: &G, b: &mut GpuRigBackend<G>) {
    let mut enc = ctx.begin().unwrap();
    b.encode(&mut enc).unwrap();
    ctx.submit(enc).unwrap();
}

struct Gpu<'a, G: TestDevice> {
    ctx: &'a G,
    limit: Option<u64>,
}

impl<G: TestDevice> RigBatchHarness for Gpu<'_, G> {
    fn run_batch(
        &mut self,
        uploads: &[RigBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        let mut b = backend(self.ctx, self.limit);
        let mut handles = Vec::new();
        for u in uploads {
            handles.push(b.upload_batch(&u.rig, u.controls.len() as u32)?);
        }
        b.poison_outputs(POISON)?;
        for (u, hs) in uploads.iter().zip(&handles) {
            for (c, h) in u.controls.iter().zip(hs) {
                b.set_controls(*h, c)?;
            }
        }
        let mut enc = self.ctx.begin().map_err(Into::into)?;
        b.encode(&mut enc)?;
        self.ctx.submit(enc).map_err(Into::into)?;
        let read = |hs: &Vec<_>| hs.iter().map(|h| b.read_vertices(*h)).collect();
        handles.iter().map(read).collect()
    }
}

fn bits(p: &PosedVertices) -> Vec<u32> {
    p.positions
        .iter()
        .chain(&p.normals)
        .flatten()
        .map(|x| x.to_bits())
        .collect()
}

/// A binding limit near `rows` but never below the batch's per-instance arrays.
fn limit_for(uploads: &[RigBatchInput], limit: u64) -> u64 {
    uploads
        .iter()
        .map(|u| {
            let n = u.controls.len() as u64;
            let weights = n.div_ceil(8) * 8 * u64::from(u.rig.weight_count) * 4;
            // The morph kernel's slot table: 16 bytes per weight slot and 64-vertex tile.
            let tile = 16 * u64::from(u.rig.weight_count);
            (n * u.rig.palette.len() as u64 * 128)
                .max(weights)
                .max(tile)
        })
        .fold(limit, u64::max)
}

/// Lift `parts` (of `nv` vertices, posed by an earlier submission) into `range` of a fresh
/// poisoned sink of `capacity` slots, and read the whole sink.
fn lift_parts<G: TestDevice>(
    ctx: &G,
    nv: u32,
    parts: &[PosedPart<'_, G>],
    range: SlotRange,
    capacity: u32,
) -> SplatBuffers {
    let mut sink = GpuSplatSink::new(ctx, capacity).unwrap();
    sink.fill(POISON).unwrap();
    sink.allocate(range.offset).unwrap();
    assert_eq!(sink.allocate(range.count).unwrap(), range);
    let mut p = DebugLiftParams::new(range, nv);
    p.shading = DebugShading::Normal;
    p.transform = [
        0.9, 0.1, 0.0, 0.2, -0.1, 1.1, 0.05, 0.0, 0.0, 0.2, 0.8, -0.3,
    ];
    let mut lift = GpuDebugLift::from_parts(ctx, nv, parts, &sink, p).unwrap();
    let mut enc = ctx.begin().unwrap();
    lift.record(&mut enc, &mut sink).unwrap();
    ctx.submit(enc).unwrap();
    sink.read(SlotRange {
        offset: 0,
        count: capacity,
    })
    .unwrap()
}

fn sink_bits(s: &SplatBuffers) -> Vec<u32> {
    let v = s.center.iter().chain(&s.cov_a).chain(&s.cov_b).flatten();
    v.map(|x| x.to_bits())
        .chain(s.color.iter().copied())
        .collect()
}

/// Lift instance `k` of a batch of `controls.len()` and a single upload posed with `controls[k]`.
fn lift_instance_and_single<G: TestDevice>(
    ctx: &G,
    rig: &RigData,
    controls: &[RigControls],
    k: usize,
    limit: Option<u64>,
) -> (SplatBuffers, SplatBuffers) {
    let nv = rig.vertex_count() as u32;
    let range = SlotRange {
        offset: 5,
        count: nv + 7,
    };
    let mut batch = backend(ctx, limit);
    let hs = batch.upload_batch(rig, controls.len() as u32).unwrap();
    for (h, c) in hs.iter().zip(controls) {
        batch.set_controls(*h, c).unwrap();
    }
    batch.poison_outputs(POISON).unwrap();
    let mut single = backend(ctx, limit);
    let h1 = single.upload(rig).unwrap();
    single.set_controls(h1, &controls[k]).unwrap();
    single.poison_outputs(POISON).unwrap();
    // Encode outside the parts' borrow: the staged controls are written at encode time.
    let mut enc = ctx.begin().unwrap();
    batch.encode(&mut enc).unwrap();
    single.encode(&mut enc).unwrap();
    ctx.submit(enc).unwrap();
    let a = lift_parts(ctx, nv, &batch.posed_parts(hs[k]).unwrap(), range, nv + 20);
    let b = lift_parts(ctx, nv, &single.posed_parts(h1).unwrap(), range, nv + 20);
    (a, b)
}

proptest! {
    #![proptest_config(common::config(10))]

    #[test]
    fn batches_of_instances_equal_separate_cpu_poses(uploads in rig_batch_cases(3, 1500, 20), split in proptest::option::of(3072u64..8192)) {
        let limit = split.map(|l| limit_for(&uploads, l));
        on_devices!(batch_equals_cpu, limit, &uploads);
    }

    #[test]
    fn lifting_instance_k_equals_lifting_a_single_upload(uploads in rig_batch_cases(1, 600, 20), k in 0usize..20, split: bool) {
        let u = &uploads[0];
        let k = k % u.controls.len();
        let limit = split.then(|| limit_for(&uploads, 3072));
        on_devices!(instance_lifts_like_single, u, k, limit);
    }
}

fn batch_equals_cpu<G: TestDevice>(
    ctx: &G,
    limit: Option<u64>,
    uploads: &[RigBatchInput],
) -> TestResult {
    check_rig_batch(&mut Gpu { ctx, limit }, uploads)
}

fn instance_lifts_like_single<G: TestDevice>(
    ctx: &G,
    u: &RigBatchInput,
    k: usize,
    limit: Option<u64>,
) -> TestResult {
    let (a, b) = lift_instance_and_single(ctx, &u.rig, &u.controls, k, limit);
    if a.color[5] == POISON {
        return Err("the lift wrote nothing".into());
    }
    if sink_bits(&a) != sink_bits(&b) {
        return Err(format!("instance {k} lifted differently"));
    }
    Ok(())
}

fn shape(vertices: u32, targets: u32, joints: u32) -> RigShape {
    RigShape {
        vertices,
        targets,
        density: 0.3,
        joints,
    }
}

#[test]
fn reposing_one_instance_leaves_the_others_bits() -> Result<(), TestCaseError> {
    on_devices!(reposing_one_instance_leaves_the_others_bits_on);
    Ok(())
}

fn reposing_one_instance_leaves_the_others_bits_on<G: TestDevice>(ctx: &G) -> TestResult {
    let rig = random_rig(7, shape(700, 20, 6));
    let controls: Vec<_> = (0..3).map(|i| random_controls(100 + i, &rig)).collect();
    let mut b = GpuRigBackend::new(ctx);
    let hs = b.upload_batch(&rig, 3).unwrap();
    for (h, c) in hs.iter().zip(&controls) {
        b.set_controls(*h, c).unwrap();
    }
    let pose = |b: &mut GpuRigBackend<G>| {
        b.poison_outputs(POISON).unwrap();
        submit(ctx, b);
        hs.iter()
            .map(|h| bits(&b.read_vertices(*h).unwrap()))
            .collect::<Vec<_>>()
    };
    let before = pose(&mut b);
    assert!(before[0] != before[1] && before[1] != before[2]);
    b.set_controls(hs[1], &controls[2]).unwrap();
    let after = pose(&mut b);
    assert_eq!(before[0], after[0]);
    assert_eq!(before[2], after[2]);
    // Instance 1 now poses instance 2's controls: the same kernel on the same inputs.
    assert_eq!(after[1], after[2]);
    Ok(())
}

#[test]
fn the_rig_is_held_once() -> Result<(), TestCaseError> {
    on_devices!(the_rig_is_held_once_on);
    Ok(())
}

fn the_rig_is_held_once_on<G: TestDevice>(ctx: &G) -> TestResult {
    for (seed, s) in [(1, shape(900, 30, 8)), (2, shape(50, 0, 1))] {
        let rig = random_rig(seed, s);
        let one = {
            let mut b = GpuRigBackend::new(ctx);
            b.upload_batch(&rig, 1).unwrap();
            b.bytes()
        };
        for n in [2u32, 4, 9, 17] {
            let mut b = GpuRigBackend::new(ctx);
            let hs = b.upload_batch(&rig, n).unwrap();
            assert_eq!(hs.len(), n as usize);
            assert!(hs.iter().all(|h| b.vertex_count(*h) == s.vertices));
            assert_eq!(
                b.bytes() - one,
                gpu_batch_extra_bytes(&rig, n),
                "{n} instances of {s:?}"
            );
        }
    }
    Ok(())
}

#[test]
fn a_head_batch_instance_lifts_like_a_single_head() -> Result<(), TestCaseError> {
    on_devices!(a_head_batch_instance_lifts_like_a_single_head_on);
    Ok(())
}

fn a_head_batch_instance_lifts_like_a_single_head_on<G: TestDevice>(ctx: &G) -> TestResult {
    let case = GnmCase {
        shape: mien_core::testing::gnm::GnmShape {
            vertices: 300,
            coeffs: 21,
            regions: 3,
            joints: 3,
            seam: true,
        },
        seed: 5,
        frames: 3,
    };
    let batch = GnmBatchInput::new(&case);
    // A limit that splits the head into several chunks.
    let mut b = GpuGnmBackend::with_binding_limit(ctx, 8 << 10);
    let hs = b.upload_gnm_batch(&batch.pack, 3).unwrap();
    for (f, h) in batch.frames.iter().zip(&hs) {
        b.set_head_ext(*h, &f.head_ext, &f.joint_world).unwrap();
    }
    let mut single = GpuGnmBackend::with_binding_limit(ctx, 8 << 10);
    let h1 = single.upload_gnm(&batch.pack).unwrap();
    let f = &batch.frames[2];
    single
        .set_head_ext(h1, &f.head_ext, &f.joint_world)
        .unwrap();
    let mut enc = ctx.begin().unwrap();
    b.encode(&mut enc).unwrap();
    single.encode(&mut enc).unwrap();
    ctx.submit(enc).unwrap();
    assert!(b.chunk_sizes(hs[2]).unwrap().len() > 1);
    let range = SlotRange {
        offset: 3,
        count: 310,
    };
    let lifted = |parts: &[PosedPart<'_, G>]| lift_parts(ctx, 300, parts, range, 320);
    let a = lifted(&b.posed_parts(hs[2]).unwrap());
    let want = lifted(&single.posed_parts(h1).unwrap());
    assert_eq!(sink_bits(&a), sink_bits(&want));
    let first = lifted(&b.posed_parts(hs[0]).unwrap());
    assert_ne!(
        sink_bits(&first),
        sink_bits(&want),
        "instance 0 has its own frame"
    );
    Ok(())
}

#[test]
fn oversized_batches_get_typed_errors_naming_the_array() -> Result<(), TestCaseError> {
    on_devices!(oversized_batches_get_typed_errors_naming_the_array_on);
    Ok(())
}

fn oversized_batches_get_typed_errors_naming_the_array_on<G: TestDevice>(ctx: &G) -> TestResult {
    // 4 joints × 128 bytes = 512 bytes of palette per instance; 9 instances need 4608 > 4096.
    let rig = random_rig(3, shape(20, 5, 4));
    let mut b = GpuRigBackend::with_binding_limit(ctx, 4096);
    assert_eq!(b.upload_batch(&rig, 8).unwrap().len(), 8);
    let e = b.upload_batch(&rig, 9).unwrap_err();
    let caps = ctx.caps();
    assert_eq!(G::limit_error(&e), Some((OVERRIDE, 4096, 4608)), "{e}");
    assert!(
        e.to_string()
            .contains("joint palette array of 9 instance(s)"),
        "{e}"
    );
    // More instances than one dispatch holds along z (checked before anything is allocated).
    let max = caps.max_groups_z;
    let e = GpuRigBackend::new(ctx)
        .upload_batch(&rig, max + 1)
        .unwrap_err();
    assert_eq!(
        G::limit_error(&e),
        Some((caps.max_groups_z_name, u64::from(max), u64::from(max) + 1)),
        "{e}"
    );
    assert!(b.upload_batch(&rig, 0).is_err());
    Ok(())
}

/// `set_controls_batch` over a whole batch (the parallel path) poses every instance as the same
/// controls set one by one; over a subset (the one-by-one path) too; a refusal in the batch path
/// changes nothing; bad arguments are refused.
#[test]
fn setting_a_batch_at_once_poses_as_setting_each() -> Result<(), TestCaseError> {
    on_devices!(setting_a_batch_at_once_poses_as_setting_each_on);
    Ok(())
}

fn setting_a_batch_at_once_poses_as_setting_each_on<G: TestDevice>(ctx: &G) -> TestResult {
    for (seed, s) in [(3u64, shape(400, 25, 6)), (4, shape(90, 0, 3))] {
        let rig = random_rig(seed, s);
        // 40 instances: over mien_shaders::data::PARALLEL_MIN, so the parallel path.
        let n = 40usize;
        let ring: Vec<_> = (0..5)
            .map(|i| random_controls(seed * 10 + i, &rig))
            .collect();
        let which = |k: usize| (k * 3) % ring.len();
        let pose = |b: &mut GpuRigBackend<G>, hs: &[mien_core::rig::RigHandle]| {
            b.poison_outputs(POISON).unwrap();
            submit(ctx, b);
            hs.iter()
                .map(|h| bits(&b.read_vertices(*h).unwrap()))
                .collect::<Vec<_>>()
        };
        let mut one = GpuRigBackend::new(ctx);
        let h1 = one.upload_batch(&rig, n as u32).unwrap();
        let mut want_stats = Vec::new();
        for (k, h) in h1.iter().enumerate() {
            want_stats.push(one.set_controls(*h, &ring[which(k)]).unwrap());
        }
        let want = pose(&mut one, &h1);
        let mut all = GpuRigBackend::new(ctx);
        let h2 = all.upload_batch(&rig, n as u32).unwrap();
        let mut stats = vec![Default::default(); n];
        all.set_controls_batch(&h2, &ring, &which, &mut stats)
            .unwrap();
        assert_eq!(stats, want_stats);
        assert_eq!(pose(&mut all, &h2), want);
        // A subset goes one by one: same result.
        let mut some = vec![Default::default(); 2];
        all.set_controls_batch(&h2[3..5], &ring, &|_| 0, &mut some)
            .unwrap();
        let got = pose(&mut all, &h2);
        one.set_controls(h1[3], &ring[0]).unwrap();
        one.set_controls(h1[4], &ring[0]).unwrap();
        assert_eq!(got, pose(&mut one, &h1));
        // One bad control set in the batch: refused, nothing changes.
        let mut bad = ring.clone();
        bad[1].palette[0] = glam::Mat4::from_cols_array(&[f32::NAN; 16]);
        let e = all.set_controls_batch(&h2, &bad, &|k| k % 2, &mut stats);
        assert!(e.is_err(), "a NaN palette was accepted");
        assert_eq!(pose(&mut all, &h2), got);
        // Bad arguments.
        assert!(
            all.set_controls_batch(&h2, &ring, &which, &mut stats[..3])
                .is_err()
        );
        assert!(
            all.set_controls_batch(&h2, &ring, &|k| k, &mut stats)
                .is_err()
        );
    }
    Ok(())
}

/// One batched lift of every instance (`from_parts_batch`: z = instance, the range moved by a
/// stride per instance) writes the same sink bits as one lift per instance; batched lifts whose
/// ranges would overlap or leave the sink are refused.
#[test]
fn a_batched_lift_equals_one_lift_per_instance() -> Result<(), TestCaseError> {
    on_devices!(a_batched_lift_equals_one_lift_per_instance_on);
    Ok(())
}

fn a_batched_lift_equals_one_lift_per_instance_on<G: TestDevice>(ctx: &G) -> TestResult {
    let rig = random_rig(12, shape(350, 10, 4));
    let nv = rig.vertex_count() as u32;
    let n = 6u32;
    let mut b = GpuRigBackend::new(ctx);
    let hs = b.upload_batch(&rig, n).unwrap();
    for (i, h) in hs.iter().enumerate() {
        b.set_controls(*h, &random_controls(60 + i as u64, &rig))
            .unwrap();
    }
    submit(ctx, &mut b);
    let stride = nv + 5;
    let params = |range| {
        let mut p = DebugLiftParams::new(range, nv);
        p.shading = DebugShading::Normal;
        p
    };
    let run = |batched: bool| {
        let mut sink = GpuSplatSink::new(ctx, stride * n + 2).unwrap();
        sink.fill(POISON).unwrap();
        let ranges: Vec<SlotRange> = (0..n).map(|_| sink.allocate(stride).unwrap()).collect();
        let mut lifts: Vec<GpuDebugLift<G>> = if batched {
            let parts = b.posed_parts(hs[0]).unwrap();
            let p = params(ranges[0]);
            vec![GpuDebugLift::from_parts_batch(ctx, nv, &parts, n, stride, &sink, p).unwrap()]
        } else {
            hs.iter()
                .zip(&ranges)
                .map(|(h, r)| {
                    let parts = b.posed_parts(*h).unwrap();
                    GpuDebugLift::from_parts(ctx, nv, &parts, &sink, params(*r)).unwrap()
                })
                .collect()
        };
        let mut enc = ctx.begin().unwrap();
        for l in &mut lifts {
            l.record(&mut enc, &mut sink).unwrap();
        }
        ctx.submit(enc).unwrap();
        let all = SlotRange {
            offset: 0,
            count: sink.capacity(),
        };
        sink_bits(&sink.read(all).unwrap())
    };
    let one_each = run(false);
    assert!(one_each.iter().any(|x| *x != POISON), "nothing was lifted");
    assert_eq!(run(true), one_each);
    let mut sink = GpuSplatSink::new(ctx, stride).unwrap();
    let range = sink.allocate(stride).unwrap();
    let parts = b.posed_parts(hs[0]).unwrap();
    let batch = |n: u32, s: u32| {
        GpuDebugLift::from_parts_batch(ctx, nv, &parts, n, s, &sink, params(range))
    };
    let e = batch(2, stride - 1).unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
    let e = batch(2, stride).unwrap_err();
    assert!(e.to_string().contains("past the sink"), "{e}");
    assert!(batch(0, stride).is_err());
    Ok(())
}

/// A block of 8 instances whose active slots (the union of their non-zero weights) number over 64:
/// the morph kernel stages them 64 at a time, and every instance still equals its CPU pose — whole
/// and split into chunks by a small binding limit (several tiles, partial last tiles).
#[test]
fn blocks_with_more_than_64_active_targets_pose_like_the_cpu() -> Result<(), TestCaseError> {
    on_devices!(blocks_with_more_than_64_active_targets_pose_like_the_cpu_on);
    Ok(())
}

fn blocks_with_more_than_64_active_targets_pose_like_the_cpu_on<G: TestDevice>(
    ctx: &G,
) -> TestResult {
    let uploads = [many_active_targets()];
    for limit in [None, Some(limit_for(&uploads, 20_000))] {
        check_rig_batch(&mut Gpu { ctx, limit }, &uploads).unwrap();
    }
    Ok(())
}

#[test]
fn a_rig_over_the_limits_is_refused_with_the_numbers() -> Result<(), TestCaseError> {
    on_devices!(a_rig_over_the_limits_is_refused_with_the_numbers_on);
    Ok(())
}

fn a_rig_over_the_limits_is_refused_with_the_numbers_on<G: TestDevice>(ctx: &G) -> TestResult {
    // 40 joints × 128 bytes = 5120 bytes of palette under a forced 4096-byte binding limit.
    let rig = random_rig(1, shape(50, 3, 40));
    let mut b = GpuRigBackend::with_binding_limit(ctx, 4096);
    let e = b.upload(&rig).unwrap_err();
    let caps = ctx.caps();
    assert_eq!(G::limit_error(&e), Some((OVERRIDE, 4096, 5120)), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("palette") && m.contains("5120") && m.contains("4096"),
        "{m}"
    );
    // A sink larger than one buffer is split into pages; one whose unit (a character's slots)
    // is larger than one buffer is refused, naming the smaller of the two limits.
    let buffer = caps.max_buffer.min(caps.binding_limit);
    if buffer < 16 * u64::from(u32::MAX) {
        let unit = u32::try_from(buffer / 16 + 1).unwrap_or(u32::MAX);
        let e = GpuSplatSink::paged(ctx, unit, unit).unwrap_err();
        let name = if caps.max_buffer <= caps.binding_limit {
            caps.max_buffer_name
        } else {
            caps.binding_limit_name
        };
        assert_eq!(G::limit_error(&e).map(|o| o.0), Some(name), "{e}");
    }
    Ok(())
}

/// A lift is refused over slots its sink never allocated, and after its range was freed (a freed
/// slot must never be drawn, and may have a new owner); the device layer refuses byte ranges
/// outside their buffers and per-frame writes into buffers that are not frame buffers.
#[test]
fn freed_slots_and_out_of_range_bytes_are_refused() -> Result<(), TestCaseError> {
    on_devices!(freed_slots_and_out_of_range_bytes_are_refused_on);
    Ok(())
}

fn freed_slots_and_out_of_range_bytes_are_refused_on<G: TestDevice>(ctx: &G) -> TestResult {
    let rig = random_rig(4, shape(120, 4, 2));
    let nv = rig.vertex_count() as u32;
    let mut b = GpuRigBackend::new(ctx);
    let h = b.upload(&rig).unwrap();
    let mut sink = GpuSplatSink::new(ctx, 2 * nv).unwrap();
    let params = |range| DebugLiftParams::new(range, nv);
    let never = SlotRange {
        offset: nv,
        count: nv,
    };
    let e = GpuDebugLift::new(&b, h, &sink, params(never)).unwrap_err();
    assert!(
        e.to_string().contains("not (or no longer) allocated"),
        "{e}"
    );
    let range = sink.allocate(nv).unwrap();
    let mut lift = GpuDebugLift::new(&b, h, &sink, params(range)).unwrap();
    let mut enc = ctx.begin().unwrap();
    b.encode(&mut enc).unwrap();
    lift.record(&mut enc, &mut sink).unwrap();
    ctx.submit(enc).unwrap();
    sink.free(range).unwrap();
    let mut enc = ctx.begin().unwrap();
    let e = lift.record(&mut enc, &mut sink).unwrap_err();
    assert!(e.to_string().contains("no longer"), "{e}");
    drop(enc);
    let cleared = sink.read(range).unwrap();
    assert!(
        cleared.color.iter().all(|c| *c == 0),
        "freed slots are cleared"
    );

    let frame = ctx
        .frame_buffer("a test frame buffer", mien_gpu::Usage::Storage, &[0u8; 16])
        .unwrap();
    let fixed = ctx
        .upload("a test upload", mien_gpu::Usage::Storage, &[0u8; 16])
        .unwrap();
    let range_err = |r: Result<(), G::Error>| {
        let m = r.expect_err("refused").to_string();
        assert!(m.contains("outside a buffer of 16 bytes"), "{m}");
    };
    range_err(ctx.write(&frame, 8, &[1; 12]));
    range_err(ctx.fill(&[(&frame, 12, 8)], 7));
    range_err(ctx.read("a test read", &[(&frame, 8, 64)]).map(|_| ()));
    range_err(
        ctx.read("a test read", &[(&frame, u64::MAX, 2)])
            .map(|_| ()),
    );
    let mut enc = ctx.begin().unwrap();
    range_err(ctx.copy(&mut enc, &frame, &fixed, 32));
    drop(enc);
    assert!(
        ctx.write(&fixed, 0, &[1; 4]).is_err(),
        "an upload is not a frame buffer"
    );
    // In range, every call works.
    ctx.write(&frame, 8, &[5; 8]).unwrap();
    let got = ctx.read("a test read", &[(&frame, 8, 8)]).unwrap();
    assert_eq!(got[0], vec![5; 8]);
    ctx.check().map_err(|e| e.to_string())?;
    Ok(())
}
