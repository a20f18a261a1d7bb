//! The synthetic workloads, from fixed seeds (SplitMix64: the same seed gives the same bytes on
//! every machine): W4 a seed-scale linear head, W5 a MetaHuman-scale morph rig, and the morph sweep
//! the plots use.

use glam::{Mat4, Vec3};
use mien_core::gnm::forward::from_row_major;
use mien_core::gnm::{GnmPack, HeadExtLayout};
use mien_core::rig::{MeshId, MeshInstance, NodeId, PaletteEntry, RigControls, RigData};
use mien_core::testing::SplitMix64;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack};

use super::{Frames, GnmInput, Kind, Model, RING, Workload};

/// W4's seed.
pub const W4_SEED: u64 = 0x4D49_454E_0004;
/// W5's seed.
pub const W5_SEED: u64 = 0x4D49_454E_0005;

/// Radius of the synthetic head's sphere, metres.
const HEAD_RADIUS: f32 = 0.1;

/// The shape of a synthetic morph rig.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MorphShape {
    /// Vertices V.
    pub vertices: u32,
    /// Targets T.
    pub targets: u32,
    /// Each target touches a random fraction of the vertices in `[lo, hi]`.
    pub coverage: (f32, f32),
    /// Active (non-zero) targets per frame, drawn uniformly from `[lo, hi]` (hi ≤ T).
    pub active: (u32, u32),
}

impl MorphShape {
    /// W5: 24,000 vertices × 669 targets, each touching 2–6 % of the vertices, 16–32 active.
    pub const W5: MorphShape = MorphShape {
        vertices: 24_000,
        targets: 669,
        coverage: (0.02, 0.06),
        active: (16, 32),
    };
}

/// A unit direction uniform on the sphere.
fn direction(r: &mut SplitMix64) -> Vec3 {
    let z = r.range(-1.0, 1.0);
    let phi = r.range(0.0, std::f32::consts::TAU);
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vec3::new(s * phi.cos(), s * phi.sin(), z)
}

/// The Morton code (Z-order curve; G. M. Morton, IBM 1966) of a point of the cube `[-1, 1]³`,
/// 10 bits per axis: bit i of axis k at bit 3i + k.
fn morton(p: Vec3) -> u32 {
    let q = p
        .to_array()
        .map(|x| (((x + 1.0) * 0.5 * 1023.0).clamp(0.0, 1023.0)) as u32);
    (0..10).fold(0, |c, i| {
        (0..3).fold(c, |c, k| c | ((q[k] >> i & 1) << (3 * i + k)))
    })
}

/// A synthetic morph rig of `shape` from `seed`, labelled `id`: vertices uniform on a sphere of
/// radius 0.1 m (normals radial), numbered in Morton order of their positions (a spatially coherent
/// order, as a real mesh's); each target a smooth local bump around a random centre vertex —
/// every vertex within chord distance `r = 2R·√f` (a spherical cap holding a fraction f of the
/// area, f drawn from `shape.coverage`) moves by `a·(1 − (s/r)²)²·d` (d a random unit direction,
/// a 2–8 mm), with a normal delta of a tenth of that size; one rigid palette entry. Controls
/// `(RING,)`: `shape.active` distinct targets at weights in `[0.05, 1]`, a small rotation about +Y.
/// The description states the measured density (entries ÷ V·T).
pub fn synthetic_morph(seed: u64, shape: MorphShape, id: &str) -> Workload {
    let mut r = SplitMix64(seed);
    let nv = shape.vertices.max(1) as usize;
    let nt = shape.targets.max(1) as usize;
    let mut dirs: Vec<Vec3> = (0..nv).map(|_| direction(&mut r)).collect();
    // A mesh's vertex order is spatially coherent (exporters walk the surface, vertex-cache
    // optimisers keep neighbours together): number the vertices along a Z-order curve.
    dirs.sort_by_key(|d| morton(*d));
    let positions: Vec<[f32; 3]> = dirs.iter().map(|d| (*d * HEAD_RADIUS).to_array()).collect();
    // Per target: (vertex, position delta, normal delta), vertices ascending.
    let mut per_target: Vec<Vec<(u32, [f32; 3], [f32; 3])>> = Vec::with_capacity(nt);
    for _ in 0..nt {
        let centre = Vec3::from(positions[r.below(nv as u32) as usize]);
        let f = r.range(shape.coverage.0, shape.coverage.1);
        let radius = 2.0 * HEAD_RADIUS * f.sqrt();
        let d = direction(&mut r) * r.range(0.002, 0.008);
        let dn = direction(&mut r) * 0.1;
        let mut entries = Vec::new();
        for (v, p) in positions.iter().enumerate() {
            let s = (Vec3::from(*p) - centre).length() / radius;
            if s < 1.0 {
                let k = (1.0 - s * s) * (1.0 - s * s);
                entries.push((v as u32, (d * k).to_array(), (dn * k).to_array()));
            }
        }
        per_target.push(entries);
    }
    // Transpose to CSR per vertex (targets ascending within a row): a counting sort.
    let mut offsets = vec![0u32; nv + 1];
    for e in per_target.iter().flatten() {
        offsets[e.0 as usize + 1] += 1;
    }
    for v in 0..nv {
        offsets[v + 1] += offsets[v];
    }
    let nnz = offsets[nv] as usize;
    let mut fill = offsets.clone();
    let (mut target, mut pos, mut nrm) =
        (vec![0u32; nnz], vec![[0.0; 3]; nnz], vec![[0.0; 3]; nnz]);
    for (t, entries) in per_target.iter().enumerate() {
        for &(v, p, n) in entries {
            let slot = fill[v as usize] as usize;
            fill[v as usize] += 1;
            (target[slot], pos[slot], nrm[slot]) = (t as u32, p, n);
        }
    }
    let rig = RigData {
        instances: vec![MeshInstance {
            node: NodeId(0),
            mesh: MeshId(0),
            weight_base: 0,
            target_count: nt as u32,
            vertex_base: 0,
            vertex_count: nv as u32,
        }],
        palette: vec![PaletteEntry::Rigid { node: NodeId(0) }],
        weight_count: nt as u32,
        normals: dirs.iter().map(|d| d.to_array()).collect(),
        positions,
        uvs: vec![[0.0; 2]; nv],
        colors: vec![mien_core::rig::rigdata::DEFAULT_TINT; nv],
        triangles: Vec::new(),
        morph_offsets: offsets,
        morph_target: target,
        morph_position: pos,
        morph_normal: nrm,
        joints: vec![[0; 4]; nv],
        tangents: Vec::new(),
        morph_tangent: Vec::new(),
        weights: vec![[1.0, 0.0, 0.0, 0.0]; nv],
    };
    let (lo, hi) = (shape.active.0.min(nt as u32), shape.active.1.min(nt as u32));
    let frames: Vec<RigControls> = (0..RING)
        .map(|_| {
            let k = lo + r.below(hi - lo + 1);
            let mut weights = vec![0.0f32; nt];
            let mut set = 0;
            while set < k {
                let t = r.below(nt as u32) as usize;
                if weights[t] == 0.0 {
                    weights[t] = r.range(0.05, 1.0);
                    set += 1;
                }
            }
            RigControls {
                weights,
                palette: vec![Mat4::from_rotation_y(r.range(-0.2, 0.2))],
            }
        })
        .collect();
    let density = nnz as f64 / (nv as f64 * nt as f64);
    let description = format!(
        "synthetic morph rig (seed {seed:#x}): {nv} vertices on a sphere, numbered in Morton order (spatially coherent, as a mesh), × {nt} targets, each a smooth local bump over {:.0}–{:.0}% of the vertices; {nnz} CSR entries, measured density {:.2}% of V·T ({:.1} targets per vertex on average); controls: {lo}–{hi} active targets per frame, weights in [0.05, 1]",
        100.0 * shape.coverage.0,
        100.0 * shape.coverage.1,
        100.0 * density,
        nnz as f64 / nv as f64,
    );
    Workload {
        id: id.into(),
        kind: Kind::Morph,
        description,
        model: Model::Rig(rig),
        frames: Frames::Rig(frames),
        surface: Default::default(),
    }
}

/// W5: [`synthetic_morph`] with [`MorphShape::W5`].
pub fn load_w5(seed: u64) -> Workload {
    synthetic_morph(seed, MorphShape::W5, "W5")
}

/// The W4 pack: [`random_gnm_pack`] of 17,821 vertices × 383 coefficients, 4 joints, no seam,
/// with the seed's region layout ([`HeadExtLayout::gnm`]) and an identity bind transform (so at
/// rest joints the skin is the identity), written and parsed back.
///
/// # Panics
/// When the generated pack does not parse (a generator bug).
pub fn w4_pack(seed: u64) -> GnmPack {
    let mut pack = random_gnm_pack(
        seed,
        GnmShape {
            vertices: 17_821,
            coeffs: 383,
            regions: 5,
            joints: 4,
            seam: false,
        },
    );
    pack.header.head_ext = HeadExtLayout::gnm();
    pack.header.bind_transform = Mat4::IDENTITY.to_cols_array();
    let bytes = pack.to_bytes().expect("the W4 pack serialises");
    GnmPack::parse(&bytes, "<W4 pack>").expect("the W4 pack parses")
}

/// W4: `w4_pack` with seeded head_ext frames — every coefficient non-zero (`±[0.05, 1]`, so the
/// whole basis is read each pose), gaze within ±0.3 rad — and joints at their rest matrices.
pub fn load_w4(seed: u64) -> Workload {
    let pack = w4_pack(seed);
    let mut r = SplitMix64(seed ^ 0x0057_4F52_4B4C);
    let e = pack.coeff_count();
    let joint_world: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
    let frames: Vec<GnmInput> = (0..RING)
        .map(|_| {
            let mut head_ext: Vec<f32> = (0..e)
                .map(|_| {
                    let m = r.range(0.05, 1.0);
                    if r.below(2) == 0 { m } else { -m }
                })
                .collect();
            head_ext.extend((0..4).map(|_| r.range(-0.3, 0.3)));
            GnmInput {
                head_ext,
                joint_world: joint_world.clone(),
            }
        })
        .collect();
    let description = format!(
        "seed-scale linear head (random pack, seed {seed:#x}): {} vertices × {e} coefficients (regions left_eye 100, right_eye 100, lower_face 150, tongue 32, pupils 1) + 4 gaze, {} joints at rest, fp16 basis {} bytes; controls: seeded head_ext with every coefficient non-zero (±[0.05, 1]) and gaze within ±0.3 rad",
        pack.vertex_count(),
        pack.header.joints.len(),
        pack.basis.len() * 4,
    );
    Workload {
        id: "W4".into(),
        kind: Kind::Gnm,
        description,
        model: Model::Gnm(pack),
        frames: Frames::Gnm(frames),
        surface: Default::default(),
    }
}
