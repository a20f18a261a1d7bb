//! A character flattened for a rig backend: one vertex array over every drawn primitive, one CSR
//! morph set whose targets index one global weight array, and one joint palette. This is what a
//! backend uploads once; per frame it receives [`RigControls`].
//!
//! Every vertex runs the same two stages (DESIGN.md "morph first, skin second"): the CSR blend
//! ([`super::morph::MorphSet::apply_vertex`] semantics) and LBS ([`skin_vertex`]). A rigid (unskinned) primitive is
//! skinned to one palette entry holding its node's world matrix, so the per-vertex pass has no
//! branches on the kind of primitive.

use glam::{Mat3, Mat4};

use super::character::{Character, Pose};
use super::ids::{MeshId, NodeId};
use super::morph::{LimitStats, MorphLimiter, MorphVertex, normalize_or, orthonormalize_or};
use super::skin::{normal_matrix, skin_tangent, skin_vertex};
use crate::error::{Error, Result};

/// The colour of a vertex whose primitive has no `COLOR_0`: a neutral light grey.
pub const DEFAULT_TINT: [f32; 4] = [0.78, 0.76, 0.74, 1.0];

/// Where one palette entry's matrix comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PaletteEntry {
    /// A skin joint: `world(node) · inverse_bind`.
    Joint {
        /// The joint node.
        node: NodeId,
        /// Its inverse bind matrix.
        inverse_bind: Mat4,
    },
    /// A rigid mesh node: `world(node)`.
    Rigid {
        /// The mesh node.
        node: NodeId,
    },
}

/// One drawn mesh node (all its primitives) in the flattened rig.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshInstance {
    /// The node that instances the mesh.
    pub node: NodeId,
    /// The mesh.
    pub mesh: MeshId,
    /// First slot of this instance's weights in [`RigControls::weights`].
    pub weight_base: u32,
    /// Its number of morph targets.
    pub target_count: u32,
    /// First vertex of this instance in the flattened arrays.
    pub vertex_base: u32,
    /// Vertices over all its primitives.
    pub vertex_count: u32,
}

/// The flattened rig. Arrays are `(V,…)` over all drawn primitives in [`Character::mesh_nodes`]
/// order, then primitive order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RigData {
    /// Drawn mesh nodes.
    pub instances: Vec<MeshInstance>,
    /// Palette entries `(P,)`.
    pub palette: Vec<PaletteEntry>,
    /// Total weight slots (sum of the instances' target counts).
    pub weight_count: u32,
    /// Bind positions `(V,3)`, metres, in each mesh's own space.
    pub positions: Vec<[f32; 3]>,
    /// Unit bind normals `(V,3)`.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates `(V,2)` (zeros where a primitive has none).
    pub uvs: Vec<[f32; 2]>,
    /// Linear RGBA vertex colours `(V,4)` in `[0,1]` ([`DEFAULT_TINT`] where a primitive has none).
    pub colors: Vec<[f32; 4]>,
    /// Triangles `(T,3)` in flattened vertex indices.
    pub triangles: Vec<[u32; 3]>,
    /// CSR row starts `(V+1,)`.
    pub morph_offsets: Vec<u32>,
    /// Global weight slot of each entry `(nnz,)`.
    pub morph_target: Vec<u32>,
    /// Position delta of each entry `(nnz,3)`, metres.
    pub morph_position: Vec<[f32; 3]>,
    /// Normal delta of each entry `(nnz,3)` (zeros for primitives without normal deltas).
    pub morph_normal: Vec<[f32; 3]>,
    /// Unit bind tangents xyz + handedness w `(V,4)` (zeros where a primitive has none), or empty
    /// when no drawn primitive has tangents: then no backend carries tangents at all.
    pub tangents: Vec<[f32; 4]>,
    /// Tangent delta of each entry `(nnz,3)` when `tangents` is not empty (zeros for primitives
    /// without tangent deltas or without base tangents), else empty.
    pub morph_tangent: Vec<[f32; 3]>,
    /// Palette indices `(V,4)`.
    pub joints: Vec<[u32; 4]>,
    /// Skin weights `(V,4)`, summing to 1.
    pub weights: Vec<[f32; 4]>,
}

/// Per-frame inputs of a rig backend.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RigControls {
    /// Morph weights `(weight_count,)`, unitless, before the active limit.
    pub weights: Vec<f32>,
    /// Palette matrices `(P,)`, column-major, mesh space → world (metres).
    pub palette: Vec<Mat4>,
}

/// What the per-frame weight rules changed, per instance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlStats {
    /// Weights clamped to ±2, all instances.
    pub clamped: u32,
    /// Non-finite weights zeroed, all instances.
    pub non_finite: u32,
    /// `(instance, target)` pairs dropped by the active limit.
    pub dropped: Vec<(u32, u32)>,
}

/// The weight slots `(W,)` whose target has no delta in its mesh (no CSR entry): they move
/// nothing, so [`limit_instances`] sets them to 0 before the active limit and they never take one
/// of its slots (a Ready Player Me eye mesh carries all 57 head targets, 51 of them empty).
fn inert_slots(rig: &RigData) -> Vec<bool> {
    let mut inert = vec![true; rig.weight_count as usize];
    for &t in &rig.morph_target {
        if let Some(x) = inert.get_mut(t as usize) {
            *x = false;
        }
    }
    inert
}

/// The weight rules of [`RigData::limit_weights`] over `instances`' weight ranges; `inert` `(W,)`
/// marks the slots without deltas ([`inert_slots`]).
fn limit_instances(
    instances: &[MeshInstance],
    inert: &[bool],
    weights: &mut [f32],
    limiter: &mut MorphLimiter,
    scratch: &mut LimitStats,
    stats: &mut ControlStats,
) {
    stats.clamped = 0;
    stats.non_finite = 0;
    stats.dropped.clear();
    // A weight on a target without deltas is counted like any other (non-finite, beyond ±2),
    // then set to 0 so it takes no active slot.
    for (w, _) in weights.iter_mut().zip(inert).filter(|(_, i)| **i) {
        if !w.is_finite() {
            stats.non_finite += 1;
        } else if w.abs() > super::morph::MORPH_WEIGHT_LIMIT {
            stats.clamped += 1;
        }
        *w = 0.0;
    }
    for (ii, inst) in instances.iter().enumerate() {
        let w = &mut weights
            [inst.weight_base as usize..(inst.weight_base + inst.target_count) as usize];
        limiter.limit(w, super::morph::ACTIVE_MORPH_LIMIT, scratch);
        stats.clamped += scratch.clamped;
        stats.non_finite += scratch.non_finite;
        stats
            .dropped
            .extend(scratch.dropped.iter().map(|&t| (ii as u32, t)));
    }
}

/// A rig's per-frame CPU work, shared by every backend's `set_controls`: checks the controls'
/// shapes, applies the weight rules into its own buffer, and computes the palette's normal matrices.
/// Allocation-free after construction.
#[derive(Clone, Debug)]
pub struct FrameControls {
    instances: Vec<MeshInstance>,
    inert: Vec<bool>,
    limiter: MorphLimiter,
    scratch: LimitStats,
    /// Limited weights `(W,)`.
    pub weights: Vec<f32>,
    /// Palette matrices `(P,)`.
    pub palette: Vec<Mat4>,
    /// Their normal matrices `(P,)`.
    pub normal_palette: Vec<Mat3>,
}

impl FrameControls {
    /// Buffers for `rig`: zero weights, identity palette.
    pub fn new(rig: &RigData) -> Self {
        FrameControls {
            instances: rig.instances.clone(),
            inert: inert_slots(rig),
            limiter: MorphLimiter::new(),
            scratch: LimitStats::default(),
            weights: vec![0.0; rig.weight_count as usize],
            palette: vec![Mat4::IDENTITY; rig.palette.len()],
            normal_palette: vec![Mat3::IDENTITY; rig.palette.len()],
        }
    }

    /// The refusals of [`FrameControls::set`] without setting anything: a weight or palette count
    /// other than the rig's, a non-finite palette matrix. Batch setters check every instance first
    /// so that a refusal changes nothing.
    ///
    /// # Errors
    /// As [`FrameControls::set`].
    pub fn check(&self, controls: &RigControls) -> Result<()> {
        if controls.weights.len() != self.weights.len() {
            return Err(Error::Mismatch {
                what: "rig controls: morph weights".into(),
                expected: self.weights.len() as u64,
                found: controls.weights.len() as u64,
            });
        }
        if controls.palette.len() != self.palette.len() {
            return Err(Error::Mismatch {
                what: "rig controls: palette matrices".into(),
                expected: self.palette.len() as u64,
                found: controls.palette.len() as u64,
            });
        }
        if let Some(i) = controls.palette.iter().position(|m| !m.is_finite()) {
            return Err(Error::Invalid {
                what: format!("rig controls: palette[{i}]"),
                reason: "matrix is not finite".into(),
            });
        }
        Ok(())
    }

    /// Take `controls`: copy, limit and clamp the weights; copy the palette and derive normal
    /// matrices.
    ///
    /// # Errors
    /// [`Error::Mismatch`] when an array's length is not the rig's; [`Error::Invalid`] naming the
    /// first non-finite palette matrix.
    pub fn set(&mut self, controls: &RigControls) -> Result<ControlStats> {
        self.check(controls)?;
        self.weights.copy_from_slice(&controls.weights);
        let mut stats = ControlStats::default();
        limit_instances(
            &self.instances,
            &self.inert,
            &mut self.weights,
            &mut self.limiter,
            &mut self.scratch,
            &mut stats,
        );
        self.palette.copy_from_slice(&controls.palette);
        for (n, m) in self.normal_palette.iter_mut().zip(&self.palette) {
            *n = normal_matrix(m);
        }
        Ok(stats)
    }
}

impl RigData {
    /// Vertex count V.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Flatten `character`.
    ///
    /// # Errors
    /// [`Error::Limit`] when the flattened counts do not fit `u32`; [`Error::Format`] when a skinned
    /// primitive's joint index is outside its skin.
    pub fn from_character(character: &Character) -> Result<Self> {
        let mut rig = RigData {
            morph_offsets: vec![0],
            ..Default::default()
        };
        let mut skin_base: Vec<Option<u32>> = vec![None; character.skins.len()];
        // Tangents are carried for the whole rig when any drawn primitive has them.
        let has_tangents = character.mesh_nodes().into_iter().any(|n| {
            character
                .node_mesh(n)
                .is_some_and(|(_, m)| m.primitives.iter().any(|p| !p.tangents.is_empty()))
        });
        for node_id in character.mesh_nodes() {
            let node = &character.nodes[node_id.index()];
            let Some((mesh_id, mesh)) = character.node_mesh(node_id) else {
                continue;
            };
            let skin = node
                .skin
                .and_then(|s| character.skins.get(s.index()).map(|sk| (s, sk)));
            // Palette entries: a skin's joints once per skin; a rigid node one entry.
            let (palette_base, rigid) = match skin {
                Some((sid, sk)) => {
                    let base = *skin_base[sid.index()].get_or_insert_with(|| {
                        let b = rig.palette.len() as u32;
                        rig.palette
                            .extend(sk.joints.iter().zip(&sk.inverse_bind).map(|(&node, &ib)| {
                                PaletteEntry::Joint {
                                    node,
                                    inverse_bind: ib,
                                }
                            }));
                        b
                    });
                    (base, false)
                }
                None => {
                    rig.palette.push(PaletteEntry::Rigid { node: node_id });
                    (rig.palette.len() as u32 - 1, true)
                }
            };
            let inst = MeshInstance {
                node: node_id,
                mesh: mesh_id,
                weight_base: rig.weight_count,
                target_count: mesh.target_count() as u32,
                vertex_base: rig.positions.len() as u32,
                vertex_count: mesh.vertex_count() as u32,
            };
            for (pi, prim) in mesh.primitives.iter().enumerate() {
                let vbase = rig.positions.len() as u32;
                rig.positions.extend_from_slice(&prim.positions);
                rig.normals.extend_from_slice(&prim.normals);
                let prim_tangents = prim.tangents.len() == prim.positions.len();
                if has_tangents {
                    if prim_tangents {
                        rig.tangents.extend_from_slice(&prim.tangents);
                    } else {
                        rig.tangents
                            .extend(std::iter::repeat_n([0.0; 4], prim.positions.len()));
                    }
                }
                if prim.uvs.len() == prim.positions.len() {
                    rig.uvs.extend_from_slice(&prim.uvs);
                } else {
                    rig.uvs
                        .extend(std::iter::repeat_n([0.0; 2], prim.positions.len()));
                }
                if prim.colors.len() == prim.positions.len() {
                    rig.colors.extend_from_slice(&prim.colors);
                } else {
                    rig.colors
                        .extend(std::iter::repeat_n(DEFAULT_TINT, prim.positions.len()));
                }
                rig.triangles.extend(
                    prim.indices
                        .chunks_exact(3)
                        .map(|t| [t[0] + vbase, t[1] + vbase, t[2] + vbase]),
                );
                let m = &prim.morph;
                let en = m.entry_normal();
                let et = m.entry_tangent().filter(|_| prim_tangents);
                for v in 0..m.vertex_count() {
                    let (a, b) = (
                        m.vertex_offsets()[v] as usize,
                        m.vertex_offsets()[v + 1] as usize,
                    );
                    for e in a..b {
                        rig.morph_target
                            .push(inst.weight_base + m.entry_target()[e]);
                        rig.morph_position.push(m.entry_position()[e]);
                        rig.morph_normal.push(en.map_or([0.0; 3], |n| n[e]));
                        if has_tangents {
                            rig.morph_tangent.push(et.map_or([0.0; 3], |t| t[e]));
                        }
                    }
                    let nnz = u32::try_from(rig.morph_target.len()).map_err(|_| Error::Limit {
                        what: "flattened morph entries".into(),
                        limit: u32::MAX as u64,
                        found: rig.morph_target.len() as u64,
                    })?;
                    rig.morph_offsets.push(nnz);
                }
                match (&prim.influences, rigid) {
                    (Some(inf), false) => {
                        let joint_count = skin.map_or(0, |(_, s)| s.joints.len()) as u32;
                        for (v, (j, w)) in inf.joints.iter().zip(&inf.weights).enumerate() {
                            if let Some(k) = (0..4).find(|&k| w[k] != 0.0 && j[k] >= joint_count) {
                                return Err(Error::format_at(
                                    character.source.clone(),
                                    format!("meshes[{}].primitives[{pi}].JOINTS_0", mesh_id),
                                    v,
                                    format!(
                                        "joint {} is outside the skin's {joint_count} joints",
                                        j[k]
                                    ),
                                ));
                            }
                            rig.joints.push(
                                j.map(|x| palette_base + x.min(joint_count.saturating_sub(1))),
                            );
                            rig.weights.push(*w);
                        }
                    }
                    _ => {
                        rig.joints.extend(std::iter::repeat_n(
                            [palette_base, palette_base, palette_base, palette_base],
                            prim.positions.len(),
                        ));
                        rig.weights.extend(std::iter::repeat_n(
                            [1.0, 0.0, 0.0, 0.0],
                            prim.positions.len(),
                        ));
                    }
                }
            }
            rig.weight_count += inst.target_count;
            rig.instances.push(inst);
        }
        if rig.positions.len() > u32::MAX as usize - 1 {
            return Err(Error::Limit {
                what: "flattened vertices".into(),
                limit: u32::MAX as u64 - 1,
                found: rig.positions.len() as u64,
            });
        }
        Ok(rig)
    }

    /// Check the invariants a backend relies on: array lengths agree with V / nnz, CSR offsets
    /// start at 0, never decrease and end at nnz, entry targets < `weight_count` and strictly
    /// ascending within each row (one entry per vertex and target; the GPU's active-target walk
    /// visits targets ascending and must meet each row's entries in row order), joints < P for
    /// non-zero weights, every float finite.
    ///
    /// # Errors
    /// All problems, each naming the array (`rig.morph_offsets`) and the first bad index.
    pub fn validate(&self) -> Result<()> {
        let f = "rig";
        let nv = self.vertex_count();
        let nnz = self.morph_target.len();
        let np = self.palette.len();
        let mut problems = Vec::new();
        let mut len = |name: &str, n: usize, want: usize| {
            if n != want {
                problems.push(Error::Mismatch {
                    what: format!("rig.{name} length"),
                    expected: want as u64,
                    found: n as u64,
                });
            }
        };
        len("normals", self.normals.len(), nv);
        len("uvs", self.uvs.len(), nv);
        len("colors", self.colors.len(), nv);
        len("joints", self.joints.len(), nv);
        len("weights", self.weights.len(), nv);
        len("morph_offsets", self.morph_offsets.len(), nv + 1);
        len("morph_position", self.morph_position.len(), nnz);
        len("morph_normal", self.morph_normal.len(), nnz);
        if !self.tangents.is_empty() || !self.morph_tangent.is_empty() {
            len("tangents", self.tangents.len(), nv);
            len("morph_tangent", self.morph_tangent.len(), nnz);
        }
        Error::collect(problems)?;
        let mut problems = Vec::new();
        if self.morph_offsets[0] != 0 || self.morph_offsets[nv] as usize != nnz {
            problems.push(Error::format(
                f,
                "morph_offsets",
                format!("must run from 0 to {nnz}"),
            ));
        }
        if let Some(i) = self.morph_offsets.windows(2).position(|w| w[1] < w[0]) {
            problems.push(Error::format_at(
                f,
                "morph_offsets",
                i + 1,
                "row offsets decrease",
            ));
        }
        if let Some(e) = self
            .morph_target
            .iter()
            .position(|&t| t >= self.weight_count)
        {
            problems.push(Error::format_at(
                f,
                "morph_target",
                e,
                format!(
                    "weight slot {} ≥ {}",
                    self.morph_target[e], self.weight_count
                ),
            ));
        }
        if problems.is_empty()
            && let Some(e) = (0..nv).find_map(|v| {
                let row = self.morph_offsets[v] as usize..self.morph_offsets[v + 1] as usize;
                let t = &self.morph_target[row.clone()];
                t.windows(2)
                    .position(|w| w[1] <= w[0])
                    .map(|i| row.start + i + 1)
            })
        {
            problems.push(Error::format_at(
                f,
                "morph_target",
                e,
                format!(
                    "target {} does not follow {} of its row (rows hold strictly ascending targets)",
                    self.morph_target[e],
                    self.morph_target[e - 1]
                ),
            ));
        }
        if let Some(v) = (0..nv).find(|&v| {
            (0..4).any(|k| self.weights[v][k] != 0.0 && self.joints[v][k] as usize >= np)
        }) {
            problems.push(Error::format_at(
                f,
                "joints",
                v,
                format!("palette index ≥ palette size {np}"),
            ));
        }
        let finite3 = |a: &[[f32; 3]]| a.iter().position(|x| !x.iter().all(|c| c.is_finite()));
        for (name, arr) in [
            ("positions", &self.positions),
            ("normals", &self.normals),
            ("morph_position", &self.morph_position),
            ("morph_normal", &self.morph_normal),
            ("morph_tangent", &self.morph_tangent),
        ] {
            if let Some(i) = finite3(arr) {
                problems.push(Error::format_at(f, name, i, "not finite"));
            }
        }
        if let Some(i) = self
            .tangents
            .iter()
            .position(|t| !t.iter().all(|c| c.is_finite()))
        {
            problems.push(Error::format_at(f, "tangents", i, "not finite"));
        }
        if let Some(i) = self
            .weights
            .iter()
            .position(|w| !w.iter().all(|c| c.is_finite() && *c >= 0.0))
        {
            problems.push(Error::format_at(
                f,
                "weights",
                i,
                "skin weight negative or not finite",
            ));
        }
        let end = self
            .instances
            .iter()
            .map(|i| i.weight_base + i.target_count)
            .max()
            .unwrap_or(0);
        if end > self.weight_count {
            problems.push(Error::format(
                f,
                "instances",
                format!(
                    "weight slots up to {end} exceed weight_count {}",
                    self.weight_count
                ),
            ));
        }
        Error::collect(problems)
    }

    /// Fill `controls` for `pose`: weights from each instance's node, palette matrices from world
    /// matrices. `world` holds [`Character::world_matrices`] of the same pose. Allocation-free after
    /// the first call.
    pub fn controls_from_pose(&self, pose: &Pose, world: &[Mat4], controls: &mut RigControls) {
        controls.weights.resize(self.weight_count as usize, 0.0);
        for inst in &self.instances {
            let dst = &mut controls.weights
                [inst.weight_base as usize..(inst.weight_base + inst.target_count) as usize];
            let src = &pose.weights[inst.node.index()];
            dst.copy_from_slice(&src[..dst.len()]);
        }
        controls.palette.clear();
        controls
            .palette
            .extend(self.palette.iter().map(|e| match *e {
                PaletteEntry::Joint { node, inverse_bind } => world[node.index()] * inverse_bind,
                PaletteEntry::Rigid { node } => world[node.index()],
            }));
    }

    /// Normal matrices `(P,)` of `palette` (inverse transpose of each linear part), into `out`.
    pub fn normal_palette(palette: &[Mat4], out: &mut Vec<Mat3>) {
        out.clear();
        out.extend(palette.iter().map(normal_matrix));
    }

    /// Apply the weight rules (a target without deltas in its mesh → 0, non-finite → 0, clamp ±2,
    /// [`super::morph::ACTIVE_MORPH_LIMIT`] per instance) to `weights` `(weight_count,)` in
    /// place. (Computes the targets without deltas on each call; [`FrameControls`] keeps them.)
    pub fn limit_weights(
        &self,
        weights: &mut [f32],
        limiter: &mut MorphLimiter,
        scratch: &mut LimitStats,
        stats: &mut ControlStats,
    ) {
        limit_instances(
            &self.instances,
            &inert_slots(self),
            weights,
            limiter,
            scratch,
            stats,
        );
    }

    /// The reference for one vertex: CSR blend with limited `weights`, then LBS with `palette` and
    /// its normal matrices. Returns world position (metres) and unit normal.
    ///
    /// # Panics
    /// When `v ≥ V` or the controls are shorter than the rig needs.
    #[inline]
    pub fn pose_vertex(
        &self,
        v: usize,
        weights: &[f32],
        palette: &[Mat4],
        normal_palette: &[Mat3],
    ) -> ([f32; 3], [f32; 3]) {
        let m = self.morph_vertex(v, weights);
        skin_vertex(
            m.position,
            m.normal,
            self.joints[v],
            self.weights[v],
            palette,
            normal_palette,
        )
    }

    /// The morph stage alone for one vertex (no skinning), for tests and tools.
    ///
    /// `p = base_p + Σ w·δp`, `n = normalize(base_n + Σ w·δn)` and, when the rig carries tangents,
    /// `t = base_t.xyz + Σ w·δt` re-orthogonalised against the blended unit normal
    /// (`t − n·(n·t)`, one Gram–Schmidt step) and normalised, with the handedness `w` kept (glTF 2.0
    /// §3.7.2.2: tangent deltas are XYZ only). Entries of weight exactly 0 are skipped; a vertex
    /// with no entry of non-zero weight keeps its base bit-identical (nothing renormalised); a
    /// blended normal or tangent of zero length keeps the base direction. The tangent is all zeros
    /// when the rig carries none.
    pub fn morph_vertex(&self, v: usize, weights: &[f32]) -> MorphVertex {
        let (a, b) = (
            self.morph_offsets[v] as usize,
            self.morph_offsets[v + 1] as usize,
        );
        let has_t = !self.tangents.is_empty();
        let base_t = if has_t { self.tangents[v] } else { [0.0; 4] };
        let mut out = MorphVertex {
            position: self.positions[v],
            normal: self.normals[v],
            tangent: base_t,
        };
        let mut t = [base_t[0], base_t[1], base_t[2]];
        let mut touched = false;
        for e in a..b {
            let w = weights[self.morph_target[e] as usize];
            if w == 0.0 {
                continue;
            }
            touched = true;
            for k in 0..3 {
                out.position[k] += w * self.morph_position[e][k];
                out.normal[k] += w * self.morph_normal[e][k];
            }
            if has_t {
                for k in 0..3 {
                    t[k] += w * self.morph_tangent[e][k];
                }
            }
        }
        if touched {
            out.normal = normalize_or(out.normal, self.normals[v]);
            if has_t {
                let t3 = orthonormalize_or(t, out.normal, [base_t[0], base_t[1], base_t[2]]);
                out.tangent = [t3[0], t3[1], t3[2], base_t[3]];
            }
        }
        out
    }

    /// Posed tangent of vertex `v` `(4,)`: the morph stage ([`RigData::morph_vertex`]) then
    /// [`skin_tangent`] with `palette`, handedness `w` kept; all zeros when the rig carries no
    /// tangents.
    ///
    /// # Panics
    /// When `v ≥ V` or the controls are shorter than the rig needs.
    pub fn pose_tangent(&self, v: usize, weights: &[f32], palette: &[Mat4]) -> [f32; 4] {
        if self.tangents.is_empty() {
            return [0.0; 4];
        }
        let m = self.morph_vertex(v, weights);
        let t = skin_tangent(
            [m.tangent[0], m.tangent[1], m.tangent[2]],
            self.joints[v],
            self.weights[v],
            palette,
        );
        [t[0], t[1], t[2], m.tangent[3]]
    }

    /// Bytes of the arrays a backend uploads (for the memory report).
    pub fn upload_bytes(&self) -> u64 {
        let v = self.vertex_count() as u64;
        let nnz = self.morph_target.len() as u64;
        let tangents = self.tangents.len() as u64 * 16 + self.morph_tangent.len() as u64 * 12;
        v * (12 + 12 + 16 + 16) + (v + 1) * 4 + nnz * (4 + 12 + 12) + tangents
    }
}
