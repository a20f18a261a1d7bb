//! A frame whose decoders have nothing to do allocates nothing for the appearance (seed 000
//! `update(dt, camera)`: "cheap and allocation-free when nothing changed"): the same bundle with
//! and without its decoders allocates the same number of times per steady update. Its own test
//! binary: a counting global allocator sees every allocation of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mien_runtime::{Camera, CharacterDef, Device, Runtime, RuntimeOptions};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: a pointer this allocator (the system's) returned.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn allocations_per_update(manifest: &Path) -> (u64, u64) {
    let ch = CharacterDef::load(manifest).unwrap();
    let opts = RuntimeOptions {
        instances: 2,
        lift: Some(ch.lift_options()),
    };
    let mut rt = Runtime::new(Arc::new(ch.asset.clone()), &Device::Cpu, &opts).unwrap();
    rt.set_camera(Camera::look_at([0.0, 0.0, 0.6], [0.0; 3], 0.6).unwrap())
        .unwrap();
    for k in 0..3 {
        rt.update(f64::from(k)).unwrap();
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for k in 0..10 {
        rt.update(5.0 + f64::from(k)).unwrap();
    }
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    (n, rt.appearance_stats().map_or(0, |s| s.decodes))
}

#[test]
fn a_steady_frame_allocates_nothing_for_the_decoders() {
    let lib = mien_runtime::decoder::library_path();
    let Some(lib) = lib else {
        assert!(
            std::env::var("MIEN_REQUIRE_ORT").as_deref() != Ok("1"),
            "no ONNX Runtime"
        );
        eprintln!("skipped: no ONNX Runtime");
        return;
    };
    mien_runtime::decoder::Ort::load_from(lib).unwrap();
    let dir = std::env::temp_dir().join(format!("mien-bundle-alloc-{}", std::process::id()));
    let manifest = match mien_runtime::bundle::make_test_bundle(&data("ict-facekit"), &dir) {
        Ok(m) => m,
        Err(e) if std::env::var("MIEN_REQUIRE_ORT").as_deref() != Ok("1") => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    // The same branches without decoders.
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m.as_object_mut().unwrap().remove("decoders");
    for b in m["branches"].as_array_mut().unwrap() {
        b.as_object_mut().unwrap().remove("decoders");
    }
    let plain = dir.join("plain.character.json");
    std::fs::write(&plain, m.to_string()).unwrap();
    let (with, decodes) = allocations_per_update(&manifest);
    let (without, _) = allocations_per_update(&plain);
    assert_eq!(
        decodes, 4,
        "2 instances × 2 decoded branches, first frame only"
    );
    // The rest of the frame allocates a little (the same with and without decoders, within an
    // amortised growth); a decoder pass that allocated would add at least one per update.
    assert!(
        with <= without,
        "allocations over 10 steady updates: {with} with decoders, {without} without"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
