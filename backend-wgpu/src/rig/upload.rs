//! Uploading a rig to wgpu as a batch of N instances: the per-instance weights `(N,W)` and
//! palettes `(N,P)` and the active slots per block of 8 instances (whole, one binding each), and per vertex-range chunk the rig's arrays (bind
//! vertices, morph tile slots and deltas, skin joints and weights, tints — once, whatever N), the outputs `(N,count,6)`,
//! the uniform and the bind groups.

use mien_core::rig::{FrameControls, RigData};
use mien_shaders::data::rig::{RigBatchFrames, TANGENT_VERTEX_BYTES, plan_rig_upload};
use mien_shaders::data::{VERTEX_BYTES, chunk_arrays};
use mien_shaders::{DispatchParams, dispatch_size};
use wgpu::util::DeviceExt;

use super::{Chunk, Upload, WgpuRigBackend, output, storage};
use crate::error::{Error, Result};
use crate::pipelines::bind_group;

impl WgpuRigBackend {
    /// Upload `rig` for `instances` characters (≥ 1; the caller checked).
    pub(super) fn upload_rig(&self, rig: &RigData, instances: u32) -> Result<Upload> {
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
            return Err(over(
                "the instances of one upload".into(),
                "max_compute_workgroups_per_dimension",
                u64::from(max_groups),
                u64::from(instances),
            ));
        }
        let plan = plan_rig_upload(rig, instances, limit)
            .map_err(|o| over(o.what, "max_storage_buffer_binding_size", limit, o.needed))?;
        let p = ctx.pipelines();
        let staged = RigBatchFrames::new(rig, instances as usize);
        let weights = output(ctx, "mien weights", 4 * staged.weights_capacity() as u64);
        let active = output(
            ctx,
            "mien active slots",
            4 * staged.active_capacity() as u64,
        );
        let palette_bytes = bytemuck::cast_slice::<_, u8>(&staged.palette).len() as u64;
        let palette = output(ctx, "mien palettes", palette_bytes);
        let carries_tangents = !rig.tangents.is_empty();
        let dense = carries_tangents.then(|| {
            output(
                ctx,
                "mien dense weights",
                4 * u64::from(instances) * u64::from(rig.weight_count),
            )
        });
        let mut chunks = Vec::with_capacity(plan.len());
        let mut bytes = weights.size() + active.size() + palette.size();
        bytes += dense.as_ref().map_or(0, |d| d.size());
        let none = wgpu::BufferUsages::empty();
        for (v0, count) in plan {
            let a = chunk_arrays(rig, v0, count);
            let (gx, gy, row_width) = dispatch_size(count, max_groups).ok_or_else(|| {
                over(
                    format!("a dispatch of {count} vertices"),
                    "max_compute_workgroups_per_dimension",
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
            let uniform = ctx
                .device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("mien dispatch params"),
                    contents: bytemuck::bytes_of(&params),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
            let cast = |label: &str, b: &[u8]| storage(ctx, label, b, none);
            let base = cast("mien bind vertices", bytemuck::cast_slice(&a.base));
            let tile_slots = cast("mien morph tile slots", bytemuck::cast_slice(&a.tile_slots));
            let delta = cast("mien morph deltas", bytemuck::cast_slice(&a.deltas));
            let joints = cast("mien skin joints", bytemuck::cast_slice(&a.joints));
            let skin_w = cast("mien skin weights", bytemuck::cast_slice(&a.weights));
            let tint = cast("mien tints", bytemuck::cast_slice(&a.tints));
            let out_bytes = u64::from(count) * u64::from(instances) * VERTEX_BYTES;
            let morphed = output(ctx, "mien morphed", out_bytes);
            let posed = output(ctx, "mien posed", out_bytes);
            let morph_group = bind_group(
                ctx.device(),
                "mien morph",
                &p.morph_layout,
                &[
                    uniform.as_entire_binding(),
                    base.as_entire_binding(),
                    tile_slots.as_entire_binding(),
                    active.as_entire_binding(),
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
            let tangent = dense.as_ref().map(|dense| {
                let rows = cast("mien tangent rows", bytemuck::cast_slice(&a.tangent_rows));
                let data = cast("mien tangent data", bytemuck::cast_slice(&a.tangent_data));
                let out = output(
                    ctx,
                    "mien posed tangents",
                    u64::from(count) * u64::from(instances) * TANGENT_VERTEX_BYTES,
                );
                let group = bind_group(
                    ctx.device(),
                    "mien tangent",
                    &p.tangent_layout,
                    &[
                        uniform.as_entire_binding(),
                        rows.as_entire_binding(),
                        data.as_entire_binding(),
                        dense.as_entire_binding(),
                        morphed.as_entire_binding(),
                        joints.as_entire_binding(),
                        skin_w.as_entire_binding(),
                        palette.as_entire_binding(),
                        out.as_entire_binding(),
                    ],
                );
                bytes += rows.size() + data.size() + out.size();
                (out, group)
            });
            let all = [
                &base,
                &tile_slots,
                &delta,
                &joints,
                &skin_w,
                &tint,
                &morphed,
                &posed,
            ];
            bytes += all.iter().map(|b| b.size()).sum::<u64>() + uniform.size();
            chunks.push(Chunk {
                v0,
                count,
                posed,
                morphed,
                tint,
                morph_group,
                skin_group,
                tangent,
                groups: (gx, gy),
            });
        }
        Ok(Upload {
            chunks,
            vertex_count: rig.vertex_count() as u32,
            frames: vec![FrameControls::new(rig); instances as usize],
            staged,
            dirty: true,
            packed_stale: false,
            weights,
            active,
            palette,
            dense,
            bytes,
        })
    }
}
