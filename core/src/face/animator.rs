//! The animator: the avatar state machine driving a face controller's idle behaviour — blink rate
//! and gaze wander per state, the listening gaze at the speaker — on the media clock.
//!
//! Source: seed 004 (state drives idle behaviour; the config pattern), seed 003 (the face
//! controller). Deterministic: no wall clock; the same signals at the same media times give the same
//! poses and hashes.

use glam::{Mat4, Vec3};

use super::config::AnimationConfig;
use super::controller::{FaceController, IdleBehaviour};
use super::def::FaceDef;
use super::state::{AvatarState, AvatarStateMachine, Signal};
use crate::error::Result;
use crate::rig::{Character, Pose};

/// A face controller under an avatar state machine.
#[derive(Clone, Debug)]
pub struct Animator {
    face: FaceController,
    state: AvatarStateMachine,
    config: AnimationConfig,
    speaker: Option<Vec3>,
}

impl Animator {
    /// Bind `def` to `character` and start in idle-active at media time `t0`.
    ///
    /// # Errors
    /// An invalid config; a face definition that drives nothing on the character.
    pub fn new(
        character: &Character,
        def: FaceDef,
        config: AnimationConfig,
        t0: f64,
    ) -> Result<Self> {
        let state = AvatarStateMachine::new(&config, t0)?;
        let r = config.blink_interval.get(AvatarState::IdleActive);
        let face = FaceController::new(character, def, t0, (r.min_s, r.max_s))?;
        Ok(Animator {
            face,
            state,
            config,
            speaker: None,
        })
    }

    /// The face controller (expressions, blink, look-at, overrides).
    pub fn face(&self) -> &FaceController {
        &self.face
    }

    /// The face controller, to change.
    pub fn face_mut(&mut self) -> &mut FaceController {
        &mut self.face
    }

    /// The avatar state.
    pub fn state(&self) -> AvatarState {
        self.state.state()
    }

    /// Where the speaker is (world metres): the listening gaze goes there.
    pub fn set_speaker(&mut self, at: Option<Vec3>) {
        self.speaker = at;
    }

    /// Send a state signal at media time `t`.
    ///
    /// # Errors
    /// A time before the last one (the state is unchanged).
    pub fn signal(&mut self, signal: Signal, t: f64) -> Result<AvatarState> {
        self.state.signal(signal, t)
    }

    /// The idle behaviour the current state asks for.
    pub fn idle(&self) -> IdleBehaviour {
        let s = self.state.state();
        let r = self.config.blink_interval.get(s);
        let focus = (s == AvatarState::Listening && self.config.listening_looks_at_speaker)
            .then_some(self.speaker)
            .flatten();
        IdleBehaviour {
            blink_interval: (r.min_s, r.max_s),
            wander_amplitude: *self.config.gaze_wander_amplitude_rad.get(s) as f32,
            wander_period: *self.config.gaze_wander_period_s.get(s),
            focus,
        }
    }

    /// Advance to media time `t` and apply the face onto `pose` (`world`: the pose's world
    /// matrices before the face).
    ///
    /// # Errors
    /// A time before the last one.
    pub fn update(
        &mut self,
        character: &Character,
        t: f64,
        world: &[Mat4],
        pose: &mut Pose,
    ) -> Result<()> {
        self.state.update(t)?;
        let idle = self.idle();
        self.face.update(character, t, &idle, world, pose);
        Ok(())
    }

    /// The state hash of `pose` with this animator's face and avatar state.
    pub fn hash(&self, pose: &Pose) -> u64 {
        use std::hash::Hasher;
        let mut h = fnv::FnvHasher::with_key(super::controller::state_hash(pose, Some(&self.face)));
        h.write_u8(self.state.state() as u8);
        h.write_u64(self.state.entered_at().to_bits());
        h.finish()
    }
}
