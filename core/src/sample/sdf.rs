//! The sample head's shape: a signed distance field (SDF) sculpted from smooth unions of
//! ellipsoids, capsules and spheres, and the ray cast that puts skin vertices on its surface.
//!
//! Distances in metres; +Y up, the face looks toward +Z, character-left is +X. The field is
//! mirror-symmetric by construction: it is evaluated at `(|x|, y, z)`, so every paired feature is
//! written once, for the character's left.
//!
//! Sources: the polynomial smooth minimum of Quílez, "Smooth minimum"
//! (iquilezles.org/articles/smin); the ellipsoid bound `k0·(k0−1)/k1` and the capsule distance of
//! Quílez, "Distance functions" (iquilezles.org/articles/distfunctions).

use glam::DVec3;

/// Centre of the left eyeball (the right one is its mirror image), metres.
pub(super) const EYE_CENTRE: DVec3 = DVec3::new(0.031, 0.012, 0.069);
/// Eyeball radius, metres.
pub(super) const EYE_RADIUS: f64 = 0.0125;
/// Radius of the sphere the eyelids hug (eyeball plus lid thickness), metres.
pub(super) const LID_RADIUS: f64 = 0.0139;
/// Height of the line where the lips meet, metres.
pub(super) const MOUTH_Y: f64 = -0.058;
/// Depth of the front of the lips at the mouth line, metres (used to place the mouth interior).
pub(super) const LIP_FRONT_Z: f64 = 0.094;
/// Half the mouth's width (corner x), metres; the skin grid snaps it to the nearest column.
pub(super) const MOUTH_HALF_WIDTH: f64 = 0.0235;
/// Hinge of the jaw: below the ears, on the mid-plane, metres.
pub(super) const JAW_HINGE: DVec3 = DVec3::new(0.0, -0.016, -0.006);

fn ellipsoid(p: DVec3, c: DVec3, r: DVec3) -> f64 {
    let q = p - c;
    let k0 = (q / r).length();
    let k1 = (q / (r * r)).length();
    if k1 == 0.0 {
        -r.min_element()
    } else {
        k0 * (k0 - 1.0) / k1
    }
}

fn sphere(p: DVec3, c: DVec3, r: f64) -> f64 {
    (p - c).length() - r
}

fn capsule(p: DVec3, a: DVec3, b: DVec3, r: f64) -> f64 {
    let (pa, ba) = (p - a, b - a);
    let h = (pa.dot(ba) / ba.dot(ba)).clamp(0.0, 1.0);
    (pa - ba * h).length() - r
}

/// Polynomial smooth minimum with blend radius `k` (metres).
fn smin(a: f64, b: f64, k: f64) -> f64 {
    let h = (k - (a - b).abs()).max(0.0) / k;
    a.min(b) - h * h * k * 0.25
}

/// Smooth maximum, `-smin(-a, -b, k)`; `smax(d, -e, k)` carves `e` out of `d`.
fn smax(a: f64, b: f64, k: f64) -> f64 {
    -smin(-a, -b, k)
}

fn v(x: f64, y: f64, z: f64) -> DVec3 {
    DVec3::new(x, y, z)
}

/// Signed distance (negative inside) of the sculpted head at `p`, metres. Not an exact distance
/// away from the surface (smooth unions and the ellipsoid bound only approximate it), but its zero
/// set is the head and its sign is exact.
pub(super) fn head(p: DVec3) -> f64 {
    let q = v(p.x.abs(), p.y, p.z);
    // Cranium and the lower face (maxilla + mandible), blended into one skull.
    let cranium = ellipsoid(q, v(0.0, 0.02, -0.008), v(0.073, 0.095, 0.097));
    let face = ellipsoid(q, v(0.0, -0.036, 0.02), v(0.055, 0.062, 0.068));
    let mut d = smin(cranium, face, 0.03);
    // Jaw line from the angle of the mandible to the chin, and the chin itself.
    d = smin(
        d,
        capsule(q, v(0.047, -0.06, -0.014), v(0.019, -0.09, 0.058), 0.011),
        0.02,
    );
    d = smin(
        d,
        ellipsoid(q, v(0.0, -0.083, 0.072), v(0.02, 0.014, 0.014)),
        0.012,
    );
    // Under the chin: a line sloping down to the throat (no hollow the skin rays cannot see).
    d = smin(
        d,
        ellipsoid(q, v(0.0, -0.094, 0.04), v(0.034, 0.01, 0.034)),
        0.012,
    );
    // A short neck, cut flat.
    d = smin(
        d,
        capsule(q, v(0.0, -0.05, -0.022), v(0.0, -0.16, -0.026), 0.046),
        0.014,
    );
    d = smax(d, -(q.y + 0.132), 0.008);
    // Cheekbones.
    d = smin(
        d,
        ellipsoid(q, v(0.045, -0.008, 0.046), v(0.022, 0.016, 0.026)),
        0.02,
    );
    // Eye socket: a shallow dish carved around the eye, then the brow ridge above it.
    d = smax(
        d,
        -ellipsoid(
            q,
            EYE_CENTRE + v(0.0, 0.002, 0.013),
            v(0.022, 0.016, 0.0065),
        ),
        0.006,
    );
    d = smin(
        d,
        ellipsoid(q, v(0.029, 0.037, 0.072), v(0.026, 0.009, 0.014)),
        0.012,
    );
    // The eyelids hug the eyeball.
    d = smin(d, sphere(q, EYE_CENTRE, LID_RADIUS), 0.004);
    // Nose: bridge, tip, wings.
    let bridge = capsule(q, v(0.0, 0.03, 0.083), v(0.0, -0.017, 0.101), 0.0072);
    let tip = sphere(q, v(0.0, -0.024, 0.1005), 0.0105);
    let wing = sphere(q, v(0.0125, -0.031, 0.088), 0.0075);
    d = smin(d, smin(smin(bridge, tip, 0.01), wing, 0.006), 0.008);
    // Muzzle and lips.
    d = smin(
        d,
        ellipsoid(q, v(0.0, -0.052, 0.062), v(0.032, 0.03, 0.028)),
        0.015,
    );
    let upper_lip = ellipsoid(
        q,
        v(0.0, MOUTH_Y + 0.0045, 0.0855),
        v(0.022, 0.0065, 0.0085),
    );
    let lower_lip = ellipsoid(q, v(0.0, MOUTH_Y - 0.005, 0.0835), v(0.019, 0.0072, 0.0085));
    d = smin(d, smin(upper_lip, lower_lip, 0.002), 0.004);
    // Ears.
    d = smin(
        d,
        ellipsoid(q, v(0.073, 0.004, -0.012), v(0.011, 0.029, 0.017)),
        0.008,
    );
    d
}

/// The outermost point of the head on the ray `origin + t·dir` (`t ∈ [0, 0.25]` m, `dir` unit):
/// march inward from outside until the field turns negative, then bisect. `origin` must lie inside
/// the head; a ray that never enters returns `origin`.
pub(super) fn cast(origin: DVec3, dir: DVec3) -> DVec3 {
    const T_MAX: f64 = 0.25;
    let f = |t: f64| head(origin + dir * t);
    let (mut t_out, mut t) = (T_MAX, T_MAX);
    let mut d = f(t);
    while d > 0.0 {
        t_out = t;
        t -= (0.7 * d).clamp(1e-4, 4e-3);
        if t <= 0.0 {
            t = 0.0;
            if f(t) > 0.0 {
                return origin;
            }
            break;
        }
        d = f(t);
    }
    let (mut lo, mut hi) = (t, t_out);
    for _ in 0..48 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    origin + dir * (0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_is_mirror_symmetric_and_closed() {
        for &p in &[
            v(0.03, 0.01, 0.05),
            v(0.07, -0.1, 0.02),
            v(0.011, 0.1, -0.09),
        ] {
            assert_eq!(head(p).to_bits(), head(v(-p.x, p.y, p.z)).to_bits());
        }
        // Inside at the centre, outside far away.
        assert!(head(DVec3::ZERO) < -0.03);
        assert!(head(v(0.0, 0.0, 0.3)) > 0.1);
        // The eyeball lies inside the lid sphere, so the lids can close over it.
        const { assert!(EYE_RADIUS < LID_RADIUS) };
    }

    #[test]
    fn cast_lands_on_the_surface() {
        let o = v(0.0, 0.0, 0.0);
        for k in 0..16 {
            let a = k as f64 * std::f64::consts::TAU / 16.0;
            let p = cast(o, v(a.sin(), 0.0, a.cos()));
            assert!(head(p).abs() < 1e-6, "{p:?}");
            // Just outside along the ray is outside.
            assert!(head(p + v(a.sin(), 0.0, a.cos()) * 1e-4) > 0.0);
        }
    }
}
