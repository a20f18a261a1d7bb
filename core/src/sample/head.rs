//! The skin of the sample head: a ring grid cast onto the sculpted field ([`super::sdf`]), with a
//! real slit for the mouth and for each eye, rolled-in lip and lid edges, a hair cap, and vertex
//! colours.
//!
//! The rows and columns come from [`super::layout`]; the mouth line and the eye line are rows. A
//! slit is a run of row vertices duplicated so that the rows above and below are not joined; the
//! opening is a vertical shift of the band rays' origins with a smooth falloff (monotone, so rows
//! never cross), after which the lip edges are rolled into the mouth and the lid edges pulled onto
//! the eyeball. Colours come from [`super::paint`].

use glam::DVec3;

use super::grid::{Rings, Topology};
use super::layout::{BAND_HI, BAND_LO, COLUMNS, Row, ray, rows};
use super::paint::{HAIR_THICKNESS, hair, skin_color};
use super::sdf::{self, EYE_CENTRE, EYE_RADIUS, MOUTH_HALF_WIDTH, MOUTH_Y};

/// Inner and outer corner of the left eye relative to its centre, metres.
const EYE_CORNERS: [f64; 2] = [-0.0122, 0.0132];
/// Opening of the upper and lower lid at the widest, metres.
const EYE_OPEN: [f64; 2] = [0.0042, 0.0036];
/// Falloff of the lid opening above and below, metres.
const EYE_FALL: [f64; 2] = [0.013, 0.011];
/// Rest parting of the upper and lower lip at the centre, metres, and its falloff.
const MOUTH_OPEN: [f64; 2] = [0.0006, 0.0006];
const MOUTH_FALL: f64 = 0.008;
/// How far the lip edge rolls into the mouth, metres (edge row, next row).
const LIP_CURL: [f64; 2] = [0.0035, 0.0008];
/// Radius the lid edge is pulled to (just outside the cornea), metres.
const LID_EDGE_RADIUS: f64 = EYE_RADIUS + 0.0009;
/// Per-vertex facts the morph targets need besides the position.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SkinTag {
    /// Signed column at full resolution (`−COLUMNS/2 ≤ col < COLUMNS/2`, mirror `col ↔ −col`).
    pub col: i32,
    /// +1 above the mouth line (or on its upper lip edge), −1 below (or on the lower edge), 0 on the
    /// line beyond the corners.
    pub mouth_side: i8,
    /// The mouth opening profile of the column: 1 at the centre, 0 at the corners and beyond.
    pub mouth_c: f64,
    /// Like `mouth_side`, for the eye line.
    pub eye_side: i8,
    /// The lid opening profile of the column (either eye): 0 at the corners and beyond.
    pub eye_c: f64,
}

/// The left eye's slit: the lid-edge vertices of each column from the inner to the outer corner.
#[derive(Clone, Debug, Default)]
pub(super) struct EyeSlit {
    /// First (inner corner) column.
    pub col_in: i32,
    /// Upper and lower lid-edge vertex of each column `col_in ..= col_in + len − 1` (the corners
    /// are shared).
    pub upper: Vec<u32>,
    /// See `upper`.
    pub lower: Vec<u32>,
}

/// The built skin.
#[derive(Clone, Debug, Default)]
pub(super) struct Skin {
    /// Positions `(V,3)`, metres, exactly mirror-symmetric.
    pub pos: Vec<DVec3>,
    /// Linear RGBA `(V,4)`.
    pub color: Vec<[f32; 4]>,
    /// Triangles and mirror map.
    pub topo: Topology,
    /// Per-vertex tags.
    pub tag: Vec<SkinTag>,
    /// The left eye's slit.
    pub eye: EyeSlit,
    /// The two mouth-corner vertices, left first.
    pub mouth_corners: [u32; 2],
    /// Upper and lower lip-edge vertex on the mid-plane.
    pub mouth_mid: [u32; 2],
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// 1 at `s = 0`, falling smoothly to 0 at `s = 1` and beyond.
fn fall(s: f64) -> f64 {
    1.0 - smoothstep(0.0, 1.0, s)
}

/// Which side of slit row `slit` a vertex of ring `r` is on (see [`SkinTag::mouth_side`]).
fn side(slit: usize, r: usize, in_slit: bool, dup: bool) -> i8 {
    match r.cmp(&slit) {
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal if dup => -1,
        std::cmp::Ordering::Equal if in_slit => 1,
        std::cmp::Ordering::Equal => 0,
    }
}

/// The mouth profile `1 − (x/x_corner)²` of each full-resolution column inside the slit
/// (`|col| < half`), 0 elsewhere, indexed by `col + COLUMNS/2`.
fn mouth_profile(row: &Row) -> (Vec<f64>, i32) {
    let x = front_x(row);
    let half = nearest(&x, MOUTH_HALF_WIDTH).max(1);
    let mut prof = vec![0.0; COLUMNS];
    for j in 0..half {
        let c = (1.0 - (x[j] / x[half]).powi(2)).max(0.0);
        prof[COLUMNS / 2 + j] = c;
        prof[COLUMNS / 2 - j] = c;
    }
    (prof, half as i32)
}

/// x of the unopened row's hits for the front columns `0 ..= COLUMNS/4`, where x grows with the
/// column.
fn front_x(row: &Row) -> Vec<f64> {
    (0..=COLUMNS / 4)
        .map(|j| sdf::cast(ray(row, j as f64).0, ray(row, j as f64).1).x)
        .collect()
}

/// The index of the value of `x` nearest `target`.
fn nearest(x: &[f64], target: f64) -> usize {
    (0..x.len())
        .min_by(|&a, &b| (x[a] - target).abs().total_cmp(&(x[b] - target).abs()))
        .unwrap_or(0)
}

/// The left eye's corner columns and each column's `t ∈ [−1, 1]` (inner → outer corner).
fn eye_columns(row: &Row) -> (i32, i32, Vec<f64>) {
    let x = front_x(row);
    let (ci, co) = (
        nearest(&x, EYE_CENTRE.x + EYE_CORNERS[0]),
        nearest(&x, EYE_CENTRE.x + EYE_CORNERS[1]),
    );
    let (mid, half) = (0.5 * (x[ci] + x[co]), 0.5 * (x[co] - x[ci]));
    let t = (ci..=co).map(|j| (x[j] - mid) / half).collect();
    (ci as i32, co as i32, t)
}

/// Upper and lower lid opening at `t ∈ [−1, 1]`: almond shaped, the upper lid's peak toward the
/// nose, the lower lid's toward the temple.
fn lid_opening(t: f64) -> (f64, f64) {
    let s = (1.0 - t * t).max(0.0);
    (
        EYE_OPEN[0] * s.powf(0.7) * (1.0 - 0.15 * t),
        EYE_OPEN[1] * s.powf(0.9) * (1.0 + 0.2 * t),
    )
}

/// Build the skin: positions, triangles, mirror map, tags and colours.
pub(super) fn build() -> Skin {
    let (rows, mouth_row, eye_row) = rows();
    let rings = Rings {
        counts: rows.iter().map(|r| r.count).collect(),
        cap_start: true,
        cap_end: true,
    };
    let mut topo = rings.topology();
    let (mouth_c, mouth_half) = mouth_profile(&rows[mouth_row]);
    let (eye_in, eye_out, eye_t) = eye_columns(&rows[eye_row]);
    let in_eye = |col: i32| col.abs() > eye_in && col.abs() < eye_out;
    let eye_t_at = |col: i32| in_eye(col).then(|| eye_t[(col.abs() - eye_in) as usize]);

    // Slit duplicates: the lower edges of the mouth and of both eyes.
    let mut dup_of: Vec<(usize, i32)> = Vec::new();
    for col in -mouth_half + 1..mouth_half {
        dup_of.push((mouth_row, col));
    }
    for col in (eye_in + 1..eye_out).chain(-eye_out + 1..-eye_in) {
        dup_of.push((eye_row, col));
    }
    let base_count = topo.vertex_count;
    let dup_index = |ring: usize, col: i32| {
        dup_of
            .iter()
            .position(|&d| d == (ring, col))
            .map(|k| (base_count + k) as u32)
    };
    // Re-point the triangles just below each slit row at the duplicates.
    for (t, tri) in topo.indices.chunks_exact_mut(3).enumerate() {
        let band = topo.band[t] as usize;
        if band + 1 != mouth_row && band + 1 != eye_row {
            continue;
        }
        for i in tri.iter_mut() {
            let v = *i as usize;
            let ring = band + 1;
            let o = rings.offset(ring);
            if v >= o && v < o + rows[ring].count {
                let col = (v - o) as i32 - (COLUMNS / 2) as i32;
                if let Some(d) = dup_index(ring, col) {
                    *i = d;
                }
            }
        }
    }
    topo.vertex_count += dup_of.len();
    for &(ring, col) in &dup_of {
        topo.mirror.push(dup_index(ring, -col).unwrap_or(0));
    }

    // Where each vertex sits in the grid: (ring or pole, full-resolution column, is duplicate).
    let nv = topo.vertex_count;
    let mut place: Vec<(Option<usize>, i32, bool)> = Vec::with_capacity(nv);
    place.push((None, 0, false));
    for (r, row) in rows.iter().enumerate() {
        let step = (COLUMNS / row.count) as i32;
        for c in 0..row.count {
            place.push((Some(r), (c as i32 - (row.count / 2) as i32) * step, false));
        }
    }
    place.push((None, 0, false));
    place.extend(dup_of.iter().map(|&(r, col)| (Some(r), col, true)));

    let mut pos = vec![DVec3::ZERO; nv];
    let mut tag = vec![SkinTag::default(); nv];
    for v in 0..nv {
        let (ring, col, dup) = place[v];
        let mc = mouth_c[(col + (COLUMNS / 2) as i32) as usize];
        let ec = eye_t_at(col).map_or(0.0, |et| 1.0 - et * et);
        let mut t = SkinTag {
            col,
            mouth_c: mc,
            eye_c: ec,
            ..Default::default()
        };
        match ring {
            Some(r) => {
                t.mouth_side = side(mouth_row, r, col.abs() < mouth_half, dup);
                t.eye_side = side(eye_row, r, in_eye(col), dup);
            }
            None => {
                t.mouth_side = if v == 0 { -1 } else { 1 };
                t.eye_side = t.mouth_side;
            }
        }
        tag[v] = t;
        pos[v] = match ring {
            None if v == 0 => sdf::cast(DVec3::new(0.0, BAND_LO, 0.0), DVec3::NEG_Y),
            None => sdf::cast(DVec3::new(0.0, BAND_HI, 0.0), DVec3::Y),
            Some(r) => {
                let mut row = rows[r];
                if row.theta == 0.0 {
                    row.origin_y += opening_shift(row.origin_y, &t, eye_t_at(col));
                }
                let (o, d) = ray(&row, col as f64);
                let mut p = sdf::cast(o, d);
                // Roll the lip edges into the mouth and pull the lid edges onto the eyeball.
                let horizontal = DVec3::new(d.x, 0.0, d.z).normalize_or_zero();
                if (r == mouth_row || r + 1 == mouth_row || r == mouth_row + 1) && mc > 0.0 {
                    let k = if r == mouth_row {
                        LIP_CURL[0]
                    } else {
                        LIP_CURL[1]
                    };
                    p -= horizontal * k * mc.sqrt();
                }
                if r == eye_row && (in_eye(col) || col.abs() == eye_in || col.abs() == eye_out) {
                    let e = DVec3::new(
                        EYE_CENTRE.x * f64::from(col.signum()),
                        EYE_CENTRE.y,
                        EYE_CENTRE.z,
                    );
                    let w = if in_eye(col) { 1.0 } else { 0.6 };
                    let q = e + (p - e) * (LID_EDGE_RADIUS / (p - e).length());
                    p = p.lerp(q, w);
                }
                p + d * HAIR_THICKNESS * hair(p)
            }
        };
    }
    // Exact mirror symmetry: the +X side is authoritative; the mid-plane has x = 0.
    for v in 0..nv {
        let m = topo.mirror[v] as usize;
        if m == v {
            pos[v].x = 0.0;
        } else if tag[v].col > 0 {
            pos[m] = DVec3::new(-pos[v].x, pos[v].y, pos[v].z);
        }
    }
    let color = (0..nv)
        .map(|v| {
            skin_color(
                pos[v],
                &tag[v],
                place[v].0 == Some(eye_row) && tag[v].eye_side > 0 && tag[v].eye_c > 0.0,
            )
        })
        .collect();

    let ring_vertex = |r: usize, col: i32| rings.vertex(r, i64::from(col)) as u32;
    let edge = |col: i32, upper: bool| -> u32 {
        match dup_index(eye_row, col) {
            Some(d) if !upper => d,
            _ => ring_vertex(eye_row, col),
        }
    };
    let eye = EyeSlit {
        col_in: eye_in,
        upper: (eye_in..=eye_out).map(|c| edge(c, true)).collect(),
        lower: (eye_in..=eye_out).map(|c| edge(c, false)).collect(),
    };
    let mouth_mid = [
        ring_vertex(mouth_row, 0),
        dup_index(mouth_row, 0).unwrap_or(0),
    ];
    Skin {
        pos,
        color,
        topo,
        tag,
        eye,
        mouth_corners: [
            ring_vertex(mouth_row, mouth_half),
            ring_vertex(mouth_row, -mouth_half),
        ],
        mouth_mid,
    }
}

/// Vertical shift of a band row's ray origin that opens the mouth and eye slits.
fn opening_shift(y: f64, t: &SkinTag, eye_t: Option<f64>) -> f64 {
    let mut dy = 0.0;
    if t.mouth_c > 0.0 {
        dy += if t.mouth_side > 0 {
            MOUTH_OPEN[0] * t.mouth_c * fall((y - MOUTH_Y) / MOUTH_FALL)
        } else {
            -MOUTH_OPEN[1] * t.mouth_c * fall((MOUTH_Y - y) / MOUTH_FALL)
        };
    }
    if let Some(et) = eye_t {
        let (up, down) = lid_opening(et);
        dy += if t.eye_side > 0 {
            up * fall((y - EYE_CENTRE.y) / EYE_FALL[0])
        } else {
            -down * fall((EYE_CENTRE.y - y) / EYE_FALL[1])
        };
    }
    dy
}
