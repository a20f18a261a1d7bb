//! The 52 ARKit morph targets of the sample head as per-part [`MorphSet`]s: position deltas from
//! [`super::expressions`], the right-side shapes mirrored from the left ones vertex by vertex (so
//! the two sides agree exactly), and normal deltas from normals recomputed on the displaced mesh.
//!
//! Source: glTF 2.0 §3.7.2.2 (morph targets store position and normal displacements; the blended
//! normal is renormalised), DESIGN.md "Morph set".

use glam::DVec3;

use super::expressions;
use super::model::{Model, flip};
use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT, arkit_index};
use crate::error::{Error, Result};
use crate::rig::{DenseTarget, MorphSet, Primitive};

/// Deltas smaller than this (metres) are dropped so a target stores only the vertices it moves.
const NEGLIGIBLE: f64 = 1e-9;

/// Global position and normal deltas `(52, V, 3)`, in [`ARKIT_52`] order.
#[derive(Clone, Debug, Default)]
pub(super) struct Deltas {
    /// Position deltas per target, metres.
    pub position: Vec<Vec<[f32; 3]>>,
    /// Normal deltas per target (unit normal of the displaced mesh minus the rest normal).
    pub normal: Vec<Vec<[f32; 3]>>,
}

fn flip32(d: [f32; 3]) -> [f32; 3] {
    [-d[0], d[1], d[2]]
}

/// Compute every target's deltas.
///
/// # Errors
/// [`Error::Invalid`] naming a shape that has no field (a programming error the tests rule out).
pub(super) fn deltas(m: &Model) -> Result<Deltas> {
    let nv = m.pos.len();
    let mut out = Deltas {
        position: vec![Vec::new(); ARKIT_COUNT],
        normal: vec![Vec::new(); ARKIT_COUNT],
    };
    for (t, name) in ARKIT_52.iter().enumerate() {
        if name.ends_with("Right") {
            continue;
        }
        let mut d = expressions::field(m, name).ok_or_else(|| Error::Invalid {
            what: format!("sample shape `{name}`"),
            reason: "no displacement field".into(),
        })?;
        if !name.ends_with("Left") {
            // Unpaired shapes are made exactly symmetric.
            let mirrored: Vec<DVec3> = (0..nv).map(|v| flip(d[m.mirror[v] as usize])).collect();
            for (x, y) in d.iter_mut().zip(mirrored) {
                *x = (*x + y) * 0.5;
            }
        }
        let pos: Vec<[f32; 3]> = d
            .iter()
            .map(|x| {
                if x.length() < NEGLIGIBLE {
                    [0.0; 3]
                } else {
                    x.as_vec3().to_array()
                }
            })
            .collect();
        let mut nrm = normal_deltas(m, &pos);
        if !name.ends_with("Left") {
            let mirrored: Vec<[f32; 3]> =
                (0..nv).map(|v| flip32(nrm[m.mirror[v] as usize])).collect();
            for (x, y) in nrm.iter_mut().zip(mirrored) {
                *x = [
                    0.5 * (x[0] + y[0]),
                    0.5 * (x[1] + y[1]),
                    0.5 * (x[2] + y[2]),
                ];
            }
        }
        out.position[t] = pos;
        out.normal[t] = nrm;
    }
    for (t, name) in ARKIT_52.iter().enumerate() {
        let Some(stem) = name.strip_suffix("Right") else {
            continue;
        };
        let left = arkit_index(&format!("{stem}Left")).ok_or_else(|| Error::Invalid {
            what: format!("sample shape `{name}`"),
            reason: "no left counterpart".into(),
        })?;
        out.position[t] = (0..nv)
            .map(|v| flip32(out.position[left][m.mirror[v] as usize]))
            .collect();
        out.normal[t] = (0..nv)
            .map(|v| flip32(out.normal[left][m.mirror[v] as usize]))
            .collect();
    }
    Ok(out)
}

/// Normal deltas `(V,3)` for position deltas `d`: normals recomputed (area-weighted, as
/// [`Primitive::computed_normals`]) on the displaced mesh minus the rest normals, for the vertices of
/// triangles that move; exactly zero elsewhere.
fn normal_deltas(m: &Model, d: &[[f32; 3]]) -> Vec<[f32; 3]> {
    let mut out = vec![[0.0f32; 3]; d.len()];
    let moved = |i: u32| d[i as usize] != [0.0; 3];
    for (vr, tr) in m.vertices.iter().zip(&m.triangles) {
        let tris = &m.tri[tr.clone()];
        let mut affected = vec![false; vr.len()];
        for t in tris.chunks_exact(3) {
            if t.iter().any(|&i| moved(i)) {
                for &i in t {
                    affected[i as usize - vr.start] = true;
                }
            }
        }
        if !affected.contains(&true) {
            continue;
        }
        let displaced: Vec<[f32; 3]> = vr
            .clone()
            .map(|i| std::array::from_fn(|k| m.pos32[i][k] + d[i][k]))
            .collect();
        let local: Vec<u32> = tris.iter().map(|&i| i - vr.start as u32).collect();
        let n1 = Primitive::computed_normals(&displaced, &local);
        for (k, _) in affected.iter().enumerate().filter(|(_, a)| **a) {
            let i = vr.start + k;
            out[i] = std::array::from_fn(|c| n1[k][c] - m.normal[i][c]);
        }
    }
    out
}

/// One [`MorphSet`] per part (in [`super::SamplePart::ALL`] order), each with all 52 targets.
///
/// # Errors
/// As [`MorphSet::from_dense`].
pub(super) fn morph_sets(m: &Model, d: &Deltas) -> Result<Vec<MorphSet>> {
    let any = |s: &[[f32; 3]]| s.iter().any(|x| *x != [0.0; 3]);
    m.vertices
        .iter()
        .map(|vr| {
            let targets: Vec<DenseTarget> = (0..ARKIT_COUNT)
                .map(|t| {
                    let (p, n) = (&d.position[t][vr.clone()], &d.normal[t][vr.clone()]);
                    DenseTarget {
                        position: any(p).then(|| p.to_vec()),
                        normal: any(n).then(|| n.to_vec()),
                        tangent: None,
                    }
                })
                .collect();
            MorphSet::from_dense(vr.len(), &targets)
        })
        .collect()
}
