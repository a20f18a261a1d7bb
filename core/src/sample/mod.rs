//! The built-in default character and performance that `mien animate` runs with no arguments: a
//! stylised human head generated entirely by code (no asset, no randomness but a seeded
//! SplitMix64), rigged with all 52 ARKit blendshapes, and a six-second performance for it.
//!
//! The head, in metres, +Y up, facing +Z, character-left = +X, centred near the origin: the eyes'
//! centres at y = 0.012, the crown at y ≈ 0.119 (with hair), the chin at y ≈ −0.101, a short neck
//! cut flat at y = −0.132; 0.22 m from crown to chin (0.25 m with the neck), 0.15 m across the
//! temples and 0.17 m across the ears, from z ≈ −0.109 (back of the hair) to 0.112 (nose tip). One mesh, one root node, seven primitives ([`SamplePart`]) sharing one
//! 52-weight array in [`ARKIT_52`] order; vertex colours in `COLOR_0`. See [`sample_head`].
//!
//! Pipeline of this module: `sdf` (the sculpted shape) → `layout` (rows and columns of the skin
//! grid) → `head` (the skin cast onto the shape, slits, lip and lid edges) with `paint` (its
//! colours), and `parts` (eyes, mouth interior) on the shared `grid` topology → `model` (assembly,
//! mirror map, masks) → `expressions` (one displacement field per shape) → `targets` (mirroring,
//! normal deltas, morph sets); `performance` is the weight stream.

mod body;
mod body_clips;
mod expressions;
mod grid;
mod head;
mod layout;
mod model;
mod paint;
mod parts;
mod performance;
mod sdf;
mod targets;

pub use body::{BODY_SOURCE, HEAD_OFFSET, WALK_SPEED, sample_body, try_sample_body};
pub use performance::{SAMPLE_PERFORMANCE_SECONDS, SAMPLE_PERFORMANCE_SOURCE, sample_performance};

use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::error::Result;
use crate::rig::{Character, Hierarchy, Mesh, MeshId, Node, NodeId, Primitive};

/// The label of the built-in head, used as its [`Character::source`].
pub const SAMPLE_SOURCE: &str = "<built-in sample head>";

/// The label of the built-in head ([`SAMPLE_SOURCE`]).
pub fn sample_name() -> &'static str {
    SAMPLE_SOURCE
}

/// The primitives of the sample head's one mesh, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SamplePart {
    /// Face, scalp, ears and neck, with the mouth and eye openings.
    Skin = 0,
    /// The character's left eyeball (+X).
    EyeLeft = 1,
    /// The character's right eyeball (−X).
    EyeRight = 2,
    /// The mouth cavity behind the lips (normals face into the mouth).
    MouthCavity = 3,
    /// Upper teeth and gum.
    TeethUpper = 4,
    /// Lower teeth and gum.
    TeethLower = 5,
    /// The tongue.
    Tongue = 6,
}

impl SamplePart {
    /// Every part in primitive order.
    pub const ALL: [SamplePart; 7] = [
        SamplePart::Skin,
        SamplePart::EyeLeft,
        SamplePart::EyeRight,
        SamplePart::MouthCavity,
        SamplePart::TeethUpper,
        SamplePart::TeethLower,
        SamplePart::Tongue,
    ];

    /// The part's primitive index in the sample mesh.
    pub fn primitive(self) -> usize {
        self as usize
    }
}

/// Landmarks of the sample head at rest, metres, in the mesh's space (the root node is the
/// identity).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleLandmarks {
    /// Eyeball centres, character-left (+X) first.
    pub eye_centres: [[f32; 3]; 2],
    /// Eyeball radius.
    pub eye_radius: f32,
    /// The upper lip's edge vertex on the mid-plane (where the lips meet).
    pub upper_lip: [f32; 3],
    /// The lower lip's edge vertex on the mid-plane.
    pub lower_lip: [f32; 3],
    /// Mouth corners, left first.
    pub mouth_corners: [[f32; 3]; 2],
    /// The jaw's hinge (`jawOpen` turns the jaw about the X axis through it).
    pub jaw_hinge: [f32; 3],
    /// The tip of the nose (the skin vertex furthest forward).
    pub nose_tip: [f32; 3],
}

/// The sample head's landmarks (builds the skin; about as costly as [`sample_head`] without the
/// targets).
pub fn sample_landmarks() -> SampleLandmarks {
    let m = model::assemble();
    let at = |v: u32| m.pos32[v as usize];
    let e = sdf::EYE_CENTRE.as_vec3().to_array();
    let skin = m.vertices[SamplePart::Skin as usize].clone();
    let tip = skin
        .max_by(|&a, &b| m.pos[a].z.total_cmp(&m.pos[b].z))
        .unwrap_or(0);
    SampleLandmarks {
        eye_centres: [e, [-e[0], e[1], e[2]]],
        eye_radius: sdf::EYE_RADIUS as f32,
        upper_lip: at(m.skin.mouth_mid[0]),
        lower_lip: at(m.skin.mouth_mid[1]),
        mouth_corners: [at(m.skin.mouth_corners[0]), at(m.skin.mouth_corners[1])],
        jaw_hinge: sdf::JAW_HINGE.as_vec3().to_array(),
        nose_tip: m.pos32[tip],
    }
}

/// The built-in sample head: a stylised human head (skin with a hair cap, brows, lips, open-able
/// mouth and eyelids; eyeballs with iris and pupil; mouth cavity, teeth, tongue), one root node
/// `head` holding one mesh `sample_head` of seven primitives ([`SamplePart`]) with positions
/// `(V,3)` in metres, unit normals `(V,3)`, linear RGBA colours `(V,4)`, u32 triangles, and the 52
/// ARKit morph targets ([`ARKIT_52`] order; position and normal deltas; default weights 0).
/// About 15k vertices (13k of them skin) and 30k triangles; see the module docs for frame and size.
///
/// Shapes: the lids close over the eyeballs by turning about the eye centres; `eyeLook*` turn the
/// eyeballs 23–26° (each side's own left/right); `jawOpen` turns the jaw, chin, lower lip, lower
/// teeth, tongue and the mouth floor 14° about [`SampleLandmarks::jaw_hinge`]; `tongueOut` pushes
/// the tongue 2.4 cm forward; every shape moves a vertex at most 3 cm, and each `…Right` shape is
/// the exact mirror image of its `…Left` shape.
///
/// # Panics
/// Never in practice: the build has no input; a failure is a bug (covered by the tests). Use
/// [`try_sample_head`] to get it as an error instead.
pub fn sample_head() -> Character {
    match try_sample_head() {
        Ok(c) => c,
        Err(e) => panic!("the built-in sample head failed to build: {e}"),
    }
}

/// [`sample_head`], returning a build failure as an error instead of panicking.
///
/// # Errors
/// [`crate::Error`] from building the morph sets or validating the character (none is expected).
pub fn try_sample_head() -> Result<Character> {
    let m = model::assemble();
    let deltas = targets::deltas(&m)?;
    let sets = targets::morph_sets(&m, &deltas)?;
    let primitives = m
        .vertices
        .iter()
        .zip(&m.triangles)
        .zip(sets)
        .map(|((vr, tr), morph)| Primitive {
            positions: m.pos32[vr.clone()].to_vec(),
            normals: m.normal[vr.clone()].to_vec(),
            colors: m.color[vr.clone()].to_vec(),
            indices: m.tri[tr.clone()]
                .iter()
                .map(|&i| i - vr.start as u32)
                .collect(),
            morph,
            ..Default::default()
        })
        .collect();
    let mesh = Mesh {
        name: Some("sample_head".into()),
        primitives,
        target_names: ARKIT_52.iter().map(|s| s.to_string()).collect(),
        default_weights: vec![0.0; ARKIT_COUNT],
    };
    let nodes = vec![Node {
        name: Some("head".into()),
        mesh: Some(MeshId(0)),
        ..Default::default()
    }];
    let hierarchy = Hierarchy::new(SAMPLE_SOURCE, &nodes)?;
    let character = Character {
        source: SAMPLE_SOURCE.into(),
        nodes,
        hierarchy,
        scene_roots: vec![NodeId(0)],
        meshes: vec![mesh],
        ..Default::default()
    };
    character.validate()?;
    Ok(character)
}
