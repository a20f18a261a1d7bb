//! The linear-head stage, written once: `.aosrig` heads, each uploaded once as a batch of
//! instances that share its basis, split into vertex-range chunks whose every binding fits the
//! device's limit, posed by the GNM forward kernel and the rig's skin kernel in two passes.

use glam::Mat4;
use mien_core::gnm::tiled::BasisTiles;
use mien_core::gnm::{GnmBackend, GnmFrame, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_shaders::data::gnm::{GnmBatchFrames, gnm_chunk_arrays, plan_gnm_upload, set_gnm_batch};
use mien_shaders::{
    DispatchParams, GNM_COOP_INSTANCE_BLOCK, GNM_COOP_ROW_BLOCK, GNM_COOP_TILE_SPLIT,
    GNM_TILE_VERTICES, GnmCoopParams, GnmFrameHeader, GnmParams, JointMatrices, dispatch_size,
    gnm_dispatch,
};

use crate::device::{Dispatch, GpuDevice, Usage};
use crate::handles::{BindingLimit, Handles};
use crate::kernel::Entry;
use crate::lift::PosedPart;
use crate::rig::{Vertex, push_vertices};
use crate::timing::Stage;
use crate::typed::Typed;

/// A contiguous vertex range of one upload with its own buffers (outputs hold every instance).
struct Chunk<G: GpuDevice> {
    count: u32,
    /// `(N,count,6)` head-local vertices (the skin pass's input).
    local: Typed<G, Vertex>,
    /// `(N,count,6)` posed vertices.
    posed: Typed<G, Vertex>,
    forward_group: G::BindGroup,
    skin_group: G::BindGroup,
    forward_groups: (u32, u32),
    skin_groups: (u32, u32),
    /// The tensor-core pass, when the upload runs it.
    coop: Option<CoopChunk<G>>,
}

/// A chunk's tensor-core pass: `blend` into `deltas`, then `finish` (eyes, seam, skin) into the
/// posed vertices.
struct CoopChunk<G: GpuDevice> {
    /// [`Entry::GnmCoop`], or [`Entry::GnmCoopOne`] for batches of up to 16.
    blend_entry: Entry,
    blend: G::BindGroup,
    finish: G::BindGroup,
    /// Instance blocks of 64 (16 for `blend_one`) × thirds of vertex tiles.
    blend_grid: (u32, u32),
    /// Vertex groups of 64 × instances.
    finish_grid: (u32, u32),
    /// `(N₁₆, 3·V₆₄)` blended deltas.
    _deltas: Typed<G, f32>,
}

/// Batches from this many instances run the tensor-core forward pass where the device has it.
pub const COOP_MIN_BATCH: u32 = 16;

/// An upload's tensor-core inputs: the scaled coefficients rounded to fp16, `(N₆₄, E₁₆)` with
/// zeros past N and E, written per frame from `scratch`.
struct CoopInputs<G: GpuDevice> {
    scaled_h: Typed<G, u16>,
    scratch: Vec<u16>,
    stride: usize,
    /// The last frame ran the tensor-core pass (its coefficients fit fp16).
    used: bool,
}

/// One uploaded pack and its N instances.
struct Upload<G: GpuDevice> {
    chunks: Vec<Chunk<G>>,
    vertex_count: u32,
    frames: Vec<GnmFrame>,
    staged: GnmBatchFrames,
    /// `staged` changed since it was last written to the buffers.
    dirty: bool,
    /// `(N,)` eye frames.
    heads: Typed<G, GnmFrameHeader>,
    /// `(N,E)` scaled coefficients.
    scaled: Typed<G, f32>,
    /// `(N,J+1)` skin palettes.
    palette: Typed<G, JointMatrices>,
    /// White vertex tints `(max chunk vertices,)` for a lift (a pack has no vertex colours).
    tint: Typed<G, u32>,
    bytes: u64,
    coop: Option<CoopInputs<G>>,
}

/// [`GnmBackend`] on any [`GpuDevice`]: `gnm.wgsl` (basis, eyes, seam) then `skin.wgsl` (LBS, the
/// rig's kernel and data layout) for every upload, recorded into the caller's encoder as two
/// passes with one dispatch per upload and chunk. The basis is uploaded verbatim (fp16 pairs),
/// once per upload whatever its instance count, split by vertex ranges so no binding exceeds the
/// device's binding limit. `set_head_ext` is CPU work only; `encode` writes the staged per-frame
/// arrays of the uploads that changed; nothing is allocated per frame. The forward pass writes
/// the morph stage's timestamps (it is the blend), the skin pass the skin stage's.
pub struct GpuGnmBackend<G: GpuDevice> {
    g: G,
    uploads: Vec<Upload<G>>,
    handles: Handles,
    limit: BindingLimit,
    tensor_cores: bool,
}

impl<G: GpuDevice> std::fmt::Debug for GpuGnmBackend<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuGnmBackend")
            .field("device", &G::NAME)
            .field("uploads", &self.uploads.len())
            .field("heads", &self.handles.len())
            .field("binding_limit", &self.limit.bytes)
            .finish()
    }
}

impl<G: GpuDevice> Drop for GpuGnmBackend<G> {
    fn drop(&mut self) {
        self.g.release();
    }
}

impl<G: GpuDevice> GpuGnmBackend<G> {
    /// An empty backend on `g`.
    pub fn new(g: &G) -> Self {
        Self::limited(g, None)
    }

    /// Like [`GpuGnmBackend::new`] but splitting uploads as if the device's binding limit were
    /// `bytes` (256 up to the real one), so the split path runs on small packs.
    pub fn with_binding_limit(g: &G, bytes: u64) -> Self {
        Self::limited(g, Some(bytes))
    }

    fn limited(g: &G, bytes: Option<u64>) -> Self {
        GpuGnmBackend {
            g: g.clone(),
            uploads: Vec::new(),
            handles: Handles::new("head"),
            limit: BindingLimit::new(g.caps(), bytes),
            tensor_cores: true,
        }
    }

    /// Whether later uploads of [`COOP_MIN_BATCH`] instances or more run the forward pass on
    /// tensor cores where the device has them ([`crate::Caps::coop_gnm`]; on by default): fp16
    /// coefficients, fp32 accumulation, within `mien_cpu::conformance::gnm::coop_vertex_bounds`
    /// of the reference instead of bit-for-bit the exact kernel. Off: the exact kernel always.
    pub fn set_tensor_cores(&mut self, on: bool) {
        self.tensor_cores = on;
    }

    /// Whether `head`'s upload runs the tensor-core forward pass, and whether its last encoded
    /// frame did (a frame whose scaled coefficients do not fit fp16 runs the exact kernel).
    ///
    /// # Errors
    /// An unknown handle.
    pub fn tensor_core_state(&self, head: GnmHandle) -> mien_core::Result<(bool, bool)> {
        let (u, _) = self.find(head)?;
        Ok(self.uploads[u]
            .coop
            .as_ref()
            .map_or((false, false), |c| (true, c.used)))
    }

    /// The device.
    pub fn context(&self) -> &G {
        &self.g
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
    /// ([`crate::GpuDebugLift::from_parts`]): one part per chunk, starting at vertex
    /// `instance × chunk vertices` of the chunk's posed buffer, with white tints.
    ///
    /// # Errors
    /// An unknown handle.
    pub fn posed_parts(&self, head: GnmHandle) -> mien_core::Result<Vec<PosedPart<'_, G>>> {
        let (u, i) = self.find(head)?;
        let up = &self.uploads[u];
        let mut v0 = 0;
        Ok(up
            .chunks
            .iter()
            .map(|c| {
                let part = PosedPart {
                    v0,
                    count: c.count,
                    first: i as u32 * c.count,
                    posed: c.posed.raw(),
                    tint: up.tint.raw(),
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
        self.handles.find(h.0)
    }

    /// Fill every head-local and posed buffer with `word` (a test aid: an unwritten element becomes
    /// visible).
    ///
    /// # Errors
    /// Device errors.
    pub fn poison_outputs(&self, word: u32) -> mien_core::Result<()> {
        let parts: Vec<_> = self
            .uploads
            .iter()
            .flat_map(|u| &u.chunks)
            .flat_map(|c| [&c.local, &c.posed])
            .map(|b| (b.raw(), 0, b.bytes()))
            .collect();
        self.g.fill(&parts, word).map_err(Into::into)
    }

    fn upload(&self, pack: &GnmPack, instances: u32) -> Result<Upload<G>, G::Error> {
        let g = &self.g;
        let caps = g.caps();
        let limit = self.limit.bytes;
        let max_groups = caps.max_groups_xy;
        if instances > caps.max_groups_z {
            return Err(G::over_limits(
                "the instances of one upload".into(),
                caps.max_groups_z_name,
                u64::from(caps.max_groups_z),
                u64::from(instances),
            ));
        }
        let plan = plan_gnm_upload(pack, instances, limit)
            .map_err(|o| G::over_limits(o.what, self.limit.name, limit, o.needed))?;
        let (nv, e) = (pack.vertex_count() as u32, pack.coeff_count() as u32);
        g.supports(Entry::GnmForward)?;
        let tiles = BasisTiles::new(pack, GNM_TILE_VERTICES as usize);
        let frame = GnmFrame::new(pack);
        let staged = GnmBatchFrames::new(&frame, instances as usize);
        let st = Usage::Storage;
        let heads = Typed::frame(g, "the gnm eye frames", st, &staged.heads)?;
        let scaled = Typed::frame(g, "the gnm coefficients", st, &staged.scaled)?;
        let palette = Typed::frame(g, "the gnm palettes", st, &staged.palette)?;
        let mut bytes = heads.bytes() + scaled.bytes() + palette.bytes();
        let too_many = |count: u32| {
            G::over_limits(
                format!("a dispatch of {count} vertices"),
                caps.max_groups_xy_name,
                u64::from(max_groups),
                u64::from(count),
            )
        };
        let coop_on = self.tensor_cores
            && caps.coop_gnm
            && instances >= COOP_MIN_BATCH
            && g.supports(Entry::GnmCoop).is_ok();
        let block = GNM_COOP_INSTANCE_BLOCK as usize;
        let coop = if coop_on {
            let stride = (e as usize).next_multiple_of(16).max(16);
            let n64 = (instances as usize).next_multiple_of(block);
            let scratch = vec![0u16; n64 * stride];
            let scaled_h = Typed::frame(g, "the gnm coefficients (fp16)", st, &scratch)?;
            bytes += scaled_h.bytes();
            Some(CoopInputs {
                scaled_h,
                scratch,
                stride,
                used: false,
            })
        } else {
            None
        };
        let mut chunks = Vec::with_capacity(plan.len());
        for (v0, count) in plan {
            let mut a = gnm_chunk_arrays(pack, &tiles, v0, count);
            if coop.is_some() {
                // 16 zero rows of 192 halves after the last tile: the tensor-core pass reads
                // whole 16-row steps of the basis (rows past E meet zero coefficients).
                a.basis.extend(std::iter::repeat_n(0u32, 16 * 96));
            }
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
            let skin_params = DispatchParams {
                count,
                row_width: s_row,
                _pad0: 0,
                _pad1: 0,
            };
            let un = Usage::Uniform;
            let forward_params = Typed::upload(g, "gnm parameters", un, &[forward_params])?;
            let skin_params = Typed::upload(g, "gnm skin parameters", un, &[skin_params])?;
            let basis = Typed::upload(g, "the gnm basis", st, &a.basis)?;
            let statics = Typed::upload(g, "the gnm statics", st, &a.statics)?;
            let joints = Typed::upload(g, "the gnm skin joints", st, &a.joints)?;
            let weights = Typed::upload(g, "the gnm skin weights", st, &a.weights)?;
            let out_len = count as usize * instances as usize;
            let local = Typed::output(g, "head-local vertices", out_len)?;
            let posed = Typed::output(g, "posed head vertices", out_len)?;
            let forward_group = g.bind(
                Entry::GnmForward,
                &[
                    forward_params.bind(),
                    heads.bind(),
                    scaled.bind(),
                    basis.bind(),
                    statics.bind(),
                    local.bind(),
                ],
            )?;
            let skin_group = g.bind(
                Entry::Skin,
                &[
                    skin_params.bind(),
                    local.bind(),
                    joints.bind(),
                    weights.bind(),
                    palette.bind(),
                    posed.bind(),
                ],
            )?;
            let coop_chunk = match &coop {
                Some(c) => {
                    let p = GnmCoopParams {
                        count,
                        coeffs: e,
                        instances,
                        stride: c.stride as u32,
                    };
                    let p = Typed::upload(g, "gnm tensor-core parameters", un, &[p])?;
                    let n16 = instances.next_multiple_of(GNM_COOP_ROW_BLOCK) as usize;
                    let row = 3 * count.next_multiple_of(GNM_TILE_VERTICES) as usize;
                    let deltas = Typed::<G, f32>::output(g, "gnm blended deltas", n16 * row)?;
                    bytes += p.bytes() + deltas.bytes();
                    let binds = [
                        p.bind(),
                        heads.bind(),
                        c.scaled_h.bind(),
                        basis.bind(),
                        statics.bind(),
                        joints.bind(),
                        weights.bind(),
                        palette.bind(),
                        deltas.bind(),
                        posed.bind(),
                    ];
                    // Up to 16 instances: one row block per workgroup (no products of zeros).
                    let (blend_entry, rows) = if instances <= GNM_COOP_ROW_BLOCK {
                        (Entry::GnmCoopOne, GNM_COOP_ROW_BLOCK)
                    } else {
                        (Entry::GnmCoop, GNM_COOP_INSTANCE_BLOCK)
                    };
                    let blend = g.bind(blend_entry, &binds)?;
                    let finish = g.bind(Entry::GnmCoopFinish, &binds)?;
                    let blend_grid = (
                        instances.div_ceil(rows),
                        count.div_ceil(GNM_TILE_VERTICES) * GNM_COOP_TILE_SPLIT,
                    );
                    let finish_grid = (
                        count.div_ceil(mien_shaders::GNM_COOP_FINISH_WORKGROUP_SIZE),
                        instances,
                    );
                    if [blend_grid.0, blend_grid.1, finish_grid.0, finish_grid.1]
                        .iter()
                        .any(|x| *x > max_groups)
                    {
                        return Err(too_many(count));
                    }
                    Some(CoopChunk {
                        blend_entry,
                        blend,
                        finish,
                        blend_grid,
                        finish_grid,
                        _deltas: deltas,
                    })
                }
                None => None,
            };
            bytes += forward_params.bytes() + skin_params.bytes() + basis.bytes();
            bytes += statics.bytes() + joints.bytes() + weights.bytes();
            bytes += local.bytes() + posed.bytes();
            chunks.push(Chunk {
                count,
                local,
                posed,
                forward_group,
                skin_group,
                forward_groups: (fx, fy),
                skin_groups: (sx, sy),
                coop: coop_chunk,
            });
        }
        let widest = chunks.iter().map(|c| c.count).max().unwrap_or(1);
        let tint = Typed::upload(g, "white tints", st, &vec![u32::MAX; widest as usize])?;
        bytes += tint.bytes();
        Ok(Upload {
            chunks,
            vertex_count: nv,
            frames: vec![frame; instances as usize],
            staged,
            dirty: true,
            heads,
            scaled,
            palette,
            tint,
            bytes,
            coop,
        })
    }
}

/// Round `scaled` `(N,E)` to fp16 into `out` `(N₆₄, stride)` (zeros elsewhere stay zero): `false`
/// when a value is not finite or too large for fp16 (the frame then runs the exact kernel). Rows
/// convert with the F16C instructions where the CPU has them (`half`'s slice conversion), in
/// parallel for large batches.
fn to_f16(scaled: &[f32], e: usize, stride: usize, out: &mut [u16]) -> bool {
    use half::slice::HalfFloatSliceExt;
    use rayon::prelude::*;
    if e == 0 {
        return scaled.is_empty();
    }
    let row = |(o, src): (&mut [u16], &[f32])| -> bool {
        let fits = src.iter().all(|x| x.abs() <= 65504.0);
        let o: &mut [half::f16] = bytemuck::cast_slice_mut(&mut o[..src.len()]);
        o.convert_from_f32_slice(src);
        fits
    };
    // From 2^14 values in parallel: converting W4's 256 × 383 on the calling thread instead cost
    // 18–100 µs more encode time on the H100 host (2026-12-06, docs/PERFORMANCE.md).
    if scaled.len() >= 1 << 14 {
        out.par_chunks_mut(stride)
            .zip(scaled.par_chunks(e))
            .map(row)
            .reduce(|| true, |a, b| a && b)
    } else {
        // Every row converted (no short circuit), then whether all fit.
        out.chunks_mut(stride)
            .zip(scaled.chunks(e))
            .map(row)
            .filter(|fits| !fits)
            .count()
            == 0
    }
}

impl<G: GpuDevice> GnmBackend for GpuGnmBackend<G> {
    type Encoder = G::Encoder;

    fn upload_gnm_batch(
        &mut self,
        pack: &GnmPack,
        instances: u32,
    ) -> mien_core::Result<Vec<GnmHandle>> {
        self.handles.check(self.uploads.len(), instances)?;
        self.g.check().map_err(Into::into)?;
        let upload = self
            .g
            .scoped("a head upload", || self.upload(pack, instances))
            .map_err(Into::into)?
            .map_err(Into::into)?;
        self.uploads.push(upload);
        let hs = self.handles.add(self.uploads.len() - 1, instances);
        Ok(hs.into_iter().map(GnmHandle).collect())
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

    fn encode(&mut self, encoder: &mut G::Encoder) -> mien_core::Result<()> {
        self.g.check().map_err(Into::into)?;
        if self.uploads.is_empty() {
            return Ok(());
        }
        let g = &self.g;
        for u in self.uploads.iter_mut().filter(|u| u.dirty) {
            let e = u.staged.scaled.len() / u.frames.len().max(1);
            let mut write = || -> Result<(), G::Error> {
                u.heads.write(g, 0, &u.staged.heads)?;
                u.palette.write(g, 0, &u.staged.palette)?;
                if let Some(c) = &mut u.coop {
                    c.used = to_f16(&u.staged.scaled, e, c.stride, &mut c.scratch);
                    if c.used {
                        return c.scaled_h.write(g, 0, &c.scratch);
                    }
                }
                u.scaled.write(g, 0, &u.staged.scaled)
            };
            write().map_err(Into::into)?;
            u.dirty = false;
        }
        // The forward pass covers the instances in x (blocks of 8, or 64 on tensor cores),
        // skinning in z.
        let mut forward = self.uploads.iter().flat_map(|u| {
            let coop = u.coop.as_ref().is_some_and(|c| c.used);
            u.chunks.iter().map(move |c| match (&c.coop, coop) {
                (Some(cc), true) => Dispatch {
                    entry: cc.blend_entry,
                    group: &cc.blend,
                    groups: [cc.blend_grid.0, cc.blend_grid.1, 1],
                },
                _ => Dispatch {
                    entry: Entry::GnmForward,
                    group: &c.forward_group,
                    groups: [c.forward_groups.0, c.forward_groups.1, 1],
                },
            })
        });
        g.record(encoder, Stage::Morph, &mut forward)
            .map_err(Into::into)?;
        // Uploads whose frame blended on tensor cores finish (eyes, seam, skin) in one kernel.
        let mut skin = self.uploads.iter().flat_map(|u| {
            let z = u.staged.instances() as u32;
            let coop = u.coop.as_ref().is_some_and(|c| c.used);
            u.chunks.iter().map(move |c| match (&c.coop, coop) {
                (Some(cc), true) => Dispatch {
                    entry: Entry::GnmCoopFinish,
                    group: &cc.finish,
                    groups: [cc.finish_grid.0, cc.finish_grid.1, 1],
                },
                _ => Dispatch {
                    entry: Entry::Skin,
                    group: &c.skin_group,
                    groups: [c.skin_groups.0, c.skin_groups.1, z],
                },
            })
        });
        g.record(encoder, Stage::Skin, &mut skin)
            .map_err(Into::into)
    }

    fn read_vertices(&self, head: GnmHandle) -> mien_core::Result<PosedVertices> {
        let (u, i) = self.find(head)?;
        let up = &self.uploads[u];
        let parts: Vec<(&G::Buffer, u64, u64)> = up
            .chunks
            .iter()
            .map(|c| {
                let len = u64::from(c.count) * 24;
                (c.posed.raw(), i as u64 * len, len)
            })
            .collect();
        let data = self
            .g
            .read("posed head vertices", &parts)
            .map_err(Into::into)?;
        let mut out = PosedVertices {
            positions: Vec::with_capacity(up.vertex_count as usize),
            normals: Vec::with_capacity(up.vertex_count as usize),
            tangents: Vec::new(),
        };
        push_vertices(&mut out, &data);
        Ok(out)
    }

    fn bytes(&self) -> u64 {
        self.uploads.iter().map(|u| u.bytes).sum()
    }
}
