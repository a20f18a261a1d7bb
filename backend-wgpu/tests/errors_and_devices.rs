//! What only wgpu has: a device the caller owns (with its own error handlers), and device loss as
//! a typed error. The stages' conformance and limit errors are `mien-gpu`'s suite (`gpu/tests/`).
//!
//! Without an adapter these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1`.

use mien_core::lift::{DebugLiftParams, Lift};
use mien_core::rig::RigBackend;
use mien_core::sink::SplatSink;
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_wgpu::{Error, WgpuContext, WgpuDebugLift, WgpuRigBackend, WgpuSplatSink};

fn context() -> Option<WgpuContext> {
    match WgpuContext::new(&Default::default()) {
        Ok(c) => Some(c),
        Err(e) if mien_wgpu::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => {
            eprintln!("notice: skipping wgpu tests: {e}");
            None
        }
    }
}

fn wgpu_error(e: &mien_core::Error) -> &Error {
    match e {
        mien_core::Error::Backend { source, .. } => {
            source.downcast_ref::<Error>().expect("a mien_wgpu::Error")
        }
        other => panic!("not a backend error: {other}"),
    }
}

#[test]
fn a_device_the_caller_owns_works_and_keeps_its_handlers() {
    let Some(_) = context() else { return };
    // The "engine": its own instance, adapter and device.
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .unwrap();
    let ctx = WgpuContext::from_device(device.clone(), queue.clone(), adapter.get_info());
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
    let mut backend = WgpuRigBackend::new(&ctx);
    let h = backend.upload(&rig).unwrap();
    backend.set_controls(h, &controls).unwrap();
    let mut sink = WgpuSplatSink::new(&ctx, 400).unwrap();
    let range = sink.allocate(300).unwrap();
    let mut lift =
        WgpuDebugLift::new(&backend, h, &sink, DebugLiftParams::new(range, 300)).unwrap();
    // Record into the engine's own encoder, submit on the engine's queue.
    let mut enc = device.create_command_encoder(&Default::default());
    backend.encode(&mut enc).unwrap();
    lift.encode(&mut enc, &backend, &mut sink).unwrap();
    queue.submit([enc.finish()]);
    let got = backend.read_vertices(h).unwrap();
    let input = mien_cpu::conformance::rig_batch::RigBatchInput {
        rig: rig.clone(),
        controls: vec![controls.clone()],
    };
    let want = mien_cpu::conformance::rig_batch::batch_reference(&[input]).unwrap();
    mien_cpu::conformance::compare_posed("the caller's device", &got, &want[0][0]).unwrap();
    let splats = sink.read(range).unwrap();
    assert!(
        splats.color.iter().all(|c| c >> 24 == 255),
        "every gaussian written with opacity 1"
    );
}

#[test]
fn a_lost_device_is_a_typed_error_not_a_hang() {
    let Some(ctx) = context() else { return };
    let rig = random_rig(
        9,
        RigShape {
            vertices: 100,
            targets: 2,
            density: 0.5,
            joints: 2,
        },
    );
    let mut backend = WgpuRigBackend::new(&ctx);
    let h = backend.upload(&rig).unwrap();
    ctx.device().destroy();
    let _ = ctx.device().poll(wgpu::PollType::Poll);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let err = backend.encode(&mut enc).and_then(|_| {
        ctx.submit(enc);
        backend.read_vertices(h).map(|_| ())
    });
    let e = err.expect_err("a destroyed device cannot pose");
    assert!(matches!(wgpu_error(&e), Error::DeviceLost { .. }), "{e}");
}

/// wgpu resolves its timestamp queries in `end_frame`: a frame without it reports no stage times
/// (rather than zeros), a frame with it reports them once.
#[test]
fn stage_times_come_from_frames_that_ended() {
    use mien_gpu::GpuDevice;
    let Some(ctx) = context() else { return };
    if ctx.timestamps().is_none() {
        return;
    }
    let rig = random_rig(
        3,
        RigShape {
            vertices: 64,
            targets: 2,
            density: 0.5,
            joints: 2,
        },
    );
    let mut backend = WgpuRigBackend::new(&ctx);
    backend.upload(&rig).unwrap();
    let mut enc = GpuDevice::begin(&ctx).unwrap();
    backend.encode(&mut enc).unwrap();
    GpuDevice::submit(&ctx, enc).unwrap();
    GpuDevice::wait(&ctx).unwrap();
    assert_eq!(ctx.stage_times().unwrap(), None);
    let mut enc = GpuDevice::begin(&ctx).unwrap();
    backend.encode(&mut enc).unwrap();
    ctx.end_frame(&mut enc);
    GpuDevice::submit(&ctx, enc).unwrap();
    GpuDevice::wait(&ctx).unwrap();
    assert!(ctx.stage_times().unwrap().is_some());
    assert_eq!(ctx.stage_times().unwrap(), None, "read once");
}

/// Two frames recorded at once (interleaved, as two threads sharing a context do) keep their own
/// timestamp slots: ending both and submitting one maps only that one's read-back, so the other's
/// submission — which copies into its own read-back — is valid, and both report stage times. (With
/// one device-wide list of ended frames the first submission mapped both, and wgpu refused the
/// second: "Buffer with 'mien timestamps read-back' label is still mapped".) An engine's encoder
/// (not from `begin`) is not timed.
#[test]
fn frames_recorded_at_once_keep_their_own_timestamps() {
    use mien_gpu::GpuDevice;
    let Some(ctx) = context() else { return };
    if ctx.timestamps().is_none() {
        return;
    }
    let rig = random_rig(
        5,
        RigShape {
            vertices: 64,
            targets: 2,
            density: 0.5,
            joints: 2,
        },
    );
    let mut backend = WgpuRigBackend::new(&ctx);
    backend.upload(&rig).unwrap();
    GpuDevice::wait(&ctx).unwrap();
    while ctx.stage_times().unwrap().is_some() {}
    let mut a = GpuDevice::begin(&ctx).unwrap();
    let mut b = GpuDevice::begin(&ctx).unwrap();
    backend.encode(&mut a).unwrap();
    backend.encode(&mut b).unwrap();
    ctx.end_frame(&mut a);
    ctx.end_frame(&mut b);
    GpuDevice::submit(&ctx, a).unwrap();
    GpuDevice::submit(&ctx, b).unwrap();
    GpuDevice::wait(&ctx).unwrap();
    let times = ctx.completed_times().unwrap();
    assert_eq!(times.len(), 2, "both frames timed: {times:?}");
    // An engine's encoder: encoded and submitted through mien, not timed.
    let mut e = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    backend.encode(&mut e).unwrap();
    ctx.end_frame(&mut e);
    GpuDevice::submit(&ctx, e).unwrap();
    GpuDevice::wait(&ctx).unwrap();
    assert!(ctx.completed_times().unwrap().is_empty());
}
