//! The wgpu linear-head backend: `.aosrig` heads, each uploaded once as a batch of instances that
//! share its basis, split into vertex-range chunks whose every binding fits the device's limit, and
//! posed by the GNM forward kernel and the morph path's skin kernel in two compute passes.

use glam::Mat4;
use mien_core::gnm::tiled::BasisTiles;
use mien_core::gnm::{GnmBackend, GnmFrame, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::gnm::{GnmBatchFrames, gnm_chunk_arrays, plan_gnm_upload, set_gnm_batch};
use mien_shaders::{DispatchParams, GNM_TILE_VERTICES, GnmParams, dispatch_size, gnm_dispatch};
use wgpu::util::DeviceExt;

use crate::context::WgpuContext;
use crate::error::{Error, Result};
use crate::pipelines::bind_group;
use crate::rig::{output, storage};

/// A contiguous vertex range of one upload with its own buffers (outputs hold every instance).
struct Chunk {
    count: u32,
    local: wgpu::Buffer,
    posed: wgpu::Buffer,
    forward_group: wgpu::BindGroup,
    skin_group: wgpu::BindGroup,
    forward_groups: (u32, u32),
    skin_groups: (u32, u32),
}

/// One uploaded pack and its N instances.
struct Upload {
    chunks: Vec<Chunk>,
    vertex_count: u32,
    frames: Vec<GnmFrame>,
    staged: GnmBatchFrames,
    /// `staged` changed since it was last written to the buffers.
    dirty: bool,
    heads: wgpu::Buffer,
    scaled: wgpu::Buffer,
    palette: wgpu::Buffer,
    /// White vertex tints `(max chunk vertices,)` for a lift (a pack has no vertex colours).
    tint: wgpu::Buffer,
    bytes: u64,
}

/// [`GnmBackend`] on wgpu: `gnm.wgsl` (basis, eyes, seam) then `skin.wgsl` (LBS, the morph path's
/// kernel and data layout) for every upload, recorded into the caller's command encoder as two
/// compute passes with one dispatch per upload and chunk (the instances of a batch along z). The
/// basis is uploaded verbatim (fp16 pairs), once per upload whatever its instance count, split by
/// vertex ranges so no binding exceeds the device's `max_storage_buffer_binding_size`.
/// `set_head_ext` is CPU work only; `encode` writes the staged per-frame arrays of the uploads that
/// changed (`queue.write_buffer`, which lands before the encoder's submission); nothing is
/// allocated per frame. The forward pass writes the morph stage's timestamps, the skin pass the
/// skin stage's ([`crate::Timestamps`]).
pub struct WgpuGnmBackend {
    ctx: WgpuContext,
    uploads: Vec<Upload>,
    /// Per handle: (upload, instance).
    handles: Vec<(u32, u32)>,
    binding_limit: u64,
}

impl std::fmt::Debug for WgpuGnmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuGnmBackend")
            .field("uploads", &self.uploads.len())
            .field("heads", &self.handles.len())
            .field("binding_limit", &self.binding_limit)
            .finish()
    }
}

fn unknown(h: GnmHandle) -> mien_core::Error {
    mien_core::Error::Invalid {
        what: "head handle".into(),
        reason: format!("{} was not uploaded to this backend", h.0),
    }
}

impl WgpuGnmBackend {
    /// An empty backend on `ctx`.
    pub fn new(ctx: &WgpuContext) -> Self {
        Self::with_binding_limit(ctx, u64::MAX)
    }

    /// Like [`WgpuGnmBackend::new`] but splitting uploads as if the device's binding limit were
    /// `bytes` (256 up to the real one), so the split path runs on small packs.
    pub fn with_binding_limit(ctx: &WgpuContext, bytes: u64) -> Self {
        WgpuGnmBackend {
            ctx: ctx.clone(),
            uploads: Vec::new(),
            handles: Vec::new(),
            binding_limit: bytes.clamp(256, ctx.binding_limit().max(256)),
        }
    }

    /// The context.
    pub fn context(&self) -> &WgpuContext {
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
    /// ([`crate::WgpuDebugLift::from_parts`]): one part per chunk, starting at vertex
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
    pub fn poison_outputs(&self, word: u32) {
        for u in &self.uploads {
            for c in &u.chunks {
                for b in [&c.local, &c.posed] {
                    let words = vec![word; (b.size() / 4) as usize];
                    self.ctx
                        .queue()
                        .write_buffer(b, 0, bytemuck::cast_slice(&words));
                }
            }
        }
    }

    fn upload(&self, pack: &GnmPack, instances: u32) -> Result<Upload> {
        let ctx = &self.ctx;
        let limit = self.binding_limit;
        let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
        let over = |what: String, limit_name, limit, needed| Error::OverLimits {
            what,
            limit_name,
            limit,
            needed,
        };
        if instances > max_groups {
            let what = "the instances of one upload".into();
            let name = "max_compute_workgroups_per_dimension";
            return Err(over(
                what,
                name,
                u64::from(max_groups),
                u64::from(instances),
            ));
        }
        let plan = plan_gnm_upload(pack, instances, limit)
            .map_err(|o| over(o.what, "max_storage_buffer_binding_size", limit, o.needed))?;
        let (nv, e) = (pack.vertex_count() as u32, pack.coeff_count() as u32);
        let gnm = ctx.gnm_pipeline()?;
        let skin_layout = &ctx.pipelines().skin_layout;
        let tiles = BasisTiles::new(pack, GNM_TILE_VERTICES as usize);
        let frame = GnmFrame::new(pack);
        let staged = GnmBatchFrames::new(&frame, instances as usize);
        let heads = output(ctx, "mien gnm eye frames", 128 * u64::from(instances));
        let scaled = output(ctx, "mien gnm coefficients", 4 * staged.scaled.len() as u64);
        let palette_bytes = bytemuck::cast_slice::<_, u8>(&staged.palette).len() as u64;
        let palette = output(ctx, "mien gnm palettes", palette_bytes);
        let mut bytes = heads.size() + scaled.size() + palette.size();
        let too_many = |count: u32| {
            let what = format!("a dispatch of {count} vertices");
            over(
                what,
                "max_compute_workgroups_per_dimension",
                u64::from(max_groups),
                u64::from(count),
            )
        };
        let uniform = |label: &str, bytes: &[u8]| {
            ctx.device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: bytes,
                    usage: wgpu::BufferUsages::UNIFORM,
                })
        };
        let mut chunks = Vec::with_capacity(plan.len());
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
            let forward_params = uniform("mien gnm params", bytemuck::bytes_of(&forward_params));
            let skin_params = DispatchParams {
                count,
                row_width: s_row,
                _pad0: 0,
                _pad1: 0,
            };
            let skin_params = uniform("mien gnm skin params", bytemuck::bytes_of(&skin_params));
            let none = wgpu::BufferUsages::empty();
            let basis = storage(ctx, "mien gnm basis", bytemuck::cast_slice(&a.basis), none);
            let statics = storage(
                ctx,
                "mien gnm statics",
                bytemuck::cast_slice(&a.statics),
                none,
            );
            let joints = storage(
                ctx,
                "mien gnm skin joints",
                bytemuck::cast_slice(&a.joints),
                none,
            );
            let weights = storage(
                ctx,
                "mien gnm skin weights",
                bytemuck::cast_slice(&a.weights),
                none,
            );
            let out_bytes = u64::from(count) * u64::from(instances) * VERTEX_BYTES;
            let local = output(ctx, "mien gnm head-local", out_bytes);
            let posed = output(ctx, "mien gnm posed", out_bytes);
            let forward_group = bind_group(
                ctx.device(),
                "mien gnm forward",
                &gnm.layout,
                &[
                    forward_params.as_entire_binding(),
                    heads.as_entire_binding(),
                    scaled.as_entire_binding(),
                    basis.as_entire_binding(),
                    statics.as_entire_binding(),
                    local.as_entire_binding(),
                ],
            );
            let skin_group = bind_group(
                ctx.device(),
                "mien gnm skin",
                skin_layout,
                &[
                    skin_params.as_entire_binding(),
                    local.as_entire_binding(),
                    joints.as_entire_binding(),
                    weights.as_entire_binding(),
                    palette.as_entire_binding(),
                    posed.as_entire_binding(),
                ],
            );
            let all = [
                &forward_params,
                &skin_params,
                &basis,
                &statics,
                &joints,
                &weights,
            ];
            bytes += all.iter().map(|b| b.size()).sum::<u64>() + local.size() + posed.size();
            chunks.push(Chunk {
                count,
                local,
                posed,
                forward_group,
                skin_group,
                forward_groups: (fx, fy),
                skin_groups: (sx, sy),
            });
        }
        let widest = chunks.iter().map(|c| c.count).max().unwrap_or(1);
        let tint = storage(
            ctx,
            "mien gnm white tints",
            bytemuck::cast_slice(&vec![u32::MAX; widest as usize]),
            wgpu::BufferUsages::empty(),
        );
        Ok(Upload {
            chunks,
            vertex_count: nv,
            frames: vec![frame; instances as usize],
            staged,
            dirty: true,
            heads,
            scaled,
            palette,
            bytes: bytes + u64::from(widest) * 4,
            tint,
        })
    }
}

impl GnmBackend for WgpuGnmBackend {
    type Encoder = wgpu::CommandEncoder;

    fn upload_gnm_batch(
        &mut self,
        pack: &GnmPack,
        instances: u32,
    ) -> mien_core::Result<Vec<GnmHandle>> {
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
        let upload = self
            .ctx
            .scoped("a head upload", || self.upload(pack, instances))??;
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
        let up = &mut self.uploads[u];
        up.frames[i].set(head_ext, joint_world)?;
        up.staged.write(i, &up.frames[i]);
        up.dirty = true;
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

    fn encode(&mut self, encoder: &mut wgpu::CommandEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        if self.uploads.is_empty() {
            return Ok(());
        }
        let q = self.ctx.queue();
        for u in self.uploads.iter_mut().filter(|u| u.dirty) {
            q.write_buffer(&u.heads, 0, bytemuck::cast_slice(&u.staged.heads));
            q.write_buffer(&u.scaled, 0, bytemuck::cast_slice(&u.staged.scaled));
            q.write_buffer(&u.palette, 0, bytemuck::cast_slice(&u.staged.palette));
            u.dirty = false;
        }
        let p = self.ctx.pipelines();
        let gnm = self.ctx.gnm_pipeline()?;
        for (forward, pipeline) in [(true, &gnm.pipeline), (false, &p.skin)] {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(if forward {
                    "mien gnm forward"
                } else {
                    "mien gnm skin"
                }),
                // The forward pass takes the morph stage's timestamps (it is the blend), the
                // skin pass the skin stage's.
                timestamp_writes: self.ctx.timestamps().map(|t| {
                    t.writes(if forward {
                        crate::timing::Stage::Morph
                    } else {
                        crate::timing::Stage::Skin
                    })
                }),
            });
            pass.set_pipeline(pipeline);
            for u in &self.uploads {
                let instances = u.staged.instances() as u32;
                for c in &u.chunks {
                    let (group, (x, y)) = if forward {
                        (&c.forward_group, c.forward_groups)
                    } else {
                        (&c.skin_group, c.skin_groups)
                    };
                    pass.set_bind_group(0, group, &[]);
                    // The forward pass covers the instances in x (blocks of 8), skinning in z.
                    pass.dispatch_workgroups(x, y, if forward { 1 } else { instances });
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, head: GnmHandle) -> mien_core::Result<PosedVertices> {
        let (u, i) = self.find(head)?;
        let up = &self.uploads[u];
        let parts: Vec<(&wgpu::Buffer, u64, u64)> = up
            .chunks
            .iter()
            .map(|c| {
                let len = u64::from(c.count) * VERTEX_BYTES;
                (&c.posed, i as u64 * len, len)
            })
            .collect();
        let data = self.ctx.read_buffers("posed head vertices", &parts)?;
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
        Ok(out)
    }

    fn bytes(&self) -> u64 {
        self.uploads.iter().map(|u| u.bytes).sum()
    }
}
