//! The hand-worked linear head of the conformance harness: one vertex whose pose is worked out on
//! paper (re-exported from [`super::gnm`]).

use glam::{Mat4, Vec3};
use mien_core::gnm::layout::HeadExtLayout;
use mien_core::gnm::pack::{GnmPack, PackHeader, PackJoint, VERSION};

use super::gnm::GnmFrameInput;

/// A hand-checkable case: its pack, one frame and the expected world position.
#[derive(Clone, Debug)]
pub struct HandCase {
    /// A one-vertex pack.
    pub pack: GnmPack,
    /// Its frame.
    pub frame: GnmFrameInput,
    /// The posed vertex, metres, worked out by hand.
    pub expected: [f32; 3],
}

/// One vertex, E = 2, two joints, every number exact in fp16/f32:
///
/// - neutral (1, 2, 3); basis B₀ = (0.5, 0, 0), B₁ = (0, 0.25, −1); scales (2, 4); c = (1, 0.5)
///   → forward (1 + 1·2·0.5, 2 + 0.5·4·0.25, 3 − 0.5·4·1) = (2, 2.5, 1);
/// - left eye: yaw π/2 about centre 0 turns (x, y, z) → (z, y, −x) = (1, 2.5, −2); weight 0.5 →
///   (1.5, 2.5, −0.5); the right eye has weight 0;
/// - seam (0.5, 0, 0) → (2, 2.5, −0.5);
/// - skin: rest and bind identity, joint 0 at (1, 0, 0) with weight 0.25, joint 1 at (0, 2, 0) with
///   0.75 → + (0.25, 1.5, 0) = **(2.25, 4, −0.5)**.
///
/// The only inexact step is the f32 cos(π/2) (≈ −4.4e-8) times |p| ≤ 3: within 1e-6 m.
///
/// # Panics
/// Never (the pack is fixed and valid).
pub fn one_vertex_pack() -> HandCase {
    let identity: [f32; 16] = [
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    // fp16 bits of 0.5, 0, 0, 0, 0.25, −1.
    let halves: [u32; 6] = [0x3800, 0, 0, 0, 0x3400, 0xBC00];
    let header = PackHeader {
        version: VERSION,
        model: "gnm".into(),
        units: "m".into(),
        vertex_count: 1,
        coeff_count: 2,
        head_ext: HeadExtLayout {
            regions: vec![("face".into(), 2)],
            reduced: None,
        },
        max_influence: 4,
        joints: vec![
            PackJoint {
                name: "neck".into(),
                parent: -1,
            },
            PackJoint {
                name: "head".into(),
                parent: 0,
            },
        ],
        eye_joints: None,
        bind_transform: identity,
        names: Vec::new(),
        arkit: None,
        source: Default::default(),
        buffers: Vec::new(),
    };
    let pack = GnmPack {
        header,
        neutral: vec![[1.0, 2.0, 3.0]],
        basis: halves.chunks(2).map(|c| c[0] | (c[1] << 16)).collect(),
        basis_scale: vec![2.0, 4.0],
        eye_positions: [[0.0; 3], [5.0, 5.0, 5.0]],
        eye_weights: vec![0.5, 0.0],
        faces: Vec::new(),
        quads: None,
        uv: None,
        seam: Some(vec![[0.5, 0.0, 0.0]]),
        skin_index: vec![[0, 1, 0, 0]],
        skin_weight: vec![[0.25, 0.75, 0.0, 0.0]],
        rest_world: vec![identity, identity],
    };
    let pack = GnmPack::parse(
        &pack.to_bytes().expect("the hand pack is well-formed"),
        "<hand pack>",
    )
    .expect("the hand pack parses");
    HandCase {
        pack,
        frame: GnmFrameInput {
            head_ext: vec![1.0, 0.5, 0.0, std::f32::consts::FRAC_PI_2, 0.0, 0.0],
            joint_world: vec![
                Mat4::from_translation(Vec3::new(1.0, 0.0, 0.0)),
                Mat4::from_translation(Vec3::new(0.0, 2.0, 0.0)),
            ],
        },
        expected: [2.25, 4.0, -0.5],
    }
}
