//! What a run poses: a rig (meshes, morph targets, skins — the glTF path) or a linear head (an
//! `.aosrig` pack driven through its ARKit-52 control character). Both turn the character's pose
//! of a frame into backend inputs and fill their part of the report.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use glam::Mat4;
use mien_core::gnm::GnmPack;
use mien_core::gnm::controls::GnmDriver;
use mien_core::gnm::forward::joint_world;
use mien_core::rig::{Character, Pose, RigControls, RigData};
use serde::Serialize;

use crate::args::BackendChoice;
use crate::engine::{self, Engine};
use crate::load;
use crate::report::{DroppedTarget, Report};

/// A rig subject: the flattened glTF rig and its per-frame controls.
pub struct RigSubject {
    /// The flattened rig.
    pub rig: RigData,
    controls: RigControls,
    /// `(instance, target)` → `(first frame, frames)` of targets the active limit dropped.
    dropped: BTreeMap<(u32, u32), (u32, u32)>,
}

/// A linear-head subject: the pack, its ARKit → head_ext driver (absent when the pack has no
/// table and nothing drives it), and the joint world matrices it is skinned with (its rest pose:
/// the control character has no bones).
pub struct HeadSubject {
    /// The pack.
    pub pack: Arc<GnmPack>,
    driver: Option<GnmDriver>,
    rest_head_ext: Vec<f32>,
    joints: Vec<Mat4>,
    /// Coefficients the map's clamp changed, over all frames.
    pub clamped: u64,
    file_bytes: u64,
}

/// What a run poses.
pub enum Subject {
    /// Meshes, morph targets and skins.
    Rig(RigSubject),
    /// A linear head model.
    Head(HeadSubject),
}

/// The linear head in `report.json`'s `character`.
#[derive(Debug, Default, Serialize)]
pub struct LinearHeadReport {
    /// Vertices V.
    pub vertices: usize,
    /// Expression coefficients E.
    pub coefficients: usize,
    /// head_ext length: E + 4 gaze angles.
    pub head_ext: usize,
    /// Regions and their coefficient counts, in slot order.
    pub regions: Vec<(String, usize)>,
    /// Skeleton joints.
    pub joints: usize,
    /// Whether a baked ARKit map drives the coefficients.
    pub arkit_map: bool,
    /// ARKit → coefficient terms resolved.
    pub arkit_terms: usize,
    /// Terms the map dropped at build time, with reasons.
    pub arkit_dropped: Vec<String>,
    /// The coefficient clamp, ±.
    pub clamp: Option<f32>,
    /// Coefficients the clamp changed, summed over frames.
    pub clamped: u64,
}

/// The pack in `report.json`'s `memory`.
#[derive(Debug, Default, Serialize)]
pub struct PackMemoryReport {
    /// Size of the `.aosrig` file, bytes.
    pub file_bytes: u64,
    /// The fp16 expression basis `(V,E,3)`, bytes: what a pose must read.
    pub basis_bytes: u64,
    /// Host bytes of the parsed pack (every array).
    pub host_bytes: u64,
    /// Each blob and its bytes, in file order.
    pub blobs: Vec<(String, u64)>,
}

impl Subject {
    /// The subject of a loaded character: the pack when there is one, else the flattened rig.
    ///
    /// # Errors
    /// A character that cannot be flattened; a linear head driven by ARKit input (`driven`)
    /// without an ARKit map in its pack.
    pub fn new(loaded: &load::Loaded, driven: bool) -> Result<Self> {
        let Some(pack) = &loaded.gnm else {
            let rig = RigData::from_character(&loaded.character)
                .context("cannot flatten the character for posing")?;
            return Ok(Subject::Rig(RigSubject {
                rig,
                controls: RigControls::default(),
                dropped: BTreeMap::new(),
            }));
        };
        let file = loaded.character.source.as_str();
        let driver = if driven || pack.header.arkit.is_some() {
            Some(GnmDriver::new(pack, None, None, file)?.with_targets(loaded.gnm_targets.clone()))
        } else {
            None
        };
        let (mut joints, mut skipped) = (Vec::new(), Vec::new());
        joint_world(pack, &[], &mut joints, &mut skipped);
        Ok(Subject::Head(HeadSubject {
            pack: Arc::clone(pack),
            driver,
            rest_head_ext: vec![0.0; pack.header.head_ext.dim()],
            joints,
            clamped: 0,
            file_bytes: std::fs::metadata(file).map_or(0, |m| m.len()),
        }))
    }

    /// Vertices posed per frame.
    pub fn vertex_count(&self) -> u32 {
        match self {
            Subject::Rig(r) => r.rig.vertex_count() as u32,
            Subject::Head(h) => h.pack.vertex_count() as u32,
        }
    }

    /// Triangles `(F,3)` into the posed vertices.
    pub fn triangles(&self) -> &[[u32; 3]] {
        match self {
            Subject::Rig(r) => &r.rig.triangles,
            Subject::Head(h) => &h.pack.faces,
        }
    }

    /// Whether any vertex carries a colour (a linear head has none).
    pub fn has_colors(&self, ch: &Character) -> bool {
        match self {
            Subject::Rig(_) => ch
                .meshes
                .iter()
                .flat_map(|m| &m.primitives)
                .any(|p| !p.colors.is_empty()),
            Subject::Head(_) => false,
        }
    }

    /// Build the engine for `choice`; returns it and why it was chosen.
    ///
    /// # Errors
    /// As [`engine::choose`] / [`engine::choose_head`].
    pub fn engine(&self, choice: BackendChoice) -> Result<(Box<dyn Engine>, String)> {
        match self {
            Subject::Rig(r) => engine::choose(choice, &r.rig),
            Subject::Head(h) => engine::choose_head(choice, &h.pack),
        }
    }

    /// Turn frame `frame`'s pose (`world`: its node world matrices) into the engine's inputs and
    /// count what the rules changed into `report`.
    ///
    /// # Errors
    /// The engine refusing its inputs.
    pub fn set_frame(
        &mut self,
        frame: u32,
        pose: &Pose,
        world: &[Mat4],
        engine: &mut dyn Engine,
        report: &mut Report,
    ) -> Result<()> {
        match self {
            Subject::Rig(r) => {
                r.rig.controls_from_pose(pose, world, &mut r.controls);
                for inst in &r.rig.instances {
                    let w = &r.controls.weights[inst.weight_base as usize
                        ..(inst.weight_base + inst.target_count) as usize];
                    report.morphs.peak_nonzero = report
                        .morphs
                        .peak_nonzero
                        .max(w.iter().filter(|x| **x != 0.0).count() as u32);
                }
                let stats = engine.set_controls(&r.controls)?;
                report.morphs.clamped += u64::from(stats.clamped);
                report.morphs.non_finite += u64::from(stats.non_finite);
                report.morphs.dropped += stats.dropped.len() as u64;
                for &pair in &stats.dropped {
                    r.dropped
                        .entry(pair)
                        .and_modify(|e| e.1 += 1)
                        .or_insert((frame, 1));
                }
            }
            Subject::Head(h) => {
                let head_ext = match &mut h.driver {
                    Some(d) => d.head_ext_counting(pose, &mut h.clamped),
                    None => &h.rest_head_ext,
                };
                engine.set_head_ext(head_ext, &h.joints)?;
            }
        }
        Ok(())
    }

    /// Fill the report's character and memory sections that depend on the subject (before the
    /// frames; [`Subject::fill_counts`] adds what the frames counted).
    pub fn fill_report(&self, report: &mut Report, ch: &Character) {
        let c = &mut report.character;
        c.source = ch.source.clone();
        c.clips = (0..ch.clips.len())
            .map(|i| load::clip_label(ch, i))
            .collect();
        match self {
            Subject::Rig(r) => {
                let rig = &r.rig;
                c.mesh_instances = rig.instances.len();
                c.vertices = rig.vertex_count();
                c.triangles = rig.triangles.len();
                c.morph_targets = rig.weight_count as usize;
                c.morph_entries = rig.morph_target.len();
                c.skin_joints = ch.skins.iter().map(|s| s.joints.len()).collect();
                c.required_extensions = ch.required_extensions.clone();
                c.notes = ch
                    .notes
                    .iter()
                    .map(|n| format!("{}: {}", n.field, n.message))
                    .collect();
            }
            Subject::Head(h) => {
                let p = &h.pack;
                let hd = &p.header;
                c.mesh_instances = 1;
                c.vertices = p.vertex_count();
                c.triangles = p.faces.len();
                c.skin_joints = vec![hd.joints.len()];
                c.linear_head = Some(LinearHeadReport {
                    vertices: p.vertex_count(),
                    coefficients: p.coeff_count(),
                    head_ext: hd.head_ext.dim(),
                    regions: hd.head_ext.regions.clone(),
                    joints: hd.joints.len(),
                    arkit_map: hd.arkit.is_some(),
                    arkit_terms: h.driver.as_ref().map_or(0, |d| d.map.term_count()),
                    arkit_dropped: h
                        .driver
                        .as_ref()
                        .map_or_else(Vec::new, |d| d.map.dropped.clone()),
                    clamp: h.driver.as_ref().map(|d| d.map.clamp),
                    clamped: h.clamped,
                });
                let blobs = p.blob_bytes();
                report.memory.linear_head = Some(PackMemoryReport {
                    file_bytes: h.file_bytes,
                    basis_bytes: blobs
                        .iter()
                        .find(|(n, _)| n == "basis")
                        .map_or(0, |(_, b)| *b),
                    host_bytes: host_bytes(p),
                    blobs,
                });
            }
        }
    }
}

impl Subject {
    /// After the last frame: what the per-frame rules counted — the targets the active limit
    /// dropped (rig), the coefficients the map's clamp changed (linear head).
    pub fn fill_counts(&self, report: &mut Report, ch: &Character) {
        match self {
            Subject::Rig(r) => {
                let rig = &r.rig;
                report.morphs.dropped_targets = r
                    .dropped
                    .iter()
                    .map(|(&(inst, target), &(first, n))| {
                        let inst = &rig.instances[inst as usize];
                        let mesh = &ch.meshes[inst.mesh.index()];
                        DroppedTarget {
                            mesh: load::node_label(ch, inst.node.index()),
                            target: mesh
                                .target_names
                                .get(target as usize)
                                .cloned()
                                .unwrap_or_else(|| format!("target_{target}")),
                            first_frame: first,
                            frames: n,
                        }
                    })
                    .collect();
            }
            Subject::Head(h) => {
                if let Some(l) = &mut report.character.linear_head {
                    l.clamped = h.clamped;
                }
            }
        }
    }
}

/// Bytes of a parsed pack's arrays in host memory.
fn host_bytes(p: &GnmPack) -> u64 {
    let n = |len: usize, size: usize| (len * size) as u64;
    n(p.neutral.len(), 12)
        + n(p.basis.len(), 4)
        + n(p.basis_scale.len(), 4)
        + n(p.eye_weights.len(), 4)
        + n(p.faces.len(), 12)
        + p.quads.as_ref().map_or(0, |q| n(q.len(), 16))
        + p.uv.as_ref().map_or(0, |u| n(u.len(), 8))
        + p.seam.as_ref().map_or(0, |s| n(s.len(), 12))
        + n(p.skin_index.len(), 8)
        + n(p.skin_weight.len(), 16)
        + n(p.rest_world.len(), 64)
}
