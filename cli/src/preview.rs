//! The contact sheet of `mien animate`: which frames it keeps (within a memory budget), the check
//! of its raster work before any frame is posed, and drawing it with a progress bar.
//!
//! Budgets (documented in the README):
//! - memory: the frames kept for the sheet hold at most [`MAX_KEPT_SPLATS`] splats together
//!   ([`SPLAT_BYTES`] each, ≈ 870 MB); a large character gets fewer sheet frames (or none when one
//!   frame is over the budget), and the report and summary say so;
//! - work: the sheet's raster work (pixel visits, [`mien_core::preview::raster_work`]) is at most
//!   [`MAX_SHEET_WORK`]; it is estimated on the rest pose before posing and checked again on the
//!   real frames before drawing; over it the run is refused, naming `--sigma`, `--cell` and
//!   `--sheet 0`.

use anyhow::{Context, Result, bail};
use image::RgbImage;
use indicatif::{ProgressBar, ProgressStyle};
use mien_core::preview::{Aabb, Frame, MAX_SHEET_WORK, SheetOptions, plan_sheet, render_planned};
use mien_core::sink::{SlotRange, SplatBuffers};

use crate::interrupt::{self, Interrupted};
use crate::text::{approx, count, num};
use crate::validate::{SHEET_GAP, sheet_cols};

/// Most splats kept in memory for the contact sheet, over all its frames (16 Mi).
pub const MAX_KEPT_SPLATS: u64 = 16 * 1024 * 1024;

/// Bytes one kept splat takes (centre 16, colour 4, covariance 32).
pub const SPLAT_BYTES: u64 = 52;

/// The frames the sheet shows and why they are fewer than asked for, if they are.
#[derive(Debug, PartialEq)]
pub struct SheetFrames {
    /// Frame indices, ascending.
    pub indices: Vec<u32>,
    /// Why the sheet has fewer frames than `--sheet` asked for (not said when the run simply has
    /// fewer frames).
    pub note: Option<String>,
}

/// Pick up to `want` evenly spaced frames of `frames` for a sheet of a character of `splats`
/// splats, within [`MAX_KEPT_SPLATS`].
pub fn sheet_frames(frames: u32, want: u32, splats: u32) -> SheetFrames {
    let asked = want.min(frames);
    let cap = (MAX_KEPT_SPLATS / u64::from(splats.max(1))).min(u64::from(u32::MAX)) as u32;
    let k = asked.min(cap);
    let note = (k < asked).then(|| {
        let mb = |n: u64| format!("{:.0} MB", (n * SPLAT_BYTES) as f64 / 1e6);
        let need = mb(u64::from(asked) * u64::from(splats));
        if k == 0 {
            format!(
                "no contact sheet: one frame of {splats} splats is more than the {MAX_KEPT_SPLATS} splats ({}) mien keeps for it",
                mb(MAX_KEPT_SPLATS)
            )
        } else {
            format!(
                "the contact sheet shows {k} of the {} asked for: {asked} frames of {splats} splats would take {need}; mien keeps at most {MAX_KEPT_SPLATS} splats ({}) for it",
                count(asked, "frame"),
                mb(MAX_KEPT_SPLATS)
            )
        }
    });
    SheetFrames {
        indices: sheet_indices(frames, k),
        note,
    }
}

/// Evenly spaced frame indices for the contact sheet (first and last included), ascending, unique.
pub fn sheet_indices(frames: u32, want: u32) -> Vec<u32> {
    let k = want.min(frames);
    if k == 0 {
        return Vec::new();
    }
    if k == 1 {
        return vec![0];
    }
    let mut v: Vec<u32> = (0..k)
        .map(|j| ((f64::from(j) * f64::from(frames - 1) / f64::from(k - 1)).round()) as u32)
        .collect();
    v.dedup();
    v
}

/// Layout of a sheet of `k` cells of `cell` pixels.
pub fn options(k: usize, knobs: &Knobs, face: Option<Aabb>) -> SheetOptions {
    SheetOptions {
        cols: sheet_cols(k as u32),
        cell_w: knobs.cell,
        cell_h: knobs.cell,
        gap: SHEET_GAP,
        background: [0.12, 0.12, 0.14],
        yaw: knobs.yaw,
        face,
        ..SheetOptions::default()
    }
}

/// The yaw the preview looks from: the character's front. VRM 0.x avatars face −Z (VRM 0.x
/// specification, "the model faces −Z"); glTF characters and VRM 1.0 face +Z.
pub fn front_yaw(ch: &mien_core::rig::Character) -> f64 {
    match &ch.vrm {
        Some(v) if v.version == mien_core::vrm::VrmVersion::V0 => std::f64::consts::PI,
        _ => 0.0,
    }
}

/// The head's slots for a face close-up row, when the character is a full body: the rest pose's
/// splats at or above the neck (or 10 % of the height below the head joint when there is no
/// neck) and within that height of the joint sideways, provided that region is under 40 % of the
/// character's height. Slots keep their meaning from frame to frame, so the close-up camera is
/// framed on these slots in the frames it shows ([`slots_box`]). `None` for a head-only
/// character or one without head or neck joints.
pub fn face_slots(
    ch: &mien_core::rig::Character,
    splats: &SplatBuffers,
    n: u32,
    names: &mien_core::anim::head::HeadJointNames,
) -> Option<Vec<u32>> {
    use glam::DVec3;
    let node_names: Vec<Option<&str>> = ch.nodes.iter().map(|n| n.name.as_deref()).collect();
    let found = mien_core::anim::head::HeadJoints::find(&node_names, names).ok()?;
    // A VRM's humanoid map names them; else the standard names; else any joint whose name
    // contains `neck` or `head` (CesiumMan's `Skeleton_neck_joint_1`).
    let vrm = |bone: &str| {
        ch.vrm
            .as_ref()
            .and_then(|v| v.bone(bone))
            .map(|n| n.index())
    };
    let containing = |word: &str| {
        node_names
            .iter()
            .position(|n| n.is_some_and(|n| n.to_ascii_lowercase().contains(word)))
    };
    let neck = vrm("neck").or(found.neck).or_else(|| containing("neck"));
    let head = vrm("head").or(found.head).or_else(|| containing("head"));
    let (mut scratch, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut scratch, &mut world);
    let at = |j: usize| world.get(j).map(|m| m.w_axis.truncate().as_dvec3());
    let all = mien_core::preview::splat_bounds(
        splats,
        &[SlotRange {
            offset: 0,
            count: n,
        }],
    )
    .ok()??;
    let height = all.max.y - all.min.y;
    let (pivot, floor) = match (neck.and_then(at), head.and_then(at)) {
        (Some(neck), _) => (neck, neck.y),
        (None, Some(head)) => (head, head.y - 0.1 * height),
        (None, None) => return None,
    };
    let reach = all.max.y - floor;
    if !(reach > 0.0 && reach < 0.4 * height) {
        return None;
    }
    let slots: Vec<u32> = (0..(n as usize).min(splats.len()))
        .filter(|&i| {
            let c = splats.center[i];
            let p = DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]));
            splats.rgba(i)[3] > 0.0
                && p.y >= floor
                && (p.x - pivot.x).abs() <= reach
                && (p.z - pivot.z).abs() <= reach
        })
        .map(|i| i as u32)
        .collect();
    (!slots.is_empty()).then_some(slots)
}

/// The box of `slots`' centres over `frames` (each frame's buffers hold the slots).
pub fn slots_box<'a>(
    frames: impl Iterator<Item = &'a SplatBuffers>,
    slots: &[u32],
) -> Option<Aabb> {
    use glam::DVec3;
    let mut b: Option<Aabb> = None;
    for f in frames {
        for &i in slots {
            let Some(c) = f.center.get(i as usize) else {
                continue;
            };
            let p = DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]));
            if !p.is_finite() {
                continue;
            }
            let q = Aabb { min: p, max: p };
            b = Some(b.map_or(q, |o| o.union(q)));
        }
    }
    b
}

/// What the refusal names.
pub struct Knobs {
    /// σ used, metres.
    pub sigma: f32,
    /// Whether σ was derived (no `--sigma`).
    pub derived: bool,
    /// `--cell`.
    pub cell: u32,
    /// The camera's yaw (the character's front, [`front_yaw`]).
    pub yaw: f64,
    /// The face close-up row's head slots ([`face_slots`]).
    pub face: Option<Vec<u32>>,
}

fn refuse(work: u64, cells: usize, k: &Knobs) -> Result<()> {
    if work > MAX_SHEET_WORK {
        bail!(
            "the preview would take {} pixel visits to rasterise ({} of {} px, gaussians of σ = {} m{}), more than the {} mien allows; use a smaller --sigma, a smaller --cell, fewer --sheet frames, or --sheet 0 for no preview",
            approx(work),
            count(cells as u64, "cell"),
            k.cell,
            num(k.sigma),
            if k.derived {
                ", derived from the mesh"
            } else {
                ""
            },
            approx(MAX_SHEET_WORK)
        );
    }
    Ok(())
}

/// Estimate the sheet's raster work from one posed frame (`splats`, slots `0..n`) seen as the
/// sheet will see it, times `cells`; refuse it over [`MAX_SHEET_WORK`]. Returns the estimate.
///
/// # Errors
/// The refusal (naming the flags); camera and raster errors.
pub fn precheck(splats: &SplatBuffers, n: u32, cells: usize, knobs: &Knobs) -> Result<u64> {
    let ranges = [SlotRange {
        offset: 0,
        count: n,
    }];
    let frame = [Frame {
        buffers: splats,
        ranges: &ranges,
    }];
    let face = knobs
        .face
        .as_deref()
        .and_then(|f| slots_box(std::iter::once(splats), f));
    let plan = plan_sheet(&frame, &options(1, knobs, face)).context("cannot plan the preview")?;
    let work = plan.total_work().saturating_mul(cells as u64);
    refuse(work, cells, knobs)?;
    Ok(work)
}

/// Draw the sheet of `kept` frames (slots `0..n` of each) with a progress bar (hidden when
/// `quiet`). Returns the image and its raster work.
///
/// # Errors
/// [`Interrupted`] when a stop is asked for; the work refusal; camera and raster errors.
pub fn render(
    kept: &[(u32, SplatBuffers)],
    n: u32,
    knobs: &Knobs,
    quiet: bool,
) -> Result<(RgbImage, u64)> {
    let ranges = [SlotRange {
        offset: 0,
        count: n,
    }];
    let frames: Vec<Frame<'_>> = kept
        .iter()
        .map(|(_, b)| Frame {
            buffers: b,
            ranges: &ranges,
        })
        .collect();
    let face = knobs
        .face
        .as_deref()
        .and_then(|f| slots_box(kept.iter().map(|(_, b)| b), f));
    let opts = options(frames.len(), knobs, face);
    let plan = plan_sheet(&frames, &opts).context("cannot plan the preview")?;
    let work = plan.total_work();
    refuse(work, frames.len(), knobs)?;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let pb = ProgressBar::new(frames.len() as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} preview {bar:40} {pos}/{len} cells  {elapsed_precise} eta {eta}",
        ) {
            pb.set_style(style);
        }
        pb
    };
    let drawn = render_planned(&frames, &opts, &plan, &mut |k| {
        bar.set_position(k as u64);
        !interrupt::requested()
    })
    .context("cannot render the preview")?;
    bar.finish_and_clear();
    let Some((image, _)) = drawn else {
        return Err(Interrupted.into());
    };
    Ok((image, work))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sheet_frames_fit_the_memory_budget() {
        // The built-in head (14,958 splats): all 12 asked for.
        let s = sheet_frames(31, 12, 14_958);
        assert_eq!(s.indices.len(), 12);
        assert_eq!(s.note, None);
        // A short run: fewer frames than asked, no note (nothing was cut).
        let s = sheet_frames(3, 12, 14_958);
        assert_eq!(s.indices, [0, 1, 2]);
        assert_eq!(s.note, None);
        // 5M splats: ⌊16,777,216 / 5,000,000⌋ = 3 frames, first and last included.
        let s = sheet_frames(64, 64, 5_000_000);
        assert_eq!(s.indices, [0, 32, 63]);
        let note = s.note.unwrap();
        assert!(note.contains("3 of the 64 frames"), "{note}");
        assert!(note.contains("16640 MB"), "64 × 5M × 52 bytes: {note}");
        // Over the budget in one frame: no sheet.
        let s = sheet_frames(10, 12, 20_000_000);
        assert!(s.indices.is_empty());
        assert!(s.note.unwrap().starts_with("no contact sheet"));
    }

    #[test]
    fn sheet_indices_are_even_and_include_the_ends() {
        assert_eq!(sheet_indices(10, 4), [0, 3, 6, 9]);
        assert_eq!(sheet_indices(1, 12), [0]);
        assert!(sheet_indices(10, 0).is_empty());
    }
}
