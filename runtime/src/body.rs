//! The body step of an instance: foot placement on a ground and spring bones, after the drive,
//! speech, face and VRM expressions have posed the frame and before the skin palette (seed 003's
//! update order: clips, morph clips, face, the morph limit, foot placement, chains, palette).
//!
//! Walking (locomotion, or a velocity without it) moves the placement along the character's
//! forward, and while it does the root's height follows the ground under it ([`FOLLOW_RATE`]).
//!
//! The step's time is the media clock: `dt` is the time since the instance's last frame. A frame
//! at an earlier media time than the last (a seek back) or more than a second later is a cut:
//! the smoothing and the chains start again from the pose (no whip, no slide).

use glam::DMat4;
use mien_core::anim::foot::{FootIkDef, FootPlacer, FootReport};
use mien_core::anim::ground::Ground;
use mien_core::anim::spring::{SpringOptions, SpringReport, SpringSim};
use mien_core::rig::{Character, Pose};

use crate::error::{Context as _, Error, Result};

/// A gap longer than this between frames (seconds) is a cut.
pub const CUT_S: f64 = 1.0;
/// While the body walks the character, the root's height follows the ground under it: probed
/// from this far above the root, metres …
pub const FOLLOW_UP_M: f64 = 1.0;
/// … down to this far below it, metres …
pub const FOLLOW_DOWN_M: f64 = 2.0;
/// … smoothed exponentially at this rate, 1/s (`y += (ground − y)·(1 − e^(−rate·dt))`: on a 10°
/// slope at 1.2 m/s the root trails the ground by 2.6 cm, which foot placement takes up).
pub const FOLLOW_RATE: f64 = 8.0;

/// An instance's body step (module doc).
#[derive(Clone, Debug)]
pub(crate) struct Body {
    pub foot: Option<FootPlacer>,
    pub springs: Option<SpringSim>,
    pub ground: Ground,
    pub placement: DMat4,
    pub locomotion: Option<Loco>,
    /// Without locomotion: the speed the placement moves along the character's forward, m/s (a
    /// clip that walks in place walked through the world).
    pub velocity: f64,
    /// The way the character faces in model space (unit, horizontal; +Z unless
    /// [`Body::for_character`] found another).
    pub forward: glam::DVec3,
    last_t: Option<f64>,
    /// This frame's `(dt, cut)`, from [`Body::locomote`].
    step: (f64, bool),
    pub last: BodyReport,
}

/// Locomotion's state: the clips, the speed, each clip's own time.
#[derive(Clone, Debug)]
pub(crate) struct Loco {
    pub def: crate::character::Locomotion,
    pub speed: f64,
    idle_t: f64,
    walk_t: f64,
    rest: Pose,
    /// Scratch poses the two clips are sampled into (no allocation per frame).
    idle: Pose,
    walk: Pose,
}

impl Loco {
    pub fn new(def: crate::character::Locomotion, ch: &Character) -> Self {
        Loco {
            def,
            speed: 0.0,
            idle_t: 0.0,
            walk_t: 0.0,
            rest: ch.rest_pose(),
            idle: ch.rest_pose(),
            walk: ch.rest_pose(),
        }
    }

    /// Advance by `dt` and write the blend of idle and walk into `pose`: the walk weighted
    /// `w = min(1, speed / walk_speed)` (seed 003), played at `max(1, speed / walk_speed)`× while
    /// moving; both loop.
    ///
    /// Beyond the seed, which plays the walk at `speed / walk_speed`× at every speed: blended
    /// with a still idle at weight `w`, the walk's stride shrinks to `w` of itself, so below the
    /// walk speed its feet already cover `w · walk_speed = speed` at 1× — slowing it as well would
    /// cover `w²·walk_speed` and every planted foot would slide forward.
    fn apply(&mut self, ch: &Character, pose: &mut Pose, dt: f64) {
        let ratio = self.speed / self.def.walk_speed;
        let rate = if ratio > 0.0 { ratio.max(1.0) } else { 0.0 };
        let wrap = |t: f64, c: mien_core::rig::ClipId| {
            let clip = &ch.clips[c.index()];
            let (a, b) = (clip.start(), clip.end());
            if b > a {
                a + (t - a).rem_euclid(b - a)
            } else {
                a
            }
        };
        self.idle_t = wrap(self.idle_t + dt, self.def.idle);
        self.walk_t = wrap(self.walk_t + dt * rate, self.def.walk);
        let w = ratio.clamp(0.0, 1.0) as f32;
        self.idle.clone_from(&self.rest);
        ch.apply_clip(self.def.idle, self.idle_t, &mut self.idle);
        self.walk.clone_from(&self.rest);
        ch.apply_clip(self.def.walk, self.walk_t, &mut self.walk);
        let (idle, walk) = (&self.idle, &self.walk);
        for c in [self.def.idle, self.def.walk] {
            for chan in &ch.clips[c.index()].channels {
                let n = chan.node.index();
                let (a, b) = (&idle.locals[n], &walk.locals[n]);
                pose.locals[n] = mien_core::rig::Transform {
                    translation: a.translation.lerp(b.translation, w),
                    rotation: a.rotation.slerp(b.rotation, w).normalize(),
                    scale: a.scale.lerp(b.scale, w),
                };
            }
        }
    }
}

/// What the body step did on the last frame.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BodyReport {
    /// Foot placement, when on.
    pub foot: Option<FootReport>,
    /// Spring bones, when on.
    pub springs: Option<SpringReport>,
    /// This frame was a cut (a seek back or a gap over a second): smoothing and chains restarted.
    pub cut: bool,
}

impl Default for Body {
    fn default() -> Self {
        Body {
            foot: None,
            springs: None,
            ground: Ground::Flat { height: 0.0 },
            placement: DMat4::IDENTITY,
            locomotion: None,
            velocity: 0.0,
            forward: glam::DVec3::Z,
            last_t: None,
            step: (0.0, false),
            last: BodyReport::default(),
        }
    }
}

impl Body {
    /// A body step that walks `ch` the way it faces ([`mien_core::anim::retarget::facing_of`]).
    pub fn for_character(ch: &Character) -> Self {
        Body {
            forward: mien_core::anim::retarget::facing_of(ch).unwrap_or(glam::DVec3::Z),
            ..Body::default()
        }
    }

    /// Whether anything runs.
    pub fn active(&self) -> bool {
        self.foot.is_some()
            || self.springs.is_some()
            || self.locomotion.is_some()
            || self.velocity != 0.0
    }

    /// Continue an FNV-1a 64 hash `h` over the body's state: the placement's 16 numbers and
    /// the spring bones' tails (for the instance's and a scenario's state hashes).
    pub fn hash_into(&self, mut h: u64) -> u64 {
        let mut eat = |v: f64| {
            for b in v.to_bits().to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for v in self.placement.to_cols_array() {
            eat(v);
        }
        if let Some(s) = &self.springs {
            for v in s.state_bits() {
                eat(v);
            }
        }
        h
    }

    /// The first half, right after the drive (seed 003: clips blended by locomotion speed come
    /// first, before morph clips and the face): the frame's step and cut, locomotion's blend
    /// written into `pose`, the placement walked forward and its height following the ground.
    pub fn locomote(&mut self, ch: &Character, pose: &mut Pose, t: f64) {
        let (dt, cut) = match self.last_t {
            Some(prev) if t >= prev && t - prev <= CUT_S => (t - prev, false),
            Some(_) => (0.0, true),
            None => (0.0, false),
        };
        self.last_t = Some(t);
        self.step = (dt, cut);
        let speed = match &mut self.locomotion {
            Some(l) => {
                l.apply(ch, pose, dt);
                l.speed
            }
            None => self.velocity,
        };
        // The character walks the way it faces, carried by its placement.
        let step = speed * dt;
        if step > 0.0 {
            self.placement *= DMat4::from_translation(self.forward * step);
            // The root follows the ground it walks over (the part a character controller plays
            // in an engine); the feet take up the rest.
            let o = self.placement.w_axis.truncate();
            if let Some(hit) = self.ground.probe(
                o + glam::DVec3::Y * FOLLOW_UP_M,
                FOLLOW_UP_M + FOLLOW_DOWN_M,
            ) {
                let a = 1.0 - (-FOLLOW_RATE * dt).exp();
                self.placement.w_axis.y += (hit.point.y - o.y) * a;
            }
        }
    }

    /// The second half, after the face and before the palette: foot placement on the ground,
    /// then the chains (seed 003's order).
    pub fn place(&mut self, ch: &Character, pose: &mut Pose) -> Result<()> {
        let (dt, cut) = self.step;
        let mut report = BodyReport {
            cut,
            ..Default::default()
        };
        if let Some(f) = &mut self.foot {
            if cut {
                f.reset();
            }
            report.foot = Some(f.update(dt, ch, pose, self.placement, &self.ground)?);
        }
        if let Some(s) = &mut self.springs {
            if cut {
                *s = SpringSim::new(s.bones(), ch, s.options())?;
            }
            report.springs = Some(s.update(dt, ch, pose, self.placement)?);
        }
        self.last = report;
        Ok(())
    }

    /// Restart smoothing and chains on the next frame (a new drive, a teleport).
    pub fn restart(&mut self) {
        self.last_t = None;
        if let Some(f) = &mut self.foot {
            f.reset();
        }
    }
}

/// Build a foot placer for `ch`: `def`, or one found by humanoid role ([`FootIkDef::humanoid`]).
///
/// # Errors
/// The definition's problems, or a character whose legs cannot be found, named.
pub(crate) fn foot_placer(ch: &Character, def: Option<&FootIkDef>) -> Result<FootPlacer> {
    let def = match def {
        Some(d) => d.clone(),
        None => FootIkDef::humanoid(ch).context("foot placement")?,
    };
    Ok(FootPlacer::new(&def, ch)?)
}

/// Build the spring simulation of `ch`'s own spring bones.
///
/// # Errors
/// [`Error::Invalid`] for a character without spring bones.
pub(crate) fn springs(ch: &Character, options: SpringOptions) -> Result<SpringSim> {
    let Some(sb) = &ch.spring_bones else {
        return Err(Error::invalid(
            ch.source.clone(),
            "the character has no spring bones (VRMC_springBone or a VRM 0.x secondaryAnimation)",
        ));
    };
    Ok(SpringSim::new(sb, ch, options)?)
}
