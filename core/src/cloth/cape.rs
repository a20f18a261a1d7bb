//! A cape generated on a humanoid's shoulders (issue 27: no cape exists in the shared data, so
//! mien makes one for any character whose bones read as humanoid roles): a sheet of
//! `columns × rows` vertices hanging straight down behind the back from the upper arms' height,
//! `width` across at the top (default: the distance between the upper arms × 1.15), flaring by
//! `flare` to the hem, `length` long (default: 55 % of the way from the shoulders to the lowest
//! vertex — about the knees), set behind the deepest vertex of the body within its width and
//! height plus `clearance`. It is skinned to the chest (`upperChest`, else `chest`, else `spine`)
//! at the top, blending linearly to the hips at the hem, so its skinned places — what the cloth's
//! pins follow and its maximum distances are measured from — move with the torso.
//!
//! The default 15 × 19 grid is 285 vertices: the size of seed 003's cape.

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rig::{Character, MeshId, NodeId, SkinId};

/// Largest cape width, length or clearance, metres.
pub const MAX_CAPE_M: f64 = 10.0;

/// Most vertices along one side of a generated cape.
pub const MAX_CAPE_SIDE: u32 = 128;

/// What the cape looks like (module doc); every field optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapeDef {
    /// Width across the shoulders, metres (> 0; default the upper arms' distance × 1.15).
    #[serde(default)]
    pub width: Option<f64>,
    /// Length from the shoulders to the hem, metres (> 0; default 55 % of the way down to the
    /// lowest vertex).
    #[serde(default)]
    pub length: Option<f64>,
    /// Hem width over top width (0.5–3; default 1.3).
    #[serde(default)]
    pub flare: Option<f64>,
    /// Vertices across (2–128; default 15).
    #[serde(default)]
    pub columns: Option<u32>,
    /// Vertices down (2–128; default 19).
    #[serde(default)]
    pub rows: Option<u32>,
    /// Gap behind the body, metres (≥ 0; default 0.03).
    #[serde(default)]
    pub clearance: Option<f64>,
    /// Linear RGB in `[0, 1]` (default a deep red).
    #[serde(default)]
    pub colour: Option<[f32; 3]>,
    /// The mesh node's name (default `Cape`).
    #[serde(default)]
    pub name: Option<String>,
}

/// What [`add_cape`] made.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CapeReport {
    /// The mesh node's name.
    pub name: String,
    /// Vertices.
    pub vertices: usize,
    /// Triangles.
    pub triangles: usize,
    /// Width at the top, metres.
    pub width: f64,
    /// Length, metres.
    pub length: f64,
    /// The chest bone it hangs from, and the hips bone its hem follows.
    pub bones: [String; 2],
}

impl CapeDef {
    /// Check the given numbers (the humanoid is checked by [`add_cape`]).
    ///
    /// # Errors
    /// A sentence naming the first field out of range, with the range.
    pub fn check(&self) -> std::result::Result<(), String> {
        let size = |x: f64| x.is_finite() && x > 0.0 && x <= MAX_CAPE_M;
        if let Some(w) = self.width.filter(|w| !size(*w)) {
            return Err(format!(
                "width {w} is not a size in (0, {MAX_CAPE_M}] metres"
            ));
        }
        if let Some(l) = self.length.filter(|l| !size(*l)) {
            return Err(format!(
                "length {l} is not a size in (0, {MAX_CAPE_M}] metres"
            ));
        }
        if let Some(f) = self.flare.filter(|f| !(0.5..=3.0).contains(f)) {
            return Err(format!("flare {f} is outside 0.5–3"));
        }
        for (f, v) in [("columns", self.columns), ("rows", self.rows)] {
            if let Some(n) = v.filter(|n| !(2..=MAX_CAPE_SIDE).contains(n)) {
                return Err(format!("{f} {n} is outside 2–{MAX_CAPE_SIDE}"));
            }
        }
        if let Some(c) = self
            .clearance
            .filter(|c| !(c.is_finite() && (0.0..=MAX_CAPE_M).contains(c)))
        {
            return Err(format!(
                "clearance {c} is not a distance in [0, {MAX_CAPE_M}] metres"
            ));
        }
        if let Some(c) = self
            .colour
            .filter(|c| !c.iter().all(|x| (0.0..=1.0).contains(x)))
        {
            return Err(format!("colour {c:?} must be in [0, 1]"));
        }
        Ok(())
    }
}

fn role(roles: &[(&'static str, NodeId)], names: &[&str]) -> Option<NodeId> {
    names
        .iter()
        .find_map(|n| roles.iter().find(|(r, _)| r == n).map(|(_, id)| *id))
}

/// Append a cape (module doc) to `ch` as a new skinned mesh node; returns what was made.
///
/// # Errors
/// [`Error::Invalid`] naming what is missing when the character has no hips, chest (or spine)
/// or upper arms among its humanoid roles ([`crate::anim::retarget::roles`]), no mesh, or a cape
/// that would be degenerate; the definition's own refusals ([`CapeDef::check`]).
pub fn add_cape(ch: &mut Character, def: &CapeDef) -> Result<CapeReport> {
    let bad = |reason: String| Error::Invalid {
        what: format!("{}: cape", ch.source),
        reason,
    };
    def.check().map_err(bad)?;
    let roles = crate::anim::retarget::roles(ch);
    let need = |what: &str, names: &[&str]| {
        role(&roles, names).ok_or_else(|| {
            bad(format!(
                "no {what} bone among the humanoid roles (looked for {})",
                names.join(", ")
            ))
        })
    };
    let chest = need("chest", &["upperChest", "chest", "spine"])?;
    let hips = need("hips", &["hips"])?;
    let left = need("left upper arm", &["leftUpperArm", "leftShoulder"])?;
    let right = need("right upper arm", &["rightUpperArm", "rightShoulder"])?;
    let name = def.name.clone().unwrap_or_else(|| "Cape".into());
    if ch
        .nodes
        .iter()
        .any(|n| n.name.as_deref() == Some(name.as_str()))
    {
        return Err(bad(format!(
            "the character already has a node named `{name}`"
        )));
    }
    let rest = ch.rest_pose();
    let (mut locals, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&rest, &mut locals, &mut world);
    let at = |n: NodeId| world[n.index()].w_axis.truncate().as_dvec3();
    let (pl, pr, pc) = (at(left), at(right), at(chest));
    let forward = crate::anim::retarget::facing_of(ch).unwrap_or(DVec3::Z);
    let back = -forward;
    let side = (pr - pl).reject_from(DVec3::Y).normalize_or(DVec3::X);
    let top_y = 0.5 * (pl.y + pr.y);
    let span = (pr - pl).reject_from(DVec3::Y).length();
    let width = def.width.unwrap_or(span * 1.15);
    // The rest pose's vertices in world space (rest controls through the rig's own LBS).
    let rig = crate::rig::RigData::from_character(ch)?;
    if rig.positions.is_empty() {
        return Err(bad("the character has no mesh to hang a cape behind".into()));
    }
    let mut controls = crate::rig::RigControls::default();
    rig.controls_from_pose(&rest, &world, &mut controls);
    let mut normals = Vec::new();
    crate::rig::RigData::normal_palette(&controls.palette, &mut normals);
    let verts: Vec<DVec3> = (0..rig.positions.len())
        .map(|v| {
            let (p, _) = rig.pose_vertex(v, &controls.weights, &controls.palette, &normals);
            DVec3::from(p.map(f64::from))
        })
        .collect();
    let lowest = verts.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let length = def.length.unwrap_or(0.55 * (top_y - lowest));
    if !(length > 0.0 && width > 0.0) {
        return Err(bad(format!(
            "a cape {width:.3} m wide and {length:.3} m long: the shoulders are not above the rest of the body"
        )));
    }
    let flare = def.flare.unwrap_or(1.3);
    let half = 0.5 * width * flare.max(1.0);
    // Behind the deepest vertex within the cape's width and height.
    let centre = DVec3::new(pc.x, top_y, pc.z);
    let depth = verts
        .iter()
        .filter(|p| p.y <= top_y + 0.05 && p.y >= top_y - length)
        .filter(|p| (**p - centre).dot(side).abs() <= half)
        .map(|p| (*p - centre).dot(back))
        .fold(0.0f64, f64::max);
    let offset = depth + def.clearance.unwrap_or(0.03);
    let (cols, rows) = (def.columns.unwrap_or(15), def.rows.unwrap_or(19));
    let colour = def.colour.unwrap_or([0.45, 0.05, 0.06]);
    let n = (cols * rows) as usize;
    let (mut positions, mut normal, mut uvs, mut colors, mut joints, mut weights) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for j in 0..rows {
        let v = f64::from(j) / f64::from(rows - 1);
        let w = width * (1.0 + (flare - 1.0) * v);
        for i in 0..cols {
            let u = f64::from(i) / f64::from(cols - 1);
            let p = centre + back * offset + side * ((u - 0.5) * w) + DVec3::NEG_Y * (length * v);
            positions.push(p.as_vec3().to_array());
            normal.push(back.as_vec3().to_array());
            uvs.push([u as f32, v as f32]);
            let shade = 1.0 - 0.25 * v as f32;
            colors.push([colour[0] * shade, colour[1] * shade, colour[2] * shade, 1.0]);
            joints.push([0, 1, 0, 0]);
            weights.push([(1.0 - v) as f32, v as f32, 0.0, 0.0]);
        }
    }
    let mut indices = Vec::with_capacity(((cols - 1) * (rows - 1) * 6) as usize);
    for j in 0..rows - 1 {
        for i in 0..cols - 1 {
            let a = j * cols + i;
            let (b, c, d) = (a + 1, a + cols, a + cols + 1);
            // Alternate the diagonal so the sheet has no preferred fold direction.
            if (i + j) % 2 == 0 {
                indices.extend_from_slice(&[a, c, b, b, c, d]);
            } else {
                indices.extend_from_slice(&[a, c, d, a, d, b]);
            }
        }
    }
    let triangles = indices.len() / 3;
    let inverse = |n: NodeId| world[n.index()].inverse();
    let skin = crate::rig::Skin {
        name: Some(format!("{name} skin")),
        joints: vec![chest, hips],
        inverse_bind: vec![inverse(chest), inverse(hips)],
    };
    let prim = crate::rig::Primitive {
        positions,
        normals: normal,
        uvs,
        colors,
        indices,
        influences: Some(crate::rig::skin::Influences { joints, weights }),
        morph: crate::rig::MorphSet::empty(n),
        ..Default::default()
    };
    let mesh = crate::rig::Mesh {
        name: Some(name.clone()),
        primitives: vec![prim],
        target_names: Vec::new(),
        default_weights: Vec::new(),
    };
    let mesh_id = MeshId(ch.meshes.len() as u32);
    let skin_id = SkinId(ch.skins.len() as u32);
    ch.meshes.push(mesh);
    ch.skins.push(skin);
    let node = NodeId(ch.nodes.len() as u32);
    ch.nodes.push(crate::rig::Node {
        name: Some(name.clone()),
        mesh: Some(mesh_id),
        skin: Some(skin_id),
        ..Default::default()
    });
    ch.scene_roots.push(node);
    ch.hierarchy = crate::rig::Hierarchy::new(&ch.source, &ch.nodes)?;
    let bone = |n: NodeId| ch.nodes[n.index()].name.clone().unwrap_or_default();
    Ok(CapeReport {
        name,
        vertices: n,
        triangles,
        width,
        length,
        bones: [bone(chest), bone(hips)],
    })
}
