//! Seeded random linear heads ([`GnmPack`]) and frames for the GNM backends' equality tests.
//!
//! A pack is built in memory and then written and parsed back ([`GnmPack::to_bytes`],
//! [`GnmPack::parse`]), so every generated pack is one the parser accepts.

use glam::{Mat4, Quat, Vec3};

use super::SplitMix64;
use crate::gnm::forward::joint_world;
use crate::gnm::layout::HeadExtLayout;
use crate::gnm::pack::{GnmPack, PackHeader, PackJoint, VERSION};

/// Sizes of a random linear head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GnmShape {
    /// Vertices V (≥ 1).
    pub vertices: u32,
    /// Expression coefficients E (≥ 1), split into `regions` named regions.
    pub coeffs: u32,
    /// head_ext regions (1..=E).
    pub regions: u32,
    /// Joints J (≥ 1), in a random hierarchy (each parent an earlier joint or none).
    pub joints: u32,
    /// Whether the pack has a neck seam.
    pub seam: bool,
}

fn f16(x: f32) -> f32 {
    half::f16::from_f32(x).to_f32()
}

fn rotation(r: &mut SplitMix64) -> Quat {
    let v = glam::Vec4::new(
        r.range(-1.0, 1.0),
        r.range(-1.0, 1.0),
        r.range(-1.0, 1.0),
        r.range(-1.0, 1.0),
    );
    v.try_normalize().map_or(Quat::IDENTITY, Quat::from_vec4)
}

fn row_major(m: &Mat4) -> [f32; 16] {
    m.transpose().to_cols_array()
}

/// One fp16 basis value: mostly `±[0, 1)`, with exact zeros, f16 subnormals and a few up to ±8.
fn basis_value(r: &mut SplitMix64) -> u16 {
    let x = match r.below(16) {
        0 | 1 => 0.0,
        2 => r.range(-1.0, 1.0) * 6.0e-5, // subnormal f16 (below 2^-14 ≈ 6.1e-5)
        3 => r.range(-8.0, 8.0),
        _ => r.range(-1.0, 1.0),
    };
    half::f16::from_f32(x).to_bits()
}

/// A random valid pack of `shape`: random region split of E, neutral within ±0.15 m, an fp16 basis
/// (zeros, subnormals, values up to ±8) with scales 1–50 mm per unit, two eye centres with per-vertex
/// eye weights (half the vertices 0, else `[0,1]`), an optional seam of ±5 mm, a random joint
/// hierarchy with rest world matrices composed from random local rotations and offsets, a random
/// bind transform, and 1–4 skin influences per vertex with f16 weights (about one vertex in 16 has
/// none, and unused slots hold arbitrary indices, some past the joint count).
///
/// # Panics
/// When the generated pack does not survive `to_bytes` + `parse` (a generator bug).
pub fn random_gnm_pack(seed: u64, shape: GnmShape) -> GnmPack {
    let mut r = SplitMix64(seed);
    let v = shape.vertices.max(1) as usize;
    let e = shape.coeffs.max(1) as usize;
    let nreg = shape.regions.clamp(1, e as u32) as usize;
    // Region sizes: nreg positive parts of e.
    let mut cuts: Vec<usize> = (1..e).collect();
    for i in (1..cuts.len()).rev() {
        cuts.swap(i, r.below(i as u32 + 1) as usize);
    }
    let mut cuts: Vec<usize> = cuts.into_iter().take(nreg - 1).collect();
    cuts.sort_unstable();
    cuts.push(e);
    let mut regions = Vec::new();
    let mut start = 0;
    for (i, c) in cuts.iter().enumerate() {
        regions.push((format!("region_{i}"), c - start));
        start = *c;
    }
    let j = shape.joints.max(1) as usize;
    let joints: Vec<PackJoint> = (0..j)
        .map(|i| PackJoint {
            name: format!("joint_{i}"),
            parent: if i == 0 || r.below(4) == 0 {
                -1
            } else {
                r.below(i as u32) as i32
            },
        })
        .collect();
    let mut world: Vec<Mat4> = Vec::with_capacity(j);
    for jt in &joints {
        let t = Vec3::new(r.range(-0.2, 0.2), r.range(-0.2, 0.2), r.range(-0.2, 0.2));
        let local = Mat4::from_rotation_translation(rotation(&mut r), t);
        world.push(if jt.parent >= 0 {
            world[jt.parent as usize] * local
        } else {
            local
        });
    }
    let bind = Mat4::from_scale_rotation_translation(
        Vec3::splat(r.range(0.8, 1.25)),
        rotation(&mut r),
        Vec3::new(r.range(-0.1, 0.1), r.range(1.4, 1.7), r.range(-0.1, 0.1)),
    );
    let header = PackHeader {
        version: VERSION,
        model: "gnm".into(),
        units: "m".into(),
        vertex_count: v as u64,
        coeff_count: e as u64,
        head_ext: HeadExtLayout {
            regions,
            reduced: None,
        },
        max_influence: 4,
        joints,
        eye_joints: None,
        bind_transform: row_major(&bind),
        names: Vec::new(),
        arkit: None,
        source: serde_json::Value::Null,
        buffers: Vec::new(),
    };
    let neutral: Vec<[f32; 3]> = (0..v)
        .map(|_| {
            [
                r.range(-0.15, 0.15),
                r.range(-0.15, 0.15),
                r.range(-0.15, 0.15),
            ]
        })
        .collect();
    let halves: Vec<u16> = (0..v * e * 3).map(|_| basis_value(&mut r)).collect();
    let basis: Vec<u32> = halves
        .chunks(2)
        .map(|c| u32::from(c[0]) | (u32::from(*c.get(1).unwrap_or(&0)) << 16))
        .collect();
    let basis_scale: Vec<f32> = (0..e).map(|_| r.range(0.001, 0.05)).collect();
    let eye_positions = [[0.03, 0.05, 0.06], [-0.03, 0.05, 0.06]]
        .map(|c: [f32; 3]| [c[0] + r.range(-0.01, 0.01), c[1], c[2]]);
    let eye_weights: Vec<f32> = (0..2 * v)
        .map(|_| if r.below(2) == 0 { 0.0 } else { r.unit() })
        .collect();
    let seam = shape.seam.then(|| {
        (0..v)
            .map(|_| {
                [
                    r.range(-0.005, 0.005),
                    r.range(-0.005, 0.005),
                    r.range(-0.005, 0.005),
                ]
            })
            .collect()
    });
    let mut skin_index = Vec::with_capacity(v);
    let mut skin_weight = Vec::with_capacity(v);
    for _ in 0..v {
        let used = if r.below(16) == 0 {
            0
        } else {
            1 + r.below(4) as usize
        };
        let mut ix = [0u16; 4];
        let mut w = [0.0f32; 4];
        for k in 0..4 {
            if k < used {
                ix[k] = r.below(j as u32) as u16;
                w[k] = f16(r.range(0.05, 1.0));
            } else {
                ix[k] = r.below(j as u32 + 3) as u16;
            }
        }
        skin_index.push(ix);
        skin_weight.push(w);
    }
    let faces: Vec<[u32; 3]> = (0..v / 3)
        .map(|i| [3 * i as u32, 3 * i as u32 + 1, 3 * i as u32 + 2])
        .collect();
    let pack = GnmPack {
        header,
        neutral,
        basis,
        basis_scale,
        eye_positions,
        eye_weights,
        faces,
        quads: None,
        uv: None,
        seam,
        skin_index,
        skin_weight,
        rest_world: world.iter().map(row_major).collect(),
    };
    let bytes = pack.to_bytes().expect("a generated pack is well-formed");
    GnmPack::parse(&bytes, "<random pack>").expect("a generated pack parses")
}

/// A random head_ext vector for `pack` (`(E+4,)`): about a third of the coefficients exactly 0, the
/// rest in `[-2, 2]`; each gaze angle 0 one time in four, else within ±0.6 rad.
pub fn random_head_ext(seed: u64, pack: &GnmPack) -> Vec<f32> {
    let mut r = SplitMix64(seed ^ 0x06EA_DE47);
    let mut out: Vec<f32> = (0..pack.coeff_count())
        .map(|_| {
            if r.below(3) == 0 {
                0.0
            } else {
                r.range(-2.0, 2.0)
            }
        })
        .collect();
    out.extend((0..4).map(|_| {
        if r.below(4) == 0 {
            0.0
        } else {
            r.range(-0.6, 0.6)
        }
    }));
    out
}

/// Random joint world matrices for `pack` (`(J,)`): half the seeds pose the hierarchy with
/// [`joint_world`] from random rotation overrides on some joints (plus a name the pack lacks), the
/// other half are independent random affine matrices (rotation, scale 0.5–1.5, translation ±0.5 m).
pub fn random_joint_world(seed: u64, pack: &GnmPack) -> Vec<Mat4> {
    let mut r = SplitMix64(seed ^ 0x101_7755);
    let n = pack.header.joints.len();
    if r.below(2) == 0 {
        let mut overrides: Vec<(String, Quat)> = pack
            .header
            .joints
            .iter()
            .filter(|_| r.below(2) == 0)
            .map(|jt| (jt.name.clone(), Quat::IDENTITY))
            .collect();
        for o in &mut overrides {
            o.1 = rotation(&mut r);
        }
        overrides.push(("not_a_joint".into(), Quat::IDENTITY));
        let (mut out, mut skipped) = (Vec::new(), Vec::new());
        joint_world(pack, &overrides, &mut out, &mut skipped);
        out
    } else {
        (0..n)
            .map(|_| {
                let s = Vec3::new(r.range(0.5, 1.5), r.range(0.5, 1.5), r.range(0.5, 1.5));
                let t = Vec3::new(r.range(-0.5, 0.5), r.range(-0.5, 0.5), r.range(-0.5, 0.5));
                Mat4::from_scale_rotation_translation(s, rotation(&mut r), t)
            })
            .collect()
    }
}
