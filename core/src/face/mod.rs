//! The animator: expressions, blink, gaze, avatar state and layers (issue 6).

pub mod config;
pub mod layers;
pub mod state;

pub use config::{
    AnimationConfig, AnimationConfigOverrides, DEFAULT_ANIMATION_CONFIG, resolve_animation_config,
};
pub use layers::{ClampRule, ClampRules, Frame, Layer, LayerMode, composite, composite_in_place};
pub use state::{AvatarState, AvatarStateMachine, Signal, next_state};
