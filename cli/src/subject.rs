//! The report sections that describe what a run posed: a rig (meshes, morph targets, skins — the
//! glTF path) or a linear head (an `.aosrig` pack driven through its ARKit-52 control character),
//! and what the runtime's per-frame rules counted.

use mien_core::gnm::GnmPack;
use mien_core::gnm::controls::GnmDriver;
use mien_runtime::{Asset, InstanceTotals, Model};
use serde::Serialize;

use crate::load;
use crate::report::{DroppedTarget, Report};

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

/// Fill the report's character and memory sections that depend on the character (before the
/// frames; [`fill_counts`] adds what the frames counted). `head`: a linear head's ARKit driver.
pub fn fill_report(report: &mut Report, asset: &Asset, head: Option<&GnmDriver>) {
    let ch = asset.character();
    let c = &mut report.character;
    c.source = ch.source.clone();
    c.clips = (0..ch.clips.len())
        .map(|i| load::clip_label(ch, i))
        .collect();
    match asset.model() {
        Model::Rig(rig) => {
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
            c.vrm = ch.vrm.as_ref().map(|v| {
                format!(
                    "VRM {} (specVersion {}): {} expressions, {} humanoid bones, lookAt of type {}",
                    match v.version {
                        mien_core::vrm::VrmVersion::V0 => "0.x",
                        mien_core::vrm::VrmVersion::V1 => "1.0",
                    },
                    v.spec_version,
                    v.expressions.len(),
                    v.humanoid.len(),
                    match v.look_at.kind {
                        mien_core::vrm::LookAtKind::Bone => "bone",
                        mien_core::vrm::LookAtKind::Expression => "expression",
                    }
                )
            });
        }
        Model::Head {
            pack: p,
            file_bytes,
            ..
        } => {
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
                arkit_terms: head.map_or(0, |d| d.map.term_count()),
                arkit_dropped: head.map_or_else(Vec::new, |d| d.map.dropped.clone()),
                clamp: head.map(|d| d.map.clamp),
                clamped: 0,
            });
            let blobs = p.blob_bytes();
            report.memory.linear_head = Some(PackMemoryReport {
                file_bytes: *file_bytes,
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

/// After the last frame: what the per-frame rules counted on instance 0 — the targets the active
/// limit dropped and the weights clamped (rig), the coefficients the map's clamp changed (linear
/// head).
pub fn fill_counts(report: &mut Report, asset: &Asset, totals: &InstanceTotals) {
    report.morphs.clamped = totals.clamped;
    report.morphs.non_finite = totals.non_finite;
    report.morphs.dropped = totals.dropped;
    report.morphs.peak_nonzero = totals.peak_nonzero;
    match asset.model() {
        Model::Rig(_) => {
            report.morphs.dropped_targets = totals
                .dropped_targets
                .iter()
                .map(|(&(inst, target), &(first, n))| {
                    let (mesh, target) = asset.target_label(inst, target).unwrap_or_else(|| {
                        (format!("mesh instance {inst}"), format!("target_{target}"))
                    });
                    DroppedTarget {
                        mesh,
                        target,
                        first_frame: first as u32,
                        frames: n as u32,
                    }
                })
                .collect();
        }
        Model::Head { .. } => {
            if let Some(l) = &mut report.character.linear_head {
                l.clamped = totals.head_clamped;
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
