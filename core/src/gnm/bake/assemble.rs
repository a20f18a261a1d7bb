//! From what a reader collected to a validated pack: the coefficient plan, the quantised basis, the
//! header (names, ARKit table, provenance) and the report. Shared by the OBJ-folder and glTF bakes.

use serde_json::{Value, json};

use super::basis::BasisBuilder;
use super::regions::{REGIONS, plan, same_shape};
use super::{BakeReport, Baked, EyeFigures, RegionFigures, ShapeRow, UnitFigures};
use crate::error::{Error, Result};
use crate::gnm::pack::{GnmPack, PackHeader, PackJoint, VERSION};

/// Row-major identity.
pub(crate) const IDENTITY: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// The pack's skeleton and skin.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SkinData {
    /// Joints, parent first.
    pub joints: Vec<PackJoint>,
    /// Rest world matrices `(J,16)`, row-major, metres.
    pub rest_world: Vec<[f32; 16]>,
    /// `(V,4)` joint indices.
    pub index: Vec<[u16; 4]>,
    /// `(V,4)` weights.
    pub weight: Vec<[f32; 4]>,
    /// For the report.
    pub label: String,
}

impl SkinData {
    /// One root joint `root` with the identity rest matrix; every vertex weight 1 on it.
    pub fn single_root(v: usize) -> Self {
        SkinData {
            joints: vec![PackJoint {
                name: "root".into(),
                parent: -1,
            }],
            rest_world: vec![IDENTITY],
            index: vec![[0; 4]; v],
            weight: vec![[1.0, 0.0, 0.0, 0.0]; v],
            label: "single root joint, identity".into(),
        }
    }
}

/// What a reader hands over, positions already in metres.
#[derive(Clone, Debug)]
pub(crate) struct Collected {
    pub kind: &'static str,
    pub input: String,
    pub neutral: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
    pub quads: Option<Vec<[u32; 4]>>,
    pub uv: Option<Vec<[f32; 2]>>,
    pub uv_note: String,
    /// Shape names in source order.
    pub names: Vec<String>,
    pub skin: SkinData,
    pub eye_positions: [[f32; 3]; 2],
    pub eye_weights: Vec<f32>,
    pub eyes: EyeFigures,
    pub units: UnitFigures,
    /// Reader-specific provenance (file names, mesh), written first under `input`.
    pub provenance: Value,
    pub notes: Vec<String>,
}

/// Assemble the pack. `deltas(source_index, out)` fills `out` with shape `source_index`'s deltas
/// `(V,3)` in metres; it is called once per shape, in coefficient order.
pub(crate) fn assemble(
    c: Collected,
    deltas: &mut dyn FnMut(usize, &mut Vec<[f64; 3]>) -> Result<()>,
) -> Result<Baked> {
    let v = c.neutral.len();
    if c.names.is_empty() {
        return Err(Error::Invalid {
            what: format!("bake of {}", c.input),
            reason: "no shapes to bake (a pack needs at least one expression coefficient)".into(),
        });
    }
    if let Some((a, b, what)) = same_shape(&c.names) {
        let reason = if a == b {
            format!("two shapes are named `{a}`; names must be unique")
        } else {
            format!("`{a}` and `{b}` are the same shape ({what}); names must be unique")
        };
        return Err(Error::Invalid {
            what: format!("bake of {}", c.input),
            reason,
        });
    }
    let plan = plan(&c.names);
    let e = plan.order.len();
    let mut basis = BasisBuilder::new(v, e)?;
    let slices = plan.layout.slices();
    let mut rows = Vec::with_capacity(e);
    let mut buf = Vec::with_capacity(v);
    for (k, &src) in plan.order.iter().enumerate() {
        buf.clear();
        deltas(src, &mut buf)?;
        let figures = basis.put(k, &buf)?;
        let region = slices
            .iter()
            .find(|(_, r)| r.contains(&k))
            .map_or_else(String::new, |(n, _)| n.clone());
        rows.push(ShapeRow {
            name: plan.names[k].clone(),
            region,
            figures,
        });
    }
    let (words, scales) = basis.finish();
    let neutral: Vec<[f32; 3]> = c.neutral.iter().map(|p| p.map(|x| x as f32)).collect();

    let max_by = |f: &dyn Fn(&ShapeRow) -> f64| {
        rows.iter()
            .map(|r| (f(r), r.name.clone()))
            .fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a })
    };
    let max_delta = max_by(&|r| r.figures.max_delta);
    let fp16_max_error = max_by(&|r| r.figures.max_error);
    let over = rows
        .iter()
        .map(|r| r.figures.max_error_over_bound)
        .fold(0.0, f64::max);
    let empty: Vec<String> = rows
        .iter()
        .filter(|r| r.figures.scale == 0.0)
        .map(|r| r.name.clone())
        .collect();

    let source = json!({
        "tool": format!("mien {} pack", env!("CARGO_PKG_VERSION")),
        "input": c.provenance,
        "vertexCount": v,
        "shapeCount": e,
        "units": { "input": c.units.input, "rule": c.units.rule, "toMetres": c.units.to_metres },
        "eyes": { "source": c.eyes.source, "method": c.eyes.method },
        "skin": c.skin.label,
        "basis": "per-coefficient scale = largest |delta component|; basis = delta / scale rounded to the nearest fp16",
    });
    let header = PackHeader {
        version: VERSION,
        model: "gnm".into(),
        units: "m".into(),
        vertex_count: v as u64,
        coeff_count: e as u64,
        head_ext: plan.layout.clone(),
        max_influence: 4,
        joints: c.skin.joints,
        eye_joints: None,
        bind_transform: IDENTITY,
        names: plan.names.clone(),
        arkit: Some(plan.table.clone()),
        source,
        buffers: Vec::new(),
    };
    let pack = GnmPack {
        header,
        neutral,
        basis: words,
        basis_scale: scales,
        eye_positions: c.eye_positions,
        eye_weights: c.eye_weights,
        faces: c.triangles,
        quads: c.quads,
        uv: c.uv,
        seam: None,
        skin_index: c.skin.index,
        skin_weight: c.skin.weight,
        rest_world: c.skin.rest_world,
    };
    let bytes = pack.to_bytes()?;
    // What a reader of the file gets back (the skin weights as f16, buffers filled in).
    let pack = GnmPack::parse(&bytes, &c.input)?;

    let regions = REGIONS
        .iter()
        .filter_map(|r| {
            let shapes: Vec<String> = rows
                .iter()
                .filter(|x| x.region == *r)
                .map(|x| x.name.clone())
                .collect();
            (!shapes.is_empty()).then(|| RegionFigures {
                name: (*r).to_owned(),
                shapes,
            })
        })
        .collect();
    let arkit_mapped = plan
        .table
        .iter()
        .map(|(ch, terms)| {
            let shapes = terms
                .iter()
                .filter_map(|t| {
                    slices
                        .iter()
                        .find(|(n, _)| *n == t.region)
                        .map(|(_, r)| plan.names[r.start + t.index].clone())
                })
                .collect();
            (ch.clone(), shapes)
        })
        .collect();
    let report = BakeReport {
        kind: c.kind.into(),
        input: c.input,
        vertices: v,
        triangles: pack.faces.len(),
        quads: pack.quads.as_ref().map_or(0, Vec::len),
        coefficients: e,
        regions,
        units: c.units,
        arkit_mapped,
        arkit_missing: plan.missing,
        unmapped: plan.unmapped,
        fallback: plan.fallback,
        empty,
        max_delta,
        fp16_max_error,
        fp16_error_over_bound: over,
        shapes: rows,
        eyes: c.eyes,
        uv: c.uv_note,
        skin: c.skin.label,
        notes: c.notes,
        bytes: bytes.len() as u64,
    };
    Ok(Baked {
        pack,
        bytes,
        report,
    })
}
