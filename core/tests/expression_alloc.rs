//! The per-frame path of expression input is allocation-free: `Binding::apply` and
//! `BoundStream::weights_at`, counted with a global allocator that counts this thread's
//! allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use mien_core::anim::canon::{Binding, BoundStream};
use mien_core::io::livelink_csv::read_livelink_csv;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCS.with(Cell::get)
}

#[test]
fn per_frame_path_does_not_allocate() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let stream =
        read_livelink_csv(&data.join("livelinkface/MySlate_3_Jason_Millers_iPhone.csv")).unwrap();
    // Split halves on the character so fan-out routes are on the path too.
    let mut targets: Vec<String> = stream
        .channels
        .iter()
        .filter(|c| *c != "BrowInnerUp")
        .cloned()
        .collect();
    targets.push("browInnerUp_L".into());
    targets.push("browInnerUp_R".into());
    let binding = Binding::new(&stream.channels, &targets);
    assert_eq!(binding.routes().len(), 53);
    let mut weights = vec![0.0f32; targets.len()];
    let mut bound = BoundStream::new(stream.clone(), &targets).unwrap();

    // Sanity: the counter sees allocations at all.
    let before = allocations();
    let v: Vec<u64> = std::hint::black_box(vec![1, 2, 3]);
    assert!(allocations() > before && v.len() == 3);

    let before = allocations();
    let mut sum = 0.0f32;
    for k in 0..2000 {
        let t = f64::from(k) * 0.003 - 0.5;
        bound.weights_at(t, &mut weights);
        binding.apply(
            stream.frame(k as usize % stream.frame_count()),
            &mut weights,
        );
        sum += weights[0];
    }
    assert_eq!(allocations() - before, 0, "the per-frame path allocated");
    assert!(sum.is_finite());
}
