//! A character bundle through the library — what `mien animate --character head.character.json`
//! does: load the bundle (its GNM head, head / eye / teeth branches and ONNX appearance decoders),
//! drive it from the Live Link Face take, move the camera round it, and write the last frame.
//!
//! ```sh
//! pip install onnxruntime onnx numpy
//! export ORT_DYLIB_PATH=$(python3 -c 'import onnxruntime, pathlib; print(next((pathlib.Path(onnxruntime.__file__).parent / "capi").glob("libonnxruntime.so*")))')
//! cargo run --release --example bundle                      # builds the test bundle in ./mien-bundle
//! cargo run --release --example bundle -- my.character.json # a bundle of your own
//! ```
//!
//! With no argument it first builds mien's test bundle: the ICT-FaceKit head baked into a linear
//! head pack, split into branches, with the decoders `docs/bundles/make_test_bundle.py` makes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien::{Camera, CharacterDef, Device, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// mien's test bundle in `dir` (the ICT pack, then docs/bundles/make_test_bundle.py): its manifest.
fn build_test_bundle(dir: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    Ok(mien::runtime::bundle::make_test_bundle(
        &data("ict-facekit"),
        dir,
    )?)
}

/// Animate `frames` frames of the bundle at `manifest`, the camera turning 30° round the head;
/// write the last frame to `out`. Decoder runs and the memory per branch are printed.
fn run(manifest: &Path, frames: u32, out: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    let character = CharacterDef::load(manifest)?;
    let asset = Arc::new(character.asset.clone());
    let options = RuntimeOptions {
        instances: 1,
        lift: Some(character.lift_options()),
    };
    let mut rt = Runtime::new(asset, &Device::Cpu, &options)?;
    rt.instance_mut(0)?
        .play_livelink_csv(data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"))?;
    for k in 0..frames {
        let a = (30f64).to_radians() * f64::from(k) / f64::from(frames.max(2) - 1);
        let eye = [0.6 * a.sin(), 0.0, 0.6 * a.cos()];
        rt.set_camera(Camera::look_at(eye, [0.0, 0.0, 0.0], 0.6)?)?;
        rt.update(1.0 + f64::from(k) / 30.0)?;
    }
    let splats = rt.splats(0)?;
    mien::write_splats(out, &splats, &[splats.all()])?;
    let stats = rt.appearance_stats().unwrap_or_default();
    println!(
        "{} frames: {} decoder runs ({} branch updates skipped), {:.1} ms decoding",
        frames,
        stats.decodes,
        stats.skipped,
        stats.decode_time.as_secs_f64() * 1e3
    );
    if let Some(m) = rt.bundle_memory() {
        for b in &m.branches {
            println!("  {:6} {:>7} slots {:>9} bytes", b.name, b.slots, b.bytes);
        }
        println!("  bundle files resident: {} bytes", m.resident_bytes);
    }
    println!("wrote {}", out.display());
    Ok(stats.decodes)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = match std::env::args().nth(1) {
        Some(p) => PathBuf::from(p),
        None => build_test_bundle(Path::new("mien-bundle"))?,
    };
    run(&manifest, 30, Path::new("bundle-last-frame.spz"))?;
    Ok(())
}

#[test]
fn the_test_bundle_animates_with_a_moving_camera() {
    let ort = mien::runtime::decoder::library_path();
    let Some(lib) = ort else {
        assert!(
            std::env::var("MIEN_REQUIRE_ORT").as_deref() != Ok("1"),
            "MIEN_REQUIRE_ORT=1 but no ONNX Runtime"
        );
        eprintln!("skipped: no ONNX Runtime");
        return;
    };
    mien::runtime::decoder::Ort::load_from(lib).unwrap();
    let dir = std::env::temp_dir().join(format!("mien-example-bundle-{}", std::process::id()));
    let manifest = build_test_bundle(&dir).unwrap();
    let decodes = run(&manifest, 4, &dir.join("last.spz")).unwrap();
    // The head decodes every frame (the take moves it, the camera turns); the eyes whenever the
    // camera has turned past the epsilon.
    assert!(decodes >= 6, "{decodes}");
    assert!(std::fs::metadata(dir.join("last.spz")).unwrap().len() > 1000);
    let _ = std::fs::remove_dir_all(&dir);
}
