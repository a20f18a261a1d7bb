//! Baking real heads into `.aosrig` packs (docs/formats/aosrig.md): a folder of blendshape OBJs
//! (a neutral plus one full mesh per shape, as Maya, Blender and ICT-FaceKit export them) or a
//! glTF/GLB mesh with morph targets becomes a [`GnmPack`] whose basis holds the shapes' deltas.
//!
//! | file | stage |
//! |---|---|
//! | `obj.rs` | strict, bounded OBJ reader |
//! | `folder.rs` | OBJ folder → neutral, topology, shapes (deltas = shape − neutral) |
//! | `from_gltf.rs` | glTF mesh → neutral, topology, skin, shapes (the morph path's space) |
//! | `regions.rs` | regions and coefficient order from the names, the ARKit table |
//! | `basis.rs` | per-shape scale, fp16 quantisation and its error |
//! | `eyes.rs` | eye centres (sphere fit) and eye weights |
//! | `assemble.rs` | the pack, its provenance and the [`BakeReport`] |
//!
//! **Units.** The pack stores metres. [`Units::Auto`] on an OBJ folder reads the largest side of
//! the neutral's bounding box: below 5 the file is metres, 5 to 100 centimetres (a head is about
//! 0.25 m, 25 cm), above 100 the bake is refused and asks for `--units m|cm|mm` (a head in
//! millimetres, about 250, and a body in centimetres, about 170, cannot be told apart). glTF is metres by its
//! specification (§3.1), so `Auto` means metres there. An explicit unit always wins, and the report
//! and the pack's `source` say which rule applied.
//!
//! Packing the same input twice gives the same bytes on any machine: the provenance holds file
//! names (never absolute paths), counts and the unit rule, no time stamps.

mod assemble;
pub mod basis;
pub mod eyes;
mod folder;
mod from_gltf;
pub mod obj;
pub mod regions;

use std::path::Path;

use serde::Serialize;

pub use basis::{ShapeFigures, component_bound};
pub use eyes::{EyeFigures, EyeSource};

use super::pack::GnmPack;
use crate::error::{Error, Result};

/// The unit of the source positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Units {
    /// OBJ: from the neutral's extent (module docs); glTF: metres.
    #[default]
    Auto,
    /// Metres.
    Metres,
    /// Centimetres (× 0.01).
    Centimetres,
    /// Millimetres (× 0.001).
    Millimetres,
}

/// Below this largest extent (file units) [`Units::Auto`] reads metres.
pub const AUTO_METRES_BELOW: f64 = 5.0;
/// Up to this largest extent (file units) [`Units::Auto`] reads centimetres; above, it refuses:
/// a head in millimetres (about 250) and a body in centimetres (about 170) cannot be told apart.
pub const AUTO_CENTIMETRES_UP_TO: f64 = 100.0;

/// How the unit was chosen.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnitFigures {
    /// `m`, `cm` or `mm`.
    pub input: String,
    /// Why (`detected: largest extent 33.81`, `--units cm`, `glTF is metres`).
    pub rule: String,
    /// Factor to metres (1, 0.01 or 0.001).
    pub to_metres: f64,
}

impl Units {
    /// The unit of a source whose neutral's largest bounding-box side is `extent` (file units);
    /// `gltf` sources are metres under `Auto`. Rule (module docs): an explicit unit wins; `Auto`
    /// reads metres below [`AUTO_METRES_BELOW`], centimetres up to [`AUTO_CENTIMETRES_UP_TO`].
    ///
    /// # Errors
    /// [`Error::Invalid`] when `Auto` meets an extent above [`AUTO_CENTIMETRES_UP_TO`] or a
    /// non-finite one.
    pub fn resolve(self, extent: f64, gltf: bool) -> Result<UnitFigures> {
        let fig = |input: &str, rule: String, to_metres| {
            Ok(UnitFigures {
                input: input.into(),
                rule,
                to_metres,
            })
        };
        match self {
            Units::Metres => fig("m", "--units m".into(), 1.0),
            Units::Centimetres => fig("cm", "--units cm".into(), 0.01),
            Units::Millimetres => fig("mm", "--units mm".into(), 0.001),
            Units::Auto if gltf => fig("m", "glTF is metres (glTF 2.0 §3.1)".into(), 1.0),
            Units::Auto if extent.is_finite() && extent < AUTO_METRES_BELOW => fig(
                "m",
                format!("detected: largest extent {extent} < {AUTO_METRES_BELOW}"),
                1.0,
            ),
            Units::Auto if extent.is_finite() && extent <= AUTO_CENTIMETRES_UP_TO => fig(
                "cm",
                format!(
                    "detected: largest extent {extent} in [{AUTO_METRES_BELOW}, {AUTO_CENTIMETRES_UP_TO}]"
                ),
                0.01,
            ),
            Units::Auto => Err(Error::Invalid {
                what: "units".into(),
                reason: format!(
                    "the neutral's largest extent is {extent}: not a head in metres (< {AUTO_METRES_BELOW}) or centimetres (≤ {AUTO_CENTIMETRES_UP_TO}); pass --units m, cm or mm"
                ),
            }),
        }
    }
}

/// What a bake is told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BakeOptions {
    /// The unit of the source.
    pub units: Units,
    /// Where the eyeballs are.
    pub eyes: EyeSource,
    /// OBJ folder: the neutral's file name (default: the one `.obj` whose name contains
    /// `neutral`, any case).
    pub neutral: Option<String>,
    /// glTF: the mesh, by name or index (default: the mesh with the most morph targets, the lower
    /// index on a tie).
    pub mesh: Option<String>,
}

/// One region of the baked layout.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionFigures {
    /// Region name.
    pub name: String,
    /// Its shapes, in coefficient order.
    pub shapes: Vec<String>,
}

/// One coefficient's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeRow {
    /// Source name.
    pub name: String,
    /// Region.
    pub region: String,
    /// Scale, largest delta, fp16 error.
    #[serde(flatten)]
    pub figures: ShapeFigures,
}

/// Everything a bake did, for the summary and `--report`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BakeReport {
    /// `obj-folder` or `gltf`.
    pub kind: String,
    /// The input's file or folder name.
    pub input: String,
    /// V.
    pub vertices: usize,
    /// Triangles (quads and larger polygons triangulated).
    pub triangles: usize,
    /// Quads kept as quads.
    pub quads: usize,
    /// E.
    pub coefficients: usize,
    /// The layout's regions with their shapes.
    pub regions: Vec<RegionFigures>,
    /// The unit rule.
    pub units: UnitFigures,
    /// ARKit channels the baked table drives, with their shapes.
    pub arkit_mapped: Vec<(String, Vec<String>)>,
    /// ARKit channels no shape answers.
    pub arkit_missing: Vec<String>,
    /// Shapes no ARKit channel drives.
    pub unmapped: Vec<String>,
    /// Shapes in the `other` region, with the reason.
    pub fallback: Vec<(String, String)>,
    /// Shapes whose deltas are all zero (kept, scale 0).
    pub empty: Vec<String>,
    /// The longest delta of any shape, metres, and its shape.
    pub max_delta: (f64, String),
    /// The largest fp16 reconstruction error |h·s − δ| over every component, metres (measured
    /// against the f64 deltas), and its shape.
    pub fp16_max_error: (f64, String),
    /// The largest error divided by its documented bound ([`component_bound`]); ≤ 1.
    pub fp16_error_over_bound: f64,
    /// Per coefficient, in pack order.
    pub shapes: Vec<ShapeRow>,
    /// Eye centres and weights.
    pub eyes: EyeFigures,
    /// Texture coordinates: stored, or why not.
    pub uv: String,
    /// The skin.
    pub skin: String,
    /// Anything else changed or skipped.
    pub notes: Vec<String>,
    /// Bytes of the pack.
    pub bytes: u64,
}

/// A baked pack: the validated pack, its bytes and the report.
#[derive(Clone, Debug)]
pub struct Baked {
    /// The pack.
    pub pack: GnmPack,
    /// `pack.to_bytes()`.
    pub bytes: Vec<u8>,
    /// What was done.
    pub report: BakeReport,
}

impl Baked {
    /// Write the pack to `path` atomically (temp file, fsync, rename).
    ///
    /// # Errors
    /// [`Error::Io`] naming `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::io::atomic::write_atomic_bytes(path, &self.bytes)
    }
}

/// Progress of a long read: `(done, total, what)` (files of an OBJ folder).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, &str);

/// Bake a folder of blendshape OBJs (module docs; `folder.rs`).
///
/// # Errors
/// [`Error::Io`] for an unreadable folder or file; [`Error::Invalid`] for a folder with no `.obj`,
/// no or several neutral candidates, undetectable units, a bad eyeball range or duplicate shape
/// names; [`Error::Format`] naming the file, line and field for malformed OBJ text, a shape whose
/// vertex count differs from the neutral's, or a face index out of range; [`Error::Limit`] for
/// sizes over the caps.
pub fn bake_obj_folder(dir: &Path, options: &BakeOptions, progress: Progress<'_>) -> Result<Baked> {
    folder::bake(dir, options, progress)
}

/// Bake one mesh of a glTF/GLB (`from_gltf.rs`): neutral and deltas in the space the morph path
/// poses in, one coefficient per morph target, the glTF skin if the mesh's node has one.
///
/// # Errors
/// As the glTF importer; [`Error::Invalid`] for a mesh that is not found, has no morph targets or is
/// not drawn by any node of the scene, for duplicate target names, or a singular inverse bind
/// matrix.
pub fn bake_gltf(path: &Path, options: &BakeOptions) -> Result<Baked> {
    from_gltf::bake(path, options)
}

/// Bake `input`: a folder → [`bake_obj_folder`], a file → [`bake_gltf`].
///
/// # Errors
/// As those; [`Error::Io`] when `input` cannot be inspected.
pub fn bake(input: &Path, options: &BakeOptions, progress: Progress<'_>) -> Result<Baked> {
    let meta = std::fs::metadata(input).map_err(|e| Error::io(input, e))?;
    if meta.is_dir() {
        bake_obj_folder(input, options, progress)
    } else {
        bake_gltf(input, options)
    }
}

/// The last path component as text (what provenance and reports name).
pub(crate) fn file_label(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
