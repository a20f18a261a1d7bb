//! `--face`, `--look-at`, `--state-script`, `--animator`: which face driver a run attaches
//! ([`mien_runtime::FaceDriver`]; the built-in head plays its own script).

use anyhow::{Result, bail};
use mien_core::face::FaceDef;
use mien_core::rig::Character;
use mien_runtime::face::read_face;
use mien_runtime::{FaceDriver, FaceSources, Script};

use crate::args::{AnimateArgs, AnimatorChoice};

/// Whether the animator runs for `args` (`builtin`: the built-in head).
///
/// # Errors
/// `--animator off` together with an animator flag.
pub fn will_run(args: &AnimateArgs, builtin: bool) -> Result<bool> {
    let asked = args.face.is_some() || args.look_at.is_some() || args.state_script.is_some();
    Ok(match args.animator {
        AnimatorChoice::Off => {
            if asked {
                bail!("--animator off contradicts --face / --look-at / --state-script");
            }
            false
        }
        AnimatorChoice::On => true,
        AnimatorChoice::Auto => asked || builtin,
    })
}

/// The face driver `args` ask for, starting at media time `t0` (`builtin`: the built-in head is
/// running), or `None` when the animator does not run.
///
/// # Errors
/// Unreadable face or script files; a face that drives nothing on the character; a scripted
/// expression the face lacks.
pub fn face_driver(
    args: &AnimateArgs,
    ch: &Character,
    builtin: bool,
    t0: f64,
) -> Result<Option<FaceDriver>> {
    if !will_run(args, builtin)? {
        return Ok(None);
    }
    let def = match &args.face {
        Some(p) => read_face(p, ch)?,
        None => FaceDef::for_character(ch),
    };
    let builtin_script = args.state_script.is_none() && builtin && args.look_at.is_none();
    let script = match &args.state_script {
        Some(p) => Script::read(p)?,
        None if builtin_script => Script::builtin(),
        None => Script::default(),
    };
    let sources = FaceSources {
        face: args.face.as_ref().map(|p| p.display().to_string()),
        script: args.state_script.as_ref().map(|p| p.display().to_string()),
        builtin_script: builtin && args.state_script.is_none(),
    };
    Ok(Some(FaceDriver::new(
        ch,
        def,
        script,
        args.look_at,
        t0,
        &sources,
    )?))
}
