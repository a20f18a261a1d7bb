//! `capture` steps: the current frame posed on the CPU reference backend through the runtime
//! ([`mien_runtime::Runtime::update_with_poses`]), lifted with the debug vertex lift (one gaussian
//! per vertex, σ = 0.6 × the rest pose's median triangle edge, colours as `mien animate --shading
//! auto`) and drawn by the CPU splat rasteriser into one square cell — the same path as a cell of
//! `mien animate`'s contact sheet.

use std::sync::Arc;

use anyhow::{Result, bail};
use glam::Mat4;
use image::RgbImage;
use mien_core::rig::{Character, Pose};
use mien_runtime::{Asset, Device, LiftKind, LiftOptions, Runtime, RuntimeOptions};

use crate::preview::{self, Knobs};

/// The capture renderer of a run.
pub struct Capturer {
    rt: Runtime,
    nv: u32,
    sigma: f32,
    poses: Vec<Pose>,
    frame: u64,
}

impl Capturer {
    /// Upload `ch` to the CPU backend, derive σ from its rest pose and check the raster work of
    /// one cell of each size in `cells` on the rest pose (as `mien animate` checks its sheet).
    ///
    /// # Errors
    /// A character without geometry or with degenerate geometry; a cell whose raster work is over
    /// the preview budget.
    pub fn new(ch: &Character, cells: &[u32]) -> Result<Self> {
        let asset = Asset::from_character(ch.clone())?;
        if asset.vertex_count() == 0 {
            bail!(
                "{}: the displayed scene has no mesh geometry to draw",
                ch.source
            );
        }
        let nv = asset.vertex_count();
        // The debug lift: the goldens are drawn from one splat per vertex (docs/scenarios.md).
        let options = RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions {
                kind: LiftKind::Debug,
                ..Default::default()
            }),
        };
        let mut rt = Runtime::new(Arc::new(asset), &Device::Cpu, &options)?;
        let sigma = rt.lift().map_or(0.0, |l| l.sigma);
        let splats = rt.render_rest()?;
        let mut sizes = cells.to_vec();
        sizes.sort_unstable();
        sizes.dedup();
        for cell in sizes {
            preview::precheck(&splats, nv, 1, &knobs(sigma, cell))?;
        }
        Ok(Capturer {
            rt,
            nv,
            sigma,
            poses: vec![ch.rest_pose()],
            frame: 0,
        })
    }

    /// Draw `pose` into a `cell`×`cell` image (`_world`: its world matrices, which the runtime
    /// recomputes from the pose).
    ///
    /// # Errors
    /// Backend, lift and raster errors; raster work over the budget.
    pub fn capture(&mut self, pose: &Pose, _world: &[Mat4], cell: u32) -> Result<RgbImage> {
        self.poses[0].clone_from(pose);
        // Captures are not on one media clock: each is its own frame.
        self.rt.update_with_poses(self.frame as f64, &self.poses)?;
        self.frame += 1;
        let splats = self.rt.splats(0)?;
        let (image, _) = preview::render(&[(0, splats)], self.nv, &knobs(self.sigma, cell), true)?;
        Ok(image)
    }
}

fn knobs(sigma: f32, cell: u32) -> Knobs {
    Knobs {
        sigma,
        derived: true,
        cell,
        yaw: 0.0,
        face: None,
    }
}
