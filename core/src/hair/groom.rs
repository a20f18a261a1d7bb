//! A groom: guide strands grown on a scalp, and the child strands interpolated from them (seed
//! 003 "Hair"; the child scheme is the usual one of real-time hair — each child follows three
//! guides with fixed weights, pulled toward its own guide by a clump factor, as in AMD TressFX's
//! follow hairs and Frostbite's strand interpolation).
//!
//! Space: the head bone's space at rest, metres. The definition ([`GroomDef`], a `mien-groom`
//! JSON file, `docs/schemas/groom.schema.json`) gives the scalp as an ellipsoid in that space and
//! the groom's shape; [`GroomDef::build`] makes it, deterministically from its seed:
//!
//! 1. **roots** on a Fibonacci spiral over the ellipsoid (the golden-angle sphere lattice mapped
//!    onto it): the points above the cap's lower edge and outside the face cone are kept; the
//!    lattice is made just large enough that `guides` points remain (extras dropped evenly), and
//!    the report says how many were asked for and built;
//! 2. **growth**: from the root at `lift_deg` above the scalp (90°: along the surface normal;
//!    lower: leaning toward the comb direction's part along the scalp, as real hair leaves the
//!    skin at a low angle and lies flat on the crown), each of `segments` segments of
//!    `length · (1 ± variance) / segments` turning toward the comb direction (`comb`, weighted by
//!    the distance along the strand), drooping under gravity (−Y, `droop`), wound into a helix
//!    (`curl`: radius and turns over the length), and pushed out of the scalp ellipsoid (a point
//!    inside is moved onto it along its centre ray, plus a 1 mm margin);
//! 3. **children**: `children_per_guide` per guide, each following its guide and the guide's two
//!    nearest neighbours (by root) with random barycentric weights, clumped toward its own guide
//!    from root (0) to tip (`clump`), tinted by a random variation of the root→tip colours.
//!
//! Limits: [`MAX_GUIDES`] guides, [`MAX_RENDERED_STRANDS`] rendered strands (guides × children
//! per guide), [`MAX_SEGMENTS`] segments; a definition past one is refused with the numbers
//! before anything is built.

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::face::blink::SplitMix64;

/// The `format` of a groom file.
pub const FORMAT: &str = "mien-groom";
/// Most guide strands.
pub const MAX_GUIDES: usize = 4_096;
/// Most rendered strands (guides × children per guide).
pub const MAX_RENDERED_STRANDS: usize = 65_536;
/// Most segments per strand.
pub const MAX_SEGMENTS: usize = 24;
/// Margin a grown point keeps outside the scalp ellipsoid, metres.
pub const SCALP_MARGIN_M: f64 = 0.001;

/// The scalp: an ellipsoid in the head bone's space, the cap of it that grows hair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalpDef {
    /// Centre, metres, head-bone space.
    pub center: [f64; 3],
    /// Semi-axes along x, y, z, metres (> 0).
    pub radii: [f64; 3],
    /// The cap's lower edge: roots keep `(y − centre.y) / radii.y ≥ cap_min` (−1 to 1).
    #[serde(default = "d_cap")]
    pub cap_min: f64,
    /// The direction the face looks, head-bone space (default +Z).
    #[serde(default = "d_face")]
    pub face: [f64; 3],
    /// No root within this angle of the face direction (seen from the centre), degrees (0–180;
    /// default 60).
    #[serde(default = "d_face_angle")]
    pub face_angle_deg: f64,
}

fn d_cap() -> f64 {
    -0.1
}
fn d_face() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}
fn d_face_angle() -> f64 {
    60.0
}

/// A helix the strands are wound into.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurlDef {
    /// Helix radius, metres (0 = straight).
    pub radius: f64,
    /// Turns over the strand's length.
    pub turns: f64,
}

/// Root and tip colours, linear RGB in `[0, 1]`, and a per-strand random variation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HairColourDef {
    /// At the root.
    pub root: [f32; 3],
    /// At the tip.
    pub tip: [f32; 3],
    /// Each strand's colours scaled by `1 ± variation` (0–1; default 0.1).
    #[serde(default = "d_variation")]
    pub variation: f32,
}

fn d_variation() -> f32 {
    0.1
}

/// A groom definition (`mien-groom`, module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroomDef {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The bone the groom follows (its roots ride on it).
    pub head_bone: String,
    /// Where hair grows.
    pub scalp: ScalpDef,
    /// Guide strands asked for (1 to [`MAX_GUIDES`]).
    pub guides: usize,
    /// Rendered strands per guide (≥ 1; guides × this ≤ [`MAX_RENDERED_STRANDS`]).
    pub children_per_guide: usize,
    /// Segments per strand (1 to [`MAX_SEGMENTS`]).
    pub segments: usize,
    /// Strand length, metres (> 0).
    pub length: f64,
    /// Each guide's length scaled by `1 ± length_variance` (0 to 0.9; default 0.2).
    #[serde(default = "d_len_var")]
    pub length_variance: f64,
    /// The direction the hair is combed toward, head-bone space (default −Y: down).
    #[serde(default = "d_comb")]
    pub comb: [f64; 3],
    /// How strongly the strands turn toward `comb` by their tips (0–1; default 0.7).
    #[serde(default = "d_comb_strength")]
    pub comb_strength: f64,
    /// Gravity bend toward −Y by the tip (0–1; default 0.3).
    #[serde(default = "d_droop")]
    pub droop: f64,
    /// The angle the strands leave the scalp at, degrees above its tangent plane, leaning toward
    /// the comb direction (more than 0, at most 90; default 90: along the surface normal).
    #[serde(default = "d_lift")]
    pub lift_deg: f64,
    /// A helix (default none).
    #[serde(default)]
    pub curl: Option<CurlDef>,
    /// How far children are pulled toward their own guide by the tip (0–1; default 0.3).
    #[serde(default = "d_clump")]
    pub clump: f64,
    /// Strand thickness at the root and the tip, metres (> 0).
    pub thickness: [f64; 2],
    /// Colours.
    pub colour: HairColourDef,
    /// Seed of every random choice.
    #[serde(default)]
    pub seed: u64,
}

fn d_len_var() -> f64 {
    0.2
}
fn d_comb() -> [f64; 3] {
    [0.0, -1.0, 0.0]
}
fn d_comb_strength() -> f64 {
    0.7
}
fn d_droop() -> f64 {
    0.3
}
fn d_clump() -> f64 {
    0.3
}
fn d_lift() -> f64 {
    90.0
}

/// What a build made against what was asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GroomReport {
    /// Guides asked for.
    pub requested_guides: usize,
    /// Guides built (fewer only when the scalp cap outside the face cone is too small to hold a
    /// lattice of that many points; never more).
    pub built_guides: usize,
    /// Lattice points dropped because they fell in the face cone.
    pub rejected_face: usize,
    /// Lattice points dropped below the cap's edge.
    pub rejected_cap: usize,
    /// Rendered strands (built guides × children per guide).
    pub rendered_strands: usize,
    /// Grown points moved out of the scalp.
    pub pushed_out: usize,
}

/// A built groom (module doc), head-bone space, metres.
#[derive(Clone, Debug, PartialEq)]
pub struct Groom {
    /// The head bone's name.
    pub head_bone: String,
    /// Segments per strand `S`; every strand has `S + 1` points.
    pub segments: usize,
    /// Guide points `(G·(S+1), 3)`, guide after guide, root first.
    pub guides: Vec<[f32; 3]>,
    /// Per child `(C,)`: its own guide and two neighbours.
    pub child_guides: Vec<[u32; 3]>,
    /// Per child `(C,)`: barycentric weights of those guides (sum 1).
    pub child_weights: Vec<[f32; 3]>,
    /// Per child `(C,)`: colour scale (1 ± variation).
    pub child_tint: Vec<f32>,
    /// Clump toward the own guide by the tip (0–1).
    pub clump: f32,
    /// Thickness at root and tip, metres.
    pub thickness: [f32; 2],
    /// Root and tip colours, linear RGB.
    pub colour: [[f32; 3]; 2],
    /// What was built.
    pub report: GroomReport,
}

/// The golden angle, radians.
const GOLDEN_ANGLE: f64 = 2.399_963_229_728_653;

impl GroomDef {
    /// Parse a groom file's text (strict: unknown keys refused, naming the JSON pointer).
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the pointer; every refusal of [`GroomDef::check`].
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let def: GroomDef = crate::io::read::json_strict(text, file)?;
        def.check(file)?;
        Ok(def)
    }

    /// Check every field (all problems at once): format and version, counts within the limits
    /// (with the numbers), lengths and radii finite and > 0, fractions within their ranges,
    /// directions not zero, colours within `[0, 1]`.
    ///
    /// # Errors
    /// [`Error::Limit`] for one count past its limit, [`Error::Many`] for several problems,
    /// [`Error::Format`] for one other problem.
    pub fn check(&self, file: &str) -> Result<()> {
        let mut p: Vec<Error> = Vec::new();
        let mut bad = |field: &str, reason: String| p.push(Error::format(file, field, reason));
        if self.format != FORMAT {
            bad("/format", format!("`{}` is not `{FORMAT}`", self.format));
        }
        if self.version != 1 {
            bad("/version", format!("{} (mien reads 1)", self.version));
        }
        if self.head_bone.is_empty() {
            bad("/head_bone", "is empty".into());
        }
        let fin = |x: f64| x.is_finite();
        if !self
            .scalp
            .center
            .iter()
            .all(|c| fin(*c) && c.abs() <= 100.0)
        {
            bad(
                "/scalp/center",
                "must be three finite numbers within ±100 m".into(),
            );
        }
        if !self
            .scalp
            .radii
            .iter()
            .all(|r| fin(*r) && *r > 0.0 && *r <= 10.0)
        {
            bad("/scalp/radii", "must be three radii in (0, 10] m".into());
        }
        if !(fin(self.scalp.cap_min) && (-1.0..=1.0).contains(&self.scalp.cap_min)) {
            bad(
                "/scalp/cap_min",
                format!("{} is not in −1 to 1", self.scalp.cap_min),
            );
        }
        let dir = |v: [f64; 3]| v.iter().all(|c| fin(*c)) && DVec3::from(v).length() > 1e-9;
        if !dir(self.scalp.face) {
            bad(
                "/scalp/face",
                "must be a direction (finite, not zero)".into(),
            );
        }
        if !(fin(self.scalp.face_angle_deg) && (0.0..=180.0).contains(&self.scalp.face_angle_deg)) {
            bad(
                "/scalp/face_angle_deg",
                format!("{} is not in 0–180°", self.scalp.face_angle_deg),
            );
        }
        if self.guides == 0 {
            bad("/guides", "0 guides".into());
        }
        if self.children_per_guide == 0 {
            bad(
                "/children_per_guide",
                "0 (each guide renders at least one strand)".into(),
            );
        }
        if self.segments == 0 {
            bad("/segments", "0 segments".into());
        }
        if !(fin(self.length) && self.length > 0.0 && self.length <= 10.0) {
            bad(
                "/length",
                format!("{} is not a length in (0, 10] m", self.length),
            );
        }
        for (field, v, hi) in [
            ("/length_variance", self.length_variance, 0.9),
            ("/comb_strength", self.comb_strength, 1.0),
            ("/droop", self.droop, 1.0),
            ("/clump", self.clump, 1.0),
        ] {
            if !(fin(v) && (0.0..=hi).contains(&v)) {
                bad(field, format!("{v} is not in 0–{hi}"));
            }
        }
        if !dir(self.comb) {
            bad("/comb", "must be a direction (finite, not zero)".into());
        }
        if !(fin(self.lift_deg) && self.lift_deg > 0.0 && self.lift_deg <= 90.0) {
            bad(
                "/lift_deg",
                format!("{} is not an angle in (0, 90] degrees", self.lift_deg),
            );
        }
        if let Some(c) = self.curl
            && !(fin(c.radius)
                && (0.0..=1.0).contains(&c.radius)
                && fin(c.turns)
                && c.turns.abs() <= 1000.0)
        {
            bad(
                "/curl",
                "radius must be 0–1 m and turns within ±1000".into(),
            );
        }
        if !self
            .thickness
            .iter()
            .all(|t| fin(*t) && *t > 0.0 && *t <= 0.1)
        {
            bad("/thickness", "must be two thicknesses in (0, 0.1] m".into());
        }
        let c = &self.colour;
        if !c
            .root
            .iter()
            .chain(&c.tip)
            .all(|x| x.is_finite() && (0.0..=1.0).contains(x))
        {
            bad(
                "/colour",
                "root and tip must be linear RGB within 0–1".into(),
            );
        }
        if !(c.variation.is_finite() && (0.0..=1.0).contains(&c.variation)) {
            bad(
                "/colour/variation",
                format!("{} is not in 0–1", c.variation),
            );
        }
        // The limits, with the numbers.
        let mut limit = |what: &str, limit: usize, found: usize| {
            if found > limit {
                p.push(Error::Limit {
                    what: format!("{file}: {what}"),
                    limit: limit as u64,
                    found: found as u64,
                });
            }
        };
        limit("guides", MAX_GUIDES, self.guides);
        limit("segments", MAX_SEGMENTS, self.segments);
        limit(
            "rendered strands (guides × children_per_guide)",
            MAX_RENDERED_STRANDS,
            self.guides.saturating_mul(self.children_per_guide),
        );
        match p.len() {
            0 => Ok(()),
            1 => Err(p.remove(0)),
            _ => Err(Error::Many(p)),
        }
    }

    /// The scalp lattice: unit directions from the centre of the kept roots (module doc step 1),
    /// and the counts dropped.
    fn roots(&self) -> (Vec<DVec3>, usize, usize) {
        let face = DVec3::from(self.scalp.face).normalize();
        let cos_face = self.scalp.face_angle_deg.to_radians().cos();
        let lattice = |m: usize| {
            let (mut kept, mut face_n, mut cap_n) = (Vec::new(), 0, 0);
            for i in 0..m {
                // The Fibonacci sphere: heights evenly spaced, azimuths by the golden angle.
                let y = 1.0 - 2.0 * (i as f64 + 0.5) / m as f64;
                let r = (1.0 - y * y).max(0.0).sqrt();
                let phi = GOLDEN_ANGLE * i as f64;
                let d = DVec3::new(r * phi.cos(), y, r * phi.sin());
                if y < self.scalp.cap_min {
                    cap_n += 1;
                } else if self.scalp.face_angle_deg > 0.0 && d.dot(face) > cos_face {
                    face_n += 1;
                } else {
                    kept.push(d);
                }
            }
            (kept, face_n, cap_n)
        };
        let want = self.guides;
        let mut m = want;
        let mut best = lattice(m);
        // Grow the lattice until it holds enough (doubling, then bisecting down).
        while best.0.len() < want && m < want.saturating_mul(64) {
            m *= 2;
            best = lattice(m);
        }
        if best.0.len() >= want {
            let (mut lo, mut hi) = (m / 2, m);
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if lattice(mid).0.len() >= want {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            best = lattice(hi);
        }
        let (kept, f, c) = best;
        if kept.len() <= want {
            return (kept, f, c);
        }
        // Drop extras evenly.
        let n = kept.len();
        let picked = (0..want).map(|k| kept[k * n / want]).collect();
        (picked, f, c)
    }

    /// Build the groom (module doc), deterministically from [`GroomDef::seed`].
    ///
    /// # Errors
    /// Every refusal of [`GroomDef::check`] (with `"groom"` as the file); a scalp cap with no
    /// room for a single root.
    pub fn build(&self) -> Result<Groom> {
        self.check("groom")?;
        let c = DVec3::from(self.scalp.center);
        let radii = DVec3::from(self.scalp.radii);
        let (dirs, rejected_face, rejected_cap) = self.roots();
        if dirs.is_empty() {
            return Err(Error::Invalid {
                what: "groom /scalp/cap_min".into(),
                reason: format!(
                    "no root fits: of the lattice's points {rejected_cap} lie below cap_min {} and {rejected_face} inside the face cone ({}°); lower cap_min or face_angle_deg",
                    self.scalp.cap_min, self.scalp.face_angle_deg
                ),
            });
        }
        // SplitMix64, the project's one seeded generator (STYLE 9).
        let mut rng = SplitMix64(self.seed ^ 0x6A09_E667_F3BC_C909);
        let s = self.segments;
        let comb = DVec3::from(self.comb).normalize();
        let on_scalp = |d: DVec3| c + d * radii;
        // The ellipsoid's norm of a point: < 1 inside.
        let norm = |p: DVec3| ((p - c) / radii).length();
        let mut pushed_out = 0;
        let mut guides: Vec<[f32; 3]> = Vec::with_capacity(dirs.len() * (s + 1));
        let mut roots = Vec::with_capacity(dirs.len());
        for d in &dirs {
            let root = on_scalp(*d);
            // The outward normal: the gradient of the ellipsoid's implicit function.
            let n = ((root - c) / (radii * radii)).normalize();
            let len = self.length * (1.0 + self.length_variance * (2.0 * rng.unit() - 1.0));
            let seg = len / s as f64;
            // A frame about the growth direction for the helix.
            let side = n.any_orthonormal_vector();
            let up = n.cross(side);
            let phase = rng.unit() * std::f64::consts::TAU;
            let mut p = root;
            // Leaving the scalp at `lift_deg`, leaning toward the comb's part along the scalp
            // (a comb along the normal leaves the normal).
            let lean = (comb - n * n.dot(comb)).normalize_or(DVec3::ZERO);
            let lift = self.lift_deg.to_radians();
            let mut dir = if self.lift_deg < 90.0 && lean != DVec3::ZERO {
                (n * lift.sin() + lean * lift.cos()).normalize()
            } else {
                n
            };
            guides.push(root.as_vec3().to_array());
            roots.push(root);
            for k in 1..=s {
                let t = k as f64 / s as f64;
                dir = (dir
                    + (comb - dir * dir.dot(comb)) * (self.comb_strength * t)
                    + DVec3::NEG_Y * (self.droop * t))
                    .normalize_or(dir);
                p += dir * seg;
                let mut q = p;
                if let Some(curl) = self.curl {
                    let a = phase + std::f64::consts::TAU * curl.turns * t;
                    q += (side * a.cos() + up * a.sin()) * (curl.radius * t.min(1.0));
                }
                let e = norm(q);
                if e < 1.0 + SCALP_MARGIN_M / radii.min_element() {
                    // Out of the skull along the centre ray, onto the surface plus the margin.
                    let out = (q - c) / e.max(1e-9);
                    q = c + out * (1.0 + SCALP_MARGIN_M / radii.min_element());
                    pushed_out += 1;
                }
                guides.push(q.as_vec3().to_array());
            }
        }
        let g = roots.len();
        let (child_guides, child_weights, child_tint) = children(
            &roots,
            self.children_per_guide,
            self.colour.variation,
            &mut rng,
        );
        let report = GroomReport {
            requested_guides: self.guides,
            built_guides: g,
            rejected_face,
            rejected_cap,
            rendered_strands: g * self.children_per_guide,
            pushed_out,
        };
        Ok(Groom {
            head_bone: self.head_bone.clone(),
            segments: s,
            guides,
            child_guides,
            child_weights,
            child_tint,
            clump: self.clump as f32,
            thickness: [self.thickness[0] as f32, self.thickness[1] as f32],
            colour: [self.colour.root, self.colour.tip],
            report,
        })
    }
}

/// Children of guides rooted at `roots` (module doc, step 3): `per` per guide, the first the guide
/// itself, the rest weighted toward the guide's two nearest neighbours by root (ties by index),
/// their shares at most a half each; a colour scale `1 ± variation` each.
fn children(
    roots: &[DVec3],
    per: usize,
    variation: f32,
    rng: &mut SplitMix64,
) -> (Vec<[u32; 3]>, Vec<[f32; 3]>, Vec<f32>) {
    let g = roots.len();
    let neighbours: Vec<[u32; 3]> = (0..g)
        .map(|i| {
            let mut near: Vec<(f64, usize)> = (0..g)
                .filter(|&j| j != i)
                .map(|j| (roots[i].distance_squared(roots[j]), j))
                .collect();
            near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let a = near.first().map_or(i, |x| x.1);
            let b = near.get(1).map_or(a, |x| x.1);
            [i as u32, a as u32, b as u32]
        })
        .collect();
    let (mut child_guides, mut child_weights, mut child_tint) = (
        Vec::with_capacity(g * per),
        Vec::with_capacity(g * per),
        Vec::with_capacity(g * per),
    );
    for nb in &neighbours {
        for k in 0..per {
            // The first child is the guide itself; the rest lean toward the neighbours.
            let (u, v) = if k == 0 {
                (0.0, 0.0)
            } else {
                let (mut u, mut v) = (rng.unit(), rng.unit());
                if u + v > 1.0 {
                    (u, v) = (1.0 - u, 1.0 - v);
                }
                // Stay nearer the own guide: the neighbours' shares at most a half.
                (0.5 * u, 0.5 * v)
            };
            child_guides.push(*nb);
            child_weights.push([(1.0 - u - v) as f32, u as f32, v as f32]);
            let var = f64::from(variation);
            child_tint.push((1.0 + var * (2.0 * rng.unit() - 1.0)) as f32);
        }
    }
    (child_guides, child_weights, child_tint)
}

/// How a TressFX file ([`crate::hair::TfxStrands`]) becomes a [`Groom`] (`Groom::from_tfx`); in a
/// character file's `hair.tfx` block with the file's path beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfxGroomOptions {
    /// The bone the groom follows.
    pub head_bone: String,
    /// Segments per strand after resampling by arc length (1 to [`MAX_SEGMENTS`]).
    pub segments: usize,
    /// Rendered strands per file strand: 1 renders the file's strands as they are (a full groom,
    /// such as Sintel's 11,400); more grows children between each strand and its two nearest
    /// neighbours (the file's strands as guides, such as Sintel's 228).
    pub children_per_guide: usize,
    /// Metres per file unit.
    pub scale: f64,
    /// The file point (file units) that becomes the head bone's origin.
    pub origin: [f64; 3],
    /// Clump toward the own guide by the tip (0–1).
    pub clump: f64,
    /// Thickness at root and tip, metres (> 0).
    pub thickness: [f64; 2],
    /// Root and tip colours (linear RGB in `[0,1]`) and the per-strand variation (0–1).
    pub colour: HairColourDef,
    /// Seed of the children's random weights and tints.
    pub seed: u64,
}

impl Groom {
    /// A groom from TressFX strands: each strand resampled to `options.segments` segments of equal
    /// arc length, moved by `(p − origin)·scale` into head-bone metres; children as
    /// [`TfxGroomOptions::children_per_guide`] says. The report counts the file's strands as
    /// requested and built guides.
    ///
    /// # Errors
    /// [`Error::Limit`] past [`MAX_GUIDES`] guides (a full groom of more strands is read with one
    /// child each, as guides it must stay within the guide limit), [`MAX_SEGMENTS`] segments or
    /// [`MAX_RENDERED_STRANDS`] rendered strands, naming the numbers; [`Error::Invalid`] for a
    /// non-positive or non-finite scale, thickness, clump outside 0–1 or 0 children.
    pub fn from_tfx(tfx: &crate::hair::TfxStrands, options: &TfxGroomOptions) -> Result<Groom> {
        let what = |field: &str| format!("{}: {field}", tfx.source);
        let invalid = |field: &str, reason: String| Error::Invalid {
            what: what(field),
            reason,
        };
        let o = options;
        if o.segments == 0 {
            return Err(invalid("segments", "must be at least 1".into()));
        }
        if o.segments > MAX_SEGMENTS {
            return Err(Error::Limit {
                what: what("segments"),
                limit: MAX_SEGMENTS as u64,
                found: o.segments as u64,
            });
        }
        if o.children_per_guide == 0 {
            return Err(invalid("children_per_guide", "must be at least 1".into()));
        }
        let rendered = tfx.strands.saturating_mul(o.children_per_guide);
        if rendered > MAX_RENDERED_STRANDS {
            return Err(Error::Limit {
                what: what("rendered strands (file strands × children_per_guide)"),
                limit: MAX_RENDERED_STRANDS as u64,
                found: rendered as u64,
            });
        }
        if o.children_per_guide > 1 && tfx.strands > MAX_GUIDES {
            return Err(Error::Limit {
                what: what("guides (file strands, with children_per_guide > 1)"),
                limit: MAX_GUIDES as u64,
                found: tfx.strands as u64,
            });
        }
        if !(o.scale.is_finite() && o.scale > 0.0) {
            return Err(invalid(
                "scale",
                format!("{} is not a positive number", o.scale),
            ));
        }
        if !o.origin.iter().all(|x| x.is_finite()) {
            return Err(invalid("origin", "not finite".into()));
        }
        if !(0.0..=1.0).contains(&o.clump) {
            return Err(invalid("clump", format!("{} is outside 0..1", o.clump)));
        }
        if !o.thickness.iter().all(|t| t.is_finite() && *t > 0.0) {
            return Err(invalid(
                "thickness",
                format!("{:?} must be positive", o.thickness),
            ));
        }
        let origin = DVec3::from(o.origin);
        let guides: Vec<[f32; 3]> = tfx
            .resampled(o.segments)?
            .into_iter()
            .map(|p| {
                ((DVec3::from(p.map(f64::from)) - origin) * o.scale)
                    .as_vec3()
                    .to_array()
            })
            .collect();
        // In metres now: beyond ±10⁴ m (a scale or origin far off) is refused naming the point.
        if let Some(i) = guides
            .iter()
            .position(|p| !p.iter().all(|x| x.is_finite() && x.abs() <= 1.0e4))
        {
            let s1 = o.segments + 1;
            return Err(invalid(
                "scale",
                format!(
                    "guide {} point {} lands at {:?} m, beyond ±10⁴ m (check scale {:e} and origin)",
                    i / s1,
                    i % s1,
                    guides[i],
                    o.scale
                ),
            ));
        }
        let s1 = o.segments + 1;
        let roots: Vec<DVec3> = (0..tfx.strands)
            .map(|i| DVec3::from(guides[i * s1].map(f64::from)))
            .collect();
        let (child_guides, child_weights, child_tint) = if o.children_per_guide == 1 {
            let mut rng = SplitMix64(o.seed ^ 0x6A09_E667_F3BC_C909);
            let var = f64::from(o.colour.variation);
            (
                (0..tfx.strands as u32).map(|i| [i, i, i]).collect(),
                vec![[1.0, 0.0, 0.0]; tfx.strands],
                (0..tfx.strands)
                    .map(|_| (1.0 + var * (2.0 * rng.unit() - 1.0)) as f32)
                    .collect(),
            )
        } else {
            let mut rng = SplitMix64(o.seed ^ 0x6A09_E667_F3BC_C909);
            children(&roots, o.children_per_guide, o.colour.variation, &mut rng)
        };
        Ok(Groom {
            head_bone: o.head_bone.clone(),
            segments: o.segments,
            guides,
            child_guides,
            child_weights,
            child_tint,
            clump: o.clump as f32,
            thickness: [o.thickness[0] as f32, o.thickness[1] as f32],
            colour: [o.colour.root, o.colour.tip],
            report: GroomReport {
                requested_guides: tfx.strands,
                built_guides: tfx.strands,
                rejected_face: 0,
                rejected_cap: 0,
                rendered_strands: rendered,
                pushed_out: 0,
            },
        })
    }
    /// Guide strands `G`.
    pub fn guide_count(&self) -> usize {
        self.guides.len() / (self.segments + 1)
    }

    /// Rendered (child) strands `C`.
    pub fn child_count(&self) -> usize {
        self.child_guides.len()
    }

    /// The points `(S+1, 3)` of child `c` given the guides' current points `guides`
    /// (`(G·(S+1), 3)`, the same layout as [`Groom::guides`]): point `k` is the weighted guides'
    /// points `bₖ = Σ wᵢ·gᵢ,ₖ` (weights summing to 1, so its root is the weighted roots), pulled
    /// toward its own guide's shape by `clump · k/S`: `bₖ + (clump·k/S)·((g₀,ₖ − g₀,₀) − (bₖ − b₀))`
    /// (the CPU reference of the strands-to-splats kernel; a child weighted wholly on its guide is
    /// that guide, bit for bit).
    ///
    /// # Panics
    /// When `guides` or `out` have the wrong length (a caller's bug).
    pub fn child_points(&self, guides: &[[f32; 3]], c: usize, out: &mut [[f32; 3]]) {
        let s1 = self.segments + 1;
        assert_eq!(guides.len(), self.guides.len(), "guide points");
        assert_eq!(out.len(), s1, "child points");
        let g = self.child_guides[c];
        let w = self.child_weights[c];
        let at = |i: u32, k: usize| glam::Vec3::from(guides[i as usize * s1 + k]);
        let b = |k: usize| at(g[0], k) * w[0] + at(g[1], k) * w[1] + at(g[2], k) * w[2];
        let b0 = b(0);
        for (k, o) in out.iter_mut().enumerate() {
            let bk = b(k);
            let own = at(g[0], k) - at(g[0], 0);
            let t = self.clump * k as f32 / self.segments as f32;
            *o = (bk + (own - (bk - b0)) * t).to_array();
        }
    }
}
