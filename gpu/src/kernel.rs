//! The kernel entry points every device layer builds pipelines for, with their binding layouts —
//! one table, so the two APIs bind the same slots in the same order.

/// How a kernel sees one binding of its group 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    ReadWrite,
}

/// A compute pipeline: one entry point of one `mien-shaders` kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// `morph.wgsl` `main`: the morph blend over a block's active slots.
    Morph,
    /// `skin.wgsl` `main`: LBS (the rig's and the linear head's).
    Skin,
    /// `tangent.wgsl` `main`: morphed, re-orthogonalised, skinned tangents.
    Tangent,
    /// `lift_debug.wgsl` `lift`: the debug vertex lift.
    Lift,
    /// `lift_debug.wgsl` `clear`: a range's slots past the vertex count.
    Clear,
    /// `gnm.wgsl` `forward`: the linear head's basis, eyes and seam (needs `unpack2x16float`).
    GnmForward,
    /// `lift_bound.wgsl` `main`: bound gaussians posed on their triangles.
    LiftBound,
    /// `hair.wgsl` `main`: child strands interpolated from the guides, one gaussian per segment.
    HairStrands,
    /// `gnm_coop.wgsl` `blend`: the linear head's basis blend on tensor cores (cooperative
    /// matrices, fp16 inputs, fp32 sums); only where [`crate::Caps::coop_gnm`].
    GnmCoop,
    /// `gnm_coop.wgsl` `finish`: the eyes, seam and skin after [`Entry::GnmCoop`].
    GnmCoopFinish,
    /// `morph.wgsl` `skinned`: the morph blend and LBS in one pass, writing posed vertices (rigs
    /// without tangents).
    MorphSkinned,
    /// `gnm_coop.wgsl` `blend_one`: [`Entry::GnmCoop`] for batches of up to 16 instances (one
    /// row block); only where [`crate::Caps::coop_gnm`].
    GnmCoopOne,
}

use Slot::{Read, ReadWrite, Uniform};

impl Entry {
    /// Every entry, in a fixed order (the index of [`Entry::index`]).
    pub const ALL: [Entry; 12] = [
        Entry::Morph,
        Entry::Skin,
        Entry::Tangent,
        Entry::Lift,
        Entry::Clear,
        Entry::GnmForward,
        Entry::LiftBound,
        Entry::HairStrands,
        Entry::GnmCoop,
        Entry::GnmCoopFinish,
        Entry::MorphSkinned,
        Entry::GnmCoopOne,
    ];

    /// Whether the entry runs on tensor cores: built and bound only where
    /// [`crate::Caps::coop_gnm`].
    pub fn needs_coop(self) -> bool {
        matches!(
            self,
            Entry::GnmCoop | Entry::GnmCoopOne | Entry::GnmCoopFinish
        )
    }

    /// Position in [`Entry::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The kernel (WGSL source, SPIR-V).
    pub fn kernel(self) -> &'static mien_shaders::Kernel {
        match self {
            Entry::Morph | Entry::MorphSkinned => &mien_shaders::MORPH,
            Entry::Skin => &mien_shaders::SKIN,
            Entry::Tangent => &mien_shaders::TANGENT,
            Entry::Lift | Entry::Clear => &mien_shaders::LIFT_DEBUG,
            Entry::GnmForward => &mien_shaders::GNM,
            Entry::LiftBound => &mien_shaders::LIFT_BOUND,
            Entry::HairStrands => &mien_shaders::HAIR,
            Entry::GnmCoop | Entry::GnmCoopOne | Entry::GnmCoopFinish => &mien_shaders::GNM_COOP,
        }
    }

    /// The entry point's name in the kernel.
    pub fn name(self) -> &'static str {
        match self {
            Entry::Morph | Entry::Skin | Entry::Tangent | Entry::LiftBound | Entry::HairStrands => {
                "main"
            }
            Entry::Lift => "lift",
            Entry::Clear => "clear",
            Entry::GnmForward => "forward",
            Entry::GnmCoop => "blend",
            Entry::GnmCoopFinish => "finish",
            Entry::GnmCoopOne => "blend_one",
            Entry::MorphSkinned => "skinned",
        }
    }

    /// Group 0's bindings in binding order (the WGSL's `@binding(i)`; `gpu/tests/kernels.rs` checks
    /// the kernels against this table).
    pub fn slots(self) -> &'static [Slot] {
        match self {
            // One layout for both morph entries (`main` leaves the last two unused). 8 storage
            // buffers: joints and weights are interleaved in one.
            Entry::Morph | Entry::MorphSkinned => {
                &[Uniform, Read, Read, Read, Read, Read, ReadWrite, Read, Read]
            }
            Entry::Skin | Entry::GnmForward => &[Uniform, Read, Read, Read, Read, ReadWrite],
            // The tensor-core pass's entries share one layout (9 storage bindings fit everywhere
            // it runs).
            Entry::GnmCoop | Entry::GnmCoopOne | Entry::GnmCoopFinish => &[
                Uniform, Read, Read, Read, Read, Read, Read, Read, ReadWrite, ReadWrite,
            ],
            // 8 storage buffers: wgpu's default per-stage limit, so a caller-made device runs it.
            Entry::Tangent => &[Uniform, Read, Read, Read, Read, Read, Read, Read, ReadWrite],
            Entry::Lift | Entry::Clear | Entry::HairStrands => &[
                Uniform, Read, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite,
            ],
            Entry::LiftBound => &[
                Uniform, Read, Read, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite,
            ],
        }
    }

    /// A label for debuggers and error messages.
    pub fn label(self) -> &'static str {
        match self {
            Entry::Morph => "mien morph",
            Entry::Skin => "mien skin",
            Entry::Tangent => "mien tangent",
            Entry::Lift => "mien lift",
            Entry::Clear => "mien clear",
            Entry::GnmForward => "mien gnm forward",
            Entry::LiftBound => "mien bound lift",
            Entry::HairStrands => "mien hair strands",
            Entry::GnmCoop => "mien gnm blend (cooperative matrices)",
            Entry::GnmCoopFinish => "mien gnm finish",
            Entry::GnmCoopOne => "mien gnm blend, one row block (cooperative matrices)",
            Entry::MorphSkinned => "mien morph + skin",
        }
    }
}
