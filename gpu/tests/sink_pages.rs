//! A sink larger than one buffer is split into pages of whole characters
//! (`GpuSplatSink::paged`), on every device layer: lifts into a sink of several (small, forced)
//! pages write the same bits as into a one-page sink — batched debug lifts grouped per page, and
//! one lift per instance —; a read across pages returns the slots in order; a range that crosses
//! a page boundary is refused with the page size named.

mod common;

use common::{TestDevice, TestResult, msg};
use mien_core::lift::DebugLiftParams;
use mien_core::rig::RigBackend;
use mien_core::sink::{SlotRange, SplatSink};
use mien_core::testing::{RigShape, random_controls, random_rig};
use mien_gpu::{GpuDebugLift, GpuRigBackend, GpuSplatSink};
use proptest::test_runner::TestCaseError;

const N: u32 = 10;
const V: u32 = 100;

/// Pose N instances, lift them into a sink of `page` slots a page (None: one page), read it all.
fn run<G: TestDevice>(ctx: &G, page: Option<u32>, batched: bool) -> Result<Vec<u8>, String> {
    let rig = random_rig(
        21,
        RigShape {
            vertices: V,
            targets: 6,
            density: 0.5,
            joints: 3,
        },
    );
    let mut b = GpuRigBackend::new(ctx);
    let hs = b.upload_batch(&rig, N).map_err(msg)?;
    for (k, h) in hs.iter().enumerate() {
        b.set_controls(*h, &random_controls(40 + k as u64, &rig))
            .map_err(msg)?;
    }
    let mut sink = GpuSplatSink::with_page_slots(ctx, N * V, V, page).map_err(msg)?;
    let ranges: Vec<SlotRange> = (0..N)
        .map(|_| sink.allocate(V))
        .collect::<Result<_, _>>()
        .map_err(msg)?;
    let per_page = (sink.page_slots() / V) as usize;
    let mut lifts = Vec::new();
    if batched {
        for (c, chunk) in ranges.chunks(per_page).enumerate() {
            let parts = b.posed_parts(hs[c * per_page]).map_err(msg)?;
            let p = DebugLiftParams::new(chunk[0], V);
            lifts.push(
                GpuDebugLift::from_parts_batch(ctx, V, &parts, chunk.len() as u32, V, &sink, p)
                    .map_err(msg)?,
            );
        }
    } else {
        for (h, r) in hs.iter().zip(&ranges) {
            let parts = b.posed_parts(*h).map_err(msg)?;
            lifts.push(
                GpuDebugLift::from_parts(ctx, V, &parts, &sink, DebugLiftParams::new(*r, V))
                    .map_err(msg)?,
            );
        }
    }
    let mut enc = ctx.begin().map_err(msg)?;
    b.encode(&mut enc).map_err(msg)?;
    GpuDebugLift::record_batch(&mut lifts, &mut enc, &mut sink).map_err(msg)?;
    ctx.submit(enc).map_err(msg)?;
    let all = sink
        .read(SlotRange {
            offset: 0,
            count: N * V,
        })
        .map_err(msg)?;
    let bytes: Vec<u8> = all
        .center
        .iter()
        .chain(&all.cov_a)
        .chain(&all.cov_b)
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .chain(all.color.iter().flat_map(|c| c.to_le_bytes()))
        .collect();
    Ok(bytes)
}

fn pages_on<G: TestDevice>(ctx: &G) -> TestResult {
    let one = run(ctx, None, false)?;
    // Pages of 3 characters (300 slots; the last holds 1): 4 pages.
    for batched in [false, true] {
        let paged = run(ctx, Some(3 * V + 50), batched)?;
        if paged != one {
            return Err(format!(
                "a sink of 4 pages (batched lifts: {batched}) wrote other bits than one page"
            ));
        }
    }
    // A range crossing a page boundary is refused, naming the page size.
    let mut sink = GpuSplatSink::with_page_slots(ctx, 1000, 1, Some(300)).map_err(msg)?;
    if sink.pages().len() != 4 || sink.page_slots() != 300 {
        return Err(format!(
            "{} pages of {} slots for 1000 slots in pages of 300",
            sink.pages().len(),
            sink.page_slots()
        ));
    }
    let _ = sink.allocate(250).map_err(msg)?;
    let crossing = sink.allocate(100).map_err(msg)?;
    match sink.locate(u64::from(crossing.offset), u64::from(crossing.count)) {
        Err(e) if e.to_string().contains("300 slots a page") => {}
        other => return Err(format!("a range across pages: {:?}", other.map(|x| x.1))),
    }
    Ok(())
}

#[test]
fn a_sink_of_several_pages_writes_the_bits_of_one() -> Result<(), TestCaseError> {
    on_devices!(pages_on);
    Ok(())
}
