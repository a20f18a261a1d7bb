//! The Vulkan linear-head backend: `.aosrig` heads, each uploaded once as a batch of instances that
//! share its basis, split into vertex-range chunks whose every binding fits `maxStorageBufferRange`,
//! posed by the GNM forward kernel and the morph path's skin kernel recorded into one command
//! buffer.

use ash::vk;
use glam::Mat4;
use mien_core::gnm::frame::check_inputs;
use mien_core::gnm::{GnmBackend, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::gnm::set_gnm_batch;

use crate::buffer::Buffer;
use crate::device::VulkanContext;
use crate::encoder::VulkanEncoder;
use crate::error::Result;
use crate::raw;
use crate::timing::Stage;

mod upload;

use upload::Upload;

/// [`GnmBackend`] on raw Vulkan: `gnm.wgsl` (basis, eyes, seam) then `skin.wgsl` (the morph path's
/// LBS kernel and data layout) for every upload, one dispatch per upload and chunk (the instances of
/// a batch along z), with a compute barrier after each stage, recorded into a [`VulkanEncoder`].
/// The basis is uploaded verbatim (fp16 pairs, staged when device memory is not host-visible), once
/// per upload whatever its instance count, split by vertex ranges so no binding exceeds
/// `maxStorageBufferRange`; per frame only the instance's slices of the eye frames, coefficients
/// and palettes (host-visible) are written. The forward pass writes the morph stage's timestamps,
/// the skin pass the skin stage's.
///
/// `set_head_ext` waits for this context's submissions in flight before rewriting the per-frame
/// buffers (as the rig backend's `set_controls`).
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

    /// The posed vertices of `head` — any instance of a batch — as lift input
    /// ([`crate::VulkanDebugLift::from_parts`]): one part per chunk, starting at vertex
    /// `instance × chunk vertices` of the chunk's posed buffer, with white tints.
    ///
    /// # Errors
    /// An unknown handle.
    pub fn posed_parts(&self, head: GnmHandle) -> mien_core::Result<Vec<crate::PosedPart<'_>>> {
        let (u, i) = self.find(head)?;
        let up = &self.uploads[u];
        let mut v0 = 0;
        Ok(up
            .chunks
            .iter()
            .map(|c| {
                let part = crate::PosedPart {
                    v0,
                    count: c.count,
                    first: i as u32 * c.count,
                    posed: &c.posed,
                    tint: &up.tint,
                };
                v0 += c.count;
                part
            })
            .collect())
    }

    /// The upload whose instances are exactly `heads`, in order.
    fn whole_upload(&self, heads: &[GnmHandle]) -> Option<usize> {
        mien_core::rig::whole_batch(
            heads,
            |h| self.find(h).ok(),
            |u| self.uploads[u].frames.len(),
        )
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
        up.heads
            .write_range(bytemuck::cast_slice(&up.staged.heads), h);
        up.scaled
            .write_range(bytemuck::cast_slice(&up.staged.scaled), s);
        up.palette
            .write_range(bytemuck::cast_slice(&up.staged.palette), p);
        Ok(())
    }

    fn set_head_ext_batch<'i>(
        &mut self,
        heads: &[GnmHandle],
        input: &(dyn Fn(usize) -> (&'i [f32], &'i [Mat4]) + Sync + 'i),
    ) -> mien_core::Result<()> {
        let Some(u) = self.whole_upload(heads) else {
            return mien_core::gnm::backend::set_head_ext_each(self, heads, input);
        };
        // One batch: every input checked, then set in parallel and staged at once; the staged
        // arrays are written at encode.
        let up = &mut self.uploads[u];
        set_gnm_batch(&mut up.frames, &mut up.staged, input)?;
        up.dirty = true;
        Ok(())
    }

    fn encode(&mut self, enc: &mut VulkanEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        if self.uploads.iter().any(|u| u.dirty) {
            // The per-frame buffers are read by the previous frame until it completes.
            self.ctx.wait()?;
            for u in self.uploads.iter_mut().filter(|u| u.dirty) {
                u.heads.write(0, bytemuck::cast_slice(&u.staged.heads));
                u.scaled.write(0, bytemuck::cast_slice(&u.staged.scaled));
                u.palette.write(0, bytemuck::cast_slice(&u.staged.palette));
                u.dirty = false;
            }
        }
        let d = self.ctx.device();
        let p = &self.ctx.inner.pipelines;
        let cmd = enc.raw();
        let ts = self.ctx.inner.timestamps.as_ref();
        // SAFETY: enc is recording on this device (VulkanEncoder's contract); every handle bound
        // below is alive and kept in `enc` until the submission completes.
        unsafe {
            if let Some(t) = ts {
                t.reset(d, cmd);
            }
            for (forward, pipeline, layout) in [
                (true, p.gnm, p.gnm_layout.pipeline),
                (false, p.skin, p.skin_layout.pipeline),
            ] {
                // The forward pass takes the morph stage's timestamps (it is the blend).
                let stage = if forward { Stage::Morph } else { Stage::Skin };
                if let Some(t) = ts {
                    t.write(d, cmd, stage, false);
                }
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
                        // The forward pass covers the instances in x (blocks of 8), skinning in z.
                        d.cmd_dispatch(cmd, x, y, if forward { 1 } else { instances });
                    }
                }
                if let Some(t) = ts {
                    t.write(d, cmd, stage, true);
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
