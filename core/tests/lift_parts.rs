//! The lift's shared checks: posed parts that tile the vertices in order and read inside their
//! buffers are accepted; a gap, an overlap, a short cover or an overread is refused naming the part.

use mien_core::Error;
use mien_core::lift::parts::{PartExtent, check_parts};
use proptest::prelude::*;

const VB: u64 = 24;

/// Parts of the given sizes tiling `0..Σ`, each at `first` in a buffer exactly large enough.
fn tiling(sizes: &[u32], firsts: &[u32]) -> Vec<PartExtent> {
    let mut v0 = 0;
    sizes
        .iter()
        .zip(firsts)
        .map(|(&count, &first)| {
            let p = PartExtent {
                v0,
                count,
                first,
                posed_bytes: (u64::from(first) + u64::from(count)) * VB,
                tint_bytes: u64::from(count) * 4,
            };
            v0 += count;
            p
        })
        .collect()
}

fn part_named(e: &Error) -> String {
    match e {
        Error::Invalid { what, .. } => what.clone(),
        _ => panic!("expected Invalid: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn tilings_pass_and_every_break_is_named(
        sizes in proptest::collection::vec(1u32..50, 1..6),
        firsts in proptest::collection::vec(0u32..100, 6),
        k in 0usize..6,
    ) {
        let parts = tiling(&sizes, &firsts);
        let nv: u32 = sizes.iter().sum();
        prop_assert!(check_parts(nv, &parts, VB).is_ok());
        let k = k % parts.len();
        // A gap or overlap at part k (k > 0), or a first part not at 0.
        let mut moved = parts.clone();
        moved[k].v0 += 1;
        let e = check_parts(nv, &moved, VB).unwrap_err();
        prop_assert_eq!(part_named(&e), format!("debug lift part {k}"));
        // One vertex past the posed buffer, or one tint short.
        let mut over = parts.clone();
        over[k].posed_bytes -= 1;
        prop_assert_eq!(part_named(&check_parts(nv, &over, VB).unwrap_err()), format!("debug lift part {k}"));
        let mut short = parts.clone();
        short[k].tint_bytes -= 1;
        prop_assert_eq!(part_named(&check_parts(nv, &short, VB).unwrap_err()), format!("debug lift part {k}"));
        // Covering fewer or more vertices than the lift's count.
        prop_assert_eq!(part_named(&check_parts(nv + 1, &parts, VB).unwrap_err()), "debug lift parts");
        prop_assert_eq!(part_named(&check_parts(nv - 1, &parts, VB).unwrap_err()), "debug lift parts");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A batched lift (`check_batch`): accepted exactly when there is at least one instance, the
    /// stride keeps the instances' ranges apart, the last range ends inside the sink and the last
    /// instance's posed vertices lie inside every part's buffer; the span it returns is
    /// `(N−1)·stride + range.count`.
    #[test]
    fn a_batch_is_accepted_exactly_when_it_fits(
        sizes in prop::collection::vec(1u32..50, 1..4),
        instances in 0u32..6,
        stride_extra in -3i64..5,
        offset in 0u32..20,
        spare_slots in -2i64..10,
        posed_spare in -1i64..3,
    ) {
        use mien_core::lift::DebugLiftParams;
        use mien_core::lift::parts::check_batch;
        use mien_core::sink::SlotRange;
        let nv: u32 = sizes.iter().sum();
        let count = nv + 2;
        let stride = (i64::from(count) + stride_extra).max(0) as u32;
        let last = u64::from(instances.saturating_sub(1));
        let span = last * u64::from(stride) + u64::from(count);
        let capacity = (i64::try_from(u64::from(offset) + span).unwrap() + spare_slots).max(0) as u32;
        // Each part's buffer holds `instances + posed_spare` instances of it.
        let held = (i64::from(instances) + posed_spare).max(1) as u64;
        let mut v0 = 0;
        let parts: Vec<PartExtent> = sizes
            .iter()
            .map(|&c| {
                let p = PartExtent { v0, count: c, first: 0, posed_bytes: held * u64::from(c) * VB, tint_bytes: u64::from(c) * 4 };
                v0 += c;
                p
            })
            .collect();
        let params = DebugLiftParams::new(SlotRange { offset, count }, nv);
        let got = check_batch(&params, &parts, instances, stride, capacity, VB);
        let fits = instances >= 1
            && (instances == 1 || stride >= count)
            && u64::from(offset) + span <= u64::from(capacity)
            && held >= u64::from(instances);
        prop_assert_eq!(got.is_ok(), fits, "{:?}", got);
        if let Ok(s) = got {
            prop_assert_eq!(s, span);
        }
    }
}

/// Hand-worked plan: parts of 3 and 2 vertices (at posed vertices 6 and 4) lifted into 8 slots from
/// slot 10, clears in pieces of at most 2 slots: the parts' dispatches, then 15–16 and 17.
#[test]
fn the_planned_pieces_are_the_parts_then_the_clears() {
    use mien_core::lift::DebugLiftParams;
    use mien_core::lift::parts::{PlannedPiece, plan_pieces};
    use mien_core::sink::SlotRange;
    let parts = [
        PartExtent {
            v0: 0,
            count: 3,
            first: 6,
            posed_bytes: 9 * VB,
            tint_bytes: 12,
        },
        PartExtent {
            v0: 3,
            count: 2,
            first: 4,
            posed_bytes: 6 * VB,
            tint_bytes: 8,
        },
    ];
    let params = DebugLiftParams::new(
        SlotRange {
            offset: 10,
            count: 8,
        },
        5,
    );
    let piece = |slot, count, posed_base, posed_stride, part, clear| PlannedPiece {
        slot,
        count,
        posed_base,
        posed_stride,
        part,
        clear,
    };
    assert_eq!(
        plan_pieces(&params, &parts, 2).unwrap(),
        vec![
            piece(10, 3, 6, 3, 0, false),
            piece(13, 2, 4, 2, 1, false),
            piece(15, 2, 0, 0, 0, true),
            piece(17, 1, 0, 0, 0, true),
        ]
    );
    assert!(plan_pieces(&params, &[], 2).is_err());
}
