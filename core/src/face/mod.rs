//! The animator: expressions, blink, gaze, avatar state and layers (issue 6).

pub mod blink;
pub mod controller;
pub mod def;
pub mod gaze;

pub use controller::{FaceController, IdleBehaviour, state_hash};
pub use def::{BlinkDef, Clamp, Expression, FaceDef, LookDef, LookMode};
