//! The animator: a face controller (expressions, blink, gaze, overrides), animation layers, the
//! avatar state machine and its config, turned into a character's controls every frame on the media
//! clock, deterministically (issue 6; seeds 003 and 004).

pub mod animator;
pub mod blink;
mod compose;
pub mod config;
pub mod controller;
pub mod def;
pub mod gaze;
pub mod layers;
pub mod state;

pub use animator::Animator;
pub use config::{
    AnimationConfig, AnimationConfigOverrides, DEFAULT_ANIMATION_CONFIG, resolve_animation_config,
};
pub use controller::{FaceController, IdleBehaviour, state_hash};
pub use def::{BlinkDef, Clamp, Expression, FaceDef, LookDef, LookMode};
pub use layers::{ClampRule, ClampRules, Frame, Layer, LayerMode, composite, composite_in_place};
pub use state::{AvatarState, AvatarStateMachine, Signal, next_state};
