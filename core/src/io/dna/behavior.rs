//! The behaviour layer (`bhvr`): the GUI → raw conditional table, the PSD (pose space
//! deformation) matrix, the joint groups, the blend-shape channel mapping and the animated maps.
//!
//! Source: OpenRigLogic `src/dna/DNA.h` (`RawBehavior::serialize` for 2.1, where each part sits at
//! its own offset of the section table, and for 2.2+, where the parts follow each other;
//! `RawControls`, `RawConditionalTable`, `RawPSDMatrix`, `RawJoints`, `RawJointGroup`,
//! `RawBlendShapeChannels`, `RawAnimatedMaps`). What the numbers mean when evaluated is RigLogic's
//! (see the ICT rig's README, "Rules a reimplementation must reproduce").

use super::stream::Cursor;
use crate::error::Result;

/// Joint attributes per joint in the joint matrix: `tx ty tz rx ry rz sx sy sz`.
pub const JOINT_ATTRIBUTES: u16 = 9;

/// A piecewise-linear conditional table: row `k` adds `slope[k]·x + cut[k]` to output
/// `output_indices[k]` when input `x = in[input_indices[k]]` lies in `[from[k], to[k]]`.
///
/// The six columns are kept as written; [`super::Dna::validate`] checks that they have one length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConditionalTable {
    /// Input of each row.
    pub input_indices: Vec<u16>,
    /// Output of each row.
    pub output_indices: Vec<u16>,
    /// Lower bound of each row's input interval.
    pub from_values: Vec<f32>,
    /// Upper bound of each row's input interval.
    pub to_values: Vec<f32>,
    /// Slope of each row.
    pub slope_values: Vec<f32>,
    /// Intercept of each row.
    pub cut_values: Vec<f32>,
}

impl ConditionalTable {
    /// Number of rows (the input column's length).
    pub fn len(&self) -> usize {
        self.input_indices.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.input_indices.is_empty()
    }

    fn read(c: &mut Cursor<'_>, leaf: &'static str) -> Result<Self> {
        let depth = c.key(leaf);
        let t = ConditionalTable {
            input_indices: c.vec_u16("inputIndices")?,
            output_indices: c.vec_u16("outputIndices")?,
            from_values: c.vec_f32("fromValues")?,
            to_values: c.vec_f32("toValues")?,
            slope_values: c.vec_f32("slopeValues")?,
            cut_values: c.vec_f32("cutValues")?,
        };
        c.back(depth);
        Ok(t)
    }
}

/// The PSD matrix in coordinate form: entry `k` says PSD control `rows[k]` multiplies input
/// `columns[k]` with weight `values[k]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PsdMatrix {
    /// Row (the PSD control's index in the raw + PSD control vector) of each entry.
    pub rows: Vec<u16>,
    /// Column (an input control) of each entry.
    pub columns: Vec<u16>,
    /// Weight of each entry.
    pub values: Vec<f32>,
}

/// One joint group: a dense sub-matrix of the joint matrix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointGroup {
    /// Row count of each LOD (prefix lengths: LOD `l` uses the first `lods[l]` rows).
    pub lods: Vec<u16>,
    /// Column → input control (raw, then PSD, then ML controls).
    pub input_indices: Vec<u16>,
    /// Row → joint attribute (`joint · 9 + attribute`).
    pub output_indices: Vec<u16>,
    /// Coefficients `(rows, columns)` row-major, in the file's units (translation unit, rotation
    /// unit, or scale per unit of input).
    pub values: Vec<f32>,
    /// The joints the group drives.
    pub joint_indices: Vec<u16>,
}

/// The joint part of the behaviour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Joints {
    /// Rows of the whole joint matrix (joints × 9).
    pub row_count: u16,
    /// Columns of the whole joint matrix (the input controls).
    pub column_count: u16,
    /// The groups in file order.
    pub groups: Vec<JointGroup>,
}

/// The blend-shape part of the behaviour: entry `k` copies input `input_indices[k]` to channel
/// `output_indices[k]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlendShapeChannels {
    /// Entry count of each LOD (prefix lengths).
    pub lods: Vec<u16>,
    /// Input control of each entry.
    pub input_indices: Vec<u16>,
    /// Channel of each entry.
    pub output_indices: Vec<u16>,
}

/// The animated-map part of the behaviour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnimatedMaps {
    /// Row count of each LOD (prefix lengths).
    pub lods: Vec<u16>,
    /// The rows: inputs are controls, outputs animated maps.
    pub conditionals: ConditionalTable,
}

/// The behaviour layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Behavior {
    /// GUI → raw control table (inputs GUI controls, outputs raw controls).
    pub gui_to_raw: ConditionalTable,
    /// Number of PSD controls; they follow the raw controls in the control vector.
    pub psd_count: u16,
    /// The PSD matrix.
    pub psds: PsdMatrix,
    /// Joint groups.
    pub joints: Joints,
    /// Blend-shape channel mapping.
    pub blend_shapes: BlendShapeChannels,
    /// Animated maps.
    pub animated_maps: AnimatedMaps,
}

/// Offsets of the four behaviour parts in a 2.1 file (its section table); `None` for 2.2+,
/// where they follow each other.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PartOffsets {
    pub controls: usize,
    pub joints: usize,
    pub blend_shapes: usize,
    pub animated_maps: usize,
}

/// Read the behaviour (`RawBehavior::serialize`).
///
/// # Errors
/// A field cut short, a length prefix past the region, a 2.1 part offset outside the file.
pub(crate) fn read_behavior(c: &mut Cursor<'_>, parts: Option<PartOffsets>) -> Result<Behavior> {
    let depth = c.key("behavior");
    let mut b = Behavior::default();
    if let Some(p) = parts {
        c.seek(p.controls, "controls")?;
    }
    let d = c.key("controls");
    b.psd_count = c.u16("psdCount")?;
    b.gui_to_raw = ConditionalTable::read(c, "conditionals")?;
    let dp = c.key("psds");
    b.psds = PsdMatrix {
        rows: c.vec_u16("rows")?,
        columns: c.vec_u16("columns")?,
        values: c.vec_f32("values")?,
    };
    c.back(dp);
    c.back(d);
    if let Some(p) = parts {
        c.seek(p.joints, "joints")?;
    }
    let d = c.key("joints");
    b.joints.row_count = c.u16("rowCount")?;
    b.joints.column_count = c.u16("colCount")?;
    b.joints.groups = c.list("jointGroups", 20, |c| {
        Ok(JointGroup {
            lods: c.vec_u16("lods")?,
            input_indices: c.vec_u16("inputIndices")?,
            output_indices: c.vec_u16("outputIndices")?,
            values: c.vec_f32("values")?,
            joint_indices: c.vec_u16("jointIndices")?,
        })
    })?;
    c.back(d);
    if let Some(p) = parts {
        c.seek(p.blend_shapes, "blendShapeChannels")?;
    }
    let d = c.key("blendShapeChannels");
    b.blend_shapes = BlendShapeChannels {
        lods: c.vec_u16("lods")?,
        input_indices: c.vec_u16("inputIndices")?,
        output_indices: c.vec_u16("outputIndices")?,
    };
    c.back(d);
    if let Some(p) = parts {
        c.seek(p.animated_maps, "animatedMaps")?;
    }
    let d = c.key("animatedMaps");
    b.animated_maps.lods = c.vec_u16("lods")?;
    b.animated_maps.conditionals = ConditionalTable::read(c, "conditionals")?;
    c.back(d);
    c.back(depth);
    Ok(b)
}
