//! The rig stage, written once: a batch of rigs, each uploaded once for N instances (characters
//! sharing it), split into vertex-range chunks whose every binding fits the device's limit, posed
//! by the fused morph-and-skin kernel (rigs without tangents) or by the morph, skin and tangent
//! kernels (rigs that carry tangents), with the instances along dispatch z.

use mien_core::rig::{
    ControlStats, FrameControls, PosedVertices, RigBackend, RigControls, RigData, RigHandle,
    check_batch_args, set_each, whole_batch,
};
use mien_shaders::JointMatrices;
use mien_shaders::data::rig::{RigBatchFrames, set_batch};

use crate::device::{Dispatch, GpuDevice};
use crate::handles::{BindingLimit, Handles};
use crate::kernel::Entry;
use crate::lift::PosedPart;
use crate::timing::Stage;
use crate::typed::Typed;

mod upload;

/// One posed vertex as the skin kernel writes it: position (metres) then normal.
pub type Vertex = [f32; 6];

/// A contiguous vertex range of one upload with its own buffers (outputs hold every instance:
/// `(N,count,6)`).
pub(crate) struct Chunk<G: GpuDevice> {
    /// First vertex of the chunk in the rig.
    v0: u32,
    /// Vertices.
    count: u32,
    /// `(N,count,6)` posed vertices.
    posed: Typed<G, Vertex>,
    /// `(count,)` packed RGBA8 tints.
    tint: Typed<G, u32>,
    pass: Pass<G>,
    groups: (u32, u32),
}

/// How a chunk is posed.
pub(crate) enum Pass<G: GpuDevice> {
    /// A rig without tangents: one dispatch of [`Entry::MorphSkinned`] (morph blend and LBS in
    /// registers, writing the posed vertices; no morphed copy).
    Fused(G::BindGroup),
    /// A rig that carries tangents: [`Entry::Morph`] into the morphed copy, which both
    /// [`Entry::Skin`] and [`Entry::Tangent`] read (tangents follow the morph pass's normals).
    Split {
        /// `(N,count,6)` morphed vertices.
        morphed: Typed<G, Vertex>,
        morph_group: G::BindGroup,
        skin_group: G::BindGroup,
        /// `(N,count,4)` posed tangents.
        tangents: Typed<G, [f32; 4]>,
        tangent_group: G::BindGroup,
    },
}

impl<G: GpuDevice> Pass<G> {
    /// The first pass's entry and bind group.
    fn morph(&self) -> (Entry, &G::BindGroup) {
        match self {
            Pass::Fused(g) => (Entry::MorphSkinned, g),
            Pass::Split { morph_group, .. } => (Entry::Morph, morph_group),
        }
    }

    /// The posed tangents, for a rig that carries them.
    fn tangents(&self) -> Option<&Typed<G, [f32; 4]>> {
        match self {
            Pass::Fused(_) => None,
            Pass::Split { tangents, .. } => Some(tangents),
        }
    }
}

/// One uploaded rig and its N instances.
pub(crate) struct Upload<G: GpuDevice> {
    chunks: Vec<Chunk<G>>,
    vertex_count: u32,
    /// Per instance the weight rules' state and limited controls.
    frames: Vec<FrameControls>,
    staged: RigBatchFrames,
    /// `staged` changed since it was last written to the buffers.
    dirty: bool,
    /// An instance was staged alone since the last pack (`RigBatchFrames::pack` is due).
    packed_stale: bool,
    /// Per block of 8 instances its active slots' weights (`RigBatchFrames::weights`).
    weights: Typed<G, f32>,
    /// Per block of 8 instances its active weight slots (`RigBatchFrames::active`).
    active: Typed<G, u32>,
    /// `(N,P)` joint palettes.
    palette: Typed<G, JointMatrices>,
    /// Every instance's limited weights `(N,W)` for the tangent pass, when the rig carries
    /// tangents.
    dense: Option<Typed<G, f32>>,
    bytes: u64,
}

/// [`RigBackend`] on any [`GpuDevice`]: the morph blend over each block's active targets and LBS
/// of every uploaded rig, recorded into the caller's encoder as two passes (morph — with LBS fused
/// in for rigs without tangents — then skin with the tangent dispatches for rigs that carry them)
/// with one dispatch per upload and chunk — the instances of a batch
/// ([`RigBackend::upload_batch`]) along z, sharing the rig's arrays — ready for a lift in the same
/// encoder and one submission. Buffers are created once at upload; `set_controls` is CPU work only
/// (weight rules, staging); `encode` writes the staged weights, active lists and palettes of the
/// uploads that changed ([`GpuDevice::write`]); nothing is allocated per frame.
///
/// On Vulkan the writes wait for the frame in flight; an engine submitting the command buffers
/// itself must not call `encode` while the previous frame is executing.
pub struct GpuRigBackend<G: GpuDevice> {
    g: G,
    uploads: Vec<Upload<G>>,
    handles: Handles,
    limit: BindingLimit,
}

impl<G: GpuDevice> std::fmt::Debug for GpuRigBackend<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRigBackend")
            .field("device", &G::NAME)
            .field("uploads", &self.uploads.len())
            .field("rigs", &self.handles.len())
            .field("binding_limit", &self.limit.bytes)
            .finish()
    }
}

impl<G: GpuDevice> Drop for GpuRigBackend<G> {
    fn drop(&mut self) {
        self.g.release();
    }
}

/// Decode `(…, 6)` f32 vertices into positions and normals.
pub(crate) fn push_vertices(out: &mut PosedVertices, data: &[Vec<u8>]) {
    for bytes in data {
        for v in bytes.chunks_exact(24) {
            let f: Vertex = bytemuck::pod_read_unaligned(v);
            out.positions.push([f[0], f[1], f[2]]);
            out.normals.push([f[3], f[4], f[5]]);
        }
    }
}

impl<G: GpuDevice> GpuRigBackend<G> {
    /// An empty batch on `g`.
    pub fn new(g: &G) -> Self {
        GpuRigBackend {
            g: g.clone(),
            uploads: Vec::new(),
            handles: Handles::new("rig"),
            limit: BindingLimit::new(g.caps(), None),
        }
    }

    /// Like [`GpuRigBackend::new`] but splitting rigs as if the device's binding limit were
    /// `bytes` (256 up to the real one): the splitting path can be exercised on small rigs.
    pub fn with_binding_limit(g: &G, bytes: u64) -> Self {
        let mut b = Self::new(g);
        b.limit = BindingLimit::new(g.caps(), Some(bytes));
        b
    }

    /// The device.
    pub fn context(&self) -> &G {
        &self.g
    }

    /// The upload whose instances are exactly `rigs`, in order.
    fn whole_upload(&self, rigs: &[RigHandle]) -> Option<usize> {
        whole_batch(
            rigs,
            |h| self.find(h).ok(),
            |u| self.uploads[u].frames.len(),
        )
    }

    /// `(upload, instance)` of a handle.
    fn find(&self, h: RigHandle) -> mien_core::Result<(usize, usize)> {
        self.handles.find(h.0)
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
    /// ([`crate::GpuDebugLift::from_parts`]): one part per chunk, starting at vertex
    /// `instance × chunk vertices` of the chunk's posed buffer, with the rig's tints.
    ///
    /// # Errors
    /// An unknown handle.
    pub fn posed_parts(&self, rig: RigHandle) -> mien_core::Result<Vec<PosedPart<'_, G>>> {
        let (u, i) = self.find(rig)?;
        Ok(self.uploads[u]
            .chunks
            .iter()
            .map(|c| PosedPart {
                v0: c.v0,
                count: c.count,
                first: i as u32 * c.count,
                posed: c.posed.raw(),
                tint: c.tint.raw(),
            })
            .collect())
    }

    /// Fill every morphed, posed and tangent buffer with `word` (a test aid: poisoned outputs make
    /// an unwritten element visible).
    ///
    /// # Errors
    /// Device errors.
    pub fn poison_outputs(&self, word: u32) -> mien_core::Result<()> {
        let mut parts = Vec::new();
        for c in self.uploads.iter().flat_map(|u| &u.chunks) {
            parts.push((c.posed.raw(), 0, c.posed.bytes()));
            if let Pass::Split {
                morphed, tangents, ..
            } = &c.pass
            {
                parts.push((morphed.raw(), 0, morphed.bytes()));
                parts.push((tangents.raw(), 0, tangents.bytes()));
            }
        }
        self.g.fill(&parts, word).map_err(Into::into)
    }

    /// Write the staged per-frame arrays of the uploads that changed.
    fn write_staged(&mut self) -> Result<(), G::Error> {
        for u in self.uploads.iter_mut().filter(|u| u.dirty) {
            // Instances set one by one are packed here, once per frame.
            if u.packed_stale {
                u.staged.pack();
                u.packed_stale = false;
            }
            u.active.write(&self.g, 0, &u.staged.active)?;
            u.weights.write(&self.g, 0, &u.staged.weights)?;
            u.palette.write(&self.g, 0, &u.staged.palette)?;
            if let Some(d) = &u.dense {
                d.write(&self.g, 0, u.staged.rows())?;
            }
            u.dirty = false;
        }
        Ok(())
    }
}

impl<G: GpuDevice> RigBackend for GpuRigBackend<G> {
    type Encoder = G::Encoder;

    fn upload(&mut self, rig: &RigData) -> mien_core::Result<RigHandle> {
        let handles = self.upload_batch(rig, 1)?;
        Ok(handles[0])
    }

    /// The rig's arrays are uploaded once; each instance gets its own weights `(W,)` and palette
    /// `(P,)` slice and its own slice of every chunk's outputs, and shows the bind pose until its
    /// first `set_controls`.
    ///
    /// # Errors
    /// As [`RigBackend::upload_batch`]; the device's over-limits error (as a backend error) naming
    /// the array when the weights or palettes of all instances do not fit one binding, when one
    /// vertex's outputs for all instances do not, or when `instances` exceeds the workgroups a
    /// dispatch holds along z.
    fn upload_batch(&mut self, rig: &RigData, instances: u32) -> mien_core::Result<Vec<RigHandle>> {
        self.handles.check(self.uploads.len(), instances)?;
        rig.validate()?;
        self.g.check().map_err(Into::into)?;
        let upload = self
            .g
            .scoped("a rig upload", || self.upload_rig(rig, instances))
            .map_err(Into::into)?
            .map_err(Into::into)?;
        self.uploads.push(upload);
        let hs = self.handles.add(self.uploads.len() - 1, instances);
        Ok(hs.into_iter().map(RigHandle).collect())
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

    fn encode(&mut self, encoder: &mut G::Encoder) -> mien_core::Result<()> {
        self.g.check().map_err(Into::into)?;
        self.write_staged().map_err(Into::into)?;
        // The morph pass covers blocks of 8 instances in z, skinning one each. Rigs without
        // tangents are skinned in the morph pass itself (its time is the two stages').
        let mut morph = self.uploads.iter().flat_map(|u| {
            let z = u.staged.blocks() as u32;
            u.chunks.iter().map(move |c| {
                let (entry, group) = c.pass.morph();
                Dispatch {
                    entry,
                    group,
                    groups: [c.groups.0, c.groups.1, z],
                }
            })
        });
        self.g
            .record(encoder, Stage::Morph, &mut morph)
            .map_err(Into::into)?;
        // Tangents (rigs that carry them) read the morph pass's normals, not skinning's: they run
        // in the skin pass, timed with it.
        let per_chunk = |entry: Entry| {
            self.uploads.iter().flat_map(move |u| {
                let z = u.staged.instances() as u32;
                u.chunks.iter().filter_map(move |c| {
                    let Pass::Split {
                        skin_group,
                        tangent_group,
                        ..
                    } = &c.pass
                    else {
                        return None;
                    };
                    let group = match entry {
                        Entry::Skin => skin_group,
                        _ => tangent_group,
                    };
                    Some(Dispatch {
                        entry,
                        group,
                        groups: [c.groups.0, c.groups.1, z],
                    })
                })
            })
        };
        let split = self
            .uploads
            .iter()
            .flat_map(|u| &u.chunks)
            .any(|c| matches!(c.pass, Pass::Split { .. }));
        if !split {
            // Every rig was skinned in the morph pass: no empty pass (and its barrier).
            return Ok(());
        }
        let mut skin = per_chunk(Entry::Skin).chain(per_chunk(Entry::Tangent));
        self.g
            .record(encoder, Stage::Skin, &mut skin)
            .map_err(Into::into)
    }

    fn read_vertices(&self, rig: RigHandle) -> mien_core::Result<PosedVertices> {
        let (u, i) = self.find(rig)?;
        let up = &self.uploads[u];
        let parts: Vec<(&G::Buffer, u64, u64)> = up
            .chunks
            .iter()
            .map(|c| {
                let len = u64::from(c.count) * 24;
                (c.posed.raw(), i as u64 * len, len)
            })
            .collect();
        let data = self.g.read("posed vertices", &parts).map_err(Into::into)?;
        let mut out = PosedVertices {
            positions: Vec::with_capacity(up.vertex_count as usize),
            normals: Vec::with_capacity(up.vertex_count as usize),
            tangents: Vec::new(),
        };
        push_vertices(&mut out, &data);
        let tangents: Vec<(&G::Buffer, u64, u64)> = up
            .chunks
            .iter()
            .filter_map(|c| {
                let len = u64::from(c.count) * 16;
                c.pass.tangents().map(|b| (b.raw(), i as u64 * len, len))
            })
            .collect();
        if !tangents.is_empty() {
            for bytes in self
                .g
                .read("posed tangents", &tangents)
                .map_err(Into::into)?
            {
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
