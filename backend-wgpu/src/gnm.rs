//! The wgpu linear-head backend: a batch of `.aosrig` heads, each split into vertex-range chunks whose
//! every binding fits the device's limit, posed by the GNM forward kernel and the morph path's skin
//! kernel in two compute passes.

use glam::Mat4;
use mien_core::gnm::{GnmBackend, GnmFrame, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_shaders::data::VERTEX_BYTES;
use mien_shaders::data::gnm::{
    GNM_STATIC_BYTES, gnm_chunk_arrays, gnm_frame, gnm_frame_bytes, gnm_palette, plan_gnm_chunks,
};
use mien_shaders::{
    DispatchParams, GnmParams, JointMatrices, dispatch_size, gnm_dispatch, gnm_lanes,
};
use wgpu::util::DeviceExt;

use crate::context::WgpuContext;
use crate::error::{Error, Result};
use crate::pipelines::bind_group;
use crate::rig::{output, storage};

const JOINT_BYTES: u64 = std::mem::size_of::<JointMatrices>() as u64;

/// A contiguous vertex range of one head with its own buffers.
struct Chunk {
    count: u32,
    local: wgpu::Buffer,
    posed: wgpu::Buffer,
    forward_group: wgpu::BindGroup,
    skin_group: wgpu::BindGroup,
    forward_groups: (u32, u32),
    skin_groups: (u32, u32),
}

struct GpuHead {
    chunks: Vec<Chunk>,
    vertex_count: u32,
    frame: GnmFrame,
    frame_bytes: Vec<u8>,
    palette_entries: Vec<JointMatrices>,
    frame_buffer: wgpu::Buffer,
    palette: wgpu::Buffer,
    bytes: u64,
}

/// [`GnmBackend`] on wgpu: `gnm.wgsl` (basis, eyes, seam) then `skin.wgsl` (LBS, the morph path's
/// kernel and data layout) for every uploaded head, recorded into the caller's command encoder as
/// two compute passes. The basis is uploaded verbatim (fp16 pairs), split by vertex ranges so no
/// binding exceeds the device's `max_storage_buffer_binding_size`; per frame only the frame buffer
/// (`(E,)` scaled coefficients, eye rotations) and the palette are written
/// (`queue.write_buffer`); nothing is allocated per frame. The passes write no timestamps.
pub struct WgpuGnmBackend {
    ctx: WgpuContext,
    heads: Vec<GpuHead>,
    binding_limit: u64,
}

impl std::fmt::Debug for WgpuGnmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuGnmBackend")
            .field("heads", &self.heads.len())
            .field("binding_limit", &self.binding_limit)
            .finish()
    }
}

impl WgpuGnmBackend {
    /// An empty batch on `ctx`.
    pub fn new(ctx: &WgpuContext) -> Self {
        WgpuGnmBackend {
            ctx: ctx.clone(),
            heads: Vec::new(),
            binding_limit: ctx.binding_limit(),
        }
    }

    /// Like [`WgpuGnmBackend::new`] but splitting heads as if the device's binding limit were
    /// `bytes` (256 up to the real one), so the split path runs on small packs.
    pub fn with_binding_limit(ctx: &WgpuContext, bytes: u64) -> Self {
        WgpuGnmBackend {
            ctx: ctx.clone(),
            heads: Vec::new(),
            binding_limit: bytes.clamp(256, ctx.binding_limit()),
        }
    }

    /// The context.
    pub fn context(&self) -> &WgpuContext {
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
    pub fn poison_outputs(&self, word: u32) {
        for h in &self.heads {
            for c in &h.chunks {
                for b in [&c.local, &c.posed] {
                    let words = vec![word; (b.size() / 4) as usize];
                    self.ctx
                        .queue()
                        .write_buffer(b, 0, bytemuck::cast_slice(&words));
                }
            }
        }
    }

    fn upload_head(&self, pack: &GnmPack) -> Result<GpuHead> {
        let limit = self.binding_limit;
        let over = |what: String, needed: u64| Error::OverLimits {
            what,
            limit_name: "max_storage_buffer_binding_size",
            limit,
            needed,
        };
        let (nv, e) = (pack.vertex_count() as u32, pack.coeff_count() as u32);
        let j = pack.header.joints.len() as u64;
        if gnm_frame_bytes(e as usize) > limit {
            return Err(over(
                "the scaled coefficients".into(),
                gnm_frame_bytes(e as usize),
            ));
        }
        if (j + 1) * JOINT_BYTES > limit {
            return Err(over("the joint palette".into(), (j + 1) * JOINT_BYTES));
        }
        let plan = plan_gnm_chunks(nv, e, limit).map_err(|r| {
            over(
                format!("the basis row of vertex {} ({} coefficients)", r.vertex, e),
                r.bytes.max(GNM_STATIC_BYTES),
            )
        })?;
        let ctx = &self.ctx;
        let p = ctx.pipelines();
        let gnm = ctx.gnm_pipeline()?;
        let lanes = gnm_lanes(e);
        let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
        let frame_buffer = output(ctx, "mien gnm frame", gnm_frame_bytes(e as usize));
        let palette = output(ctx, "mien gnm palette", (j + 1) * JOINT_BYTES);
        let mut bytes = frame_buffer.size() + palette.size();
        let mut chunks = Vec::with_capacity(plan.len());
        let too_many = |count: u32| Error::OverLimits {
            what: format!("a dispatch of {count} vertices"),
            limit_name: "max_compute_workgroups_per_dimension",
            limit: u64::from(max_groups),
            needed: u64::from(count),
        };
        for (v0, count) in plan {
            let a = gnm_chunk_arrays(pack, v0, count);
            let (fx, fy, f_row) =
                gnm_dispatch(count, lanes, max_groups).ok_or_else(|| too_many(count))?;
            let (sx, sy, s_row) =
                dispatch_size(count, max_groups).ok_or_else(|| too_many(count))?;
            let uniform = |label: &str, bytes: &[u8]| {
                ctx.device()
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(label),
                        contents: bytes,
                        usage: wgpu::BufferUsages::UNIFORM,
                    })
            };
            let forward_params = uniform(
                "mien gnm params",
                bytemuck::bytes_of(&GnmParams {
                    count,
                    row_width: f_row,
                    coeffs: e,
                    lanes,
                    first_half: a.first_half,
                    ..GnmParams::default()
                }),
            );
            let skin_params = uniform(
                "mien gnm skin params",
                bytemuck::bytes_of(&DispatchParams {
                    count,
                    row_width: s_row,
                    _pad0: 0,
                    _pad1: 0,
                }),
            );
            let none = wgpu::BufferUsages::empty();
            let basis = storage(ctx, "mien gnm basis", bytemuck::cast_slice(a.basis), none);
            let statics = storage(
                ctx,
                "mien gnm neutral, seam, eye weights",
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
            let local = output(ctx, "mien gnm head-local", u64::from(count) * VERTEX_BYTES);
            let posed = output(ctx, "mien gnm posed", u64::from(count) * VERTEX_BYTES);
            let forward_group = bind_group(
                ctx.device(),
                "mien gnm forward",
                &gnm.layout,
                &[
                    forward_params.as_entire_binding(),
                    frame_buffer.as_entire_binding(),
                    basis.as_entire_binding(),
                    statics.as_entire_binding(),
                    local.as_entire_binding(),
                ],
            );
            let skin_group = bind_group(
                ctx.device(),
                "mien gnm skin",
                &p.skin_layout,
                &[
                    skin_params.as_entire_binding(),
                    local.as_entire_binding(),
                    joints.as_entire_binding(),
                    weights.as_entire_binding(),
                    palette.as_entire_binding(),
                    posed.as_entire_binding(),
                ],
            );
            bytes += [
                &forward_params,
                &skin_params,
                &basis,
                &statics,
                &joints,
                &weights,
                &local,
                &posed,
            ]
            .iter()
            .map(|b| b.size())
            .sum::<u64>();
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
        Ok(GpuHead {
            chunks,
            vertex_count: nv,
            frame: GnmFrame::new(pack),
            frame_bytes: Vec::new(),
            palette_entries: Vec::new(),
            frame_buffer,
            palette,
            bytes,
        })
    }
}

/// Write `h`'s current frame (scaled coefficients, eye rotations, palette) to its buffers.
fn write_frame(ctx: &WgpuContext, h: &mut GpuHead) {
    gnm_frame(&h.frame, &mut h.frame_bytes);
    ctx.queue().write_buffer(&h.frame_buffer, 0, &h.frame_bytes);
    gnm_palette(&h.frame, &mut h.palette_entries);
    ctx.queue()
        .write_buffer(&h.palette, 0, bytemuck::cast_slice(&h.palette_entries));
}

impl GnmBackend for WgpuGnmBackend {
    type Encoder = wgpu::CommandEncoder;

    fn upload_gnm(&mut self, pack: &GnmPack) -> mien_core::Result<GnmHandle> {
        let handle =
            GnmHandle(
                u32::try_from(self.heads.len()).map_err(|_| mien_core::Error::Limit {
                    what: "heads in one backend".into(),
                    limit: u64::from(u32::MAX),
                    found: self.heads.len() as u64,
                })?,
            );
        let mut head = self
            .ctx
            .scoped("a head upload", || self.upload_head(pack))??;
        // Before any frame the head shows its rest pose.
        write_frame(&self.ctx, &mut head);
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
        let h = &mut self.heads[head.0 as usize];
        h.frame.set(head_ext, joint_world)?;
        write_frame(&self.ctx, h);
        Ok(())
    }

    fn encode(&mut self, encoder: &mut wgpu::CommandEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        if self.heads.is_empty() {
            return Ok(());
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
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            for h in &self.heads {
                for c in &h.chunks {
                    let (group, (x, y)) = if forward {
                        (&c.forward_group, c.forward_groups)
                    } else {
                        (&c.skin_group, c.skin_groups)
                    };
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(x, y, 1);
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, head: GnmHandle) -> mien_core::Result<PosedVertices> {
        let h = self.head(head)?;
        let parts: Vec<(&wgpu::Buffer, u64, u64)> = h
            .chunks
            .iter()
            .map(|c| (&c.posed, 0, u64::from(c.count) * VERTEX_BYTES))
            .collect();
        let data = self.ctx.read_buffers("posed head vertices", &parts)?;
        let mut out = PosedVertices {
            positions: Vec::with_capacity(h.vertex_count as usize),
            normals: Vec::with_capacity(h.vertex_count as usize),
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
        self.heads.iter().map(|h| h.bytes).sum()
    }
}
