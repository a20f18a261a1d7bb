//! Vertex colours of the skin (linear RGB): skin tone, cheeks, lips with a Cupid's bow, brows,
//! lash line, nostrils, and a hair cap above a hand-placed hairline.

use glam::DVec3;

use super::head::SkinTag;
use super::sdf;
use super::sdf::{EYE_CENTRE, MOUTH_HALF_WIDTH, MOUTH_Y};

/// Thickness of the hair cap, metres.
pub(super) const HAIR_THICKNESS: f64 = 0.004;
/// Darkening per metre of occlusion (see `shading`).
const AO_STRENGTH: f64 = 40.0;

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Hairline height at longitude `|φ|` (radians), metres: forehead, temples, sideburns, over the
/// ears, nape. Piecewise linear through hand-placed points.
fn hairline(phi: f64) -> f64 {
    const PTS: [(f64, f64); 10] = [
        (0.0, 0.071),
        (0.45, 0.077),
        (0.78, 0.058),
        (1.12, 0.032),
        (1.28, 0.012),
        (1.42, 0.036),
        (1.78, 0.04),
        (2.1, -0.015),
        (2.6, -0.05),
        (std::f64::consts::PI, -0.056),
    ];
    let a = phi.abs();
    for w in PTS.windows(2) {
        if a <= w[1].0 {
            let s = (a - w[0].0) / (w[1].0 - w[0].0);
            return w[0].1 + s * (w[1].1 - w[0].1);
        }
    }
    PTS[PTS.len() - 1].1
}

/// Hair cap weight at `p`: 1 above the hairline, 0 below, blended over ±3 mm.
pub(super) fn hair(p: DVec3) -> f64 {
    smoothstep(-0.003, 0.003, p.y - hairline(p.x.atan2(p.z)))
}

fn mix(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// Linear-RGB colour of a skin vertex: skin, blush, lips, brows, lash line, nostrils, hair.
pub(super) fn skin_color(p: DVec3, t: &SkinTag, lash: bool) -> [f32; 4] {
    const SKIN: [f64; 3] = [0.66, 0.37, 0.26];
    const BLUSH: [f64; 3] = [0.68, 0.29, 0.22];
    const LIP: [f64; 3] = [0.47, 0.12, 0.11];
    const BROW: [f64; 3] = [0.05, 0.025, 0.014];
    const HAIR: [f64; 3] = [0.045, 0.022, 0.012];
    const DARK: [f64; 3] = [0.12, 0.04, 0.03];
    let x = p.x.abs();
    let mut c = SKIN;
    // Cheeks.
    let blush = (1.0
        - ((DVec3::new(x, p.y, p.z) - DVec3::new(0.042, -0.018, 0.07)).length() / 0.022).min(1.0))
    .powi(2);
    c = mix(c, BLUSH, 0.6 * blush);
    // Lips: vermilion outline with a Cupid's bow.
    if p.z > 0.06 {
        let w = MOUTH_HALF_WIDTH + 0.0015;
        let s = (1.0 - (x / w).powi(2)).max(0.0).sqrt();
        let h = p.y - MOUTH_Y;
        let up = 0.0082 * s * (1.0 - 0.25 * (-(x / 0.0035).powi(2)).exp());
        let down = 0.0092 * (1.0 - (x / (w - 0.002)).powi(2)).max(0.0).sqrt();
        let upper = if t.mouth_side >= 0 {
            1.0 - smoothstep(up - 0.0008, up + 0.0008, h)
        } else {
            0.0
        };
        let lower = if t.mouth_side <= 0 {
            1.0 - smoothstep(down - 0.0008, down + 0.0008, -h)
        } else {
            0.0
        };
        let lat = 1.0 - smoothstep(w - 0.002, w, x);
        c = mix(c, LIP, f64::max(upper, lower) * lat);
    }
    // Brows: an arch over each eye, thinning outward.
    let s = (x - 0.013) / 0.041;
    if (-0.1..1.1).contains(&s) && p.z > 0.04 {
        let yb = EYE_CENTRE.y
            + 0.019
            + 0.0055 * (std::f64::consts::PI * (s * 1.15).clamp(0.0, 1.0)).sin();
        let half = 0.0042 * (1.0 - 0.55 * s.clamp(0.0, 1.0));
        let m = (1.0 - smoothstep(half * 0.3, half * 1.35, (p.y - yb).abs()))
            * smoothstep(-0.1, 0.05, s)
            * (1.0 - smoothstep(0.9, 1.1, s));
        c = mix(c, BROW, 0.92 * m);
    }
    if lash {
        c = mix(c, BROW, 0.85);
    }
    // Nostrils.
    let nostril = (DVec3::new(x, p.y, p.z) - DVec3::new(0.0068, -0.0335, 0.0975)).length();
    c = mix(c, DARK, 1.0 - smoothstep(0.0018, 0.0032, nostril));
    c = mix(c, HAIR, hair(p));
    let k = shading(p);
    [(c[0] * k) as f32, (c[1] * k) as f32, (c[2] * k) as f32, 1.0]
}

/// Ambient occlusion and a soft key light from above-front, baked into the colour because splats
/// coloured by vertex colour carry no shading of their own. The occlusion compares the field a few
/// millimetres out along its gradient with the distance travelled (Quílez, "Rendering with distance
/// fields", 2008), relative to the field at `p` (the hair cap sits off the field's surface).
fn shading(p: DVec3) -> f64 {
    let e = 5e-4;
    let d = |q: DVec3| sdf::head(q);
    let n = DVec3::new(
        d(p + DVec3::X * e) - d(p - DVec3::X * e),
        d(p + DVec3::Y * e) - d(p - DVec3::Y * e),
        d(p + DVec3::Z * e) - d(p - DVec3::Z * e),
    )
    .normalize_or(DVec3::Z);
    let d0 = d(p);
    let (mut occlusion, mut w) = (0.0, 1.0);
    for i in 1..=5 {
        let h = 0.003 * f64::from(i);
        occlusion += w * (h - (d(p + n * h) - d0)).max(0.0);
        w *= 0.6;
    }
    let ao = (1.0 - AO_STRENGTH * occlusion).clamp(0.5, 1.0);
    let key = n.dot(DVec3::new(0.3, 0.55, 0.78).normalize()).max(0.0);
    ao * (0.8 + 0.2 * key)
}
