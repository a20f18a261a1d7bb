//! `mien bind`: a captured splat cloud bound to a character's mesh
//! ([`mien_runtime::capture::bind_capture`]).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `mien bind` arguments.
#[derive(Debug, Args)]
pub struct BindArgs {
    /// The capture: a 3DGS .ply (INRIA, SH 0–3; or SuperSplat compressed) or an .spz, in the
    /// character's world space at its rest pose (metres).
    #[arg(value_name = "SPLATS")]
    pub splats: PathBuf,

    /// The character (.glb, .gltf, .vrm).
    #[arg(long, value_name = "CHARACTER")]
    pub to: PathBuf,

    /// The bound capture to write (replaced atomically).
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,

    /// Gaussians farther than this from the surface, metres (1e-6 to 1e6), are far: counted, and
    /// handled by --far. More than half far with `--far bind` is refused (a capture not in the
    /// rest pose).
    #[arg(
        long,
        value_name = "METRES",
        default_value_t = 0.05,
        allow_negative_numbers = true
    )]
    pub max_distance: f64,

    /// What happens to far gaussians: bind (to their nearest triangle anyway), drop, or joint
    /// (left rigid to the joint their nearest surface point follows most: hair, hats, floaters).
    #[arg(long, value_enum, value_name = "RULE", default_value = "bind")]
    pub far: FarArg,
}

/// `mien bind --far`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FarArg {
    /// Bind to the nearest triangle anyway.
    Bind,
    /// Drop from the bound capture.
    Drop,
    /// Rigid to the nearest joint.
    Joint,
}

/// `mien bind`: a capture bound to a character's rest pose, written as a bound-capture .ply.
pub fn run(b: &BindArgs) -> anyhow::Result<String> {
    use anyhow::Context;
    if !(b.max_distance.is_finite() && (1e-6..=1e6).contains(&b.max_distance)) {
        anyhow::bail!(
            "--max-distance {}: must be a length from 1e-6 to 1e6 metres",
            b.max_distance
        );
    }
    if !b
        .out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ply"))
    {
        anyhow::bail!(
            "--out {}: a bound capture is a .ply file (viewers open it as the capture)",
            b.out.display()
        );
    }
    for (flag, input) in [("the capture", &b.splats), ("--to", &b.to)] {
        if crate::outdir::same_file(&b.out, input) {
            anyhow::bail!(
                "--out {} is also {flag}: an output must not replace an input",
                b.out.display()
            );
        }
    }
    if let Some(dir) = b.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        anyhow::bail!(
            "--out {}: the folder {} does not exist",
            b.out.display(),
            dir.display()
        );
    }
    let asset = std::sync::Arc::new(
        mien_runtime::Asset::load(&b.to)
            .with_context(|| format!("cannot load character {}", b.to.display()))?,
    );
    let cloud = mien_runtime::capture::read_capture(&b.splats)
        .with_context(|| format!("cannot read capture {}", b.splats.display()))?;
    let opts = mien_core::lift::BindOptions {
        max_distance_m: b.max_distance as f32,
        far: match b.far {
            FarArg::Bind => mien_core::lift::FarGaussians::Bind,
            FarArg::Drop => mien_core::lift::FarGaussians::Drop,
            FarArg::Joint => mien_core::lift::FarGaussians::Joint,
        },
    };
    let bound = mien_runtime::capture::bind_capture(&asset, &cloud, &opts)?;
    mien_core::io::atomic::write_atomic_bytes(&b.out, &bound.bytes)
        .with_context(|| format!("cannot write {}", b.out.display()))?;
    let r = &bound.report;
    let mut s = format!(
        "{}: {} of {} gaussians of {} bound to {} ({} triangles)\n  distance to the surface: median {:.4} m, largest {:.4} m; {} beyond {} m{}\n",
        b.out.display(),
        r.bound,
        r.splats,
        b.splats.display(),
        b.to.display(),
        asset.triangles().len(),
        r.median_distance_m,
        r.max_distance_m,
        r.far,
        b.max_distance,
        match b.far {
            FarArg::Drop => format!(", {} dropped", r.dropped),
            FarArg::Joint => format!(", {} left rigid to a joint", r.rigid),
            FarArg::Bind if r.far > 0 => {
                " (bound anyway; --far drop drops them, --far joint leaves them rigid to a joint)"
                    .into()
            }
            FarArg::Bind => String::new(),
        },
    );
    if r.sh_degree_dropped > 0 {
        s += &format!(
            "  view-dependent colour (SH degree {}) not carried: the DC colour is kept\n",
            r.sh_degree_dropped
        );
    }
    if r.approximate > 0 {
        s += &format!(
            "  {} gaussians on sliver triangles bound approximately\n",
            r.approximate
        );
    }
    Ok(s)
}
