//! The linear-head (GNM) part of the conformance harness: random packs and frames, the reference run
//! ([`forward::pose`]), a per-vertex error bound derived from the inputs, and [`check_pack`] — the
//! helper a real-input test calls with its own pack and frames. Batches of instances and the
//! ICT-sized pack are in [`super::gnm_batch`].
//!
//! # The bound
//!
//! fp16 basis values widen to f32 exactly (every fp16 is an f32), and a GPU backend gets the scaled
//! coefficients `cₑ·sₑ` and the skin matrices computed on the CPU by the same f32 expressions as the
//! reference ([`mien_core::gnm::GnmFrame`]), so they are bit-identical. What differs is the order of
//! the f32 roundings. With u = 2⁻²⁴ and γₙ = n·u / (1 − n·u) (Higham, *Accuracy and Stability of
//! Numerical Algorithms*, 2nd ed., §3.1 and §4.2: a sum of n terms in **any** order, each term a
//! product rounded once or fused, is within γₙ · Σ|terms| of the exact sum), per vertex, in the
//! ∞-norm over the three axes, both results lie within the following of the exact value, so they lie
//! within twice it of each other:
//!
//! 1. **forward** `p = n + Σₑ tₑ`, `tₑ = (cₑsₑ)·Bₑ`: `d = 2·γ_{E+1}·S`, `S = maxₐ(|nₐ| + Σₑ|tₑₐ|)`;
//!    `m = S` bounds |p|.
//! 2. **each eye** with weight w ≠ 0, centre c: `p ← p + w(R(p−c) + c − p)` is affine in p with
//!    ∞-norm ≤ `a = |1−w| + √3|w|` (‖R‖∞ ≤ √3 for a rotation), so `d ← a·d`; its own roundings (the
//!    reference rotates by the quaternion — two cross products — the GPU by a matrix built from it,
//!    ≤ 4 roundings per entry; then −c, +c, −p, ×w, +p) are at most 16 in series on values ≤
//!    `3(1+|w|)(m+|c|)`: `d += 2·γ₁₆·3(1+|w|)(m+|c|)`; `m ← a·m + |w|(√3+1)|c|`.
//! 3. **seam** s: one addition, `d += 2u(m + |s|)`, `m += |s|`.
//! 4. **skin** with normalised weights ŵₖ ≥ 0 and matrices (Lₖ, tₖ) (the reference divides the
//!    weighted sum by the weight total, the GPU the weights first): `d ← Σₖŵₖ‖Lₖ‖∞·d`, and each side's
//!    ≤ 8 roundings in series (3 products + 3 additions per row, the weight division, the weighted
//!    sum) add `2·γ₈·Σₖŵₖ(‖Lₖ‖∞·m + |tₖ|∞)`.
//!
//! The dominant term is step 1: e.g. E = 383 gives `2·γ₃₈₄ ≈ 4.6e-5` of Σ|cₑsₑBₑ| — a bound that
//! grows with the coefficients actually in play, not a constant.

use glam::{Mat4, Vec3};
use mien_core::gnm::forward::{self, from_row_major};
use mien_core::gnm::pack::GnmPack;
use mien_core::rig::PosedVertices;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack, random_head_ext, random_joint_world};
use proptest::prelude::*;

pub use super::gnm_hand::{HandCase, one_vertex_pack};

/// One frame of a head: `head_ext` `(E+4,)` and joint world matrices `(J,)`.
#[derive(Clone, Debug, PartialEq)]
pub struct GnmFrameInput {
    /// E coefficients then `[pitch_L, yaw_L, pitch_R, yaw_R]` radians.
    pub head_ext: Vec<f32>,
    /// Column-major world matrices in the pack's joint order, metres.
    pub joint_world: Vec<Mat4>,
}

/// One random case: a pack's shape and seed, and how many frames to pose in a row.
#[derive(Clone, Debug)]
pub struct GnmCase {
    /// The pack's sizes.
    pub shape: GnmShape,
    /// Seed of the pack and of its frames.
    pub seed: u64,
    /// Frames posed one after another on one upload (1–3).
    pub frames: u32,
}

/// Random cases: 1–`max_vertices` vertices, 1–`max_coeffs` coefficients in 1–5 regions, 1–8 joints,
/// seam present or absent, 1–3 frames.
pub fn gnm_cases(max_vertices: u32, max_coeffs: u32) -> impl Strategy<Value = GnmCase> {
    (
        1u32..=max_vertices,
        1u32..=max_coeffs,
        1u32..=5,
        1u32..=8,
        any::<bool>(),
        any::<u64>(),
        1u32..=3,
    )
        .prop_map(
            |(vertices, coeffs, regions, joints, seam, seed, frames)| GnmCase {
                shape: GnmShape {
                    vertices,
                    coeffs,
                    regions,
                    joints,
                    seam,
                },
                seed,
                frames,
            },
        )
}

/// Everything a run needs, built from a [`GnmCase`].
#[derive(Clone, Debug)]
pub struct GnmInputs {
    /// The pack.
    pub pack: GnmPack,
    /// Its frames, in order.
    pub frames: Vec<GnmFrameInput>,
}

impl GnmInputs {
    /// The pack of `case` and its frames (seeded from the case's seed and the frame index).
    pub fn new(case: &GnmCase) -> Self {
        let pack = random_gnm_pack(case.seed, case.shape);
        let frames = (0..u64::from(case.frames))
            .map(|i| {
                let s = case.seed.wrapping_add(i.wrapping_mul(0x9E37_79B9));
                GnmFrameInput {
                    head_ext: random_head_ext(s, &pack),
                    joint_world: random_joint_world(s, &pack),
                }
            })
            .collect();
        GnmInputs { pack, frames }
    }
}

/// What a backend under test must do for [`check_pack`].
pub trait GnmHarness {
    /// Create one backend, upload `pack`, fill every output buffer of the head with
    /// [`super::POISON`], then for each frame in order: `set_head_ext`, record `encode` into an
    /// encoder, submit it, and read the head's vertices back.
    ///
    /// # Errors
    /// Any backend error.
    fn run(
        &mut self,
        pack: &GnmPack,
        frames: &[GnmFrameInput],
    ) -> mien_core::Result<Vec<PosedVertices>>;

    /// Create one backend, upload each pack of `uploads` with `upload_gnm_batch` as one instance
    /// per frame, fill every output buffer with [`super::POISON`], set every instance's frame,
    /// record **one** `encode`, submit it, and read every instance back: per upload, per instance.
    ///
    /// # Errors
    /// Any backend error.
    fn run_batch(
        &mut self,
        uploads: &[super::gnm_batch::GnmBatchInput],
    ) -> mien_core::Result<Vec<Vec<PosedVertices>>>;
}

/// The reference: [`forward::pose`] of every frame, positions `(V,3)` metres.
///
/// # Errors
/// A frame whose lengths do not fit the pack.
pub fn gnm_reference(
    pack: &GnmPack,
    frames: &[GnmFrameInput],
) -> mien_core::Result<Vec<Vec<[f32; 3]>>> {
    frames
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            forward::pose(pack, &f.head_ext, &f.joint_world, &mut out)?;
            Ok(out)
        })
        .collect()
}

const U: f64 = 1.0 / (1u64 << 24) as f64;

fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu)
}

fn inf_norm(v: Vec3) -> f64 {
    f64::from(v.abs().max_element())
}

/// The largest absolute row sum of `m`'s linear 3×3 part.
fn linear_norm(m: &Mat4) -> f64 {
    (0..3)
        .map(|i| (0..3).map(|j| f64::from(m.col(j)[i].abs())).sum::<f64>())
        .fold(0.0, f64::max)
}

/// The per-vertex bound `(V,)`, metres, on |backend − reference| in every axis for one frame (see
/// the module docs for the derivation).
///
/// # Errors
/// A frame whose lengths do not fit the pack.
pub fn vertex_bounds(pack: &GnmPack, frame: &GnmFrameInput) -> mien_core::Result<Vec<f64>> {
    bounds(pack, frame, false)
}

/// [`vertex_bounds`] for the tensor-core forward pass (`gnm_coop.wgsl`): the scaled coefficients
/// rounded to fp16 before the blend — relative error ≤ 2⁻¹¹, or ≤ 2⁻²⁵ absolute in fp16's
/// subnormal range — each carried by its basis value into the sum, and the fp32 accumulation
/// bounded with u = 2⁻²² instead of 2⁻²⁴: NVIDIA's tensor cores align and add products without
/// IEEE round-to-nearest (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor
/// cores", PeerJ Comput. Sci. 2021), so the order-independent γ bound is taken with two fewer
/// bits. The basis itself is fp16 in both paths (no new error).
///
/// # Errors
/// A frame whose lengths do not fit the pack.
pub fn coop_vertex_bounds(pack: &GnmPack, frame: &GnmFrameInput) -> mien_core::Result<Vec<f64>> {
    bounds(pack, frame, true)
}

fn bounds(pack: &GnmPack, frame: &GnmFrameInput, coop: bool) -> mien_core::Result<Vec<f64>> {
    let (coeffs, _gaze) = pack.header.head_ext.split(&frame.head_ext)?;
    let j = pack.header.joints.len();
    if frame.joint_world.len() != j {
        return Err(mien_core::Error::Mismatch {
            what: "joint world matrices".into(),
            expected: j as u64,
            found: frame.joint_world.len() as u64,
        });
    }
    let e = pack.coeff_count();
    let nv = pack.vertex_count();
    let scaled: Vec<f64> = coeffs
        .iter()
        .zip(&pack.basis_scale)
        .map(|(c, s)| f64::from((c * s).abs()))
        .collect();
    // The skin matrices as the reference computes them.
    let bind = from_row_major(&pack.header.bind_transform);
    let skin: Vec<Mat4> = frame
        .joint_world
        .iter()
        .zip(&pack.rest_world)
        .map(|(w, r)| *w * from_row_major(r).inverse() * bind)
        .collect();
    let centres = pack.eye_positions.map(|c| inf_norm(Vec3::from(c)));
    let sqrt3 = 3f64.sqrt();
    Ok((0..nv)
        .map(|v| {
            // 1. forward.
            let mut s = [0f64; 3];
            for (a, x) in s.iter_mut().enumerate() {
                *x = f64::from(pack.neutral[v][a].abs())
                    + (0..e)
                        .map(|k| scaled[k] * f64::from(pack.basis_at(v, k, a).abs()))
                        .sum::<f64>();
            }
            let mut m = s[0].max(s[1]).max(s[2]);
            let mut d = if coop {
                let u = 1.0 / f64::from(1u32 << 22);
                let nu = (e + 1) as f64 * u;
                let rounding = (0..3)
                    .map(|a| {
                        (0..e)
                            .map(|k| {
                                (scaled[k] / 2048.0 + 1.0 / f64::from(1u32 << 25))
                                    * f64::from(pack.basis_at(v, k, a).abs())
                            })
                            .sum::<f64>()
                    })
                    .fold(0.0, f64::max);
                2.0 * nu / (1.0 - nu) * m + rounding
            } else {
                2.0 * gamma(e + 1) * m
            };
            // 2. eyes.
            for (i, c) in centres.iter().enumerate() {
                let w = f64::from(pack.eye_weights[i * nv + v]);
                if w != 0.0 {
                    let a = (1.0 - w).abs() + sqrt3 * w.abs();
                    d = a * d + 2.0 * gamma(16) * 3.0 * (1.0 + w.abs()) * (m + c);
                    m = a * m + w.abs() * (sqrt3 + 1.0) * c;
                }
            }
            // 3. seam.
            if let Some(seam) = &pack.seam {
                let sn = inf_norm(Vec3::from(seam[v]));
                d += 2.0 * U * (m + sn);
                m += sn;
            }
            // 4. skin (weights normalised; none → bind).
            let w = pack.skin_weight[v];
            let total: f64 = w.iter().map(|x| f64::from(*x)).sum();
            let terms: Vec<(f64, &Mat4)> = if total > 0.0 {
                (0..4)
                    .filter(|k| w[*k] != 0.0)
                    .map(|k| {
                        (
                            f64::from(w[k]) / total,
                            &skin[pack.skin_index[v][k] as usize],
                        )
                    })
                    .collect()
            } else {
                vec![(1.0, &bind)]
            };
            let prop: f64 = terms.iter().map(|(wk, mk)| wk * linear_norm(mk)).sum();
            let round: f64 = terms
                .iter()
                .map(|(wk, mk)| wk * (linear_norm(mk) * m + inf_norm(mk.w_axis.truncate())))
                .sum();
            prop * d + 2.0 * gamma(8) * round
        })
        .collect())
}

/// How close a run came to the reference.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GnmReport {
    /// Frames compared.
    pub frames: usize,
    /// Vertices per frame.
    pub vertices: usize,
    /// Largest |backend − reference| over every frame, vertex and axis, metres.
    pub max_abs: f64,
    /// Largest |backend − reference| / bound (≤ 1 when the run passed).
    pub max_ratio: f64,
}

/// Compare a run's vertices with the reference, frame by frame: every position within its
/// [`vertex_bounds`], no NaN, every normal exactly 0.
///
/// # Errors
/// A message naming the first bad frame, vertex and axis.
pub fn compare_gnm(
    pack: &GnmPack,
    frames: &[GnmFrameInput],
    got: &[PosedVertices],
    want: &[Vec<[f32; 3]>],
) -> Result<GnmReport, String> {
    compare_with(pack, frames, got, want, false)
}

/// [`compare_gnm`] against [`coop_vertex_bounds`] (the tensor-core forward pass).
///
/// # Errors
/// A message naming the first bad frame, vertex and axis.
pub fn compare_gnm_coop(
    pack: &GnmPack,
    frames: &[GnmFrameInput],
    got: &[PosedVertices],
    want: &[Vec<[f32; 3]>],
) -> Result<GnmReport, String> {
    compare_with(pack, frames, got, want, true)
}

fn compare_with(
    pack: &GnmPack,
    frames: &[GnmFrameInput],
    got: &[PosedVertices],
    want: &[Vec<[f32; 3]>],
    coop: bool,
) -> Result<GnmReport, String> {
    if got.len() != frames.len() || want.len() != frames.len() {
        return Err(format!(
            "{} frames read back, {} references, {} frames",
            got.len(),
            want.len(),
            frames.len()
        ));
    }
    let mut report = GnmReport {
        frames: frames.len(),
        vertices: pack.vertex_count(),
        ..GnmReport::default()
    };
    for (f, ((g, w), input)) in got.iter().zip(want).zip(frames).enumerate() {
        if g.positions.len() != w.len() || g.normals.len() != w.len() {
            return Err(format!(
                "frame {f}: {} positions and {} normals, reference {}",
                g.positions.len(),
                g.normals.len(),
                w.len()
            ));
        }
        let bounds = bounds(pack, input, coop).map_err(|e| format!("frame {f}: {e}"))?;
        for (v, ((gp, wp), b)) in g.positions.iter().zip(w).zip(&bounds).enumerate() {
            for a in 0..3 {
                let err = (f64::from(gp[a]) - f64::from(wp[a])).abs();
                if gp[a].is_nan() || wp[a].is_nan() || err > *b {
                    return Err(format!(
                        "frame {f} vertex {v} axis {a}: {} vs reference {} (|diff| {err:e}, bound {b:e})",
                        gp[a], wp[a]
                    ));
                }
                report.max_abs = report.max_abs.max(err);
                if *b > 0.0 {
                    report.max_ratio = report.max_ratio.max(err / b);
                }
            }
            if g.normals[v] != [0.0; 3] {
                return Err(format!(
                    "frame {f} vertex {v}: normal {:?}, expected 0 (a pack has no normals)",
                    g.normals[v]
                ));
            }
        }
    }
    Ok(report)
}

/// Pose `frames` of `pack` on `harness` and on the reference and compare them ([`compare_gnm`]):
/// the helper a real-input test calls with a baked pack and its own frames.
///
/// # Errors
/// A message naming the first bad element, or the backend's error.
pub fn check_pack(
    harness: &mut impl GnmHarness,
    pack: &GnmPack,
    frames: &[GnmFrameInput],
) -> Result<GnmReport, String> {
    let want = gnm_reference(pack, frames).map_err(|e| format!("reference: {e}"))?;
    let got = harness
        .run(pack, frames)
        .map_err(|e| format!("backend: {e}"))?;
    compare_gnm(pack, frames, &got, &want)
}

/// Run a random `case` on `harness` and compare ([`check_pack`]).
///
/// # Errors
/// As [`check_pack`].
pub fn check_gnm(harness: &mut impl GnmHarness, case: &GnmCase) -> Result<GnmReport, String> {
    let inputs = GnmInputs::new(case);
    check_pack(harness, &inputs.pack, &inputs.frames)
}
