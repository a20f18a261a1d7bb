//! The `expression_space`, `arkit_to_rig` and `pose_anchors` blocks checked against the rig.

use std::path::Path;

use mien_core::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use mien_core::gnm::arkit::{ArkitGnmTable, ArkitGnmTerm};

use super::{ArkitToRigDef, PoseAnchorsDef, SpaceDef};
use crate::asset::{Asset, Model};
use crate::error::{Error, Result};
use crate::space::ExpressionSpace;

/// A resolved `expression_space` block.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleSpace {
    /// The space.
    pub kind: ExpressionSpace,
    /// Its width.
    pub dim: usize,
    /// One name per slot (may be empty).
    pub names: Vec<String>,
    /// Named runs `(name, start, count)`.
    pub segments: Vec<(String, usize, usize)>,
    /// ARKit channel → slot, when the block gives a map.
    pub arkit_map: Option<Vec<i64>>,
}

/// Check `s` against `asset`: the kind one the bundle may declare (seed 000: `arkit52`, `gnm`,
/// `gnm68`) and the rig takes, the width the rig's, names one per slot, segments inside and
/// disjoint, the ARKit map 52 slots in range. Returns the space and, with an ARKit map, the
/// asset driven by it.
pub(crate) fn resolve(
    s: &SpaceDef,
    asset: &Asset,
    problems: &mut Vec<String>,
) -> Option<(BundleSpace, Option<Asset>)> {
    let before = problems.len();
    let kind = match s.kind.as_str() {
        "arkit52" => ExpressionSpace::Arkit52,
        "gnm" => ExpressionSpace::Gnm,
        "gnm68" => ExpressionSpace::Gnm68,
        other => {
            problems.push(format!(
                "/expression_space/kind: `{other}` is not arkit52, gnm or gnm68"
            ));
            return None;
        }
    };
    // The rig must take the space (an arkit52 space on a pack without an ARKit table is refused
    // unless the block maps ARKit itself).
    let width = match (kind, &s.arkit_map) {
        (ExpressionSpace::Arkit52, _) if matches!(asset.model(), Model::Head { .. }) => {
            problems.push(
                "/expression_space/kind: arkit52 on a gnm rig: declare the rig's own space (gnm or gnm68) with an arkit_map; ARKit weights are not head_ext coefficients".into(),
            );
            None
        }
        _ => match asset.space_len(kind) {
            Ok(n) => Some(n),
            Err(e) => {
                problems.push(format!("/expression_space/kind: {}", e.chain_text()));
                None
            }
        },
    };
    if let Some(w) = width
        && s.dim != w
    {
        problems.push(format!(
            "/expression_space/dim: {} but the rig's {} vector has {w} slots",
            s.dim,
            kind.name()
        ));
    }
    if !s.names.is_empty() && s.names.len() != s.dim {
        problems.push(format!(
            "/expression_space/names: {} names for {} slots",
            s.names.len(),
            s.dim
        ));
    }
    let mut taken = vec![None::<usize>; s.dim];
    let mut segments = Vec::new();
    for (i, g) in s.segments.iter().enumerate() {
        let f = format!("/expression_space/segments/{i}");
        if g.count == 0 || g.start.checked_add(g.count).is_none_or(|e| e > s.dim) {
            problems.push(format!(
                "{f}: `{}` [{}, +{}) is not a non-empty run of the {} slots",
                g.name, g.start, g.count, s.dim
            ));
            continue;
        }
        if let Some(j) = (g.start..g.start + g.count).find_map(|k| taken[k]) {
            problems.push(format!(
                "{f}: `{}` overlaps segment {j} (`{}`)",
                g.name, s.segments[j].name
            ));
            continue;
        }
        for t in &mut taken[g.start..g.start + g.count] {
            *t = Some(i);
        }
        segments.push((g.name.clone(), g.start, g.count));
    }
    let mut with = None;
    if let Some(m) = &s.arkit_map {
        if kind == ExpressionSpace::Arkit52 {
            problems.push("/expression_space/arkit_map: an arkit52 space takes ARKit directly; the map is for gnm and gnm68 spaces".into());
        } else if m.len() != ARKIT_COUNT {
            problems.push(format!(
                "/expression_space/arkit_map: {} entries; one per ARKit-52 channel (52)",
                m.len()
            ));
        } else if let Some(i) = m.iter().position(|&x| x < -1 || x >= s.dim as i64) {
            problems.push(format!(
                "/expression_space/arkit_map/{i}: {} (`{}`) is neither −1 nor a slot below {}",
                m[i], ARKIT_52[i], s.dim
            ));
        } else if let Model::Head { pack, .. } = asset.model() {
            // The map as the pack's ARKit table (gain 1 into the slot's region), so the ARKit
            // driver uses it.
            let layout = &pack.header.head_ext;
            let slices = layout.slices();
            let mut table = ArkitGnmTable::new();
            for (c, &slot) in m.iter().enumerate() {
                if slot < 0 {
                    continue;
                }
                let slot = slot as usize;
                let reduced = kind == ExpressionSpace::Gnm68;
                // A gnm68 slot addresses the reduced view: region r's first coefficients.
                let hit = if reduced {
                    reduced_region(layout, slot)
                } else {
                    slices
                        .iter()
                        .find(|(_, r)| r.contains(&slot))
                        .map(|(n, r)| (n.clone(), slot - r.start))
                };
                match hit {
                    Some((region, index)) if region != "gaze" => {
                        table.entry(ARKIT_52[c].to_owned()).or_default().push(ArkitGnmTerm {
                            region,
                            index,
                            gain: 1.0,
                        });
                    }
                    _ => problems.push(format!(
                        "/expression_space/arkit_map/{c}: slot {slot} (`{}`) is a gaze angle or outside the regions; gaze comes from the eyeLook channels",
                        ARKIT_52[c]
                    )),
                }
            }
            let mut p = (**pack).clone();
            p.header.arkit = Some(table);
            match Asset::from_pack(p, asset.source()) {
                Ok(a) => with = Some(a),
                Err(e) => problems.push(format!("/expression_space/arkit_map: {}", e.chain_text())),
            }
        }
    }
    if problems.len() > before {
        return None;
    }
    Some((
        BundleSpace {
            kind,
            dim: s.dim,
            names: s.names.clone(),
            segments,
            arkit_map: s.arkit_map.clone(),
        },
        with,
    ))
}

/// Slot `slot` of a reduced (gnm68) view as `(region, index)`.
fn reduced_region(
    layout: &mien_core::gnm::layout::HeadExtLayout,
    slot: usize,
) -> Option<(String, usize)> {
    let mut at = 0;
    for (name, n) in layout.reduced.as_ref()? {
        if slot < at + n {
            return Some((name.clone(), slot - at));
        }
        at += n;
    }
    None
}

/// `asset` with ARKit-52 mapped onto its DNA raw controls about `a.rest`, clamped to `a.range`
/// (seed 000 `arkitToRig`).
pub(crate) fn arkit_to_rig(a: &ArkitToRigDef, asset: &Asset) -> Result<Asset> {
    let Some(rl) = asset.character().rig_logic.as_ref() else {
        return Err(Error::invalid(
            "rig",
            "arkit_to_rig maps ARKit onto an orl rig's raw controls; this rig has none",
        ));
    };
    let mut rl = (**rl).clone();
    if let Some(range) = &a.range {
        let n = rl.arkit.range.len();
        if range.len() != n {
            return Err(Error::invalid(
                "range",
                format!("{} pairs for {n} raw controls", range.len()),
            ));
        }
        for (i, r) in range.iter().enumerate() {
            if !(r[0].is_finite() && r[1].is_finite() && r[0] <= r[1]) {
                return Err(Error::invalid(
                    format!("range/{i}"),
                    format!("[{}, {}] is not a finite interval", r[0], r[1]),
                ));
            }
        }
        rl.arkit.range.clone_from(range);
    }
    rl.arkit
        .set_rest(&a.rest)
        .map_err(|e| Error::invalid("rest", e.to_string()))?;
    let mut out = asset.clone();
    out.set_rig_logic(std::sync::Arc::new(rl));
    Ok(out)
}

/// A bundle's per-pose head anchors (seed 000 `poseAnchors`): trained control vectors `(P, C)`
/// and the rigid transform fitted at each `(P,)`. Blended per frame over the
/// [`POSE_ANCHOR_NEIGHBOURS`] nearest poses (L2 over the controls) with weights ∝ 1 / (d + 10⁻⁶),
/// rotations as sign-aligned normalised quaternion sums, translations linearly; applied to the
/// whole rig (every joint world of a linear head, every node world of a DNA character). Off by
/// default: as seed 000 measured, the nearest poses change on a blink, and the head steps with it.
#[derive(Clone, Debug, PartialEq)]
pub struct PoseAnchors {
    /// Control vectors `(P, C)`.
    pub poses: Vec<Vec<f32>>,
    /// Rotations `(P,)`.
    pub rotations: Vec<glam::DQuat>,
    /// Translations `(P,)`, metres.
    pub translations: Vec<glam::DVec3>,
}

/// Largest anchor translation component, metres.
pub const MAX_ANCHOR_TRANSLATION_M: f64 = 10.0;

/// Poses blended per frame.
pub const POSE_ANCHOR_NEIGHBOURS: usize = 4;

impl PoseAnchors {
    /// The blended anchor for `controls` `(C,)`.
    pub fn blend(&self, controls: &[f32]) -> glam::DMat4 {
        let mut best = [(f64::INFINITY, usize::MAX); POSE_ANCHOR_NEIGHBOURS];
        for (p, row) in self.poses.iter().enumerate() {
            let d = row
                .iter()
                .zip(controls)
                .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
                .sum::<f64>()
                .sqrt();
            if d < best[POSE_ANCHOR_NEIGHBOURS - 1].0 {
                best[POSE_ANCHOR_NEIGHBOURS - 1] = (d, p);
                best.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
        }
        let (mut q, mut t, mut wsum) = (glam::DVec4::ZERO, glam::DVec3::ZERO, 0.0);
        let q0 = best[0].1;
        for (d, p) in best {
            if p == usize::MAX {
                continue;
            }
            let w = 1.0 / (d + 1e-6);
            let mut r = glam::DVec4::from(self.rotations[p]);
            if q0 != usize::MAX && r.dot(glam::DVec4::from(self.rotations[q0])) < 0.0 {
                r = -r;
            }
            q += w * r;
            t += w * self.translations[p];
            wsum += w;
        }
        if wsum == 0.0 {
            return glam::DMat4::IDENTITY;
        }
        let rot = glam::DQuat::from_vec4(q).normalize();
        glam::DMat4::from_rotation_translation(rot, t / wsum)
    }
}

/// Read and check a pose-anchor file (`mien-pose-anchors` JSON: `poses` `(P, C)`, `anchors`
/// `(P, 12)` row-major 3×4 rigid transforms, metres) against `controls` controls.
pub(crate) fn pose_anchors(
    p: &PoseAnchorsDef,
    dir: &Path,
    controls: usize,
) -> std::result::Result<(PoseAnchors, u64), String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        format: String,
        poses: Vec<Vec<f32>>,
        anchors: Vec<[f64; 12]>,
    }
    let path = dir.join(&p.file);
    let name = path.display().to_string();
    let bytes = mien_core::io::read::read_file_capped(&path, 1 << 26).map_err(|e| e.to_string())?;
    let f: File = serde_json::from_slice(&bytes).map_err(|e| format!("{name}: {e}"))?;
    if f.format != "mien-pose-anchors" {
        return Err(format!(
            "{name}: format `{}` is not mien-pose-anchors",
            f.format
        ));
    }
    if f.poses.is_empty() || f.poses.len() != f.anchors.len() {
        return Err(format!(
            "{name}: {} poses and {} anchors (one anchor per pose, at least one)",
            f.poses.len(),
            f.anchors.len()
        ));
    }
    if let Some(i) = f.poses.iter().position(|r| r.len() != controls) {
        return Err(format!(
            "{name}: poses/{i} has {} controls; the rig has {controls}",
            f.poses[i].len()
        ));
    }
    if let Some(i) = f
        .poses
        .iter()
        .position(|r| !r.iter().all(|x| x.is_finite()))
    {
        return Err(format!("{name}: poses/{i} is not finite"));
    }
    let (mut rotations, mut translations) = (Vec::new(), Vec::new());
    for (i, a) in f.anchors.iter().enumerate() {
        if !a.iter().all(|x| x.is_finite()) {
            return Err(format!("{name}: anchors/{i} is not finite"));
        }
        let m =
            glam::DMat3::from_cols_array(&[a[0], a[4], a[8], a[1], a[5], a[9], a[2], a[6], a[10]]);
        // A rotation: orthonormal within 1e-4, determinant +1.
        let e = (m.transpose() * m - glam::DMat3::IDENTITY)
            .to_cols_array()
            .iter()
            .fold(0f64, |x, y| x.max(y.abs()));
        if e > 1e-4 || m.determinant() < 0.0 {
            return Err(format!(
                "{name}: anchors/{i} is not a rigid transform (its 3×3 part is off a rotation by {e:.1e}, determinant {:.4})",
                m.determinant()
            ));
        }
        let t = glam::DVec3::new(a[3], a[7], a[11]);
        if t.abs().max_element() > MAX_ANCHOR_TRANSLATION_M {
            return Err(format!(
                "{name}: anchors/{i} moves the head {t:?} m, beyond ±{MAX_ANCHOR_TRANSLATION_M} m (anchors correct where the head is by millimetres to centimetres; check the units: metres)"
            ));
        }
        rotations.push(glam::DQuat::from_mat3(&m).normalize());
        translations.push(glam::DVec3::new(a[3], a[7], a[11]));
    }
    Ok((
        PoseAnchors {
            poses: f.poses,
            rotations,
            translations,
        },
        bytes.len() as u64,
    ))
}
