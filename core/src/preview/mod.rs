//! PNG previews of splats: a perspective camera framed on the character, a CPU EWA splat
//! rasteriser, and contact sheets of several frames seen by one camera.
//!
//! Flow: [`splat_bounds`] → [`Camera::framing`] → [`rasterize`] (one `RgbImage` per frame) →
//! [`ContactSheet`] → [`write_png`] (atomic). [`render_sheet`] does all of it for a list of
//! [`Frame`]s; [`plan_sheet`] + [`render_planned`] do it in two steps, so a caller can see the
//! raster work ([`raster_work`], bounded by [`MAX_SHEET_WORK`]) before anything is drawn and report
//! progress cell by cell. Everything is single-threaded and deterministic (bit-identical output
//! for the same input).

pub mod camera;
pub mod raster;
pub mod sheet;

pub use camera::{Aabb, Camera, FRAMING_MARGIN, MAX_IMAGE_SIDE, splat_bounds};
pub use raster::{RasterStats, Rendered, raster_work, rasterize};
pub use sheet::{
    ContactSheet, Frame, MAX_SHEET_WORK, SheetOptions, SheetPlan, plan_sheet, render_planned,
    render_sheet, sheet_size, write_png,
};
