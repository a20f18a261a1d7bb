//! `capture` and `golden` steps: the current frame posed on the CPU reference backend through the
//! runtime ([`crate::Runtime::update_with_poses`]), lifted with the debug vertex lift (one gaussian
//! per vertex, σ = 0.6 × the rest pose's median triangle edge, colours as `mien animate --shading
//! auto`) — or, for a character that wears cloth, the surface lift (the cloth is drawn by its own
//! bound lift on the simulated vertices), with the run's cloth and hair drawn as they are — and
//! drawn by the CPU splat rasteriser ([`mien_core::preview`]) into one square cell — the
//! same path and layout as one cell of `mien animate`'s contact sheet, seen from the character's
//! front ([`mien_core::anim::retarget::facing_of`]; +Z when it has no legs or arms to tell).

use std::sync::Arc;

use image::RgbImage;
use mien_core::preview::{Frame, MAX_SHEET_WORK, SheetOptions, plan_sheet, render_planned};
use mien_core::rig::{Character, Pose};
use mien_core::sink::{SlotRange, SplatBuffers};

use crate::error::{Context as _, Error, Result};
use crate::{Asset, Device, LiftKind, LiftOptions, Runtime, RuntimeOptions};

/// Gap around a cell, pixels (as `mien animate`'s sheet).
pub const CELL_GAP: u32 = 4;
/// Background of a cell, linear RGB in `[0,1]` (as `mien animate`'s sheet).
pub const BACKGROUND: [f32; 3] = [0.12, 0.12, 0.14];

/// The capture renderer of a run.
pub struct Capturer {
    rt: Runtime,
    nv: u32,
    sigma: f32,
    /// Seen from the character's front: the yaw of the way it faces.
    yaw: f64,
    poses: Vec<Pose>,
    frame: u64,
}

fn options(cell: u32, yaw: f64) -> SheetOptions {
    SheetOptions {
        cols: 1,
        cell_w: cell,
        cell_h: cell,
        gap: CELL_GAP,
        background: BACKGROUND,
        yaw,
        face: None,
        ..SheetOptions::default()
    }
}

impl Capturer {
    /// Upload `ch` to the CPU backend, derive σ from its rest pose and check the raster work of
    /// one cell of each size in `cells` on the rest pose (within
    /// [`mien_core::preview::MAX_SHEET_WORK`] pixel visits).
    ///
    /// # Errors
    /// A character without geometry or with degenerate geometry; a cell whose raster work is over
    /// the budget.
    pub fn new(
        ch: &Character,
        dynamics: &crate::dynamics::Dynamics,
        cells: &[u32],
    ) -> Result<Self> {
        let asset = Asset::from_character(ch.clone())?.with_dynamics(dynamics.clone());
        if asset.vertex_count() == 0 {
            return Err(Error::invalid(
                ch.source.clone(),
                "the displayed scene has no mesh geometry to draw",
            ));
        }
        // The debug lift: the goldens are drawn from one splat per vertex (docs/scenarios.md);
        // cloth needs the surface lift to be drawn where it was simulated.
        let kind = if dynamics.cloth.is_some() {
            LiftKind::Surface(Default::default())
        } else {
            LiftKind::Debug
        };
        let options = RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions {
                kind,
                ..Default::default()
            }),
        };
        let mut rt = Runtime::new(Arc::new(asset), &Device::Cpu, &options)?;
        rt.external_dynamics = true;
        let sigma = rt.lift().map_or(0.0, |l| l.sigma);
        let nv = rt.lift().map_or(0, |l| l.slots);
        let splats = rt.render_rest()?;
        let mut sizes = cells.to_vec();
        sizes.sort_unstable();
        sizes.dedup();
        let yaw = mien_core::anim::retarget::facing_of(ch).map_or(0.0, |f| f.x.atan2(f.z));
        for cell in sizes {
            draw(&splats, nv, sigma, cell, yaw, false)?;
        }
        Ok(Capturer {
            rt,
            nv,
            sigma,
            yaw,
            poses: vec![ch.rest_pose()],
            frame: 0,
        })
    }

    /// Draw `pose` into a `cell`×`cell` image (plus the gap around it).
    ///
    /// # Errors
    /// Backend, lift and raster errors; raster work over the budget.
    pub(crate) fn capture(
        &mut self,
        pose: &Pose,
        dynamics: &crate::dynamics::DynState,
        cell: u32,
    ) -> Result<RgbImage> {
        self.poses[0].clone_from(pose);
        self.rt.set_dynamics_outputs(0, dynamics);
        // Captures are not on one media clock: each is its own frame.
        self.rt.update_with_poses(self.frame as f64, &self.poses)?;
        self.frame += 1;
        let splats = self.rt.splats(0)?;
        draw(&splats, self.nv, self.sigma, cell, self.yaw, true)?
            .ok_or_else(|| Error::invalid("a capture", "the rasteriser drew nothing"))
    }
}

/// Plan one cell of `splats` (slots `0..n`), refuse it over the work budget, and draw it when
/// `render`.
fn draw(
    splats: &SplatBuffers,
    n: u32,
    sigma: f32,
    cell: u32,
    yaw: f64,
    render: bool,
) -> Result<Option<RgbImage>> {
    let ranges = [SlotRange {
        offset: 0,
        count: n,
    }];
    let frames = [Frame {
        buffers: splats,
        ranges: &ranges,
    }];
    let opts = options(cell, yaw);
    let plan = plan_sheet(&frames, &opts).context("cannot plan a capture")?;
    let work = plan.total_work();
    if work > MAX_SHEET_WORK {
        return Err(Error::invalid(
            format!("a capture of {cell} px"),
            format!(
                "drawing it would take {work} pixel visits (gaussians of σ = {sigma} m, derived from the mesh), more than the {MAX_SHEET_WORK} mien allows; use a smaller cell"
            ),
        ));
    }
    if !render {
        return Ok(None);
    }
    let drawn =
        render_planned(&frames, &opts, &plan, &mut |_| true).context("cannot draw a capture")?;
    Ok(drawn.map(|(image, _)| image))
}
