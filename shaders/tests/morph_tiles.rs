//! The morph kernel's re-laid entries (`chunk_arrays`): per 64-vertex tile and weight slot, the
//! lookup `[first, mask lo, mask hi]` finds exactly the rig's entry of every (vertex, slot) pair
//! — the lane's entry at `first + popcount(mask below the lane)` holds that entry's deltas — and
//! no entry is lost or invented; chunks are planned so the slot table fits the binding limit.

use mien_core::rig::RigData;
use mien_core::testing::{RigShape, random_rig};
use mien_shaders::data::rig::plan_rig_chunks;
use mien_shaders::data::{MORPH_TILE_VERTICES, chunk_arrays};
use proptest::prelude::*;

/// The deltas the lookup finds for tile position `l` and slot `t`, if its mask bit is set (the
/// kernel's arithmetic, written out in u64).
fn lookup(a: &mien_shaders::data::ChunkArrays, w: usize, l: usize, t: usize) -> Option<[f32; 6]> {
    let tile = l / MORPH_TILE_VERTICES as usize;
    let lane = l % MORPH_TILE_VERTICES as usize;
    let [first, lo, hi, pad] = a.tile_slots[tile * w + t];
    assert_eq!(pad, 0);
    let mask = u64::from(lo) | (u64::from(hi) << 32);
    if mask >> lane & 1 == 0 {
        return None;
    }
    let rank = (mask & ((1u64 << lane) - 1)).count_ones();
    let e = 6 * (first + rank) as usize;
    Some(a.deltas[e..e + 6].try_into().unwrap())
}

fn row_entry(rig: &RigData, v: usize, t: usize) -> Option<[f32; 6]> {
    let row = rig.morph_offsets[v] as usize..rig.morph_offsets[v + 1] as usize;
    row.into_iter()
        .find(|&e| rig.morph_target[e] as usize == t)
        .map(|e| {
            let (p, n) = (rig.morph_position[e], rig.morph_normal[e]);
            [p[0], p[1], p[2], n[0], n[1], n[2]]
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_tile_slot_lookup_finds_the_rows_entry(
        v in 1u32..300, t in 0u32..90, density in 0.0f32..0.9, seed: u64, limit in 2048u64..40_000,
    ) {
        let rig = random_rig(seed, RigShape { vertices: v, targets: t, density, joints: 2 });
        rig.validate().unwrap();
        let w = t as usize;
        let plan = plan_rig_chunks(&rig, 1, limit.max(16 * u64::from(t))).unwrap();
        let mut found = 0usize;
        for (v0, count) in plan {
            let a = chunk_arrays(&rig, v0, count);
            let tiles = count.div_ceil(MORPH_TILE_VERTICES) as usize;
            prop_assert_eq!(a.tile_slots.len(), (tiles * w).max(1));
            prop_assert!(16 * a.tile_slots.len() as u64 <= limit.max(16 * u64::from(t)));
            let nnz = (rig.morph_offsets[(v0 + count) as usize] - rig.morph_offsets[v0 as usize]) as usize;
            prop_assert_eq!(a.deltas.len(), 6 * nnz);
            for l in 0..count as usize {
                let v = v0 as usize + l;
                for s in 0..w {
                    let got = lookup(&a, w, l, s);
                    prop_assert_eq!(got, row_entry(&rig, v, s), "vertex {} slot {}", v, s);
                    found += usize::from(got.is_some());
                }
            }
            // Masks only name the chunk's own vertices.
            for (k, ts) in a.tile_slots.chunks(w.max(1)).enumerate() {
                let lanes = (count as usize - k * 64).min(64);
                for x in ts {
                    let mask = u64::from(x[1]) | (u64::from(x[2]) << 32);
                    prop_assert!(lanes == 64 || mask >> lanes == 0);
                }
            }
        }
        prop_assert_eq!(found, rig.morph_target.len());
    }
}

#[test]
fn a_tile_of_slot_table_over_the_limit_is_refused() {
    let rig = random_rig(
        1,
        RigShape {
            vertices: 10,
            targets: 100,
            density: 0.1,
            joints: 1,
        },
    );
    // 100 slots × 16 bytes = 1600 bytes per tile.
    let e = plan_rig_chunks(&rig, 1, 1599).unwrap_err();
    assert_eq!(e.bytes, 1600);
    // A limit of 2 tiles' tables (200 slots × 16 bytes = 3200 a tile) chunks 300 vertices into
    // ranges of at most 128 (the interleaved skin words, 32 bytes a vertex, would allow 200).
    let rig = random_rig(
        2,
        RigShape {
            vertices: 300,
            targets: 200,
            density: 0.0,
            joints: 1,
        },
    );
    let plan = plan_rig_chunks(&rig, 1, 6400).unwrap();
    assert_eq!(plan, [(0, 128), (128, 128), (256, 44)]);
    // A rig without tangents binds its joints and weights interleaved, 32 bytes a vertex: at a
    // limit of 3200 that caps a chunk at 100 vertices, under the tables' 2 tiles.
    let rig = random_rig(
        2,
        RigShape {
            vertices: 300,
            targets: 100,
            density: 0.0,
            joints: 1,
        },
    );
    let plan = plan_rig_chunks(&rig, 1, 3200).unwrap();
    assert_eq!(plan, [(0, 100), (100, 100), (200, 100)]);
}
