//! Uploading a rig to Vulkan as a batch of N instances: the per-instance weights `(N,W)` and
//! palettes `(N,P)` and active slots per block of 8 (host-visible, whole, rest frames written at creation), and per vertex-range
//! chunk the rig's arrays (bind vertices, morph tile slots and deltas, skin joints and weights, tints — once, whatever N),
//! the outputs `(N,count,6)`, the uniform and the descriptor sets.

use std::sync::Arc;

use ash::vk;
use mien_core::rig::{FrameControls, RigData};
use mien_shaders::data::rig::{RigBatchFrames, TANGENT_VERTEX_BYTES, plan_rig_upload};
use mien_shaders::data::{VERTEX_BYTES, chunk_arrays};
use mien_shaders::{DispatchParams, dispatch_size};

use super::{Chunk, Upload, VulkanRigBackend};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;

const STORAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::STORAGE_BUFFER;

impl VulkanRigBackend {
    /// Upload `rig` for `instances` characters (≥ 1; the caller checked).
    pub(super) fn upload_rig(&self, rig: &RigData, instances: u32) -> Result<Upload> {
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
            return Err(over(
                "the instances of one upload".into(),
                "maxComputeWorkGroupCount[2]",
                u64::from(counts[2]),
                u64::from(instances),
            ));
        }
        let plan = plan_rig_upload(rig, instances, limit)
            .map_err(|o| over(o.what, "maxStorageBufferRange", limit, o.needed))?;
        let max_groups = counts[0].min(counts[1]);
        let staged = RigBatchFrames::new(rig, instances as usize);
        let host = |what: &str, size: u64, bytes: &[u8]| -> Result<Buffer> {
            let b = ctx.buffer(what, size, STORAGE, MemoryLocation::CpuToGpu)?;
            b.write(0, bytes);
            Ok(b)
        };
        let weights = host(
            "the morph weights",
            4 * staged.weights_capacity() as u64,
            bytemuck::cast_slice(&staged.weights),
        )?;
        let active = host(
            "the active slots",
            4 * staged.active_capacity() as u64,
            bytemuck::cast_slice(&staged.active),
        )?;
        let palette_bytes: &[u8] = bytemuck::cast_slice(&staged.palette);
        let palette = host(
            "the joint palettes",
            palette_bytes.len() as u64,
            palette_bytes,
        )?;
        let carries_tangents = !rig.tangents.is_empty();
        let dense = if carries_tangents {
            let rows = bytemuck::cast_slice(staged.rows());
            Some(host(
                "the dense morph weights",
                (rows.len() as u64).max(4),
                rows,
            )?)
        } else {
            None
        };
        let n = plan.len() as u32;
        // Per chunk: morph (1 + 6), skin (1 + 5) and, with tangents, tangent (1 + 8).
        let t = u32::from(carries_tangents);
        let pool = Arc::new(DescriptorPool::new(
            ctx,
            (2 + t) * n,
            (2 + t) * n,
            (11 + 8 * t) * n,
        )?);
        let layouts = &ctx.inner.pipelines;
        let mut chunks = Vec::with_capacity(plan.len());
        let mut bytes = weights.size() + active.size() + palette.size();
        bytes += dense.as_ref().map_or(0, Buffer::size);
        for (v0, count) in plan {
            let a = chunk_arrays(rig, v0, count);
            let (gx, gy, row_width) = dispatch_size(count, max_groups).ok_or_else(|| {
                over(
                    format!("a dispatch of {count} vertices"),
                    "maxComputeWorkGroupCount",
                    u64::from(max_groups),
                    u64::from(count.div_ceil(64)),
                )
            })?;
            let params = DispatchParams {
                count,
                row_width,
                _pad0: 0,
                _pad1: 0,
            };
            let uniform = ctx.upload(
                "dispatch parameters",
                bytemuck::bytes_of(&params),
                vk::BufferUsageFlags::UNIFORM_BUFFER,
            )?;
            let base = ctx.upload("bind vertices", bytemuck::cast_slice(&a.base), STORAGE)?;
            let slots = bytemuck::cast_slice(&a.tile_slots);
            let tile_slots = ctx.upload("morph tile slots", slots, STORAGE)?;
            let deltas = ctx.upload("morph deltas", bytemuck::cast_slice(&a.deltas), STORAGE)?;
            let joints = ctx.upload("skin joints", bytemuck::cast_slice(&a.joints), STORAGE)?;
            let skin_w = ctx.upload("skin weights", bytemuck::cast_slice(&a.weights), STORAGE)?;
            let tints = ctx.upload("vertex tints", bytemuck::cast_slice(&a.tints), STORAGE)?;
            let out_usage =
                STORAGE | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
            let out_bytes = u64::from(count) * u64::from(instances) * VERTEX_BYTES;
            let gpu = MemoryLocation::GpuOnly;
            let morphed = ctx.buffer("morphed vertices", out_bytes, out_usage, gpu)?;
            let posed = ctx.buffer("posed vertices", out_bytes, out_usage, gpu)?;
            let morph_set = pool.allocate(layouts.morph_layout.set)?;
            let skin_set = pool.allocate(layouts.skin_layout.set)?;
            let whole = |b: &Buffer| (b.handle(), 0u64, vk::WHOLE_SIZE);
            // SAFETY: the sets are fresh (no pending use); handles are live; binding counts match the
            // layouts (1 uniform + 6 / + 5 storage).
            unsafe {
                raw::write_set(
                    ctx.device(),
                    morph_set,
                    &[
                        whole(&uniform),
                        whole(&base),
                        whole(&tile_slots),
                        whole(&active),
                        whole(&deltas),
                        whole(&weights),
                        whole(&morphed),
                    ],
                );
                raw::write_set(
                    ctx.device(),
                    skin_set,
                    &[
                        whole(&uniform),
                        whole(&morphed),
                        whole(&joints),
                        whole(&skin_w),
                        whole(&palette),
                        whole(&posed),
                    ],
                );
            }
            let tangent = match &dense {
                Some(dense) => {
                    let rows = ctx.upload(
                        "tangent rows",
                        bytemuck::cast_slice(&a.tangent_rows),
                        STORAGE,
                    )?;
                    let data = ctx.upload(
                        "tangent data",
                        bytemuck::cast_slice(&a.tangent_data),
                        STORAGE,
                    )?;
                    let size = u64::from(count) * u64::from(instances) * TANGENT_VERTEX_BYTES;
                    let out = ctx.buffer("posed tangents", size, out_usage, gpu)?;
                    let set = pool.allocate(layouts.tangent_layout.set)?;
                    // SAFETY: as above; 1 uniform + 8 storage, the tangent layout.
                    unsafe {
                        raw::write_set(
                            ctx.device(),
                            set,
                            &[
                                whole(&uniform),
                                whole(&rows),
                                whole(&data),
                                whole(dense),
                                whole(&morphed),
                                whole(&joints),
                                whole(&skin_w),
                                whole(&palette),
                                whole(&out),
                            ],
                        );
                    }
                    Some((rows, data, out, set))
                }
                None => None,
            };
            let mut buffers = vec![
                uniform,
                base,
                tile_slots,
                deltas,
                joints,
                skin_w,
                tints.clone(),
                morphed.clone(),
                posed.clone(),
            ];
            let tangent = tangent.map(|(rows, data, out, set)| {
                buffers.extend([rows, data, out.clone()]);
                (out, set)
            });
            bytes += buffers.iter().map(Buffer::size).sum::<u64>();
            chunks.push(Chunk {
                v0,
                count,
                posed,
                tints,
                morphed,
                buffers,
                morph_set,
                skin_set,
                tangent,
                groups: (gx, gy),
            });
        }
        Ok(Upload {
            chunks,
            vertex_count: rig.vertex_count() as u32,
            frames: vec![FrameControls::new(rig); instances as usize],
            staged,
            weights,
            weights_dirty: false,
            packed_stale: false,
            active,
            palette,
            palette_dirty: false,
            dense,
            pool,
            bytes,
        })
    }
}
