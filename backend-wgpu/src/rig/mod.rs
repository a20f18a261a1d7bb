//! The wgpu rig backend: a batch of rigs, each uploaded once for N instances (characters sharing
//! it), split into vertex-range chunks whose every buffer fits the device's binding limit, posed by
//! the morph and skin kernels in two compute passes with the instances along dispatch z.

use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
    check_batch_args, set_each, whole_batch,
};
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::rig::{RigBatchFrames, TANGENT_VERTEX_BYTES, set_batch};
use wgpu::util::DeviceExt;

use crate::context::WgpuContext;
use crate::lift::PosedPart;
use crate::timing::Stage;

mod upload;

/// A contiguous vertex range of one upload with its own buffers (outputs hold every instance:
/// `(N,count,6)`).
pub(crate) struct Chunk {
    /// First vertex of the chunk in the rig.
    v0: u32,
    /// Vertices.
    count: u32,
    posed: wgpu::Buffer,
    morphed: wgpu::Buffer,
    tint: wgpu::Buffer,
    morph_group: wgpu::BindGroup,
    skin_group: wgpu::BindGroup,
    /// For a rig that carries tangents: the posed tangents `(N,count,4)` and the tangent pass's
    /// bind group.
    tangent: Option<(wgpu::Buffer, wgpu::BindGroup)>,
    groups: (u32, u32),
}

/// One uploaded rig and its N instances.
pub(crate) struct Upload {
    chunks: Vec<Chunk>,
    vertex_count: u32,
    /// Per instance the weight rules' state and limited controls.
    frames: Vec<FrameControls>,
    staged: RigBatchFrames,
    /// `staged` changed since it was last written to the buffers.
    dirty: bool,
    /// An instance was staged alone since the last pack (`RigBatchFrames::pack` is due).
    packed_stale: bool,
    weights: wgpu::Buffer,
    /// Per block of 8 instances its active weight slots (`RigBatchFrames::active`).
    active: wgpu::Buffer,
    palette: wgpu::Buffer,
    /// Every instance's limited weights `(N,W)` for the tangent pass, when the rig carries
    /// tangents.
    dense: Option<wgpu::Buffer>,
    bytes: u64,
}

/// [`RigBackend`] on wgpu: the morph blend over each block's active targets and LBS of every uploaded rig recorded into the
/// caller's command encoder as two compute passes (morph, then skin) with one dispatch per upload
/// and chunk — the instances of a batch ([`RigBackend::upload_batch`]) along z, sharing the rig's
/// arrays — ready for a lift in the same encoder and one submission. Buffers are created once at
/// upload; `set_controls` is CPU work only (weight rules, staging); `encode` writes the staged
/// weights, active lists and palettes of the uploads that changed (`queue.write_buffer`, which lands before the
/// encoder's submission); nothing is allocated per frame.
pub struct WgpuRigBackend {
    ctx: WgpuContext,
    uploads: Vec<Upload>,
    /// Per handle: (upload, instance).
    handles: Vec<(u32, u32)>,
    binding_limit: u64,
}

impl std::fmt::Debug for WgpuRigBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuRigBackend")
            .field("uploads", &self.uploads.len())
            .field("rigs", &self.handles.len())
            .field("binding_limit", &self.binding_limit)
            .finish()
    }
}

/// A storage buffer holding `bytes` (one zero word when empty: zero-sized bindings are invalid).
pub(crate) fn storage(
    ctx: &WgpuContext,
    label: &str,
    bytes: &[u8],
    extra: wgpu::BufferUsages,
) -> wgpu::Buffer {
    // Zero-sized bindings are invalid: an empty array becomes one zero word.
    let contents: &[u8] = if bytes.is_empty() { &[0; 4] } else { bytes };
    ctx.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: wgpu::BufferUsages::STORAGE | extra,
        })
}

/// A storage buffer of `size` bytes (at least 4) that copies may read and write.
pub(crate) fn output(ctx: &WgpuContext, label: &str, size: u64) -> wgpu::Buffer {
    ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn unknown(h: RigHandle) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: "rig handle".into(),
        reason: format!("{} was not uploaded to this backend", h.0),
    }
}

impl WgpuRigBackend {
    /// An empty batch on `ctx`.
    pub fn new(ctx: &WgpuContext) -> Self {
        WgpuRigBackend {
            ctx: ctx.clone(),
            uploads: Vec::new(),
            handles: Vec::new(),
            binding_limit: ctx.binding_limit(),
        }
    }

    /// Like [`WgpuRigBackend::new`] but splitting rigs as if the device's binding limit were
    /// `bytes` (at most the real one): the splitting path can be exercised on small rigs.
    pub fn with_binding_limit(ctx: &WgpuContext, bytes: u64) -> Self {
        WgpuRigBackend {
            binding_limit: bytes.clamp(256, ctx.binding_limit()),
            ..Self::new(ctx)
        }
    }

    /// The context.
    pub fn context(&self) -> &WgpuContext {
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
    /// ([`crate::WgpuDebugLift::from_parts`]): one part per chunk, starting at vertex
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
                tint: &c.tint,
            })
            .collect())
    }

    /// Fill every morphed and posed buffer with `word` (a test aid: poisoned outputs make an
    /// unwritten element visible).
    pub fn poison_outputs(&self, word: u32) {
        for u in &self.uploads {
            for c in &u.chunks {
                let t = c.tangent.as_ref().map(|(b, _)| b);
                for b in [&c.morphed, &c.posed].into_iter().chain(t) {
                    let words = vec![word; (b.size() / 4) as usize];
                    self.ctx
                        .queue()
                        .write_buffer(b, 0, bytemuck::cast_slice(&words));
                }
            }
        }
    }
}

impl RigBackend for WgpuRigBackend {
    type Encoder = wgpu::CommandEncoder;

    fn upload(&mut self, rig: &RigData) -> mien_core::Result<RigHandle> {
        let handles = self.upload_batch(rig, 1)?;
        Ok(handles[0])
    }

    /// The rig's arrays are uploaded once; each instance gets its own weights `(W,)` and palette
    /// `(P,)` slice and its own slice of every chunk's outputs, and shows the bind pose until its
    /// first `set_controls`.
    ///
    /// # Errors
    /// As [`RigBackend::upload_batch`]; [`crate::Error::OverLimits`] (as a backend error) naming the
    /// array when the weights or palettes of all instances do not fit one binding, when one
    /// vertex's outputs for all instances do not, or when `instances` exceeds
    /// `max_compute_workgroups_per_dimension`.
    fn upload_batch(&mut self, rig: &RigData, instances: u32) -> mien_core::Result<Vec<RigHandle>> {
        if instances == 0 {
            return Err(mien_core::Error::Invalid {
                what: "rig batch".into(),
                reason: "0 instances".into(),
            });
        }
        rig.validate()?;
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
        let upload = self
            .ctx
            .scoped("a rig upload", || self.upload_rig(rig, instances))??;
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
        let up = &mut self.uploads[u];
        let stats = up.frames[i].set(controls)?;
        up.staged.write(i, &up.frames[i]);
        up.dirty = true;
        up.packed_stale = true;
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
        up.dirty = true;
        Ok(())
    }

    fn encode(&mut self, encoder: &mut wgpu::CommandEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        let q = self.ctx.queue();
        for u in self.uploads.iter_mut().filter(|u| u.dirty) {
            // Instances set one by one are packed here, once per frame.
            if u.packed_stale {
                u.staged.pack();
                u.packed_stale = false;
            }
            q.write_buffer(&u.active, 0, bytemuck::cast_slice(&u.staged.active));
            if !u.staged.weights.is_empty() {
                q.write_buffer(&u.weights, 0, bytemuck::cast_slice(&u.staged.weights));
            }
            q.write_buffer(&u.palette, 0, bytemuck::cast_slice(&u.staged.palette));
            if let Some(d) = &u.dense
                && !u.staged.rows().is_empty()
            {
                q.write_buffer(d, 0, bytemuck::cast_slice(u.staged.rows()));
            }
            u.dirty = false;
        }
        let p = self.ctx.pipelines();
        for (stage, pipeline) in [(Stage::Morph, &p.morph), (Stage::Skin, &p.skin)] {
            let morph = stage == Stage::Morph;
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(if morph { "mien morph" } else { "mien skin" }),
                timestamp_writes: self.ctx.timestamps().map(|t| t.writes(stage)),
            });
            pass.set_pipeline(pipeline);
            for u in &self.uploads {
                // The morph pass covers blocks of 8 instances in z, skinning one each.
                let z = if morph {
                    u.staged.blocks()
                } else {
                    u.staged.instances()
                } as u32;
                for c in &u.chunks {
                    let group = if morph { &c.morph_group } else { &c.skin_group };
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(c.groups.0, c.groups.1, z);
                }
            }
            if morph {
                continue;
            }
            // Tangents (rigs that carry them) read the morph pass's normals, not skinning's: they
            // run in the skin pass, timed with it.
            let mut bound = false;
            for u in &self.uploads {
                for c in &u.chunks {
                    let Some((_, group)) = &c.tangent else {
                        continue;
                    };
                    if !bound {
                        pass.set_pipeline(&p.tangent);
                        bound = true;
                    }
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(c.groups.0, c.groups.1, u.staged.instances() as u32);
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, rig: RigHandle) -> mien_core::Result<PosedVertices> {
        let (u, i) = self.find(rig)?;
        let up = &self.uploads[u];
        let parts: Vec<(&wgpu::Buffer, u64, u64)> = up
            .chunks
            .iter()
            .map(|c| {
                let len = u64::from(c.count) * VERTEX_BYTES;
                (&c.posed, i as u64 * len, len)
            })
            .collect();
        let data = self.ctx.read_buffers("posed vertices", &parts)?;
        let mut out = PosedVertices {
            positions: Vec::with_capacity(up.vertex_count as usize),
            normals: Vec::with_capacity(up.vertex_count as usize),
            tangents: Vec::new(),
        };
        for bytes in data {
            for v in bytes.chunks_exact(24) {
                let f: [f32; 6] = bytemuck::pod_read_unaligned(v);
                out.positions.push([f[0], f[1], f[2]]);
                out.normals.push([f[3], f[4], f[5]]);
            }
        }
        let tangents: Vec<(&wgpu::Buffer, u64, u64)> = up
            .chunks
            .iter()
            .filter_map(|c| {
                let len = u64::from(c.count) * TANGENT_VERTEX_BYTES;
                c.tangent.as_ref().map(|(b, _)| (b, i as u64 * len, len))
            })
            .collect();
        if !tangents.is_empty() {
            for bytes in self.ctx.read_buffers("posed tangents", &tangents)? {
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
