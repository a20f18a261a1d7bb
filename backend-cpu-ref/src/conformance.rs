//! The conformance harness every GPU backend runs against this CPU reference (feature
//! `conformance`): random cases, the reference run and the element-by-element comparison, shared so
//! the wgpu and Vulkan tests are the same test code.
//!
//! **Bound.** Every element of posed positions, posed normals, sink centres and covariances must be
//! within `TOLERANCE · max(1, largest |reference| in that array)`. f32 carries 24 bits (ε = 1.2e-7);
//! a GPU may contract `a + w·d` into an FMA and orders nothing differently (both walk a CSR row in
//! target order and joints in slot order), so the difference is a few roundings per term: at most
//! 64 morph terms plus a 4-joint 4×4 transform, i.e. ≲ 80·ε·max ≈ 1e-5·max. Colour bytes may differ
//! by one where `255·c` lands within rounding of a half (WGSL and Rust both round half up, but the
//! normal shading's `c` itself carries rounding). NaN never passes, and slots outside every lift's
//! range must still hold the poison the harness wrote before the run.
//!
//! Posed normals and tangents are unit vectors made by normalising sums, which divides the sum's
//! rounding by its length: their bound is per vertex, `TOLERANCE · max(1, κ)` with κ the condition
//! of those sums ([`posed_bounds`]; a blend of deltas or joints that nearly cancels amplifies the
//! rounding — the H200 met one at κ ≈ 1.3 on a random case).
//!
//! Linear heads (GNM) have their own cases, reference and bound in [`gnm`].

pub mod gnm;
pub mod gnm_batch;
mod gnm_hand;
pub mod gnm_real;
pub mod rig_batch;

use mien_core::lift::{DebugLiftParams, DebugShading, Lift};
use mien_core::rig::{PosedVertices, RigBackend, RigControls, RigData};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_core::testing::{RigShape, random_controls, random_rig};
use proptest::prelude::*;

use crate::{CpuDebugLift, CpuEncoder, CpuRigBackend, CpuSplatSink};

/// Relative tolerance of the comparison (see the module docs for why).
pub const TOLERANCE: f64 = 1e-5;

/// The word every output element is filled with before a run (an f32 NaN, an impossible colour).
pub const POISON: u32 = 0xFFFF_FFFF;

/// One random case: rigs (shape + seed) and one lift each.
#[derive(Clone, Debug)]
pub struct Case {
    /// Each rig's shape and seed.
    pub rigs: Vec<(RigShape, u64)>,
    /// Each rig's lift: σ (m), shading, extra slots past its vertices, transform.
    pub lifts: Vec<(f32, DebugShading, u32, [f32; 12])>,
    /// Slots before the first range (so ranges start at unaligned offsets).
    pub pad: u32,
}

/// A random rig shape and seed: up to `max_vertices` vertices and 64 targets of random sparsity,
/// 1–24 joints.
pub fn rig_shapes(max_vertices: u32) -> impl Strategy<Value = (RigShape, u64)> {
    (
        1u32..=max_vertices,
        0u32..=64,
        0.0f32..0.6,
        1u32..24,
        any::<u64>(),
    )
        .prop_map(|(v, t, d, j, s)| {
            (
                RigShape {
                    vertices: v,
                    targets: t,
                    density: d,
                    joints: j,
                },
                s,
            )
        })
}

/// Random cases: 1–3 rigs ([`rig_shapes`]), σ 0.5–10 mm, every shading, random affine lift
/// transforms.
pub fn cases(max_vertices: u32) -> impl Strategy<Value = Case> {
    let rig = rig_shapes(max_vertices);
    let lift = (
        0.0005f32..0.01,
        0u8..3,
        0u32..200,
        proptest::array::uniform12(-1.5f32..1.5),
    )
        .prop_map(|(s, sh, extra, a)| {
            (
                s,
                [DebugShading::Tint, DebugShading::Normal, DebugShading::Flat][sh as usize],
                extra,
                a,
            )
        });
    (proptest::collection::vec((rig, lift), 1..4), 0u32..300).prop_map(|(v, pad)| {
        let (rigs, lifts) = v.into_iter().unzip();
        Case { rigs, lifts, pad }
    })
}

/// Everything a run needs, built from a [`Case`].
#[derive(Clone, Debug)]
pub struct Inputs {
    /// The rigs.
    pub rigs: Vec<RigData>,
    /// Their controls.
    pub controls: Vec<RigControls>,
    /// Their lifts (ranges already laid out in the sink).
    pub lifts: Vec<DebugLiftParams>,
    /// Sink capacity.
    pub capacity: u32,
}

impl Inputs {
    /// Lay out `case`: rig `i`'s range follows rig `i-1`'s, after `pad` unused slots; 17 unused
    /// slots after the last.
    pub fn new(case: &Case) -> Self {
        let mut rigs = Vec::new();
        let mut controls = Vec::new();
        let mut lifts = Vec::new();
        let mut next = case.pad;
        for ((shape, seed), (sigma, shading, extra, a)) in case.rigs.iter().zip(&case.lifts) {
            let rig = random_rig(*seed, *shape);
            controls.push(random_controls(*seed, &rig));
            let nv = rig.vertex_count() as u32;
            let mut p = DebugLiftParams::new(
                SlotRange {
                    offset: next,
                    count: nv + extra,
                },
                nv,
            );
            p.sigma = *sigma;
            p.shading = *shading;
            p.transform = *a;
            p.centroid = [0.01, -0.02, 0.03];
            next += nv + extra;
            rigs.push(rig);
            lifts.push(p);
        }
        Inputs {
            rigs,
            controls,
            lifts,
            capacity: next + 17,
        }
    }
}

/// What a backend under test must do for [`check`].
pub trait Harness {
    /// Create a sink of `inputs.capacity` slots, fill every sink element and every posed-vertex
    /// output with [`POISON`], upload every rig into one backend, set its controls, allocate each
    /// lift's range (in order, after `pad` unused slots) and record the rig pass and every lift into
    /// one encoder, submit once, then read back each rig's posed vertices and the whole sink.
    ///
    /// # Errors
    /// Any backend error.
    fn run(&mut self, inputs: &Inputs) -> mien_core::Result<(Vec<PosedVertices>, SplatBuffers)>;
}

/// The CPU reference of [`Harness::run`].
///
/// # Errors
/// Invalid inputs (a bug in the case generator).
pub fn reference(inputs: &Inputs) -> mien_core::Result<(Vec<PosedVertices>, SplatBuffers)> {
    let mut backend = CpuRigBackend::new();
    let mut sink = CpuSplatSink::new(inputs.capacity);
    {
        let b = sink.buffers_mut();
        b.center.fill([f32::from_bits(POISON); 4]);
        b.color.fill(POISON);
        b.cov_a.fill([f32::from_bits(POISON); 4]);
        b.cov_b.fill([f32::from_bits(POISON); 4]);
    }
    let mut handles = Vec::new();
    for (rig, c) in inputs.rigs.iter().zip(&inputs.controls) {
        let h = backend.upload(rig)?;
        backend.set_controls(h, c)?;
        handles.push(h);
    }
    if let Some(first) = inputs.lifts.first()
        && first.range.offset > 0
    {
        sink.allocate(first.range.offset)?;
    }
    let mut lifts = Vec::new();
    for (h, p) in handles.iter().zip(&inputs.lifts) {
        let r = sink.allocate(p.range.count)?;
        assert_eq!(r, p.range, "the harness lays ranges out in order");
        lifts.push(CpuDebugLift::new(&backend, *h, &sink, *p)?);
    }
    let mut enc = CpuEncoder::default();
    backend.encode(&mut enc)?;
    for l in &mut lifts {
        l.encode(&mut enc, &backend, &mut sink)?;
    }
    let posed = handles
        .iter()
        .map(|h| backend.read_vertices(*h))
        .collect::<mien_core::Result<Vec<_>>>()?;
    Ok((posed, sink.buffers().clone()))
}

fn bound(want: impl Iterator<Item = f32>) -> f64 {
    TOLERANCE * want.fold(1.0f64, |a, x| a.max(f64::from(x).abs()))
}

fn close(what: &str, i: usize, got: f32, want: f32, b: f64) -> Result<(), String> {
    if got.is_nan() || (f64::from(got) - f64::from(want)).abs() > b || want.is_nan() {
        return Err(format!(
            "{what}[{i}]: {got} vs reference {want} (bound {b:e})"
        ));
    }
    Ok(())
}

/// Compare a run with the reference: posed positions and normals, and every slot of the sink
/// (in-range slots within the bound, out-of-range slots still poisoned).
///
/// # Errors
/// A message naming the first bad element.
pub fn compare(
    inputs: &Inputs,
    got: &(Vec<PosedVertices>, SplatBuffers),
    want: &(Vec<PosedVertices>, SplatBuffers),
) -> Result<(), String> {
    for (r, (g, w)) in got.0.iter().zip(&want.0).enumerate() {
        let b = posed_bounds(&inputs.rigs[r], &inputs.controls[r])
            .map_err(|e| format!("rig {r}: {e}"))?;
        compare_posed_with(&format!("rig {r}"), g, w, Some(&b))?;
    }
    let (g, w) = (&got.1, &want.1);
    if g.len() != w.len() {
        return Err(format!("sink: {} slots, reference {}", g.len(), w.len()));
    }
    let mut owned = vec![false; w.len()];
    for l in &inputs.lifts {
        owned[l.range.offset as usize..l.range.end() as usize].fill(true);
    }
    let in_range = |i: &usize| owned[*i];
    let bc = bound((0..w.len()).filter(in_range).flat_map(|i| w.center[i]));
    let bv = bound(
        (0..w.len())
            .filter(in_range)
            .flat_map(|i| w.cov_a[i].into_iter().chain(w.cov_b[i])),
    );
    for (i, &own) in owned.iter().enumerate() {
        if !own {
            if g.color[i] != POISON || g.center[i].iter().any(|x| x.to_bits() != POISON) {
                return Err(format!("sink slot {i} belongs to no lift but was written"));
            }
            continue;
        }
        for k in 0..4 {
            close("sink center", 4 * i + k, g.center[i][k], w.center[i][k], bc)?;
            close("sink cov_a", 4 * i + k, g.cov_a[i][k], w.cov_a[i][k], bv)?;
            close("sink cov_b", 4 * i + k, g.cov_b[i][k], w.cov_b[i][k], bv)?;
            let (gb, wb) = (
                (g.color[i] >> (8 * k)) & 0xff,
                (w.color[i] >> (8 * k)) & 0xff,
            );
            if gb.abs_diff(wb) > 1 {
                return Err(format!(
                    "sink color[{i}] byte {k}: {gb} vs reference {wb} (colour {:08x} vs {:08x})",
                    g.color[i], w.color[i]
                ));
            }
        }
    }
    Ok(())
}

/// Tangent bound of a caller without the rig ([`compare_posed`]): [`TOLERANCE`] times an allowed
/// condition of 10 — a real mesh's blended tangent more than ~6° off its normal and joints that do
/// not cancel; random cases use [`posed_bounds`].
pub const TANGENT_TOLERANCE: f64 = 10.0 * TOLERANCE;

/// Per-vertex bounds of posed normals and tangents, derived from the rig and its controls
/// ([`posed_bounds`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PosedBounds {
    /// Per vertex the bound of each normal component `(V,)`.
    pub normals: Vec<f64>,
    /// Per vertex the bound of each tangent component `(V,)`, empty when the rig carries no
    /// tangents.
    pub tangents: Vec<f64>,
}

/// Per vertex the bounds of its posed normal and tangent, derived in f64 from the rig and its
/// controls (limited as every backend limits them). A unit vector made by normalising a sum
/// carries the sum's rounding (ε per term, relative to the sum of the terms' sizes) divided by the
/// sum's length, so each normalisation multiplies the error by its *condition* `κ = Σ|terms| /
/// |Σ terms|`:
///
/// - normal: `κ_n = (|n₀| + Σ|w|·|δn|) / |n₀ + Σ w·δn|` (the morph blend; 1 for a vertex no non-zero
///   weight touches) times `κ_s = Σ|wₖ|·|Nₖn| / |Σ wₖ·Nₖn|` (the joint blend);
/// - tangent: `κ_n` (its re-orthogonalisation uses the blended normal) times
///   `(|t₀| + Σ|w|·|δt|) / |t − n(n·t)|` (1 when untouched) times the joint blend's `κ_s` for `t`.
///
/// The bound is [`TOLERANCE`] `· max(1, κ)`; infinite where a denominator is zero (both sides then
/// take a documented fallback near a tie: not compared).
///
/// # Errors
/// Controls that do not fit the rig.
pub fn posed_bounds(rig: &RigData, controls: &RigControls) -> mien_core::Result<PosedBounds> {
    use glam::DVec3;
    let mut frame = mien_core::rig::FrameControls::new(rig);
    frame.set(controls)?;
    let w = &frame.weights;
    let f = |a: &[f32]| DVec3::new(a[0].into(), a[1].into(), a[2].into());
    let bound = |k: f64| {
        let b = TOLERANCE * k.max(1.0);
        if b.is_finite() { b } else { f64::INFINITY }
    };
    // κ of Σ wₖ·Mₖ·x over the vertex's joints, with `m` giving each joint's 3×3 map.
    let joints = |v: usize, m: &dyn Fn(usize) -> DVec3| {
        let (mut sum, mut abs) = (DVec3::ZERO, 0.0);
        for k in 0..4 {
            let wk = f64::from(rig.weights[v][k]);
            if wk != 0.0 {
                let y = wk * m(rig.joints[v][k] as usize);
                sum += y;
                abs += y.length();
            }
        }
        abs / sum.length()
    };
    let has_t = !rig.tangents.is_empty();
    let mut out = PosedBounds::default();
    for v in 0..rig.vertex_count() {
        let m = rig.morph_vertex(v, w);
        let row = rig.morph_offsets[v] as usize..rig.morph_offsets[v + 1] as usize;
        let mut n = f(&rig.normals[v]);
        let mut n_abs = n.length();
        let mut t = if has_t {
            f(&rig.tangents[v])
        } else {
            DVec3::ZERO
        };
        let mut t_abs = t.length();
        let mut touched = false;
        for e in row {
            let we = f64::from(w[rig.morph_target[e] as usize]);
            if we != 0.0 {
                touched = true;
                let dn = we * f(&rig.morph_normal[e]);
                n += dn;
                n_abs += dn.length();
                if has_t {
                    let dt = we * f(&rig.morph_tangent[e]);
                    t += dt;
                    t_abs += dt.length();
                }
            }
        }
        let kn = if touched { n_abs / n.length() } else { 1.0 };
        let nm = f(&m.normal);
        let ks_n = joints(v, &|j| frame.normal_palette[j].as_dmat3() * nm);
        out.normals.push(bound(kn * ks_n));
        if has_t {
            let kt = if touched {
                let un = n.normalize();
                kn * t_abs / (t - un * un.dot(t)).length()
            } else {
                1.0
            };
            let tm = f(&m.tangent);
            let ks_t = joints(v, &|j| frame.palette[j].as_dmat4().transform_vector3(tm));
            out.tangents.push(bound(kt * ks_t));
        }
    }
    Ok(out)
}

/// Compare posed vertices with the reference: positions and normals each within
/// [`TOLERANCE`] `· max(1, largest |reference|)` of that array, tangents within
/// [`TANGENT_TOLERANCE`], no NaN.
///
/// # Errors
/// A message naming `what`, the array and the first bad element.
pub fn compare_posed(what: &str, g: &PosedVertices, w: &PosedVertices) -> Result<(), String> {
    compare_posed_with(what, g, w, None)
}

/// [`compare_posed`] with per-vertex normal and tangent bounds (from [`posed_bounds`]) instead of
/// the array-wide normal bound and [`TANGENT_TOLERANCE`].
///
/// # Errors
/// As [`compare_posed`]; also when the tangent counts differ.
pub fn compare_posed_with(
    what: &str,
    g: &PosedVertices,
    w: &PosedVertices,
    bounds: Option<&PosedBounds>,
) -> Result<(), String> {
    if g.tangents.len() != w.tangents.len() {
        return Err(format!(
            "{what}: {} posed tangents, reference {}",
            g.tangents.len(),
            w.tangents.len()
        ));
    }
    for (i, (a, b)) in g.tangents.iter().zip(&w.tangents).enumerate() {
        let bt = bounds.map_or(TANGENT_TOLERANCE, |b| b.tangents[i]);
        if bt.is_infinite() {
            continue;
        }
        for k in 0..4 {
            close(&format!("{what} tangent"), 4 * i + k, a[k], b[k], bt)?;
        }
    }
    if g.positions.len() != w.positions.len() || g.normals.len() != w.normals.len() {
        return Err(format!(
            "{what}: {} posed vertices, reference {}",
            g.positions.len(),
            w.positions.len()
        ));
    }
    let bp = bound(w.positions.iter().flatten().copied());
    for (i, (a, b)) in g.positions.iter().zip(&w.positions).enumerate() {
        for k in 0..3 {
            close(&format!("{what} position"), 3 * i + k, a[k], b[k], bp)?;
        }
    }
    let bn = bound(w.normals.iter().flatten().copied());
    for (i, (a, b)) in g.normals.iter().zip(&w.normals).enumerate() {
        let bn = bounds.map_or(bn, |b| b.normals[i]);
        if bn.is_infinite() {
            continue;
        }
        for k in 0..3 {
            close(&format!("{what} normal"), 3 * i + k, a[k], b[k], bn)?;
        }
    }
    Ok(())
}

/// Run `case` on `harness` and on the CPU and compare.
///
/// # Errors
/// A message naming the first bad element, or the backend's error.
pub fn check(harness: &mut impl Harness, case: &Case) -> Result<(), String> {
    let inputs = Inputs::new(case);
    let want = reference(&inputs).map_err(|e| format!("reference: {e}"))?;
    let got = harness.run(&inputs).map_err(|e| format!("backend: {e}"))?;
    compare(&inputs, &got, &want)
}
