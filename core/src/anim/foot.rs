//! Foot placement: an animated character's feet put on uneven ground.
//!
//! Source: seed 003 "Foot placement" (the definition, the ray straight down from above each
//! animated ankle, the rule for shifting feet and lowering the pelvis, exponential smoothing,
//! two-bone IK, feet tilted to the ground normal, steep and missing ground ignored and reported),
//! and beyond it **stance locking** (a foot slower than a speed is planted at its world point and
//! released with hysteresis) and an IK whose knee stays in the plane of hip, target and pole.
//!
//! Each [`FootPlacer::update`] (world space, metres, seconds; `to_world` places the character):
//!
//! 1. the animated pose's world positions; the ground under the character `g₀` (a probe below
//!    the pelvis) is the height the animation assumes;
//! 2. per leg, a probe straight down from `probe_up` above the animated ankle, at most
//!    `probe_up + probe_down`: ground `gᵢ` with normal `nᵢ`. Missing ground, or ground steeper
//!    than `max_slope_deg`, leaves the leg as animated (offset target 0) and is reported;
//! 3. the foot's target offset `oᵢ = max(gᵢ − g₀, gᵢ + ankle_height − yᵢ)` — the ground's height
//!    under it relative to the ground under the character (a swinging foot keeps its clearance),
//!    never below the ground plus the ankle height — clamped to `[−max_drop, max_raise]`;
//! 4. the pelvis offset `min(0, minᵢ oᵢ)`, at least `−max_drop`: it lowers with the lowest foot
//!    so that foot can reach;
//! 5. every offset smoothed exponentially: `s += (target − s)·(1 − e^(−smooth_rate·dt))` —
//!    except that a foot's offset is never left below its floor (the ground plus the ankle
//!    height, within the raise limit): a foot coming down onto rising ground is lifted at once
//!    instead of lagging into it (beyond the seed, which smooths both ways);
//! 6. stance locking (`stance`): a grounded foot whose animated ankle moves slower than
//!    `plant_speed` along the ground (horizontally: a root that climbs a slope or a step carries
//!    the ankle up without moving it over the ground) is planted where its target is; while planted its target keeps the plant
//!    point's horizontal place (its height follows the ground rules above); it is released when the
//!    animated ankle moves faster than `release_speed` (horizontally) or its target pulls farther than `max_pull`
//!    (horizontally) from the plant point, and the plant's offset then fades at the smoothing rate
//!    (no pop);
//! 7. two-bone IK per leg (lengths fixed): the knee at the one point at both lengths from hip and
//!    target, in the plane of hip, target and pole — the pole is the animated knee's offset from
//!    the hip–ankle line, or `knee_hint` (the character's forward by default) when the animated leg
//!    is straight. The hip turns by the rotation that takes the animated (knee direction, plane
//!    normal) frame to the new one, the knee by the arc in that plane;
//! 8. the ankle keeps its animated world orientation, tilted by the arc from +Y to the ground
//!    normal (`align_feet`; the normal smoothed at the same rate, +Y where the leg is ungrounded).
//!
//! Deterministic: no clock, no randomness; the state is the smoothed offsets and plants.

use glam::{DMat3, DMat4, DQuat, DVec3, Quat};
use serde::{Deserialize, Serialize};

use super::ground::{Ground, GroundHit};
use super::retarget::World;
use crate::error::{Error, Result};
use crate::rig::{Character, NodeId, Pose};

/// The `format` field of a foot placement definition.
pub const FORMAT: &str = "mien-foot-ik";

/// A foot placement definition (`mien-foot-ik` JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FootIkDef {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// The legs (one or more).
    pub legs: Vec<LegDef>,
    /// The pelvis (hips) node, lowered with the lowest foot.
    pub pelvis: String,
    /// The probe starts this far above the animated ankle, metres (default 0.5).
    #[serde(default = "d_probe_up")]
    pub probe_up: f64,
    /// And reaches this far below it, metres (default 1.0).
    #[serde(default = "d_probe_down")]
    pub probe_down: f64,
    /// Most the pelvis (and a foot) is lowered, metres (default 0.4).
    #[serde(default = "d_max_drop")]
    pub max_drop: f64,
    /// Most a foot is raised, metres (default 0.5).
    #[serde(default = "d_max_raise")]
    pub max_raise: f64,
    /// Smoothing rate, 1/s (default 15; 0 holds the offsets where they are).
    #[serde(default = "d_smooth")]
    pub smooth_rate: f64,
    /// Ground steeper than this is ignored, degrees (default 45).
    #[serde(default = "d_slope")]
    pub max_slope_deg: f64,
    /// Tilt the feet to the ground normal (default true).
    #[serde(default = "d_true")]
    pub align_feet: bool,
    /// Stance locking (default on with its defaults); `null` turns it off.
    #[serde(default = "d_stance")]
    pub stance: Option<StanceDef>,
}

/// One leg.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegDef {
    /// The hip (upper leg) node.
    pub hip: String,
    /// The knee (lower leg) node.
    pub knee: String,
    /// The ankle (foot) node.
    pub ankle: String,
    /// The ankle joint's height above the sole, metres (default 0.08).
    #[serde(default = "d_ankle")]
    pub ankle_height: f64,
    /// Where the knee bends when the animated leg is straight: a direction in the character's
    /// space (default `[0, 0, 1]`, a glTF character's forward).
    #[serde(default = "d_hint")]
    pub knee_hint: [f64; 3],
}

/// Stance locking (module doc step 6).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StanceDef {
    /// A grounded foot slower than this is planted, m/s (default 0.2).
    #[serde(default = "d_plant")]
    pub plant_speed: f64,
    /// A planted foot faster than this is released, m/s (default 0.5; ≥ `plant_speed`).
    #[serde(default = "d_release")]
    pub release_speed: f64,
    /// A planted foot whose target pulls farther than this is released, metres (default 0.08).
    #[serde(default = "d_pull")]
    pub max_pull: f64,
}

impl Default for StanceDef {
    fn default() -> Self {
        StanceDef {
            plant_speed: d_plant(),
            release_speed: d_release(),
            max_pull: d_pull(),
        }
    }
}

fn d_probe_up() -> f64 {
    0.5
}
fn d_probe_down() -> f64 {
    1.0
}
fn d_max_drop() -> f64 {
    0.4
}
fn d_max_raise() -> f64 {
    0.5
}
fn d_smooth() -> f64 {
    15.0
}
fn d_slope() -> f64 {
    45.0
}
fn d_true() -> bool {
    true
}
fn d_stance() -> Option<StanceDef> {
    Some(StanceDef::default())
}
fn d_ankle() -> f64 {
    0.08
}
fn d_hint() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}
fn d_plant() -> f64 {
    0.2
}
fn d_release() -> f64 {
    0.5
}
fn d_pull() -> f64 {
    0.08
}

/// The lowest rest-pose height of the vertices whose strongest skin influence is one of the
/// nodes `joints` (linear blend skinning at rest: `Σ wᵢ · W(jᵢ) · IBM(jᵢ) · v`), metres; `None`
/// when no vertex is skinned to them.
fn sole_height(ch: &Character, w: &World, joints: &[usize]) -> Option<f64> {
    let mut low: Option<f64> = None;
    for node in &ch.nodes {
        let (Some(m), Some(s)) = (node.mesh, node.skin) else {
            continue;
        };
        let (Some(mesh), Some(skin)) = (ch.meshes.get(m.index()), ch.skins.get(s.index())) else {
            continue;
        };
        let palette: Vec<DMat4> = skin
            .joints
            .iter()
            .zip(&skin.inverse_bind)
            .map(|(j, ib)| w.mat[j.index()] * ib.as_dmat4())
            .collect();
        for prim in &mesh.primitives {
            let Some(inf) = &prim.influences else {
                continue;
            };
            for ((p, js), ws) in prim.positions.iter().zip(&inf.joints).zip(&inf.weights) {
                let strongest = (0..4).max_by(|&a, &b| ws[a].total_cmp(&ws[b])).unwrap_or(0);
                let Some(j) = skin.joints.get(js[strongest] as usize) else {
                    continue;
                };
                if ws[strongest] <= 0.0 || !joints.contains(&j.index()) {
                    continue;
                }
                let v = DVec3::from(p.map(f64::from));
                let mut y = 0.0;
                for k in 0..4 {
                    if let Some(m) = palette.get(js[k] as usize) {
                        y += f64::from(ws[k]) * m.transform_point3(v).y;
                    }
                }
                low = Some(low.map_or(y, |l: f64| l.min(y)));
            }
        }
    }
    low
}

impl FootIkDef {
    /// A definition for `legs` (hip, knee, ankle names) and `pelvis` with every default.
    pub fn new(pelvis: &str, legs: &[(&str, &str, &str)]) -> Self {
        FootIkDef {
            format: FORMAT.into(),
            version: 1,
            legs: legs
                .iter()
                .map(|(h, k, a)| LegDef {
                    hip: (*h).into(),
                    knee: (*k).into(),
                    ankle: (*a).into(),
                    ankle_height: d_ankle(),
                    knee_hint: d_hint(),
                })
                .collect(),
            pelvis: pelvis.into(),
            probe_up: d_probe_up(),
            probe_down: d_probe_down(),
            max_drop: d_max_drop(),
            max_raise: d_max_raise(),
            smooth_rate: d_smooth(),
            max_slope_deg: d_slope(),
            align_feet: true,
            stance: d_stance(),
        }
    }

    /// The legs and pelvis of a humanoid found by role (a VRM's humanoid map, else joint names:
    /// [`crate::anim::retarget::names`]); each ankle's height its height above the lowest joint
    /// below it in the rest pose (the toes; at least 2 cm); the knee hint the way the character
    /// faces ([`crate::anim::retarget::facing_of`]); every other field at its default.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the roles the skeleton lacks (hips, and each leg's upper leg,
    /// lower leg and foot).
    pub fn humanoid(ch: &Character) -> Result<Self> {
        let roles = crate::anim::retarget::roles(ch);
        let name = |r: &str| {
            roles
                .iter()
                .find(|(role, _)| *role == r)
                .map(|(_, n)| ch.nodes[n.index()].name.clone().unwrap_or_default())
        };
        let want = [
            "hips",
            "leftUpperLeg",
            "leftLowerLeg",
            "leftFoot",
            "rightUpperLeg",
            "rightLowerLeg",
            "rightFoot",
        ];
        let missing: Vec<&str> = want.iter().copied().filter(|r| name(r).is_none()).collect();
        if !missing.is_empty() {
            return Err(Error::Invalid {
                what: format!("foot placement for {}", ch.source),
                reason: format!(
                    "no {} found (by humanoid map or joint names)",
                    missing.join(", ")
                ),
            });
        }
        let n = |r: &str| name(r).unwrap_or_default();
        let (l, r) = (
            (n("leftUpperLeg"), n("leftLowerLeg"), n("leftFoot")),
            (n("rightUpperLeg"), n("rightLowerLeg"), n("rightFoot")),
        );
        let mut def = Self::new(&n("hips"), &[(&l.0, &l.1, &l.2), (&r.0, &r.1, &r.2)]);
        // Knees bend toward the way the character faces (a VRM 0.x avatar faces −Z).
        if let Some(f) = crate::anim::retarget::facing_of(ch) {
            for leg in &mut def.legs {
                leg.knee_hint = f.to_array();
            }
        }
        // Each ankle's height: above its sole — the lowest rest-pose vertex skinned mostly to the
        // foot or its toes — else above the lowest joint of its foot (toes, toe end), at least
        // 2 cm. (A toe joint sits a few centimetres above the sole: measured from it, a raised
        // foot would sink into the ground by that much.)
        let w = World::of(ch, &ch.rest_pose().locals);
        for (leg, foot) in def.legs.iter_mut().zip(["leftFoot", "rightFoot"]) {
            if let Some((_, a)) = roles.iter().find(|(r, _)| *r == foot) {
                let mut low = w.pos(a.index()).y;
                let mut subtree = vec![a.index()];
                let mut stack = vec![*a];
                while let Some(x) = stack.pop() {
                    low = low.min(w.pos(x.index()).y);
                    subtree.push(x.index());
                    stack.extend(ch.nodes[x.index()].children.iter().copied());
                }
                let sole = sole_height(ch, &w, &subtree);
                let ankle = w.pos(a.index()).y;
                leg.ankle_height = match sole {
                    Some(s) if ankle - s > 0.02 && ankle - s < 0.5 => ankle - s,
                    _ => (ankle - low).max(0.02),
                };
            }
        }
        Ok(def)
    }

    /// Parse a `mien-foot-ik` file; strict (unknown keys, out-of-range numbers refused).
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the JSON pointer of each problem.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let def: FootIkDef = crate::io::read::json_strict(text, file)?;
        def.check(file)?;
        Ok(def)
    }

    /// The ranges [`FootIkDef::from_json`] enforces, on a definition built in code: format and
    /// version; at least one leg; lengths finite and ≥ 0 (probe distances > 0), `max_slope_deg`
    /// in (0, 90], `smooth_rate` ≥ 0, a knee hint not zero, stance speeds ≥ 0 with the release at
    /// least the plant speed and `max_pull` > 0.
    ///
    /// # Errors
    /// [`Error::Format`] per problem ([`Error::Many`] when several).
    pub fn check(&self, file: &str) -> Result<()> {
        let mut p = Vec::new();
        let mut bad = |field: String, reason: String| p.push(Error::format(file, field, reason));
        if self.format != FORMAT {
            bad(
                "/format".into(),
                format!("`{}` is not `{FORMAT}`", self.format),
            );
        }
        if self.version != 1 {
            bad(
                "/version".into(),
                format!("version {} (mien reads 1)", self.version),
            );
        }
        if self.legs.is_empty() {
            bad("/legs".into(), "no leg".into());
        }
        let len = |v: f64, positive: bool| {
            v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 } && v <= 1e3
        };
        for (f, v, pos) in [
            ("probe_up", self.probe_up, true),
            ("probe_down", self.probe_down, true),
            ("max_drop", self.max_drop, false),
            ("max_raise", self.max_raise, false),
            ("smooth_rate", self.smooth_rate, false),
        ] {
            if !len(v, pos) {
                bad(format!("/{f}"), format!("{v} is out of range"));
            }
        }
        if !(self.max_slope_deg.is_finite()
            && self.max_slope_deg > 0.0
            && self.max_slope_deg <= 90.0)
        {
            bad(
                "/max_slope_deg".into(),
                format!("{} is not in (0, 90]", self.max_slope_deg),
            );
        }
        for (i, l) in self.legs.iter().enumerate() {
            if !len(l.ankle_height, false) {
                bad(
                    format!("/legs/{i}/ankle_height"),
                    format!("{} is out of range", l.ankle_height),
                );
            }
            let h = DVec3::from_array(l.knee_hint);
            if !(h.is_finite() && h.length() > 1e-9) {
                bad(
                    format!("/legs/{i}/knee_hint"),
                    format!("{:?} is not a direction", l.knee_hint),
                );
            }
        }
        if let Some(s) = &self.stance {
            if !(len(s.plant_speed, false)
                && len(s.release_speed, false)
                && s.release_speed >= s.plant_speed)
            {
                bad(
                    "/stance".into(),
                    format!(
                        "speeds {} / {} m/s: both ≥ 0, the release at least the plant",
                        s.plant_speed, s.release_speed
                    ),
                );
            }
            if !len(s.max_pull, true) {
                bad(
                    "/stance/max_pull".into(),
                    format!("{} is out of range", s.max_pull),
                );
            }
        }
        Error::collect(p)
    }
}

/// What one leg did in one update.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LegReport {
    /// Standing on ground the rules accept.
    pub grounded: bool,
    /// Why not: `no ground`, `steep (52.0°)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<String>,
    /// The ground's height under the foot, metres (when hit).
    pub ground_y: Option<f64>,
    /// The ground's slope there, degrees.
    pub slope_deg: Option<f64>,
    /// The smoothed vertical offset of the foot, metres.
    pub offset: f64,
    /// Planted by stance locking.
    pub planted: bool,
    /// The ankle's world position after placement.
    pub ankle: [f64; 3],
}

/// What one update did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FootReport {
    /// The ground under the character, metres (`None`: none found; offsets are then relative to
    /// the animation's own height).
    pub ground_y: Option<f64>,
    /// The smoothed pelvis offset, metres (≤ 0).
    pub pelvis_offset: f64,
    /// Per leg, in definition order.
    pub legs: Vec<LegReport>,
}

#[derive(Clone, Copy, Debug)]
struct Leg {
    hip: usize,
    knee: usize,
    ankle: usize,
    ankle_height: f64,
    hint: DVec3,
}

#[derive(Clone, Copy, Debug)]
struct LegState {
    offset: f64,
    /// The smoothed ground normal the foot is tilted to (+Y when ungrounded).
    tilt: DVec3,
    plant: Option<DVec3>,
    /// A released plant's remaining horizontal and vertical offset, fading.
    release: DVec3,
    last_anim: Option<DVec3>,
}

impl Default for LegState {
    fn default() -> Self {
        LegState {
            offset: 0.0,
            tilt: DVec3::Y,
            plant: None,
            release: DVec3::ZERO,
            last_anim: None,
        }
    }
}

/// Foot placement for one character (module doc).
#[derive(Clone, Debug)]
pub struct FootPlacer {
    def: FootIkDef,
    legs: Vec<Leg>,
    pelvis: usize,
    state: Vec<LegState>,
    pelvis_offset: f64,
}

impl FootPlacer {
    /// Resolve `def` against `ch`.
    ///
    /// # Errors
    /// The definition's range problems; every node name `ch` lacks, and every leg whose hip,
    /// knee and ankle are not a parent chain (hip above knee above ankle), named at once.
    pub fn new(def: &FootIkDef, ch: &Character) -> Result<Self> {
        def.check("foot placement definition")?;
        let find = |n: &str| ch.nodes.iter().position(|x| x.name.as_deref() == Some(n));
        let mut problems = Vec::new();
        let mut node = |field: String, n: &str| {
            let f = find(n);
            if f.is_none() {
                problems.push(Error::Invalid {
                    what: format!("foot placement {field}"),
                    reason: format!("{} has no node named `{n}`", ch.source),
                });
            }
            f.unwrap_or(0)
        };
        let pelvis = node("pelvis".into(), &def.pelvis);
        let mut legs = Vec::new();
        for (i, l) in def.legs.iter().enumerate() {
            legs.push(Leg {
                hip: node(format!("legs[{i}].hip"), &l.hip),
                knee: node(format!("legs[{i}].knee"), &l.knee),
                ankle: node(format!("legs[{i}].ankle"), &l.ankle),
                ankle_height: l.ankle_height,
                hint: DVec3::from_array(l.knee_hint).normalize(),
            });
        }
        let below = |child: usize, anc: usize| {
            let mut c = ch.nodes[child].parent;
            while let Some(p) = c {
                if p.index() == anc {
                    return true;
                }
                c = ch.nodes[p.index()].parent;
            }
            false
        };
        if problems.is_empty() {
            for (i, l) in legs.iter().enumerate() {
                if !(below(l.knee, l.hip) && below(l.ankle, l.knee)) {
                    problems.push(Error::Invalid {
                        what: format!("foot placement legs[{i}]"),
                        reason: "hip, knee and ankle are not one parent chain (hip above knee above ankle)".into(),
                    });
                }
            }
        }
        Error::collect(problems)?;
        Ok(FootPlacer {
            def: def.clone(),
            state: vec![LegState::default(); legs.len()],
            legs,
            pelvis,
            pelvis_offset: 0.0,
        })
    }

    /// Forget the smoothed offsets and plants (after a teleport or a cut).
    pub fn reset(&mut self) {
        self.state.iter_mut().for_each(|s| *s = LegState::default());
        self.pelvis_offset = 0.0;
    }

    /// Place the feet of `pose` (the animated pose of `ch`, changed in place: the pelvis
    /// translation, each leg's hip, knee and ankle rotations) on `ground`, `dt` seconds after the
    /// last update (module doc). `to_world` places the character in the world.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a `dt` that is not finite and ≥ 0, a pose of another node count, or
    /// a `to_world` that is not finite and invertible.
    pub fn update(
        &mut self,
        dt: f64,
        ch: &Character,
        pose: &mut Pose,
        to_world: DMat4,
        ground: &Ground,
    ) -> Result<FootReport> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::Invalid {
                what: "foot placement dt".into(),
                reason: format!("{dt} is not a time step in seconds ≥ 0"),
            });
        }
        if pose.locals.len() != ch.nodes.len() {
            return Err(Error::Invalid {
                what: "foot placement pose".into(),
                reason: format!(
                    "{} nodes for a character of {}",
                    pose.locals.len(),
                    ch.nodes.len()
                ),
            });
        }
        if !(to_world.is_finite() && to_world.determinant().abs() > 1e-12) {
            return Err(Error::Invalid {
                what: "foot placement to_world".into(),
                reason: "not a finite invertible matrix".into(),
            });
        }
        let d = &self.def;
        let alpha = 1.0 - (-d.smooth_rate * dt).exp();
        let world_of = |locals: &[crate::rig::Transform]| {
            let mut w = World::of(ch, locals);
            let r = DQuat::from_mat3(&DMat3::from_mat4(to_world)).normalize();
            for i in 0..w.mat.len() {
                w.mat[i] = to_world * w.mat[i];
                w.rot[i] = (r * w.rot[i]).normalize();
            }
            w
        };
        let w = world_of(&pose.locals);
        let up = DVec3::Y;
        let reach = d.probe_up + d.probe_down;
        let pelvis_p = w.pos(self.pelvis);
        let g0 = ground
            .probe(pelvis_p + up * d.probe_up, 1e4)
            .map(|h| h.point.y);
        let max_slope_cos = d.max_slope_deg.to_radians().cos();
        let mut report = FootReport {
            ground_y: g0,
            pelvis_offset: 0.0,
            legs: Vec::with_capacity(self.legs.len()),
        };
        // Steps 2–3: each foot's target offset.
        let mut targets = Vec::with_capacity(self.legs.len());
        for (leg, st) in self.legs.iter().zip(&mut self.state) {
            let a = w.pos(leg.ankle);
            let hit: Option<GroundHit> = ground.probe(a + up * d.probe_up, reach);
            let mut lr = LegReport::default();
            let mut target = 0.0;
            let mut floor_offset = f64::NEG_INFINITY;
            let mut normal = None;
            match hit {
                None => lr.ignored = Some("no ground".into()),
                Some(h) => {
                    let slope = h.normal.y.clamp(-1.0, 1.0).acos().to_degrees();
                    lr.ground_y = Some(h.point.y);
                    lr.slope_deg = Some(slope);
                    if h.normal.y < max_slope_cos - 1e-12 {
                        lr.ignored = Some(format!("steep ({slope:.1}°)"));
                    } else {
                        lr.grounded = true;
                        let rel = h.point.y - g0.unwrap_or(h.point.y);
                        let floor = h.point.y + leg.ankle_height - a.y;
                        target = rel.max(floor).clamp(-d.max_drop, d.max_raise);
                        floor_offset = floor.clamp(-d.max_drop, d.max_raise);
                        normal = Some(h.normal);
                    }
                }
            }
            // Step 5 for the foot; smoothing never lags a foot into the ground.
            st.offset += (target - st.offset) * alpha;
            st.offset = st.offset.max(floor_offset);
            let n = normal.unwrap_or(up);
            st.tilt = (st.tilt + (n - st.tilt) * alpha).normalize();
            lr.offset = st.offset;
            targets.push(target);
            report.legs.push(lr);
        }
        // Step 4: the pelvis.
        let lowest = targets
            .iter()
            .copied()
            .fold(0.0f64, f64::min)
            .max(-d.max_drop);
        self.pelvis_offset += (lowest - self.pelvis_offset) * alpha;
        report.pelvis_offset = self.pelvis_offset;
        if self.pelvis_offset != 0.0 {
            let p = self.pelvis;
            let parent = ch.nodes[p].parent.map(NodeId::index);
            let want = w.pos(p) + up * self.pelvis_offset;
            let local = match parent {
                Some(q) => w.mat[q].inverse().transform_point3(want),
                None => to_world.inverse().transform_point3(want),
            };
            pose.locals[p].translation = local.as_vec3();
        }
        // Steps 6–8 per leg, on the pose with the pelvis moved.
        for (k, leg) in self.legs.iter().enumerate() {
            let w = world_of(&pose.locals);
            // The animated ankle (before the pelvis moved) and the foot's target above it.
            let raw = w.pos(leg.ankle) - up * self.pelvis_offset;
            let mut target = raw + up * self.state[k].offset;
            let st = &mut self.state[k];
            let speed = match (st.last_anim, dt > 0.0) {
                (Some(prev), true) => DVec3::new(raw.x - prev.x, 0.0, raw.z - prev.z).length() / dt,
                _ => f64::INFINITY,
            };
            st.last_anim = Some(raw);
            if let Some(s) = d.stance {
                let flat = |v: DVec3| DVec3::new(v.x, 0.0, v.z);
                match st.plant {
                    Some(p) => {
                        if speed > s.release_speed
                            || flat(target - p).length() > s.max_pull
                            || !report.legs[k].grounded
                        {
                            st.release = flat(p - target);
                            st.plant = None;
                        } else {
                            // Planted: held where it was set down; its height follows the ground.
                            target = DVec3::new(p.x, target.y, p.z);
                        }
                    }
                    None => {
                        if report.legs[k].grounded && speed < s.plant_speed {
                            st.plant = Some(target);
                        }
                    }
                }
            }
            if st.plant.is_none() {
                st.release *= 1.0 - alpha;
                target += st.release;
            }
            report.legs[k].planted = st.plant.is_some();
            solve_leg(ch, pose, &w, leg, target, to_world);
            // Step 8: the foot keeps its animated world orientation, tilted toward the ground.
            let w2 = world_of(&pose.locals);
            let mut foot = w.rot[leg.ankle];
            if d.align_feet {
                foot = (DQuat::from_rotation_arc(up, st.tilt) * foot).normalize();
            }
            let parent = w2.rot[leg.knee];
            let local = (parent.inverse() * foot).normalize();
            pose.locals[leg.ankle].rotation = to_quat(local);
            report.legs[k].ankle = world_of(&pose.locals).pos(leg.ankle).to_array();
        }
        Ok(report)
    }
}

fn to_quat(q: DQuat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32).normalize()
}

/// A two-bone IK solution (world space).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBone {
    /// The knee's new position.
    pub knee: DVec3,
    /// The ankle's new position (the target, or the nearest point the lengths reach).
    pub ankle: DVec3,
    /// The world rotation applied to the upper bone (and everything below it).
    pub hip_turn: DQuat,
    /// The world rotation then applied to the lower bone (and everything below it), about the
    /// knee.
    pub knee_turn: DQuat,
}

/// Two-bone IK (module doc step 7): hip `h`, knee `k`, ankle `a` (world positions), the ankle
/// wanted at `target`; the knee bends toward the animated knee's side of the hip–ankle line, or
/// toward `hint` (a direction) when the animated leg is straight. Lengths `|k − h|` and
/// `|a − k|` are kept; a target out of reach is met as nearly as they allow (the leg straight
/// toward it, or folded). `None` for a degenerate leg (a zero length, a target on the hip, a
/// hint along the leg).
pub fn two_bone(h: DVec3, k: DVec3, a: DVec3, target: DVec3, hint: DVec3) -> Option<TwoBone> {
    let (la, lb) = ((k - h).length(), (a - k).length());
    let line = a - h;
    let to = target - h;
    if la < 1e-9 || lb < 1e-9 || line.length() < 1e-9 || to.length() < 1e-9 {
        return None;
    }
    let axis = line.normalize();
    let side = |dir: DVec3, on: DVec3| {
        let p = dir - on * dir.dot(on);
        (p.length() > 1e-9).then(|| p.normalize())
    };
    // The animated pole: the knee's offset from the hip–ankle line (the hint when straight).
    let off = (k - h) - axis * (k - h).dot(axis);
    let pole0 = if off.length() > 1e-4 * la {
        off.normalize()
    } else {
        side(hint, axis)?
    };
    let n0 = axis.cross(pole0).normalize();
    let axis1 = to.normalize();
    let pole1 = side(pole0, axis1).or_else(|| side(hint, axis1))?;
    let dist = to.length().clamp((la - lb).abs() + 1e-9, la + lb - 1e-9);
    let x = (la * la - lb * lb + dist * dist) / (2.0 * dist);
    let y = (la * la - x * x).max(0.0).sqrt();
    let k1 = h + axis1 * x + pole1 * y;
    let n1 = axis1.cross(pole1).normalize();
    // The hip: the (knee direction, plane normal) frame now → the frame wanted.
    let (u0, u1) = ((k - h).normalize(), (k1 - h).normalize());
    let f0 = DMat3::from_cols(u0, n0, u0.cross(n0));
    let f1 = DMat3::from_cols(u1, n1, u1.cross(n1));
    let hip_turn = DQuat::from_mat3(&(f1 * f0.transpose())).normalize();
    // The knee: in the new plane, from where the lower leg now points to the target.
    let lower_now = (hip_turn * (a - k)).normalize();
    let ankle = h + axis1 * dist;
    let knee_turn = DQuat::from_rotation_arc(lower_now, (ankle - k1).normalize());
    Some(TwoBone {
        knee: k1,
        ankle,
        hip_turn,
        knee_turn,
    })
}

/// Turn `leg`'s hip and knee in `pose` (world `w`) by [`two_bone`] toward `target`.
fn solve_leg(
    ch: &Character,
    pose: &mut Pose,
    w: &World,
    leg: &Leg,
    target: DVec3,
    to_world: DMat4,
) {
    let r = DQuat::from_mat3(&DMat3::from_mat4(to_world)).normalize();
    let (h, k, a) = (w.pos(leg.hip), w.pos(leg.knee), w.pos(leg.ankle));
    let Some(ik) = two_bone(h, k, a, target, r * leg.hint) else {
        return;
    };
    let hip_world = (ik.hip_turn * w.rot[leg.hip]).normalize();
    let hip_parent = ch.nodes[leg.hip].parent.map_or(r, |p| w.rot[p.index()]);
    pose.locals[leg.hip].rotation = to_quat(hip_parent.inverse() * hip_world);
    let knee_world = (ik.knee_turn * ik.hip_turn * w.rot[leg.knee]).normalize();
    // The knee's parent: the hip, or bones below it that turned with it (kept relative to it).
    let rel = match ch.nodes[leg.knee].parent {
        Some(p) if p.index() != leg.hip => {
            (w.rot[leg.hip].inverse() * w.rot[p.index()]).normalize()
        }
        _ => DQuat::IDENTITY,
    };
    let parent_world = (hip_world * rel).normalize();
    pose.locals[leg.knee].rotation = to_quat(parent_world.inverse() * knee_world);
}
