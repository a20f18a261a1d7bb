//! The rig: data model (meshes, morph targets, skins, hierarchy, characters), the CPU reference math
//! (CSR morph blend, LBS), the flattened [`RigData`] backends upload, and the [`RigBackend`] seam.

pub mod anchor;
pub mod backend;
pub mod character;
pub mod fingerprint;
pub mod ids;
pub mod material;
pub mod mesh;
pub mod morph;
pub mod rigdata;
pub mod riglogic;
pub mod skeleton;
pub mod skin;

pub use anchor::ANCHOR_EDGE_M;
pub use backend::{PosedVertices, RigBackend, RigHandle, check_batch_args, set_each, whole_batch};
pub use character::{Character, ImportNote, Pose};
pub use ids::{ClipId, MeshId, NodeId, SkinId};
pub use material::{AlphaMode, EncodedImage, Material, Sampler, TextureRef, Wrap};
pub use mesh::{Mesh, Primitive};
pub use morph::{
    ACTIVE_MORPH_LIMIT, DenseTarget, LimitStats, MORPH_WEIGHT_LIMIT, MorphLimiter, MorphSet,
    MorphVertex, orthonormalize_or,
};
pub use rigdata::{ControlStats, FrameControls, MeshInstance, PaletteEntry, RigControls, RigData};
pub use skeleton::{Hierarchy, Node, Transform};
pub use skin::{InfluenceFixes, Influences, Skin, skin_tangent};
