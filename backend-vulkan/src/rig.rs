//! The Vulkan rig backend: a batch of rigs, each split into vertex-range chunks whose every buffer
//! fits `maxStorageBufferRange`, posed by the morph and skin kernels recorded into one command buffer.

use std::sync::Arc;

use ash::vk;
use glam::Mat4;
use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
};
use mien_shaders::data::{VERTEX_BYTES, chunk_arrays, plan_chunks};
use mien_shaders::{DispatchParams, JointMatrices, dispatch_size};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::error::{Error, Result};
use crate::memory::MemoryLocation;
use crate::pipelines::DescriptorPool;
use crate::raw;
use crate::timing::Stage;

const JOINT_BYTES: u64 = std::mem::size_of::<JointMatrices>() as u64;
const STORAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::STORAGE_BUFFER;

/// A contiguous vertex range of one rig with its own buffers and descriptor sets.
pub(crate) struct Chunk {
    pub v0: u32,
    pub count: u32,
    pub posed: Buffer,
    pub tints: Buffer,
    morphed: Buffer,
    buffers: Vec<Buffer>,
    morph_set: vk::DescriptorSet,
    skin_set: vk::DescriptorSet,
    groups: (u32, u32),
}

pub(crate) struct GpuRig {
    pub chunks: Vec<Chunk>,
    vertex_count: u32,
    frame: FrameControls,
    joints: Vec<JointMatrices>,
    weights: Buffer,
    palette: Buffer,
    pool: Arc<DescriptorPool>,
    bytes: u64,
}

/// [`RigBackend`] on raw Vulkan: the CSR morph blend and LBS of every uploaded rig recorded into a
/// [`VulkanEncoder`] (mien's command buffer or an engine's), with a compute barrier after each stage,
/// ready for a lift in the same command buffer and one submission. Buffers are device-local, created
/// once at upload (staged when the device memory is not host-visible); per frame only the weights
/// and palette (host-visible, coherent) are written.
///
/// `set_controls` waits for this context's submissions in flight before rewriting the per-frame
/// buffers; an engine submitting the command buffers itself must not call it while the previous
/// frame is executing.
pub struct VulkanRigBackend {
    ctx: VulkanContext,
    rigs: Vec<GpuRig>,
    binding_limit: u64,
}

impl std::fmt::Debug for VulkanRigBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanRigBackend")
            .field("rigs", &self.rigs.len())
            .field("binding_limit", &self.binding_limit)
            .finish()
    }
}

impl Drop for VulkanRigBackend {
    fn drop(&mut self) {
        // Submissions through the context keep what they use alive; this also covers an engine that
        // recorded mien's passes and is still executing them.
        let _ = self.ctx.wait();
    }
}

impl VulkanRigBackend {
    /// An empty batch on `ctx`.
    pub fn new(ctx: &VulkanContext) -> Self {
        VulkanRigBackend {
            ctx: ctx.clone(),
            rigs: Vec::new(),
            binding_limit: ctx.binding_limit(),
        }
    }

    /// Like [`VulkanRigBackend::new`] but splitting rigs as if `maxStorageBufferRange` were `bytes`
    /// (at most the real one), to exercise the splitting on small rigs.
    pub fn with_binding_limit(ctx: &VulkanContext, bytes: u64) -> Self {
        VulkanRigBackend {
            ctx: ctx.clone(),
            rigs: Vec::new(),
            binding_limit: bytes.clamp(256, ctx.binding_limit()),
        }
    }

    /// The context.
    pub fn context(&self) -> &VulkanContext {
        &self.ctx
    }

    pub(crate) fn rig(&self, h: RigHandle) -> Result<&GpuRig, mien_core::Error> {
        self.rigs
            .get(h.0 as usize)
            .ok_or_else(|| mien_core::Error::Invalid {
                what: "rig handle".into(),
                reason: format!("{} was not uploaded to this backend", h.0),
            })
    }

    /// Fill every posed buffer with `word` (a test aid: an unwritten element becomes visible).
    ///
    /// # Errors
    /// Device errors.
    pub fn poison_outputs(&self, word: u32) -> Result<()> {
        let mut enc = self.ctx.begin()?;
        for r in &self.rigs {
            for c in &r.chunks {
                for b in [&c.morphed, &c.posed] {
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

    fn upload_rig(&self, rig: &RigData) -> Result<GpuRig> {
        let limit = self.binding_limit;
        let over = |what: &str, needed: u64| Error::OverLimits {
            what: what.into(),
            limit_name: "maxStorageBufferRange",
            limit,
            needed,
        };
        if u64::from(rig.weight_count) * 4 > limit {
            return Err(over("the morph weights", u64::from(rig.weight_count) * 4));
        }
        if rig.palette.len() as u64 * JOINT_BYTES > limit {
            return Err(over(
                "the joint palette",
                rig.palette.len() as u64 * JOINT_BYTES,
            ));
        }
        let plan = plan_chunks(rig, limit)
            .map_err(|e| over(&format!("the morph deltas of vertex {}", e.vertex), e.bytes))?;
        let ctx = &self.ctx;
        let max_groups = ctx.properties().limits.max_compute_work_group_count[0];
        let weights = ctx.buffer(
            "the morph weights",
            u64::from(rig.weight_count) * 4,
            STORAGE,
            MemoryLocation::CpuToGpu,
        )?;
        let palette = ctx.buffer(
            "the joint palette",
            rig.palette.len().max(1) as u64 * JOINT_BYTES,
            STORAGE,
            MemoryLocation::CpuToGpu,
        )?;
        let n = plan.len() as u32;
        let pool = Arc::new(DescriptorPool::new(ctx, 2 * n, 2 * n, 11 * n)?);
        let layouts = &ctx.inner.pipelines;
        let mut chunks = Vec::with_capacity(plan.len());
        let mut bytes = weights.size() + palette.size();
        for (v0, count) in plan {
            let a = chunk_arrays(rig, v0, count);
            let (gx, gy, row_width) =
                dispatch_size(count, max_groups).ok_or_else(|| Error::OverLimits {
                    what: format!("a dispatch of {count} vertices"),
                    limit_name: "maxComputeWorkGroupCount",
                    limit: u64::from(max_groups),
                    needed: u64::from(count.div_ceil(64)),
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
            let offsets = ctx.upload("CSR offsets", bytemuck::cast_slice(&a.offsets), STORAGE)?;
            let targets = ctx.upload("CSR targets", bytemuck::cast_slice(&a.targets), STORAGE)?;
            let deltas = ctx.upload("CSR deltas", bytemuck::cast_slice(&a.deltas), STORAGE)?;
            let joints = ctx.upload("skin joints", bytemuck::cast_slice(&a.joints), STORAGE)?;
            let skin_w = ctx.upload("skin weights", bytemuck::cast_slice(&a.weights), STORAGE)?;
            let tints = ctx.upload("vertex tints", bytemuck::cast_slice(&a.tints), STORAGE)?;
            let out_usage =
                STORAGE | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
            let morphed = ctx.buffer(
                "morphed vertices",
                u64::from(count) * VERTEX_BYTES,
                out_usage,
                MemoryLocation::GpuOnly,
            )?;
            let posed = ctx.buffer(
                "posed vertices",
                u64::from(count) * VERTEX_BYTES,
                out_usage,
                MemoryLocation::GpuOnly,
            )?;
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
                        whole(&offsets),
                        whole(&targets),
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
            let buffers = vec![
                uniform,
                base,
                offsets,
                targets,
                deltas,
                joints,
                skin_w,
                tints.clone(),
                morphed.clone(),
                posed.clone(),
            ];
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
                groups: (gx, gy),
            });
        }
        Ok(GpuRig {
            chunks,
            vertex_count: rig.vertex_count() as u32,
            frame: FrameControls::new(rig),
            joints: vec![JointMatrices::default(); rig.palette.len()],
            weights,
            palette,
            pool,
            bytes,
        })
    }

    fn write_controls(
        &mut self,
        h: usize,
        controls: &RigControls,
    ) -> mien_core::Result<ControlStats> {
        // The per-frame buffers are read by the previous frame until it completes.
        self.ctx.wait()?;
        let r = &mut self.rigs[h];
        let stats = r.frame.set(controls)?;
        r.weights.write(0, bytemuck::cast_slice(&r.frame.weights));
        for ((j, m), n) in r
            .joints
            .iter_mut()
            .zip(&r.frame.palette)
            .zip(&r.frame.normal_palette)
        {
            *j = JointMatrices::new(m, n);
        }
        r.palette.write(0, bytemuck::cast_slice(&r.joints));
        Ok(stats)
    }
}

impl RigBackend for VulkanRigBackend {
    type Encoder = VulkanEncoder;

    fn upload(&mut self, rig: &RigData) -> mien_core::Result<RigHandle> {
        rig.validate()?;
        self.ctx.check()?;
        let handle =
            RigHandle(
                u32::try_from(self.rigs.len()).map_err(|_| mien_core::Error::Limit {
                    what: "rigs in one backend".into(),
                    limit: u64::from(u32::MAX),
                    found: self.rigs.len() as u64,
                })?,
            );
        let gpu = self.upload_rig(rig)?;
        self.rigs.push(gpu);
        // Before any controls the rig shows its bind pose.
        let identity = RigControls {
            weights: vec![0.0; rig.weight_count as usize],
            palette: vec![Mat4::IDENTITY; rig.palette.len()],
        };
        self.write_controls(handle.0 as usize, &identity)?;
        Ok(handle)
    }

    fn vertex_count(&self, rig: RigHandle) -> u32 {
        self.rigs.get(rig.0 as usize).map_or(0, |r| r.vertex_count)
    }

    fn set_controls(
        &mut self,
        rig: RigHandle,
        controls: &RigControls,
    ) -> mien_core::Result<ControlStats> {
        self.rig(rig)?;
        self.write_controls(rig.0 as usize, controls)
    }

    fn encode(&mut self, enc: &mut VulkanEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        let d = self.ctx.device();
        let p = &self.ctx.inner.pipelines;
        let ts = self.ctx.inner.timestamps.as_ref();
        let cmd = enc.raw();
        // SAFETY: enc is recording on this device (VulkanEncoder's contract); every handle bound
        // below is alive and kept in `enc` until the submission completes.
        unsafe {
            if let Some(t) = ts {
                t.reset(d, cmd);
            }
            for (stage, pipeline, layout) in [
                (Stage::Morph, p.morph, p.morph_layout.pipeline),
                (Stage::Skin, p.skin, p.skin_layout.pipeline),
            ] {
                if let Some(t) = ts {
                    t.write(d, cmd, stage, false);
                }
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
                for r in &self.rigs {
                    for c in &r.chunks {
                        let set = if stage == Stage::Morph {
                            c.morph_set
                        } else {
                            c.skin_set
                        };
                        d.cmd_bind_descriptor_sets(
                            cmd,
                            vk::PipelineBindPoint::COMPUTE,
                            layout,
                            0,
                            &[set],
                            &[],
                        );
                        d.cmd_dispatch(cmd, c.groups.0, c.groups.1, 1);
                    }
                }
                if let Some(t) = ts {
                    t.write(d, cmd, stage, true);
                }
                raw::compute_barrier(d, cmd);
            }
        }
        for r in &self.rigs {
            enc.keep(&r.weights);
            enc.keep(&r.palette);
            enc.keep_any(r.pool.clone());
            for c in &r.chunks {
                for b in &c.buffers {
                    enc.keep(b);
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, rig: RigHandle) -> mien_core::Result<PosedVertices> {
        let r = self.rig(rig)?;
        let parts: Vec<(&Buffer, u64, u64)> = r
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
        self.rigs.iter().map(|r| r.bytes).sum()
    }
}
