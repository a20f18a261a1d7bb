//! Morph targets (blendshapes) stored sparse and transposed per vertex (CSR), the CPU reference
//! blend, and the per-frame active-target limit.
//!
//! Source: DESIGN.md "Morph set (CSR, transposed per vertex)"; seed 003 "Morph targets"
//! (`MorphSet::apply`, `select_active`, `ACTIVE_MORPH_LIMIT`, `MORPH_WEIGHT_LIMIT`); glTF 2.0 §3.7.2.2
//! "Morph Targets" for the blend `p = base + Σ wᵢ·δᵢ`.

use crate::error::{Error, Result};

/// At most this many non-zero weights per mesh (instance) per frame; the rest are dropped and
/// reported. Source: DESIGN.md, seed 003.
pub const ACTIVE_MORPH_LIMIT: usize = 32;

/// Weights are clamped to `±MORPH_WEIGHT_LIMIT` before the blend; every clamp is counted.
pub const MORPH_WEIGHT_LIMIT: f32 = 2.0;

/// Dense per-target deltas for building a [`MorphSet`]: each present array is `(V,3)`.
///
/// Positions in metres (the mesh's own units), normal and tangent deltas unitless (glTF 2.0
/// §3.7.2.2: tangent deltas are XYZ only, the handedness `w` is not morphed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DenseTarget {
    /// Position deltas `(V,3)`, or `None` when the target moves no position.
    pub position: Option<Vec<[f32; 3]>>,
    /// Normal deltas `(V,3)`.
    pub normal: Option<Vec<[f32; 3]>>,
    /// Tangent deltas `(V,3)`.
    pub tangent: Option<Vec<[f32; 3]>>,
}

/// A mesh's morph targets, sparse and transposed per vertex (CSR).
///
/// Row `v` holds the entries `vertex_offsets[v] .. vertex_offsets[v+1]`; entry `e` says target
/// `entry_target[e]` moves vertex `v` by `entry_position[e]` (and `entry_normal[e]`,
/// `entry_tangent[e]` when the set has those streams). Entries in a row are sorted by target.
/// Only vertices a target moves are stored, and there is no cap on the number of targets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphSet {
    target_count: u32,
    vertex_offsets: Vec<u32>,
    entry_target: Vec<u32>,
    entry_position: Vec<[f32; 3]>,
    entry_normal: Option<Vec<[f32; 3]>>,
    entry_tangent: Option<Vec<[f32; 3]>>,
}

/// One vertex's inputs and outputs for [`MorphSet::apply_vertex`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MorphVertex {
    /// Position, metres.
    pub position: [f32; 3],
    /// Unit normal (all zeros when the mesh has none).
    pub normal: [f32; 3],
    /// Unit tangent xyz + handedness w (all zeros when the mesh has none).
    pub tangent: [f32; 4],
}

impl MorphSet {
    /// An empty set for `vertex_count` vertices (no targets).
    pub fn empty(vertex_count: usize) -> Self {
        MorphSet {
            vertex_offsets: vec![0; vertex_count + 1],
            ..Default::default()
        }
    }

    /// Build from dense per-target deltas. An entry is stored for `(v, t)` when any stream of
    /// target `t` is non-zero at `v`.
    ///
    /// # Errors
    /// [`Error::Mismatch`] when a stream's length is not `vertex_count`; [`Error::Invalid`] when a
    /// delta is not finite (named by target and vertex). All problems are collected. A stream one
    /// target lacks while another has it counts as zeros (glTF 2.0 §3.7.2.2 allows it).
    pub fn from_dense(vertex_count: usize, targets: &[DenseTarget]) -> Result<Self> {
        let mut problems = Vec::new();
        for (t, target) in targets.iter().enumerate() {
            for (name, stream) in [
                ("POSITION", &target.position),
                ("NORMAL", &target.normal),
                ("TANGENT", &target.tangent),
            ] {
                if let Some(s) = stream {
                    if s.len() != vertex_count {
                        problems.push(Error::Mismatch {
                            what: format!("morph target {t} {name} delta count"),
                            expected: vertex_count as u64,
                            found: s.len() as u64,
                        });
                    } else if let Some(v) = s.iter().position(|d| !d.iter().all(|x| x.is_finite()))
                    {
                        problems.push(Error::Invalid {
                            what: format!("morph target {t} {name} delta at vertex {v}"),
                            reason: format!("not finite: {:?}", s[v]),
                        });
                    }
                }
            }
        }
        Error::collect(problems)?;
        if targets.len() > u32::MAX as usize {
            return Err(Error::Limit {
                what: "morph targets".into(),
                limit: u32::MAX as u64,
                found: targets.len() as u64,
            });
        }
        let has_normal = targets.iter().any(|t| t.normal.is_some());
        let has_tangent = targets.iter().any(|t| t.tangent.is_some());
        let zero = [0.0f32; 3];
        let get = |s: &Option<Vec<[f32; 3]>>, v: usize| s.as_ref().map_or(zero, |s| s[v]);

        let mut set = MorphSet {
            target_count: targets.len() as u32,
            vertex_offsets: Vec::with_capacity(vertex_count + 1),
            entry_normal: has_normal.then(Vec::new),
            entry_tangent: has_tangent.then(Vec::new),
            ..Default::default()
        };
        set.vertex_offsets.push(0);
        for v in 0..vertex_count {
            for (t, target) in targets.iter().enumerate() {
                let (p, n, tg) = (
                    get(&target.position, v),
                    get(&target.normal, v),
                    get(&target.tangent, v),
                );
                if p == zero && n == zero && tg == zero {
                    continue;
                }
                set.entry_target.push(t as u32);
                set.entry_position.push(p);
                if let Some(en) = &mut set.entry_normal {
                    en.push(n);
                }
                if let Some(et) = &mut set.entry_tangent {
                    et.push(tg);
                }
            }
            let nnz = set.entry_target.len();
            if nnz > u32::MAX as usize {
                return Err(Error::Limit {
                    what: "morph entries".into(),
                    limit: u32::MAX as u64,
                    found: nnz as u64,
                });
            }
            set.vertex_offsets.push(nnz as u32);
        }
        Ok(set)
    }

    /// Build from sparse position deltas (a format that stores only moved vertices, such as a
    /// MetaHuman DNA's blend-shape targets) without a dense `(V,3)` array per target: `entries`
    /// are `(vertex, target, delta)` sorted by vertex, then target, each pair at most once. A zero
    /// delta is not stored (as in [`MorphSet::from_dense`]). Deltas in metres.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the entry when a vertex or target is out of range, the entries are
    /// not sorted or repeat a pair, or a delta is not finite; [`Error::Limit`] past `u32` counts.
    pub fn from_sparse(
        vertex_count: usize,
        target_count: usize,
        entries: &[(u32, u32, [f32; 3])],
    ) -> Result<Self> {
        if target_count > u32::MAX as usize || entries.len() > u32::MAX as usize {
            return Err(Error::Limit {
                what: "morph targets or entries".into(),
                limit: u32::MAX as u64,
                found: target_count.max(entries.len()) as u64,
            });
        }
        let bad = |e: usize, reason: &str| Error::Invalid {
            what: format!("sparse morph entry {e} {:?}", entries[e]),
            reason: reason.into(),
        };
        let mut set = MorphSet {
            target_count: target_count as u32,
            vertex_offsets: Vec::with_capacity(vertex_count + 1),
            ..Default::default()
        };
        set.vertex_offsets.push(0);
        let mut prev: Option<(u32, u32)> = None;
        for (e, &(v, t, d)) in entries.iter().enumerate() {
            if v as usize >= vertex_count || t as usize >= target_count {
                return Err(bad(e, "vertex or target out of range"));
            }
            if prev.is_some_and(|p| p >= (v, t)) {
                return Err(bad(
                    e,
                    "entries must be sorted by vertex, then target, without repeats",
                ));
            }
            if !d.iter().all(|x| x.is_finite()) {
                return Err(bad(e, "delta not finite"));
            }
            prev = Some((v, t));
            while set.vertex_offsets.len() <= v as usize {
                set.vertex_offsets.push(set.entry_target.len() as u32);
            }
            if d != [0.0; 3] {
                set.entry_target.push(t);
                set.entry_position.push(d);
            }
        }
        while set.vertex_offsets.len() <= vertex_count {
            set.vertex_offsets.push(set.entry_target.len() as u32);
        }
        Ok(set)
    }

    /// Number of targets (the length of the weight array this set reads).
    pub fn target_count(&self) -> usize {
        self.target_count as usize
    }

    /// Number of vertices (rows).
    pub fn vertex_count(&self) -> usize {
        self.vertex_offsets.len().saturating_sub(1)
    }

    /// Number of stored (vertex, target) entries.
    pub fn entry_count(&self) -> usize {
        self.entry_target.len()
    }

    /// Row starts `(V+1,)`.
    pub fn vertex_offsets(&self) -> &[u32] {
        &self.vertex_offsets
    }

    /// Target index of each entry `(nnz,)`.
    pub fn entry_target(&self) -> &[u32] {
        &self.entry_target
    }

    /// Position delta of each entry `(nnz,3)`, metres.
    pub fn entry_position(&self) -> &[[f32; 3]] {
        &self.entry_position
    }

    /// Normal delta of each entry `(nnz,3)`, when any target has normal deltas.
    pub fn entry_normal(&self) -> Option<&[[f32; 3]]> {
        self.entry_normal.as_deref()
    }

    /// Tangent delta of each entry `(nnz,3)`, when any target has tangent deltas.
    pub fn entry_tangent(&self) -> Option<&[[f32; 3]]> {
        self.entry_tangent.as_deref()
    }

    /// Largest distance any vertex can move with at most `active` targets at `|w| ≤ max_weight`
    /// (sum of the `active` largest delta lengths in each row), metres. Used to grow bounds once.
    pub fn max_possible_displacement(&self, active: usize, max_weight: f32) -> f32 {
        let mut best = 0.0f32;
        let mut lens = Vec::new();
        for v in 0..self.vertex_count() {
            lens.clear();
            let (a, b) = (
                self.vertex_offsets[v] as usize,
                self.vertex_offsets[v + 1] as usize,
            );
            lens.extend(
                self.entry_position[a..b]
                    .iter()
                    .map(|d| (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()),
            );
            lens.sort_by(|x, y| y.total_cmp(x));
            best = best.max(lens.iter().take(active).sum::<f32>() * max_weight);
        }
        best
    }

    /// Blend one vertex: `p = base + Σ w[t]·δp`, `n = normalize(base_n + Σ w[t]·δn)`,
    /// `t.xyz = base_t.xyz + Σ w[t]·δt` re-orthogonalised against the blended normal (when the set
    /// has normals) and normalised ([`orthonormalize_or`]), with `t.w` kept.
    ///
    /// Entries with weight exactly 0 are skipped, and a vertex with no entry of non-zero weight is
    /// returned bit-identical to its base (its normal and tangent are not renormalised). A blended
    /// normal or tangent of zero length keeps the base direction. Terms are summed in row (target)
    /// order, the order every backend uses. `weights` is `(target_count,)`, already limited and
    /// clamped (see [`MorphLimiter`]).
    ///
    /// # Panics
    /// When `v >= vertex_count()` or `weights.len() < target_count()`.
    #[inline]
    pub fn apply_vertex(&self, v: usize, weights: &[f32], base: MorphVertex) -> MorphVertex {
        let (a, b) = (
            self.vertex_offsets[v] as usize,
            self.vertex_offsets[v + 1] as usize,
        );
        let mut out = base;
        let mut touched = false;
        let mut n = base.normal;
        let mut tg = [base.tangent[0], base.tangent[1], base.tangent[2]];
        for e in a..b {
            let w = weights[self.entry_target[e] as usize];
            if w == 0.0 {
                continue;
            }
            touched = true;
            for (o, d) in out.position.iter_mut().zip(self.entry_position[e]) {
                *o += w * d;
            }
            if let Some(en) = &self.entry_normal {
                for k in 0..3 {
                    n[k] += w * en[e][k];
                }
            }
            if let Some(et) = &self.entry_tangent {
                for k in 0..3 {
                    tg[k] += w * et[e][k];
                }
            }
        }
        if touched {
            if self.entry_normal.is_some() {
                out.normal = normalize_or(n, base.normal);
            }
            if self.entry_tangent.is_some() {
                let fallback = [base.tangent[0], base.tangent[1], base.tangent[2]];
                let t3 = if out.normal == [0.0; 3] {
                    normalize_or(tg, fallback)
                } else {
                    orthonormalize_or(tg, out.normal, fallback)
                };
                out.tangent = [t3[0], t3[1], t3[2], base.tangent[3]];
            }
        }
        out
    }

    /// Blend every vertex (the CPU reference). Inputs and outputs are `(V,3)` / `(V,4)`; `normals`
    /// and `tangents` may be empty when the mesh has none (then the outputs for them stay empty).
    ///
    /// # Errors
    /// [`Error::Mismatch`] when an array's length disagrees with `vertex_count()` or `weights` is
    /// shorter than `target_count()`.
    pub fn apply(
        &self,
        weights: &[f32],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        tangents: &[[f32; 4]],
    ) -> Result<Blended> {
        let nv = self.vertex_count();
        let check = |what: &str, len: usize, allow_empty: bool| {
            if len == nv || (allow_empty && len == 0) {
                Ok(())
            } else {
                Err(Error::Mismatch {
                    what: what.into(),
                    expected: nv as u64,
                    found: len as u64,
                })
            }
        };
        check("morph base positions", positions.len(), false)?;
        check("morph base normals", normals.len(), true)?;
        check("morph base tangents", tangents.len(), true)?;
        if weights.len() < self.target_count() {
            return Err(Error::Mismatch {
                what: "morph weights".into(),
                expected: self.target_count as u64,
                found: weights.len() as u64,
            });
        }
        let mut p = Vec::with_capacity(nv);
        let mut n = Vec::with_capacity(normals.len());
        let mut t = Vec::with_capacity(tangents.len());
        for (v, &position) in positions.iter().enumerate() {
            let base = MorphVertex {
                position,
                normal: normals.get(v).copied().unwrap_or_default(),
                tangent: tangents.get(v).copied().unwrap_or_default(),
            };
            let o = self.apply_vertex(v, weights, base);
            p.push(o.position);
            if !normals.is_empty() {
                n.push(o.normal);
            }
            if !tangents.is_empty() {
                t.push(o.tangent);
            }
        }
        Ok((p, n, t))
    }
}

/// Blended positions `(V,3)`, normals `(V,3)` and tangents `(V,4)` from [`MorphSet::apply`] (the
/// last two empty when the base has none).
pub type Blended = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 4]>);

/// `normalize(t − n·(n·t))` — `t` re-orthogonalised against the unit normal `n` (one Gram–Schmidt
/// step) — or `fallback` when that has zero or non-finite length (`t` parallel to `n`, or zero).
/// The products are summed x, y, z in that order, as every backend does.
#[inline]
pub fn orthonormalize_or(t: [f32; 3], n: [f32; 3], fallback: [f32; 3]) -> [f32; 3] {
    let d = n[0] * t[0] + n[1] * t[1] + n[2] * t[2];
    normalize_or(
        [t[0] - n[0] * d, t[1] - n[1] * d, t[2] - n[2] * d],
        fallback,
    )
}

/// `normalize(v)`, or `fallback` when `|v|` is zero or not finite.
#[inline]
pub fn normalize_or(v: [f32; 3], fallback: [f32; 3]) -> [f32; 3] {
    let len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if len2 > 0.0 && len2.is_finite() {
        let inv = 1.0 / len2.sqrt();
        [v[0] * inv, v[1] * inv, v[2] * inv]
    } else {
        fallback
    }
}

/// What [`MorphLimiter::limit`] changed in one weight array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitStats {
    /// Weights clamped to `±MORPH_WEIGHT_LIMIT`.
    pub clamped: u32,
    /// Non-finite weights (NaN, ±∞), zeroed.
    pub non_finite: u32,
    /// Targets dropped by the active limit, ascending.
    pub dropped: Vec<u32>,
}

/// Applies the weight rules of DESIGN.md to one mesh's weight array, in place and without
/// allocating after the first call:
///
/// 1. a non-finite weight is set to 0 and counted;
/// 2. each weight is clamped to `±MORPH_WEIGHT_LIMIT`, counted;
/// 3. when more than `limit` weights are non-zero, the `limit` with the largest `|w|` are kept
///    (ties → lower target index) and the others set to 0 and reported.
#[derive(Clone, Debug, Default)]
pub struct MorphLimiter {
    /// Per non-zero weight its sort key: `|w|`'s bits (monotonic for finite non-negative
    /// floats) above `u32::MAX − index`, so a larger key is a stronger weight, or an equal one of
    /// lower index.
    order: Vec<u64>,
}

impl MorphLimiter {
    /// A limiter with no scratch yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Limit `weights` in place with the active limit `limit` (normally [`ACTIVE_MORPH_LIMIT`]);
    /// `stats` is cleared and filled.
    pub fn limit(&mut self, weights: &mut [f32], limit: usize, stats: &mut LimitStats) {
        stats.clamped = 0;
        stats.non_finite = 0;
        stats.dropped.clear();
        self.order.clear();
        for (i, w) in weights.iter_mut().enumerate() {
            if !w.is_finite() {
                *w = 0.0;
                stats.non_finite += 1;
            } else if w.abs() > MORPH_WEIGHT_LIMIT {
                *w = w.clamp(-MORPH_WEIGHT_LIMIT, MORPH_WEIGHT_LIMIT);
                stats.clamped += 1;
            }
            if *w != 0.0 {
                self.order
                    .push((u64::from(w.abs().to_bits()) << 32) | u64::from(u32::MAX - i as u32));
            }
        }
        if self.order.len() <= limit {
            return;
        }
        // Strongest first; equal |w| keeps the lower index first. The keys are distinct (their
        // low half is the index), so the `limit` largest are one set: a selection on integers
        // finds them in O(n) — the same set a full sort kept (a sort of every instance's
        // weights was the largest part of setting a 256-instance batch of 52 targets).
        let cut = self.order.len() - limit;
        if limit > 0 {
            self.order.select_nth_unstable(cut);
        }
        for &k in &self.order[..cut] {
            let i = u32::MAX - k as u32;
            weights[i as usize] = 0.0;
            stats.dropped.push(i);
        }
        stats.dropped.sort_unstable();
    }
}
