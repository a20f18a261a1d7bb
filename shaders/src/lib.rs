//! `mien-shaders`: every WGSL compute kernel of mien, one source per pipeline stage, shared by the
//! wgpu and Vulkan backends (STYLE 6: no templating of shader text), and the `#[repr(C)]` Rust
//! mirrors of the uniform structs they read (checked field by field against the WGSL in
//! `tests/layout.rs`).
//!
//! | kernel | entry points | reads | writes |
//! |---|---|---|---|
//! | [`MORPH`] | `main` | bind `(V,6)`, per tile slot table `(⌈V/64⌉,W)` and deltas, per block active slots `(⌈N/8⌉,W+1)` and weights `(⌈N/8⌉,W,8)` | morphed `(N,V,6)` |
//! | [`MORPH`] | `skinned` | as `main`, and joints + skin weights `(V,2)` vec4 ([`data::skin_words`]), per instance palettes `(N,P)` | posed `(N,V,6)` (rigs without tangents: morph and skin in one pass) |
//! | [`SKIN`] | `main` | morphed `(N,V,6)`, joints, skin weights, per instance palettes `(N,P)` | posed `(N,V,6)` |
//! | [`TANGENT`] | `main` | per chunk row starts + entry slots, base tangents `(V,4)` + tangent deltas `(nnz,3)`, dense weights `(N,W)`, morphed `(N,V,6)`, joints, skin weights, palettes `(N,P)` | posed tangents `(N,V,4)` (rigs that carry tangents only) |
//! | [`LIFT_DEBUG`] | `lift`, `clear` | posed `(V,6)` from `posed_base`, tints | the four sink buffers |
//! | [`LIFT_BOUND`] | `main` | posed `(V,6)` from `posed_base`, triangles `(T,3)`, gaussians `(G,3)` vec4 | the four sink buffers |
//! | [`HAIR`] | `main` | guide points `(N, G·(S+1))` vec4, children `(C,)` (three guides, weights, tint) | the four sink buffers, `C·S` slots per instance |
//! | [`GNM`] | `forward` | fp16 basis words, neutral + seam + eye weights `(V,2)` vec4, per instance eye frames `(N,)` and scaled coefficients `(N,E)` | head-local `(N,V,6)` (then [`SKIN`] with z = N) |
//!
//! Every kernel runs [`WORKGROUP_SIZE`] invocations per workgroup and maps invocation
//! `gid.x + gid.y · row_width` to an element, so a dispatch larger than the per-dimension workgroup
//! limit is laid out in 2D ([`dispatch_size`]). [`MORPH`] and [`SKIN`] take the instance
//! of a batch (N characters sharing one rig or pack) from `gid.z`; z = 1 is the single character.
//! [`GNM`] is the exception: a blocked GEMM of 192 invocations per workgroup, one workgroup per basis
//! tile and block of instances ([`gnm_dispatch`]).

pub mod data;

use bytemuck::{Pod, Zeroable};

/// A WGSL kernel: its file name, source text, compute entry points and their SPIR-V.
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    /// File name in `shaders/src/`.
    pub file: &'static str,
    /// WGSL source.
    pub source: &'static str,
    /// Compute entry points.
    pub entry_points: &'static [&'static str],
    /// SPIR-V 1.3 of each entry point (same order), compiled from `source` by naga in `build.rs`;
    /// little-endian words as bytes (read with `ash::util::read_spv` or [`spirv_words`]).
    pub spirv: &'static [&'static [u8]],
    /// Uses `unpack2x16float` (f16 values held in f32): naga validates it only with the capability
    /// `SHADER_FLOAT16_IN_FLOAT32`, which wgpu grants on devices with the downlevel flag
    /// `SHADER_F16_IN_F32` (every Vulkan device except llvmpipe without `SHADER_F16`). Vulkan itself
    /// needs no feature for it (GLSL.std.450 `UnpackHalf2x16` is core).
    pub f16_in_f32: bool,
    /// Invocations per workgroup (`@workgroup_size`): [`WORKGROUP_SIZE`], except [`GNM`]'s blocked
    /// GEMM ([`GNM_WORKGROUP_SIZE`]).
    pub workgroup_size: u32,
}

/// The SPIR-V of `entry` in `kernel`, as words.
///
/// # Panics
/// Never for the kernels of this crate (their byte lengths are multiples of 4); returns `None`
/// for an unknown entry point.
pub fn spirv_words(kernel: &Kernel, entry: &str) -> Option<Vec<u32>> {
    let i = kernel.entry_points.iter().position(|e| *e == entry)?;
    Some(
        kernel.spirv[i]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

macro_rules! spv {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $name))
    };
}

/// The morph-target blend over the active slots (`morph.wgsl`): `main` writes the morphed vertices
/// for [`SKIN`] and [`TANGENT`]; `skinned` (rigs without tangents) skins them in registers and
/// writes the posed vertices, so the morphed copy is never stored.
pub const MORPH: Kernel = Kernel {
    file: "morph.wgsl",
    source: include_str!("morph.wgsl"),
    entry_points: &["main", "skinned"],
    spirv: &[spv!("morph.main.spv"), spv!("morph.skinned.spv")],
    f16_in_f32: false,
    workgroup_size: WORKGROUP_SIZE,
};

/// Linear-blend skinning (`skin.wgsl`).
pub const SKIN: Kernel = Kernel {
    file: "skin.wgsl",
    source: include_str!("skin.wgsl"),
    entry_points: &["main"],
    spirv: &[spv!("skin.main.spv")],
    f16_in_f32: false,
    workgroup_size: WORKGROUP_SIZE,
};

/// Tangents of rigs that carry them: the morph blend re-orthogonalised against the blended normal,
/// then skinned by the joints' linear parts (`tangent.wgsl`; after [`MORPH`]).
pub const TANGENT: Kernel = Kernel {
    file: "tangent.wgsl",
    source: include_str!("tangent.wgsl"),
    entry_points: &["main"],
    spirv: &[spv!("tangent.main.spv")],
    f16_in_f32: false,
    workgroup_size: WORKGROUP_SIZE,
};

/// The debug vertex lift and the clear-unused-slots pass (`lift_debug.wgsl`).
pub const LIFT_DEBUG: Kernel = Kernel {
    file: "lift_debug.wgsl",
    source: include_str!("lift_debug.wgsl"),
    entry_points: &["lift", "clear"],
    spirv: &[spv!("lift_debug.lift.spv"), spv!("lift_debug.clear.spv")],
    f16_in_f32: false,
    workgroup_size: WORKGROUP_SIZE,
};

/// The linear head model's forward pass: expression basis, eyes, seam (`gnm.wgsl`); its output is
/// [`SKIN`]'s input.
pub const GNM: Kernel = Kernel {
    file: "gnm.wgsl",
    source: include_str!("gnm.wgsl"),
    entry_points: &["forward"],
    spirv: &[spv!("gnm.forward.spv")],
    f16_in_f32: true,
    workgroup_size: GNM_WORKGROUP_SIZE,
};

/// The linear head's forward pass on tensor cores (`gnm_coop.wgsl`): the output of [`GNM`] then
/// [`SKIN`], with the blend as a cooperative-matrix GEMM (`blend`: fp16 inputs, fp32
/// accumulation, 16×16×16 per step at subgroup scope, one workgroup one subgroup of 32) and the
/// eyes, seam and LBS after it (`finish`, [`GNM_COOP_FINISH_WORKGROUP_SIZE`]). Needs `shaderFloat16`,
/// `storageBuffer16BitAccess`, `uniformAndStorageBuffer16BitAccess` and `VK_KHR_cooperative_matrix`
/// with that shape (the Vulkan backend enables them when the device lists them and runs it only
/// then); not in [`ALL`].
pub const GNM_COOP: Kernel = Kernel {
    file: "gnm_coop.wgsl",
    source: include_str!("gnm_coop.wgsl"),
    entry_points: &["blend", "blend_one", "finish"],
    spirv: &[
        spv!("gnm_coop.blend.spv"),
        spv!("gnm_coop.blend_one.spv"),
        spv!("gnm_coop.finish.spv"),
    ],
    f16_in_f32: false,
    workgroup_size: GNM_COOP_WORKGROUP_SIZE,
};

/// [`GNM_COOP`]'s `blend` workgroup: one subgroup of 32 invocations.
pub const GNM_COOP_WORKGROUP_SIZE: u32 = 32;

/// [`GNM_COOP`]'s `finish` workgroup: 64 vertices of one instance.
pub const GNM_COOP_FINISH_WORKGROUP_SIZE: u32 = 64;

/// Instances per [`GNM_COOP`] `blend` workgroup (4 A matrices of 16 rows): the host's fp16
/// coefficient rows are padded with zero rows to a multiple of it. (`blend_one`, for batches of
/// up to [`GNM_COOP_ROW_BLOCK`], has one A matrix.)
pub const GNM_COOP_INSTANCE_BLOCK: u32 = 64;

/// Rows of one A matrix of [`GNM_COOP`]: the blended deltas' instance rows are padded to a
/// multiple of it (row blocks past the batch are not stored).
pub const GNM_COOP_ROW_BLOCK: u32 = 16;

/// [`GNM_COOP`] `blend` workgroups per vertex tile: each owns 64 of the tile's 192 columns.
pub const GNM_COOP_TILE_SPLIT: u32 = 3;

/// The per-chunk uniform of [`GNM_COOP`] (WGSL `GnmCoopParams`, 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GnmCoopParams {
    /// Vertices in this chunk (its first vertex starts a tile).
    pub count: u32,
    /// Expression coefficients E.
    pub coeffs: u32,
    /// Instances N of the batch.
    pub instances: u32,
    /// E rounded up to 16: the stride of the fp16 coefficient rows.
    pub stride: u32,
}

/// Device features the kernels need beyond Vulkan 1.1 / WebGPU core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelFeatures {
    /// `f16` arithmetic (`shaderFloat16`, wgpu `SHADER_F16`).
    pub shader_f16: bool,
    /// 16-bit values in storage buffers (`storageBuffer16BitAccess`).
    pub storage_16bit: bool,
}

/// What today's kernels need: nothing beyond core (every value is 32-bit; [`GNM`]'s fp16 basis is
/// read as `u32` words and widened with `unpack2x16float`, see [`Kernel::f16_in_f32`]). A kernel that starts
/// using `f16` sets these, and the Vulkan backend then enables the features or refuses the device
/// with `MissingFeature`.
pub const REQUIRED_FEATURES: KernelFeatures = KernelFeatures {
    shader_f16: false,
    storage_16bit: false,
};

/// Bound gaussians (surface, texel, captured-splat lifts) posed on their triangles
/// (`lift_bound.wgsl`).
pub const LIFT_BOUND: Kernel = Kernel {
    file: "lift_bound.wgsl",
    source: include_str!("lift_bound.wgsl"),
    entry_points: &["main"],
    spirv: &[spv!("lift_bound.main.spv")],
    f16_in_f32: false,
    workgroup_size: WORKGROUP_SIZE,
};

/// Hair: child strands interpolated from the guides and turned into elongated gaussians, one per
/// segment (`hair.wgsl`; the CPU reference is `mien_core::hair::strand_splats`).
pub const HAIR: Kernel = Kernel {
    file: "hair.wgsl",
    source: include_str!("hair.wgsl"),
    entry_points: &["main"],
    spirv: &[spv!("hair.main.spv")],
    f16_in_f32: false,
    workgroup_size: WORKGROUP_SIZE,
};

/// Every kernel.
pub const ALL: [Kernel; 7] = [MORPH, SKIN, TANGENT, LIFT_DEBUG, LIFT_BOUND, GNM, HAIR];

/// The uniform of [`HAIR`] (WGSL `HairParams`, 80 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct HairParams {
    /// Root colour rgb in `[0,1]` (w unused).
    pub colour_root: [f32; 4],
    /// Tip colour rgb in `[0,1]` (w unused).
    pub colour_tip: [f32; 4],
    /// Slots `C·S` of one instance.
    pub count: u32,
    /// Invocations per dispatch row.
    pub row_width: u32,
    /// Segments `S` per strand.
    pub segments: u32,
    /// First slot relative to the bound range of `center` / `cov_a` / `cov_b`.
    pub slot_base_vec4: u32,
    /// First slot relative to the bound range of `color`.
    pub slot_base_color: u32,
    /// Slots between instance z's range and instance z+1's.
    pub slot_stride: u32,
    /// Guide points `G·(S+1)` between instance z's guides and instance z+1's.
    pub guide_stride: u32,
    /// Clump in `[0,1]`.
    pub clump: f32,
    /// Thickness at the root, metres.
    pub thickness_root: f32,
    /// Thickness at the tip, metres.
    pub thickness_tip: f32,
    /// Padding to 16 bytes.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

/// One child strand as [`HAIR`] reads it (WGSL `Child`, 32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct HairChild {
    /// Its own guide, then two neighbours (w unused).
    pub guides: [u32; 4],
    /// Their weights (xyz, summing to 1) and the colour tint (w).
    pub weights: [f32; 4],
}

/// Invocations per workgroup of every kernel (`@workgroup_size(64)`).
pub const WORKGROUP_SIZE: u32 = 64;

/// The uniform of [`MORPH`], [`SKIN`] and [`TANGENT`] (WGSL `DispatchParams`, 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DispatchParams {
    /// Elements (vertices) this dispatch covers.
    pub count: u32,
    /// Invocations per dispatch row: `workgroups_x · WORKGROUP_SIZE`.
    pub row_width: u32,
    /// Padding to 16 bytes (uniform structs are 16-byte aligned).
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

/// One palette entry as [`SKIN`] reads it (WGSL `Joint`, 128 bytes): the joint matrix and its normal
/// matrix (3×3 in the upper-left of a column-major 4×4).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct JointMatrices {
    /// Joint matrix, column-major.
    pub m: [f32; 16],
    /// Normal matrix (inverse transpose of the 3×3 part), column-major, fourth row/column zero.
    pub n: [f32; 16],
}

/// The uniform of [`LIFT_BOUND`] (WGSL `BoundParams`, 80 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BoundParams {
    /// Rows of the row-major 3×4 affine `A`.
    pub rows: [[f32; 4]; 3],
    /// Gaussians of the setup.
    pub gaussians: u32,
    /// Slots in the dispatch.
    pub count: u32,
    /// Invocations per dispatch row.
    pub row_width: u32,
    /// First slot relative to the bound range of `center` / `cov_a` / `cov_b`.
    pub slot_base_vec4: u32,
    /// First slot relative to the bound range of `color`.
    pub slot_base_color: u32,
    /// First vertex of the instance in the bound posed buffer.
    pub posed_base: u32,
    /// Vertices between consecutive instances of a batched lift in the posed buffer (instance
    /// `z` of the dispatch reads from `posed_base + z · posed_stride`; 0 for one instance).
    pub posed_stride: u32,
    /// Slots between consecutive instances of a batched lift (instance `z` writes from the slot
    /// bases + `z · slot_stride`; 0 for one instance).
    pub slot_stride: u32,
}

/// The uniform of [`LIFT_DEBUG`] (WGSL `LiftParams`, 128 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LiftParams {
    /// Row 0 of the row-major 3×4 affine `A`.
    pub row0: [f32; 4],
    /// Row 1.
    pub row1: [f32; 4],
    /// Row 2.
    pub row2: [f32; 4],
    /// `(c00, c01, c02, c11)` of `σ²·L·Lᵀ`, m².
    pub cov_a: [f32; 4],
    /// `(c12, c22, 0, 0)`, m².
    pub cov_b: [f32; 4],
    /// Flat colour rgb in `[0,1]`, w = opacity.
    pub flat_color: [f32; 4],
    /// xyz: centre normal shading points away from when a normal is zero, metres.
    pub centroid: [f32; 4],
    /// Vertices (`lift`) or slots (`clear`) in this dispatch.
    pub count: u32,
    /// Invocations per dispatch row.
    pub row_width: u32,
    /// First slot relative to the bound range of `center`, `cov_a`, `cov_b`.
    pub slot_base_vec4: u32,
    /// First slot relative to the bound range of `color`.
    pub slot_base_color: u32,
    /// 0 tint, 1 normal, 2 flat.
    pub shading: u32,
    /// First vertex of this dispatch in the bound posed buffer (instance `i` of a batch starts at
    /// `i × chunk vertices`); tints are indexed from 0.
    pub posed_base: u32,
    /// Batched lift: slots between instance z's range and instance z+1's (0 for a single lift).
    pub slot_stride: u32,
    /// Batched lift: posed vertices between instance z and instance z+1 (0 for a single lift).
    pub posed_stride: u32,
}

/// Workgroups `(x, y)` and `row_width` for `count` invocations when one dispatch dimension holds at
/// most `max_per_dimension` workgroups: `x = min(groups, max)`, `y = ceil(groups / x)`.
///
/// Returns `None` when even a square 2D layout cannot hold `count` (more than `max² · 64`
/// invocations).
pub fn dispatch_size(count: u32, max_per_dimension: u32) -> Option<(u32, u32, u32)> {
    let groups = count.div_ceil(WORKGROUP_SIZE).max(1);
    let max = max_per_dimension.max(1);
    let x = groups.min(max);
    let y = groups.div_ceil(x);
    if y > max {
        return None;
    }
    Some((x, y, x * WORKGROUP_SIZE))
}

/// The per-chunk uniform of [`GNM`] (WGSL `GnmParams`, 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GnmParams {
    /// Vertices in this chunk (its first vertex starts a tile).
    pub count: u32,
    /// Expression coefficients E.
    pub coeffs: u32,
    /// Instances N of the batch.
    pub instances: u32,
    /// Padding to 16 bytes.
    pub _pad0: u32,
}

/// Invocations per workgroup of [`GNM`]: 8 coefficient slices × 24 column invocations (each 8
/// halves of a 192-half tile row).
pub const GNM_WORKGROUP_SIZE: u32 = 192;

/// Vertices per basis tile of [`GNM`] (`TV` in `gnm.wgsl`; see `mien_core::gnm::tiled`): a tile's
/// row for one coefficient is 192 halves, 24 × 16 bytes.
pub const GNM_TILE_VERTICES: u32 = 64;

/// Instances one [`GNM`] workgroup poses (`IB` in `gnm.wgsl`): each basis load is applied to this
/// many characters' coefficients.
pub const GNM_INSTANCE_BLOCK: u32 = 8;

/// Workgroups `(x, y)` of [`GNM`] for a chunk of `count` vertices posed as `instances` instances:
/// x = instance blocks ([`GNM_INSTANCE_BLOCK`], neighbouring workgroups share a tile), y = tiles
/// ([`GNM_TILE_VERTICES`]). `None` when either exceeds `max_per_dimension`.
pub fn gnm_dispatch(count: u32, instances: u32, max_per_dimension: u32) -> Option<(u32, u32)> {
    let x = instances.div_ceil(GNM_INSTANCE_BLOCK).max(1);
    let y = count.div_ceil(GNM_TILE_VERTICES).max(1);
    (x <= max_per_dimension && y <= max_per_dimension).then_some((x, y))
}

/// One instance's eye inputs in [`GNM`]'s `heads` array (WGSL `GnmFrameHeader`, 128 bytes); the
/// instance's scaled coefficients are in the separate `scaled` array (`data::gnm::GnmBatchFrames`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GnmFrameHeader {
    /// Left eye rotation, column-major `mat3x3` (each column padded to a `vec4`).
    pub eye_rot_l: [[f32; 4]; 3],
    /// Right eye rotation.
    pub eye_rot_r: [[f32; 4]; 3],
    /// Left eye centre xyz, metres (w unused).
    pub eye_centre_l: [f32; 4],
    /// Right eye centre xyz, metres (w unused).
    pub eye_centre_r: [f32; 4],
}
