//! LOD selection: which LODs a load keeps, and how the kept data is filtered and renumbered.
//!
//! The rules are OpenRigLogic's (`LODConstraint.cpp`, `LODMapping.cpp`,
//! `FilteredBinaryInputArchive.cpp`, `filters/*.cpp`), applied here after decoding instead of
//! while reading; the result is the same:
//!
//! * The kept LODs are the selection clamped to the file's LOD count. When they are all of the
//!   file's LODs nothing else changes. Otherwise the descriptor's LOD count becomes the number
//!   kept and its DB max LOD grows by the first kept LOD.
//! * Each LOD mapping of the definition keeps the kept LODs' entries (in order) and the index
//!   lists they use. The meshes, blend-shape channels and animated maps in some kept list are kept
//!   (names, and the mapping lists renumbered to the kept order); the joints kept are those in a
//!   kept list **plus every joint that LOD 0 of the file did not list**; the joint hierarchy and
//!   neutral transforms follow the kept joints (a kept joint whose parent was dropped gets parent
//!   0). The mesh → channel pairs keep those whose mesh and channel are both kept, renumbered.
//! * Joint groups, blend-shape entries and animated-map rows keep the LOD counts of the kept LODs
//!   and the first `count(first kept LOD)` rows. Joint-group output attributes and joint indices
//!   are renumbered to the kept joints; the joint matrix has `9 × kept joints` rows.
//!   **Blend-shape channel outputs, animated-map outputs and blend-shape target channel indices are
//!   not renumbered** (OpenRigLogic leaves them in the file's numbering; [`LodFilter`] lists the
//!   original index of every kept element to map them).
//! * Meshes not kept are dropped; a kept mesh drops its targets of channels not kept, and each
//!   vertex drops its weights of joints not kept (the rest divided by `1 − dropped`, a vertex left
//!   with none bound to the root with weight 1).
//! * ML networks, RBF solvers and ML operations follow their own LOD mappings the same way; ML
//!   regions follow the kept meshes; joint metadata and twist/swing outputs follow the kept joints
//!   (a setup left with no output is dropped).

use std::collections::{BTreeMap, BTreeSet};

use super::Dna;
use super::definition::LodMapping;
use super::geometry::SkinWeights;
use crate::error::{Error, Result};

/// Which LODs to load (OpenRigLogic's `Configuration::maxLOD` / `minLOD` / `lods`). LOD 0 is the
/// most detailed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LodSelection {
    /// Every LOD of the file.
    #[default]
    All,
    /// LOD `n` and every less detailed LOD (`maxLOD = n`).
    MaxLod(u16),
    /// LODs `max..=min` (`maxLOD`, `minLOD`; `max ≤ min`).
    Range {
        /// Most detailed LOD kept.
        max: u16,
        /// Least detailed LOD kept.
        min: u16,
    },
    /// Exactly these LODs (sorted, duplicates ignored).
    List(Vec<u16>),
}

/// What a LOD-filtered load kept: the original index of every kept element, in kept order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LodFilter {
    /// The file's LODs kept; kept LOD `i` was the file's LOD `lods[i]`.
    pub lods: Vec<u16>,
    /// Kept meshes (file indices).
    pub meshes: Vec<u16>,
    /// Kept joints (file indices).
    pub joints: Vec<u16>,
    /// Kept blend-shape channels (file indices). Blend-shape outputs and target channels still
    /// use file indices: find them here.
    pub blend_shape_channels: Vec<u16>,
    /// Kept animated maps (file indices). Animated-map outputs still use file indices.
    pub animated_maps: Vec<u16>,
}

/// Old → new numbering of the elements kept out of `count`.
struct Remap {
    passing: BTreeSet<u16>,
    map: BTreeMap<u16, u16>,
}

impl Remap {
    fn new(count: usize, passing: BTreeSet<u16>) -> Self {
        let map = passing
            .iter()
            .filter(|&&i| usize::from(i) < count)
            .enumerate()
            .map(|(new, &old)| (old, new as u16))
            .collect();
        Remap { passing, map }
    }

    fn passes(&self, i: u16) -> bool {
        self.passing.contains(&i)
    }

    fn get(&self, i: u16, file: &str, field: &str, what: &str) -> Result<u16> {
        self.map.get(&i).copied().ok_or_else(|| {
            Error::format(
                file,
                field,
                format!("{what} {i} is not kept by the LOD selection (or does not exist)"),
            )
        })
    }

    fn kept(&self) -> Vec<u16> {
        self.map.keys().copied().collect()
    }
}

/// Keep the elements of `v` whose position passes.
fn keep_positions<T>(v: &mut Vec<T>, keep: impl Fn(usize) -> bool) {
    let mut i = 0;
    v.retain(|_| {
        let k = keep(i);
        i += 1;
        k
    });
}

/// The LODs a selection keeps of `lod_count`, sorted and distinct.
fn kept_lods(sel: &LodSelection, lod_count: u16, file: &str) -> Result<Vec<u16>> {
    let (lo, hi) = match sel {
        LodSelection::All => (0, u16::MAX),
        LodSelection::MaxLod(m) => (*m, u16::MAX),
        LodSelection::Range { max, min } => {
            if max > min {
                return Err(Error::Invalid {
                    what: format!("{file}: LOD range {max}..={min}"),
                    reason: "the most detailed LOD (max) must not exceed the least detailed (min)"
                        .into(),
                });
            }
            (*max, *min)
        }
        LodSelection::List(l) => {
            let set: BTreeSet<u16> = l.iter().copied().filter(|&x| x < lod_count).collect();
            return check_nonempty(set.into_iter().collect(), sel, lod_count, file);
        }
    };
    let kept = (lo..=hi).take_while(|&l| l < lod_count).collect();
    check_nonempty(kept, sel, lod_count, file)
}

fn check_nonempty(
    kept: Vec<u16>,
    sel: &LodSelection,
    lod_count: u16,
    file: &str,
) -> Result<Vec<u16>> {
    if kept.is_empty() && lod_count > 0 {
        return Err(Error::Invalid {
            what: format!("{file}: LOD selection {sel:?}"),
            reason: format!("names no LOD of the file's {lod_count}"),
        });
    }
    Ok(kept)
}

/// Keep the entries of LOD mapping `m` at the kept LOD positions and the lists they use
/// (`LODMapping::discardLODs`).
fn discard_lods(m: &mut LodMapping, kept: &[u16]) {
    keep_positions(&mut m.lods, |p| kept.contains(&(p as u16)));
    for idx in (0..m.indices.len()).rev() {
        if !m.lods.iter().any(|&l| usize::from(l) == idx) {
            m.indices.remove(idx);
            for l in &mut m.lods {
                if usize::from(*l) > idx {
                    *l -= 1;
                }
            }
        }
    }
}

fn distinct(m: &LodMapping) -> BTreeSet<u16> {
    m.indices.iter().flatten().copied().collect()
}

fn renumber(m: &mut LodMapping, r: &Remap, file: &str, field: &str, what: &str) -> Result<()> {
    for list in &mut m.indices {
        for i in list.iter_mut() {
            *i = r.get(*i, file, field, what)?;
        }
    }
    Ok(())
}

/// A behaviour LOD list: the counts of the kept LODs.
fn keep_lod_counts(lods: &mut Vec<u16>, kept: &[u16]) {
    keep_positions(lods, |p| kept.contains(&(p as u16)));
}

fn prefix<T>(v: &mut Vec<T>, n: usize, file: &str, field: &str) -> Result<()> {
    if n > v.len() {
        return Err(Error::format(
            file,
            field,
            format!("the LOD row count {n} exceeds the {} rows", v.len()),
        ));
    }
    v.truncate(n);
    Ok(())
}

/// Apply `sel` to a freshly decoded `dna` (see the module docs).
pub(crate) fn apply(dna: &mut Dna, sel: &LodSelection) -> Result<()> {
    let file = dna.file.clone();
    let f = file.as_str();
    let lod_count = dna.descriptor.lod_count;
    let kept = kept_lods(sel, lod_count, f)?;
    dna.descriptor.db_max_lod = dna
        .descriptor
        .db_max_lod
        .wrapping_add(kept.first().copied().unwrap_or(0));
    dna.descriptor.lod_count = kept.len() as u16;
    if kept.len() == usize::from(lod_count) {
        return Ok(());
    }
    let d = &mut dna.definition;
    let lod0: BTreeSet<u16> = d.joint_indices_for_lod(0).iter().copied().collect();
    let joint_count = d.joint_names.len();
    let not_in_lod0 = (0..joint_count as u16).filter(|j| !lod0.contains(j));
    discard_lods(&mut d.lod_meshes, &kept);
    discard_lods(&mut d.lod_joints, &kept);
    discard_lods(&mut d.lod_blend_shape_channels, &kept);
    discard_lods(&mut d.lod_animated_maps, &kept);

    let meshes = Remap::new(d.mesh_names.len(), distinct(&d.lod_meshes));
    renumber(
        &mut d.lod_meshes,
        &meshes,
        f,
        "definition.lodMeshMapping",
        "mesh",
    )?;
    keep_positions(&mut d.mesh_names, |i| meshes.passes(i as u16));
    d.mesh_blend_shape_channels
        .retain(|m| meshes.passes(m.mesh));
    for m in &mut d.mesh_blend_shape_channels {
        m.mesh = meshes.get(m.mesh, f, "definition.meshBlendShapeChannelMapping", "mesh")?;
    }

    let mut allowed = distinct(&d.lod_joints);
    allowed.extend(not_in_lod0);
    let mut joints = Remap::new(joint_count, allowed);
    renumber(
        &mut d.lod_joints,
        &joints,
        f,
        "definition.lodJointMapping",
        "joint",
    )?;
    keep_positions(&mut d.joint_names, |i| joints.passes(i as u16));
    keep_positions(&mut d.joint_parents, |i| joints.passes(i as u16));
    // A parent that is not kept reads as 0 (and is then renumbered to 0 everywhere), as
    // OpenRigLogic's `remappedIndices[parent]` inserts it.
    for p in &mut d.joint_parents {
        *p = *joints.map.entry(*p).or_insert(0);
    }
    let root = d
        .joint_parents
        .iter()
        .enumerate()
        .find(|&(j, &p)| usize::from(p) == j)
        .map_or(0, |(j, _)| j as u16);
    keep_positions(&mut d.neutral_joint_translations, |i| {
        joints.passes(i as u16)
    });
    keep_positions(&mut d.neutral_joint_rotations, |i| joints.passes(i as u16));

    let channels = Remap::new(
        d.blend_shape_channel_names.len(),
        distinct(&d.lod_blend_shape_channels),
    );
    renumber(
        &mut d.lod_blend_shape_channels,
        &channels,
        f,
        "definition.lodBlendShapeMapping",
        "blend-shape channel",
    )?;
    keep_positions(&mut d.blend_shape_channel_names, |i| {
        channels.passes(i as u16)
    });
    d.mesh_blend_shape_channels
        .retain(|m| channels.passes(m.channel));
    for m in &mut d.mesh_blend_shape_channels {
        m.channel = channels.get(
            m.channel,
            f,
            "definition.meshBlendShapeChannelMapping",
            "blend-shape channel",
        )?;
    }
    let maps = Remap::new(d.animated_map_names.len(), distinct(&d.lod_animated_maps));
    renumber(
        &mut d.lod_animated_maps,
        &maps,
        f,
        "definition.lodAnimatedMapMapping",
        "animated map",
    )?;
    keep_positions(&mut d.animated_map_names, |i| maps.passes(i as u16));

    filter_behavior(dna, &kept, &joints)?;
    filter_geometry(dna, &meshes, &joints, &channels, root);
    super::lod_ext::filter_extensions(
        dna,
        &kept,
        &meshes_kept(&meshes),
        &joints.passing,
        &joints.map,
    )?;
    dna.lod_filter = Some(LodFilter {
        lods: kept,
        meshes: meshes.kept(),
        joints: joints.kept(),
        blend_shape_channels: channels.kept(),
        animated_maps: maps.kept(),
    });
    Ok(())
}

fn meshes_kept(r: &Remap) -> BTreeSet<u16> {
    r.passing.clone()
}

fn filter_behavior(dna: &mut Dna, kept: &[u16], joints: &Remap) -> Result<()> {
    let f = dna.file.as_str();
    let b = &mut dna.behavior;
    for (g, jg) in b.joints.groups.iter_mut().enumerate() {
        let field = |leaf: &str| format!("behavior.joints.jointGroups[{g}].{leaf}");
        keep_lod_counts(&mut jg.lods, kept);
        let rows = usize::from(jg.lods.first().copied().unwrap_or(0));
        if rows == 0 {
            jg.input_indices.clear();
        }
        prefix(&mut jg.output_indices, rows, f, &field("outputIndices"))?;
        for a in &mut jg.output_indices {
            let (j, rel) = (*a / 9, *a % 9);
            let nj = joints.get(j, f, &field("outputIndices"), "joint")?;
            *a = nj.wrapping_mul(9).wrapping_add(rel);
        }
        let n = rows * jg.input_indices.len();
        prefix(&mut jg.values, n, f, &field("values"))?;
        jg.joint_indices.retain(|&j| joints.passes(j));
        for j in &mut jg.joint_indices {
            *j = joints.get(*j, f, &field("jointIndices"), "joint")?;
        }
    }
    b.joints.row_count = (joints.passing.len() as u16).wrapping_mul(9);
    let bs = &mut b.blend_shapes;
    keep_lod_counts(&mut bs.lods, kept);
    let n = usize::from(bs.lods.first().copied().unwrap_or(0));
    prefix(
        &mut bs.input_indices,
        n,
        f,
        "behavior.blendShapeChannels.inputIndices",
    )?;
    prefix(
        &mut bs.output_indices,
        n,
        f,
        "behavior.blendShapeChannels.outputIndices",
    )?;
    let am = &mut b.animated_maps;
    keep_lod_counts(&mut am.lods, kept);
    let n = usize::from(am.lods.first().copied().unwrap_or(0));
    let c = &mut am.conditionals;
    let field = "behavior.animatedMaps.conditionals";
    prefix(&mut c.input_indices, n, f, &format!("{field}.inputIndices"))?;
    prefix(
        &mut c.output_indices,
        n,
        f,
        &format!("{field}.outputIndices"),
    )?;
    prefix(&mut c.from_values, n, f, &format!("{field}.fromValues"))?;
    prefix(&mut c.to_values, n, f, &format!("{field}.toValues"))?;
    prefix(&mut c.slope_values, n, f, &format!("{field}.slopeValues"))?;
    prefix(&mut c.cut_values, n, f, &format!("{field}.cutValues"))?;
    Ok(())
}

fn filter_geometry(dna: &mut Dna, meshes: &Remap, joints: &Remap, channels: &Remap, root: u16) {
    keep_positions(&mut dna.meshes, |i| meshes.passes(i as u16));
    for m in &mut dna.meshes {
        m.blend_shape_targets.retain(|t| channels.passes(t.channel));
        m.skin = filter_skin(&m.skin, joints, root);
    }
}

/// Drop the weights of joints not kept (`JointFilter::apply(RawVertexSkinWeights)`), in f32 as
/// OpenRigLogic computes them.
fn filter_skin(s: &SkinWeights, joints: &Remap, root: u16) -> SkinWeights {
    let mut out = SkinWeights::default();
    let (mut w, mut j) = (Vec::new(), Vec::new());
    for v in 0..s.len() {
        let (ws, js) = s.vertex(v);
        w.clear();
        j.clear();
        let mut dropped = 0.0f32;
        for (&wt, &jt) in ws.iter().zip(js) {
            if joints.passes(jt) {
                w.push(wt);
                j.push(jt);
            } else {
                dropped += wt;
            }
        }
        if !joints.passing.is_empty() {
            if j.is_empty() {
                w.push(1.0);
                j.push(root);
            } else {
                let ratio = 1.0f32 / (1.0f32 - dropped);
                for (wt, jt) in w.iter_mut().zip(j.iter_mut()) {
                    *jt = joints.map.get(jt).copied().unwrap_or(*jt);
                    *wt *= ratio;
                }
            }
        }
        out.push(&w, &j);
    }
    out
}
