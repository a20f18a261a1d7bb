//! The displacement field of each ARKit-52 shape at weight 1, for the shapes of the character's
//! left and the unpaired ones; [`super::targets`] mirrors the left ones into the right ones.
//!
//! Each field is a smooth, compactly supported mask around a landmark times a displacement:
//! rotations about the eye centres (lids, gaze) and the jaw hinge, translations of the lips,
//! corners, brows and cheeks. Shape meanings follow Apple's `ARFaceAnchor.BlendShapeLocation`
//! documentation (e.g. `eyeLookOutLeft`: the left eye looks toward the character's left).

use glam::DVec3;

use super::SamplePart;
use super::model::{Model, ball};
use super::parts::TONGUE_CENTRE;
use super::sdf::{EYE_CENTRE, JAW_HINGE, MOUTH_Y};

/// Jaw rotation at `jawOpen = 1`, radians (the chin then moves about 2.8 cm).
pub(super) const JAW_OPEN_ANGLE: f64 = 0.245;
/// Eyeball turn for `eyeLookIn*`/`eyeLookOut*` = 1, radians (26°).
pub(super) const EYE_TURN: f64 = 0.45;
const EYE_UP: f64 = 0.40;
/// How far a fully closed lid bulges out from the eye centre, metres.
const LID_BULGE: f64 = 0.0018;
const EYE_DOWN: f64 = 0.45;

/// `p` turned by `a` radians about the X axis through `c` (positive turns +Z toward −Y: down).
fn rot_x(p: DVec3, c: DVec3, a: f64) -> DVec3 {
    let q = p - c;
    let (s, co) = a.sin_cos();
    c + DVec3::new(q.x, q.y * co - q.z * s, q.y * s + q.z * co)
}

/// `p` turned by `a` radians about the Y axis through `c` (positive turns +Z toward +X).
fn rot_y(p: DVec3, c: DVec3, a: f64) -> DVec3 {
    let q = p - c;
    let (s, co) = a.sin_cos();
    c + DVec3::new(q.x * co + q.z * s, q.y, -q.x * s + q.z * co)
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn v(x: f64, y: f64, z: f64) -> DVec3 {
    DVec3::new(x, y, z)
}

/// Weight of the character's left half, 0.5 on the mid-plane.
fn left(x: f64) -> f64 {
    smoothstep(-0.006, 0.006, x)
}

/// `(|x|, y, z)`: evaluate a paired mask on both sides.
fn both(p: DVec3) -> DVec3 {
    v(p.x.abs(), p.y, p.z)
}

struct Field<'a> {
    m: &'a Model,
    d: Vec<DVec3>,
}

impl Field<'_> {
    /// Add `f(vertex, rest position)` over one part.
    fn add(&mut self, part: SamplePart, f: impl Fn(usize, DVec3) -> DVec3) {
        for i in self.m.vertices[part as usize].clone() {
            self.d[i] += f(i, self.m.pos[i]);
        }
    }

    /// Turn the left lids about the eye centre: the upper lid down by `upper` × its blink angle,
    /// the lower lid up by `lower` × its blink angle (negative factors open them).
    ///
    /// Closing lids also bulge out from the eye centre (by up to [`LID_BULGE`]) so that, drawn as
    /// 2 mm splats sorted by depth, the closed lid stays clearly in front of the cornea.
    fn lids(&mut self, upper: f64, lower: f64) {
        let m = self.m;
        let e = EYE_CENTRE;
        let (ul, ll) = (&m.mask.upper_lid, &m.mask.lower_lid);
        self.add(SamplePart::Skin, |i, p| {
            let q = rot_x(p, e, upper * ul[i] - lower * ll[i]);
            let closing = (upper * ul[i]).max(0.0) + (lower * ll[i]).max(0.0);
            let bulge = LID_BULGE * (closing / 0.3).min(1.0);
            q + (q - e).normalize_or_zero() * bulge - p
        });
    }

    /// Turn the left eyeball: `pitch` down (positive) about X, then `yaw` toward +X about Y.
    fn eyeball(&mut self, pitch: f64, yaw: f64) {
        self.add(SamplePart::EyeLeft, |_, p| {
            rot_y(rot_x(p, EYE_CENTRE, pitch), EYE_CENTRE, yaw) - p
        });
    }

    /// Translate every jaw-following vertex (skin and mouth parts) by `t` × its jaw weight.
    fn jaw_shift(&mut self, t: DVec3) {
        let m = self.m;
        let jaw = &m.mask.jaw;
        for part in [
            SamplePart::Skin,
            SamplePart::MouthCavity,
            SamplePart::TeethLower,
            SamplePart::Tongue,
        ] {
            self.add(part, |i, _| t * jaw[i]);
        }
    }

    /// The jaw opening rotation, per vertex.
    fn jaw_open_delta(&self, i: usize) -> DVec3 {
        let p = self.m.pos[i];
        rot_x(p, JAW_HINGE, JAW_OPEN_ANGLE * self.m.mask.jaw[i]) - p
    }
}

/// The displacement `(V,3)` (metres) of shape `name` at weight 1; `None` for a `…Right` shape or
/// an unknown name.
pub(super) fn field(m: &Model, name: &str) -> Option<Vec<DVec3>> {
    let mut f = Field {
        m,
        d: vec![DVec3::ZERO; m.pos.len()],
    };
    let k = &m.mask;
    let (ul, ll, mo) = (&k.upper_lip, &k.lower_lip, &k.mouth);
    let tags = &m.skin.tag;
    let corner = k.corner;
    let e = EYE_CENTRE;
    let corner_ball = move |p: DVec3| ball(p, corner, v(0.022, 0.02, 0.03));
    let cheek = v(0.04, -0.022, 0.07);
    use SamplePart::Skin;
    match name {
        "eyeBlinkLeft" => f.lids(1.0, 1.0),
        "eyeLookDownLeft" => {
            f.eyeball(EYE_DOWN, 0.0);
            f.lids(0.3, -0.2);
        }
        "eyeLookInLeft" => f.eyeball(0.0, -EYE_TURN),
        "eyeLookOutLeft" => f.eyeball(0.0, EYE_TURN),
        "eyeLookUpLeft" => {
            f.eyeball(-EYE_UP, 0.0);
            f.lids(-0.22, 0.08);
        }
        "eyeSquintLeft" => {
            f.lids(0.18, 0.6);
            f.add(Skin, |_, p| {
                v(0.0, 0.0016, 0.0006) * ball(p, e + v(0.004, -0.02, 0.004), v(0.022, 0.01, 0.03))
            });
        }
        "eyeWideLeft" => {
            f.lids(-0.5, -0.15);
            f.add(Skin, |_, p| {
                v(0.0, 0.0015, 0.0) * ball(p, e + v(0.0, 0.02, 0.01), v(0.03, 0.014, 0.035))
            });
        }
        "jawForward" => f.jaw_shift(v(0.0, 0.0, 0.007)),
        "jawLeft" => f.jaw_shift(v(0.008, 0.0, 0.0)),
        "jawOpen" => {
            for part in [
                Skin,
                SamplePart::MouthCavity,
                SamplePart::TeethLower,
                SamplePart::Tongue,
            ] {
                for i in m.vertices[part as usize].clone() {
                    f.d[i] = f.jaw_open_delta(i);
                }
            }
        }
        "mouthClose" => {
            let lift: Vec<DVec3> = (0..m.pos.len())
                .map(|i| {
                    if ll[i] > 0.0 {
                        f.jaw_open_delta(i) * -ll[i]
                    } else {
                        DVec3::ZERO
                    }
                })
                .collect();
            f.add(Skin, |i, _| lift[i] + v(0.0, -0.0015, 0.0) * ul[i]);
        }
        "mouthFunnel" => f.add(Skin, |i, p| {
            let c = tags[i].mouth_c.sqrt();
            v(0.0, 0.004 * c, 0.0065) * ul[i]
                + v(0.0, -0.0055 * c, 0.0065) * ll[i]
                + v(-0.32 * p.x, 0.0, 0.002) * mo[i]
        }),
        "mouthPucker" => f.add(Skin, |i, p| {
            v(0.0, -0.0008, 0.0085) * ul[i]
                + v(0.0, 0.0008, 0.0085) * ll[i]
                + v(-0.38 * p.x, 0.0, 0.003) * mo[i]
        }),
        "mouthLeft" => f.add(Skin, |i, _| v(0.0075, 0.0, 0.0) * mo[i]),
        "mouthSmileLeft" => f.add(Skin, |i, p| {
            v(0.006, 0.0085, -0.004) * corner_ball(p)
                + v(0.0015, 0.0045, 0.002) * ball(p, cheek, v(0.026, 0.022, 0.03))
                + v(0.0, 0.0015, 0.0) * ul[i] * left(p.x)
        }),
        "mouthFrownLeft" => f.add(Skin, |i, p| {
            v(0.0015, -0.0065, -0.001) * corner_ball(p) + v(0.0, -0.001, 0.0) * ll[i] * left(p.x)
        }),
        "mouthDimpleLeft" => f.add(Skin, |_, p| v(0.003, 0.0008, -0.0045) * corner_ball(p)),
        "mouthStretchLeft" => f.add(Skin, |i, p| {
            v(0.0065, -0.003, -0.0025) * corner_ball(p) + v(0.0, -0.0015, 0.0) * ll[i] * left(p.x)
        }),
        "mouthRollLower" => f.add(Skin, |i, _| v(0.0, 0.0018, -0.0045) * ll[i] * ll[i]),
        "mouthRollUpper" => f.add(Skin, |i, _| v(0.0, -0.0018, -0.0045) * ul[i] * ul[i]),
        "mouthShrugLower" => f.add(Skin, |i, p| {
            v(0.0, 0.003, 0.0018) * ll[i]
                + v(0.0, 0.0025, 0.001) * ball(p, v(0.0, -0.086, 0.08), v(0.022, 0.016, 0.03))
        }),
        "mouthShrugUpper" => f.add(Skin, |i, _| v(0.0, 0.0025, 0.0015) * ul[i]),
        "mouthPressLeft" => f.add(Skin, |i, p| {
            (v(0.0, -0.0012, -0.0012) * ul[i] + v(0.0, 0.0014, -0.0012) * ll[i]) * left(p.x)
                + v(0.001, 0.0008, 0.0) * corner_ball(p)
        }),
        "mouthLowerDownLeft" => f.add(Skin, |i, p| v(0.0, -0.0055, 0.001) * ll[i] * left(p.x)),
        "mouthUpperUpLeft" => f.add(Skin, |i, p| v(0.0, 0.0055, 0.001) * ul[i] * left(p.x)),
        "browDownLeft" => f.add(Skin, |_, p| {
            let inner = 1.0 - smoothstep(0.012, 0.045, p.x);
            v(-0.0018, -0.0055, 0.001)
                * ball(p, v(0.028, e.y + 0.021, 0.079), v(0.03, 0.016, 0.035))
                * (0.7 + 0.5 * inner)
        }),
        "browInnerUp" => f.add(Skin, |_, p| {
            v(0.0, 0.0065, 0.0005)
                * ball(
                    both(p),
                    v(0.016, e.y + 0.022, 0.083),
                    v(0.019, 0.019, 0.035),
                )
        }),
        "browOuterUpLeft" => f.add(Skin, |_, p| {
            v(0.0, 0.0065, 0.0) * ball(p, v(0.046, e.y + 0.02, 0.07), v(0.021, 0.017, 0.035))
        }),
        "cheekPuff" => {
            let n = &m.normal;
            f.add(Skin, |i, p| {
                let out = DVec3::from(n[i].map(f64::from));
                out * 0.0085
                    * ball(
                        both(p),
                        v(0.038, MOUTH_Y + 0.006, 0.064),
                        v(0.026, 0.024, 0.04),
                    )
                    + v(0.0, 0.0, 0.0015) * (ul[i] + ll[i])
            });
        }
        "cheekSquintLeft" => {
            f.add(Skin, |_, p| {
                v(0.0, 0.0038, 0.001) * ball(p, v(0.036, e.y - 0.021, 0.072), v(0.022, 0.013, 0.03))
            });
            f.lids(0.0, 0.2);
        }
        "noseSneerLeft" => f.add(Skin, |_, p| {
            v(0.0005, 0.0032, -0.0005) * ball(p, v(0.012, -0.024, 0.092), v(0.012, 0.017, 0.025))
                + v(0.0, 0.0015, 0.0) * ball(p, v(0.01, -0.042, 0.092), v(0.012, 0.008, 0.02))
        }),
        "tongueOut" => {
            f.add(SamplePart::Tongue, |_, p| {
                v(0.0, 0.003, 0.0275)
                    * smoothstep(TONGUE_CENTRE.z - 0.022, TONGUE_CENTRE.z + 0.02, p.z)
            });
            f.add(Skin, |i, _| v(0.0, -0.003, 0.0015) * ll[i]);
        }
        _ => return None,
    }
    Some(f.d)
}
