//! The Vulkan linear-head backend: `.aosrig` heads, each uploaded once as a batch of instances that
//! share its basis, split into vertex-range chunks whose every binding fits `maxStorageBufferRange`,
//! posed by the GNM forward kernel and the morph path's skin kernel recorded into one command
//! buffer.

use std::sync::Arc;

use ash::vk;
use glam::Mat4;
use mien_core::gnm::frame::check_inputs;
use mien_core::gnm::{GnmBackend, GnmFrame, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::gnm::{GnmBatchFrames, gnm_chunk_arrays, plan_gnm_upload};
use mien_shaders::{DispatchParams, GnmParams, dispatch_size, gnm_dispatch, gnm_lanes};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;

const STORAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::STORAGE_BUFFER;

/// A contiguous vertex range of one upload with its buffers and descriptor sets (outputs hold every
/// instance).
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

/// One uploaded pack and its N instances.
struct Upload {
    chunks: Vec<Chunk>,
    vertex_count: u32,
    frames: Vec<GnmFrame>,
    staged: GnmBatchFrames,
    heads: Buffer,
    scaled: Buffer,
    palette: Buffer,
    pool: Arc<DescriptorPool>,
    bytes: u64,
}

/// [`GnmBackend`] on raw Vulkan: `gnm.wgsl` (basis, eyes, seam) then `skin.wgsl` (the morph path's
/// LBS kernel and data layout) for every upload, one dispatch per upload and chunk (the instances of
/// a batch along z), with a compute barrier after each stage, recorded into a [`VulkanEncoder`].
/// The basis is uploaded verbatim (fp16 pairs, staged when device memory is not host-visible), once
/// per upload whatever its instance count, split by vertex ranges so no binding exceeds
/// `maxStorageBufferRange`; per frame only the instance's slices of the eye frames, coefficients
/// and palettes (host-visible) are written. The passes write no timestamps.
///
/// `set_head_ext` waits for this context's submissions in flight before rewriting the per-frame
/// buffers (as [`crate::VulkanRigBackend::set_controls`]).
pub struct VulkanGnmBackend {
    ctx: VulkanContext,
    uploads: Vec<Upload>,
    /// Per handle: (upload, instance).
    handles: Vec<(u32, u32)>,
    binding_limit: u64,
}

impl std::fmt::Debug for VulkanGnmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanGnmBackend")
            .field("uploads", &self.uploads.len())
            .field("heads", &self.handles.len())
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
    /// An empty backend on `ctx`.
    pub fn new(ctx: &VulkanContext) -> Self {
        Self::with_binding_limit(ctx, u64::MAX)
    }

    /// Like [`VulkanGnmBackend::new`] but splitting heads as if `maxStorageBufferRange` were
    /// `bytes` (256 up to the real one), so the split path runs on small packs.
    pub fn with_binding_limit(ctx: &VulkanContext, bytes: u64) -> Self {
        VulkanGnmBackend {
            ctx: ctx.clone(),
            uploads: Vec::new(),
            handles: Vec::new(),
            binding_limit: bytes.clamp(256, ctx.binding_limit().max(256)),
        }
    }

    /// The context.
    pub fn context(&self) -> &VulkanContext {
        &self.ctx
    }

    /// Vertex-range chunks of `head`'s upload as `(vertices,)` per chunk (tests: how a pack was
    /// split).
    ///
    /// # Errors
    /// An unknown handle.
    pub fn chunk_sizes(&self, head: GnmHandle) -> mien_core::Result<Vec<u32>> {
        let (u, _) = self.find(head)?;
        Ok(self.uploads[u].chunks.iter().map(|c| c.count).collect())
    }

    fn find(&self, h: GnmHandle) -> mien_core::Result<(usize, usize)> {
        let &(u, i) = self.handles.get(h.0 as usize).ok_or_else(|| unknown(h))?;
        Ok((u as usize, i as usize))
    }

    /// Fill every head-local and posed buffer with `word` (a test aid: an unwritten element becomes
    /// visible).
    ///
    /// # Errors
    /// Device errors.
    pub fn poison_outputs(&self, word: u32) -> Result<()> {
        let mut enc = self.ctx.begin()?;
        for u in &self.uploads {
            for c in &u.chunks {
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

    fn upload(&self, pack: &GnmPack, instances: u32) -> Result<Upload> {
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
        let lanes = gnm_lanes(e);
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
            let a = gnm_chunk_arrays(pack, v0, count);
            let (fx, fy, f_row) =
                gnm_dispatch(count, lanes, max_groups).ok_or_else(|| too_many(count))?;
            let (sx, sy, s_row) =
                dispatch_size(count, max_groups).ok_or_else(|| too_many(count))?;
            let forward_params = GnmParams {
                count,
                row_width: f_row,
                coeffs: e,
                lanes,
                first_half: a.first_half,
                ..GnmParams::default()
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
        Ok(Upload {
            chunks,
            vertex_count: nv,
            frames: vec![frame; instances as usize],
            staged,
            heads,
            scaled,
            palette,
            pool,
            bytes,
        })
    }
}

fn unknown(h: GnmHandle) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: "head handle".into(),
        reason: format!("{} was not uploaded to this backend", h.0),
    }
}

impl GnmBackend for VulkanGnmBackend {
    type Encoder = VulkanEncoder;

    fn upload_gnm_batch(
        &mut self,
        pack: &GnmPack,
        instances: u32,
    ) -> mien_core::Result<Vec<GnmHandle>> {
        self.ctx.check()?;
        if instances == 0 {
            return Err(mien_core::Error::Invalid {
                what: "head instances".into(),
                reason: "a batch needs at least one instance".into(),
            });
        }
        let first = self.handles.len() as u64;
        let upload_index = u32::try_from(self.uploads.len()).ok();
        let (Some(u), true) = (
            upload_index,
            first + u64::from(instances) <= u64::from(u32::MAX),
        ) else {
            return Err(mien_core::Error::Limit {
                what: "heads in one backend".into(),
                limit: u64::from(u32::MAX),
                found: first + u64::from(instances),
            });
        };
        // The rest frames are written at creation (fresh buffers: nothing reads them yet).
        let upload = self.upload(pack, instances)?;
        self.uploads.push(upload);
        self.handles.extend((0..instances).map(|i| (u, i)));
        Ok((0..instances)
            .map(|i| GnmHandle(first as u32 + i))
            .collect())
    }

    fn vertex_count(&self, head: GnmHandle) -> u32 {
        self.find(head)
            .map_or(0, |(u, _)| self.uploads[u].vertex_count)
    }

    fn set_head_ext(
        &mut self,
        head: GnmHandle,
        head_ext: &[f32],
        joint_world: &[Mat4],
    ) -> mien_core::Result<()> {
        let (u, i) = self.find(head)?;
        // Check before waiting: a refused frame changes nothing and costs no wait.
        let f = &self.uploads[u].frames[i];
        check_inputs(f.coeff_count(), f.joint_count(), head_ext, joint_world)?;
        // The per-frame buffers are read by the previous frame until it completes.
        self.ctx.wait()?;
        let up = &mut self.uploads[u];
        up.frames[i].set(head_ext, joint_world)?;
        up.staged.write(i, &up.frames[i]);
        let [h, s, p] = up.staged.ranges(i);
        write_range(&up.heads, bytemuck::cast_slice(&up.staged.heads), h);
        write_range(&up.scaled, bytemuck::cast_slice(&up.staged.scaled), s);
        write_range(&up.palette, bytemuck::cast_slice(&up.staged.palette), p);
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
                for u in &self.uploads {
                    let instances = u.staged.instances() as u32;
                    for c in &u.chunks {
                        let (set, (x, y)) = if forward {
                            (c.forward_set, c.forward_groups)
                        } else {
                            (c.skin_set, c.skin_groups)
                        };
                        let bind = vk::PipelineBindPoint::COMPUTE;
                        d.cmd_bind_descriptor_sets(cmd, bind, layout, 0, &[set], &[]);
                        d.cmd_dispatch(cmd, x, y, instances);
                    }
                }
                raw::compute_barrier(d, cmd);
            }
        }
        for u in &self.uploads {
            for b in [&u.heads, &u.scaled, &u.palette] {
                enc.keep(b);
            }
            enc.keep_any(u.pool.clone());
            for c in &u.chunks {
                for b in &c.buffers {
                    enc.keep(b);
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, head: GnmHandle) -> mien_core::Result<PosedVertices> {
        let (u, i) = self.find(head)?;
        let parts: Vec<(&Buffer, u64, u64)> = self.uploads[u]
            .chunks
            .iter()
            .map(|c| {
                let len = u64::from(c.count) * VERTEX_BYTES;
                (&c.posed, i as u64 * len, len)
            })
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
        self.uploads.iter().map(|u| u.bytes).sum()
    }
}

/// Write bytes `(offset, length)` of `all` to the same range of the host-visible `buffer` (no
/// submission may be reading it).
fn write_range(buffer: &Buffer, all: &[u8], (offset, len): (u64, u64)) {
    buffer.write(offset, &all[offset as usize..(offset + len) as usize]);
}
