//! A take's ARKit-52 curves written out in the layouts other tools read: Live Link Face's CSV
//! export and Audio2Face's blendshape-weight JSON — both read back by mien's own readers
//! ([`crate::io::livelink_csv`], [`crate::io::audio2face`]) to the same values.
//!
//! **CSV** (Live Link Face "Export"): header `Timecode,BlendShapeCount,EyeBlinkLeft,…,TongueOut,
//! HeadYaw,HeadPitch,HeadRoll,LeftEyeYaw,…,RightEyeRoll` — the 52 ARKit names capitalised as the
//! app spells them, in ARKit order, then the nine head and eye angles (radians); one row per frame,
//! `Timecode` `HH:MM:SS:FF.000` at the curves' rate (which must be a timecode rate the reader
//! infers: 24, 25, 30, 48, 50, 60, 100 or 120), `BlendShapeCount` 61. **JSON** (Audio2Face):
//! `exportFps`, `numPoses` 52, `numFrames`, `facsNames` (ARKit's own spelling), `weightMat`.
//! Values are written in their shortest round-trip decimal form, so an f32 reads back bit for bit.

use serde_json::json;

use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::error::{Error, Result};
use crate::io::livelink_csv::{LIVELINK_AUX_COLUMNS, TIMECODE_RATES};

/// Per-frame ARKit-52 weights (and head / eye angles) at a fixed rate.
#[derive(Clone, Debug, PartialEq)]
pub struct ArkitCurves {
    /// Frames per second.
    pub fps: f64,
    /// Weights `(F, 52)` in [`ARKIT_52`] order, unitless.
    pub weights: Vec<[f32; ARKIT_COUNT]>,
    /// Head yaw, pitch, roll and the left and right eyes' yaw, pitch, roll `(F, 9)`, radians (in
    /// [`LIVELINK_AUX_COLUMNS`] order); zeros where the take has none.
    pub angles: Vec<[f32; 9]>,
}

impl ArkitCurves {
    fn check(&self) -> Result<()> {
        if self.weights.is_empty() || self.angles.len() != self.weights.len() {
            return Err(Error::Invalid {
                what: "ARKit curves".into(),
                reason: format!(
                    "{} weight rows and {} angle rows: they must agree and not be empty",
                    self.weights.len(),
                    self.angles.len()
                ),
            });
        }
        if let Some(f) = self
            .weights
            .iter()
            .zip(&self.angles)
            .position(|(w, a)| !w.iter().chain(a).all(|x| x.is_finite()))
        {
            return Err(Error::Invalid {
                what: format!("ARKit curves frame {f}"),
                reason: "a value is not finite".into(),
            });
        }
        Ok(())
    }
}

/// The Live Link Face column name of an ARKit name (`eyeBlinkLeft` → `EyeBlinkLeft`).
fn llf_name(arkit: &str) -> String {
    let mut c = arkit.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// The curves as Live Link Face CSV text.
///
/// # Errors
/// [`Error::Invalid`] for a rate that is not one of the reader's timecode rates, empty or ragged
/// curves, a non-finite value.
pub fn livelink_csv(c: &ArkitCurves) -> Result<String> {
    c.check()?;
    let rate = TIMECODE_RATES
        .iter()
        .copied()
        .find(|&r| f64::from(r) == c.fps)
        .ok_or_else(|| Error::Invalid {
            what: "ARKit curves rate".into(),
            reason: format!(
                "{} fps: a Live Link Face CSV's timecode runs at one of {TIMECODE_RATES:?} fps",
                c.fps
            ),
        })?;
    let mut out = String::from("Timecode,BlendShapeCount");
    for n in ARKIT_52 {
        out.push(',');
        out.push_str(&llf_name(n));
    }
    for n in LIVELINK_AUX_COLUMNS {
        out.push(',');
        out.push_str(n);
    }
    out.push('\n');
    for (f, (w, a)) in c.weights.iter().zip(&c.angles).enumerate() {
        let f = f as u64;
        let r = u64::from(rate);
        let (ff, s) = (f % r, f / r);
        out.push_str(&format!(
            "{:02}:{:02}:{:02}:{:02}.000,{}",
            s / 3600,
            (s / 60) % 60,
            s % 60,
            ff,
            ARKIT_COUNT + 9
        ));
        for v in w.iter().chain(a) {
            out.push(',');
            out.push_str(&v.to_string());
        }
        out.push('\n');
    }
    Ok(out)
}

/// The curves as Audio2Face blendshape-weight JSON text (angles are not part of that layout).
///
/// # Errors
/// [`Error::Invalid`] for a rate outside (0, 1000], empty or ragged curves, a non-finite value.
pub fn audio2face_json(c: &ArkitCurves) -> Result<String> {
    c.check()?;
    if !(c.fps.is_finite() && c.fps > 0.0 && c.fps <= 1000.0) {
        return Err(Error::Invalid {
            what: "ARKit curves rate".into(),
            reason: format!("{} fps: must be above 0 and at most 1000", c.fps),
        });
    }
    let doc = json!({
        "exportFps": c.fps,
        "trackPath": "",
        "numPoses": ARKIT_COUNT,
        "numFrames": c.weights.len(),
        "facsNames": ARKIT_52.to_vec(),
        "weightMat": c.weights.iter().map(|w| w.to_vec()).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&doc).map_err(|e| Error::Invalid {
        what: "ARKit curves".into(),
        reason: e.to_string(),
    })
}
