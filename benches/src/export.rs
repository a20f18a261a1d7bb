//! The arrays the peer scripts (`benches/peers/`) read: for a workload W, `DIR/W/manifest.json`
//! plus NumPy `.npy` files ([`crate::npy`], v1.0, little-endian, C order), for [`EXPORT_BATCH`]
//! characters (character c reads ring entry c, as at frame 0 of a run).
//!
//! Manifest: `{"workload", "kind": "morph"|"gnm"|"skin"|"lift", "vertices", "targets"|"coefficients"|
//! "joints", "batch", "arrays": {name: {"file", "dtype": "f32"|"f16"|"i32", "shape"}},
//! "tolerance_m", "bytes_per_character", "expected_is"}`.
//!
//! - **morph** (W1, W2, W5): `base` (V,3), `deltas` (T,V,3) dense position deltas, `weights` (B,T)
//!   after mien's rules (clamp ±2, at most 32 non-zero per mesh instance), `expected` (B,V,3) =
//!   the reference morph stage `base + Σ w·δ` ([`RigData::morph_vertex`]) in each mesh's own space:
//!   the blend alone, no palette (the peers reproduce the blend; skinning is W6's).
//! - **gnm** (W3, W4): `neutral` (V,3) (plus the seam, when the pack has one), `basis` (V·3,E) f16
//!   (row = vertex·3 + axis), `scale` (E,), `coeffs` (B,E); gaze is 0 and joints rest at their rest
//!   matrices, so the skin is `bind` for every vertex and `expected` = `bind·(neutral +
//!   basis·(coeffs·scale))` from the reference [`forward::pose`]; a pack whose bind is not the
//!   identity also gets `bind` (4,4) f32 row-major (W3, W4: identity, no array).
//! - **lift** (`W1-surface`, [`export_lift`]): W1's morph inputs for [`LIFT_EXPORT_BATCH`] rows, the
//!   surface lift's triangles and bound gaussians, the reference pose of every gaussian
//!   (`expected_centers` (B,N,3), `expected_cov` (B,N,6)) and per-gaussian agreement bounds
//!   (`bound_centers`, `bound_cov`; `tolerance_m`/`tolerance_cov` their maxima); no `expected`.
//! - **skin** (W6): `rest` (V,3), `joints` (V,4) i32 palette indices, `weights` (V,4),
//!   `matrices` (B,J,4,4) row-major skin matrices (world · inverse bind), `expected` (B,V,3) the
//!   reference LBS ([`RigData::pose_vertex`]).
//!
//! `tolerance_m`: the largest over every exported (c, v, axis) of `2·γₙ·S`, with S the sum of the
//! absolute values of the terms the result adds (base and each `|w·δ|`; neutral and each
//! `|c·s·B|`; for LBS `Σ wₖ(Σⱼ|Mᵢⱼ||pⱼ| + |tᵢ|)`), n the number of roundings on the way (terms + 1;
//! E + 2 for the head, whose `c·s` is one more; 10 for a 4-influence LBS) and γₙ = n·u/(1 − n·u),
//! u = 2⁻²⁴ (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1 and §4.2: any order of
//! a float32 sum). Doubled because both mien's and the peer's results carry such an error.
//!
//! [`forward::pose`]: mien_core::gnm::forward::pose

use std::path::Path;

use glam::Mat4;
use mien_core::gnm::forward::{from_row_major, pose};
use mien_core::lift::bound::{AREA_EPS, K_MIN};
use mien_core::lift::triangle_frame;
use mien_core::rig::RigData;
use serde_json::{Value, json};

use crate::bytes::limited_weights;
use crate::npy::{self, Dtype};
use crate::workloads::{Frames, Kind, Model, Workload};

/// Characters per exported workload.
pub const EXPORT_BATCH: usize = 16;

/// γₙ for float32.
pub fn gamma(n: usize) -> f64 {
    let u = f64::from(f32::EPSILON) / 2.0;
    n as f64 * u / (1.0 - n as f64 * u)
}

struct Out<'a> {
    dir: &'a Path,
    arrays: serde_json::Map<String, Value>,
}

impl Out<'_> {
    fn f32s(&mut self, name: &str, shape: &[usize], values: &[f32]) -> anyhow::Result<()> {
        let file = format!("{name}.npy");
        npy::write_f32s(&self.dir.join(&file), shape, values)?;
        self.meta(name, file, Dtype::F32, shape);
        Ok(())
    }

    fn raw(
        &mut self,
        name: &str,
        dtype: Dtype,
        shape: &[usize],
        bytes: &[u8],
    ) -> anyhow::Result<()> {
        let file = format!("{name}.npy");
        npy::write(&self.dir.join(&file), dtype, shape, bytes)?;
        self.meta(name, file, dtype, shape);
        Ok(())
    }

    fn meta(&mut self, name: &str, file: String, dtype: Dtype, shape: &[usize]) {
        self.arrays.insert(
            name.into(),
            json!({"file": file, "dtype": dtype.name(), "shape": shape}),
        );
    }
}

fn flat(rows: &[[f32; 3]]) -> Vec<f32> {
    rows.iter().flatten().copied().collect()
}

fn row_major(m: &Mat4) -> [f32; 16] {
    m.transpose().to_cols_array()
}

/// Export `w` into `dir/<id>/` (created). Returns the manifest.
///
/// # Errors
/// I/O errors; a model/frames mismatch.
pub fn export(w: &Workload, dir: &Path) -> anyhow::Result<Value> {
    let out_dir = dir.join(&w.id);
    std::fs::create_dir_all(&out_dir)?;
    let mut out = Out {
        dir: &out_dir,
        arrays: serde_json::Map::new(),
    };
    let b = EXPORT_BATCH;
    let v = w.vertices() as usize;
    let ring = |c: usize| w.ring_index(c as u32, 0);
    let (count_key, count, tolerance) = match (&w.model, &w.frames, w.kind) {
        (Model::Rig(rig), Frames::Rig(f), Kind::Skin) => {
            let p = rig.palette.len();
            let mut mats = Vec::with_capacity(b * p * 16);
            let mut expected = Vec::with_capacity(b * v * 3);
            let mut tol = 0.0f64;
            for c in 0..b {
                let ctl = &f[ring(c)];
                mats.extend(ctl.palette.iter().flat_map(row_major));
                let weights = limited_weights(rig, ctl);
                let mut normals = Vec::new();
                RigData::normal_palette(&ctl.palette, &mut normals);
                for vi in 0..v {
                    let (pos, _) = rig.pose_vertex(vi, &weights, &ctl.palette, &normals);
                    expected.extend(pos);
                    tol = tol.max(lbs_bound(rig, vi, &ctl.palette));
                }
            }
            out.f32s("rest", &[v, 3], &flat(&rig.positions))?;
            let joints: Vec<i32> = rig.joints.iter().flatten().map(|&j| j as i32).collect();
            out.raw("joints", Dtype::I32, &[v, 4], &npy::i32_bytes(&joints))?;
            let sw: Vec<f32> = rig.weights.iter().flatten().copied().collect();
            out.f32s("weights", &[v, 4], &sw)?;
            out.f32s("matrices", &[b, p, 4, 4], &mats)?;
            out.f32s("expected", &[b, v, 3], &expected)?;
            ("joints", p, tol)
        }
        (Model::Rig(rig), Frames::Rig(f), _) => {
            let t = rig.weight_count as usize;
            let mut weights = Vec::with_capacity(b * t);
            let mut expected = Vec::with_capacity(b * v * 3);
            let mut tol = 0.0f64;
            for c in 0..b {
                let wl = limited_weights(rig, &f[ring(c)]);
                for vi in 0..v {
                    expected.extend(rig.morph_vertex(vi, &wl).position);
                    for e in morph_error(rig, vi, &wl) {
                        tol = tol.max(2.0 * e);
                    }
                }
                weights.extend(wl);
            }
            out.f32s("base", &[v, 3], &flat(&rig.positions))?;
            out.f32s("deltas", &[t, v, 3], &dense_deltas(rig))?;
            out.f32s("weights", &[b, t], &weights)?;
            out.f32s("expected", &[b, v, 3], &expected)?;
            ("targets", t, tol)
        }
        (Model::Gnm(pack), Frames::Gnm(f), _) => {
            let e = pack.coeff_count();
            let rest: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
            let mut neutral = pack.neutral.clone();
            if let Some(seam) = &pack.seam {
                for (n, s) in neutral.iter_mut().zip(seam) {
                    *n = [0, 1, 2].map(|k| n[k] + s[k]);
                }
            }
            let mut halves = Vec::with_capacity(v * 3 * e * 2);
            for vi in 0..v {
                for axis in 0..3 {
                    for ei in 0..e {
                        let i = (vi * e + ei) * 3 + axis;
                        let word = pack.basis[i / 2];
                        let h = if i % 2 == 0 {
                            word as u16
                        } else {
                            (word >> 16) as u16
                        };
                        halves.extend(h.to_le_bytes());
                    }
                }
            }
            let mut coeffs = Vec::with_capacity(b * e);
            let mut expected = Vec::with_capacity(b * v * 3);
            let mut posed = Vec::new();
            let mut tol = 0.0f64;
            for c in 0..b {
                let mut head_ext = f[ring(c)].head_ext.clone();
                for g in &mut head_ext[e..] {
                    *g = 0.0;
                }
                pose(pack, &head_ext, &rest, &mut posed)?;
                expected.extend(flat(&posed));
                let cs: Vec<f32> = head_ext[..e]
                    .iter()
                    .zip(&pack.basis_scale)
                    .map(|(a, s)| a * s)
                    .collect();
                for vi in 0..v {
                    for k in 0..3 {
                        let s: f64 = f64::from(neutral[vi][k].abs())
                            + (0..e)
                                .map(|ei| f64::from((cs[ei] * pack.basis_at(vi, ei, k)).abs()))
                                .sum::<f64>();
                        tol = tol.max(2.0 * gamma(e + 2) * s);
                    }
                }
                coeffs.extend_from_slice(&head_ext[..e]);
            }
            let bind = from_row_major(&pack.header.bind_transform);
            if bind != Mat4::IDENTITY {
                out.f32s("bind", &[4, 4], &row_major(&bind))?;
            }
            out.f32s("neutral", &[v, 3], &flat(&neutral))?;
            out.raw("basis", Dtype::F16, &[v * 3, e], &halves)?;
            out.f32s("scale", &[e], &pack.basis_scale)?;
            out.f32s("coeffs", &[b, e], &coeffs)?;
            out.f32s("expected", &[b, v, 3], &expected)?;
            ("coefficients", e, tol)
        }
        _ => anyhow::bail!("{}: model and frames disagree", w.id),
    };
    let kind = match w.kind {
        Kind::Morph => "morph",
        Kind::Gnm => "gnm",
        Kind::Skin => "skin",
    };
    let expected_is = match w.kind {
        Kind::Morph => "the morph stage base + Σ w·δ in mesh space (no palette)",
        Kind::Gnm => "bind·(neutral + basis·(coeffs·scale)) at zero gaze and rest joints",
        Kind::Skin => "Σ_k w_k · (matrices[j_k] · [rest, 1])",
    };
    let manifest = json!({
        "workload": w.id,
        "kind": kind,
        "vertices": v,
        count_key: count,
        "batch": b,
        "arrays": Value::Object(out.arrays),
        "tolerance_m": tolerance,
        "bytes_per_character": w.bytes(crate::harness::LiftMode::Off).total(),
        "expected_is": expected_is,
        "description": w.description,
    });
    std::fs::write(
        out_dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(manifest)
}

/// Workloads whose surface lift [`export_lift`] writes (as `DIR/<id>-surface/`, [`lift_id`]).
pub const LIFT_EXPORTS: [&str; 1] = ["W1"];

/// Characters per exported lift workload. One row's expected values are ~100,000 gaussians × 9
/// floats (3.6 MB), so 4 rows keep the folder near 16 MB; a batch of N tiles them (row i mod 4)
/// as the other workloads tile their [`EXPORT_BATCH`] rows.
pub const LIFT_EXPORT_BATCH: usize = 4;

/// The folder (and manifest `workload`) of `id`'s lift export: `W1-surface`.
pub fn lift_id(id: &str) -> String {
    format!("{id}-surface")
}

/// Export the surface lift of morph workload `w` into `dir/<id>-surface/` (created): the morph
/// inputs of its [`export`] for [`LIFT_EXPORT_BATCH`] rows, the triangles and bound gaussians of
/// [`Workload::surface`], and the reference pose of every gaussian on each row's morph stage.
/// Returns the manifest.
///
/// Manifest: as [`export`]'s with `"kind": "lift"`, `"vertices"` V, `"targets"` T, `"gaussians"` N,
/// `"triangles"` F, `"tolerance_m"` (centres, the mesh's position units) and `"tolerance_cov"`
/// (covariances, those units squared); arrays `base` (V,3), `deltas` (T,V,3), `weights` (B,T) as the
/// morph export's; `triangles` (F,3) i32 vertex indices; `triangle` (N,) i32, `bary` (N,2) (β1,
/// β2), `offset` (N,) (d, units of k), `local_cov` (N,6) (S00, S01, S02, S11, S12, S22, units of
/// k²) of [`mien_core::lift::PackedBound`]; `expected_centers` (B,N,3) and `expected_cov` (B,N,6)
/// (Σ00, Σ01, Σ02, Σ11, Σ12, Σ22) from [`BoundSetup::pose`] on the morph stage
/// ([`RigData::morph_vertex`]: positions and normals in each mesh's own space, no palette, as the
/// morph export's `expected`; the setup's transform is the identity).
///
/// The frame's fallbacks (a near-zero-area triangle takes its vertex normals' mean; a tangent
/// from the second edge) are not in the exported arrays: the export is refused when any
/// triangle of any row comes within a factor 2 of either threshold, so the plain frame is the
/// whole math (W1: no triangle comes near).
///
/// Agreement bounds, derived as the other workloads' `tolerance_m` (module docs): a bound on one
/// float32 evaluation's error in any order, doubled because both mien's and the peer's results
/// carry one. Here the error of the morph stage (`γₙ₊₁·S` per vertex and axis) propagates through
/// the frame, to first order ([`lift_error`]), plus the lift's own roundings. Per gaussian:
/// `bound_centers` (B,N) = 2 × the largest of its three centre bounds, `bound_cov` (B,N) = 2 ×
/// the largest of its six covariance bounds (each rounded up to f32); the peers check every
/// element against its gaussian's bound. `tolerance_m` / `tolerance_cov` are their maxima over
/// the export (what a single scalar bound would be; a sliver triangle's ill-conditioned normal
/// sets `tolerance_cov`, hundreds of times most gaussians' own bound, hence the arrays). On W1
/// the float32 recomputations seen were within 25 % (centres) and 0.5 % (covariances) of their
/// gaussians' bounds.
///
/// # Errors
/// A workload that is not a morph rig, a surface lift that cannot be built or has a transform,
/// a triangle near a fallback threshold, I/O errors.
pub fn export_lift(w: &Workload, dir: &Path) -> anyhow::Result<Value> {
    let (Model::Rig(rig), Frames::Rig(f), Kind::Morph) = (&w.model, &w.frames, w.kind) else {
        anyhow::bail!("{}: the lift export poses a morph rig's morph stage", w.id);
    };
    let setup = w
        .surface()
        .ok_or_else(|| anyhow::anyhow!("{}: the surface lift cannot be built", w.id))?;
    anyhow::ensure!(
        setup.transform == mien_core::lift::debug::IDENTITY_3X4,
        "{}: the surface lift has a rig → object transform (the export has no array for it)",
        w.id
    );
    let id = lift_id(&w.id);
    let out_dir = dir.join(&id);
    std::fs::create_dir_all(&out_dir)?;
    let mut out = Out {
        dir: &out_dir,
        arrays: serde_json::Map::new(),
    };
    let b = LIFT_EXPORT_BATCH;
    let (v, t, g) = (
        rig.vertex_count(),
        rig.weight_count as usize,
        setup.gaussians.len(),
    );
    let tris = &setup.triangles;
    let mut weights = Vec::with_capacity(b * t);
    let mut centers = Vec::with_capacity(b * g * 3);
    let mut cov = Vec::with_capacity(b * g * 6);
    let (mut tol_c, mut tol_s) = (0.0f64, 0.0f64);
    let mut bound_c = Vec::with_capacity(b * g);
    let mut bound_s = Vec::with_capacity(b * g);
    let mut pos = Vec::with_capacity(v);
    let mut nrm = Vec::with_capacity(v);
    let mut err = Vec::with_capacity(v);
    for c in 0..b {
        let wl = limited_weights(rig, &f[w.ring_index(c as u32, 0)]);
        pos.clear();
        nrm.clear();
        err.clear();
        for vi in 0..v {
            let m = rig.morph_vertex(vi, &wl);
            pos.push(m.position);
            nrm.push(m.normal);
            err.push(morph_error(rig, vi, &wl));
        }
        for (ti, tri) in tris.iter().enumerate() {
            let p = tri.map(|x| pos[x as usize]);
            let fr = triangle_frame(p, tri.map(|x| nrm[x as usize]));
            let [e1, e2] = [1, 2].map(|j| [0, 1, 2].map(|i| p[j][i] - p[0][i]));
            let lc = norm(cross(e1, e2));
            let k = fr.k;
            anyhow::ensure!(
                !fr.fallback && lc > 2.0 * AREA_EPS * k * k && norm(e1) > 2e-6 * k,
                "{}: row {c}: triangle {ti} is within a factor 2 of the frame's fallbacks \
                 (|e1 × e2| = {lc:e}, k = {k:e}, |e1| = {:e}); the exported arrays cannot carry \
                 the fallback normal",
                w.id,
                norm(e1)
            );
        }
        for (gi, gs) in setup.gaussians.iter().enumerate() {
            let s = setup.pose(gi, &pos, &nrm);
            centers.extend_from_slice(&s.center[..3]);
            cov.extend_from_slice(&s.cov_a);
            cov.extend_from_slice(&s.cov_b[..2]);
            let tri = tris[gs.triangle() as usize];
            let (ec, es) = lift_error(
                gs,
                tri.map(|x| pos[x as usize]),
                tri.map(|x| err[x as usize]),
            );
            let ec = 2.0 * ec.iter().fold(0.0f64, |a, &e| a.max(e));
            let es = 2.0 * es.iter().fold(0.0f64, |a, &e| a.max(e));
            let (ec, es) = (round_up(ec), round_up(es));
            bound_c.push(ec);
            bound_s.push(es);
            tol_c = tol_c.max(f64::from(ec));
            tol_s = tol_s.max(f64::from(es));
        }
        weights.extend(wl);
    }
    let tri_i32: Vec<i32> = tris.iter().flatten().map(|&x| x as i32).collect();
    let gs = &setup.gaussians;
    let triangle: Vec<i32> = gs.iter().map(|x| x.triangle() as i32).collect();
    let bary: Vec<f32> = gs.iter().flat_map(|x| [x.a[1], x.a[2]]).collect();
    let offset: Vec<f32> = gs.iter().map(|x| x.a[3]).collect();
    let local: Vec<f32> = gs
        .iter()
        .flat_map(|x| [x.b[0], x.b[1], x.b[2], x.b[3], x.c[0], x.c[1]])
        .collect();
    out.f32s("base", &[v, 3], &flat(&rig.positions))?;
    out.f32s("deltas", &[t, v, 3], &dense_deltas(rig))?;
    out.f32s("weights", &[b, t], &weights)?;
    out.raw(
        "triangles",
        Dtype::I32,
        &[tris.len(), 3],
        &npy::i32_bytes(&tri_i32),
    )?;
    out.raw("triangle", Dtype::I32, &[g], &npy::i32_bytes(&triangle))?;
    out.f32s("bary", &[g, 2], &bary)?;
    out.f32s("offset", &[g], &offset)?;
    out.f32s("local_cov", &[g, 6], &local)?;
    out.f32s("expected_centers", &[b, g, 3], &centers)?;
    out.f32s("expected_cov", &[b, g, 6], &cov)?;
    out.f32s("bound_centers", &[b, g], &bound_c)?;
    out.f32s("bound_cov", &[b, g], &bound_s)?;
    let manifest = json!({
        "workload": id,
        "kind": "lift",
        "vertices": v,
        "targets": t,
        "gaussians": g,
        "triangles": tris.len(),
        "batch": b,
        "arrays": Value::Object(out.arrays),
        "tolerance_m": tol_c,
        "tolerance_cov": tol_s,
        "bytes_per_character": w.bytes(crate::harness::LiftMode::Surface).total(),
        "expected_is": "the surface lift posed on the morph stage (mesh space, no palette): \
            μ = (1−β1−β2)p0 + β1p1 + β2p2 + d·k·n, Σ = k²·R·S·Rᵀ, R = [t b n] \
            (mien_core::lift::bound)",
        "description": format!(
            "{}; surface lift: {g} gaussians on {} triangles, built once on ring entry 0",
            w.description,
            tris.len()
        ),
    });
    std::fs::write(
        out_dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(manifest)
}

/// `x` as the smallest f32 not below it (a bound stays a bound).
fn round_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x { y.next_up() } else { y }
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: [f32; 3]) -> f32 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

fn norm64(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// First-order bounds on `|float32 pose − exact pose|` of one bound gaussian, per centre axis and
/// per packed covariance entry, for a float32 evaluation of [`mien_core::lift::pose_bound`]'s
/// formulas in any association order (mien's, or a peer's `torch`/`numpy` ops), its triangle's
/// vertices `p` each off the exact morph stage by at most `ep` per axis ([`morph_error`]).
///
/// Worked in f64 on the float32 values, as running error analysis (Higham §3.1, §3.3): norms are
/// Euclidean, `u = 2⁻²⁴`, γₙ as [`gamma`]; δx bounds `|computed x − exact x|`.
///
/// - edges `e1 = p1−p0`, `e2 = p2−p0`, `e3 = p2−p1`: `δeᵢ = εa + εb + u|eᵢ|` (εⱼ = |ep[j]|);
/// - lengths `δLᵢ = δeᵢ + γ₅|eᵢ|` (squares, two adds, sqrt, a scaled norm's extra two);
///   `k = (L1+L2+L3)/3`: `δk = ΣδLᵢ/3 + γ₄k` (`max(K_MIN, ·)` is 1-Lipschitz);
/// - `c = e1 × e2`: `δc = δe1|e2| + |e1|δe2 + 2γ₂|e1||e2|`; `n = c/|c|`: `δn = 2δc/|c| + γ₆`
///   (`|a/|a| − b/|b|| ≤ 2|a − b|/|a|`; the norm and the division);
/// - tangent: exactly `e1 ⟂ n`, so `e1 − (e1·n)n = e1`; the computed one is off by
///   `δg = 2δe1 + |e1|δn + γ₄|e1|`, and `δt = 2δg/|e1| + γ₆`; `b = n × t`: `δb = δn + δt + 2γ₂`;
///   `R = [t b n]`: every row of `ΔR` has norm `≤ δR = √(δt² + δb² + δn²)`;
/// - centre `μᵢ = Σⱼ βⱼpⱼᵢ + (d·k)·nᵢ` with `β0 = 1−β1−β2` (`δβ0 = γ₂(1+|β1|+|β2|)`):
///   `Σⱼ|βⱼ|epⱼᵢ + δβ0|p0ᵢ| + |d|(δk + k·δn) + γ₅(Σⱼ|βⱼpⱼᵢ| + |d·k·nᵢ|)` (a 4-term sum of
///   products, any order);
/// - covariance `Σᵢⱼ = k²·Σₐᵦ RᵢₐSₐᵦRⱼᵦ`: `2kδk·Aᵢⱼ + 2k²δR‖S‖_F + γ₁₂k²Aᵢⱼ` with
///   `Aᵢⱼ = Σₐᵦ|Rᵢₐ||Sₐᵦ||Rⱼᵦ|` (a 9-term sum of triple products, times a rounded k²: any order).
///
/// Terms quadratic in the δs (relative size ~10⁻⁷ of these) are dropped.
pub fn lift_error(
    g: &mien_core::lift::PackedBound,
    p: [[f32; 3]; 3],
    ep: [[f64; 3]; 3],
) -> ([f64; 3], [f64; 6]) {
    let u = f64::from(f32::EPSILON) / 2.0;
    let p64 = p.map(|x| x.map(f64::from));
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let en = ep.map(norm64);
    let (e1, e2, e3) = (
        sub(p64[1], p64[0]),
        sub(p64[2], p64[0]),
        sub(p64[2], p64[1]),
    );
    let (l1, l2, l3) = (norm64(e1), norm64(e2), norm64(e3));
    let de1 = en[0] + en[1] + u * l1;
    let de2 = en[0] + en[2] + u * l2;
    let de3 = en[1] + en[2] + u * l3;
    let k = ((l1 + l2 + l3) / 3.0).max(f64::from(K_MIN));
    let dk = (de1 + de2 + de3 + gamma(5) * (l1 + l2 + l3)) / 3.0 + gamma(4) * k;
    let c = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let lc = norm64(c);
    let dc = de1 * l2 + l1 * de2 + 2.0 * gamma(2) * l1 * l2;
    let dn = 2.0 * dc / lc + gamma(6);
    let n = c.map(|x| x / lc);
    let dg = 2.0 * de1 + l1 * dn + gamma(4) * l1;
    let dt = 2.0 * dg / l1 + gamma(6);
    let db = dn + dt + 2.0 * gamma(2);
    let dr = (dt * dt + db * db + dn * dn).sqrt();
    let t = e1.map(|x| x / l1);
    let bt = [
        n[1] * t[2] - n[2] * t[1],
        n[2] * t[0] - n[0] * t[2],
        n[0] * t[1] - n[1] * t[0],
    ];
    let (b1, b2, d) = (f64::from(g.a[1]), f64::from(g.a[2]), f64::from(g.a[3]));
    let beta = [1.0 - b1 - b2, b1, b2];
    let db0 = gamma(2) * (1.0 + b1.abs() + b2.abs());
    let centre = [0, 1, 2].map(|i| {
        let terms: f64 =
            (0..3).map(|j| (beta[j] * p64[j][i]).abs()).sum::<f64>() + (d * k * n[i]).abs();
        (0..3).map(|j| beta[j].abs() * ep[j][i]).sum::<f64>()
            + db0 * p64[0][i].abs()
            + d.abs() * (dk + k * dn)
            + gamma(5) * terms
    });
    let sv = [g.b[0], g.b[1], g.b[2], g.b[3], g.c[0], g.c[1]].map(f64::from);
    let sm = [
        [sv[0], sv[1], sv[2]],
        [sv[1], sv[3], sv[4]],
        [sv[2], sv[4], sv[5]],
    ];
    let s_f = sm.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    let r = |i: usize| [t[i], bt[i], n[i]];
    let a = |i: usize, j: usize| -> f64 {
        let (ri, rj) = (r(i), r(j));
        (0..3)
            .flat_map(|x| (0..3).map(move |y| (x, y)))
            .map(|(x, y)| (ri[x] * sm[x][y] * rj[y]).abs())
            .sum()
    };
    let cov = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)].map(|(i, j)| {
        let aij = a(i, j);
        2.0 * k * dk * aij + 2.0 * k * k * dr * s_f + gamma(12) * k * k * aij
    });
    (centre, cov)
}

/// The dense position deltas `(T,V,3)` of `rig`'s CSR morph rows (zero where a target does not
/// move a vertex).
fn dense_deltas(rig: &RigData) -> Vec<f32> {
    let (t, v) = (rig.weight_count as usize, rig.vertex_count());
    let mut deltas = vec![0.0f32; t * v * 3];
    for vi in 0..v {
        for e in rig.morph_offsets[vi] as usize..rig.morph_offsets[vi + 1] as usize {
            let at = (rig.morph_target[e] as usize * v + vi) * 3;
            deltas[at..at + 3].copy_from_slice(&rig.morph_position[e]);
        }
    }
    deltas
}

/// Per axis, `γₙ₊₁·S` for vertex `vi`'s morph stage under the rules-applied weights `wl`: S the sum
/// of `|base|` and every `|w·δ|` of its row, n its non-zero weights (module docs) — the error of
/// one float32 evaluation in any order, not yet doubled.
fn morph_error(rig: &RigData, vi: usize, wl: &[f32]) -> [f64; 3] {
    let row = rig.morph_offsets[vi] as usize..rig.morph_offsets[vi + 1] as usize;
    let n = row
        .clone()
        .filter(|&e| wl[rig.morph_target[e] as usize] != 0.0)
        .count();
    [0, 1, 2].map(|k| {
        let s: f64 = f64::from(rig.positions[vi][k].abs())
            + row
                .clone()
                .map(|e| {
                    f64::from((wl[rig.morph_target[e] as usize] * rig.morph_position[e][k]).abs())
                })
                .sum::<f64>();
        gamma(n + 1) * s
    })
}

/// The LBS bound `2·γ₁₀·max_i Σₖ wₖ(Σⱼ|Mᵢⱼ||pⱼ| + |tᵢ|)` of vertex `v` (module docs).
fn lbs_bound(rig: &RigData, v: usize, palette: &[Mat4]) -> f64 {
    let p = rig.positions[v];
    let mut worst = 0.0f64;
    for i in 0..3 {
        let mut s = 0.0f64;
        for k in 0..4 {
            let w = f64::from(rig.weights[v][k]);
            if w == 0.0 {
                continue;
            }
            let m = palette[rig.joints[v][k] as usize];
            let row = m.row(i);
            s += w
                * ((0..3)
                    .map(|j| f64::from((row[j] * p[j]).abs()))
                    .sum::<f64>()
                    + f64::from(row[3].abs()));
        }
        worst = worst.max(s);
    }
    2.0 * gamma(10) * worst
}
