//! Criterion benches of hair and cloth (issue 27 item 6, the CPU parts so far): the built-in
//! body's groom (320 guides, 11,200 strands, 12 segments) — one simulation frame of its guides,
//! and its strands turned into gaussians — Sintel's full TressFX groom (11,400 strands × 16
//! points) turned into gaussians as its own guides, and one frame of a cape of 285 vertices (the
//! seed's own figure: a 320-guide, 11,200-strand groom and a 285-vertex cape updated in 676 µs).
//!
//! ```sh
//! cargo bench -p mien-benches --bench hair        # MIEN_DATA=DIR reads the inputs from DIR
//! ```

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::{DMat4, DQuat, DVec3};
use mien_core::cloth::{Cloth, ClothCapsule, ClothMaterial};
use mien_core::hair::{GroomDef, HairSim, HairSimOptions, read_tfx, strand_splats};
use mien_core::sink::SplatBuffers;
/// `$MIEN_DATA/rel`, else `../shared/data/rel` beside the repository
/// ([`mien_benches::workloads::data_dir`]).
fn data(rel: &str) -> PathBuf {
    mien_benches::workloads::data_dir().join(rel)
}

fn head(t: f64) -> DMat4 {
    DMat4::from_rotation_translation(
        DQuat::from_rotation_y(0.6 * (std::f64::consts::TAU * t).sin()),
        DVec3::new(0.0, 1.46, 1.2 * t),
    )
}

fn hair(c: &mut Criterion) {
    // Embedded, so the bench binary runs from any folder (the GPU host's checkout).
    let text = include_str!("../../docs/grooms/builtin_body.groom.json");
    let groom = GroomDef::from_json(text, "builtin_body.groom.json")
        .unwrap()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("hair");
    let mut sim = HairSim::new(&groom.guides, groom.segments, HairSimOptions::default()).unwrap();
    let mut t = 0.0;
    sim.update(0.0, head(0.0), &[]).unwrap();
    g.throughput(Throughput::Elements(groom.guide_count() as u64));
    g.bench_function("guides_320_sim_frame_60hz", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            sim.update(1.0 / 60.0, head(t), &[]).unwrap()
        });
    });
    let n = groom.child_count() * groom.segments;
    let mut out = SplatBuffers::new(n as u32);
    let guides: Vec<[f32; 3]> = sim
        .points()
        .iter()
        .map(|p| p.as_vec3().to_array())
        .collect();
    g.throughput(Throughput::Elements(groom.child_count() as u64));
    g.bench_function("strands_11200_to_splats", |b| {
        b.iter(|| strand_splats(&groom, &guides, &mut out, 0).unwrap());
    });
    // A cape of 15 × 19 = 285 vertices behind the body, an arm capsule swinging by it.
    let (nx, ny) = (15usize, 19usize);
    let rest: Vec<[f32; 3]> = (0..ny)
        .flat_map(|j| {
            (0..nx).map(move |i| {
                [
                    -0.2 + 0.4 * i as f32 / 14.0,
                    1.35 - 0.8 * j as f32 / 18.0,
                    -0.15,
                ]
            })
        })
        .collect();
    let mut tris = Vec::new();
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            let a = (j * nx + i) as u32;
            tris.push([a, a + nx as u32, a + 1]);
            tris.push([a + 1, a + nx as u32, a + nx as u32 + 1]);
        }
    }
    let mut cape = Cloth::new(&rest, &tris, 0.001, [0.0, 0.3], ClothMaterial::default()).unwrap();
    let mut t = 0.0;
    g.throughput(Throughput::Elements(rest.len() as u64));
    g.bench_function("cape_285_frame_60hz", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            let m = head(t) * DMat4::from_translation(DVec3::new(0.0, -1.46, 0.0));
            let places: Vec<DVec3> = rest
                .iter()
                .map(|p| m.transform_point3(DVec3::from(p.map(f64::from))))
                .collect();
            let arm = ClothCapsule {
                a: m.transform_point3(DVec3::new(0.2, 1.3, -0.3 * (3.0 * t).sin())),
                b: m.transform_point3(DVec3::new(0.2, 0.9, -0.3 * (3.0 * t).sin())),
                radius: 0.05,
            };
            cape.update(1.0 / 60.0, &places, &[arm], DVec3::new(1.0, 0.0, 0.0))
                .unwrap()
        });
    });
    if data("hair/sintel_hair_frostbitten_16points.tfx").exists() {
        let tfx = read_tfx(&data("hair/sintel_hair_frostbitten_16points.tfx")).unwrap();
        // The full groom as its own guides: one child per strand, weighted wholly on it.
        let s = tfx.points_per_strand - 1;
        let full = mien_core::hair::Groom {
            head_bone: "head".into(),
            segments: s,
            guides: tfx.positions.clone(),
            child_guides: (0..tfx.strands as u32).map(|i| [i, i, i]).collect(),
            child_weights: vec![[1.0, 0.0, 0.0]; tfx.strands],
            child_tint: vec![1.0; tfx.strands],
            clump: 0.0,
            thickness: [0.05, 0.02],
            colour: [[0.3, 0.2, 0.1], [0.5, 0.35, 0.2]],
            report: Default::default(),
        };
        let mut out = SplatBuffers::new((tfx.strands * s) as u32);
        g.throughput(Throughput::Elements(tfx.strands as u64));
        g.bench_function("sintel_11400x16_to_splats", |b| {
            b.iter(|| strand_splats(&full, &tfx.positions, &mut out, 0).unwrap());
        });
        #[cfg(feature = "vulkan")]
        gpu::strands(&mut g, "sintel_11400x16", &full, 1);
    }
    #[cfg(feature = "vulkan")]
    {
        gpu::strands(&mut g, "builtin_11200x12", &groom, 1);
        gpu::strands(&mut g, "builtin_11200x12_x64", &groom, 64);
    }
    g.finish();
}

/// The strands-to-splats kernel on a Vulkan device (`--features vulkan`): per iteration the
/// guides of `n` characters uploaded, one dispatch recorded, submitted and waited for (wall
/// time); the kernel's own GPU time from the `hair` stage's timestamps is printed after.
#[cfg(feature = "vulkan")]
mod gpu {
    use std::sync::Arc;

    use criterion::{Throughput, measurement::WallTime};
    use mien_core::hair::Groom;
    use mien_core::sink::{SlotRange, SplatSink};
    use mien_gpu::{GpuDevice, GpuHairData, GpuHairLift, GpuSplatSink};
    use mien_vulkan::{ContextOptions, VulkanContext};

    pub fn strands(
        g: &mut criterion::BenchmarkGroup<'_, WallTime>,
        name: &str,
        groom: &Groom,
        n: u32,
    ) {
        let Ok(ctx) = VulkanContext::new(&ContextOptions::default()) else {
            eprintln!("notice: no Vulkan device; the GPU hair bench is skipped");
            return;
        };
        let data = GpuHairData::upload(&ctx, Arc::new(groom.clone())).unwrap();
        let per = data.slots();
        let mut sink = GpuSplatSink::new(&ctx, per * n).unwrap();
        let r = sink.allocate(per * n).unwrap();
        let range = SlotRange {
            offset: r.offset,
            count: per,
        };
        let mut lift = GpuHairLift::new(&ctx, data, &sink, range, n, per).unwrap();
        let guides = groom.guides.clone();
        let mut gpu_ms = Vec::new();
        g.throughput(Throughput::Elements(
            u64::from(n) * groom.child_count() as u64,
        ));
        g.bench_function(format!("gpu_{name}_to_splats"), |b| {
            b.iter(|| {
                for z in 0..n {
                    lift.set_guides(z, &guides).unwrap();
                }
                let mut enc = ctx.begin().unwrap();
                GpuHairLift::record_batch(std::slice::from_mut(&mut lift), &mut enc, &mut sink)
                    .unwrap();
                ctx.end_frame(&mut enc);
                ctx.submit(enc).unwrap();
                ctx.wait().unwrap();
                if let Ok(Some(t)) = GpuDevice::stage_times(&ctx) {
                    gpu_ms.push(t.hair_ms);
                }
            });
        });
        gpu_ms.sort_by(f64::total_cmp);
        if let Some(m) = gpu_ms.get(gpu_ms.len() / 2).filter(|m| **m > 0.0) {
            let slots = f64::from(per) * f64::from(n);
            // Written per slot: centre, two covariance rows (3 × 16 bytes) and a colour word.
            let gbs = slots * 52.0 / (m * 1e-3) / 1e9;
            println!(
                "GPU hair {name}: {n} character(s), {slots} gaussians: median kernel time {:.1} µs ({gbs:.0} GB/s written, {:.0} characters/s)",
                m * 1e3,
                f64::from(n) / (m * 1e-3)
            );
        }
    }
}

criterion_group!(benches, hair);
criterion_main!(benches);
