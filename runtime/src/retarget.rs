//! A clip from another skeleton played by an asset: [`retarget`] maps the source skeleton onto the
//! asset's ([`mien_core::anim::retarget`]: the automatic map by humanoid role, or a
//! `mien-retarget` definition), bakes the source clip onto the asset's nodes, and returns the
//! asset with that clip appended, ready for [`crate::InstanceMut::play_clips`] on any instance and
//! for [`crate::bake::bake`] (what `mien retarget` writes).
//!
//! ```no_run
//! use std::sync::Arc;
//! use mien_runtime::retarget::{RetargetRequest, load_source, retarget};
//! use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};
//! # fn main() -> mien_runtime::Result<()> {
//! let walk = load_source("KnightCharacter.glb")?;
//! let avatar = Asset::load("rpm_male.glb")?;
//! let r = retarget(&walk, &avatar, &RetargetRequest::clip("HumanArmature|Walking"))?;
//! println!("{} bones mapped, scale {:.3}", r.report.mapped.len(), r.report.scale);
//! let mut rt = Runtime::new(Arc::new(r.asset), &Device::Cpu, &RuntimeOptions::default())?;
//! rt.instance_mut(0)?.play_clips(&[r.clip])?;
//! rt.update(0.5)?;
//! # Ok(()) }
//! ```

use std::path::Path;

use mien_core::anim::clip::Clip;
use mien_core::io::gltf::import_gltf;
use mien_core::rig::{Character, ClipId};

pub use mien_core::anim::retarget::{
    BoneMap, MAX_RETARGET_FPS, MAX_RETARGET_POSES, MappedBone, Reference, RetargetDef,
    RetargetOptions, RetargetReport, Retargeter, names,
};

use crate::asset::Asset;
use crate::error::{Context as _, Error, Result};

/// Read a source skeleton: any glTF, GLB, VRM or VRM Animation (`.vrma`) file; meshes are not
/// needed (a skeleton-only clip file is a source).
///
/// # Errors
/// The importer's refusals (file, field and index named), wrapped as `cannot load source
/// skeleton PATH`.
pub fn load_source(path: impl AsRef<Path>) -> Result<Character> {
    let path = path.as_ref();
    import_gltf(path).with_context(|| format!("cannot load source skeleton {}", path.display()))
}

/// What [`retarget`] does.
#[derive(Clone, Debug, PartialEq)]
pub struct RetargetRequest {
    /// The source clip by name or index, played with the other clips of its take; `None`: the
    /// source's first clip and its take.
    pub clip: Option<String>,
    /// The bone map; `None`: [`RetargetDef::auto`].
    pub map: Option<RetargetDef>,
    /// References and strictness.
    pub options: RetargetOptions,
    /// Key rate of the baked clip, keys per second (1 to [`MAX_RETARGET_FPS`]).
    pub fps: f64,
    /// The appended clip's name; `None`: the source clip's name (else `clip N`).
    pub name: Option<String>,
}

impl Default for RetargetRequest {
    /// The source's first clip, the automatic map, rest references, 30 keys per second.
    fn default() -> Self {
        RetargetRequest {
            clip: None,
            map: None,
            options: RetargetOptions::default(),
            fps: 30.0,
            name: None,
        }
    }
}

impl RetargetRequest {
    /// The default request for the source clip `name_or_index`.
    pub fn clip(name_or_index: &str) -> Self {
        RetargetRequest {
            clip: Some(name_or_index.to_string()),
            ..Default::default()
        }
    }
}

/// A retargeted clip on its new asset.
#[derive(Clone, Debug)]
pub struct Retargeted {
    /// The target asset with the clip appended (the rig shared with the original).
    pub asset: Asset,
    /// The appended clip.
    pub clip: ClipId,
    /// What was mapped and left out.
    pub report: RetargetReport,
    /// The map used (the automatic one when none was given): write it out with
    /// [`RetargetDef::to_json`] to edit it.
    pub map: RetargetDef,
    /// The source clips played, by name (`clip N` when unnamed).
    pub source_clips: Vec<String>,
    /// Keys per channel of the baked clip.
    pub keys: usize,
}

/// Retarget a clip of `source` onto `target` (module doc).
///
/// # Errors
/// A source without clips, or without the named clip (its clips listed); no shared humanoid bone
/// for the automatic map; every refusal of [`Retargeter::new`] (all problems named at once) and
/// of [`Retargeter::retarget_clip`] (rate and pose limits with the numbers); a linear-head target.
pub fn retarget(source: &Character, target: &Asset, req: &RetargetRequest) -> Result<Retargeted> {
    if source.clips.is_empty() {
        return Err(Error::invalid(
            source.source.clone(),
            "the source has no clips to retarget",
        ));
    }
    let first = match &req.clip {
        Some(key) => source.find_clip(key)?,
        None => ClipId(0),
    };
    let clips = source.take_of(first);
    let label = |c: ClipId| {
        source.clips[c.index()]
            .name
            .clone()
            .unwrap_or_else(|| format!("clip {}", c.index()))
    };
    let map = match &req.map {
        Some(m) => m.clone(),
        None => RetargetDef::auto(source, target.character())?,
    };
    let rt = Retargeter::new(&map, source, target.character(), &req.options)
        .with_context(|| format!("retarget {} → {}", source.source, target.source()))?;
    let name = req.name.clone().unwrap_or_else(|| label(first));
    let clip: Clip = rt.retarget_clip(source, &clips, req.fps, &name)?;
    let keys = clip.channels.first().map_or(0, |c| c.sampler.times().len());
    let (asset, ids) = target.with_clips(vec![clip])?;
    // What the source clip moves that the map does not carry (a foot IK rig's translations,
    // props, a vertical bob on an unmapped root), named in the report.
    let mut report = rt.report().clone();
    let mapped: std::collections::BTreeMap<&str, bool> = report
        .mapped
        .iter()
        .map(|m| (m.source.as_str(), m.translate))
        .collect();
    let vrma = source.vrm_animation.is_some();
    let mut dropped = std::collections::BTreeSet::new();
    for c in &clips {
        for ch in &source.clips[c.index()].channels {
            use mien_core::anim::clip::Property;
            let Some(name) = source.nodes[ch.node.index()].name.as_deref() else {
                continue;
            };
            let what = match (ch.property, mapped.get(name)) {
                (Property::Weights, _) => None,
                (_, None)
                    if vrma
                        && source
                            .humanoid()
                            .is_some_and(|h| h.iter().all(|(_, n)| *n != ch.node)) =>
                {
                    None
                }
                (Property::Rotation, None) => Some("rotation"),
                (Property::Translation, None | Some(false)) => Some("translation"),
                (Property::Scale, _) => Some("scale"),
                _ => None,
            };
            if let Some(w) = what {
                dropped.insert(format!("{name} ({w})"));
            }
        }
    }
    if !dropped.is_empty() {
        let list: Vec<String> = dropped.into_iter().collect();
        report.notes.push(format!(
            "the source clip moves {} the map does not carry: {}",
            if list.len() == 1 {
                "one channel".to_string()
            } else {
                format!("{} channels", list.len())
            },
            list.join(", ")
        ));
    }
    Ok(Retargeted {
        asset,
        clip: ids[0],
        report,
        map,
        source_clips: clips.iter().map(|c| label(*c)).collect(),
        keys,
    })
}
