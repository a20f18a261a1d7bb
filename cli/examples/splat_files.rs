//! Splat files from a runtime: three instances of the built-in head, each playing the built-in
//! performance from its own point, and one frame written as SPZ, `.ply` and glTF
//! `KHR_gaussian_splatting` — one instance from its own read-out, and all three in one file.
//!
//! ```sh
//! cargo run --release --example splat_files              # into ./splat-files/
//! cargo run --release --example splat_files -- OUT_DIR
//! ```
//!
//! The convention: `rt.splats(i)` is instance `i`'s gaussians alone (slots `0..S`, written with
//! `splats.all()`); `rt.splats_all()` is every instance in sink order, where `rt.sink_range(i)`
//! finds instance `i`. `write_splats` picks the format by extension and writes atomically.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien::core::io::splat_file::write_splats;
use mien::{Asset, Device, Runtime, RuntimeOptions};

/// Pose three heads at media time `t` (the surface lift, the default) and write instance 1 and
/// all three into `out`; returns the files written and their splat counts.
fn run(out: &Path, t: f64) -> mien::Result<Vec<(PathBuf, u64)>> {
    let options = RuntimeOptions {
        instances: 3,
        ..Default::default()
    };
    let mut rt = Runtime::new(Arc::new(Asset::builtin()), &Device::Cpu, &options)?;
    for i in 0..3 {
        rt.instance_mut(i)?
            .play_stream(mien::core::sample::sample_performance(60.0))?
            .set_drive_timing(-0.5 * i as f64, true)?;
    }
    rt.update(t)?;
    std::fs::create_dir_all(out).map_err(|e| mien::core::Error::io(out, e))?;
    let mut written = Vec::new();
    // Instance 1 alone, in each format.
    let one = rt.splats(1)?;
    for ext in ["spz", "ply", "glb"] {
        let path = out.join(format!("head1.{ext}"));
        let report = write_splats(&path, &one, &[one.all()])?;
        written.push((path, report.written));
    }
    // The three heads in one SPZ (they stand in one place: the runtime poses, the caller places).
    let all = rt.splats_all()?;
    let path = out.join("heads.spz");
    let report = write_splats(&path, &all, &[all.all()])?;
    written.push((path, report.written));
    Ok(written)
}

fn main() -> mien::Result<()> {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("splat-files"), PathBuf::from);
    for (path, n) in run(&out, 1.0)? {
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!("{}: {n} gaussians, {bytes} bytes", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files read back through mien's readers hold the counts written, and instance 1's SPZ
    /// is the middle third of the all-instances file.
    #[test]
    fn the_files_read_back_with_their_gaussians() {
        let dir = tempfile::tempdir().unwrap();
        let files = run(dir.path(), 1.0).unwrap();
        let n = files[0].1;
        assert!(n > 50_000, "{files:?}");
        let spz = mien::core::io::spz::read_spz(&files[0].0).unwrap();
        assert_eq!(spz.len() as u64, n);
        let ply = mien::core::io::ply::read_splat_ply(&files[1].0).unwrap();
        assert_eq!(ply.len() as u64, n);
        assert_eq!(files[3].1, 3 * n);
        let all = mien::core::io::spz::read_spz(&files[3].0).unwrap();
        let k = n as usize;
        assert_eq!(all.center[k..2 * k], spz.center[..]);
    }
}
