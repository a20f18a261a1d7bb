//! Where the skin's vertices are cast from: the rows (horizontal planes across the face band,
//! fans toward the two poles above and below it) and the warped columns, with the cap rings
//! thinned to half, a quarter or an eighth of the columns as they get small.
//!
//! In the face band (`BAND_LO ≤ y ≤ BAND_HI`) every row is a horizontal plane whose rays leave the
//! vertical axis horizontally, so the mouth line and the eye line are exact rows. Cap rows are
//! spaced adaptively by casting probe rays, so neighbouring rows lie a set distance apart on the
//! surface even where it turns away from the rays (under the chin, down the neck).

use glam::DVec3;

use super::sdf::{self, EYE_CENTRE, MOUTH_Y};

/// Full-resolution columns per ring (divisible by 8 for the cap decimation).
pub(super) const COLUMNS: usize = 144;
/// Longitude warp `φ(t) = π·t − W1·sin(π·t) − W2·sin(2π·t)`: column steps about 0.6× the mean on
/// the face, 1.2× at the sides (where the head is narrow) and 0.9× at the back.
const WARP: [f64; 2] = [0.154, 0.115];
pub(super) const BAND_LO: f64 = -0.092;
pub(super) const BAND_HI: f64 = 0.062;
/// Band rows: `(top of segment, row step)` from `BAND_LO` up; finer around the mouth and eyes.
const BAND_SEGMENTS: [(f64, f64); 7] = [
    (MOUTH_Y - 0.008, 0.0034),
    (MOUTH_Y, 0.002),
    (MOUTH_Y + 0.008, 0.002),
    (EYE_CENTRE.y - 0.008, 0.0034),
    (EYE_CENTRE.y, 0.0018),
    (EYE_CENTRE.y + 0.014, 0.0018),
    (BAND_HI, 0.0034),
];
/// Target spacing of cap rows on the surface and the widest column spacing a cap ring may have,
/// metres: `[crown, neck]`.
const CAP_STEP: [f64; 2] = [0.0044, 0.0048];
const CAP_COLUMN_MAX: [f64; 2] = [0.005, 0.0052];
/// One ring of the skin grid.
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    /// Height of the ray origin on the vertical axis, metres.
    pub origin_y: f64,
    /// Elevation of the rays, radians (0 in the band).
    pub theta: f64,
    /// Columns in this ring (`COLUMNS` or a power-of-two fraction of it).
    pub count: usize,
}

/// Longitude of full-resolution signed column `col`, radians (0 = facing +Z, positive toward +X).
fn longitude(col: f64) -> f64 {
    use std::f64::consts::PI;
    let t = col / (COLUMNS / 2) as f64;
    PI * t - WARP[0] * (PI * t).sin() - WARP[1] * (2.0 * PI * t).sin()
}

/// `dφ/dcol` at `col`.
fn longitude_step(col: f64) -> f64 {
    use std::f64::consts::PI;
    let t = col / (COLUMNS / 2) as f64;
    (PI - WARP[0] * PI * (PI * t).cos() - WARP[1] * 2.0 * PI * (2.0 * PI * t).cos())
        / (COLUMNS / 2) as f64
}

pub(super) fn ray(row: &Row, col: f64) -> (DVec3, DVec3) {
    let (phi, th) = (longitude(col), row.theta);
    (
        DVec3::new(0.0, row.origin_y, 0.0),
        DVec3::new(th.cos() * phi.sin(), th.sin(), th.cos() * phi.cos()),
    )
}

/// Columns sampled to measure a cap ring (front, sides, back).
const PROBES: [f64; 5] = [0.0, 24.0, 36.0, 54.0, 72.0];

/// Cap rows from the band end at `origin_y` toward the pole (`sign` = +1 up, −1 down), spaced so
/// neighbouring rows lie about `CAP_STEP` apart on the surface, each with as few columns (full,
/// ½, ¼, ⅛) as keep the columns at most `CAP_COLUMN_MAX` apart. Ordered from the band outward.
fn cap_rows(origin_y: f64, sign: f64) -> Vec<Row> {
    use std::f64::consts::FRAC_PI_2;
    let k = usize::from(sign < 0.0);
    let (cap_step, column_max) = (CAP_STEP[k], CAP_COLUMN_MAX[k]);
    let hits = |theta: f64| -> Vec<DVec3> {
        let row = Row {
            origin_y,
            theta,
            count: COLUMNS,
        };
        PROBES
            .iter()
            .map(|&c| sdf::cast(ray(&row, c).0, ray(&row, c).1))
            .collect()
    };
    let mut thetas = Vec::new();
    let (mut th, mut prev) = (0.0f64, hits(0.0));
    while th < FRAC_PI_2 {
        let rho = prev
            .iter()
            .map(|p| (*p - DVec3::new(0.0, origin_y, 0.0)).length())
            .fold(0.0, f64::max);
        let mut step = cap_step / rho.max(0.01);
        let mut next = hits(sign * (th + step).min(FRAC_PI_2));
        for _ in 0..6 {
            let gap = prev
                .iter()
                .zip(&next)
                .map(|(a, b)| (*a - *b).length())
                .fold(0.0, f64::max);
            if gap <= 1.5 * cap_step {
                break;
            }
            step *= 0.7;
            next = hits(sign * (th + step).min(FRAC_PI_2));
        }
        th += step;
        thetas.push(th);
        prev = next;
    }
    // Stretch so the last step lands on the pole, which is the cap vertex, not a row.
    let scale = FRAC_PI_2 / th;
    thetas.pop();
    let mut count = COLUMNS;
    thetas
        .into_iter()
        .map(|t| {
            let theta = sign * t * scale;
            let h = hits(theta);
            let widest = |n: usize| {
                PROBES
                    .iter()
                    .zip(&h)
                    .map(|(&c, p)| p.x.hypot(p.z) * longitude_step(c) * (COLUMNS / n) as f64)
                    .fold(0.0, f64::max)
            };
            while count > COLUMNS / 8 && widest(count / 2) <= column_max {
                count /= 2;
            }
            Row {
                origin_y,
                theta,
                count,
            }
        })
        .collect()
}

/// Rows bottom to top (the poles are the rings' caps) and the indices of the mouth and eye rows.
pub(super) fn rows() -> (Vec<Row>, usize, usize) {
    let mut out: Vec<Row> = cap_rows(BAND_LO, -1.0).into_iter().rev().collect();
    out.push(Row {
        origin_y: BAND_LO,
        theta: 0.0,
        count: COLUMNS,
    });
    let (mut mouth, mut eye, mut y0) = (0, 0, BAND_LO);
    for &(y1, step) in &BAND_SEGMENTS {
        let n = ((y1 - y0) / step).round().max(1.0) as usize;
        for k in 1..=n {
            let y = if k == n {
                y1
            } else {
                y0 + (y1 - y0) * k as f64 / n as f64
            };
            out.push(Row {
                origin_y: y,
                theta: 0.0,
                count: COLUMNS,
            });
        }
        if y1 == MOUTH_Y {
            mouth = out.len() - 1;
        }
        if y1 == EYE_CENTRE.y {
            eye = out.len() - 1;
        }
        y0 = y1;
    }
    out.extend(cap_rows(BAND_HI, 1.0));
    (out, mouth, eye)
}
