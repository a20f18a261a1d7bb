//! A character bundle in `mien animate`: the camera its view-dependent decoders see, and what the
//! decoders did (report.json `appearance`).

use anyhow::Result;
use mien_runtime::{Camera, Runtime};
use serde::Serialize;

/// Vertical field of view of the default camera, radians (about 34°).
const FOV_Y: f64 = 0.6;

/// `--camera` (the eye, looking at the rest pose's centre), else a camera in front of the
/// character (+Z) at three times its height.
///
/// # Errors
/// An eye at the centre itself.
pub fn camera(rt: &Runtime, eye: Option<[f64; 3]>) -> Result<Camera> {
    let Some(eye) = eye else {
        return Ok(Camera::in_front_of(rt.rest_positions(), FOV_Y)?);
    };
    if eye.iter().any(|x| x.abs() > 1e6) {
        anyhow::bail!(
            "--camera {},{},{}: beyond ±10⁶ m (the camera is in the character's space, metres)",
            eye[0],
            eye[1],
            eye[2]
        );
    }
    Camera::toward(eye, rt.rest_positions(), FOV_Y).map_err(|e| {
        anyhow::anyhow!(
            "--camera {},{},{}: {e} (the camera looks at the centre of the rest pose)",
            eye[0],
            eye[1],
            eye[2]
        )
    })
}

/// What a bundle's decoders did in a run.
#[derive(Debug, Default, Serialize)]
pub struct AppearanceReport {
    /// The camera's eye, metres.
    pub camera_eye: [f64; 3],
    /// Its forward direction.
    pub camera_forward: [f64; 3],
    /// Decoder runs (one decoder, one branch, one instance).
    pub decodes: u64,
    /// Branch updates with nothing to decode.
    pub skipped: u64,
    /// Colour and opacity values clamped into 0–1.
    pub clamped: u64,
    /// Milliseconds in decoder runs.
    pub decode_ms: f64,
    /// Milliseconds rebuilding and writing records.
    pub record_ms: f64,
    /// Record bytes written to the backend.
    pub record_bytes: u64,
    /// Memory per branch and the resident bundle bytes.
    pub memory: Option<mien_runtime::BundleMemory>,
}

impl AppearanceReport {
    /// The report before the run.
    pub fn started(c: &Camera) -> Self {
        AppearanceReport {
            camera_eye: c.position,
            camera_forward: c.forward,
            ..Default::default()
        }
    }

    /// Fill in what the run did.
    pub fn finish(&mut self, rt: &Runtime) {
        if let Some(s) = rt.appearance_stats() {
            self.decodes = s.decodes;
            self.skipped = s.skipped;
            self.clamped = s.clamped;
            self.decode_ms = s.decode_time.as_secs_f64() * 1e3;
            self.record_ms = s.record_time.as_secs_f64() * 1e3;
            self.record_bytes = s.record_bytes;
        }
        self.memory = rt.bundle_memory();
    }
}
