//! Typed indices used across module boundaries (STYLE 12): a `NodeId` cannot be passed where a
//! `MeshId` is meant.

macro_rules! typed_index {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as `usize`, for slicing.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

typed_index!(
    /// Index of a node in [`crate::rig::Character::nodes`].
    NodeId
);
typed_index!(
    /// Index of a mesh in [`crate::rig::Character::meshes`].
    MeshId
);
typed_index!(
    /// Index of a skin in [`crate::rig::Character::skins`].
    SkinId
);
typed_index!(
    /// Index of a clip in [`crate::rig::Character::clips`].
    ClipId
);
