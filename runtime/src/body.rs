//! The body step of an instance: foot placement on a ground and spring bones, after the drive,
//! speech, face and VRM expressions have posed the frame and before the skin palette (seed 003's
//! update order: clips, morph clips, face, the morph limit, foot placement, chains, palette).
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

/// An instance's body step (module doc).
#[derive(Clone, Debug)]
pub(crate) struct Body {
    pub foot: Option<FootPlacer>,
    pub springs: Option<SpringSim>,
    pub ground: Ground,
    pub placement: DMat4,
    last_t: Option<f64>,
    pub last: BodyReport,
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
            last_t: None,
            last: BodyReport::default(),
        }
    }
}

impl Body {
    /// Whether anything runs.
    pub fn active(&self) -> bool {
        self.foot.is_some() || self.springs.is_some()
    }

    /// Run on `pose` at media time `t`.
    pub fn apply(&mut self, ch: &Character, pose: &mut Pose, t: f64) -> Result<()> {
        let (dt, cut) = match self.last_t {
            Some(prev) if t >= prev && t - prev <= CUT_S => (t - prev, false),
            Some(_) => (0.0, true),
            None => (0.0, false),
        };
        self.last_t = Some(t);
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
                *s = SpringSim::new(s.bones(), ch, SpringOptions::default())?;
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
