//! Animation signals: keyframe clips, expression spaces and weight streams.

pub mod arkit;
pub mod calibration;
pub mod canon;
pub mod clip;
pub mod drive;
pub mod foot;
pub mod gait;
pub mod ground;
pub mod head;
pub mod retarget;
pub mod spring;
pub mod stream;

pub use calibration::{Calibration, CalibrationReport, ChannelCalibration};
pub use clip::{Channel, Clip, Interpolation, Property, Sampler};
pub use drive::{Drive, StreamDrive};
pub use stream::{ChannelRange, WeightStream};
