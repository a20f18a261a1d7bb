//! The hair kernel (`hair.wgsl`, `GpuHairLift`) against the CPU reference
//! (`mien_core::hair::strand_splats`) within the derived bound (`mien_core::hair::splat_bounds`):
//! random grown grooms with moved guides in batches of instances, and Sintel's two real TressFX
//! grooms (228 guides with children, and the full 11,400 strands); on every device layer (wgpu, and
//! Vulkan under the validation layer). Also what the stage refuses.

mod common;

use std::sync::Arc;

use common::{TestDevice, config, msg};
use mien_core::hair::{
    Groom, GroomDef, HairColourDef, TfxGroomOptions, read_tfx, splat_bounds, strand_splats,
};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_gpu::{GpuHairData, GpuHairLift, GpuSplatSink};
use proptest::prelude::*;

const POISON: u32 = 0x7FC0_0001;

fn groom_def(guides: usize, children: usize, segments: usize, clump: f64, seed: u64) -> GroomDef {
    let text = format!(
        r#"{{"format":"mien-groom","version":1,"head_bone":"Head",
        "scalp":{{"center":[0,0.1,0],"radii":[0.09,0.1,0.1]}},
        "guides":{guides},"children_per_guide":{children},"segments":{segments},"length":0.3,
        "clump":{clump},"thickness":[0.002,0.0005],
        "colour":{{"root":[0.2,0.1,0.05],"tip":[0.9,0.7,0.4],"variation":0.2}},"seed":{seed}}}"#
    );
    GroomDef::from_json(&text, "test").unwrap()
}

/// Instance `i`'s guides: the rest groom moved by a smooth per-point offset (as a simulation
/// would), placed `i` metres along x.
fn moved(groom: &Groom, i: usize, amp: f32) -> Vec<[f32; 3]> {
    groom
        .guides
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let t = j as f32 * 0.37 + i as f32;
            [
                p[0] + amp * t.sin() + i as f32,
                p[1] + amp * (1.3 * t).cos(),
                p[2] - amp * (0.7 * t).sin(),
            ]
        })
        .collect()
}

/// Draw `instances` sets of guides on the device, slots `offset + z·stride`; the whole sink back.
fn draw<G: TestDevice>(
    g: &G,
    groom: &Arc<Groom>,
    guides: &[Vec<[f32; 3]>],
    offset: u32,
    stride: u32,
) -> mien_core::Result<(SplatBuffers, u32, Option<mien_gpu::StageTimes>)> {
    let data = GpuHairData::upload(g, groom.clone())?;
    let n = guides.len() as u32;
    let count = data.slots();
    let capacity = offset + (n - 1) * stride + count + 7;
    let mut sink = GpuSplatSink::new(g, capacity)?;
    sink.fill(POISON)?;
    if offset > 0 {
        sink.allocate(offset)?;
    }
    let range = sink.allocate((n - 1) * stride + count)?;
    let range = SlotRange {
        offset: range.offset,
        count,
    };
    let mut lift = GpuHairLift::new(g, data, &sink, range, n, stride)?;
    for (z, gz) in guides.iter().enumerate() {
        lift.set_guides(z as u32, gz)?;
    }
    let mut enc = g.begin().map_err(Into::into)?;
    GpuHairLift::record_batch(std::slice::from_mut(&mut lift), &mut enc, &mut sink)?;
    g.end_frame(&mut enc);
    g.submit(enc).map_err(Into::into)?;
    g.wait().map_err(Into::into)?;
    let times = g.stage_times().map_err(Into::into)?;
    let all = sink.read(SlotRange {
        offset: 0,
        count: capacity,
    })?;
    Ok((all, capacity, times))
}

/// Every slot of every instance within the bound of the reference; slots outside untouched.
/// Returns the largest difference as a fraction of its bound.
fn compare(
    groom: &Groom,
    guides: &[Vec<[f32; 3]>],
    got: &SplatBuffers,
    offset: u32,
    stride: u32,
) -> Result<f64, String> {
    let count = groom.child_count() * groom.segments;
    let mut worst = 0.0f64;
    let mut written = vec![false; got.len()];
    for (z, gz) in guides.iter().enumerate() {
        let mut want = SplatBuffers::new(count as u32);
        strand_splats(groom, gz, &mut want, 0).map_err(msg)?;
        let bounds = splat_bounds(groom, gz).map_err(msg)?;
        let base = offset as usize + z * stride as usize;
        for i in 0..count {
            let s = base + i;
            written[s] = true;
            let (bc, bv) = bounds[i];
            for j in 0..3 {
                let d = f64::from((got.center[s][j] - want.center[i][j]).abs());
                if d > bc {
                    return Err(format!(
                        "instance {z} slot {i} centre[{j}]: {} vs {} (bound {bc:e})",
                        got.center[s][j], want.center[i][j]
                    ));
                }
                worst = worst.max(d / bc);
            }
            let gc = [
                got.cov_a[s][0],
                got.cov_a[s][1],
                got.cov_a[s][2],
                got.cov_a[s][3],
                got.cov_b[s][0],
                got.cov_b[s][1],
            ];
            let wc = [
                want.cov_a[i][0],
                want.cov_a[i][1],
                want.cov_a[i][2],
                want.cov_a[i][3],
                want.cov_b[i][0],
                want.cov_b[i][1],
            ];
            for j in 0..6 {
                let d = f64::from((gc[j] - wc[j]).abs());
                if d > bv {
                    return Err(format!(
                        "instance {z} slot {i} covariance[{j}]: {:e} vs {:e} (bound {bv:e})",
                        gc[j], wc[j]
                    ));
                }
                worst = worst.max(d / bv);
            }
            let (a, b) = (got.color[s].to_le_bytes(), want.color[i].to_le_bytes());
            for j in 0..4 {
                if a[j].abs_diff(b[j]) > 1 {
                    return Err(format!(
                        "instance {z} slot {i} colour byte {j}: {} vs {}",
                        a[j], b[j]
                    ));
                }
            }
        }
    }
    for (s, w) in written.iter().enumerate() {
        if !w && got.color[s] != POISON {
            return Err(format!(
                "slot {s} outside every instance's range was written"
            ));
        }
    }
    Ok(worst)
}

fn random_case<G: TestDevice>(
    g: &G,
    groom: &Arc<Groom>,
    instances: usize,
    amp: f32,
    offset: u32,
    gap: u32,
) -> Result<(), String> {
    let guides: Vec<Vec<[f32; 3]>> = (0..instances).map(|i| moved(groom, i, amp)).collect();
    let stride = (groom.child_count() * groom.segments) as u32 + gap;
    let (got, _, _) = draw(g, groom, &guides, offset, stride).map_err(msg)?;
    compare(groom, &guides, &got, offset, stride).map(|_| ())
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn strands_equal_the_cpu_reference_within_the_bound(
        guides in 1usize..40,
        children in 1usize..9,
        segments in 1usize..25,
        clump in 0.0f64..=1.0,
        seed in any::<u64>(),
        instances in 1usize..4,
        amp in prop_oneof![Just(0.0f32), 0.0f32..0.05],
        offset in 0u32..70,
        gap in 0u32..9,
    ) {
        let groom = Arc::new(groom_def(guides, children, segments, clump, seed).build().unwrap());
        on_devices!(random_case, &groom, instances, amp, offset, gap);
    }
}

fn colour() -> HairColourDef {
    HairColourDef {
        root: [0.35, 0.2, 0.08],
        tip: [0.8, 0.6, 0.3],
        variation: 0.1,
    }
}

fn sintel(file: &str, segments: usize, children: usize, scale: f64) -> Option<Arc<Groom>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/hair")
        .join(file);
    if !path.exists() {
        eprintln!("notice: {} missing, skipped", path.display());
        return None;
    }
    let tfx = read_tfx(&path).unwrap();
    let options = TfxGroomOptions {
        head_bone: "head".into(),
        segments,
        children_per_guide: children,
        scale,
        origin: [0.0; 3],
        clump: 0.3,
        thickness: [0.0015, 0.0004],
        colour: colour(),
        seed: 7,
    };
    Some(Arc::new(Groom::from_tfx(&tfx, &options).unwrap()))
}

fn real_case<G: TestDevice>(g: &G, groom: &Arc<Groom>, what: &str) -> Result<(), String> {
    let guides = vec![moved(groom, 0, 0.01), moved(groom, 1, 0.02)];
    let stride = (groom.child_count() * groom.segments) as u32;
    let (got, _, times) = draw(g, groom, &guides, 3, stride).map_err(msg)?;
    let worst = compare(groom, &guides, &got, 3, stride)?;
    // The pass is timed as the hair stage, not the lift's (where the device has timestamps).
    if let Some(t) = times {
        if !(t.hair_ms > 0.0 && t.lift_ms == 0.0 && t.morph_ms == 0.0) {
            return Err(format!("{} {what}: stage times {t:?}", G::NAME));
        }
    }
    eprintln!(
        "{} {what}: {} strands × {} segments × 2 instances, largest difference {worst:.3} of the bound, hair stage {}",
        G::NAME,
        groom.child_count(),
        groom.segments,
        times.map_or("untimed (no timestamp queries)".into(), |t| format!(
            "{:.3} ms",
            t.hair_ms
        ))
    );
    Ok(())
}

#[test]
fn sintels_real_grooms_equal_the_cpu_reference() -> Result<(), TestCaseError> {
    // The 228 guides (centimetres) resampled to 24 segments with 16 children each; the full groom
    // (metres) as its 11,400 strands of 15 segments.
    if let Some(guides) = sintel("sintel_hair_rust_vulkan_tressfx.tfx", 24, 16, 0.01) {
        on_devices!(real_case, &guides, "Sintel 228 guides");
    }
    if let Some(full) = sintel("sintel_hair_frostbitten_16points.tfx", 15, 1, 1.0) {
        assert_eq!(full.child_count(), 11_400);
        on_devices!(real_case, &full, "Sintel full groom");
    }
    Ok(())
}

fn refusals<G: TestDevice>(g: &G) -> Result<(), String> {
    let groom = Arc::new(groom_def(6, 2, 4, 0.3, 1).build().unwrap());
    let data = GpuHairData::upload(g, groom.clone()).map_err(msg)?;
    let count = data.slots();
    let mut sink = GpuSplatSink::new(g, 2 * count).map_err(msg)?;
    let range = SlotRange { offset: 0, count };
    // Not allocated yet.
    let e = GpuHairLift::new(g, data.clone(), &sink, range, 1, 0).unwrap_err();
    if !e.to_string().contains("not (or no longer) allocated") {
        return Err(format!("unallocated: {e}"));
    }
    sink.allocate(2 * count).map_err(msg)?;
    // A range of another size than C·S.
    let short = SlotRange {
        offset: 0,
        count: count - 1,
    };
    let e = GpuHairLift::new(g, data.clone(), &sink, short, 1, 0).unwrap_err();
    if !e.to_string().contains(&format!("for a groom of {count}")) {
        return Err(format!("short range: {e}"));
    }
    // Instances overlapping, and running past the sink.
    let e = GpuHairLift::new(g, data.clone(), &sink, range, 2, count - 1).unwrap_err();
    if !e.to_string().contains("overlap") {
        return Err(format!("overlap: {e}"));
    }
    let e = GpuHairLift::new(g, data.clone(), &sink, range, 3, count).unwrap_err();
    if !e.to_string().contains("past the sink") {
        return Err(format!("past the sink: {e}"));
    }
    let mut lift = GpuHairLift::new(g, data, &sink, range, 2, count).map_err(msg)?;
    // Wrong point count, a non-finite point, an instance past the batch.
    let mut pts = groom.guides.clone();
    if lift.set_guides(0, &pts[1..]).is_ok() {
        return Err("short guides accepted".into());
    }
    pts[5][1] = f32::NAN;
    let e = lift.set_guides(1, &pts).unwrap_err();
    if !e.to_string().contains("guide point 5") {
        return Err(format!("NaN: {e}"));
    }
    if lift.set_guides(2, &groom.guides).is_ok() {
        return Err("instance past the batch accepted".into());
    }
    // A child table naming a guide the groom lacks.
    let mut bad = (*groom).clone();
    bad.child_guides[3][2] = 99;
    let e = GpuHairData::upload(g, Arc::new(bad)).unwrap_err();
    if !e.to_string().contains("child 3") {
        return Err(format!("bad child: {e}"));
    }
    Ok(())
}

#[test]
fn the_stage_refuses_what_would_draw_the_wrong_slots() -> Result<(), TestCaseError> {
    on_devices!(refusals);
    Ok(())
}
