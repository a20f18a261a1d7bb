//! Seeded generators of random rigs and controls, shared by the backends' equality tests (CPU vs
//! f64 reference now, GPU vs CPU later). Enabled by the `testing` feature; never used by the product.
//!
//! Randomness is SplitMix64 (Steele, Lea, Flood 2014), so a seed reproduces a case on every machine.

use glam::{Mat4, Quat, Vec3};

pub mod gnm;

use crate::rig::{MeshId, MeshInstance, NodeId, PaletteEntry, RigControls, RigData};

/// SplitMix64: a tiny, fast, well-distributed 64-bit generator.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `[0, n)` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// Sizes of a random rig.
#[derive(Clone, Copy, Debug)]
pub struct RigShape {
    /// Vertices.
    pub vertices: u32,
    /// Morph targets (one instance).
    pub targets: u32,
    /// Probability that a target moves a given vertex.
    pub density: f32,
    /// Palette entries (joints).
    pub joints: u32,
}

/// A random valid rig: one instance, random sparse targets with position and normal deltas (some
/// targets empty), 1–4 influences per vertex over `joints` palette entries, unit normals.
pub fn random_rig(seed: u64, shape: RigShape) -> RigData {
    let mut r = SplitMix64(seed);
    let nv = shape.vertices as usize;
    let mut rig = RigData {
        instances: vec![MeshInstance {
            node: NodeId(0),
            mesh: MeshId(0),
            weight_base: 0,
            target_count: shape.targets,
            vertex_base: 0,
            vertex_count: shape.vertices,
        }],
        palette: (0..shape.joints.max(1))
            .map(|j| PaletteEntry::Rigid { node: NodeId(j) })
            .collect(),
        weight_count: shape.targets,
        morph_offsets: vec![0],
        ..Default::default()
    };
    let empty_target = if shape.targets > 0 {
        Some(r.below(shape.targets))
    } else {
        None
    };
    for _ in 0..nv {
        rig.positions
            .push([r.range(-0.2, 0.2), r.range(-0.2, 0.2), r.range(-0.2, 0.2)]);
        let n = Vec3::new(r.range(-1.0, 1.0), r.range(-1.0, 1.0), r.range(-1.0, 1.0))
            .try_normalize()
            .unwrap_or(Vec3::Z);
        rig.normals.push(n.to_array());
        rig.uvs.push([r.unit(), r.unit()]);
        rig.colors.push([r.unit(), r.unit(), r.unit(), 1.0]);
        for t in 0..shape.targets {
            if Some(t) == empty_target || r.unit() >= shape.density {
                continue;
            }
            rig.morph_target.push(t);
            rig.morph_position.push([
                r.range(-0.02, 0.02),
                r.range(-0.02, 0.02),
                r.range(-0.02, 0.02),
            ]);
            rig.morph_normal
                .push([r.range(-0.3, 0.3), r.range(-0.3, 0.3), r.range(-0.3, 0.3)]);
        }
        rig.morph_offsets.push(rig.morph_target.len() as u32);
        let used = 1 + r.below(4) as usize;
        let mut j = [0u32; 4];
        let mut w = [0.0f32; 4];
        for k in 0..used {
            j[k] = r.below(shape.joints.max(1));
            w[k] = r.range(0.05, 1.0);
        }
        let sum: f32 = w.iter().sum();
        rig.joints.push(j);
        rig.weights.push(w.map(|x| x / sum));
    }
    for i in 0..nv.saturating_sub(2) / 3 {
        let i = i as u32 * 3;
        rig.triangles.push([i, i + 1, i + 2]);
    }
    if seed % 2 == 1 {
        add_random_tangents(&mut rig, seed);
    }
    rig
}

/// Give `rig` unit tangents orthogonal to its normals (handedness ±1, every eighth vertex without a
/// tangent: zeros) and a tangent delta of ±0.3 per component on every morph entry, from its own
/// stream of `seed` (the rest of the rig is unchanged). [`random_rig`] does this for odd seeds.
pub fn add_random_tangents(rig: &mut RigData, seed: u64) {
    let mut r = SplitMix64(seed ^ 0x7A9_6E27);
    rig.tangents = rig
        .normals
        .iter()
        .map(|n| {
            if r.below(8) == 0 {
                return [0.0; 4];
            }
            let n = Vec3::from(*n);
            let a = Vec3::new(r.range(-1.0, 1.0), r.range(-1.0, 1.0), r.range(-1.0, 1.0));
            let t = (a - n * n.dot(a))
                .try_normalize()
                .unwrap_or(n.any_orthonormal_vector());
            let w = if r.below(2) == 0 { 1.0 } else { -1.0 };
            [t.x, t.y, t.z, w]
        })
        .collect();
    rig.morph_tangent = (0..rig.morph_target.len())
        .map(|_| [r.range(-0.3, 0.3), r.range(-0.3, 0.3), r.range(-0.3, 0.3)])
        .collect();
}

/// Random controls for `rig`: weights in `[-2, 2]` with exact zeros, ties (±0.5 repeated) and a few
/// out-of-range values to exercise the clamp, and random affine palette matrices (rotation, scale
/// 0.5–1.5, translation ±0.5 m).
pub fn random_controls(seed: u64, rig: &RigData) -> RigControls {
    let mut r = SplitMix64(seed ^ 0xC0FF_EE00);
    let weights = (0..rig.weight_count)
        .map(|_| match r.below(6) {
            0 => 0.0,
            1 => 0.5,
            2 => -0.5,
            3 => r.range(-2.5, 2.5),
            _ => r.range(-2.0, 2.0),
        })
        .collect();
    let palette = (0..rig.palette.len())
        .map(|_| {
            let v = glam::Vec4::new(
                r.range(-1.0, 1.0),
                r.range(-1.0, 1.0),
                r.range(-1.0, 1.0),
                r.range(-1.0, 1.0),
            );
            let q = v.try_normalize().map_or(Quat::IDENTITY, Quat::from_vec4);
            let s = Vec3::new(r.range(0.5, 1.5), r.range(0.5, 1.5), r.range(0.5, 1.5));
            let t = Vec3::new(r.range(-0.5, 0.5), r.range(-0.5, 0.5), r.range(-0.5, 0.5));
            Mat4::from_scale_rotation_translation(s, q, t)
        })
        .collect();
    RigControls { weights, palette }
}
