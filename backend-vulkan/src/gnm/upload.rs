//! Uploading a linear head to Vulkan: the batch's per-instance buffers (host-visible, rest frames
//! written at creation) and, per vertex-range chunk, the basis words, static arrays, skin arrays,
//! outputs and descriptor sets.

use std::sync::Arc;

use ash::vk;
use mien_core::gnm::tiled::BasisTiles;
use mien_core::gnm::{GnmFrame, GnmPack};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::gnm::{GnmBatchFrames, gnm_chunk_arrays, plan_gnm_upload};
use mien_shaders::{DispatchParams, GNM_TILE_VERTICES, GnmParams, dispatch_size, gnm_dispatch};

use super::VulkanGnmBackend;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;

const STORAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::STORAGE_BUFFER;

/// A contiguous vertex range of one upload with its buffers and descriptor sets (outputs hold every
/// instance).
pub(super) struct Chunk {
    pub(super) count: u32,
    pub(super) local: Buffer,
    pub(super) posed: Buffer,
    pub(super) buffers: Vec<Buffer>,
    pub(super) forward_set: vk::DescriptorSet,
    pub(super) skin_set: vk::DescriptorSet,
    pub(super) forward_groups: (u32, u32),
    pub(super) skin_groups: (u32, u32),
}

/// One uploaded pack and its N instances.
pub(super) struct Upload {
    pub(super) chunks: Vec<Chunk>,
    pub(super) vertex_count: u32,
    pub(super) frames: Vec<GnmFrame>,
    pub(super) staged: GnmBatchFrames,
    pub(super) heads: Buffer,
    pub(super) scaled: Buffer,
    pub(super) palette: Buffer,
    /// The staged frames changed since they were last written whole (`set_head_ext_batch`;
    /// `set_head_ext` writes its instance's slices at once).
    pub(super) dirty: bool,
    pub(super) pool: Arc<DescriptorPool>,
    /// White vertex tints `(max chunk vertices,)` for a lift (a pack has no vertex colours).
    pub(super) tint: Buffer,
    pub(super) bytes: u64,
}

impl VulkanGnmBackend {
    pub(super) fn upload(&self, pack: &GnmPack, instances: u32) -> Result<Upload> {
        let ctx = &self.ctx;
        let limit = self.binding_limit;
        let counts = ctx.properties().limits.max_compute_work_group_count;
        let over = |what: String, limit_name, limit, needed| Error::OverLimits {
            what,
            limit_name,
            limit,
            needed,
        };
        if instances > counts[2] {
            let what = "the instances of one upload".into();
            return Err(over(
                what,
                "maxComputeWorkGroupCount[2]",
                u64::from(counts[2]),
                u64::from(instances),
            ));
        }
        let plan = plan_gnm_upload(pack, instances, limit)
            .map_err(|o| over(o.what, "maxStorageBufferRange", limit, o.needed))?;
        let (nv, e) = (pack.vertex_count() as u32, pack.coeff_count() as u32);
        let tiles = BasisTiles::new(pack, GNM_TILE_VERTICES as usize);
        let max_groups = counts[0].min(counts[1]);
        let too_many = |count: u32| {
            let what = format!("a dispatch of {count} vertices");
            over(
                what,
                "maxComputeWorkGroupCount",
                u64::from(max_groups),
                u64::from(count),
            )
        };
        let frame = GnmFrame::new(pack);
        let staged = GnmBatchFrames::new(&frame, instances as usize);
        let host = |what: &str, bytes: &[u8]| -> Result<Buffer> {
            let b = ctx.buffer(what, bytes.len() as u64, STORAGE, MemoryLocation::CpuToGpu)?;
            b.write(0, bytes);
            Ok(b)
        };
        let heads = host("the head eye frames", bytemuck::cast_slice(&staged.heads))?;
        let scaled = host(
            "the head coefficients",
            bytemuck::cast_slice(&staged.scaled),
        )?;
        let palette = host("the head palettes", bytemuck::cast_slice(&staged.palette))?;
        let n = plan.len() as u32;
        let pool = Arc::new(DescriptorPool::new(ctx, 2 * n, 2 * n, 10 * n)?);
        let layouts = &ctx.inner.pipelines;
        let mut chunks = Vec::with_capacity(plan.len());
        let mut bytes = heads.size() + scaled.size() + palette.size();
        let uniform = vk::BufferUsageFlags::UNIFORM_BUFFER;
        for (v0, count) in plan {
            let a = gnm_chunk_arrays(pack, &tiles, v0, count);
            let (fx, fy) =
                gnm_dispatch(count, instances, max_groups).ok_or_else(|| too_many(count))?;
            let (sx, sy, s_row) =
                dispatch_size(count, max_groups).ok_or_else(|| too_many(count))?;
            let forward_params = GnmParams {
                count,
                coeffs: e,
                instances,
                _pad0: 0,
            };
            let forward_params = ctx.upload(
                "head dispatch parameters",
                bytemuck::bytes_of(&forward_params),
                uniform,
            )?;
            let skin_params = DispatchParams {
                count,
                row_width: s_row,
                _pad0: 0,
                _pad1: 0,
            };
            let skin_params = ctx.upload(
                "head skin dispatch parameters",
                bytemuck::bytes_of(&skin_params),
                uniform,
            )?;
            let basis = ctx.upload("the head basis", bytemuck::cast_slice(&a.basis), STORAGE)?;
            let statics = ctx.upload(
                "head neutral, seam and eye weights",
                bytemuck::cast_slice(&a.statics),
                STORAGE,
            )?;
            let joints =
                ctx.upload("head skin joints", bytemuck::cast_slice(&a.joints), STORAGE)?;
            let weights = ctx.upload(
                "head skin weights",
                bytemuck::cast_slice(&a.weights),
                STORAGE,
            )?;
            let out_usage =
                STORAGE | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
            let out_bytes = u64::from(count) * u64::from(instances) * VERTEX_BYTES;
            let gpu = MemoryLocation::GpuOnly;
            let local = ctx.buffer("head-local vertices", out_bytes, out_usage, gpu)?;
            let posed = ctx.buffer("posed head vertices", out_bytes, out_usage, gpu)?;
            let forward_set = pool.allocate(layouts.gnm_layout.set)?;
            let skin_set = pool.allocate(layouts.skin_layout.set)?;
            let whole = |b: &Buffer| (b.handle(), 0u64, vk::WHOLE_SIZE);
            // SAFETY: the sets are fresh (no pending use); handles are live; binding counts match
            // the layouts (1 uniform + 5 storage each).
            unsafe {
                raw::write_set(
                    ctx.device(),
                    forward_set,
                    &[
                        whole(&forward_params),
                        whole(&heads),
                        whole(&scaled),
                        whole(&basis),
                        whole(&statics),
                        whole(&local),
                    ],
                );
                raw::write_set(
                    ctx.device(),
                    skin_set,
                    &[
                        whole(&skin_params),
                        whole(&local),
                        whole(&joints),
                        whole(&weights),
                        whole(&palette),
                        whole(&posed),
                    ],
                );
            }
            let buffers = vec![
                forward_params,
                skin_params,
                basis,
                statics,
                joints,
                weights,
                local.clone(),
                posed.clone(),
            ];
            bytes += buffers.iter().map(Buffer::size).sum::<u64>();
            chunks.push(Chunk {
                count,
                local,
                posed,
                buffers,
                forward_set,
                skin_set,
                forward_groups: (fx, fy),
                skin_groups: (sx, sy),
            });
        }
        let widest = chunks.iter().map(|c| c.count).max().unwrap_or(1);
        let tint = ctx.upload(
            "white head tints",
            bytemuck::cast_slice(&vec![u32::MAX; widest as usize]),
            STORAGE,
        )?;
        Ok(Upload {
            chunks,
            vertex_count: nv,
            frames: vec![frame; instances as usize],
            staged,
            heads,
            scaled,
            palette,
            dirty: false,
            pool,
            tint,
            bytes: bytes + u64::from(widest) * 4,
        })
    }
}
