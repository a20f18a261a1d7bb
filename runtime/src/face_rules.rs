//! Rules a face file and a state script must meet against the character and each other, checked
//! before any frame: every expression target of a face file exists on the character (as every
//! viseme target must), every scripted expression exists in the face, and script times and points
//! lie in their documented ranges.

use mien_core::anim::canon::Binding;
use mien_core::face::FaceDef;
use mien_core::rig::Character;

use crate::error::{Error, Result};
use crate::text::num;

/// Latest media time a state-script event may have, seconds (about 11.6 days, the bound of
/// `--audio-offset` too).
pub const MAX_EVENT_TIME_S: f64 = 1e6;

/// Whether some mesh of `ch` has a morph target `name` reaches: the exact name, or through the
/// name canonicaliser (an ARKit spelling reaching `_L`/`_R` targets), as the face controller binds.
fn reaches(ch: &Character, name: &str) -> bool {
    ch.meshes.iter().any(|m| {
        m.target_names.iter().any(|t| t == name)
            || !Binding::new(&[name], &m.target_names).routes().is_empty()
    })
}

/// A face file's own expressions (`text` declares `expressions`) must only name targets the
/// character has: the same rule as its visemes. The built-in expressions a file does not replace
/// bind to whatever the character has.
///
/// # Errors
/// Naming `file` and every `expression → target` the character lacks.
pub fn face_expressions(text: &str, def: &FaceDef, ch: &Character, file: &str) -> Result<()> {
    let declared = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .is_some_and(|v| v.get("expressions").is_some());
    if !declared {
        return Ok(());
    }
    let missing: Vec<String> = def
        .expressions
        .iter()
        .flat_map(|e| {
            e.targets
                .iter()
                .filter(|(t, _)| !reaches(ch, t))
                .map(move |(t, _)| format!("{} → {t}", e.name))
        })
        .collect();
    if !missing.is_empty() {
        return Err(Error::invalid(
            format!("{file}: /expressions"),
            format!(
                "the character {} lacks {} target(s): {}",
                ch.source,
                missing.len(),
                missing.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A state-script event time: finite, from 0 to [`MAX_EVENT_TIME_S`] seconds.
///
/// # Errors
/// The reason, with the value in short form.
pub fn event_time(t: f64) -> std::result::Result<(), String> {
    if t.is_finite() && (0.0..=MAX_EVENT_TIME_S).contains(&t) {
        Ok(())
    } else {
        Err(format!(
            "time {} s is not a media time from 0 to {} s",
            num(t),
            num(MAX_EVENT_TIME_S)
        ))
    }
}

/// A world point (metres): finite and within ±[`crate::posed::MAX_COORD_M`] on every axis,
/// the rule of scenarios and of the rest pose.
///
/// # Errors
/// The reason, with the point in short form.
pub fn point(p: [f32; 3]) -> std::result::Result<(), String> {
    let m = crate::posed::MAX_COORD_M;
    if p.iter().all(|c| c.is_finite() && c.abs() <= m) {
        Ok(())
    } else {
        Err(format!(
            "({}, {}, {}) is not a point within ±{} m of the origin",
            num(p[0]),
            num(p[1]),
            num(p[2]),
            num(m)
        ))
    }
}
