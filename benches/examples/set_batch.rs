//! How long the host takes to set a batch's controls (`mien_shaders::data::rig::set_batch`, the
//! GPU backends' per-frame host work before the writes), serial and parallel, on random rigs
//! shaped like W1 (52 targets, 4 joints) and W6 (no targets, 19 joints):
//! `cargo run --release -p mien-benches --example set_batch [W1|W6] [batch]` (both shapes at
//! batches 16 and 256 without arguments).

use std::time::Instant;

use mien_core::rig::{ControlStats, FrameControls, RigData};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_shaders::data::rig::{RigBatchFrames, set_batch};

fn run(name: &str, rig: &RigData, n: usize) {
    let controls: Vec<_> = (0..8).map(|k| random_controls(k, rig)).collect();
    let mut frames: Vec<FrameControls> = (0..n).map(|_| FrameControls::new(rig)).collect();
    let mut staged = RigBatchFrames::new(rig, n);
    let mut stats = vec![ControlStats::default(); n];
    let which = |k: usize| k % 8;
    for _ in 0..50 {
        set_batch(&mut frames, &mut staged, &controls, &which, &mut stats).unwrap();
    }
    let reps = 500;
    let t = Instant::now();
    for _ in 0..reps {
        set_batch(&mut frames, &mut staged, &controls, &which, &mut stats).unwrap();
    }
    let per = t.elapsed().as_secs_f64() * 1e6 / f64::from(reps);
    println!(
        "{name} batch {n}: {per:.1} µs per set_batch ({} threads)",
        rayon::current_num_threads()
    );
}

fn main() {
    let w1 = random_rig(
        1,
        RigShape {
            vertices: 2000,
            targets: 52,
            density: 0.3,
            joints: 4,
        },
    );
    let w6 = random_rig(
        6,
        RigShape {
            vertices: 3000,
            targets: 0,
            density: 0.0,
            joints: 19,
        },
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    let batches: Vec<usize> = match args.get(1).map(|a| a.parse()) {
        Some(Ok(n)) => vec![n],
        Some(Err(e)) => panic!("batch {:?}: {e}", args[1]),
        None => vec![16, 256],
    };
    let which = args.first().map(|s| s.to_ascii_uppercase());
    for n in batches {
        if which.as_deref().is_none_or(|w| w == "W1") {
            run("W1-like", &w1, n);
        }
        if which.as_deref().is_none_or(|w| w == "W6") {
            run("W6-like", &w6, n);
        }
    }
}
