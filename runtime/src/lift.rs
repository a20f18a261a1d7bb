//! The lift a runtime attaches (seed 000): the options a caller picks (`LiftKind`, `LiftOptions`),
//! what the rest pose gave it (`LiftInfo`), and the bound lifts' setup on the rest pose (the
//! surface and texel lifts built, a bound capture checked against the character).

use std::sync::Arc;

use crate::asset::Asset;
use crate::engine::{self, Engine};
use crate::error::{Context, Error, Result};
use crate::runtime::{DEFAULT_SIGMA_EDGES, NO_EDGE_M, SIGMA_RANGE_M, median_edge};
use mien_core::lift::{DebugLiftParams, DebugShading};

/// Where a splat's colour comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shading {
    /// Vertex colours when the character has them, else normals.
    #[default]
    Auto,
    /// Vertex colours (white where there are none).
    Tint,
    /// The posed normal's direction.
    Normal,
    /// One flat colour.
    Flat,
}

/// Which lift turns posed vertices into gaussians (seed 000). The default is the surface lift
/// with its default options, as `mien animate`'s.
#[derive(Clone, Debug, PartialEq)]
pub enum LiftKind {
    /// One isotropic gaussian per posed vertex, σ and shading from [`LiftOptions`].
    Debug,
    /// Gaussians spread over every triangle and bound to it, coloured by the character's
    /// base-colour textures ([`mien_core::lift::surface`]).
    Surface(mien_core::lift::SurfaceOptions),
    /// One gaussian per texel of a UV raster of the mesh, bound to the texel's triangle
    /// ([`mien_core::lift::texel`]); a linear head has no UVs and is refused.
    Texel(mien_core::lift::TexelOptions),
    /// A captured splat cloud bound to this character's mesh (`mien bind`,
    /// [`mien_core::lift::bind`]): the capture animates with the morphs and the skin. Refused when
    /// the character's topology is not the one bound.
    Capture(Arc<mien_core::io::bound_ply::BoundCapture>),
    /// A character bundle's branches ([`crate::bundle`]): each branch's texel or surface lift over
    /// its own mesh, in its own run of slots, coloured by its decoders per instance
    /// ([`crate::appearance`]). From [`crate::LoadedCharacter::lift_options`].
    Bundle(Arc<crate::bundle::Bundle>),
}

impl Default for LiftKind {
    /// The surface lift ([`mien_core::lift::SurfaceOptions::default`]: about 100,000 textured
    /// gaussians bound to the triangles), the default everywhere: library, CLI, examples.
    fn default() -> Self {
        LiftKind::Surface(mien_core::lift::SurfaceOptions::default())
    }
}

impl LiftKind {
    /// `debug`, `surface`, `texel`, `capture` or `bundle`.
    pub fn name(&self) -> &'static str {
        match self {
            LiftKind::Debug => "debug",
            LiftKind::Surface(_) => "surface",
            LiftKind::Texel(_) => "texel",
            LiftKind::Capture(_) => "capture",
            LiftKind::Bundle(_) => "bundle",
        }
    }
}

/// The lift a runtime attaches: the surface lift ([`LiftKind::Surface`], the default), the texel
/// lift, a bound capture, or seed 000's debug vertex lift (one isotropic gaussian per posed
/// vertex, [`LiftKind::Debug`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiftOptions {
    /// Which lift. `sigma` and `shading` apply to the debug lift only.
    pub kind: LiftKind,
    /// Gaussian standard deviation, metres, within [`crate::runtime::SIGMA_RANGE_M`]; `None`:
    /// [`crate::runtime::DEFAULT_SIGMA_EDGES`] × the median triangle edge of the rest pose.
    pub sigma: Option<f32>,
    /// Colour source.
    pub shading: Shading,
}

/// What the rest pose gave the lift.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftInfo {
    /// The lift attached.
    pub kind: LiftKind,
    /// Slots (gaussians) per instance: V for the debug lift; the cloth's and the hair's included.
    pub slots: u32,
    /// Of those, the cloth's gaussians (bound to its simulated triangles; 0 without cloth or
    /// with the debug lift).
    pub cloth_slots: u32,
    /// Of those, the hair strands' gaussians (strands × segments; 0 without hair).
    pub hair_slots: u32,
    /// What a surface lift built (gaussians, triangles, textures); `None` for the debug lift.
    pub bound: Option<mien_core::lift::BoundReport>,
    /// The bound gaussians every instance poses (surface, texel, capture lifts): their triangles
    /// and kernel records, for a caller that exports or checks the embedding.
    pub setup: Option<Arc<mien_core::lift::BoundSetup>>,
    /// σ used, metres.
    pub sigma: f32,
    /// σ was derived from the rest pose (no [`LiftOptions::sigma`]).
    pub sigma_derived: bool,
    /// The median rest-pose triangle edge, metres (`None`: no edge of non-zero length).
    pub median_edge: Option<f32>,
    /// The shading used ([`Shading::Auto`] resolved).
    pub shading: DebugShading,
    /// A bundle's branches: each one's name and slot range within an instance's slots (empty for
    /// other lifts).
    pub branches: Vec<(String, mien_core::sink::SlotRange)>,
    /// A bundle's gaussians as built on the rest pose `(G,)`: what its decoders' outputs modify.
    pub(crate) base: Option<Arc<Vec<mien_core::lift::BoundGaussian>>>,
}

/// The surface or texel lift of `asset` shaped on its rest pose `rest_pos` `(V,3)` (world,
/// metres), with its rest normals read from the engine; colours from the character's materials (a
/// rig) or its rest normals (a linear head).
pub(crate) fn surface_setup(
    asset: &Asset,
    engine: &mut dyn Engine,
    rest_pos: &[[f32; 3]],
    kind: &LiftKind,
) -> Result<(
    Vec<mien_core::lift::BoundGaussian>,
    Vec<[u32; 3]>,
    mien_core::lift::BoundReport,
)> {
    use mien_core::lift::{SurfaceColors, face_triangles, surface_lift_weighted, texel_lift};
    let tris = asset.triangles();
    if tris.is_empty() {
        return Err(Error::invalid(
            asset.source(),
            format!(
                "has no triangles (points or lines only): the {} lift binds gaussians to triangles; use the debug lift",
                kind.name()
            ),
        ));
    }
    if let LiftKind::Capture(c) = kind {
        if asset.rig().is_none() {
            return Err(Error::invalid(
                asset.source(),
                "a bound capture plays on the glTF/VRM character it was bound to; a linear head pack cannot play one",
            ));
        }
        // The runtime appended the joint anchors a capture needs ([`crate::Runtime::new`]): 3
        // vertices and 1 triangle each, after the character's own.
        let (own_v, own_t) = (
            asset.vertex_count().saturating_sub(3 * c.anchors),
            tris.len().saturating_sub(c.anchors as usize),
        );
        c.check_topology(asset.source(), own_v, &tris[..own_t])?;
        let mut report = c.lift.report.clone();
        report.triangles = own_t as u64;
        return Ok((c.lift.gaussians.clone(), tris.to_vec(), report));
    }
    let mut rest = engine.read_posed(0)?;
    if rest.normals.iter().all(|n| *n == [0.0; 3]) {
        // A linear head poses no normals: its rest shape gives them (for the normal colours and
        // the fallback frames).
        rest.normals = mien_core::lift::color::vertex_normals(rest_pos, tris);
    }
    if let LiftKind::Bundle(b) = kind {
        let (g, t, r, _) = crate::bundle::lift::bundle_lift(b, rest_pos, &rest.normals)?;
        return Ok((g, t, r));
    }
    let colors = match asset.rig() {
        Some(rig) => SurfaceColors::from_character(asset.character(), rig)
            .context("colouring the surface lift")?,
        None => SurfaceColors::untextured(tris, &rest.normals, None),
    };
    let lift = match (kind, asset.rig()) {
        (LiftKind::Texel(o), Some(rig)) => {
            texel_lift(rest_pos, &rest.normals, tris, &rig.uvs, &colors, o)
        }
        (LiftKind::Texel(_), None) => {
            return Err(Error::invalid(
                asset.source(),
                "the texel lift needs UVs (TEXCOORD_0); a linear head has none: use the surface lift",
            ));
        }
        (LiftKind::Surface(o), rig) => {
            // The head (what the head joint and the joints below it move) gets `face_density`
            // times the density.
            let density: Vec<f32> = match rig {
                Some(r) => face_triangles(tris, &r.dominant_palette(), &head_entries(asset, r))
                    .into_iter()
                    .map(|f| if f { o.face_density } else { 1.0 })
                    .collect(),
                None => Vec::new(),
            };
            surface_lift_weighted(rest_pos, &rest.normals, tris, &colors, &density, o)
        }
        (LiftKind::Capture(_) | LiftKind::Bundle(_), _) => unreachable!("bound before colouring"),
        (LiftKind::Debug, _) => unreachable!("the debug lift has no setup"),
    }
    .with_context(|| {
        let what = match kind {
            LiftKind::Texel(o) => format!(" on a {0}×{0} raster", o.resolution),
            LiftKind::Surface(o) => format!(" of about {} gaussians", o.target),
            _ => String::new(),
        };
        format!("{}: building the {} lift{what}", asset.source(), kind.name())
    })?;
    Ok((lift.gaussians, lift.triangles, lift.report))
}

/// Split a bound lift's gaussians between the body and the cloth (`first .. first + count`, the
/// cloth's vertices in the rig): the body keeps the gaussians on other triangles (the full
/// triangle list, so their indices stand); the cloth's are re-indexed onto its own triangles over
/// cloth-local vertices, posed on the simulated vertices.
fn split_cloth(
    gaussians: Vec<mien_core::lift::BoundGaussian>,
    triangles: Vec<[u32; 3]>,
    first: u32,
    count: u32,
) -> Result<(mien_core::lift::BoundSetup, mien_core::lift::BoundSetup)> {
    let on_cloth = |t: &[u32; 3]| (first..first + count).contains(&t[0]);
    let mut local = vec![u32::MAX; triangles.len()];
    let mut cloth_tris = Vec::new();
    for (i, t) in triangles.iter().enumerate() {
        if on_cloth(t) {
            local[i] = cloth_tris.len() as u32;
            cloth_tris.push(t.map(|v| v - first));
        }
    }
    let (mut body, mut cloth) = (Vec::new(), Vec::new());
    for g in gaussians {
        match local.get(g.triangle as usize) {
            Some(&l) if l != u32::MAX => {
                cloth.push(mien_core::lift::BoundGaussian { triangle: l, ..g })
            }
            _ => body.push(g),
        }
    }
    Ok((
        mien_core::lift::BoundSetup::new(&body, triangles)?,
        mien_core::lift::BoundSetup::new(&cloth, cloth_tris)?,
    ))
}

/// The palette entries `(P,)` of the head: the joint (or rigid node) [`HeadJoints::find`] names
/// the head by its standard names, and every node below it. All false when no head is found.
///
/// [`HeadJoints::find`]: mien_core::anim::head::HeadJoints::find
fn head_entries(asset: &Asset, rig: &mien_core::rig::RigData) -> Vec<bool> {
    use mien_core::anim::head::{HeadJointNames, HeadJoints};
    use mien_core::rig::PaletteEntry;
    let ch = asset.character();
    let names: Vec<Option<&str>> = ch.nodes.iter().map(|n| n.name.as_deref()).collect();
    let Some(head) = HeadJoints::find(&names, &HeadJointNames::default())
        .ok()
        .and_then(|j| j.head)
    else {
        return vec![false; rig.palette.len()];
    };
    // Parent-first order: a node is below the head when its parent is (or it is the head).
    let mut below = vec![false; ch.nodes.len()];
    for &id in ch.hierarchy.order() {
        let i = id.index();
        below[i] = i == head || ch.nodes[i].parent.is_some_and(|p| below[p.index()]);
    }
    rig.palette
        .iter()
        .map(|e| {
            let node = match e {
                PaletteEntry::Joint { node, .. } | PaletteEntry::Rigid { node } => *node,
            };
            below.get(node.index()).copied().unwrap_or(false)
        })
        .collect()
}

/// Attach the lift `l` to a runtime's engine on its rest pose `rest_pos` `(V,3)` (its bounds
/// `bounds`, `n` instances): the debug lift's σ (given, or [`DEFAULT_SIGMA_EDGES`] × the median
/// edge) and shading, or a bound lift's setup ([`surface_setup`]).
///
/// # Errors
/// A σ outside [`SIGMA_RANGE_M`] (or none derivable); the bound lifts' errors; a sink that
/// cannot hold `n` instances' slots; the engine's refusals.
pub(crate) fn attach(
    asset: &Asset,
    engine: &mut dyn Engine,
    rest_pos: &[[f32; 3]],
    bounds: [[f32; 3]; 2],
    l: &LiftOptions,
    n: u32,
    host_device: Option<(&str, u64)>,
) -> Result<LiftInfo> {
    let edge = median_edge(asset.triangles(), rest_pos);
    let sigma = l
        .sigma
        .unwrap_or(DEFAULT_SIGMA_EDGES * edge.unwrap_or(NO_EDGE_M));
    let (lo, hi) = SIGMA_RANGE_M;
    if !(sigma.is_finite() && (lo..=hi).contains(&sigma)) {
        return Err(Error::invalid(
            asset.source(),
            match l.sigma {
                Some(s) => format!(
                    "gaussian size {} m: must be from {} to {} m",
                    crate::text::num(s),
                    crate::text::num(lo),
                    crate::text::num(hi)
                ),
                None => {
                    "cannot derive a gaussian size from degenerate geometry; pass --sigma".into()
                }
            },
        ));
    }
    let v = asset.vertex_count();
    let mut params = DebugLiftParams::new(engine::slot_range(0, v), v);
    params.sigma = sigma;
    params.shading = match l.shading {
        Shading::Auto if asset.has_colors() => DebugShading::Tint,
        Shading::Auto | Shading::Normal => DebugShading::Normal,
        Shading::Tint => DebugShading::Tint,
        Shading::Flat => DebugShading::Flat,
    };
    params.centroid = [0, 1, 2].map(|k| 0.5 * (bounds[0][k] + bounds[1][k]));
    let dynamics = asset.dynamics();
    let mut extras = engine::Extras {
        cloth: None,
        hair: dynamics.hair.as_ref().map(|h| Arc::clone(&h.groom)),
    };
    let mut branches = Vec::new();
    let mut base = None;
    let (spec, bound, setup) = match &l.kind {
        LiftKind::Debug => (engine::LiftSpec::Debug(params), None, None),
        LiftKind::Bundle(b) => {
            if dynamics.cloth.is_some() {
                return Err(Error::invalid(
                    asset.source(),
                    "a bundle's branches and a simulated cloth cannot share one lift yet",
                ));
            }
            let (gaussians, triangles, report) = surface_setup(asset, engine, rest_pos, &l.kind)?;
            let ranges = crate::bundle::lift::ranges(b, &gaussians);
            branches = b
                .branches
                .iter()
                .map(|x| x.name.clone())
                .zip(ranges)
                .collect();
            let setup = Arc::new(mien_core::lift::BoundSetup::new(&gaussians, triangles)?);
            base = Some(Arc::new(gaussians));
            let spec = if b.has_decoders() {
                engine::LiftSpec::BoundPerInstance(Arc::clone(&setup))
            } else {
                engine::LiftSpec::Bound(Arc::clone(&setup))
            };
            (spec, Some(report), Some(setup))
        }
        LiftKind::Surface(_) | LiftKind::Texel(_) | LiftKind::Capture(_) => {
            let (mut gaussians, triangles, report) =
                surface_setup(asset, engine, rest_pos, &l.kind)?;
            // Parts the character file hides: no gaussians on their triangles (the triangle
            // list stays whole, so the indices stand).
            if let Some(h) = asset.hidden() {
                let hid = |v: u32| h.vertices.get(v as usize).copied().unwrap_or(false);
                gaussians.retain(|g| {
                    !triangles
                        .get(g.triangle as usize)
                        .is_some_and(|t| t.iter().all(|&v| hid(v)))
                });
            }
            let setup = match &dynamics.cloth {
                Some(c) => {
                    let (body, cloth) = split_cloth(gaussians, triangles, c.first, c.count)?;
                    extras.cloth = Some((Arc::new(cloth), c.count));
                    body
                }
                None => mien_core::lift::BoundSetup::new(&gaussians, triangles)?,
            };
            let setup = Arc::new(setup);
            (
                engine::LiftSpec::Bound(Arc::clone(&setup)),
                Some(report),
                Some(setup),
            )
        }
    };
    let (cloth_slots, hair_slots) = extras.slots();
    let slots = spec.slots(v) + cloth_slots + hair_slots;
    engine::sink_slots(n, slots)?;
    // A sink in host memory (the CPU, a software adapter): its N × slots × 52 bytes plus the
    // posed vertices it lives beside (`rig` bytes: zeroed pages the system may not have committed
    // yet, so `MemAvailable` does not show them) checked against the memory available before it
    // is allocated.
    if let Some((device, rig)) = host_device {
        let need = u64::from(n) * u64::from(slots) * 52 + rig;
        crate::memory::check_memory(
            n,
            slots,
            "splat slots (with their posed vertices)",
            need,
            crate::memory::available_memory(),
            device,
        )?;
    }
    engine.attach_lift(spec, extras)?;
    Ok(LiftInfo {
        kind: l.kind.clone(),
        slots,
        cloth_slots,
        hair_slots,
        bound,
        setup,
        sigma,
        sigma_derived: l.sigma.is_none(),
        median_edge: edge,
        shading: params.shading,
        branches,
        base,
    })
}
