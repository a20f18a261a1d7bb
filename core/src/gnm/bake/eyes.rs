//! Eye rotation centres and per-vertex eye weights of a baked head.
//!
//! When the eyeball vertices are known (a range given on the command line, or a recognised head
//! such as ICT-FaceKit's 21451–24590), they are split by the sign of x (the character's left is
//! +X): the left eye is `eye_positions[0]`, the right `[1]`. Each centre is the least-squares sphere
//! through that eye's vertices (the algebraic fit `|p|² = 2c·p + k`, solved in f64), the point an
//! eyeball turns about; when the fit is singular the bounding-box centre is used and the report says
//! so. Each eyeball vertex gets weight 1 for its eye, every other vertex 0. Without known eyeballs
//! both centres are zero and every weight is 0: the gaze angles then move nothing, and the eyes are
//! whatever the expression shapes make of them.
//!
//! Source: seed 000 (`eyePositions (2,3)`, `eyeWeights (2,V)`, eye rotation about each centre).

use nalgebra::{Matrix4, Vector4};

use crate::error::{Error, Result};

/// How the eyeballs are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EyeSource {
    /// A recognised head's documented eyeball range (ICT-FaceKit), else none.
    #[default]
    Auto,
    /// No eyeballs: zero centres and weights.
    None,
    /// Vertices `first..=last` (zero-based, inclusive) are the two eyeballs.
    Range {
        /// First eyeball vertex.
        first: u32,
        /// Last eyeball vertex (inclusive).
        last: u32,
    },
}

/// ICT-FaceKit's eyeball vertices (upstream README; DATA.md), inclusive.
pub const ICT_EYEBALLS: (u32, u32) = (21451, 24590);
/// ICT-FaceKit's vertex count.
pub const ICT_VERTICES: usize = 26_719;

/// What the eyes came out as, for the report.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EyeFigures {
    /// `none`, `range FIRST-LAST` or `ICT-FaceKit eyeballs FIRST-LAST`.
    pub source: String,
    /// `sphere fit`, `bounding-box centre`, or `none`.
    pub method: String,
    /// Vertices weighted to the left and right eye.
    pub vertices: [usize; 2],
    /// Eyeball vertices on x = 0 (no side; weight 0).
    pub on_midline: usize,
    /// Centres `(2,3)`, metres.
    pub centres: [[f32; 3]; 2],
    /// Fitted radii, metres (0 without a fit).
    pub radii: [f64; 2],
}

/// Eye centres `(2,3)` and weights `(2,V)` for `positions` (metres) from `range` (inclusive),
/// labelled `source`.
///
/// # Errors
/// [`Error::Invalid`] when the range is empty or outside the vertices, or one side has no vertex.
pub fn eyes(
    positions: &[[f64; 3]],
    range: Option<(u32, u32)>,
    source: &str,
) -> Result<([[f32; 3]; 2], Vec<f32>, EyeFigures)> {
    let v = positions.len();
    let mut weights = vec![0.0f32; 2 * v];
    let Some((first, last)) = range else {
        return Ok((
            [[0.0; 3]; 2],
            weights,
            EyeFigures {
                source: "none".into(),
                method: "none".into(),
                ..Default::default()
            },
        ));
    };
    if first > last || last as usize >= v {
        return Err(Error::Invalid {
            what: format!("eyeballs {first}-{last}"),
            reason: format!("not a vertex range of the {v} vertices"),
        });
    }
    let mut sides: [Vec<[f64; 3]>; 2] = [Vec::new(), Vec::new()];
    let mut fig = EyeFigures {
        source: source.to_owned(),
        ..Default::default()
    };
    for i in first as usize..=last as usize {
        let p = positions[i];
        let s = if p[0] > 0.0 {
            0
        } else if p[0] < 0.0 {
            1
        } else {
            fig.on_midline += 1;
            continue;
        };
        weights[s * v + i] = 1.0;
        sides[s].push(p);
    }
    let mut centres = [[0.0f32; 3]; 2];
    let mut methods = Vec::new();
    for (s, pts) in sides.iter().enumerate() {
        if pts.is_empty() {
            return Err(Error::Invalid {
                what: format!("eyeballs {first}-{last}"),
                reason: format!(
                    "no vertex on the {} side (x {} 0)",
                    ["left", "right"][s],
                    [">", "<"][s]
                ),
            });
        }
        fig.vertices[s] = pts.len();
        let (c, r, m) = match sphere_fit(pts) {
            Some((c, r)) => (c, r, "sphere fit"),
            None => (bbox_centre(pts), 0.0, "bounding-box centre"),
        };
        centres[s] = c.map(|x| x as f32);
        fig.radii[s] = r;
        methods.push(m);
    }
    fig.centres = centres;
    fig.method = if methods[0] == methods[1] {
        methods[0].to_owned()
    } else {
        methods.join(" / ")
    };
    Ok((centres, weights, fig))
}

/// Least-squares sphere through `pts`: centre and radius, or `None` when singular. Solved about
/// the points' mean for conditioning.
fn sphere_fit(pts: &[[f64; 3]]) -> Option<([f64; 3], f64)> {
    if pts.len() < 4 {
        return None;
    }
    let n = pts.len() as f64;
    let mean = [0, 1, 2].map(|k| pts.iter().map(|p| p[k]).sum::<f64>() / n);
    let mut a = Matrix4::<f64>::zeros();
    let mut b = Vector4::<f64>::zeros();
    for p in pts {
        let q = [p[0] - mean[0], p[1] - mean[1], p[2] - mean[2]];
        let row = Vector4::new(2.0 * q[0], 2.0 * q[1], 2.0 * q[2], 1.0);
        let t = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
        a += row * row.transpose();
        b += row * t;
    }
    let x = a.lu().solve(&b)?;
    let c = [x[0], x[1], x[2]];
    let r2 = x[3] + c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    if !(r2 > 0.0 && x.iter().all(|v| v.is_finite())) {
        return None;
    }
    Some(([c[0] + mean[0], c[1] + mean[1], c[2] + mean[2]], r2.sqrt()))
}

fn bbox_centre(pts: &[[f64; 3]]) -> [f64; 3] {
    [0, 1, 2].map(|k| {
        let lo = pts.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
        let hi = pts.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max);
        (lo + hi) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_two_spheres() {
        // Points on two spheres of radius 0.012 about (±0.03, 0.04, 0.08), plus a face vertex.
        let mut pts = vec![[0.0, 0.0, 0.1]];
        for (cx, _) in [(0.03, 0), (-0.03, 1)] {
            for i in 0..40 {
                let (t, p) = (i as f64 * 0.7, i as f64 * 0.31);
                pts.push([
                    cx + 0.012 * t.sin() * p.cos(),
                    0.04 + 0.012 * t.sin() * p.sin(),
                    0.08 + 0.012 * t.cos(),
                ]);
            }
        }
        let (c, w, f) = eyes(&pts, Some((1, 80)), "range 1-80").unwrap();
        for (s, cx) in [(0, 0.03f32), (1, -0.03)] {
            assert!(
                (c[s][0] - cx).abs() < 1e-6
                    && (c[s][1] - 0.04).abs() < 1e-6
                    && (c[s][2] - 0.08).abs() < 1e-6,
                "{c:?}"
            );
            assert!((f.radii[s] - 0.012).abs() < 1e-9);
        }
        assert_eq!(f.vertices, [40, 40]);
        assert_eq!((w[0], w[1], w[81 + 41]), (0.0, 1.0, 1.0));
        assert!(eyes(&pts, Some((1, 81)), "x").is_err());
        assert!(eyes(&pts, Some((1, 40)), "x").is_err());
    }
}
