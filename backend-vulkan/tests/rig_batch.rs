//! N characters sharing one rig on Vulkan (`RigBackend::upload_batch`) — the same checks as the
//! wgpu backend's `rig_batch.rs`: every instance equals a separate CPU reference pose of its own
//! controls within the conformance bound (also split by a small binding limit); re-posing one
//! instance leaves the others' bits alone; the rig's arrays are held once; lifting instance k of a
//! batch (rig or linear head) writes the same sink bits as lifting a single upload posed the same
//! way; oversized batches get typed errors. The Khronos validation layer is on: any message fails.
//!
//! Without a Vulkan device these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1`.

use mien_core::gnm::GnmBackend;
use mien_core::lift::{DebugLiftParams, DebugShading};
use mien_core::rig::{PosedVertices, RigBackend};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_cpu::conformance::POISON;
use mien_cpu::conformance::gnm::GnmCase;
use mien_cpu::conformance::gnm_batch::GnmBatchInput;
use mien_cpu::conformance::rig_batch::{
    RigBatchHarness, RigBatchInput, check_rig_batch, gpu_batch_extra_bytes, many_active_targets,
    rig_batch_cases,
};
use mien_vulkan::{
    ContextOptions, Error, PosedPart, VulkanContext, VulkanDebugLift, VulkanEncoder,
    VulkanGnmBackend, VulkanRigBackend, VulkanSplatSink,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: std::env::var("MIEN_PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(cases),
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
            Ok(c) => Some(c),
            Err(e) if mien_vulkan::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
            Err(e) => {
                eprintln!("notice: skipping Vulkan batch tests: {e}");
                None
            }
        }
    })
    .clone()
}

/// Panic on any validation message since the last call.
fn no_validation_messages(ctx: &VulkanContext) {
    let messages = ctx.take_validation_messages();
    assert!(
        messages.is_empty(),
        "validation layer: {}",
        messages.join("\n")
    );
}

fn backend(ctx: &VulkanContext, limit: Option<u64>) -> VulkanRigBackend {
    match limit {
        Some(l) => VulkanRigBackend::with_binding_limit(ctx, l),
        None => VulkanRigBackend::new(ctx),
    }
}

struct Vulkan {
    ctx: VulkanContext,
    limit: Option<u64>,
}

impl RigBatchHarness for Vulkan {
    fn run_batch(
        &mut self,
        uploads: &[RigBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>> {
        let mut b = backend(&self.ctx, self.limit);
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
        let mut enc = self.ctx.begin()?;
        b.encode(&mut enc)?;
        self.ctx.submit(enc)?;
        let read = |hs: &Vec<_>| hs.iter().map(|h| b.read_vertices(*h)).collect();
        handles.iter().map(read).collect()
    }
}

fn bits(p: &PosedVertices) -> Vec<u32> {
    let all = p.positions.iter().chain(&p.normals).flatten();
    all.map(|x| x.to_bits()).collect()
}

/// A binding limit near `limit` but never below the batch's palettes or blocked weights.
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

fn sink_bits(s: &SplatBuffers) -> Vec<u32> {
    let v = s.center.iter().chain(&s.cov_a).chain(&s.cov_b).flatten();
    v.map(|x| x.to_bits())
        .chain(s.color.iter().copied())
        .collect()
}

/// A lift of `parts` (`nv` vertices) into `range` of a fresh poisoned sink of `capacity` slots.
fn lift_for(
    ctx: &VulkanContext,
    nv: u32,
    parts: &[PosedPart<'_>],
    range: SlotRange,
    capacity: u32,
) -> (VulkanDebugLift, VulkanSplatSink) {
    let mut sink = VulkanSplatSink::new(ctx, capacity).unwrap();
    sink.fill(POISON).unwrap();
    sink.allocate(range.offset).unwrap();
    assert_eq!(sink.allocate(range.count).unwrap(), range);
    let mut p = DebugLiftParams::new(range, nv);
    p.shading = DebugShading::Normal;
    p.transform = [
        0.9, 0.1, 0.0, 0.2, -0.1, 1.1, 0.05, 0.0, 0.0, 0.2, 0.8, -0.3,
    ];
    let lift = VulkanDebugLift::from_parts(ctx, nv, parts, &sink, p).unwrap();
    (lift, sink)
}

/// Record `pose` then the lift into one command buffer, submit, and read the whole sink.
fn pose_and_lift(
    ctx: &VulkanContext,
    pose: impl FnOnce(&mut VulkanEncoder),
    (mut lift, mut sink): (VulkanDebugLift, VulkanSplatSink),
) -> SplatBuffers {
    let mut enc = ctx.begin().unwrap();
    pose(&mut enc);
    lift.record(&mut enc, &mut sink).unwrap();
    ctx.submit(enc).unwrap();
    let all = SlotRange {
        offset: 0,
        count: sink.capacity(),
    };
    sink.read(all).unwrap()
}

proptest! {
    #![proptest_config(config(10))]

    #[test]
    fn batches_of_instances_equal_separate_cpu_poses(uploads in rig_batch_cases(3, 1500, 20), split in proptest::option::of(3072u64..8192)) {
        let Some(ctx) = context() else { return Ok(()) };
        let limit = split.map(|l| limit_for(&uploads, l));
        let r = check_rig_batch(&mut Vulkan { ctx: ctx.clone(), limit }, &uploads);
        no_validation_messages(&ctx);
        r.map_err(TestCaseError::fail)?;
    }

    #[test]
    fn lifting_instance_k_equals_lifting_a_single_upload(uploads in rig_batch_cases(1, 600, 20), k in 0usize..20, split: bool) {
        let Some(ctx) = context() else { return Ok(()) };
        let u = &uploads[0];
        let k = k % u.controls.len();
        let limit = split.then(|| limit_for(&uploads, 3072));
        let nv = u.rig.vertex_count() as u32;
        let range = SlotRange { offset: 5, count: nv + 7 };
        let mut batch = backend(&ctx, limit);
        let hs = batch.upload_batch(&u.rig, u.controls.len() as u32).unwrap();
        for (h, c) in hs.iter().zip(&u.controls) {
            batch.set_controls(*h, c).unwrap();
        }
        batch.poison_outputs(POISON).unwrap();
        let mut single = backend(&ctx, limit);
        let h1 = single.upload(&u.rig).unwrap();
        single.set_controls(h1, &u.controls[k]).unwrap();
        single.poison_outputs(POISON).unwrap();
        let la = lift_for(&ctx, nv, &batch.posed_parts(hs[k]).unwrap(), range, nv + 20);
        let lb = lift_for(&ctx, nv, &single.posed_parts(h1).unwrap(), range, nv + 20);
        let a = pose_and_lift(&ctx, |e| batch.encode(e).unwrap(), la);
        let b = pose_and_lift(&ctx, |e| single.encode(e).unwrap(), lb);
        drop((batch, single));
        no_validation_messages(&ctx);
        prop_assert!(a.color[5] != POISON, "the lift wrote nothing");
        prop_assert!(sink_bits(&a) == sink_bits(&b), "instance {} lifted differently", k);
    }
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
fn reposing_one_instance_leaves_the_others_bits() {
    let Some(ctx) = context() else { return };
    let rig = random_rig(7, shape(700, 20, 6));
    let controls: Vec<_> = (0..3).map(|i| random_controls(100 + i, &rig)).collect();
    let mut b = VulkanRigBackend::new(&ctx);
    let hs = b.upload_batch(&rig, 3).unwrap();
    for (h, c) in hs.iter().zip(&controls) {
        b.set_controls(*h, c).unwrap();
    }
    let pose = |b: &mut VulkanRigBackend| {
        b.poison_outputs(POISON).unwrap();
        let mut enc = ctx.begin().unwrap();
        b.encode(&mut enc).unwrap();
        ctx.submit(enc).unwrap();
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
    assert_eq!(after[1], after[2]);
    drop(b);
    no_validation_messages(&ctx);
}

#[test]
fn the_rig_is_held_once() {
    let Some(ctx) = context() else { return };
    for (seed, s) in [(1, shape(900, 30, 8)), (2, shape(50, 0, 1))] {
        let rig = random_rig(seed, s);
        let one = {
            let mut b = VulkanRigBackend::new(&ctx);
            b.upload_batch(&rig, 1).unwrap();
            b.bytes()
        };
        for n in [2u32, 4, 9, 17] {
            let mut b = VulkanRigBackend::new(&ctx);
            let hs = b.upload_batch(&rig, n).unwrap();
            assert!(hs.iter().all(|h| b.vertex_count(*h) == s.vertices));
            assert_eq!(
                b.bytes() - one,
                gpu_batch_extra_bytes(&rig, n),
                "{n} instances of {s:?}"
            );
        }
    }
    no_validation_messages(&ctx);
}

#[test]
fn a_head_batch_instance_lifts_like_a_single_head() {
    let Some(ctx) = context() else { return };
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
    let mut b = VulkanGnmBackend::with_binding_limit(&ctx, 8 << 10);
    let hs = b.upload_gnm_batch(&batch.pack, 3).unwrap();
    for (f, h) in batch.frames.iter().zip(&hs) {
        b.set_head_ext(*h, &f.head_ext, &f.joint_world).unwrap();
    }
    let mut single = VulkanGnmBackend::with_binding_limit(&ctx, 8 << 10);
    let h1 = single.upload_gnm(&batch.pack).unwrap();
    let f = &batch.frames[2];
    single
        .set_head_ext(h1, &f.head_ext, &f.joint_world)
        .unwrap();
    assert!(b.chunk_sizes(hs[2]).unwrap().len() > 1);
    let range = SlotRange {
        offset: 3,
        count: 310,
    };
    let l2 = lift_for(&ctx, 300, &b.posed_parts(hs[2]).unwrap(), range, 320);
    let l0 = lift_for(&ctx, 300, &b.posed_parts(hs[0]).unwrap(), range, 320);
    let ls = lift_for(&ctx, 300, &single.posed_parts(h1).unwrap(), range, 320);
    let a = pose_and_lift(&ctx, |e| b.encode(e).unwrap(), l2);
    let first = pose_and_lift(&ctx, |_| {}, l0);
    let want = pose_and_lift(&ctx, |e| single.encode(e).unwrap(), ls);
    assert_eq!(sink_bits(&a), sink_bits(&want));
    assert_ne!(
        sink_bits(&first),
        sink_bits(&want),
        "instance 0 has its own frame"
    );
    drop((b, single));
    no_validation_messages(&ctx);
}

fn vulkan_error(e: &mien_core::Error) -> &Error {
    match e {
        mien_core::Error::Backend { source, .. } => source
            .downcast_ref::<Error>()
            .expect("a mien_vulkan::Error"),
        other => panic!("not a backend error: {other}"),
    }
}

#[test]
fn oversized_batches_get_typed_errors_naming_the_array() {
    let Some(ctx) = context() else { return };
    // 4 joints × 128 bytes = 512 bytes of palette per instance; 9 instances need 4608 > 4096.
    let rig = random_rig(3, shape(20, 5, 4));
    let mut b = VulkanRigBackend::with_binding_limit(&ctx, 4096);
    assert_eq!(b.upload_batch(&rig, 8).unwrap().len(), 8);
    let e = b.upload_batch(&rig, 9).unwrap_err();
    match vulkan_error(&e) {
        Error::OverLimits { what, needed, .. } => {
            assert_eq!(*needed, 4608);
            assert!(
                what.contains("joint palette array of 9 instance(s)"),
                "{what}"
            );
        }
        other => panic!("{other}"),
    }
    let max = ctx.properties().limits.max_compute_work_group_count[2];
    let e = VulkanRigBackend::new(&ctx)
        .upload_batch(&rig, max + 1)
        .unwrap_err();
    assert!(
        matches!(vulkan_error(&e), Error::OverLimits { limit_name: "maxComputeWorkGroupCount[2]", needed, .. } if *needed == u64::from(max) + 1),
        "{e}"
    );
    assert!(b.upload_batch(&rig, 0).is_err());
    drop(b);
    no_validation_messages(&ctx);
}

/// Lifts of every instance of a batch into disjoint ranges of one sink, recorded between one pair
/// of barriers (`record_batch`), and one batched lift of all instances (`from_parts_batch`, one
/// dispatch per part with z = instance), write the same sink bits as the same lifts recorded one by
/// one; overlapping ranges are refused before anything is recorded, and so are batched lifts whose
/// ranges would overlap or leave the sink.
#[test]
fn a_batch_of_lifts_recorded_together_equals_them_recorded_one_by_one() {
    let Some(ctx) = context() else { return };
    let rig = random_rig(11, shape(300, 12, 5));
    let nv = rig.vertex_count() as u32;
    let n = 5u32;
    let mut b = VulkanRigBackend::new(&ctx);
    let hs = b.upload_batch(&rig, n).unwrap();
    for (i, h) in hs.iter().enumerate() {
        b.set_controls(*h, &random_controls(40 + i as u64, &rig))
            .unwrap();
    }
    let stride = nv + 3;
    // mode 0: record_batch of n lifts; 1: n lifts recorded one by one; 2: one batched lift.
    let mut run = |mode: u32| {
        let mut sink = VulkanSplatSink::new(&ctx, stride * n + 4).unwrap();
        sink.fill(POISON).unwrap();
        let ranges: Vec<SlotRange> = (0..n).map(|_| sink.allocate(stride).unwrap()).collect();
        let params = |range| {
            let mut p = DebugLiftParams::new(range, nv);
            p.shading = DebugShading::Normal;
            p
        };
        let mut lifts: Vec<VulkanDebugLift> = if mode == 2 {
            let parts = b.posed_parts(hs[0]).unwrap();
            let p = params(ranges[0]);
            vec![VulkanDebugLift::from_parts_batch(&ctx, nv, &parts, n, stride, &sink, p).unwrap()]
        } else {
            hs.iter()
                .zip(&ranges)
                .map(|(h, r)| {
                    let parts = b.posed_parts(*h).unwrap();
                    VulkanDebugLift::from_parts(&ctx, nv, &parts, &sink, params(*r)).unwrap()
                })
                .collect()
        };
        let mut enc = ctx.begin().unwrap();
        b.encode(&mut enc).unwrap();
        if mode == 1 {
            for l in &mut lifts {
                l.record(&mut enc, &mut sink).unwrap();
            }
        } else {
            VulkanDebugLift::record_batch(&mut lifts, &mut enc, &mut sink).unwrap();
        }
        ctx.submit(enc).unwrap();
        let all = SlotRange {
            offset: 0,
            count: sink.capacity(),
        };
        sink_bits(&sink.read(all).unwrap())
    };
    let one_by_one = run(1);
    assert_eq!(run(0), one_by_one);
    assert_eq!(run(2), one_by_one);
    let together = one_by_one;
    assert!(together.iter().any(|x| *x != POISON), "nothing was lifted");
    // Two lifts of the same range: refused, naming both.
    let mut sink = VulkanSplatSink::new(&ctx, stride).unwrap();
    let range = sink.allocate(stride).unwrap();
    let parts = b.posed_parts(hs[0]).unwrap();
    let make = || {
        VulkanDebugLift::from_parts(&ctx, nv, &parts, &sink, DebugLiftParams::new(range, nv))
            .unwrap()
    };
    // Batched lifts whose instances' ranges would overlap, or run past the sink.
    let batch = |n: u32, stride: u32| {
        let p = DebugLiftParams::new(range, nv);
        VulkanDebugLift::from_parts_batch(&ctx, nv, &parts, n, stride, &sink, p)
    };
    let e = batch(2, stride - 1).unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
    let e = batch(2, stride).unwrap_err();
    assert!(e.to_string().contains("past the sink"), "{e}");
    assert!(batch(0, stride).is_err());
    let mut twins = vec![make(), make()];
    let mut enc = ctx.begin().unwrap();
    let e = VulkanDebugLift::record_batch(&mut twins, &mut enc, &mut sink).unwrap_err();
    assert!(e.to_string().contains("lifts 0 and 1"), "{e}");
    drop(enc);
    drop((twins, b));
    no_validation_messages(&ctx);
}

/// `set_controls_batch` over a whole batch (the parallel path) poses every instance as the same
/// controls set one by one; over a subset (the one-by-one path) too; a refusal in the batch path
/// changes nothing; bad arguments are refused.
#[test]
fn setting_a_batch_at_once_poses_as_setting_each() {
    let Some(ctx) = context() else { return };
    for (seed, s) in [(3u64, shape(400, 25, 6)), (4, shape(90, 0, 3))] {
        let rig = random_rig(seed, s);
        // 40 instances: over mien_shaders::data::PARALLEL_MIN, so the parallel path.
        let n = 40usize;
        let ring: Vec<_> = (0..5)
            .map(|i| random_controls(seed * 10 + i, &rig))
            .collect();
        let which = |k: usize| (k * 3) % ring.len();
        let pose = |b: &mut VulkanRigBackend, hs: &[mien_core::rig::RigHandle]| {
            b.poison_outputs(POISON).unwrap();
            let mut enc = ctx.begin().unwrap();
            b.encode(&mut enc).unwrap();
            ctx.submit(enc).unwrap();
            hs.iter()
                .map(|h| bits(&b.read_vertices(*h).unwrap()))
                .collect::<Vec<_>>()
        };
        let mut one = VulkanRigBackend::new(&ctx);
        let h1 = one.upload_batch(&rig, n as u32).unwrap();
        let mut want_stats = Vec::new();
        for (k, h) in h1.iter().enumerate() {
            want_stats.push(one.set_controls(*h, &ring[which(k)]).unwrap());
        }
        let want = pose(&mut one, &h1);
        let mut all = VulkanRigBackend::new(&ctx);
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
        drop((one, all));
    }
    no_validation_messages(&ctx);
}

/// A block of 8 instances whose active slots (the union of their non-zero weights) number over 64:
/// the morph kernel stages them 64 at a time, and every instance still equals its CPU pose — whole
/// and split into chunks by a small binding limit (several tiles, partial last tiles).
#[test]
fn blocks_with_more_than_64_active_targets_pose_like_the_cpu() {
    let Some(ctx) = context() else { return };
    let uploads = [many_active_targets()];
    for limit in [None, Some(limit_for(&uploads, 20_000))] {
        check_rig_batch(
            &mut Vulkan {
                ctx: ctx.clone(),
                limit,
            },
            &uploads,
        )
        .unwrap();
    }
}
