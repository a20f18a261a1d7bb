//! `mien pack INPUT --out FILE.aosrig`: bake a real head into a linear-head pack and say what was
//! done (vertices, coefficients per region, unmapped shapes, the largest delta, the measured fp16
//! error against its bound, bytes).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use mien_core::gnm::bake::{BakeOptions, BakeReport, Units, bake};

use crate::args::{PackArgs, UnitsChoice};
use crate::text::{count, metres, plural};

/// Bake, write the pack (and the JSON report when asked), return the summary.
///
/// # Errors
/// Every bake error (file, line and field named), and write failures.
pub fn run(a: &PackArgs) -> Result<String> {
    check_outputs(a)?;
    let options = BakeOptions {
        units: match a.units {
            UnitsChoice::Auto => Units::Auto,
            UnitsChoice::M => Units::Metres,
            UnitsChoice::Cm => Units::Centimetres,
            UnitsChoice::Mm => Units::Millimetres,
        },
        eyes: a.eyeballs,
        neutral: a.neutral.clone(),
        mesh: a.mesh.clone(),
    };
    let pb = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} reading {bar:40} {pos}/{len} files  {msg}")
    {
        pb.set_style(style);
    }
    let started = std::time::Instant::now();
    let baked = bake(&a.input, &options, &mut |done, total, what| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
        pb.set_message(what.to_owned());
    });
    pb.finish_and_clear();
    let baked = baked.with_context(|| format!("cannot bake {}", a.input.display()))?;
    baked
        .write(&a.out)
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    if let Some(path) = &a.report {
        let json =
            serde_json::to_vec_pretty(&baked.report).context("cannot serialise the report")?;
        mien_core::io::atomic::write_atomic_bytes(path, &json)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(summary(
        &baked.report,
        &a.out.display().to_string(),
        a.report.as_ref().map(|p| p.display().to_string()),
        started.elapsed().as_secs_f64(),
    ))
}

/// `path` made absolute with its folder resolved (the file itself need not exist).
fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map_or_else(|_| abs.clone(), |d| d.join(name)),
        _ => abs,
    }
}

/// Refuse outputs that would destroy an input or each other: `--out` and `--report` the same
/// file, either one the input file, or a `.obj` inside the input folder (a shape the bake reads).
fn check_outputs(a: &PackArgs) -> Result<()> {
    let input = resolved(&a.input);
    let input_is_dir = a.input.is_dir();
    let mut outputs = vec![("--out", resolved(&a.out))];
    if let Some(r) = &a.report {
        outputs.push(("--report", resolved(r)));
        if outputs[0].1 == outputs[1].1 {
            bail!(
                "--out and --report are the same file ({}): the report would overwrite the pack",
                a.out.display()
            );
        }
    }
    for (flag, out) in &outputs {
        if *out == input {
            bail!(
                "{flag} {} is the input: it would be overwritten",
                out.display()
            );
        }
        let is_obj = out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("obj"));
        if input_is_dir && is_obj && out.parent() == Some(input.as_path()) {
            bail!(
                "{flag} {} is a shape file of the input folder: it would be overwritten (and read as a shape next time)",
                out.display()
            );
        }
        if out.is_dir() {
            bail!("{flag} {} is a folder; give a file name", out.display());
        }
    }
    Ok(())
}

/// Notes printed in the summary.
const NOTES_SHOWN: usize = 6;

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The one-screen summary; `seconds` is the wall time of the bake and the write.
pub fn summary(r: &BakeReport, out: &str, report: Option<String>, seconds: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "packed {} ({}) → {out}: {} bytes in {seconds:.1} s",
        r.input, r.kind, r.bytes
    );
    let _ = writeln!(
        s,
        "  {}, {}, {}; units {} ({}), stored in metres",
        plural(r.vertices as u64, "vertex", "vertices"),
        count(r.triangles as u64, "triangle"),
        count(r.quads as u64, "quad"),
        r.units.input,
        r.units.rule
    );
    let _ = writeln!(s, "  {} expression coefficients:", r.coefficients);
    for g in &r.regions {
        let _ = writeln!(
            s,
            "    {:<11} {:>3}  {}",
            g.name,
            g.shapes.len(),
            g.shapes.join(" ")
        );
    }
    let terms: usize = r.arkit_mapped.iter().map(|(_, v)| v.len()).sum();
    let _ = writeln!(
        s,
        "  ARKit table: {} channels → {} terms (gain 1); split channels: {}",
        r.arkit_mapped.len(),
        terms,
        list(
            &r.arkit_mapped
                .iter()
                .filter(|(_, v)| v.len() > 1)
                .map(|(c, v)| format!("{c} → {}", v.join(" + ")))
                .collect::<Vec<_>>()
        )
    );
    let _ = writeln!(
        s,
        "  unmapped shapes (no ARKit channel): {}",
        list(&r.unmapped)
    );
    let _ = writeln!(
        s,
        "  ARKit channels with no shape: {}",
        list(&r.arkit_missing)
    );
    if !r.fallback.is_empty() {
        let _ = writeln!(
            s,
            "  in region `other`: {}",
            list(
                &r.fallback
                    .iter()
                    .map(|(n, why)| format!("{n} ({why})"))
                    .collect::<Vec<_>>()
            )
        );
    }
    if !r.empty.is_empty() {
        let _ = writeln!(
            s,
            "  empty shapes (no vertex moves; scale 0): {}",
            list(&r.empty)
        );
    }
    let _ = writeln!(
        s,
        "  largest delta {} ({}); fp16 basis error at most {} ({}), {:.3} of its bound |δ|·2⁻¹¹ + s·2⁻²⁵",
        metres(r.max_delta.0 as f32),
        r.max_delta.1,
        sci(r.fp16_max_error.0),
        r.fp16_max_error.1,
        r.fp16_error_over_bound
    );
    let e = &r.eyes;
    if e.method == "none" {
        let _ = writeln!(s, "  eyes: none (eye weights 0; gaze angles move nothing)");
    } else {
        let c = |i: usize| {
            format!(
                "({:.4}, {:.4}, {:.4})",
                e.centres[i][0], e.centres[i][1], e.centres[i][2]
            )
        };
        let _ = writeln!(
            s,
            "  eyes: {} by {}: left {} m ({} vertices), right {} m ({} vertices)",
            e.source,
            e.method,
            c(0),
            e.vertices[0],
            c(1),
            e.vertices[1]
        );
    }
    let _ = writeln!(s, "  skin: {}; uv: {}", r.skin, r.uv);
    // The first notes; the rest are counted (all of them are in the --report JSON).
    for n in r.notes.iter().take(NOTES_SHOWN) {
        let _ = writeln!(s, "  note: {n}");
    }
    if r.notes.len() > NOTES_SHOWN {
        let _ = writeln!(
            s,
            "  … and {} more notes (--report FILE.json lists them all)",
            r.notes.len() - NOTES_SHOWN
        );
    }
    if let Some(p) = report {
        let _ = writeln!(s, "  full report: {p}");
    }
    s
}

/// A small length in metres in scientific notation (`1.2e-6 m`).
fn sci(m: f64) -> String {
    format!("{m:.2e} m")
}
