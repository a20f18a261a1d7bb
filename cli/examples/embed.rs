//! The smallest embed: a captured face (Face Cap's `facecap.glb`) driven by a Live Link Face CSV
//! recording, posed and lifted every frame (the surface lift, the default) on the best backend this
//! machine has, splats read back.
//!
//! ```sh
//! cargo run --release --example embed                      # the shared sample files
//! cargo run --release --example embed -- FACE.glb TAKE.csv  # your own
//! ```

use std::path::{Path, PathBuf};

use mien::{Asset, Backend, Device, Runtime, RuntimeOptions};

/// `../shared/data` beside the repository (where the tests read real inputs).
fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// What one run showed: frames posed, splats per frame, the mean jaw-open centre shift.
#[derive(Debug)]
struct Outcome {
    device: String,
    frames: u32,
    splats: usize,
    moved_m: f32,
}

fn run(face: &Path, take: &Path, frames: u32, backend: Backend) -> mien::Result<Outcome> {
    // 1. The character, loaded once.
    let asset = Asset::load(face)?;
    // 2. A device: the CPU, wgpu or Vulkan (Auto takes a real GPU when there is one).
    let (device, why) = Device::open(backend)?;
    println!("posing {} on {} ({why})", asset.source(), device.name());
    // 3. A runtime of one instance, the stream attached to it.
    let mut rt = Runtime::new(asset.into(), &device, &RuntimeOptions::default())?;
    rt.instance_mut(0)?.play_livelink_csv(take)?;
    // The recording's head and eye angles turn the joints found by standard name.
    if let Some(m) = rt.instance(0)?.head_motion() {
        println!(
            "head motion: {} channels → head {:?}, eyes {:?} / {:?}",
            m.channels.len(),
            m.head,
            m.left_eye,
            m.right_eye
        );
    }
    // 4. Every frame: the media time in, posed and lifted splats out.
    let mut moved = 0.0f32;
    let mut splats = 0;
    // The first frame's gaussians: how far each moves from there (the surface lift's gaussians are
    // bound to triangles, so there is one per gaussian, not per vertex).
    let mut first: Option<Vec<[f32; 4]>> = None;
    for k in 0..frames {
        let report = rt.update(f64::from(k) / 30.0)?;
        let dropped: usize = report.instances[0].controls.dropped.len();
        let s = rt.splats(0)?;
        splats = s.len();
        let rest = first.get_or_insert_with(|| s.center.clone());
        moved = s
            .center
            .iter()
            .zip(rest.iter())
            .map(|(c, r)| {
                ((c[0] - r[0]).powi(2) + (c[1] - r[1]).powi(2) + (c[2] - r[2]).powi(2)).sqrt()
            })
            .fold(0.0, f32::max);
        if k % 30 == 0 {
            println!(
                "t = {:5.2} s: {splats} splats, largest move {moved:.4} m, {dropped} dropped",
                f64::from(k) / 30.0
            );
        }
    }
    let m = rt.memory();
    println!(
        "{} vertices, rig {} B, sink {} B",
        m.vertices, m.rig_bytes, m.sink_bytes
    );
    Ok(Outcome {
        device: device.name().into(),
        frames,
        splats,
        moved_m: moved,
    })
}

fn main() -> mien::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let face = args
        .first()
        .map_or_else(|| data("facecap/facecap.glb"), PathBuf::from);
    let take = args.get(1).map_or_else(
        || data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"),
        PathBuf::from,
    );
    let o = run(&face, &take, 90, Backend::Auto)?;
    println!(
        "{} frames on {}: {} splats each, the largest move {:.1} mm",
        o.frames,
        o.device,
        o.splats,
        o.moved_m * 1e3
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_moves_the_face_on_the_cpu() {
        let o = run(
            &data("facecap/facecap.glb"),
            &data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"),
            31,
            Backend::Cpu,
        )
        .unwrap();
        assert_eq!((o.device.as_str(), o.frames), ("cpu", 31));
        // The surface lift (the default): about 100,000 gaussians bound to facecap's triangles.
        assert!(o.splats > 50_000, "{o:?}");
        // The recording opens the jaw and moves the brows: some vertex moves by millimetres.
        assert!(o.moved_m > 1e-3 && o.moved_m < 0.2, "{o:?}");
    }
}
