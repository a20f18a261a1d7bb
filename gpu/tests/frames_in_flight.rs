//! Frames in flight, on every device layer (wgpu, and Vulkan with validation): a stream of frames
//! recorded and submitted without a wait in between — each with its own controls written while
//! the frames before it may still run — produces, frame by frame, the same bits as the same
//! frames posed one at a time with a wait after each; at most `FRAMES_IN_FLIGHT` submissions
//! are ever pending; and every frame's GPU times arrive, one entry per frame, without a wait.

mod common;

use common::{TestDevice, TestResult, msg};
use mien_core::rig::RigBackend;
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_gpu::{FRAMES_IN_FLIGHT, GpuRigBackend};
use proptest::test_runner::TestCaseError;

/// Frames in the stream: several times the ring, so every staging region is reused.
const FRAMES: usize = 4 * FRAMES_IN_FLIGHT + 1;

fn stream_on<G: TestDevice>(ctx: &G) -> TestResult {
    // Large enough that a frame's GPU work is not over before the next is recorded.
    let rig = random_rig(
        11,
        RigShape {
            vertices: 20_000,
            targets: 24,
            density: 0.4,
            joints: 8,
        },
    );
    let controls: Vec<_> = (0..FRAMES as u64)
        .map(|k| random_controls(500 + k, &rig))
        .collect();
    let mut b = GpuRigBackend::new(ctx);
    let h = b.upload(&rig).map_err(msg)?;
    let bytes = G::size(b.posed_parts(h).map_err(msg)?[0].posed);
    let outs: Vec<G::Buffer> = (0..FRAMES)
        .map(|_| ctx.output("a frame's copy", bytes))
        .collect::<Result<_, _>>()
        .map_err(msg)?;
    let read = |outs: &[G::Buffer]| -> Result<Vec<Vec<u8>>, String> {
        let parts: Vec<_> = outs.iter().map(|o| (o, 0, bytes)).collect();
        ctx.read("the frames' copies", &parts).map_err(msg)
    };
    // One frame: set, encode, copy the posed vertices out, end (timestamps), submit.
    let frame = |b: &mut GpuRigBackend<G>, c, out, end: bool| -> TestResult {
        b.set_controls(h, c).map_err(msg)?;
        let mut enc = ctx.begin().map_err(msg)?;
        b.encode(&mut enc).map_err(msg)?;
        let posed = b.posed_parts(h).map_err(msg)?;
        ctx.copy(&mut enc, posed[0].posed, out, bytes)
            .map_err(msg)?;
        if end {
            ctx.end_frame(&mut enc);
        }
        ctx.submit(enc).map_err(msg)
    };
    // One at a time: wait after each frame.
    for (c, out) in controls.iter().zip(&outs) {
        frame(&mut b, c, out, false)?;
        ctx.wait().map_err(msg)?;
    }
    let one_at_a_time = read(&outs)?;
    ctx.fill(
        &outs.iter().map(|o| (o, 0, bytes)).collect::<Vec<_>>(),
        0xFFFF_FFFF,
    )
    .map_err(msg)?;
    let _ = ctx.completed_times().map_err(msg)?;
    // In flight: no wait until the end.
    for (c, out) in controls.iter().zip(&outs) {
        frame(&mut b, c, out, true)?;
    }
    ctx.wait().map_err(msg)?;
    let times = ctx.completed_times().map_err(msg)?;
    let in_flight = read(&outs)?;
    for (k, (a, b)) in one_at_a_time.iter().zip(&in_flight).enumerate() {
        if a != b {
            let differ = a
                .chunks_exact(4)
                .zip(b.chunks_exact(4))
                .filter(|(x, y)| x != y)
                .count();
            return Err(format!(
                "frame {k} in flight differs from the same frame posed alone in {differ} words"
            ));
        }
    }
    // Distinct controls give distinct frames (the check above could not pass by reading one
    // frame's output everywhere).
    if one_at_a_time.windows(2).any(|w| w[0] == w[1]) {
        return Err("two consecutive frames posed the same".into());
    }
    if ctx.caps().timestamps {
        if times.len() != FRAMES {
            return Err(format!(
                "{} frames' GPU times for {FRAMES} frames",
                times.len()
            ));
        }
        // The rig's two passes (morph, skin) in every frame: none missing, and none carried
        // over from the frames before, which ran without `end_frame`.
        if let Some(t) = times
            .iter()
            .find(|t| t.timed_passes != 2 || t.untimed_passes > 0 || t.morph_ms <= 0.0)
        {
            return Err(format!(
                "a frame's GPU times are not its own two passes: {t:?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn frames_in_flight_equal_frames_one_at_a_time() -> Result<(), TestCaseError> {
    on_devices!(stream_on);
    Ok(())
}
