//! The arrays the peer scripts (`benches/peers/`) read: for a workload W, `DIR/W/manifest.json`
//! plus NumPy `.npy` files ([`crate::npy`], v1.0, little-endian, C order), for [`EXPORT_BATCH`]
//! characters (character c reads ring entry c, as at frame 0 of a run).
//!
//! Manifest: `{"workload", "kind": "morph"|"gnm"|"skin", "vertices", "targets"|"coefficients"|
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
            let mut deltas = vec![0.0f32; t * v * 3];
            for vi in 0..v {
                for e in rig.morph_offsets[vi] as usize..rig.morph_offsets[vi + 1] as usize {
                    let at = (rig.morph_target[e] as usize * v + vi) * 3;
                    deltas[at..at + 3].copy_from_slice(&rig.morph_position[e]);
                }
            }
            let mut weights = Vec::with_capacity(b * t);
            let mut expected = Vec::with_capacity(b * v * 3);
            let mut tol = 0.0f64;
            for c in 0..b {
                let wl = limited_weights(rig, &f[ring(c)]);
                for vi in 0..v {
                    expected.extend(rig.morph_vertex(vi, &wl).position);
                    let row = rig.morph_offsets[vi] as usize..rig.morph_offsets[vi + 1] as usize;
                    let n = row
                        .clone()
                        .filter(|&e| wl[rig.morph_target[e] as usize] != 0.0)
                        .count();
                    for k in 0..3 {
                        let s: f64 = f64::from(rig.positions[vi][k].abs())
                            + row
                                .clone()
                                .map(|e| {
                                    f64::from(
                                        (wl[rig.morph_target[e] as usize]
                                            * rig.morph_position[e][k])
                                            .abs(),
                                    )
                                })
                                .sum::<f64>();
                        tol = tol.max(2.0 * gamma(n + 1) * s);
                    }
                }
                weights.extend(wl);
            }
            out.f32s("base", &[v, 3], &flat(&rig.positions))?;
            out.f32s("deltas", &[t, v, 3], &deltas)?;
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
