//! The cloth and hair rows of `mien bench --dynamics` (issue 27 item 6): whole characters with
//! their simulations, timed frame by frame on one backend.
//!
//! Three workloads:
//!
//! - **`body`** — the built-in body character (its character file: locomotion, foot placement,
//!   spring bones, the generated 285-vertex cape and the 320-guide, 11,200-strand groom) walking at
//!   1.4 m/s in a 3 m/s wind, through [`mien_runtime::Runtime`] exactly as `mien animate` runs it:
//!   per frame every instance's drivers, the palette, the cape (XPBD, 4 motion steps × 8 substeps)
//!   and the guides (120 Hz fixed steps) on the host — in parallel over instances from
//!   [`mien_runtime::PARALLEL_MIN`] — then the rig, the body's surface lift, the cape's lift and
//!   the strands-to-splats kernel on the backend, in one submission, waited for.
//! - **`sintel`** — Sintel's full TressFX groom (`hair/sintel_hair_frostbitten_16points.tfx`:
//!   11,400 strands × 16 points, every strand a guide) on its watertight collider
//!   (`hair/sintel_collider_frostbitten.obj`, a 48³ signed distance field) while the head turns
//!   ±40°: every character's guides simulated on the host (in parallel over characters), then
//!   turned into 171,000 gaussians each — [`mien_core::hair::strand_splats`] on the CPU (in
//!   parallel over characters), `hair.wgsl` on wgpu and Vulkan (the guides written, one dispatch,
//!   waited for).
//!
//! - **`dna`** — the ICT MetaHuman-style DNA rig, every instance's raw controls animated, through
//!   the runtime: RigLogic per instance, then the morph blend and skin, no lift ([`dna`]).
//!
//! Frames advance 1/60 s (a 60 Hz application). A row's times are taken over the timed frames
//! after untimed ones (at least `warmup`, and at least [`crate::harness::WARMUP_MIN`] of them, so
//! the spawn frame and an idle GPU's clock ramp are not timed): `sim` the host simulation and
//! `draw` the rest of the frame (pose, lifts and strands: encode, submit, wait) are means,
//! `frame` the median of their sum (the rig table's statistic; the mean is `mean_frame_us`);
//! `gpu` the device's own time from timestamp queries where it has them; characters/s = batch /
//! frame. `mien bench` runs these rows after the rig table's, on the same backends and batches
//! (`cpu-fast` poses the body with [`Precision::Fast`]); `mien bench --dynamics` runs them alone.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use glam::{DMat4, DVec3};
use mien_core::hair::{
    Groom, HairColourDef, HairSim, HairSimOptions, MeshSdf, TfxGroomOptions, read_tfx,
    strand_splats,
};
use mien_core::sink::SplatBuffers;
use mien_runtime::{Backend, Device, DeviceOptions, Precision, Runtime, RuntimeOptions};
use rayon::prelude::*;
use serde::Serialize;

use crate::harness::WARMUP_MIN;

/// The dynamics workloads, in order.
pub const WORKLOADS: [&str; 3] = ["body", "sintel", "dna"];

/// Seconds one frame advances (a 60 Hz application).
pub const FRAME_DT: f64 = 1.0 / 60.0;

/// One row of the dynamics table.
#[derive(Clone, Debug, Serialize)]
pub struct DynRow {
    /// `cpu`, `wgpu` or `vulkan`.
    pub backend: String,
    /// `body` or `sintel`.
    pub workload: String,
    /// Characters per frame.
    pub batch: u32,
    /// Gaussians one character writes per frame (body, cape and strands for `body`).
    pub gaussians: u64,
    /// Mean host simulation per frame (every character's cloth and guides), µs.
    pub sim_us: Option<f64>,
    /// Mean rest of the frame (pose, lifts, strands: encode, submit, wait), µs.
    pub draw_us: Option<f64>,
    /// Mean device time per frame from timestamp queries (all stages), µs; `None` on the CPU or
    /// where the device has none.
    pub gpu_us: Option<f64>,
    /// Median wall time of a frame, µs (the rig table's statistic).
    pub frame_us: Option<f64>,
    /// Mean wall time of a frame, µs (`sim_us + draw_us`).
    pub mean_frame_us: Option<f64>,
    /// batch / median frame time.
    pub characters_per_s: Option<f64>,
    /// `ok`, or `error: why`.
    pub status: String,
}

/// The dynamics table, one line per row.
pub fn table(rows: &[DynRow]) -> String {
    let num = |x: Option<f64>, d: usize| x.map_or("-".to_owned(), |x| format!("{x:.d$}"));
    let mut s = format!(
        "{:<8} {:<6} {:>5} {:>9} {:>10} {:>10} {:>10} {:>10} {:>13}  {}\n",
        "backend",
        "work",
        "batch",
        "gaussians",
        "sim µs",
        "draw µs",
        "gpu µs",
        "frame µs",
        "characters/s",
        "status"
    );
    for r in rows {
        s += &format!(
            "{:<8} {:<6} {:>5} {:>9} {:>10} {:>10} {:>10} {:>10} {:>13}  {}\n",
            r.backend,
            r.workload,
            r.batch,
            if r.status == "ok" {
                r.gaussians.to_string()
            } else {
                "-".into()
            },
            num(r.sim_us, 1),
            num(r.draw_us, 1),
            num(r.gpu_us, 1),
            num(r.frame_us, 1),
            num(r.characters_per_s, 0),
            if r.status == "ok" { "" } else { &r.status },
        );
    }
    s
}

/// How many frames a row runs.
#[derive(Clone, Copy, Debug)]
pub struct DynPlan {
    /// Untimed frames at least (more until [`WARMUP_MIN`] has passed, at most 10,000).
    pub warmup: u32,
    /// Timed frames.
    pub frames: u32,
}

/// A frame's wall time split: host simulation, the rest, device time (ms, when known).
struct FrameTimes {
    sim: Duration,
    draw: Duration,
    gpu_ms: Option<f64>,
}

/// Run `frame` as [`DynPlan`] says; the row's figures.
fn measure(
    plan: DynPlan,
    mut frame: impl FnMut(u64) -> anyhow::Result<FrameTimes>,
    row: &mut DynRow,
) -> anyhow::Result<()> {
    let begin = Instant::now();
    let mut k = 0u64;
    while k < u64::from(plan.warmup) || (begin.elapsed() < WARMUP_MIN && k < 10_000) {
        frame(k)?;
        k += 1;
    }
    let (mut sim, mut draw, mut gpu, mut gpu_n) = (Duration::ZERO, Duration::ZERO, 0.0, 0u32);
    let mut walls = Vec::with_capacity(plan.frames as usize);
    for j in 0..plan.frames {
        let t = frame(k + u64::from(j))?;
        sim += t.sim;
        draw += t.draw;
        walls.push((t.sim + t.draw).as_secs_f64() * 1e6);
        if let Some(g) = t.gpu_ms {
            gpu += g;
            gpu_n += 1;
        }
    }
    let n = f64::from(plan.frames.max(1));
    let us = |d: Duration| d.as_secs_f64() * 1e6 / n;
    walls.sort_by(f64::total_cmp);
    let m = walls.len();
    let median = match m {
        0 => 0.0,
        _ if m % 2 == 1 => walls[m / 2],
        _ => 0.5 * (walls[m / 2 - 1] + walls[m / 2]),
    };
    row.sim_us = Some(us(sim));
    row.draw_us = Some(us(draw));
    // Only when every timed frame had its device time: a partial sum would read low.
    row.gpu_us = (gpu_n == plan.frames && gpu > 0.0).then(|| gpu * 1e3 / n);
    row.frame_us = Some(median);
    row.mean_frame_us = Some(us(sim + draw));
    row.characters_per_s = Some(f64::from(row.batch) / (median * 1e-6));
    Ok(())
}

/// Open the runtime device for `backend` (`cpu`, `cpu-fast`: the CPU with
/// [`Precision::Fast`] for the rig, `wgpu`, `vulkan`) and the precision to set on its runtimes; a
/// software adapter only with `allow_software`.
///
/// # Errors
/// An unknown backend, one this build lacks, no device.
pub fn open(backend: &str, allow_software: bool) -> anyhow::Result<(Device, Precision, String)> {
    if backend == "cpu-fast" {
        return Ok((
            Device::Cpu,
            Precision::Fast,
            crate::machine::Machine::this().cpu,
        ));
    }
    let choice: Backend = backend.parse()?;
    anyhow::ensure!(
        choice != Backend::Auto,
        "name a backend (cpu, wgpu, vulkan), not auto"
    );
    let (device, _) = Device::open_with(
        choice,
        &DeviceOptions {
            allow_software,
            ..DeviceOptions::from_env()
        },
    )?;
    let words = match &device {
        Device::Cpu => crate::machine::Machine::this().cpu,
        _ => device.adapter().unwrap_or_default(),
    };
    Ok((device, Precision::Exact, words))
}

/// A row that could not run: `status` (`error: …` or `n/a: …`) and no figures.
pub fn failed_row(backend: &str, id: &str, batch: u32, status: &str) -> DynRow {
    DynRow {
        backend: backend.to_owned(),
        workload: id.to_owned(),
        batch,
        gaussians: 0,
        sim_us: None,
        draw_us: None,
        gpu_us: None,
        frame_us: None,
        mean_frame_us: None,
        characters_per_s: None,
        status: status.to_owned(),
    }
}

/// Run workload `id` for `batch` characters on `device` (named `backend`), reading Sintel's groom
/// from `data/hair/`. A failure lands in the row's status.
pub fn run_row(
    backend: &str,
    device: &Device,
    precision: Precision,
    id: &str,
    batch: u32,
    plan: DynPlan,
    data: &Path,
) -> DynRow {
    let mut row = failed_row(backend, id, batch, "ok");
    let r = match id {
        "body" => body(device, precision, batch, plan, &mut row),
        // The groom has no rig: the fast path's row would repeat the CPU's.
        "sintel" if precision == Precision::Fast => {
            row.status = "n/a: no rig to pose (Sintel's groom alone): the cpu row times it".into();
            return row;
        }
        "sintel" => sintel(device, batch, plan, data, &mut row),
        "dna" => dna(device, precision, batch, plan, data, &mut row),
        other => Err(anyhow::anyhow!(
            "unknown dynamics workload `{other}` (body, sintel, dna)"
        )),
    };
    if let Err(e) = r {
        let text = format!("{e:#}");
        // The runtime's own refusal of a batch past the host's memory is a row that cannot run
        // here, not a failure.
        row.status = if text.contains("GiB is available") || text.contains("a runtime holds 1 to") {
            format!("n/a: {text}")
        } else {
            format!("error: {text}")
        };
    }
    row
}

/// The built-in body walking in wind (module doc).
fn body(
    device: &Device,
    precision: Precision,
    batch: u32,
    plan: DynPlan,
    row: &mut DynRow,
) -> anyhow::Result<()> {
    let loaded = mien_runtime::character::CharacterDef::builtin_body()?;
    let asset = Arc::new(loaded.asset.clone());
    let mut rt = Runtime::new(
        asset,
        device,
        &RuntimeOptions {
            instances: batch,
            ..Default::default()
        },
    )?;
    if precision != Precision::Exact {
        rt.set_precision(precision)?;
    }
    for i in 0..batch as usize {
        let mut inst = rt.instance_mut(i)?;
        loaded.apply(&mut inst)?;
        inst.set_speed(1.4)?;
        inst.set_wind(DVec3::new(3.0, 0.0, 0.0))?;
    }
    row.gaussians = u64::from(rt.sink_range(0)?.count);
    measure(
        plan,
        |k| {
            let before = rt.times();
            let t0 = Instant::now();
            rt.update(k as f64 * FRAME_DT)?;
            rt.finish()?;
            let wall = t0.elapsed();
            let after = rt.times();
            let sim = after.dynamics.saturating_sub(before.dynamics);
            let gpu_ms = match (after.gpu_ms, before.gpu_ms) {
                (Some(a), Some(b)) => Some((0..3).map(|s| a[s] - b[s]).sum()),
                _ => None,
            };
            Ok(FrameTimes {
                sim,
                draw: wall.saturating_sub(sim),
                gpu_ms,
            })
        },
        row,
    )
}

/// The MetaHuman-style ICT DNA rig (`metahuman_dna/mien_ict_rig.dna`: 57 raw controls, 7 PSDs,
/// 12 joints, 63 channels, 9,547 vertices at LOD 0), every instance's 57 raw controls animated
/// per frame (OpenRigLogic's own benchmark animates 60), each instance on its own phase, set in
/// the `rig` space; the frame is RigLogic for every instance (inside `update`, in parallel over
/// instances from 8), then the morph blend and the skin on the backend (no lift: `gaussians` 0),
/// waited for — controls solved and posed. `sim` is the host's control setting only.
fn dna(
    device: &Device,
    precision: Precision,
    batch: u32,
    plan: DynPlan,
    data: &Path,
    row: &mut DynRow,
) -> anyhow::Result<()> {
    let path = data.join("metahuman_dna/mien_ict_rig.dna");
    let asset = Arc::new(
        mien_runtime::Asset::load(&path)
            .with_context(|| format!("the dna workload reads {}", path.display()))?,
    );
    let n = asset.space_len(mien_runtime::ExpressionSpace::Rig)?;
    // Posed vertices only (no lift): the row times the rig, not the surface lift.
    let mut rt = Runtime::new(
        asset,
        device,
        &RuntimeOptions {
            instances: batch,
            lift: None,
        },
    )?;
    if precision != Precision::Exact {
        rt.set_precision(precision)?;
    }
    row.gaussians = 0;
    let mut controls = vec![0.0f32; n];
    measure(
        plan,
        |k| {
            let t = k as f64 * FRAME_DT;
            let t0 = Instant::now();
            for i in 0..batch as usize {
                for (c, v) in controls.iter_mut().enumerate() {
                    let phase = 0.37 * c as f64 + 0.11 * i as f64;
                    *v = (0.5 + 0.5 * (2.0 * std::f64::consts::PI * 0.8 * t + phase).sin()) as f32;
                }
                rt.instance_mut(i)?
                    .set_controls(mien_runtime::ExpressionSpace::Rig, &controls)?;
            }
            let sim = t0.elapsed();
            let before = rt.times();
            rt.update(t)?;
            rt.finish()?;
            let after = rt.times();
            let gpu_ms = match (after.gpu_ms, before.gpu_ms) {
                (Some(a), Some(b)) => Some((0..3).map(|s| a[s] - b[s]).sum()),
                _ => None,
            };
            Ok(FrameTimes {
                sim,
                draw: t0.elapsed().saturating_sub(sim),
                gpu_ms,
            })
        },
        row,
    )
}

/// Sintel's full groom, its collider and the options it is read with (every strand a guide,
/// 15 segments, a strand 0.8 mm thick at the root).
fn sintel_groom(data: &Path) -> anyhow::Result<(Groom, Arc<MeshSdf>)> {
    let dir = data.join("hair");
    let sdf = Arc::new(MeshSdf::from_obj(
        &dir.join("sintel_collider_frostbitten.obj"),
        48,
        0.05,
    )?);
    let tfx = read_tfx(&dir.join("sintel_hair_frostbitten_16points.tfx"))?;
    let opts = TfxGroomOptions {
        head_bone: "head".into(),
        segments: tfx.points_per_strand.saturating_sub(1),
        children_per_guide: 1,
        scale: 1.0,
        origin: [0.0; 3],
        clump: 0.0,
        thickness: [0.0008, 0.0002],
        colour: HairColourDef {
            root: [0.3, 0.15, 0.05],
            tip: [0.7, 0.5, 0.2],
            variation: 0.1,
        },
        seed: 1,
    };
    Ok((Groom::from_tfx(&tfx, &opts)?, sdf))
}

/// Character `z`'s head at frame `k`: a ±40° turn about Y through the collider's centre, 1 s a
/// period, each character half a radian behind the one before.
fn sintel_head(z: usize, k: u64) -> DMat4 {
    let pivot = DVec3::new(0.0, 1.5, 0.0);
    let phase = (k as f64 * FRAME_DT * std::f64::consts::TAU) - 0.5 * z as f64;
    DMat4::from_translation(pivot)
        * DMat4::from_rotation_y(40f64.to_radians() * phase.sin())
        * DMat4::from_translation(-pivot)
}

/// Sintel's groom on `batch` heads (module doc).
fn sintel(
    device: &Device,
    batch: u32,
    plan: DynPlan,
    data: &Path,
    row: &mut DynRow,
) -> anyhow::Result<()> {
    let (groom, sdf) = sintel_groom(data)
        .with_context(|| format!("Sintel's groom from {}", data.join("hair").display()))?;
    let segments = groom.segments;
    // Host memory first (an allocation that fails aborts): each character's simulation state
    // (nine point arrays of f64 triples and the lengths), its f32 guides, and on the CPU its
    // gaussians (52 bytes a slot).
    let points = groom.guides.len() as u64;
    let per_slots = (groom.child_count() * segments) as u64;
    let cpu_slots = if matches!(device, Device::Cpu) {
        per_slots * 52
    } else {
        0
    };
    let need = u64::from(batch) * (points * (9 * 24 + 8 + 12) + cpu_slots);
    if let Some(avail) = crate::harness::host_available_bytes().filter(|a| need > *a) {
        row.status = format!(
            "n/a: needs about {:.1} GiB of host memory, {:.1} GiB available",
            need as f64 / f64::from(1u32 << 30),
            avail as f64 / f64::from(1u32 << 30)
        );
        return Ok(());
    }
    let mut sims = (0..batch)
        .map(|_| {
            let mut s = HairSim::new(&groom.guides, segments, HairSimOptions::default())?;
            s.set_mesh_collider(Some(sdf.clone()), 0.002)?;
            Ok(s)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let per = (groom.child_count() * segments) as u32;
    row.gaussians = u64::from(per);
    // The host half of a frame: every character's guides stepped and read out.
    let simulate = |sims: &mut [HairSim], guides: &mut [Vec<[f32; 3]>], k: u64| {
        sims.par_iter_mut()
            .zip(guides.par_iter_mut())
            .enumerate()
            .try_for_each(|(z, (s, g))| -> anyhow::Result<()> {
                s.update(FRAME_DT, sintel_head(z, k), &[])?;
                for (o, p) in g.iter_mut().zip(s.points()) {
                    *o = p.as_vec3().to_array();
                }
                Ok(())
            })
    };
    match device {
        Device::Cpu => {
            let mut guides = vec![vec![[0.0f32; 3]; groom.guides.len()]; batch as usize];
            let mut outs: Vec<SplatBuffers> = (0..batch).map(|_| SplatBuffers::new(per)).collect();
            measure(
                plan,
                |k| {
                    let t0 = Instant::now();
                    simulate(&mut sims, &mut guides, k)?;
                    let sim = t0.elapsed();
                    let t1 = Instant::now();
                    outs.par_iter_mut()
                        .zip(guides.par_iter())
                        .try_for_each(|(o, g)| strand_splats(&groom, g, o, 0).map(|_| ()))?;
                    Ok(FrameTimes {
                        sim,
                        draw: t1.elapsed(),
                        gpu_ms: None,
                    })
                },
                row,
            )
        }
        #[cfg(feature = "wgpu")]
        Device::Wgpu(ctx) => gpu::sintel(ctx, &groom, batch, plan, row, |k, g| {
            simulate(&mut sims, g, k)
        }),
        #[cfg(feature = "vulkan")]
        Device::Vulkan(ctx) => gpu::sintel(ctx, &groom, batch, plan, row, |k, g| {
            simulate(&mut sims, g, k)
        }),
        #[allow(unreachable_patterns)]
        _ => anyhow::bail!("a backend this build cannot run"),
    }
}

#[cfg(any(feature = "wgpu", feature = "vulkan"))]
mod gpu {
    use std::sync::Arc;
    use std::time::Instant;

    use mien_core::hair::Groom;
    use mien_core::sink::{SlotRange, SplatSink};
    use mien_gpu::{GpuDevice, GpuHairData, GpuHairLift, GpuSplatSink};

    use super::{DynPlan, DynRow, FrameTimes, measure};

    /// The strands of `batch` characters on device `g`: `simulate(k, guides)` fills every
    /// character's guides for frame `k` on the host, then they are written to the device and one
    /// dispatch turns them into gaussians, submitted and waited for.
    pub fn sintel<G: GpuDevice>(
        g: &G,
        groom: &Groom,
        batch: u32,
        plan: DynPlan,
        row: &mut DynRow,
        mut simulate: impl FnMut(u64, &mut [Vec<[f32; 3]>]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>
    where
        mien_core::Error: From<G::Error>,
        anyhow::Error: From<G::Error>,
    {
        let data = GpuHairData::upload(g, Arc::new(groom.clone()))?;
        let per = data.slots();
        let total = per
            .checked_mul(batch)
            .ok_or_else(|| anyhow::anyhow!("{batch} × {per} slots overflow a 32-bit index"))?;
        let mut sink = GpuSplatSink::new(g, total)?;
        let r = sink.allocate(total)?;
        let range = SlotRange {
            offset: r.offset,
            count: per,
        };
        let mut lift = GpuHairLift::new(g, data, &sink, range, batch, per)?;
        let mut guides = vec![vec![[0.0f32; 3]; groom.guides.len()]; batch as usize];
        measure(
            plan,
            |k| {
                let t0 = Instant::now();
                simulate(k, &mut guides)?;
                let sim = t0.elapsed();
                let t1 = Instant::now();
                for (z, gd) in guides.iter().enumerate() {
                    lift.set_guides(z as u32, gd)?;
                }
                let mut enc = g.begin()?;
                GpuHairLift::record_batch(std::slice::from_mut(&mut lift), &mut enc, &mut sink)?;
                g.end_frame(&mut enc);
                g.submit(enc)?;
                g.wait()?;
                let draw = t1.elapsed();
                let gpu_ms = g.stage_times()?.map(|t| t.hair_ms).filter(|ms| *ms > 0.0);
                Ok(FrameTimes { sim, draw, gpu_ms })
            },
            row,
        )
    }
}
