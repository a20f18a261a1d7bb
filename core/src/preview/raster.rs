//! A CPU splat rasteriser (EWA splatting) for PNG previews. Single-threaded and deterministic.
//!
//! Source: Zwicker et al. 2002, "EWA Splatting" (the local affine approximation of the
//! perspective projection, `Σ' = J·W·Σ·Wᵀ·Jᵀ`, and a low-pass filter added to `Σ'`), and Kerbl et
//! al. 2023, "3D Gaussian Splatting…" §4 and §6 with its reference rasteriser
//! (`diff-gaussian-rasterization`, `forward.cu`): the centre clamped to 1.3× the view frustum
//! before the Jacobian, `+0.3 px²` on the diagonal, a `3·√λ_max` screen radius, per-pixel
//! `α = min(0.99, o·exp(−½ dᵀΣ'⁻¹d))`, contributions with `α < 1/255` or a positive exponent
//! skipped, front-to-back blending `C += c·α·T`, `T ← T·(1−α)`, and a pixel stopped (without the
//! contribution that would take `T` below `10⁻⁴`) once saturated; finally `C + T·background`.
//!
//! **Order.** Gaussians are sorted front to back by the view depth of their centres, ties broken
//! by slot index (a stable, total order: the same input gives bit-identical output). As in 3DGS
//! the sort is per gaussian, not per pixel, so intersecting gaussians blend in centre order.
//!
//! **Colour.** The sink's 8-bit colour is composited as stored and written without a transfer
//! function (3DGS renders the colour space its colours are in).

use glam::{DMat3, DVec3};
use image::{Rgb, RgbImage};

use super::camera::Camera;
use crate::error::Result;
use crate::sink::{SlotRange, SplatBuffers};

/// Low-pass filter added to the diagonal of the screen covariance, px² (3DGS `forward.cu`).
pub const LOW_PASS_PX2: f64 = 0.3;
/// Largest per-pixel alpha (3DGS).
pub const ALPHA_MAX: f64 = 0.99;
/// Smallest per-pixel alpha blended (3DGS).
pub const ALPHA_MIN: f64 = 1.0 / 255.0;
/// A pixel stops once its transmittance would fall below this (3DGS).
pub const T_MIN: f64 = 1e-4;
/// The Jacobian is evaluated at the centre clamped to this multiple of the frustum (3DGS).
pub const FRUSTUM_CLAMP: f64 = 1.3;

/// What the rasteriser did with the slots it was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RasterStats {
    /// Gaussians whose screen box touched the image.
    pub drawn: u64,
    /// Slots with opacity byte 0.
    pub transparent: u64,
    /// Centres behind the near plane.
    pub behind: u64,
    /// Non-finite values or a non-positive screen covariance determinant.
    pub degenerate: u64,
    /// Screen boxes entirely outside the image.
    pub offscreen: u64,
}

/// A rendered image and its statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// `width × height` RGB8.
    pub image: RgbImage,
    /// What happened to each slot.
    pub stats: RasterStats,
}

/// One gaussian after projection.
struct Splat2d {
    depth: f64,
    slot: usize,
    /// Centre, pixels.
    u: f64,
    v: f64,
    /// The inverse screen covariance `(a, b, c)` of `[[a, b], [b, c]]`.
    conic: [f64; 3],
    opacity: f64,
    color: [f64; 3],
    /// Pixel box `[x0, x1) × [y0, y1)`, clipped to the image.
    x0: u32,
    x1: u32,
    y0: u32,
    y1: u32,
}

/// Render the slots `ranges` of `buffers` through `camera` over `background` (RGB in `[0,1]`).
///
/// # Errors
/// [`crate::Error::Mismatch`] / [`crate::Error::Slots`] for inconsistent buffers or a range
/// outside them; [`crate::Error::Invalid`] / [`crate::Error::Limit`] for an empty or oversized
/// image. Bad gaussians are skipped and counted, never an error.
pub fn rasterize(
    camera: &Camera,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
    background: [f32; 3],
) -> Result<Rendered> {
    buffers.check_ranges(ranges)?;
    camera.validate()?;
    let (w, h) = (camera.width as usize, camera.height as usize);
    let proj = Projector::new(camera);
    let mut stats = RasterStats::default();
    let mut splats = Vec::new();
    for r in ranges {
        for slot in r.offset as usize..r.end() as usize {
            if let Some(s) = proj.project(buffers, slot, &mut stats) {
                splats.push(s);
            }
        }
    }
    splats.sort_by(|a, b| a.depth.total_cmp(&b.depth).then(a.slot.cmp(&b.slot)));

    let mut color = vec![[0.0f64; 3]; w * h];
    let mut trans = vec![1.0f64; w * h];
    let mut done = vec![false; w * h];
    // Pixels of each row not yet saturated: a saturated row is skipped whole (the same result as
    // testing each of its pixels, much faster under large, overlapping gaussians).
    let mut open = vec![camera.width; h];
    for s in &splats {
        for y in s.y0..s.y1 {
            if open[y as usize] == 0 {
                continue;
            }
            let dy = f64::from(y) + 0.5 - s.v;
            for x in s.x0..s.x1 {
                let p = y as usize * w + x as usize;
                if done[p] {
                    continue;
                }
                let dx = f64::from(x) + 0.5 - s.u;
                let power =
                    -0.5 * (s.conic[0] * dx * dx + s.conic[2] * dy * dy) - s.conic[1] * dx * dy;
                if power > 0.0 {
                    continue;
                }
                let alpha = (s.opacity * power.exp()).min(ALPHA_MAX);
                if alpha < ALPHA_MIN {
                    continue;
                }
                let t = trans[p];
                let next = t * (1.0 - alpha);
                if next < T_MIN {
                    done[p] = true;
                    open[y as usize] -= 1;
                    continue;
                }
                for (acc, c) in color[p].iter_mut().zip(s.color) {
                    *acc += c * alpha * t;
                }
                trans[p] = next;
            }
        }
    }

    let bg = background.map(f64::from);
    let image = RgbImage::from_fn(camera.width, camera.height, |x, y| {
        let p = y as usize * w + x as usize;
        Rgb([0, 1, 2].map(|k| to_u8(color[p][k] + trans[p] * bg[k])))
    });
    Ok(Rendered { image, stats })
}

/// The work [`rasterize`] would do for these inputs, in pixel visits: the sum over the gaussians it
/// would draw of their screen boxes clipped to the image (`(x1 − x0)·(y1 − y0)`, the box of radius
/// `⌈3·√λ_max⌉` pixels around the projected centre) plus the image's `width·height` pixels (the
/// resolve pass). An upper bound on the per-pixel blending steps; the projection of every slot
/// (`O(slots)`) is the cost of this estimate itself.
///
/// # Errors
/// As [`rasterize`].
pub fn raster_work(camera: &Camera, buffers: &SplatBuffers, ranges: &[SlotRange]) -> Result<u64> {
    buffers.check_ranges(ranges)?;
    camera.validate()?;
    let proj = Projector::new(camera);
    let mut stats = RasterStats::default();
    let mut work = u64::from(camera.width) * u64::from(camera.height);
    for r in ranges {
        for slot in r.offset as usize..r.end() as usize {
            if let Some(s) = proj.project(buffers, slot, &mut stats) {
                work += u64::from(s.x1 - s.x0) * u64::from(s.y1 - s.y0);
            }
        }
    }
    Ok(work)
}

/// `[0,1]` → byte, rounded to nearest.
fn to_u8(x: f64) -> u8 {
    (255.0 * x.clamp(0.0, 1.0)).round() as u8
}

/// The camera's per-frame constants.
struct Projector {
    view: DMat3,
    view_t: DMat3,
    t: DVec3,
    near: f64,
    focal: f64,
    width: f64,
    height: f64,
    lim_x: f64,
    lim_y: f64,
}

impl Projector {
    fn new(camera: &Camera) -> Self {
        let (view, t) = camera.view();
        let focal = camera.focal();
        let (width, height) = (f64::from(camera.width), f64::from(camera.height));
        Projector {
            view,
            view_t: view.transpose(),
            t,
            near: camera.near,
            focal,
            width,
            height,
            lim_x: FRUSTUM_CLAMP * 0.5 * width / focal,
            lim_y: FRUSTUM_CLAMP * 0.5 * height / focal,
        }
    }

    /// Project slot `slot` (EWA, 3DGS `preprocessCUDA`), or count why it is skipped.
    fn project(
        &self,
        buffers: &SplatBuffers,
        slot: usize,
        stats: &mut RasterStats,
    ) -> Option<Splat2d> {
        if buffers.color[slot] >> 24 == 0 {
            stats.transparent += 1;
            return None;
        }
        let rgba = buffers.rgba(slot).map(f64::from);
        let c = buffers.center[slot];
        let centre = DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]));
        let sigma =
            DMat3::from_cols_array_2d(&buffers.covariance(slot).map(|row| row.map(f64::from)));
        if !centre.is_finite() || !sigma.is_finite() {
            stats.degenerate += 1;
            return None;
        }
        let pc = self.view * centre + self.t;
        let d = -pc.z;
        if d < self.near {
            stats.behind += 1;
            return None;
        }
        let f = self.focal;
        let x = (pc.x / d).clamp(-self.lim_x, self.lim_x) * d;
        let y = (pc.y / d).clamp(-self.lim_y, self.lim_y) * d;
        // Rows of J·W, J = ∂(u, v)/∂(x, y, z) at the clamped centre, u = cx + f·x/d, v = cy − f·y/d.
        let t0 = self.view_t * DVec3::new(f / d, 0.0, f * x / (d * d));
        let t1 = self.view_t * DVec3::new(0.0, -f / d, -f * y / (d * d));
        let a = t0.dot(sigma * t0) + LOW_PASS_PX2;
        let b = t0.dot(sigma * t1);
        let cc = t1.dot(sigma * t1) + LOW_PASS_PX2;
        let det = a * cc - b * b;
        if !(det > 0.0 && det.is_finite()) {
            stats.degenerate += 1;
            return None;
        }
        let mid = 0.5 * (a + cc);
        let lambda_max = mid + (mid * mid - det).max(0.1).sqrt();
        let radius = (3.0 * lambda_max.sqrt()).ceil();
        let u = 0.5 * self.width + f * pc.x / d;
        let v = 0.5 * self.height - f * pc.y / d;
        let clip = |lo: f64, hi: f64, n: f64| {
            (
                lo.floor().clamp(0.0, n) as u32,
                hi.ceil().clamp(0.0, n) as u32,
            )
        };
        let (x0, x1) = clip(u - radius, u + radius, self.width);
        let (y0, y1) = clip(v - radius, v + radius, self.height);
        if x0 >= x1 || y0 >= y1 {
            stats.offscreen += 1;
            return None;
        }
        stats.drawn += 1;
        Some(Splat2d {
            depth: d,
            slot,
            u,
            v,
            conic: [cc / det, -b / det, a / det],
            opacity: rgba[3],
            color: [rgba[0], rgba[1], rgba[2]],
            x0,
            x1,
            y0,
            y1,
        })
    }
}
