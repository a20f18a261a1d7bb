//! A scenario's body: foot placement, spring bones and locomotion, resolved before any step runs
//! from the scenario's `body` block and the character file's own settings (the block wins), into
//! the body step every frame runs ([`crate::body`], after the face, before the palette — seed
//! 003's order).

use std::path::Path;

use mien_core::anim::foot::FootIkDef;
use mien_core::anim::spring::SpringOptions;
use mien_core::rig::Character;

use super::Problem;
use super::model::BodySettings;
use crate::body::{Body, Loco};
use crate::character::LoadedCharacter;
use crate::instance::FootPlacement;

/// The resolved body of a scenario.
#[derive(Clone, Debug, Default)]
pub(crate) struct BodyPlan {
    /// The body step each run starts from (cloned).
    pub body: Body,
    /// The legs' ankle node names, in the foot definition's order (empty: no foot placement).
    pub feet: Vec<String>,
    /// The simulated springs' names (empty: no spring bones).
    pub springs: Vec<String>,
}

/// Resolve `settings` (and the character file's `loaded` settings) against `ch`; problems are
/// pushed with pointers under `/body`.
pub(crate) fn resolve(
    ch: &Character,
    settings: &BodySettings,
    loaded: Option<&LoadedCharacter>,
    base: &Path,
    p: &mut Vec<Problem>,
) -> BodyPlan {
    let mut body = Body::for_character(ch);
    let foot = match settings.foot_ik.as_deref() {
        None => loaded.map_or(FootPlacement::Off, |l| l.foot.clone()),
        Some("off") => FootPlacement::Off,
        Some("auto") => FootPlacement::Humanoid,
        Some(rel) => {
            let path = base.join(rel);
            let file = path.display().to_string();
            let read = mien_core::io::read::read_file_capped(&path, 1 << 20)
                .map_err(|e| e.to_string())
                .and_then(|b| String::from_utf8(b).map_err(|_| format!("{file}: not UTF-8")))
                .and_then(|t| FootIkDef::from_json(&t, &file).map_err(|e| e.to_string()));
            match read {
                Ok(d) => FootPlacement::Def(d),
                Err(e) => {
                    p.push(Problem::new("/body/foot_ik", e));
                    FootPlacement::Off
                }
            }
        }
    };
    let def = match foot {
        FootPlacement::Off => None,
        FootPlacement::Humanoid => match FootIkDef::humanoid(ch) {
            Ok(d) => Some(d),
            Err(e) => {
                p.push(Problem::new("/body/foot_ik", e.to_string()));
                None
            }
        },
        FootPlacement::Def(d) => Some(d),
    };
    let mut feet = Vec::new();
    if let Some(d) = def {
        match crate::body::foot_placer(ch, Some(&d)) {
            Ok(f) => {
                feet = d.legs.iter().map(|l| l.ankle.clone()).collect();
                body.foot = Some(f);
            }
            Err(e) => p.push(Problem::new("/body/foot_ik", e.chain_text())),
        }
    }
    let springs = match settings.springs.as_deref() {
        None => match loaded {
            Some(l) => l.springs.clone(),
            None => ch.spring_bones.clone(),
        },
        Some("off") => None,
        Some("on") if ch.spring_bones.is_none() => {
            p.push(Problem::new(
                "/body/springs",
                format!(
                    "{} has no spring bones (VRMC_springBone or a VRM 0.x secondaryAnimation)",
                    ch.source
                ),
            ));
            None
        }
        // `on` and `auto`: the model's own, with a character file's chains merged.
        Some(_) => match (loaded.and_then(|l| l.springs.clone()), &ch.spring_bones) {
            (Some(s), _) => Some(s),
            (None, own) => own.clone(),
        },
    };
    let mut names = Vec::new();
    if let Some(sb) = springs {
        match mien_core::anim::spring::SpringSim::new(&sb, ch, SpringOptions::default()) {
            Ok(sim) => {
                names = sb.springs.iter().map(|s| s.name.clone()).collect();
                body.springs = Some(sim);
            }
            Err(e) => p.push(Problem::new("/body/springs", e.to_string())),
        }
    }
    if let Some(l) = loaded.and_then(|l| l.locomotion) {
        body.locomotion = Some(Loco::new(l, ch));
    }
    BodyPlan {
        body,
        feet,
        springs: names,
    }
}
