//! The descriptor layer (`desc`, and the whole descriptor section of a 2.1 file) and the
//! descriptor extension (`dsce`, format 2.7+): names, units, axes, LOD counts, rotation order.
//!
//! Source: OpenRigLogic `src/dna/DNA.h` (`RawDescriptor::serialize`, `RawDescriptorExt`),
//! `include/dna/layers/Descriptor.h` and `include/dna/Defs.h` (the enumerations' numeric codes),
//! `include/tdm/Types.h` (`axis_dir`, `rot_seq`, `rot_dir`).

use super::stream::Cursor;
use crate::error::Result;

/// Most LODs a file may declare (`LODLimits::count()` = 33 in OpenRigLogic); more is refused.
pub const MAX_LOD_COUNT: u16 = 33;

macro_rules! code_enum {
    ($(#[$doc:meta])* $name:ident : $raw:ty { $($(#[$vdoc:meta])* $v:ident = $n:expr),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $v,)*
            /// A code this reader does not know, kept as written.
            Code($raw),
        }

        impl $name {
            /// The enumeration from its numeric code in the file.
            pub fn from_code(code: $raw) -> Self {
                match code {
                    $(x if x == $n => $name::$v,)*
                    other => $name::Code(other),
                }
            }

            /// The numeric code as written in the file.
            pub fn code(self) -> $raw {
                match self {
                    $($name::$v => $n,)*
                    $name::Code(c) => c,
                }
            }
        }
    };
}

code_enum!(
    /// The character's archetype (`dna::Archetype`).
    Archetype: u16 {
        /// 0.
        Asian = 0,
        /// 1.
        Black = 1,
        /// 2.
        Caucasian = 2,
        /// 3.
        Hispanic = 3,
        /// 4.
        Alien = 4,
        /// 5.
        Other = 5,
    }
);

code_enum!(
    /// The character's gender (`dna::Gender`).
    Gender: u16 {
        /// 0.
        Male = 0,
        /// 1.
        Female = 1,
        /// 2.
        Other = 2,
    }
);

code_enum!(
    /// Unit of every translation, position and delta in the file (`dna::TranslationUnit`).
    TranslationUnit: u16 {
        /// Centimetres (0; MetaHuman files).
        Cm = 0,
        /// Metres (1).
        M = 1,
    }
);

code_enum!(
    /// Unit of every rotation in the file (`dna::RotationUnit`).
    RotationUnit: u16 {
        /// Degrees (0; MetaHuman files).
        Degrees = 0,
        /// Radians (1).
        Radians = 1,
    }
);

code_enum!(
    /// Where one coordinate axis of the file points (`tdm::axis_dir`). mien reads `Right` as +X,
    /// `Up` as +Y and `Front` as +Z of its own frame (the ICT rig: "x right (the character's
    /// left), y up, z front"; see `convert`).
    Direction: u16 {
        /// 0.
        Left = 0,
        /// 1.
        Right = 1,
        /// 2.
        Up = 2,
        /// 3.
        Down = 3,
        /// 4: the way the character faces.
        Front = 4,
        /// 5.
        Back = 5,
    }
);

code_enum!(
    /// Order of the Euler rotations (`tdm::rot_seq`): `Xyz` rotates about x first, so
    /// `R = Rz·Ry·Rx` on column vectors.
    RotationSequence: u32 {
        /// 0.
        Xyz = 0,
        /// 1.
        Xzy = 1,
        /// 2.
        Yxz = 2,
        /// 3.
        Yzx = 3,
        /// 4.
        Zxy = 4,
        /// 5.
        Zyx = 5,
    }
);

code_enum!(
    /// Sign of the rotations about one axis (`tdm::rot_dir`, stored as a `u32` of −1 or 1).
    RotationDirection: u32 {
        /// 1.
        Positive = 1,
        /// −1 (`0xFFFFFFFF`).
        Negative = u32::MAX,
    }
);

code_enum!(
    /// Face winding seen along the outward normal (`dna::FaceWindingOrder`).
    FaceWinding: u8 {
        /// Counter-clockwise (0; authored DNAs).
        Ccw = 0,
        /// Clockwise (1).
        Cw = 1,
    }
);

/// The axes of the file's coordinate system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoordinateSystem {
    /// Where +x points.
    pub x: Direction,
    /// Where +y points.
    pub y: Direction,
    /// Where +z points.
    pub z: Direction,
}

/// The descriptor: who the character is and the units and axes of everything else.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor {
    /// Character name.
    pub name: String,
    /// Archetype.
    pub archetype: Archetype,
    /// Gender.
    pub gender: Gender,
    /// Age, years.
    pub age: u16,
    /// Metadata `(key, value)` pairs in file order (keys may repeat; the first wins on lookup).
    pub metadata: Vec<(String, String)>,
    /// Unit of translations, positions and deltas.
    pub translation_unit: TranslationUnit,
    /// Unit of rotations.
    pub rotation_unit: RotationUnit,
    /// Axes.
    pub coordinate_system: CoordinateSystem,
    /// LOD count (after a LOD-filtered load: the LODs loaded).
    pub lod_count: u16,
    /// The database's highest-detail LOD (`getDBMaxLOD`; a filtered load adds its first LOD).
    pub db_max_lod: u16,
    /// Database complexity label.
    pub complexity: String,
    /// Database name.
    pub db_name: String,
    /// Euler order of every rotation (`dsce`; `Xyz` when the file has no `dsce`).
    pub rotation_sequence: RotationSequence,
    /// Rotation signs about x, y, z (`dsce`; all positive when absent).
    pub rotation_sign: [RotationDirection; 3],
    /// Face winding (`dsce` of format 2.8+; `Ccw` when absent).
    pub face_winding: FaceWinding,
}

impl Default for Descriptor {
    fn default() -> Self {
        Descriptor {
            name: String::new(),
            archetype: Archetype::Asian,
            gender: Gender::Male,
            age: 0,
            metadata: Vec::new(),
            translation_unit: TranslationUnit::Cm,
            rotation_unit: RotationUnit::Degrees,
            coordinate_system: CoordinateSystem {
                x: Direction::Left,
                y: Direction::Left,
                z: Direction::Left,
            },
            lod_count: 0,
            db_max_lod: 0,
            complexity: String::new(),
            db_name: String::new(),
            rotation_sequence: RotationSequence::Xyz,
            rotation_sign: [RotationDirection::Positive; 3],
            face_winding: FaceWinding::Ccw,
        }
    }
}

impl Descriptor {
    /// The value of the first metadata pair with `key`, as `getMetaDataValue` does.
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Read the descriptor (`RawDescriptor::serialize`) into `d`, leaving the extension fields.
///
/// # Errors
/// A field cut short or a length prefix past the region; a LOD count over [`MAX_LOD_COUNT`]
/// (OpenRigLogic refuses it as malformed).
pub(crate) fn read_descriptor(c: &mut Cursor<'_>, d: &mut Descriptor) -> Result<()> {
    let depth = c.key("descriptor");
    d.name = c.string("name")?;
    d.archetype = Archetype::from_code(c.u16("archetype")?);
    d.gender = Gender::from_code(c.u16("gender")?);
    d.age = c.u16("age")?;
    d.metadata = c.list("metadata", 8, |c| {
        Ok((c.string("key")?, c.string("value")?))
    })?;
    d.translation_unit = TranslationUnit::from_code(c.u16("translationUnit")?);
    d.rotation_unit = RotationUnit::from_code(c.u16("rotationUnit")?);
    d.coordinate_system = CoordinateSystem {
        x: Direction::from_code(c.u16("coordinateSystem.xAxis")?),
        y: Direction::from_code(c.u16("coordinateSystem.yAxis")?),
        z: Direction::from_code(c.u16("coordinateSystem.zAxis")?),
    };
    let at = c.pos();
    d.lod_count = c.u16("lodCount")?;
    if d.lod_count > MAX_LOD_COUNT {
        return Err(c.fail_at(
            "lodCount",
            at,
            format!(
                "{} LODs exceed the format's limit of {MAX_LOD_COUNT}",
                d.lod_count
            ),
        ));
    }
    d.db_max_lod = c.u16("maxLOD")?;
    d.complexity = c.string("complexity")?;
    d.db_name = c.string("dbName")?;
    c.back(depth);
    Ok(())
}

/// Read the descriptor extension (`RawDescriptorExt`): rotation sequence and signs, and from
/// format 2.8 on the face winding.
///
/// # Errors
/// A field cut short.
pub(crate) fn read_descriptor_ext(
    c: &mut Cursor<'_>,
    d: &mut Descriptor,
    with_winding: bool,
) -> Result<()> {
    let depth = c.key("descriptorExt");
    d.rotation_sequence = RotationSequence::from_code(c.u32("rotationSequence")?);
    d.rotation_sign = [
        RotationDirection::from_code(c.u32("rotationSign.x")?),
        RotationDirection::from_code(c.u32("rotationSign.y")?),
        RotationDirection::from_code(c.u32("rotationSign.z")?),
    ];
    if with_winding {
        d.face_winding = FaceWinding::from_code(c.u8("faceWindingOrder")?);
    }
    c.back(depth);
    Ok(())
}
