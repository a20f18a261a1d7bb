//! Contact sheets: K rendered frames in a grid, all seen by one camera, written as PNG.
//!
//! The camera is framed once on the union of every frame's splat bounds, so motion between frames
//! shows as motion in the grid rather than being re-centred away.

use std::path::Path;

use glam::DVec3;
use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder, Rgb, RgbImage};

use super::camera::{Aabb, Camera, check_size, splat_bounds};
use super::raster::{RasterStats, raster_work, rasterize};
use crate::error::{Error, Result};
use crate::io::atomic::write_atomic;
use crate::sink::{SlotRange, SplatBuffers};

/// A grid of equally sized cells separated (and surrounded) by `gap` pixels of `background`,
/// filled row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactSheet {
    cols: u32,
    cell_w: u32,
    cell_h: u32,
    gap: u32,
    background: Rgb<u8>,
    cells: Vec<RgbImage>,
}

impl ContactSheet {
    /// An empty sheet of `cols` columns of `cell_w × cell_h` cells, a 4-pixel gap, black gaps.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `cols` or a cell side is 0; [`Error::Limit`] when a cell side or the
    /// sheet's width exceeds [`super::MAX_IMAGE_SIDE`].
    pub fn new(cols: u32, cell_w: u32, cell_h: u32) -> Result<Self> {
        if cols == 0 {
            return Err(Error::Invalid {
                what: "contact sheet columns".into(),
                reason: "0".into(),
            });
        }
        check_size(cell_w, cell_h)?;
        let sheet = ContactSheet {
            cols,
            cell_w,
            cell_h,
            gap: 4,
            background: Rgb([0, 0, 0]),
            cells: Vec::new(),
        };
        sheet.size()?;
        Ok(sheet)
    }

    /// Set the gap between cells, pixels.
    ///
    /// # Errors
    /// [`Error::Limit`] when the sheet's width would exceed [`super::MAX_IMAGE_SIDE`].
    pub fn with_gap(mut self, gap: u32) -> Result<Self> {
        self.gap = gap;
        self.size()?;
        Ok(self)
    }

    /// Set the colour of the gaps and of empty cells.
    pub fn with_background(mut self, background: Rgb<u8>) -> Self {
        self.background = background;
        self
    }

    /// Number of cells pushed.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether no cell was pushed.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Append a cell.
    ///
    /// # Errors
    /// [`Error::Mismatch`] when `image` is not `cell_w × cell_h`; [`Error::Limit`] when the sheet
    /// would grow past [`super::MAX_IMAGE_SIDE`] pixels high.
    pub fn push(&mut self, image: RgbImage) -> Result<()> {
        for (what, expected, found) in [
            ("contact sheet cell width", self.cell_w, image.width()),
            ("contact sheet cell height", self.cell_h, image.height()),
        ] {
            if expected != found {
                return Err(Error::Mismatch {
                    what: what.into(),
                    expected: expected.into(),
                    found: found.into(),
                });
            }
        }
        self.cells.push(image);
        if let Err(e) = self.size() {
            self.cells.pop();
            return Err(e);
        }
        Ok(())
    }

    /// Sheet size in pixels: `cols·cell_w + (cols+1)·gap` wide, `rows·cell_h + (rows+1)·gap` high
    /// with `rows = max(1, ⌈len / cols⌉)`.
    ///
    /// # Errors
    /// [`Error::Limit`] when a side exceeds [`super::MAX_IMAGE_SIDE`].
    pub fn size(&self) -> Result<(u32, u32)> {
        sheet_size(
            self.cols,
            self.cell_w,
            self.cell_h,
            self.gap,
            self.cells.len(),
        )
    }

    /// The composed sheet. Cell `k` sits at column `k mod cols`, row `⌊k / cols⌋`, its top-left
    /// corner at `(gap + col·(cell_w + gap), gap + row·(cell_h + gap))`.
    ///
    /// # Errors
    /// As [`ContactSheet::size`] (cannot fail for a sheet built through this API).
    pub fn compose(&self) -> Result<RgbImage> {
        let (w, h) = self.size()?;
        let mut out = RgbImage::from_pixel(w, h, self.background);
        for (k, cell) in self.cells.iter().enumerate() {
            let (col, row) = ((k as u32) % self.cols, (k as u32) / self.cols);
            let x = self.gap + col * (self.cell_w + self.gap);
            let y = self.gap + row * (self.cell_h + self.gap);
            image::imageops::replace(&mut out, cell, i64::from(x), i64::from(y));
        }
        Ok(out)
    }

    /// Compose and write the sheet as PNG (see [`write_png`]).
    ///
    /// # Errors
    /// As [`ContactSheet::compose`] and [`write_png`].
    pub fn write_png(&self, path: &Path) -> Result<()> {
        write_png(path, &self.compose()?)
    }
}

/// Size in pixels of a sheet of `cells` cells in `cols` columns (see [`ContactSheet::size`]):
/// `cols·cell_w + (cols+1)·gap` wide, `rows·cell_h + (rows+1)·gap` high, `rows = max(1, ⌈cells /
/// cols⌉)`.
///
/// # Errors
/// [`Error::Invalid`] when `cols` is 0; [`Error::Limit`] when a side exceeds
/// [`super::MAX_IMAGE_SIDE`].
pub fn sheet_size(
    cols: u32,
    cell_w: u32,
    cell_h: u32,
    gap: u32,
    cells: usize,
) -> Result<(u32, u32)> {
    if cols == 0 {
        return Err(Error::Invalid {
            what: "contact sheet columns".into(),
            reason: "0".into(),
        });
    }
    let rows = cells.div_ceil(cols as usize).max(1) as u64;
    let side = |n: u64, cell: u32| n * u64::from(cell) + (n + 1) * u64::from(gap);
    let (w, h) = (side(u64::from(cols), cell_w), side(rows, cell_h));
    let limit = u64::from(super::MAX_IMAGE_SIDE);
    if w.max(h) > limit {
        return Err(Error::Limit {
            what: "contact sheet side, pixels".into(),
            limit,
            found: w.max(h),
        });
    }
    Ok((w as u32, h as u32))
}

/// Write an RGB8 image as PNG (the `image` crate's encoder) through [`write_atomic`].
///
/// # Errors
/// [`Error::Io`] naming `path` when encoding or writing fails; the target is then left as it was.
pub fn write_png(path: &Path, image: &RgbImage) -> Result<()> {
    write_atomic(path, |w| {
        PngEncoder::new(w)
            .write_image(
                image.as_raw(),
                image.width(),
                image.height(),
                ExtendedColorType::Rgb8,
            )
            .map_err(std::io::Error::other)
    })
}

/// One frame of a sheet: sink buffers and the slot ranges to draw.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// The frame's buffers.
    pub buffers: &'a SplatBuffers,
    /// The slots drawn.
    pub ranges: &'a [SlotRange],
}

/// How [`render_sheet`] lays out and frames the sheet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SheetOptions {
    /// Columns of the grid.
    pub cols: u32,
    /// Cell width, pixels.
    pub cell_w: u32,
    /// Cell height, pixels.
    pub cell_h: u32,
    /// Gap between cells, pixels.
    pub gap: u32,
    /// Vertical field of view, radians.
    pub fov_y: f64,
    /// Camera yaw about +Y, radians (0 = in front, see [`Camera::framing`]).
    pub yaw: f64,
    /// Background of every cell, RGB in `[0,1]`.
    pub background: [f32; 3],
    /// Colour of the gaps and of unused cells, RGB in `[0,1]`.
    pub gap_color: [f32; 3],
    /// A face close-up row: the world box of the character's head (metres). When set, a row of
    /// up to `cols` cells after the grid shows frames picked evenly (first and last included)
    /// through a second camera framed on this box from the same yaw, so a full-body avatar's face
    /// is legible at the cell size.
    pub face: Option<Aabb>,
}

impl Default for SheetOptions {
    /// 4 columns of 256×256 cells, 4-pixel dark gaps, 30° fov, front view, mid-grey background.
    fn default() -> Self {
        SheetOptions {
            cols: 4,
            cell_w: 256,
            cell_h: 256,
            gap: 4,
            fov_y: 30f64.to_radians(),
            yaw: 0.0,
            background: [0.5, 0.5, 0.5],
            gap_color: [0.1, 0.1, 0.1],
            face: None,
        }
    }
}

/// Most raster work one contact sheet may take, in pixel visits (the sum over its cells of
/// [`raster_work`]): 2·10⁹, about ten seconds to a minute on one core (1–20 ns a visit, less for
/// pixels already saturated). [`render_sheet`] and [`render_planned`] refuse a sheet over it
/// before drawing anything; smaller gaussians, smaller cells or fewer cells bring it down.
pub const MAX_SHEET_WORK: u64 = 2_000_000_000;

/// A contact sheet worked out before drawing: the shared camera and each cell's raster work.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetPlan {
    /// The camera every cell of the grid is seen through.
    pub camera: Camera,
    /// [`raster_work`] of each frame's cell, pixel visits, then of each close-up.
    pub work: Vec<u64>,
    /// The face close-up camera and the frames its row shows (see [`SheetOptions::face`]).
    pub face: Option<(Camera, Vec<usize>)>,
}

/// Cells of a sheet of `frames` frames: the grid, padded to full rows when a close-up row
/// follows, plus the close-ups; and the close-ups' frame indices.
fn cell_layout(frames: usize, options: &SheetOptions) -> (usize, Vec<usize>) {
    if options.face.is_none() || frames == 0 {
        return (frames, Vec::new());
    }
    let cols = options.cols.max(1) as usize;
    let k = cols.min(frames);
    let picks: Vec<usize> = if k == 1 {
        vec![0]
    } else {
        (0..k).map(|i| i * (frames - 1) / (k - 1)).collect()
    };
    (frames.div_ceil(cols) * cols + picks.len(), picks)
}

impl SheetPlan {
    /// The sheet's total raster work, pixel visits (saturating).
    pub fn total_work(&self) -> u64 {
        self.work.iter().fold(0u64, |a, w| a.saturating_add(*w))
    }
}

/// Frame the camera on the union of all frames' [`splat_bounds`] (a 1 m sphere at the origin when
/// no frame has a visible splat) and estimate each cell's [`raster_work`]. `O(frames × slots)`,
/// draws nothing.
///
/// # Errors
/// As [`sheet_size`] for `frames.len()` cells, [`Camera::framing`], [`splat_bounds`] and
/// [`raster_work`].
pub fn plan_sheet(frames: &[Frame<'_>], options: &SheetOptions) -> Result<SheetPlan> {
    check_size(options.cell_w, options.cell_h)?;
    let (cells, picks) = cell_layout(frames.len(), options);
    sheet_size(
        options.cols,
        options.cell_w,
        options.cell_h,
        options.gap,
        cells,
    )?;
    let camera = frame_camera(frames, options)?;
    let mut work = frames
        .iter()
        .map(|f| raster_work(&camera, f.buffers, f.ranges))
        .collect::<Result<Vec<_>>>()?;
    let face = match options.face {
        Some(b) if !picks.is_empty() => {
            let c = Camera::framing_box(
                b,
                options.cell_w,
                options.cell_h,
                options.fov_y,
                options.yaw,
            )?;
            for &i in &picks {
                work.push(raster_work(&c, frames[i].buffers, frames[i].ranges)?);
            }
            Some((c, picks))
        }
        _ => None,
    };
    Ok(SheetPlan { camera, work, face })
}

fn over_budget(plan: &SheetPlan) -> Result<()> {
    let found = plan.total_work();
    if found > MAX_SHEET_WORK {
        return Err(Error::Limit {
            what: "contact sheet raster work, pixel visits".into(),
            limit: MAX_SHEET_WORK,
            found,
        });
    }
    Ok(())
}

/// Draw a planned sheet straight into the sheet image (one cell's buffers alive at a time; layout
/// as [`ContactSheet::compose`]). `on_cell(k)` is called before cell `k` is drawn; when it returns
/// `false` drawing stops and `Ok(None)` is returned (progress reporting and cancellation).
/// Returns the sheet and the summed rasteriser statistics.
///
/// # Errors
/// [`Error::Limit`] when [`SheetPlan::total_work`] exceeds [`MAX_SHEET_WORK`] (nothing is drawn);
/// [`Error::Mismatch`] when `plan` has a different number of cells than `frames`; as
/// [`sheet_size`] and [`super::raster::rasterize`].
pub fn render_planned(
    frames: &[Frame<'_>],
    options: &SheetOptions,
    plan: &SheetPlan,
    on_cell: &mut dyn FnMut(usize) -> bool,
) -> Result<Option<(RgbImage, RasterStats)>> {
    let picks = plan.face.as_ref().map_or(0, |f| f.1.len());
    if plan.work.len() != frames.len() + picks {
        return Err(Error::Mismatch {
            what: "sheet plan cells".into(),
            expected: (frames.len() + picks) as u64,
            found: plan.work.len() as u64,
        });
    }
    over_budget(plan)?;
    let cols = options.cols.max(1) as usize;
    let cells = if picks > 0 {
        frames.len().div_ceil(cols) * cols + picks
    } else {
        frames.len()
    };
    let (w, h) = sheet_size(
        options.cols,
        options.cell_w,
        options.cell_h,
        options.gap,
        cells,
    )?;
    let mut out = RgbImage::from_pixel(w, h, Rgb(to_bytes(options.gap_color)));
    let mut stats = RasterStats::default();
    for (k, f) in frames.iter().enumerate() {
        if !on_cell(k) {
            return Ok(None);
        }
        let r = rasterize(&plan.camera, f.buffers, f.ranges, options.background)?;
        add_stats(&mut stats, &r.stats);
        place(&mut out, &r.image, k, options);
    }
    if let Some((camera, picks)) = &plan.face {
        let first = frames.len().div_ceil(cols) * cols;
        for (j, &i) in picks.iter().enumerate() {
            if !on_cell(frames.len() + j) {
                return Ok(None);
            }
            let f = &frames[i];
            let r = rasterize(camera, f.buffers, f.ranges, options.background)?;
            add_stats(&mut stats, &r.stats);
            place(&mut out, &r.image, first + j, options);
        }
    }
    Ok(Some((out, stats)))
}

/// Copy a cell image into cell `k` of the sheet (row by row).
fn place(out: &mut RgbImage, cell: &RgbImage, k: usize, options: &SheetOptions) {
    let (col, row) = ((k as u32) % options.cols, (k as u32) / options.cols);
    let x = options.gap + col * (options.cell_w + options.gap);
    let y = options.gap + row * (options.cell_h + options.gap);
    image::imageops::replace(out, cell, i64::from(x), i64::from(y));
}

fn to_bytes(c: [f32; 3]) -> [u8; 3] {
    c.map(|c| (255.0 * c.clamp(0.0, 1.0)).round() as u8)
}

fn add_stats(acc: &mut RasterStats, s: &RasterStats) {
    acc.drawn += s.drawn;
    acc.transparent += s.transparent;
    acc.behind += s.behind;
    acc.degenerate += s.degenerate;
    acc.offscreen += s.offscreen;
}

/// Render `frames` into a contact sheet with one camera framed on the union of all frames'
/// [`splat_bounds`] (a 1 m sphere at the origin when no frame has a visible splat). Returns the
/// sheet, the camera used, and the summed rasteriser statistics.
///
/// # Errors
/// As [`ContactSheet::new`], [`plan_sheet`] and [`super::raster::rasterize`]; [`Error::Limit`]
/// when the sheet's raster work exceeds [`MAX_SHEET_WORK`] (nothing is drawn).
pub fn render_sheet(
    frames: &[Frame<'_>],
    options: &SheetOptions,
) -> Result<(ContactSheet, Camera, RasterStats)> {
    let mut sheet = ContactSheet::new(options.cols, options.cell_w, options.cell_h)?
        .with_gap(options.gap)?
        .with_background(Rgb(to_bytes(options.gap_color)));
    let plan = plan_sheet(frames, options)?;
    over_budget(&plan)?;
    let camera = plan.camera;
    let mut stats = RasterStats::default();
    for f in frames {
        let r = rasterize(&camera, f.buffers, f.ranges, options.background)?;
        add_stats(&mut stats, &r.stats);
        sheet.push(r.image)?;
    }
    if let Some((face, picks)) = &plan.face {
        let cols = options.cols.max(1) as usize;
        let blank = RgbImage::from_pixel(
            options.cell_w,
            options.cell_h,
            Rgb(to_bytes(options.gap_color)),
        );
        for _ in frames.len()..frames.len().div_ceil(cols) * cols {
            sheet.push(blank.clone())?;
        }
        for &i in picks {
            let f = &frames[i];
            let r = rasterize(face, f.buffers, f.ranges, options.background)?;
            add_stats(&mut stats, &r.stats);
            sheet.push(r.image)?;
        }
    }
    Ok((sheet, camera, stats))
}

/// The camera of [`plan_sheet`].
fn frame_camera(frames: &[Frame<'_>], options: &SheetOptions) -> Result<Camera> {
    let mut bounds: Option<Aabb> = None;
    for f in frames {
        if let Some(b) = splat_bounds(f.buffers, f.ranges)? {
            bounds = Some(bounds.map_or(b, |o| o.union(b)));
        }
    }
    let camera = match bounds {
        Some(b) => Camera::framing_box(
            b,
            options.cell_w,
            options.cell_h,
            options.fov_y,
            options.yaw,
        )?,
        None => Camera::framing(
            DVec3::ZERO,
            1.0,
            options.cell_w,
            options.cell_h,
            options.fov_y,
            options.yaw,
        )?,
    };
    Ok(camera)
}
