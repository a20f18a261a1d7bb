//! The Vulkan rig backend: a batch of rigs, each uploaded once for N instances (characters sharing
//! it), split into vertex-range chunks whose every buffer fits `maxStorageBufferRange`, posed by the
//! morph and skin kernels recorded into one command buffer with the instances along dispatch z.

use std::sync::Arc;

use ash::vk;
use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
    check_batch_args, set_each, whole_batch,
};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::rig::{RigBatchFrames, TANGENT_VERTEX_BYTES, set_batch};

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::lift::PosedPart;
use crate::pipelines::DescriptorPool;
use crate::raw;
use crate::timing::Stage;

mod upload;

/// A contiguous vertex range of one upload with its own buffers and descriptor sets (outputs hold
/// every instance: `(N,count,6)`).
pub(crate) struct Chunk {
    v0: u32,
    count: u32,
    posed: Buffer,
    tints: Buffer,
    morphed: Buffer,
    buffers: Vec<Buffer>,
    morph_set: vk::DescriptorSet,
    skin_set: vk::DescriptorSet,
    /// For a rig that carries tangents: the posed tangents `(N,count,4)` and the tangent pass's
    /// descriptor set.
    tangent: Option<(Buffer, vk::DescriptorSet)>,
    groups: (u32, u32),
}

/// One uploaded rig and its N instances.
pub(crate) struct Upload {
    chunks: Vec<Chunk>,
    vertex_count: u32,
    /// Per instance the weight rules' state and limited controls.
    frames: Vec<FrameControls>,
    staged: RigBatchFrames,
    weights: Buffer,
    /// The staged weights changed since they were last written (packed and written at `encode`).
    weights_dirty: bool,
    /// An instance was staged alone since the last pack (`RigBatchFrames::pack` is due).
    packed_stale: bool,
    /// Per block of 8 instances its active weight slots (`RigBatchFrames::active`), written with
    /// the weights.
    active: Buffer,
    palette: Buffer,
    /// The staged palettes changed since they were last written whole (`set_controls_batch`;
    /// `set_controls` writes its instance's slice at once).
    palette_dirty: bool,
    /// Every instance's limited weights `(N,W)` for the tangent pass (host-visible, written with
    /// the weights), when the rig carries tangents.
    dense: Option<Buffer>,
    pool: Arc<DescriptorPool>,
    bytes: u64,
}

/// [`RigBackend`] on raw Vulkan: the morph blend over each block's active targets and LBS of every uploaded rig recorded into a
/// [`VulkanEncoder`] (mien's command buffer or an engine's), one dispatch per upload and chunk —
/// the instances of a batch ([`RigBackend::upload_batch`]) along z, sharing the rig's arrays — with
/// a compute barrier after each stage, ready for a lift in the same command buffer and one
/// submission. Buffers are device-local, created once at upload (staged when the device memory is
/// not host-visible); per frame only the instance's palette slice and, at `encode`, the batch's
/// packed active slots and their weights (host-visible, coherent) are written.
///
/// `set_controls` waits for this context's submissions in flight before rewriting the per-frame
/// buffers; an engine submitting the command buffers itself must not call it while the previous
/// frame is executing.
pub struct VulkanRigBackend {
    ctx: VulkanContext,
    uploads: Vec<Upload>,
    /// Per handle: (upload, instance).
    handles: Vec<(u32, u32)>,
    binding_limit: u64,
}

impl std::fmt::Debug for VulkanRigBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanRigBackend")
            .field("uploads", &self.uploads.len())
            .field("rigs", &self.handles.len())
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

fn unknown(h: RigHandle) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: "rig handle".into(),
        reason: format!("{} was not uploaded to this backend", h.0),
    }
}

impl VulkanRigBackend {
    /// An empty batch on `ctx`.
    pub fn new(ctx: &VulkanContext) -> Self {
        VulkanRigBackend {
            ctx: ctx.clone(),
            uploads: Vec::new(),
            handles: Vec::new(),
            binding_limit: ctx.binding_limit(),
        }
    }

    /// Like [`VulkanRigBackend::new`] but splitting rigs as if `maxStorageBufferRange` were `bytes`
    /// (at most the real one), to exercise the splitting on small rigs.
    pub fn with_binding_limit(ctx: &VulkanContext, bytes: u64) -> Self {
        let mut b = Self::new(ctx);
        b.binding_limit = bytes.clamp(256, ctx.binding_limit());
        b
    }

    /// The context.
    pub fn context(&self) -> &VulkanContext {
        &self.ctx
    }

    /// `(upload, instance)` of a handle.
    /// The upload whose instances are exactly `rigs`, in order.
    fn whole_upload(&self, rigs: &[RigHandle]) -> Option<usize> {
        whole_batch(
            rigs,
            |h| self.find(h).ok(),
            |u| self.uploads[u].frames.len(),
        )
    }

    fn find(&self, h: RigHandle) -> mien_core::Result<(usize, usize)> {
        let &(u, i) = self.handles.get(h.0 as usize).ok_or_else(|| unknown(h))?;
        Ok((u as usize, i as usize))
    }

    /// Vertex-range chunks of `rig`'s upload as `(vertices,)` per chunk (tests: how a rig was
    /// split).
    ///
    /// # Errors
    /// An unknown handle.
    pub fn chunk_sizes(&self, rig: RigHandle) -> mien_core::Result<Vec<u32>> {
        let (u, _) = self.find(rig)?;
        Ok(self.uploads[u].chunks.iter().map(|c| c.count).collect())
    }

    /// The posed vertices of `rig` — any instance of a batch — as lift input
    /// ([`crate::VulkanDebugLift::from_parts`]): one part per chunk, starting at vertex
    /// `instance × chunk vertices` of the chunk's posed buffer, with the rig's tints.
    ///
    /// # Errors
    /// An unknown handle.
    pub fn posed_parts(&self, rig: RigHandle) -> mien_core::Result<Vec<PosedPart<'_>>> {
        let (u, i) = self.find(rig)?;
        Ok(self.uploads[u]
            .chunks
            .iter()
            .map(|c| PosedPart {
                v0: c.v0,
                count: c.count,
                first: i as u32 * c.count,
                posed: &c.posed,
                tint: &c.tints,
            })
            .collect())
    }

    /// Fill every morphed and posed buffer with `word` (a test aid: an unwritten element becomes
    /// visible).
    ///
    /// # Errors
    /// Device errors.
    pub fn poison_outputs(&self, word: u32) -> crate::Result<()> {
        let mut enc = self.ctx.begin()?;
        for u in &self.uploads {
            for c in &u.chunks {
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
}

impl RigBackend for VulkanRigBackend {
    type Encoder = VulkanEncoder;

    fn upload(&mut self, rig: &RigData) -> mien_core::Result<RigHandle> {
        let handles = self.upload_batch(rig, 1)?;
        Ok(handles[0])
    }

    /// The rig's arrays are uploaded once; each instance gets its own weights `(W,)` and palette
    /// `(P,)` slice and its own slice of every chunk's outputs, and shows the bind pose until its
    /// first `set_controls`.
    ///
    /// # Errors
    /// As [`RigBackend::upload_batch`]; [`crate::Error::OverLimits`] (as a backend error) naming
    /// the array when the weights or palettes of all instances do not fit one binding, when one
    /// vertex's outputs for all instances do not, or when `instances` exceeds
    /// `maxComputeWorkGroupCount[2]`.
    fn upload_batch(&mut self, rig: &RigData, instances: u32) -> mien_core::Result<Vec<RigHandle>> {
        if instances == 0 {
            return Err(mien_core::Error::Invalid {
                what: "rig batch".into(),
                reason: "0 instances".into(),
            });
        }
        rig.validate()?;
        self.ctx.check()?;
        let first = self.handles.len() as u64;
        let (Ok(u), true) = (
            u32::try_from(self.uploads.len()),
            first + u64::from(instances) <= u64::from(u32::MAX),
        ) else {
            return Err(mien_core::Error::Limit {
                what: "rigs in one backend".into(),
                limit: u64::from(u32::MAX),
                found: first + u64::from(instances),
            });
        };
        // The rest frames are written at creation (fresh buffers: nothing reads them yet).
        let upload = self.upload_rig(rig, instances)?;
        self.uploads.push(upload);
        self.handles.extend((0..instances).map(|i| (u, i)));
        Ok((0..instances)
            .map(|i| RigHandle(first as u32 + i))
            .collect())
    }

    fn vertex_count(&self, rig: RigHandle) -> u32 {
        self.find(rig)
            .map_or(0, |(u, _)| self.uploads[u].vertex_count)
    }

    fn set_controls(
        &mut self,
        rig: RigHandle,
        controls: &RigControls,
    ) -> mien_core::Result<ControlStats> {
        let (u, i) = self.find(rig)?;
        // The per-frame buffers are read by the previous frame until it completes.
        self.ctx.wait()?;
        let up = &mut self.uploads[u];
        let stats = up.frames[i].set(controls)?;
        up.staged.write(i, &up.frames[i]);
        up.weights_dirty = true;
        up.packed_stale = true;
        let p = up.staged.palette_range(i);
        up.palette
            .write_range(bytemuck::cast_slice(&up.staged.palette), p);
        Ok(stats)
    }

    fn set_controls_batch(
        &mut self,
        rigs: &[RigHandle],
        controls: &[RigControls],
        which: &(dyn Fn(usize) -> usize + Sync),
        stats: &mut [ControlStats],
    ) -> mien_core::Result<()> {
        check_batch_args(rigs.len(), controls.len(), which, stats.len())?;
        let Some(u) = self.whole_upload(rigs) else {
            return set_each(self, rigs, controls, which, stats);
        };
        // One batch: every instance checked, then set in parallel and staged at once; the staged
        // arrays are written at encode.
        let up = &mut self.uploads[u];
        set_batch(&mut up.frames, &mut up.staged, controls, which, stats)?;
        up.weights_dirty = true;
        up.palette_dirty = true;
        Ok(())
    }

    fn encode(&mut self, enc: &mut VulkanEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        if self
            .uploads
            .iter()
            .any(|u| u.weights_dirty || u.palette_dirty)
        {
            // The per-frame buffers are read by the previous frame until it completes
            // (set_controls waited already; this is free then).
            self.ctx.wait()?;
            for u in self.uploads.iter_mut() {
                if u.weights_dirty {
                    // Instances set one by one are packed here, once per frame.
                    if u.packed_stale {
                        u.staged.pack();
                        u.packed_stale = false;
                    }
                    u.weights.write(0, bytemuck::cast_slice(&u.staged.weights));
                    u.active.write(0, bytemuck::cast_slice(&u.staged.active));
                    if let Some(d) = &u.dense {
                        d.write(0, bytemuck::cast_slice(u.staged.rows()));
                    }
                    u.weights_dirty = false;
                }
                if u.palette_dirty {
                    u.palette.write(0, bytemuck::cast_slice(&u.staged.palette));
                    u.palette_dirty = false;
                }
            }
        }
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
                for u in &self.uploads {
                    // The morph pass covers blocks of 8 instances in z, skinning one each.
                    let z = if stage == Stage::Morph {
                        u.staged.blocks()
                    } else {
                        u.staged.instances()
                    } as u32;
                    for c in &u.chunks {
                        let set = if stage == Stage::Morph {
                            c.morph_set
                        } else {
                            c.skin_set
                        };
                        let bind = vk::PipelineBindPoint::COMPUTE;
                        d.cmd_bind_descriptor_sets(cmd, bind, layout, 0, &[set], &[]);
                        d.cmd_dispatch(cmd, c.groups.0, c.groups.1, z);
                    }
                }
                if stage == Stage::Skin {
                    // Tangents (rigs that carry them) read the morph stage's normals, not
                    // skinning's: they run in the skin stage, timed with it.
                    let mut bound = false;
                    for u in &self.uploads {
                        for c in &u.chunks {
                            let Some((_, set)) = &c.tangent else {
                                continue;
                            };
                            let bind = vk::PipelineBindPoint::COMPUTE;
                            if !bound {
                                d.cmd_bind_pipeline(cmd, bind, p.tangent);
                                bound = true;
                            }
                            let l = p.tangent_layout.pipeline;
                            d.cmd_bind_descriptor_sets(cmd, bind, l, 0, &[*set], &[]);
                            let z = u.staged.instances() as u32;
                            d.cmd_dispatch(cmd, c.groups.0, c.groups.1, z);
                        }
                    }
                }
                if let Some(t) = ts {
                    t.write(d, cmd, stage, true);
                }
                raw::compute_barrier(d, cmd);
            }
        }
        for u in &self.uploads {
            enc.keep(&u.weights);
            enc.keep(&u.active);
            enc.keep(&u.palette);
            if let Some(d) = &u.dense {
                enc.keep(d);
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

    fn read_vertices(&self, rig: RigHandle) -> mien_core::Result<PosedVertices> {
        let (u, i) = self.find(rig)?;
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
        let tangents: Vec<(&Buffer, u64, u64)> = self.uploads[u]
            .chunks
            .iter()
            .filter_map(|c| {
                let len = u64::from(c.count) * TANGENT_VERTEX_BYTES;
                c.tangent.as_ref().map(|(b, _)| (b, i as u64 * len, len))
            })
            .collect();
        if !tangents.is_empty() {
            for bytes in self.ctx.read(&tangents)? {
                out.tangents.extend(
                    bytes
                        .chunks_exact(16)
                        .map(bytemuck::pod_read_unaligned::<[f32; 4]>),
                );
            }
        }
        Ok(out)
    }

    fn bytes(&self) -> u64 {
        self.uploads.iter().map(|u| u.bytes).sum()
    }
}
