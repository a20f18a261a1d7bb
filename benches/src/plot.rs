//! How cost grows (issue 8, deliverable 5): sweeps of the synthetic morph rig over vertices,
//! active targets and batch size on each backend, drawn as PNG line charts with `plotters` (bitmap
//! backend into an RGB buffer, written with `image`). Text is drawn through ab_glyph with a TrueType
//! font found at run time (`MIEN_FONT`, else DejaVu Sans or Liberation Sans in the usual system
//! folders); without one the charts are drawn without labels and the caller is told.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use plotters::prelude::*;
use serde::Serialize;

use crate::harness::{Bench, RowPlan, run_row};
use crate::workloads::{MorphShape, W5_SEED, synthetic_morph};

/// One backend's points: (x, µs per frame).
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Backend name, `"<backend> GPU time"` for a GPU backend's timestamped passes.
    pub backend: String,
    /// `(x, µs/frame)`: wall time per frame (set, encode, submit, wait), or for a GPU-time series
    /// the morph and skin passes' timestamps of one frame; failed points left out.
    pub points: Vec<(f64, f64)>,
}

/// One swept chart.
#[derive(Clone, Debug, Serialize)]
pub struct Chart {
    /// File stem (`time_vs_vertices`).
    pub name: String,
    /// What is held fixed.
    pub title: String,
    /// The x axis.
    pub x_label: String,
    /// One series per backend.
    pub series: Vec<Series>,
}

/// Register a font for the charts once; `false` when none was found.
pub fn font_available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let candidates = [
            std::env::var("MIEN_FONT").unwrap_or_default(),
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".into(),
            "/usr/share/fonts/TTF/DejaVuSans.ttf".into(),
            "/usr/share/fonts/dejavu/DejaVuSans.ttf".into(),
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf".into(),
        ];
        candidates.iter().filter(|p| !p.is_empty()).any(|p| {
            std::fs::read(p).ok().is_some_and(|bytes| {
                // register_font keeps the bytes for the process: leaked once, a few hundred KB.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
        })
    })
}

/// The largest power of ten not above `v` (`v` > 0).
fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

/// Draw `chart` to `path` (PNG, 900 × 600).
///
/// # Errors
/// Drawing or writing errors.
pub fn draw(chart: &Chart, path: &Path) -> anyhow::Result<()> {
    let (w, h) = (900u32, 600u32);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    let text = font_available();
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
        // Log–log axes: batches, vertex counts and the backends' times each span orders of
        // magnitude (a linear axis squashed batches 1–16 and every GPU line into a corner).
        let pts = chart.series.iter().flat_map(|s| s.points.iter());
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let xs = pts.clone().map(|p| p.0).filter(|v| positive(*v));
        let ys = pts.map(|p| p.1).filter(|v| positive(*v));
        let x_min = xs.clone().fold(f64::INFINITY, f64::min).min(1.0e9);
        let x_max = xs.fold(0.0, f64::max).max(x_min * 2.0);
        let y_min = ys.clone().fold(f64::INFINITY, f64::min).min(1.0e9);
        let y_max = ys.fold(0.0, f64::max).max(y_min * 2.0);
        let (x_min, y_min) = (
            if x_min.is_finite() { x_min } else { 1.0 },
            if y_min.is_finite() { y_min } else { 1.0 },
        );
        let mut builder = ChartBuilder::on(&root);
        builder
            .margin(20)
            .x_label_area_size(if text { 50 } else { 10 });
        builder.y_label_area_size(if text { 80 } else { 10 });
        if text {
            builder.caption(&chart.title, ("sans-serif", 20));
        }
        let mut ctx = builder
            .build_cartesian_2d(
                (x_min * 0.8..x_max * 1.25).log_scale(),
                // From a power of ten: plotters labels a log axis from its first full decade.
                (decade_floor(y_min * 0.9)..y_max * 1.5).log_scale(),
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut mesh = ctx.configure_mesh();
        // No minor grid: on log axes plotters packs it into bands near each decade.
        mesh.light_line_style(WHITE);
        if text {
            // Enough labels that every decade the data spans gets some (plotters' default of 10
            // can leave a decade of GPU times unlabelled).
            mesh.x_desc(chart.x_label.as_str())
                .y_desc("µs per frame")
                .y_labels(24)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0}"));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw().map_err(|e| anyhow::anyhow!("{e}"))?;
        for (i, s) in chart.series.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            let line = ctx
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    colour.stroke_width(2),
                ))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if text {
                line.label(s.backend.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            }
            ctx.draw_series(s.points.iter().map(|p| Circle::new(*p, 3, colour.filled())))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        if text {
            ctx.configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let img = image::RgbImage::from_raw(w, h, buf)
        .ok_or_else(|| anyhow::anyhow!("plot buffer has the wrong size"))?;
    // Encoded in memory, then written to a temporary file and renamed: never a half-written PNG.
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)?;
    mien_core::io::atomic::write_atomic_bytes(path, &png)?;
    Ok(())
}

/// Wall time per frame of `shape` on `bench` at `batch` (lift off) and, on a GPU backend with
/// timestamps, its morph + skin passes' GPU time (µs); `None` when the row failed.
fn point(
    bench: &dyn Bench,
    shape: MorphShape,
    batch: u32,
    frames: u32,
) -> Option<(f64, Option<f64>)> {
    let w = Arc::new(synthetic_morph(W5_SEED, shape, "sweep"));
    let plan = RowPlan {
        batch,
        lift: crate::harness::LiftMode::Off,
        warmup: 2,
        frames,
    };
    let row = run_row(bench, &w, plan, &mut Vec::new());
    let gpu = row
        .gpu_ms
        .and_then(|g| Some(1e3 * (g.morph? + g.skin.unwrap_or(0.0))));
    row.us_per_frame.map(|t| (t, gpu))
}

/// The three sweeps on every backend (lift off, `frames` timed frames per point): vertices
/// 1k–64k (200 targets, 32 active, batch 1), active targets 1–32 (W5's 24,000 × 669, batch 1),
/// batch 1–256 (W5). Each backend gives a wall-time series and, where its passes are timestamped,
/// a GPU-time series (at batch 1 the wall time is mostly the submit-and-wait round trip; the GPU
/// time shows the kernels' growth). `progress` is told each point.
pub fn sweep(
    benches: &[Box<dyn Bench>],
    frames: u32,
    progress: &mut dyn FnMut(&str),
) -> Vec<Chart> {
    let w5 = MorphShape::W5;
    let axes: [(&str, &str, &str, Vec<u32>); 3] = [
        (
            "time_vs_vertices",
            "synthetic morph, 200 targets, 32 active, batch 1",
            "vertices",
            vec![1_000, 4_000, 16_000, 32_000, 64_000],
        ),
        (
            "time_vs_active",
            "W5 rig (24,000 × 669), batch 1",
            "active targets",
            vec![1, 4, 8, 16, 32],
        ),
        (
            "time_vs_batch",
            "W5 (24,000 × 669, 16–32 active)",
            "characters per frame",
            vec![1, 4, 16, 64, 256],
        ),
    ];
    // Backend by backend, GPU backends first, each running all three sweeps back to back: a GPU
    // left idle while the CPU's points run comes back at a low clock, which the warm-up alone did
    // not always hide (GPU times three times the table's in a sweep run CPU-first).
    let mut order: Vec<&Box<dyn Bench>> = benches
        .iter()
        .filter(|b| !b.name().starts_with("cpu"))
        .collect();
    order.extend(benches.iter().filter(|b| b.name().starts_with("cpu")));
    let mut charts: Vec<Chart> = axes
        .iter()
        .map(|(name, title, x_label, _)| Chart {
            name: (*name).into(),
            title: (*title).into(),
            x_label: (*x_label).into(),
            series: Vec::new(),
        })
        .collect();
    for b in order {
        for ((name, _, _, xs), chart) in axes.iter().zip(charts.iter_mut()) {
            let mut wall = Vec::new();
            let mut gpu = Vec::new();
            for &x in xs {
                progress(&format!("{} {name} {x}", b.name()));
                let (shape, batch) = match *name {
                    "time_vs_vertices" => (
                        MorphShape {
                            vertices: x,
                            targets: 200,
                            active: (32, 32),
                            ..w5
                        },
                        1,
                    ),
                    "time_vs_active" => (
                        MorphShape {
                            active: (x, x),
                            ..w5
                        },
                        1,
                    ),
                    _ => (w5, x),
                };
                if let Some((t, g)) = point(b.as_ref(), shape, batch, frames) {
                    wall.push((f64::from(x), t));
                    gpu.extend(g.map(|g| (f64::from(x), g)));
                }
            }
            chart.series.push(Series {
                backend: b.name().into(),
                points: wall,
            });
            if !gpu.is_empty() {
                chart.series.push(Series {
                    backend: format!("{} GPU time", b.name()),
                    points: gpu,
                });
            }
        }
    }
    charts
}
