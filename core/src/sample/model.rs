//! The assembled sample head before it becomes a [`crate::rig::Character`]: every part's vertices
//! in one array (skin first), the global mirror map, rest normals, and the per-vertex masks the
//! morph targets are written with.

use std::ops::Range;

use glam::DVec3;

use super::SamplePart;
use super::head::{self, Skin};
use super::parts::{self, Part};
use super::sdf::{EYE_CENTRE, JAW_HINGE, LIP_FRONT_Z, MOUTH_Y};
use crate::rig::Primitive;

/// The head with all parts concatenated in [`SamplePart::ALL`] order.
#[derive(Clone, Debug)]
pub(super) struct Model {
    /// Rest positions `(V,3)`, metres, exactly mirror-symmetric (as f64 and as f32).
    pub pos: Vec<DVec3>,
    /// `pos` as stored in the primitives.
    pub pos32: Vec<[f32; 3]>,
    /// Unit rest normals `(V,3)` computed from the triangles, exactly mirror-symmetric.
    pub normal: Vec<[f32; 3]>,
    /// Linear RGBA `(V,4)`.
    pub color: Vec<[f32; 4]>,
    /// Triangles `(T*3,)` in global vertex indices.
    pub tri: Vec<u32>,
    /// Mirror partner of each vertex through x = 0 `(V,)`.
    pub mirror: Vec<u32>,
    /// Vertex range of each part.
    pub vertices: Vec<Range<usize>>,
    /// Triangle-index range (into `tri`) of each part.
    pub triangles: Vec<Range<usize>>,
    /// The skin's tags and slits (skin vertices are global `0..skin.pos.len()`).
    pub skin: Skin,
    /// Masks, see [`Masks`].
    pub mask: Masks,
}

/// Per-vertex weights `(V,)` in `[0,1]` (angles in radians for the lids), 0 outside their part.
#[derive(Clone, Debug, Default)]
pub(super) struct Masks {
    /// How much of the jaw's motion a vertex follows.
    pub jaw: Vec<f64>,
    /// Upper lip (skin).
    pub upper_lip: Vec<f64>,
    /// Lower lip (skin).
    pub lower_lip: Vec<f64>,
    /// The whole mouth including the corners (skin).
    pub mouth: Vec<f64>,
    /// Angle (radians) the left upper lid turns down about the eye centre in a full blink.
    pub upper_lid: Vec<f64>,
    /// Angle (radians) the left lower lid turns up in a full blink.
    pub lower_lid: Vec<f64>,
    /// The left mouth corner's position.
    pub corner: DVec3,
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// A compactly supported bump: `(1 − s²)²` for `s = |(p − c)/r| < 1`, else 0 (C¹).
pub(super) fn ball(p: DVec3, c: DVec3, r: DVec3) -> f64 {
    let s2 = ((p - c) / r).length_squared();
    if s2 < 1.0 {
        (1.0 - s2) * (1.0 - s2)
    } else {
        0.0
    }
}

/// Mirror image through x = 0.
pub(super) fn flip(p: DVec3) -> DVec3 {
    DVec3::new(-p.x, p.y, p.z)
}

/// Build and assemble every part.
pub(super) fn assemble() -> Model {
    let skin = head::build();
    let eye_left = parts::eyeball();
    let eye_right = Part {
        pos: eye_left.pos.iter().map(|&p| flip(p)).collect(),
        color: eye_left.color.clone(),
        topo: {
            let mut t = eye_left.topo.clone();
            for tri in t.indices.chunks_exact_mut(3) {
                tri.swap(1, 2);
            }
            t
        },
    };
    let skin_part = Part {
        pos: skin.pos.clone(),
        color: skin.color.clone(),
        topo: skin.topo.clone(),
    };
    let list = [
        skin_part,
        eye_left,
        eye_right,
        parts::cavity(),
        parts::teeth(true),
        parts::teeth(false),
        parts::tongue(),
    ];
    let (mut pos, mut color, mut tri, mut mirror) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut vertices, mut triangles) = (Vec::new(), Vec::new());
    let eye_count = list[1].pos.len();
    for (k, part) in list.iter().enumerate() {
        let base = pos.len();
        let t0 = tri.len();
        pos.extend_from_slice(&part.pos);
        color.extend_from_slice(&part.color);
        tri.extend(part.topo.indices.iter().map(|&i| i + base as u32));
        match SamplePart::ALL[k] {
            SamplePart::EyeLeft => {
                mirror.extend((0..eye_count).map(|i| (base + eye_count + i) as u32))
            }
            SamplePart::EyeRight => {
                mirror.extend((0..eye_count).map(|i| (base - eye_count + i) as u32))
            }
            _ => mirror.extend(part.topo.mirror.iter().map(|&m| m + base as u32)),
        }
        vertices.push(base..pos.len());
        triangles.push(t0..tri.len());
    }
    // Exact symmetry: the +X side is authoritative, the mid-plane has x = 0.
    for v in 0..pos.len() {
        let m = mirror[v] as usize;
        if m == v {
            pos[v].x = 0.0;
        } else if pos[v].x > 0.0 {
            pos[m] = flip(pos[v]);
        }
    }
    let pos32: Vec<[f32; 3]> = pos.iter().map(|p| p.as_vec3().to_array()).collect();
    let mut normal = vec![[0.0f32; 3]; pos.len()];
    for (vr, tr) in vertices.iter().zip(&triangles) {
        let local: Vec<u32> = tri[tr.clone()]
            .iter()
            .map(|&i| i - vr.start as u32)
            .collect();
        let n = Primitive::computed_normals(&pos32[vr.clone()], &local);
        normal[vr.clone()].copy_from_slice(&n);
    }
    for v in 0..pos.len() {
        let m = mirror[v] as usize;
        if m == v {
            let n = DVec3::new(0.0, f64::from(normal[v][1]), f64::from(normal[v][2]))
                .normalize_or(DVec3::Z);
            normal[v] = n.as_vec3().to_array();
        } else if pos[v].x > 0.0 {
            normal[m] = [-normal[v][0], normal[v][1], normal[v][2]];
        }
    }
    let mut model = Model {
        pos,
        pos32,
        normal,
        color,
        tri,
        mirror,
        vertices,
        triangles,
        skin,
        mask: Masks::default(),
    };
    model.mask = masks(&model);
    model
}

fn masks(m: &Model) -> Masks {
    let nv = m.pos.len();
    let skin = &m.skin;
    let corner = m.pos[skin.mouth_corners[0] as usize];
    let mut k = Masks {
        jaw: vec![0.0; nv],
        upper_lip: vec![0.0; nv],
        lower_lip: vec![0.0; nv],
        mouth: vec![0.0; nv],
        upper_lid: vec![0.0; nv],
        lower_lid: vec![0.0; nv],
        corner,
    };
    // Lid closing angles per left-eye column: the lids meet 30% of the way up from the lower lid.
    let elevation = |p: DVec3| (p.y - EYE_CENTRE.y).atan2(p.z - EYE_CENTRE.z);
    let close: Vec<(f64, f64, f64, f64)> = skin
        .eye
        .upper
        .iter()
        .zip(&skin.eye.lower)
        .map(|(&u, &l)| {
            let (pu, pl) = (m.pos[u as usize], m.pos[l as usize]);
            let (eu, el) = (elevation(pu), elevation(pl));
            let meet = el + 0.3 * (eu - el);
            (eu - meet, meet - el, pu.y, pl.y)
        })
        .collect();
    for v in m.vertices[SamplePart::Skin as usize].clone() {
        let (p, t) = (m.pos[v], &skin.tag[v]);
        // Height above the mouth line, with the slit's two sides pushed apart so the upper and
        // lower lip never share a weight.
        let h = (p.y - MOUTH_Y) + f64::from(t.mouth_side) * 0.006 * t.mouth_c;
        let w = 0.005 + 0.02 * (1.0 - t.mouth_c);
        let region = smoothstep(JAW_HINGE.z - 0.01, JAW_HINGE.z + 0.03, p.z)
            * smoothstep(-0.128, -0.108, p.y);
        k.jaw[v] = (1.0 - smoothstep(-w, w, h)) * region;
        let lat = 1.0 - smoothstep(corner.x - 0.001, corner.x + 0.012, p.x.abs());
        let front = smoothstep(0.045, 0.065, p.z);
        let upper = smoothstep(-0.003, 0.003, h);
        k.upper_lip[v] = lat * front * upper * (1.0 - smoothstep(0.0, 0.016, p.y - MOUTH_Y));
        k.lower_lip[v] =
            lat * front * (1.0 - upper) * (1.0 - smoothstep(0.0, 0.014, MOUTH_Y - p.y));
        k.mouth[v] = ball(
            p,
            DVec3::new(0.0, MOUTH_Y, LIP_FRONT_Z - 0.012),
            DVec3::new(corner.x + 0.014, 0.02, 0.03),
        );
        let col = t.col - skin.eye.col_in;
        if (0..close.len() as i32).contains(&col) && t.col > 0 {
            let (cu, cl, yu, yl) = close[col as usize];
            if t.eye_side > 0 {
                k.upper_lid[v] = cu * (1.0 - smoothstep(0.0, 0.011, p.y - yu));
            } else if t.eye_side < 0 {
                k.lower_lid[v] = cl * (1.0 - smoothstep(0.0, 0.008, yl - p.y));
            }
        }
    }
    for v in m.vertices[SamplePart::MouthCavity as usize].clone() {
        k.jaw[v] = 1.0 - smoothstep(-0.008, 0.003, m.pos[v].y - MOUTH_Y);
    }
    for part in [SamplePart::TeethLower, SamplePart::Tongue] {
        for v in m.vertices[part as usize].clone() {
            k.jaw[v] = 1.0;
        }
    }
    k
}
