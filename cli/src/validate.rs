//! Checks that run before any work, each naming the flag (or the file) at fault: flag ranges, the
//! contact sheet's size, the timeline against the animation, and the character's rest geometry.

use anyhow::{Result, bail};
use mien_core::preview::{MAX_IMAGE_SIDE, sheet_size};

use crate::args::{AnimateArgs, LiftChoice};
use crate::text::{num, whole};

/// Lowest accepted `--fps`.
pub const MIN_FPS: f64 = 0.1;
/// Highest accepted `--fps`.
pub const MAX_FPS: f64 = 1000.0;
/// Largest accepted `--sigma`, metres (the runtime's range; its smallest is 1 nm).
pub const MAX_SIGMA_M: f64 = mien_runtime::runtime::SIGMA_RANGE_M.1 as f64;
/// Most frames one run may pose (at 30 fps, over 55 minutes).
pub const MAX_FRAMES: u32 = 100_000;
/// Most contact-sheet frames.
pub const MAX_SHEET: u32 = 64;
/// Smallest and largest contact-sheet cell, pixels.
pub const CELL_RANGE: (u32, u32) = (16, 4096);
/// Gap between contact-sheet cells, pixels.
pub const SHEET_GAP: u32 = 4;

/// Refuse a lift flag the running lift ignores: `--gaussians`, `--texel-res`, `--sigma`,
/// `--shading` belong to one lift each, and a bundle's branches (`bundle`) set their own.
///
/// # Errors
/// The flag named, with the lift that runs and how to use the flag.
pub fn lift_flags(args: &AnimateArgs, bundle: bool) -> Result<()> {
    let wrong = [
        ("--gaussians", args.gaussians.is_some(), LiftChoice::Surface),
        ("--texel-res", args.texel_res.is_some(), LiftChoice::Texel),
        ("--sigma", args.sigma.is_some(), LiftChoice::Debug),
        ("--shading", args.shading.is_some(), LiftChoice::Debug),
    ];
    if bundle && args.lift.is_none() {
        if let Some((flag, _, owner)) = wrong.iter().find(|(_, set, _)| *set) {
            bail!(
                "{flag} applies to the {} lift, but this character is a bundle whose branches set their own lifts (its file's /branches/N/lift): leave {flag} out, or add --lift {} to replace the branches (and their decoders)",
                owner.name(),
                owner.name()
            );
        }
        return Ok(());
    }
    let lift = args.lift.unwrap_or(LiftChoice::Surface);
    if let Some((flag, _, owner)) = wrong.iter().find(|(_, set, owner)| *set && *owner != lift) {
        bail!(
            "{flag} applies to the {} lift, but this run uses the {} lift: add --lift {}, or leave {flag} out",
            owner.name(),
            lift.name(),
            owner.name()
        );
    }
    Ok(())
}

/// Flag ranges that need no input file: `--fps` in [[`MIN_FPS`], [`MAX_FPS`]], `--start` ≥ 0,
/// `--sigma` in (0, [`MAX_SIGMA_M`]], and a contact sheet of `--sheet` cells of `--cell` pixels
/// that fits [`MAX_IMAGE_SIDE`], and the speech flags ([`crate::speech::check_flags`]).
/// (`--frames`, `--sheet`, `--cell` ranges are clap's.)
///
/// # Errors
/// The first flag out of range, named with its value.
pub fn flags(args: &AnimateArgs) -> Result<()> {
    if !(args.fps.is_finite() && (MIN_FPS..=MAX_FPS).contains(&args.fps)) {
        bail!(
            "--fps {}: must be a frame rate from {MIN_FPS} to {MAX_FPS} frames per second",
            num(args.fps)
        );
    }
    if !(args.start.is_finite() && args.start >= 0.0) {
        bail!(
            "--start {}: must be a media time of 0 seconds or later",
            num(args.start)
        );
    }
    if let Some(s) = args.sigma
        && !(s.is_finite() && s > 0.0 && s <= MAX_SIGMA_M)
    {
        bail!(
            "--sigma {}: must be a gaussian size in metres, more than 0 and at most {MAX_SIGMA_M}",
            num(s)
        );
    }
    if let Some(s) = args.sigma
        && (s as f32) < mien_runtime::runtime::SIGMA_RANGE_M.0
    {
        bail!(
            "--sigma {}: must be a gaussian size of at least {} m (1 nm; smaller covariances underflow)",
            num(s),
            num(mien_runtime::runtime::SIGMA_RANGE_M.0)
        );
    }
    let max = mien_core::lift::surface::MAX_GAUSSIANS;
    if let Some(g) = args.gaussians
        && (g == 0 || u64::from(g) > max)
    {
        bail!("--gaussians {g}: must be a count of gaussians from 1 to {max}");
    }
    if let Some(t) = args.texel_res
        && !(16..=8192).contains(&t)
    {
        bail!("--texel-res {t}: must be a raster side from 16 to 8192 texels");
    }
    // A flag of another lift than the one running would be silently ignored: refuse it. (A
    // character file may be a bundle, whose branches are the lift: checked once it is loaded,
    // `lift_flags`.)
    let character_file = args
        .character
        .as_deref()
        .is_some_and(|p| p.to_string_lossy().to_ascii_lowercase().ends_with(".json"));
    if args.capture.is_none() && !(character_file && args.lift.is_none()) {
        lift_flags(args, false)?;
    }
    // `--ply sh3` lays out .ply files: with another --format it would be silently ignored.
    if args.ply == crate::args::PlyLayout::Sh3 && args.format != crate::args::FrameFormat::Ply {
        bail!(
            "--ply sh3 lays out .ply frames, but this run writes {} frames: add --format ply, or leave --ply out",
            match args.format {
                crate::args::FrameFormat::Spz => "SPZ",
                _ => ".glb",
            }
        );
    }
    crate::speech::check_flags(&args.speech)?;
    sheet(args.sheet, args.cell)
}

/// Columns of a contact sheet of `k` cells: `⌈√k⌉` (at least 1).
pub fn sheet_cols(k: u32) -> u32 {
    (f64::from(k).sqrt().ceil() as u32).max(1)
}

/// A sheet of `k` cells of `cell` pixels must fit [`MAX_IMAGE_SIDE`].
///
/// # Errors
/// Naming `--sheet` and `--cell`, the size it would have and the largest `--cell` that fits.
pub fn sheet(k: u32, cell: u32) -> Result<()> {
    if k == 0 {
        return Ok(());
    }
    let cols = sheet_cols(k);
    let rows = k.div_ceil(cols);
    if sheet_size(cols, cell, cell, SHEET_GAP, k as usize).is_err() {
        let n = u64::from(cols.max(rows));
        let side = n * u64::from(cell) + (n + 1) * u64::from(SHEET_GAP);
        let fit = (u64::from(MAX_IMAGE_SIDE) - (n + 1) * u64::from(SHEET_GAP)) / n;
        bail!(
            "--sheet {k} --cell {cell}: a contact sheet of {cols}×{rows} cells of {cell} px would be {side} px wide, more than the {MAX_IMAGE_SIDE} px mien draws; use --cell {fit} or less, fewer --sheet frames, or --sheet 0 for no preview"
        );
    }
    Ok(())
}

/// Frames the run poses: `--frames`, or enough to cover the animation from `--start` to its end
/// (`span` seconds) at `--fps`: `⌊(end − start)·fps + 10⁻⁶⌋ + 1`.
///
/// # Errors
/// `--start` after the animation's end (without `--frames`), an end that is not finite, or more
/// than [`MAX_FRAMES`] frames (the real count and the animation's duration are named).
pub fn frame_count(args: &AnimateArgs, span: (f64, f64)) -> Result<u32> {
    if let Some(n) = args.frames {
        return Ok(n);
    }
    let (begin, end) = span;
    if !end.is_finite() {
        bail!(
            "the animation's end time {} s is not usable; pass --frames N",
            num(end)
        );
    }
    let length = format!(
        "it runs {}–{} s, {} s long",
        num(begin),
        num(end),
        num(end - begin)
    );
    if args.start > end {
        bail!(
            "--start {}: after the end of the animation ({length}); pass an earlier --start, or --frames N to pose frames past its end",
            num(args.start)
        );
    }
    let n = ((end - args.start) * args.fps + 1e-6).floor() + 1.0;
    if n.is_nan() || n > f64::from(MAX_FRAMES) {
        bail!(
            "{} frames: {} s of animation from --start {} at --fps {} ({length}) is more than the {MAX_FRAMES} frames one run poses; pass --frames N, a lower --fps or a later --start",
            whole(n),
            num(end - args.start),
            num(args.start),
            num(args.fps)
        );
    }
    Ok(n as u32)
}
