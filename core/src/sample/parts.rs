//! The sample head's inner parts: eyeballs (sclera, iris, pupil, a slight cornea bulge), the mouth
//! cavity (a dark cup open toward the lips, normals facing into the mouth), upper and lower teeth
//! (front sheets with gums and tooth gaps) and the tongue. Positions in metres, colours linear RGBA.

use glam::DVec3;

use super::grid::{Rings, Topology, sheet};
use super::sdf::{EYE_CENTRE, EYE_RADIUS, MOUTH_Y};

/// One built part: positions, colours and grid topology (with its own mirror map).
#[derive(Clone, Debug, Default)]
pub(super) struct Part {
    /// Positions `(V,3)`, metres.
    pub pos: Vec<DVec3>,
    /// Linear RGBA `(V,4)`.
    pub color: Vec<[f32; 4]>,
    /// Triangles and mirror map.
    pub topo: Topology,
}

/// The mouth cavity's centre (the middle of its open rim), metres.
pub(super) const CAVITY_CENTRE: DVec3 = DVec3::new(0.0, MOUTH_Y - 0.001, 0.083);
/// The tongue's centre and semi-axes, metres.
pub(super) const TONGUE_CENTRE: DVec3 = DVec3::new(0.0, MOUTH_Y - 0.0088, 0.053);
const TONGUE_RADII: DVec3 = DVec3::new(0.0165, 0.0055, 0.022);

fn rgba(c: [f64; 3]) -> [f32; 4] {
    [c[0] as f32, c[1] as f32, c[2] as f32, 1.0]
}

fn lerp3(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    let t = t.clamp(0.0, 1.0);
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// Signed column angle for `j` of `n` columns, radians.
fn column_angle(j: i64, n: usize) -> f64 {
    std::f64::consts::TAU * j as f64 / n as f64
}

/// Fill the ring vertices of `rings` by `f(ring, column angle)`; the caps get `cap(false|true)`.
fn fill_rings(
    rings: &Rings,
    f: impl Fn(usize, f64) -> (DVec3, [f32; 4]),
    cap: impl Fn(bool) -> (DVec3, [f32; 4]),
) -> Part {
    let topo = rings.topology();
    let mut pos = Vec::with_capacity(topo.vertex_count);
    let mut color = Vec::with_capacity(topo.vertex_count);
    let mut push = |(p, c): (DVec3, [f32; 4])| {
        pos.push(p);
        color.push(c);
    };
    if rings.cap_start {
        push(cap(false));
    }
    for (r, &n) in rings.counts.iter().enumerate() {
        for c in 0..n {
            push(f(r, column_angle(c as i64 - (n / 2) as i64, n)));
        }
    }
    if rings.cap_end {
        push(cap(true));
    }
    Part { pos, color, topo }
}

/// The left eyeball about [`EYE_CENTRE`], gaze +Z: rings from the back pole to the pupil centre.
pub(super) fn eyeball() -> Part {
    // Polar angles from the gaze axis: coarse over the hidden back, finer over the iris.
    let alpha: Vec<f64> = [
        166.0, 148.0, 130.0, 112.0, 96.0, 82.0, 70.0, 60.0, 52.0, 45.0, 39.0, 34.0, 29.0, 24.5,
        20.0, 15.5, 11.0, 6.0,
    ]
    .map(f64::to_radians)
    .to_vec();
    let cols = 28;
    let rings = Rings {
        counts: vec![cols; alpha.len()],
        cap_start: true,
        cap_end: true,
    };
    let point = |a: f64, psi: f64| {
        // A slight cornea bulge in front; the part always under the lids recedes a little so that,
        // drawn as 2 mm splats sorted by depth, it does not bleed over the lids.
        let bulge = 0.0007 * (1.0 - (a / 0.5).powi(2)).max(0.0).powi(2);
        let t = ((a - 0.75) / 0.45).clamp(0.0, 1.0);
        let r = EYE_RADIUS + bulge - 0.0014 * t * t * (3.0 - 2.0 * t);
        EYE_CENTRE + DVec3::new(a.sin() * psi.sin(), -a.sin() * psi.cos(), a.cos()) * r
    };
    fill_rings(
        &rings,
        |r, psi| (point(alpha[r], psi), rgba(eye_color(alpha[r], psi))),
        |front| {
            let a = if front { 0.0 } else { std::f64::consts::PI };
            (point(a, 0.0), rgba(eye_color(a, 0.0)))
        },
    )
}

/// Sclera, limbal ring, a two-tone iris with radial fibres, pupil: by polar angle `a` from the
/// gaze axis and the angle `psi` around it.
fn eye_color(a: f64, psi: f64) -> [f64; 3] {
    const PUPIL: [f64; 3] = [0.01, 0.01, 0.012];
    const IRIS_IN: [f64; 3] = [0.36, 0.24, 0.08];
    const IRIS_OUT: [f64; 3] = [0.12, 0.36, 0.55];
    const SCLERA: [f64; 3] = [0.74, 0.71, 0.66];
    const SCLERA_BACK: [f64; 3] = [0.2, 0.08, 0.07];
    if a < 0.11 {
        return PUPIL;
    }
    if a < 0.47 {
        let fibre = 0.85 + 0.15 * (11.0 * psi).sin() * (5.0 * psi + 1.0).cos();
        let base = lerp3(IRIS_IN, IRIS_OUT, (a - 0.16) / 0.1);
        let limbus = 1.0 - 0.6 * ((a - 0.4) / 0.07).clamp(0.0, 1.0);
        return base.map(|x| x * fibre * limbus);
    }
    lerp3(SCLERA, SCLERA_BACK, (a - 1.3) / 0.6)
}

/// The mouth cavity: half an ellipsoid open toward the lips, bent to follow the face and tilted
/// back below, with normals facing into the mouth.
pub(super) fn cavity() -> Part {
    let (a, b_up, b_down, depth) = (0.0235, 0.0125, 0.0135, 0.03);
    let beta: Vec<f64> = (1..=12)
        .map(|k| (90.0 * k as f64 / 12.0).to_radians())
        .collect();
    let rings = Rings {
        counts: vec![32; beta.len()],
        cap_start: true,
        cap_end: false,
    };
    let point = |be: f64, psi: f64| {
        let (s, c) = (be.sin(), psi.cos());
        let ly = s * c * if c > 0.0 { b_up } else { b_down };
        let x = a * s * psi.sin();
        let z = -depth * be.cos() - 0.016 * (x / a).powi(2) - 0.008 * (-ly / b_down).max(0.0);
        CAVITY_CENTRE + DVec3::new(x, ly, z)
    };
    let color = |be: f64| {
        let t = be / std::f64::consts::FRAC_PI_2;
        rgba(lerp3([0.025, 0.004, 0.006], [0.16, 0.035, 0.04], t * t))
    };
    fill_rings(
        &rings,
        |r, psi| (point(beta[r], psi), color(beta[r])),
        |_| (point(0.0, 0.0), color(0.0)),
    )
}

/// Upper (`upper = true`) or lower teeth: a front sheet along a parabolic arch, gum band at the
/// root, darker gaps between teeth.
pub(super) fn teeth(upper: bool) -> Part {
    let (half, rows) = (14usize, 7usize);
    let (w, depth, z0) = if upper {
        (0.0195, 0.017, 0.0805)
    } else {
        (0.0175, 0.016, 0.0788)
    };
    // Rows from the biting edge (row 0 for the upper teeth's bottom) upward.
    let (y_low, y_high) = if upper {
        (MOUTH_Y - 0.0016, MOUTH_Y + 0.009)
    } else {
        (MOUTH_Y - 0.0115, MOUTH_Y - 0.0026)
    };
    let topo = sheet(rows, half);
    let mut pos = Vec::with_capacity(topo.vertex_count);
    let mut color = Vec::with_capacity(topo.vertex_count);
    for r in 0..rows {
        let v = r as f64 / (rows - 1) as f64;
        let y = y_low + (y_high - y_low) * v;
        // Distance (0..1) from the biting edge, and from the gum line.
        let from_edge = if upper { v } else { 1.0 - v };
        for c in 0..=2 * half {
            let u = (c as f64 - half as f64) / half as f64;
            let x = w * u;
            let z = z0 - depth * u * u - 0.0012 * (1.0 - from_edge * 4.0).max(0.0);
            pos.push(DVec3::new(x, y, z));
            let gap = {
                // Tooth boundaries: central incisors meet at x = 0, then every ~3.9 mm.
                let k = (x.abs() / 0.0039).round();
                let d = (x.abs() - k * 0.0039).abs();
                1.0 - 0.45 * (-(d / 0.0006).powi(2)).exp()
            };
            let tooth = [0.78, 0.72, 0.58].map(|q| q * gap);
            let gum = [0.5, 0.16, 0.16];
            color.push(rgba(lerp3(tooth, gum, (from_edge - 0.72) / 0.2)));
        }
    }
    Part { pos, color, topo }
}

/// The tongue: a flattened ellipsoid resting on the floor of the mouth.
pub(super) fn tongue() -> Part {
    let alpha: Vec<f64> = (1..12)
        .map(|k| std::f64::consts::PI * (1.0 - k as f64 / 12.0))
        .collect();
    let rings = Rings {
        counts: vec![24; alpha.len()],
        cap_start: true,
        cap_end: true,
    };
    let point = |a: f64, psi: f64| {
        let (x, y, z) = (a.sin() * psi.sin(), -a.sin() * psi.cos(), a.cos());
        // A slightly flatter top with a faint central groove.
        let groove = if y > 0.0 {
            1.0 - 0.25 * (-(x / 0.25).powi(2)).exp()
        } else {
            1.0
        };
        TONGUE_CENTRE
            + DVec3::new(
                x * TONGUE_RADII.x,
                y * TONGUE_RADII.y * groove,
                z * TONGUE_RADII.z,
            )
    };
    let color = |a: f64, psi: f64| {
        let top = (-a.sin() * psi.cos()).max(0.0);
        rgba(lerp3([0.42, 0.1, 0.12], [0.68, 0.22, 0.24], top))
    };
    fill_rings(
        &rings,
        |r, psi| (point(alpha[r], psi), color(alpha[r], psi)),
        |front| {
            let a = if front { 0.0 } else { std::f64::consts::PI };
            (point(a, 0.0), color(a, 0.0))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sdf;

    /// Every inner part lies inside the sculpted head (at rest), so none pokes through the skin.
    #[test]
    fn parts_are_inside_the_head() {
        for (name, part) in [
            ("eyeball", eyeball()),
            ("cavity", cavity()),
            ("upper teeth", teeth(true)),
            ("lower teeth", teeth(false)),
            ("tongue", tongue()),
        ] {
            let worst = part
                .pos
                .iter()
                .map(|&p| sdf::head(p))
                .fold(f64::MIN, f64::max);
            assert!(worst < -0.0005, "{name} reaches {worst} m from the surface");
        }
    }

    #[test]
    fn eye_colours_have_a_dark_pupil_and_white_sclera() {
        let lum = |c: [f64; 3]| 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
        assert!(lum(eye_color(0.0, 0.0)) < 0.02);
        assert!(lum(eye_color(0.7, 1.0)) > 0.6);
        let iris = eye_color(0.3, 0.4);
        assert!(lum(iris) > 0.05 && lum(iris) < 0.5);
    }
}
