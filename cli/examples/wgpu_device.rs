//! Rendering into the caller's own wgpu device: the application creates the device (as an engine
//! or a viewer does), hands it to mien, and after each `update` records its own work on mien's
//! splat buffers in its own encoder — here a copy of the splat centres into one of its buffers,
//! read back and compared with what mien says it wrote.
//!
//! ```sh
//! cargo run --release --example wgpu_device
//! ```
//!
//! Without a GPU adapter it prints a notice and exits 0 (exit 1 when `MIEN_REQUIRE_GPU=1`).

use std::sync::Arc;

use mien::backends::wgpu::{WgpuContext, wgpu};
use mien::{Asset, Device, Runtime, RuntimeOptions, SinkRef};

/// The application's device: any adapter (a software one too), with the adapter's own limits.
fn app_device() -> Option<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo)> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .ok()?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("the application's device"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .ok()?;
    Some((device, queue, adapter.get_info()))
}

/// Pose the built-in head for `frames` frames on the application's device, then copy instance
/// 0's splat centres with the application's own encoder. Returns (centres copied by the app,
/// centres mien reads back), `(V,4)` metres each; `None` without an adapter.
/// Splat centres `(V,4)`, metres.
type Centres = Vec<[f32; 4]>;

fn run(frames: u32) -> mien::Result<Option<(Centres, Centres)>> {
    let Some((device, queue, info)) = app_device() else {
        return Ok(None);
    };
    println!(
        "the application's adapter: {} ({:?})",
        info.name, info.device_type
    );
    // mien creates its buffers and pipelines on the application's device.
    let ctx = WgpuContext::from_device(device.clone(), queue.clone(), info);
    let mut rt = Runtime::new(
        Arc::new(Asset::builtin()),
        &Device::Wgpu(ctx),
        &RuntimeOptions::default(),
    )?;
    rt.instance_mut(0)?
        .play_stream(mien::core::sample::sample_performance(60.0))?;
    for f in 0..frames {
        rt.update(f64::from(f) / 30.0)?;
    }
    // The application's own work on mien's buffers, ordered after mien's submission by the queue.
    let SinkRef::Wgpu(sink) = rt.sink() else {
        unreachable!("a wgpu runtime has a wgpu sink")
    };
    let range = rt.sink_range(0)?;
    let bytes = u64::from(range.count) * 16;
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("the application's copy of the centres"),
        size: bytes,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    // The page holding the instance's slots (a sink larger than one buffer has several).
    let (page, local) = sink.locate(u64::from(range.offset), u64::from(range.count))?;
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(&page.center, local * 16, &readback, 0, bytes);
    queue.submit([enc.finish()]);
    let slice = readback.slice(..);
    slice.map_async(wgpu::MapMode::Read, |_| {});
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| mien::Error::invalid("the application's readback", e.to_string()))?;
    let mine: Vec<[f32; 4]> = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| mien::Error::invalid("the application's readback", e.to_string()))?;
        bytemuck::cast_slice(&view).to_vec()
    };
    readback.unmap();
    let theirs = rt.splats(0)?.center;
    Ok(Some((mine, theirs)))
}

fn main() -> mien::Result<()> {
    match run(30)? {
        Some((mine, theirs)) => {
            let same = mine == theirs;
            println!(
                "{} splat centres copied by the application; equal to mien's readback: {same}",
                mine.len()
            );
            if !same {
                std::process::exit(1);
            }
        }
        None if std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            eprintln!("MIEN_REQUIRE_GPU=1 but no wgpu adapter was found");
            std::process::exit(1);
        }
        None => println!("no wgpu adapter on this machine: nothing to show"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_application_reads_what_mien_wrote_on_its_device() {
        match run(3).unwrap() {
            Some((mine, theirs)) => {
                assert_eq!(mine.len(), theirs.len());
                assert!(
                    mine == theirs,
                    "the application's copy differs from mien's readback"
                );
                assert!(mine.iter().all(|c| c.iter().all(|x| x.is_finite())));
            }
            None => {
                assert!(
                    !std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1"),
                    "MIEN_REQUIRE_GPU=1 but no wgpu adapter"
                );
                eprintln!("notice: no wgpu adapter; the caller-owned-device example was not run");
            }
        }
    }
}
