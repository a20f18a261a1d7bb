//! Staging a whole batch at once (`write_all`, parallel from 32 instances) gives the same arrays as
//! staging each instance with `write` then packing, for morph rigs (the active slots and their
//! weights packed per block of 8, checked by hand) and linear heads, below and
//! above the parallel threshold; `set_batch` refuses a bad control set before changing anything.

use mien_core::gnm::GnmFrame;
use mien_core::rig::{ControlStats, FrameControls};
use mien_core::testing::gnm::{GnmShape, random_gnm_pack, random_head_ext, random_joint_world};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_shaders::data::gnm::{GnmBatchFrames, set_gnm_batch};
use mien_shaders::data::rig::{RigBatchFrames, set_batch};

#[test]
fn rig_batches_stage_the_same_arrays_at_once() {
    for (targets, joints) in [(0u32, 1u32), (13, 3)] {
        let rig = random_rig(
            3,
            RigShape {
                vertices: 40,
                targets,
                density: 0.4,
                joints,
            },
        );
        for n in [1usize, 7, 8, 9, 40, 77] {
            let frames: Vec<FrameControls> = (0..n)
                .map(|i| {
                    let mut f = FrameControls::new(&rig);
                    f.set(&random_controls(i as u64 + 1, &rig)).unwrap();
                    f
                })
                .collect();
            let mut one = RigBatchFrames::new(&rig, n);
            for (i, f) in frames.iter().enumerate() {
                one.write(i, f);
            }
            one.pack();
            let mut all = RigBatchFrames::new(&rig, n);
            all.write_all(&frames);
            assert_eq!(one, all, "{targets} targets, {n} instances");
            // The packed layout, by hand from the frames: block b's slots are the list entries
            // off[b] .. off[b+1] (after the ⌈N/8⌉ + 1 offsets), those with a non-zero weight for one
            // of its instances, ascending; entry k's 8 weights are instances 8b..8b+8 (0 past N).
            let w = targets as usize;
            let blocks = n.div_ceil(8);
            let list = &all.active[blocks + 1..];
            assert_eq!(all.active[0], 0);
            for (b, fs) in frames.chunks(8).enumerate() {
                let want: Vec<u32> = (0..w)
                    .filter(|&t| fs.iter().any(|f| f.weights[t] != 0.0))
                    .map(|t| t as u32)
                    .collect();
                let (o0, o1) = (all.active[b] as usize, all.active[b + 1] as usize);
                assert_eq!(&list[o0..o1], &want[..], "block {b}");
                for (k, &t) in want.iter().enumerate() {
                    for j in 0..8 {
                        let x = fs.get(j).map_or(0.0, |f| f.weights[t as usize]);
                        assert_eq!(all.weights[8 * (o0 + k) + j].to_bits(), x.to_bits());
                    }
                }
            }
            assert_eq!(list.len(), all.active[blocks] as usize);
            assert_eq!(all.weights.len(), 8 * list.len());
            assert!(all.active.len() <= all.active_capacity());
            assert!(all.weights.len() <= all.weights_capacity());
            for (i, f) in frames.iter().enumerate() {
                assert_eq!(all.row(i), &f.weights[..]);
            }
        }
    }
}

#[test]
fn restaging_an_instance_with_fewer_active_targets_shrinks_its_block() {
    let rig = random_rig(
        9,
        RigShape {
            vertices: 20,
            targets: 10,
            density: 0.5,
            joints: 1,
        },
    );
    // A random rig leaves one target without deltas; it takes no active slot.
    let live: Vec<u32> = (0..10).filter(|t| rig.morph_target.contains(t)).collect();
    assert_eq!(live.len(), 9);
    let mut f = FrameControls::new(&rig);
    let mut c = random_controls(1, &rig);
    c.weights = vec![0.5; 10];
    f.set(&c).unwrap();
    let mut staged = RigBatchFrames::new(&rig, 3);
    assert_eq!(staged.active, [0, 0]);
    staged.write(1, &f);
    staged.pack();
    let mut want = vec![0, live.len() as u32];
    want.extend(&live);
    assert_eq!(staged.active, want);
    assert_eq!(
        &staged.weights[..8],
        &[0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    // −0.0 is inactive (the kernel's own `!= 0.0` test); only slots 2 and 7 stay.
    c.weights = vec![0.0; 10];
    c.weights[2] = 1.0;
    c.weights[4] = -0.0;
    c.weights[7] = -0.25;
    f.set(&c).unwrap();
    staged.write(1, &f);
    staged.pack();
    assert_eq!(staged.active, [0, 2, 2, 7]);
    assert_eq!(
        staged.weights,
        [
            0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        ]
    );
}

#[test]
fn a_refused_control_set_changes_no_instance() {
    let rig = random_rig(
        4,
        RigShape {
            vertices: 30,
            targets: 6,
            density: 0.5,
            joints: 2,
        },
    );
    // 5: serial; 40 and 100: parallel sets, serial checks (2 palette entries each: under
    // `CHECK_PARALLEL_ENTRIES`); 1100: the checks in parallel too.
    for n in [5usize, 40, 100, 1100] {
        let mut frames: Vec<FrameControls> = (0..n).map(|_| FrameControls::new(&rig)).collect();
        let mut staged = RigBatchFrames::new(&rig, n);
        let before = staged.clone();
        let mut ring: Vec<_> = (0..3).map(|i| random_controls(i + 7, &rig)).collect();
        ring[2].palette[0] = glam::Mat4::from_cols_array(&[f32::NAN; 16]);
        ring[1].palette[1] = glam::Mat4::from_cols_array(&[f32::INFINITY; 16]);
        let mut stats = vec![ControlStats::default(); n];
        let which = |k: usize| k % 3;
        let e = set_batch(&mut frames, &mut staged, &ring, &which, &mut stats).unwrap_err();
        // The first refusal in instance order: instance 1's palette[1].
        assert!(e.to_string().contains("palette[1]"), "{n} instances: {e}");
        assert_eq!(staged, before, "{n} instances");
        assert!(frames.iter().all(|f| f.weights.iter().all(|w| *w == 0.0)));
    }
}

#[test]
fn head_batches_stage_the_same_arrays_at_once() {
    for coeffs in [1u32, 23] {
        let pack = random_gnm_pack(
            6,
            GnmShape {
                vertices: 30,
                coeffs,
                regions: 1,
                joints: 3,
                seam: false,
            },
        );
        let rest = GnmFrame::new(&pack);
        for n in [1usize, 9, 33, 50] {
            let frames: Vec<GnmFrame> = (0..n)
                .map(|i| {
                    let mut f = rest.clone();
                    let s = i as u64 + 11;
                    f.set(&random_head_ext(s, &pack), &random_joint_world(s, &pack))
                        .unwrap();
                    f
                })
                .collect();
            let mut one = GnmBatchFrames::new(&rest, n);
            for (i, f) in frames.iter().enumerate() {
                one.write(i, f);
            }
            let mut all = GnmBatchFrames::new(&rest, n);
            all.write_all(&frames);
            assert_eq!(one, all, "{coeffs} coefficients, {n} instances");
        }
    }
}

/// `set_batch` (one rayon pass per block of 8 from 32 instances) leaves the same frames, counts and
/// staged arrays as setting and staging every instance alone, then packing.
#[test]
fn setting_a_batch_equals_setting_each_instance() {
    for (targets, joints) in [(0u32, 2u32), (40, 3)] {
        let rig = random_rig(
            11,
            RigShape {
                vertices: 50,
                targets,
                density: 0.4,
                joints,
            },
        );
        let ring: Vec<_> = (0..5).map(|i| random_controls(i + 30, &rig)).collect();
        let which = |k: usize| (3 * k + 1) % 5;
        for n in [3usize, 32, 77] {
            let mut frames: Vec<FrameControls> = (0..n).map(|_| FrameControls::new(&rig)).collect();
            let mut staged = RigBatchFrames::new(&rig, n);
            let mut stats = vec![ControlStats::default(); n];
            set_batch(&mut frames, &mut staged, &ring, &which, &mut stats).unwrap();
            let mut one = RigBatchFrames::new(&rig, n);
            for k in 0..n {
                let mut f = FrameControls::new(&rig);
                let s = f.set(&ring[which(k)]).unwrap();
                assert_eq!(s, stats[k], "{n} instances: counts of {k}");
                assert_eq!(f.weights, frames[k].weights);
                one.write(k, &f);
            }
            one.pack();
            assert_eq!(one, staged, "{targets} targets, {n} instances");
        }
    }
}

/// `set_gnm_batch` (one rayon pass setting and staging each instance from 32 instances) leaves the
/// same frames and staged arrays as setting and staging every instance alone; a refused input
/// changes nothing.
#[test]
fn setting_a_head_batch_equals_setting_each_instance() {
    for coeffs in [1u32, 23] {
        let pack = random_gnm_pack(
            8,
            GnmShape {
                vertices: 30,
                coeffs,
                regions: 1,
                joints: 3,
                seam: false,
            },
        );
        let rest = GnmFrame::new(&pack);
        let inputs: Vec<_> = (0..5u64)
            .map(|s| {
                (
                    random_head_ext(s + 40, &pack),
                    random_joint_world(s + 40, &pack),
                )
            })
            .collect();
        let which = |k: usize| (3 * k + 2) % 5;
        // 3: serial; 32, 77: one parallel pass; 1300 × 27 values (23 coefficients): the checks
        // in parallel too.
        for n in [3usize, 32, 77, 1300] {
            let mut frames = vec![rest.clone(); n];
            let mut staged = GnmBatchFrames::new(&rest, n);
            let input = |k: usize| {
                let (h, j) = &inputs[which(k)];
                (&h[..], &j[..])
            };
            set_gnm_batch(&mut frames, &mut staged, &input).unwrap();
            let mut one = GnmBatchFrames::new(&rest, n);
            for (k, got) in frames.iter().enumerate() {
                let mut f = rest.clone();
                let (h, j) = &inputs[which(k)];
                f.set(h, j).unwrap();
                assert_eq!(f.scaled, got.scaled, "{n} instances: coefficients of {k}");
                one.write(k, &f);
            }
            assert_eq!(one, staged, "{coeffs} coefficients, {n} instances");
            // A non-finite coefficient for one instance: refused, nothing changed.
            let mut bad = inputs.clone();
            bad[which(0)].0[0] = f32::NAN;
            let before = (frames.clone(), staged.clone());
            let input = |k: usize| {
                let (h, j) = &bad[which(k)];
                (&h[..], &j[..])
            };
            assert!(set_gnm_batch(&mut frames, &mut staged, &input).is_err());
            assert_eq!(staged, before.1, "{n} instances: staged after a refusal");
            assert!(
                frames
                    .iter()
                    .zip(&before.0)
                    .all(|(a, b)| a.scaled == b.scaled),
                "{n} instances: frames after a refusal"
            );
        }
    }
}
