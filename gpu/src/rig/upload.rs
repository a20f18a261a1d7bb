//! Uploading a rig as a batch of N instances: the per-instance weights `(N,W)` and palettes
//! `(N,P)` and the active slots per block of 8 instances (whole, one binding each, rewritten per
//! frame), and per vertex-range chunk the rig's arrays (bind vertices, morph tile slots and
//! deltas, skin joints and weights, tints — once, whatever N), the outputs `(N,count,6)`, the
//! uniform and the bind groups.

use mien_core::rig::{FrameControls, RigData};
use mien_shaders::data::rig::{RigBatchFrames, plan_rig_upload};
use mien_shaders::data::{chunk_arrays, skin_words};
use mien_shaders::{DispatchParams, dispatch_size};

use super::{Chunk, GpuRigBackend, Pass, Upload};
use crate::device::{GpuDevice, Usage};
use crate::kernel::Entry;
use crate::typed::Typed;

impl<G: GpuDevice> GpuRigBackend<G> {
    /// Upload `rig` for `instances` characters (≥ 1; the caller checked).
    pub(super) fn upload_rig(&self, rig: &RigData, instances: u32) -> Result<Upload<G>, G::Error> {
        let g = &self.g;
        let caps = g.caps();
        let limit = self.limit.bytes;
        if instances > caps.max_groups_z {
            return Err(G::over_limits(
                "the instances of one upload".into(),
                caps.max_groups_z_name,
                u64::from(caps.max_groups_z),
                u64::from(instances),
            ));
        }
        let plan = plan_rig_upload(rig, instances, limit)
            .map_err(|o| G::over_limits(o.what, self.limit.name, limit, o.needed))?;
        let max_groups = caps.max_groups_xy;
        let staged = RigBatchFrames::new(rig, instances as usize);
        let mut weights = staged.weights.clone();
        weights.resize(staged.weights_capacity(), 0.0);
        let mut active = staged.active.clone();
        active.resize(staged.active_capacity(), 0);
        let weights = Typed::frame(g, "the morph weights", Usage::Storage, &weights)?;
        let active = Typed::frame(g, "the active slots", Usage::Storage, &active)?;
        let palette = Typed::frame(g, "the joint palettes", Usage::Storage, &staged.palette)?;
        let dense = if rig.tangents.is_empty() {
            None
        } else {
            let mut rows = staged.rows().to_vec();
            rows.resize(instances as usize * rig.weight_count as usize, 0.0);
            Some(Typed::frame(
                g,
                "the dense morph weights",
                Usage::Storage,
                &rows,
            )?)
        };
        let mut bytes = weights.bytes() + active.bytes() + palette.bytes();
        bytes += dense.as_ref().map_or(0, Typed::bytes);
        let mut chunks = Vec::with_capacity(plan.len());
        for (v0, count) in plan {
            let a = chunk_arrays(rig, v0, count);
            let (gx, gy, row_width) = dispatch_size(count, max_groups).ok_or_else(|| {
                G::over_limits(
                    format!("a dispatch of {count} vertices"),
                    caps.max_groups_xy_name,
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
            let st = Usage::Storage;
            let uniform = Typed::upload(g, "dispatch parameters", Usage::Uniform, &[params])?;
            let base = Typed::upload(g, "bind vertices", st, &a.base)?;
            let tile_slots = Typed::upload(g, "morph tile slots", st, &a.tile_slots)?;
            let deltas = Typed::upload(g, "morph deltas", st, &a.deltas)?;
            let tint = Typed::upload(g, "vertex tints", st, &a.tints)?;
            let out_len = count as usize * instances as usize;
            let posed = Typed::output(g, "posed vertices", out_len)?;
            bytes += uniform.bytes() + base.bytes() + tile_slots.bytes() + deltas.bytes();
            bytes += tint.bytes() + posed.bytes();
            let pass = match &dense {
                // No tangents: morph and skin in one pass, no morphed copy.
                None => {
                    let words = skin_words(&a.joints, &a.weights);
                    let skin = Typed::upload(g, "skin joints and weights", st, &words)?;
                    let group = g.bind(
                        Entry::MorphSkinned,
                        &[
                            uniform.bind(),
                            base.bind(),
                            tile_slots.bind(),
                            active.bind(),
                            deltas.bind(),
                            weights.bind(),
                            posed.bind(),
                            skin.bind(),
                            palette.bind(),
                        ],
                    )?;
                    bytes += skin.bytes();
                    Pass::Fused(group)
                }
                Some(dense) => {
                    let joints = Typed::upload(g, "skin joints", st, &a.joints)?;
                    let skin_w = Typed::upload(g, "skin weights", st, &a.weights)?;
                    let morphed = Typed::output(g, "morphed vertices", out_len)?;
                    let morph_group = g.bind(
                        Entry::Morph,
                        &[
                            uniform.bind(),
                            base.bind(),
                            tile_slots.bind(),
                            active.bind(),
                            deltas.bind(),
                            weights.bind(),
                            morphed.bind(),
                            // Read by `skinned` only; `main` leaves them unused.
                            joints.bind(),
                            palette.bind(),
                        ],
                    )?;
                    let skin_group = g.bind(
                        Entry::Skin,
                        &[
                            uniform.bind(),
                            morphed.bind(),
                            joints.bind(),
                            skin_w.bind(),
                            palette.bind(),
                            posed.bind(),
                        ],
                    )?;
                    let rows = Typed::upload(g, "tangent rows", st, &a.tangent_rows)?;
                    let data = Typed::upload(g, "tangent data", st, &a.tangent_data)?;
                    let out = Typed::output(g, "posed tangents", out_len)?;
                    let tangent_group = g.bind(
                        Entry::Tangent,
                        &[
                            uniform.bind(),
                            rows.bind(),
                            data.bind(),
                            dense.bind(),
                            morphed.bind(),
                            joints.bind(),
                            skin_w.bind(),
                            palette.bind(),
                            out.bind(),
                        ],
                    )?;
                    bytes += joints.bytes() + skin_w.bytes() + morphed.bytes();
                    bytes += rows.bytes() + data.bytes() + out.bytes();
                    Pass::Split {
                        morphed,
                        morph_group,
                        skin_group,
                        tangents: out,
                        tangent_group,
                    }
                }
            };
            chunks.push(Chunk {
                v0,
                count,
                posed,
                tint,
                pass,
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
