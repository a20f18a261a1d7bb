//! What only Vulkan has: a software-only machine refused when software is not allowed, and an
//! engine's own device and command buffer. The stages' conformance and limit errors are
//! `mien-gpu`'s suite (`gpu/tests/`).
//!
//! Without a Vulkan device these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1`.

use std::sync::Arc;

use ash::vk;
use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::RigBackend;
use mien_core::sink::SplatSink;
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_vulkan::{
    ContextOptions, DedicatedAllocator, Error, VulkanContext, VulkanDebugLift, VulkanEncoder,
    VulkanRigBackend, VulkanSplatSink,
};

fn context() -> Option<VulkanContext> {
    match VulkanContext::new(&ContextOptions {
        validation: true,
        require_validation: mien_vulkan::gpu_required(),
        allow_software: true,
    }) {
        Ok(c) => Some(c),
        Err(e) if mien_vulkan::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => {
            eprintln!("notice: skipping Vulkan tests: {e}");
            None
        }
    }
}

#[test]
fn a_software_only_machine_refuses_when_software_is_not_allowed() {
    let Some(ctx) = context() else { return };
    if !ctx.is_software() {
        return;
    }
    let e = VulkanContext::new(&ContextOptions {
        allow_software: false,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(e, Error::NoDevice { .. }), "{e}");
    assert!(e.to_string().contains("software, not allowed"), "{e}");
}

#[test]
fn an_engine_device_and_command_buffer_work() {
    let Some(_) = context() else { return };
    // The "engine": its own instance, device, queue, command pool and command buffer.
    // SAFETY: loading the system loader.
    let entry = unsafe { ash::Entry::load() }.unwrap();
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
    // SAFETY: plain instance, no layers or extensions.
    let instance = unsafe {
        entry.create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
    }
    .unwrap();
    // SAFETY: instance live.
    let pd = unsafe { instance.enumerate_physical_devices() }.unwrap()[0];
    // SAFETY: pd of instance.
    let family = unsafe { mien_vulkan::raw::compute_family(&instance, pd) }.unwrap();
    // SAFETY: pd, family valid; no features.
    let device =
        unsafe { mien_vulkan::raw::create_device(&instance, pd, family, false, false, false) }
            .unwrap();
    // SAFETY: pd of instance.
    let mem = unsafe { instance.get_physical_device_memory_properties(pd) };
    // SAFETY: the handles belong together and outlive the context (destroyed at the end below).
    let ctx = unsafe {
        VulkanContext::from_raw(
            instance.clone(),
            pd,
            device.clone(),
            family,
            Arc::new(DedicatedAllocator::new(mem)),
        )
    }
    .unwrap();
    let rig = random_rig(
        5,
        RigShape {
            vertices: 300,
            targets: 8,
            density: 0.3,
            joints: 4,
        },
    );
    let controls = random_controls(5, &rig);
    let mut backend = VulkanRigBackend::new(&ctx);
    let h = backend.upload(&rig).unwrap();
    backend.set_controls(h, &controls).unwrap();
    let mut sink = VulkanSplatSink::new(&ctx, 400).unwrap();
    let range = sink.allocate(300).unwrap();
    let mut lift =
        VulkanDebugLift::new(&backend, h, &sink, DebugLiftParams::new(range, 300)).unwrap();
    // SAFETY: engine-side recording and submission on the engine's queue.
    unsafe {
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                None,
            )
            .unwrap();
        let cmd = device
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .command_buffer_count(1),
            )
            .unwrap()[0];
        device
            .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .unwrap();
        let mut enc = VulkanEncoder::from_raw(cmd);
        backend.encode(&mut enc).unwrap();
        lift.encode(&mut enc, &backend, &mut sink).unwrap();
        let kept = enc.take_resources();
        assert!(!kept.is_empty(), "the engine is handed what to keep alive");
        device.end_command_buffer(cmd).unwrap();
        let fence = device
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .unwrap();
        let queue = device.get_device_queue(family, 0);
        device
            .queue_submit(
                queue,
                &[vk::SubmitInfo::default().command_buffers(&[cmd])],
                fence,
            )
            .unwrap();
        device
            .wait_for_fences(&[fence], true, 10_000_000_000)
            .unwrap();
        drop(kept);
        device.destroy_fence(fence, None);
        device.destroy_command_pool(pool, None);
    }
    let got = backend.read_vertices(h).unwrap();
    let input = mien_cpu::conformance::rig_batch::RigBatchInput {
        rig: rig.clone(),
        controls: vec![controls.clone()],
    };
    let want = mien_cpu::conformance::rig_batch::batch_reference(&[input]).unwrap();
    mien_cpu::conformance::compare_posed("an engine's device", &got, &want[0][0]).unwrap();
    let splats = sink.read(range).unwrap();
    assert!(
        splats.color.iter().all(|c| c >> 24 == 255),
        "every gaussian written with opacity 1"
    );
    drop((lift, sink, backend, ctx));
    // SAFETY: mien's objects are gone; the engine destroys its own device and instance.
    unsafe {
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
}

/// Encoders reuse their command pool and its one command buffer: many frames (submitted, or
/// dropped without a submission) keep the same few pools; an encoder, buffer or bind group of
/// another context is a typed error, never a crash.
#[test]
fn frames_reuse_their_pools_and_other_contexts_are_refused() {
    use mien_gpu::GpuDevice;
    let Some(ctx) = context() else { return };
    for _ in 0..200 {
        let enc = ctx.begin().unwrap();
        ctx.submit(enc).unwrap();
        ctx.wait().unwrap();
    }
    for _ in 0..200 {
        drop(ctx.begin().unwrap());
    }
    assert!(
        ctx.idle_command_pools() <= 2,
        "{}",
        ctx.idle_command_pools()
    );
    let other = VulkanContext::new(&ContextOptions::default()).unwrap();
    let rig = random_rig(
        2,
        RigShape {
            vertices: 40,
            targets: 2,
            density: 0.5,
            joints: 2,
        },
    );
    let mut backend = VulkanRigBackend::new(&ctx);
    backend.upload(&rig).unwrap();
    let mut foreign = other.begin().unwrap();
    let e = backend.encode(&mut foreign).unwrap_err();
    assert!(e.to_string().contains("another Vulkan context"), "{e}");
    drop(foreign);
    let theirs = GpuDevice::output(&other, "a buffer of the other context", 16).unwrap();
    let e = GpuDevice::read(&ctx, "a read", &[(&theirs, 0, 16)]).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    let e = ctx.submit(other.begin().unwrap()).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    assert!(ctx.take_validation_messages().is_empty());
}

/// Per-frame writes go through the staging ring: a stream of frames whose writes vary in size
/// within a frame (100 KB, 10 KB, 300 KB — a pattern that once made a chunk every frame) stops
/// making staging chunks after its first rounds, and every frame's bytes land.
#[test]
fn a_steady_stream_of_frames_allocates_no_staging() {
    use mien_gpu::{GpuDevice, Usage};
    let Some(ctx) = context() else { return };
    let sizes = [100_000usize, 10_000, 300_000];
    let bufs: Vec<_> = sizes
        .iter()
        .map(|&n| GpuDevice::frame_buffer(&ctx, "a frame buffer", Usage::Storage, &vec![0; n]))
        .collect::<Result<_, _>>()
        .unwrap();
    let frame = |k: u8| {
        for (b, &n) in bufs.iter().zip(&sizes) {
            GpuDevice::write(&ctx, b, 0, &vec![k; n]).unwrap();
        }
        let enc = GpuDevice::begin(&ctx).unwrap();
        GpuDevice::submit(&ctx, enc).unwrap();
    };
    for k in 0..12 {
        frame(k);
    }
    let made = ctx.staging_chunks_made();
    for k in 12..40 {
        frame(k);
    }
    assert_eq!(
        ctx.staging_chunks_made(),
        made,
        "staging chunks made in steady state"
    );
    let parts: Vec<_> = bufs
        .iter()
        .zip(&sizes)
        .map(|(b, &n)| (b, 0, n as u64))
        .collect();
    for (got, &n) in GpuDevice::read(&ctx, "the frame buffers", &parts)
        .unwrap()
        .iter()
        .zip(&sizes)
    {
        assert_eq!(got, &vec![39u8; n], "the last frame's bytes");
    }
    assert!(ctx.take_validation_messages().is_empty());
}
