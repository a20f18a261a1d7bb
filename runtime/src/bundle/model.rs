//! A character file's model: its `model`, or the pack or DNA its `rig` block names; then the bundle
//! blocks checked against it ([`super::build`]).

use std::path::Path;
use std::sync::Arc;

use crate::asset::Asset;
use crate::character::{BUILTIN_BODY, BUILTIN_HEAD, CharacterDef};

use super::{Bundle, BundleDefs, BundleOptions};

/// The model of `def` (read relative to `dir`) and, when the file has bundle blocks, the bundle;
/// every problem pushed (the model stays when only the bundle fails, so the rest of the file is
/// still checked).
pub(crate) fn load(
    def: &CharacterDef,
    dir: &Path,
    file: &str,
    options: &BundleOptions,
    problems: &mut Vec<String>,
) -> (Option<Asset>, Option<Arc<Bundle>>) {
    let mut rig_file = None;
    let model = match (&def.rig, def.model.as_str()) {
        (Some(r), m) if r.backend != "none" || m.is_empty() => {
            super::rig_model(r, m, dir, problems).map(|(a, f)| {
                rig_file = f;
                a
            })
        }
        (_, "") => {
            problems.push("/model: missing (or give a `rig` block naming a pack or DNA)".into());
            None
        }
        (_, m) => {
            let model = match m {
                BUILTIN_HEAD => Ok(Asset::builtin()),
                BUILTIN_BODY => Ok(Asset::builtin_body()),
                m => Asset::load(dir.join(m)),
            };
            match model {
                Ok(a) => Some(a),
                Err(e) => {
                    problems.push(format!("/model: {}", e.chain_text()));
                    None
                }
            }
        }
    };
    let defs = BundleDefs {
        rig: def.rig.as_ref(),
        space: def.expression_space.as_ref(),
        branches: &def.branches,
        decoders: def.decoders.as_ref(),
        arkit_to_rig: def.arkit_to_rig.as_ref(),
        pose_anchors: def.pose_anchors.as_ref(),
    };
    let is_bundle = defs.rig.is_some()
        || defs.space.is_some()
        || !defs.branches.is_empty()
        || defs.decoders.is_some()
        || defs.arkit_to_rig.is_some()
        || defs.pose_anchors.is_some();
    match (model, is_bundle) {
        (Some(a), true) => {
            match super::build(&defs, &a, rig_file.as_deref(), dir, file, options, problems) {
                Some((a, b)) => (Some(a), Some(b)),
                None => (Some(a), None),
            }
        }
        (m, _) => (m, None),
    }
}
