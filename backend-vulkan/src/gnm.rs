//! The Vulkan linear-head backend: a batch of `.aosrig` heads, each split into vertex-range chunks
//! whose every binding fits `maxStorageBufferRange`, posed by the GNM forward kernel and the morph
//! path's skin kernel recorded into one command buffer.

use std::sync::Arc;

use ash::vk;
use glam::Mat4;
use mien_core::gnm::{GnmBackend, GnmFrame, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::gnm::{
    gnm_chunk_arrays, gnm_frame, gnm_frame_bytes, gnm_palette, plan_gnm_chunks,
};
use mien_shaders::{
    DispatchParams, GnmParams, JointMatrices, dispatch_size, gnm_dispatch, gnm_lanes,
};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;

const JOINT_BYTES: u64 = std::mem::size_of::<JointMatrices>() as u64;
const STORAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::STORAGE_BUFFER;

/// A contiguous vertex range of one head with its buffers and descriptor sets.
struct Chunk {
    count: u32,
    local: Buffer,
    posed: Buffer,
    buffers: Vec<Buffer>,
    forward_set: vk::DescriptorSet,
    skin_set: vk::DescriptorSet,
    forward_groups: (u32, u32),
    skin_groups: (u32, u32),
}

struct GpuHead {
    chunks: Vec<Chunk>,
    vertex_count: u32,
    frame: GnmFrame,
    frame_bytes: Vec<u8>,
    palette_entries: Vec<JointMatrices>,
    frame_buffer: Buffer,
    palette: Buffer,
    pool: Arc<DescriptorPool>,
    bytes: u64,
}

/// [`GnmBackend`] on raw Vulkan: `gnm.wgsl` (basis, eyes, seam) then `skin.wgsl` (the morph path's
/// LBS kernel and data layout) for every uploaded head, with a compute barrier after each stage,
/// recorded into a [`VulkanEncoder`]. The basis is uploaded verbatim (fp16 pairs, staged when device
/// memory is not host-visible), split by vertex ranges so no binding exceeds
/// `maxStorageBufferRange`; per frame only the frame buffer (`(E,)` scaled coefficients, eye
/// rotations) and the palette (host-visible, coherent) are written. The passes write no timestamps.
///
/// `set_head_ext` waits for this context's submissions in flight before rewriting the per-frame
/// buffers (as [`crate::VulkanRigBackend::set_controls`]).
pub struct VulkanGnmBackend {
    ctx: VulkanContext,
    heads: Vec<GpuHead>,
    binding_limit: u64,
}

impl std::fmt::Debug for VulkanGnmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanGnmBackend")
            .field("heads", &self.heads.len())
            .field("binding_limit", &self.binding_limit)
            .finish()
    }
}

impl Drop for VulkanGnmBackend {
    fn drop(&mut self) {
        // Submissions through the context keep what they use alive; this also covers an engine
        // that recorded mien's passes and is still executing them.
        let _ = self.ctx.wait();
    }
}

impl VulkanGnmBackend {
    /// An empty batch on `ctx`.
    pub fn new(ctx: &VulkanContext) -> Self {
        VulkanGnmBackend {
            ctx: ctx.clone(),
            heads: Vec::new(),
            binding_limit: ctx.binding_limit(),
        }
    }

    /// Like [`VulkanGnmBackend::new`] but splitting heads as if `maxStorageBufferRange` were
    /// `bytes` (256 up to the real one), so the split path runs on small packs.
    pub fn with_binding_limit(ctx: &VulkanContext, bytes: u64) -> Self {
        VulkanGnmBackend {
            ctx: ctx.clone(),
            heads: Vec::new(),
            binding_limit: bytes.clamp(256, ctx.binding_limit()),
        }
    }

    /// The context.
    pub fn context(&self) -> &VulkanContext {
        &self.ctx
    }

    /// Vertex-range chunks of `head` as `(vertices,)` per chunk (tests: how a pack was split).
    ///
    /// # Errors
    /// An unknown handle.
    pub fn chunk_sizes(&self, head: GnmHandle) -> mien_core::Result<Vec<u32>> {
        Ok(self.head(head)?.chunks.iter().map(|c| c.count).collect())
    }

    fn head(&self, h: GnmHandle) -> Result<&GpuHead, mien_core::Error> {
        self.heads
            .get(h.0 as usize)
            .ok_or_else(|| mien_core::Error::Invalid {
                what: "head handle".into(),
                reason: format!("{} was not uploaded to this backend", h.0),
            })
    }

    /// Fill every head-local and posed buffer with `word` (a test aid: an unwritten element becomes
    /// visible).
    ///
    /// # Errors
    /// Device errors.
    pub fn poison_outputs(&self, word: u32) -> Result<()> {
        let mut enc = self.ctx.begin()?;
        for h in &self.heads {
            for c in &h.chunks {
                for b in [&c.local, &c.posed] {
                    // SAFETY: enc recording; whole buffer, size a multiple of 4.
                    unsafe {
                        self.ctx.device().cmd_fill_buffer(
                            enc.raw(),
                            b.handle(),
                            0,
                            vk::WHOLE_SIZE,
                            word,
                        )
                    };
                    enc.keep(b);
                }
            }
        }
        // SAFETY: enc recording.
        unsafe { raw::compute_barrier(self.ctx.device(), enc.raw()) };
        self.ctx.submit(enc)?;
        self.ctx.wait()
    }

    fn upload_head(&self, pack: &GnmPack) -> Result<GpuHead> {
        let limit = self.binding_limit;
        let over = |what: String, needed: u64| Error::OverLimits {
            what,
            limit_name: "maxStorageBufferRange",
            limit,
            needed,
        };
        let (nv, e) = (pack.vertex_count() as u32, pack.coeff_count() as u32);
        let j = pack.header.joints.len() as u64;
        let frame_bytes = gnm_frame_bytes(e as usize);
        if frame_bytes > limit {
            return Err(over("the scaled coefficients".into(), frame_bytes));
        }
        if (j + 1) * JOINT_BYTES > limit {
            return Err(over("the joint palette".into(), (j + 1) * JOINT_BYTES));
        }
        let plan = plan_gnm_chunks(nv, e, limit).map_err(|r| {
            over(
                format!("the basis row of vertex {} ({e} coefficients)", r.vertex),
                r.bytes,
            )
        })?;
        let ctx = &self.ctx;
        let lanes = gnm_lanes(e);
        let max_groups = ctx.properties().limits.max_compute_work_group_count[0];
        let too_many = |count: u32| Error::OverLimits {
            what: format!("a dispatch of {count} vertices"),
            limit_name: "maxComputeWorkGroupCount",
            limit: u64::from(max_groups),
            needed: u64::from(count),
        };
        let frame_buffer = ctx.buffer(
            "the head frame",
            frame_bytes,
            STORAGE,
            MemoryLocation::CpuToGpu,
        )?;
        let palette = ctx.buffer(
            "the head palette",
            (j + 1) * JOINT_BYTES,
            STORAGE,
            MemoryLocation::CpuToGpu,
        )?;
        let n = plan.len() as u32;
        let pool = Arc::new(DescriptorPool::new(ctx, 2 * n, 2 * n, 9 * n)?);
        let layouts = &ctx.inner.pipelines;
        let mut chunks = Vec::with_capacity(plan.len());
        let mut bytes = frame_buffer.size() + palette.size();
        for (v0, count) in plan {
            let a = gnm_chunk_arrays(pack, v0, count);
            let (fx, fy, f_row) =
                gnm_dispatch(count, lanes, max_groups).ok_or_else(|| too_many(count))?;
            let (sx, sy, s_row) =
                dispatch_size(count, max_groups).ok_or_else(|| too_many(count))?;
            let uniform = vk::BufferUsageFlags::UNIFORM_BUFFER;
            let forward_params = ctx.upload(
                "head dispatch parameters",
                bytemuck::bytes_of(&GnmParams {
                    count,
                    row_width: f_row,
                    coeffs: e,
                    lanes,
                    first_half: a.first_half,
                    ..GnmParams::default()
                }),
                uniform,
            )?;
            let skin_params = ctx.upload(
                "head skin dispatch parameters",
                bytemuck::bytes_of(&DispatchParams {
                    count,
                    row_width: s_row,
                    _pad0: 0,
                    _pad1: 0,
                }),
                uniform,
            )?;
            let basis = ctx.upload("the head basis", bytemuck::cast_slice(a.basis), STORAGE)?;
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
            let local = ctx.buffer(
                "head-local vertices",
                u64::from(count) * VERTEX_BYTES,
                out_usage,
                MemoryLocation::GpuOnly,
            )?;
            let posed = ctx.buffer(
                "posed head vertices",
                u64::from(count) * VERTEX_BYTES,
                out_usage,
                MemoryLocation::GpuOnly,
            )?;
            let forward_set = pool.allocate(layouts.gnm_layout.set)?;
            let skin_set = pool.allocate(layouts.skin_layout.set)?;
            let whole = |b: &Buffer| (b.handle(), 0u64, vk::WHOLE_SIZE);
            // SAFETY: the sets are fresh (no pending use); handles are live; binding counts match
            // the layouts (1 uniform + 4 / + 5 storage).
            unsafe {
                raw::write_set(
                    ctx.device(),
                    forward_set,
                    &[
                        whole(&forward_params),
                        whole(&frame_buffer),
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
        Ok(GpuHead {
            chunks,
            vertex_count: nv,
            frame: GnmFrame::new(pack),
            frame_bytes: Vec::new(),
            palette_entries: Vec::new(),
            frame_buffer,
            palette,
            pool,
            bytes,
        })
    }
}

/// Write `h`'s current frame to its host-visible buffers (no submission may be reading them).
fn write_frame(h: &mut GpuHead) {
    gnm_frame(&h.frame, &mut h.frame_bytes);
    h.frame_buffer.write(0, &h.frame_bytes);
    gnm_palette(&h.frame, &mut h.palette_entries);
    h.palette.write(0, bytemuck::cast_slice(&h.palette_entries));
}

impl GnmBackend for VulkanGnmBackend {
    type Encoder = VulkanEncoder;

    fn upload_gnm(&mut self, pack: &GnmPack) -> mien_core::Result<GnmHandle> {
        self.ctx.check()?;
        let handle =
            GnmHandle(
                u32::try_from(self.heads.len()).map_err(|_| mien_core::Error::Limit {
                    what: "heads in one backend".into(),
                    limit: u64::from(u32::MAX),
                    found: self.heads.len() as u64,
                })?,
            );
        let mut head = self.upload_head(pack)?;
        // Before any frame the head shows its rest pose (fresh buffers: nothing reads them yet).
        write_frame(&mut head);
        self.heads.push(head);
        Ok(handle)
    }

    fn vertex_count(&self, head: GnmHandle) -> u32 {
        self.heads
            .get(head.0 as usize)
            .map_or(0, |h| h.vertex_count)
    }

    fn set_head_ext(
        &mut self,
        head: GnmHandle,
        head_ext: &[f32],
        joint_world: &[Mat4],
    ) -> mien_core::Result<()> {
        self.head(head)?;
        // The per-frame buffers are read by the previous frame until it completes.
        self.ctx.wait()?;
        let h = &mut self.heads[head.0 as usize];
        h.frame.set(head_ext, joint_world)?;
        write_frame(h);
        Ok(())
    }

    fn encode(&mut self, enc: &mut VulkanEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        let d = self.ctx.device();
        let p = &self.ctx.inner.pipelines;
        let cmd = enc.raw();
        // SAFETY: enc is recording on this device (VulkanEncoder's contract); every handle bound
        // below is alive and kept in `enc` until the submission completes.
        unsafe {
            for (forward, pipeline, layout) in [
                (true, p.gnm, p.gnm_layout.pipeline),
                (false, p.skin, p.skin_layout.pipeline),
            ] {
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
                for h in &self.heads {
                    for c in &h.chunks {
                        let (set, (x, y)) = if forward {
                            (c.forward_set, c.forward_groups)
                        } else {
                            (c.skin_set, c.skin_groups)
                        };
                        d.cmd_bind_descriptor_sets(
                            cmd,
                            vk::PipelineBindPoint::COMPUTE,
                            layout,
                            0,
                            &[set],
                            &[],
                        );
                        d.cmd_dispatch(cmd, x, y, 1);
                    }
                }
                raw::compute_barrier(d, cmd);
            }
        }
        for h in &self.heads {
            enc.keep(&h.frame_buffer);
            enc.keep(&h.palette);
            enc.keep_any(h.pool.clone());
            for c in &h.chunks {
                for b in &c.buffers {
                    enc.keep(b);
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, head: GnmHandle) -> mien_core::Result<PosedVertices> {
        let h = self.head(head)?;
        let parts: Vec<(&Buffer, u64, u64)> = h
            .chunks
            .iter()
            .map(|c| (&c.posed, 0, u64::from(c.count) * VERTEX_BYTES))
            .collect();
        let data = self.ctx.read(&parts)?;
        let mut out = PosedVertices::default();
        for bytes in data {
            for v in bytes.chunks_exact(24) {
                let f: [f32; 6] = bytemuck::pod_read_unaligned(v);
                out.positions.push([f[0], f[1], f[2]]);
                out.normals.push([f[3], f[4], f[5]]);
            }
        }
        Ok(out)
    }

    fn bytes(&self) -> u64 {
        self.heads.iter().map(|h| h.bytes).sum()
    }
}
