//! 100 characters of one rig in one batch: the built-in head uploaded once, each instance playing
//! its own stream (the built-in performance with its own intensity, started at its own point of
//! the take and looping), all posed and lifted in one submission per frame.
//!
//! ```sh
//! cargo run --release --example crowd                 # 100 heads on the best backend
//! cargo run --release --example crowd -- 256 vulkan   # 256 heads on Vulkan
//! ```

use std::sync::Arc;

use mien::core::anim::WeightStream;
use mien::core::sample::sample_performance;
use mien::{Asset, Backend, Device, LiftKind, LiftOptions, Runtime, RuntimeOptions};

/// Instance `k`'s stream: the built-in performance scaled by `0.6 + 0.4·(k mod 5)/4` (each
/// instance also starts it at its own point and loops it: [`drive_offset`]).
fn stream(k: usize) -> WeightStream {
    let mut s = sample_performance(60.0);
    let gain = 0.6 + 0.4 * (k % 5) as f32 / 4.0;
    for v in &mut s.values {
        *v *= gain;
    }
    s.source = format!("built-in performance, instance {k}");
    s
}

/// Where instance `k`'s stream starts on the media clock: `−k × 0.37 s`, i.e. that far into the
/// take at media time 0.
fn drive_offset(k: usize) -> f64 {
    -(k as f64) * 0.37
}

/// `n` instances with the debug lift (one splat per vertex: a crowd seen from afar; the surface
/// lift, the default, binds about 100,000 gaussians to each head).
fn options(n: u32) -> RuntimeOptions {
    RuntimeOptions {
        instances: n,
        lift: Some(LiftOptions {
            kind: LiftKind::Debug,
            ..Default::default()
        }),
    }
}

/// Pose `n` heads on `device` for `frames` frames at 30 fps; returns the runtime.
fn crowd(n: u32, device: &Device, frames: u32) -> mien::Result<Runtime> {
    let asset = Arc::new(Asset::builtin());
    let mut rt = Runtime::new(asset, device, &options(n))?;
    for k in 0..n as usize {
        rt.instance_mut(k)?
            .play_stream(stream(k))?
            .set_drive_timing(drive_offset(k), true)?;
    }
    for f in 0..frames {
        rt.update(f64::from(f) / 30.0)?;
    }
    rt.finish()?;
    Ok(rt)
}

fn main() -> mien::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let backend: Backend = args.get(1).map_or(Ok(Backend::Auto), |b| b.parse())?;
    let (device, why) = Device::open(backend)?;
    println!("{n} heads on {} ({why})", device.name());
    let t0 = std::time::Instant::now();
    let frames = 60;
    let mut rt = crowd(n, &device, frames)?;
    let wall = t0.elapsed().as_secs_f64();
    let m = rt.memory();
    let t = rt.times();
    println!(
        "{frames} frames in {wall:.2} s ({:.1} ms a frame with setup); rig {:.1} MB shared by {} instances, sink {:.1} MB ({} splats)",
        wall * 1e3 / f64::from(frames),
        m.rig_bytes as f64 / 1e6,
        m.instances,
        m.sink_bytes as f64 / 1e6,
        m.sink_slots
    );
    println!("recording + posing: rig {:?}, lift {:?}", t.rig, t.lift);
    let a = rt.splats(0)?;
    let b = rt.splats(n as usize - 1)?;
    let differ = a
        .center
        .iter()
        .zip(&b.center)
        .filter(|(x, y)| x != y)
        .count();
    println!("instance 0 and {} differ at {differ} splats", n - 1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instance of the batch equals the same stream posed alone, bit for bit (the CPU
    /// backend's batch is the reference per instance), and the streams make them differ.
    #[test]
    fn a_batch_of_100_equals_each_instance_alone() {
        let rt_frames = 3;
        let mut batch = crowd(100, &Device::Cpu, rt_frames).unwrap();
        for k in [0usize, 1, 37, 99] {
            let asset = Arc::new(Asset::builtin());
            let mut one = Runtime::new(asset, &Device::Cpu, &options(1)).unwrap();
            one.instance_mut(0)
                .unwrap()
                .play_stream(stream(k))
                .unwrap()
                .set_drive_timing(drive_offset(k), true)
                .unwrap();
            for f in 0..rt_frames {
                one.update(f64::from(f) / 30.0).unwrap();
            }
            let (a, b) = (batch.splats(k).unwrap(), one.splats(0).unwrap());
            assert_eq!(a, b, "instance {k}");
        }
        let (a, b) = (batch.splats(0).unwrap(), batch.splats(1).unwrap());
        assert!(a.center.iter().zip(&b.center).any(|(x, y)| x != y));
        let m = batch.memory();
        assert_eq!(
            (m.instances, m.sink_slots),
            (100, 100 * u64::from(m.vertices))
        );
    }
}
