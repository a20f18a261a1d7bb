//! The wgpu rig backend: a batch of rigs, each split into vertex-range chunks whose every buffer fits
//! the device's binding limit, posed by the morph and skin kernels in two compute passes.

use glam::Mat4;
use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
};
use mien_shaders::data::{VERTEX_BYTES, chunk_arrays, plan_chunks};
use mien_shaders::{DispatchParams, JointMatrices, dispatch_size};
use wgpu::util::DeviceExt;

use crate::context::WgpuContext;
use crate::error::{Error, Result};
use crate::pipelines::bind_group;
use crate::timing::Stage;

/// Bytes per palette entry ([`JointMatrices`]).
const JOINT_BYTES: u64 = std::mem::size_of::<JointMatrices>() as u64;

/// A contiguous vertex range of one rig with its own buffers.
pub(crate) struct Chunk {
    /// First vertex of the chunk in the rig.
    pub v0: u32,
    /// Vertices.
    pub count: u32,
    pub posed: wgpu::Buffer,
    pub morphed: wgpu::Buffer,
    pub tint: wgpu::Buffer,
    morph_group: wgpu::BindGroup,
    skin_group: wgpu::BindGroup,
    groups: (u32, u32),
}

pub(crate) struct GpuRig {
    pub chunks: Vec<Chunk>,
    vertex_count: u32,
    frame: FrameControls,
    joints: Vec<JointMatrices>,
    weights: wgpu::Buffer,
    palette: wgpu::Buffer,
    bytes: u64,
}

/// [`RigBackend`] on wgpu: the CSR morph blend and LBS of every uploaded rig recorded into the
/// caller's command encoder as two compute passes (morph, then skin), ready for a lift in the same
/// encoder and one submission. Buffers are created once at upload; per frame only the weights and
/// palette are written (`queue.write_buffer`); nothing is allocated per frame.
pub struct WgpuRigBackend {
    ctx: WgpuContext,
    rigs: Vec<GpuRig>,
    binding_limit: u64,
}

impl std::fmt::Debug for WgpuRigBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuRigBackend")
            .field("rigs", &self.rigs.len())
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

/// The chunk plan of `rig` under `limit`, as this crate's error.
fn plan(rig: &RigData, limit: u64) -> Result<Vec<(u32, u32)>> {
    plan_chunks(rig, limit).map_err(|e| Error::OverLimits {
        what: format!("the morph deltas of vertex {}", e.vertex),
        limit_name: "max_storage_buffer_binding_size",
        limit,
        needed: e.bytes,
    })
}

impl WgpuRigBackend {
    /// An empty batch on `ctx`.
    pub fn new(ctx: &WgpuContext) -> Self {
        WgpuRigBackend {
            ctx: ctx.clone(),
            rigs: Vec::new(),
            binding_limit: ctx.binding_limit(),
        }
    }

    /// Like [`WgpuRigBackend::new`] but splitting rigs as if the device's binding limit were
    /// `bytes` (at most the real one): the splitting path can be exercised on small rigs.
    pub fn with_binding_limit(ctx: &WgpuContext, bytes: u64) -> Self {
        WgpuRigBackend {
            ctx: ctx.clone(),
            rigs: Vec::new(),
            binding_limit: bytes.clamp(256, ctx.binding_limit()),
        }
    }

    /// The context.
    pub fn context(&self) -> &WgpuContext {
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

    /// Chunks of `rig` (vertex ranges), for lifts.
    pub(crate) fn chunks(&self, h: RigHandle) -> Result<&[Chunk], mien_core::Error> {
        Ok(&self.rig(h)?.chunks)
    }

    /// Fill every morphed and posed buffer with `word` (a test aid: poisoned outputs make an
    /// unwritten element visible).
    pub fn poison_outputs(&self, word: u32) {
        for r in &self.rigs {
            for c in &r.chunks {
                for b in [&c.morphed, &c.posed] {
                    let words = vec![word; (b.size() / 4) as usize];
                    self.ctx
                        .queue()
                        .write_buffer(b, 0, bytemuck::cast_slice(&words));
                }
            }
        }
    }

    fn upload_rig(&self, rig: &RigData) -> Result<GpuRig> {
        let limit = self.binding_limit;
        let check = |what: &str, needed: u64| {
            if needed > limit {
                Err(Error::OverLimits {
                    what: what.into(),
                    limit_name: "max_storage_buffer_binding_size",
                    limit,
                    needed,
                })
            } else {
                Ok(())
            }
        };
        check("the morph weights", u64::from(rig.weight_count) * 4)?;
        check("the joint palette", rig.palette.len() as u64 * JOINT_BYTES)?;
        let max_groups = self.ctx.limits().max_compute_workgroups_per_dimension;
        let plan = plan(rig, limit)?;
        let ctx = &self.ctx;
        let p = ctx.pipelines();
        let weights = output(ctx, "mien weights", u64::from(rig.weight_count) * 4);
        let palette = output(
            ctx,
            "mien palette",
            rig.palette.len().max(1) as u64 * JOINT_BYTES,
        );
        let mut chunks = Vec::with_capacity(plan.len());
        let mut bytes = weights.size() + palette.size();
        for (v0, count) in plan {
            let arrays = chunk_arrays(rig, v0, count);
            let (gx, gy, row_width) =
                dispatch_size(count, max_groups).ok_or_else(|| Error::OverLimits {
                    what: format!("a dispatch of {count} vertices"),
                    limit_name: "max_compute_workgroups_per_dimension",
                    limit: u64::from(max_groups),
                    needed: u64::from(count.div_ceil(64)),
                })?;
            let params = DispatchParams {
                count,
                row_width,
                _pad0: 0,
                _pad1: 0,
            };
            let uniform = ctx
                .device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("mien dispatch params"),
                    contents: bytemuck::bytes_of(&params),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
            let base = storage(
                ctx,
                "mien bind vertices",
                bytemuck::cast_slice(&arrays.base),
                wgpu::BufferUsages::empty(),
            );
            let offsets = storage(
                ctx,
                "mien csr offsets",
                bytemuck::cast_slice(&arrays.offsets),
                wgpu::BufferUsages::empty(),
            );
            let target = storage(
                ctx,
                "mien csr targets",
                bytemuck::cast_slice(&arrays.targets),
                wgpu::BufferUsages::empty(),
            );
            let delta = storage(
                ctx,
                "mien csr deltas",
                bytemuck::cast_slice(&arrays.deltas),
                wgpu::BufferUsages::empty(),
            );
            let joints = storage(
                ctx,
                "mien skin joints",
                bytemuck::cast_slice(&arrays.joints),
                wgpu::BufferUsages::empty(),
            );
            let skin_w = storage(
                ctx,
                "mien skin weights",
                bytemuck::cast_slice(&arrays.weights),
                wgpu::BufferUsages::empty(),
            );
            let tint = storage(
                ctx,
                "mien tints",
                bytemuck::cast_slice(&arrays.tints),
                wgpu::BufferUsages::empty(),
            );
            let morphed = output(ctx, "mien morphed", u64::from(count) * VERTEX_BYTES);
            let posed = output(ctx, "mien posed", u64::from(count) * VERTEX_BYTES);
            let morph_group = bind_group(
                ctx.device(),
                "mien morph",
                &p.morph_layout,
                &[
                    uniform.as_entire_binding(),
                    base.as_entire_binding(),
                    offsets.as_entire_binding(),
                    target.as_entire_binding(),
                    delta.as_entire_binding(),
                    weights.as_entire_binding(),
                    morphed.as_entire_binding(),
                ],
            );
            let skin_group = bind_group(
                ctx.device(),
                "mien skin",
                &p.skin_layout,
                &[
                    uniform.as_entire_binding(),
                    morphed.as_entire_binding(),
                    joints.as_entire_binding(),
                    skin_w.as_entire_binding(),
                    palette.as_entire_binding(),
                    posed.as_entire_binding(),
                ],
            );
            let chunk_bytes = [
                &base, &offsets, &target, &delta, &joints, &skin_w, &tint, &morphed, &posed,
            ]
            .iter()
            .map(|b| b.size())
            .sum::<u64>()
                + 16;
            bytes += chunk_bytes;
            chunks.push(Chunk {
                v0,
                count,
                posed,
                morphed,
                tint,
                morph_group,
                skin_group,
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
            bytes,
        })
    }
}

impl RigBackend for WgpuRigBackend {
    type Encoder = wgpu::CommandEncoder;

    fn upload(&mut self, rig: &RigData) -> mien_core::Result<RigHandle> {
        rig.validate()?;
        let handle =
            RigHandle(
                u32::try_from(self.rigs.len()).map_err(|_| mien_core::Error::Limit {
                    what: "rigs in one backend".into(),
                    limit: u64::from(u32::MAX),
                    found: self.rigs.len() as u64,
                })?,
            );
        let gpu = self.ctx.scoped("a rig upload", || self.upload_rig(rig))??;
        // Before any controls the rig shows its bind pose: identity palette, zero weights.
        let mut gpu = gpu;
        let identity = RigControls {
            weights: vec![0.0; gpu.frame.weights.len()],
            palette: vec![Mat4::IDENTITY; gpu.frame.palette.len()],
        };
        write_controls(&self.ctx, &mut gpu, &identity)?;
        self.rigs.push(gpu);
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
        let r = &mut self.rigs[rig.0 as usize];
        write_controls(&self.ctx, r, controls)
    }

    fn encode(&mut self, encoder: &mut wgpu::CommandEncoder) -> mien_core::Result<()> {
        self.ctx.check()?;
        let p = self.ctx.pipelines();
        for (stage, pipeline) in [(Stage::Morph, &p.morph), (Stage::Skin, &p.skin)] {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(if stage == Stage::Morph {
                    "mien morph"
                } else {
                    "mien skin"
                }),
                timestamp_writes: self.ctx.timestamps().map(|t| t.writes(stage)),
            });
            pass.set_pipeline(pipeline);
            for r in &self.rigs {
                for c in &r.chunks {
                    pass.set_bind_group(
                        0,
                        if stage == Stage::Morph {
                            &c.morph_group
                        } else {
                            &c.skin_group
                        },
                        &[],
                    );
                    pass.dispatch_workgroups(c.groups.0, c.groups.1, 1);
                }
            }
        }
        Ok(())
    }

    fn read_vertices(&self, rig: RigHandle) -> mien_core::Result<PosedVertices> {
        let r = self.rig(rig)?;
        let parts: Vec<(&wgpu::Buffer, u64, u64)> = r
            .chunks
            .iter()
            .map(|c| (&c.posed, 0, u64::from(c.count) * VERTEX_BYTES))
            .collect();
        let data = self.ctx.read_buffers("posed vertices", &parts)?;
        let mut out = PosedVertices {
            positions: Vec::with_capacity(r.vertex_count as usize),
            normals: Vec::with_capacity(r.vertex_count as usize),
        };
        for bytes in data {
            let f: &[f32] = bytemuck::try_cast_slice(&bytes).map_err(|e| Error::Readback {
                what: "posed vertices".into(),
                reason: e.to_string(),
            })?;
            for v in f.chunks_exact(6) {
                out.positions.push([v[0], v[1], v[2]]);
                out.normals.push([v[3], v[4], v[5]]);
            }
        }
        Ok(out)
    }

    fn bytes(&self) -> u64 {
        self.rigs.iter().map(|r| r.bytes).sum()
    }
}

/// Apply the weight rules on the CPU and write weights and palette with `queue.write_buffer`.
fn write_controls(
    ctx: &WgpuContext,
    r: &mut GpuRig,
    controls: &RigControls,
) -> mien_core::Result<ControlStats> {
    let stats = r.frame.set(controls)?;
    if !r.frame.weights.is_empty() {
        ctx.queue()
            .write_buffer(&r.weights, 0, bytemuck::cast_slice(&r.frame.weights));
    }
    for ((j, m), n) in r
        .joints
        .iter_mut()
        .zip(&r.frame.palette)
        .zip(&r.frame.normal_palette)
    {
        *j = JointMatrices::new(m, n);
    }
    if !r.joints.is_empty() {
        ctx.queue()
            .write_buffer(&r.palette, 0, bytemuck::cast_slice(&r.joints));
    }
    Ok(stats)
}
