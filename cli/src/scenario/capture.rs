//! `capture` steps: the current frame posed on the CPU reference backend, lifted with the debug
//! vertex lift (one gaussian per vertex, σ = 0.6 × the rest pose's median triangle edge, colours
//! as `mien animate --shading auto`) and drawn by the CPU splat rasteriser into one square cell —
//! the same path as a cell of `mien animate`'s contact sheet.

use anyhow::{Context, Result, bail, ensure};
use glam::Mat4;
use image::RgbImage;
use mien_core::lift::{DebugLiftParams, DebugShading};
use mien_core::rig::{Character, Pose, RigControls, RigData};
use mien_core::sink::SlotRange;

use crate::animate::DEFAULT_SIGMA_EDGES;
use crate::args::BackendChoice;
use crate::engine::{self, Engine};
use crate::preview::{self, Knobs};

/// The capture renderer of a run.
pub struct Capturer {
    engine: Box<dyn Engine>,
    rig: RigData,
    controls: RigControls,
    nv: u32,
    sigma: f32,
}

/// Median triangle edge of `pos` (metres), `None` without an edge of finite non-zero length.
fn median_edge(rig: &RigData, pos: &[[f32; 3]]) -> Option<f32> {
    let mut e: Vec<f32> = rig
        .triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| {
            let (a, b) = (pos[a as usize], pos[b as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .filter(|l| l.is_finite() && *l > 0.0)
        .collect();
    if e.is_empty() {
        return None;
    }
    let mid = e.len() / 2;
    Some(*e.select_nth_unstable_by(mid, f32::total_cmp).1)
}

impl Capturer {
    /// Upload `ch` to the CPU backend, derive σ from its rest pose and check the raster work of
    /// one cell of each size in `cells` on the rest pose (as `mien animate` checks its sheet).
    ///
    /// # Errors
    /// A character without geometry or with degenerate geometry; a cell whose raster work is over
    /// the preview budget.
    pub fn new(ch: &Character, cells: &[u32]) -> Result<Self> {
        let rig = RigData::from_character(ch).context("cannot flatten the character for posing")?;
        if rig.vertex_count() == 0 {
            bail!(
                "{}: the displayed scene has no mesh geometry to draw",
                ch.source
            );
        }
        let nv = rig.vertex_count() as u32;
        let (mut engine, _) = engine::choose(BackendChoice::Cpu, &rig)?;
        let rest = ch.rest_pose();
        let (mut locals, mut world) = (Vec::new(), Vec::new());
        let mut controls = RigControls::default();
        ch.world_matrices(&rest, &mut locals, &mut world);
        rig.controls_from_pose(&rest, &world, &mut controls);
        engine.set_controls(&controls)?;
        let rest_pos = engine.pose_and_read()?;
        let sigma = DEFAULT_SIGMA_EDGES * median_edge(&rig, &rest_pos).unwrap_or(0.0);
        ensure!(
            sigma.is_finite() && sigma > 0.0,
            "{}: cannot derive a gaussian size from degenerate geometry",
            ch.source
        );
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for v in &rest_pos {
            for k in 0..3 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        let range = SlotRange {
            offset: 0,
            count: nv,
        };
        let mut params = DebugLiftParams::new(range, nv);
        params.sigma = sigma;
        let colours = ch
            .meshes
            .iter()
            .flat_map(|m| &m.primitives)
            .any(|p| !p.colors.is_empty());
        params.shading = if colours {
            DebugShading::Tint
        } else {
            DebugShading::Normal
        };
        params.centroid = [0, 1, 2].map(|k| 0.5 * (lo[k] + hi[k]));
        engine.attach_lift(params)?;
        engine.frame()?;
        let splats = engine.splats()?;
        let mut sizes = cells.to_vec();
        sizes.sort_unstable();
        sizes.dedup();
        for cell in sizes {
            preview::precheck(&splats, nv, 1, &knobs(sigma, cell))?;
        }
        Ok(Capturer {
            engine,
            rig,
            controls,
            nv,
            sigma,
        })
    }

    /// Draw `pose` (with its world matrices `world`) into a `cell`×`cell` image.
    ///
    /// # Errors
    /// Backend, lift and raster errors; raster work over the budget.
    pub fn capture(&mut self, pose: &Pose, world: &[Mat4], cell: u32) -> Result<RgbImage> {
        self.rig.controls_from_pose(pose, world, &mut self.controls);
        self.engine.set_controls(&self.controls)?;
        self.engine.frame()?;
        let splats = self.engine.splats()?;
        let (image, _) = preview::render(&[(0, splats)], self.nv, &knobs(self.sigma, cell), true)?;
        Ok(image)
    }
}

fn knobs(sigma: f32, cell: u32) -> Knobs {
    Knobs {
        sigma,
        derived: true,
        cell,
    }
}
