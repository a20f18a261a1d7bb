//! The file's frame: signature, version, then either the 2.1 section-offset table and the `AND`
//! footer, or (2.2+) the index table of sections by four-character id and layer version.
//!
//! Source: OpenRigLogic `src/dna/DNA.h`: `DNA::serialize` (signature `DNA`, `Version` = generation
//! and version as two `u16`; only generation 2 is supported), `serialize(…, Version<v21>)` (the
//! `SectionLookupTable` of eight `u32` offsets: descriptor, definition, behavior, controls, joints,
//! blend-shape channels, animated maps, geometry; the footer `AND`), `load(…, AnyVersion)` (the
//! `IndexTable` of `{id, version, offset, size}` entries, each section read at its offset in table
//! order, sections of unknown id or layer version kept aside), the `Layer<…>` declarations (ids and
//! layer versions) and `Dispatcher` (a version above 2.8 is read with the 2.8 serialisers).

use super::behavior::{PartOffsets, read_behavior};
use super::definition::read_definition;
use super::descriptor::{read_descriptor, read_descriptor_ext};
use super::extensions::{
    fill_rbf_ext, read_joint_metadata, read_ml, read_ml_ext, read_rbf, read_rbf_ext,
    read_twist_swing,
};
use super::geometry::{MeshEnd, read_geometry};
use super::stream::Cursor;
use super::{Dna, DnaLayers, FileLayout, FormatVersion, Section};
use crate::error::Result;

/// Layer version of the four core sections (`rev(1, 1)`).
const CORE_LAYER: u32 = 0x0001_0001;
/// Layer version of the later sections (`rev(1, 0)`).
const EXT_LAYER: u32 = 0x0001_0000;

/// The parts of the file a load reads (OpenRigLogic `computeDataLayerBitmask`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wanted {
    pub definition: bool,
    pub behavior: bool,
    pub geometry: bool,
    pub blend_shapes: bool,
    pub ml: bool,
    pub rbf: bool,
    pub joint_metadata: bool,
    pub twist_swing: bool,
}

impl Wanted {
    pub(crate) fn of(layers: DnaLayers) -> Self {
        use DnaLayers as L;
        let all = layers == L::All;
        let definition = layers != L::Descriptor;
        Wanted {
            definition,
            behavior: all || matches!(layers, L::Behavior | L::RbfBehavior),
            geometry: all || matches!(layers, L::Geometry | L::GeometryWithoutBlendShapes),
            blend_shapes: all || layers == L::Geometry,
            ml: all || layers == L::MachineLearnedBehavior,
            rbf: all || layers == L::RbfBehavior,
            joint_metadata: all || layers == L::JointBehaviorMetadata,
            twist_swing: all || layers == L::TwistSwingBehavior,
        }
    }
}

/// The section id as text (`desc`), bytes outside printable ASCII escaped.
pub(crate) fn id_text(id: [u8; 4]) -> String {
    id.iter()
        .map(|&b| {
            if b.is_ascii_graphic() {
                (b as char).to_string()
            } else {
                format!("\\x{b:02x}")
            }
        })
        .collect()
}

/// Read the file's frame and every requested layer, unfiltered.
pub(crate) fn read_frame(bytes: &[u8], file: &str, layers: DnaLayers) -> Result<Dna> {
    let mut c = Cursor::new(bytes, file);
    let sig = c.take(3, "signature")?;
    if sig != b"DNA" {
        return Err(c.fail_at(
            "signature",
            0,
            format!(
                "expected \"DNA\", found {:?} (not a MetaHuman DNA file)",
                String::from_utf8_lossy(sig)
            ),
        ));
    }
    let generation = c.u16("version.generation")?;
    let version = c.u16("version.version")?;
    if generation != 2 || version == 0 {
        return Err(c.fail_at(
            "version",
            3,
            format!(
                "format {generation}.{version} is not supported (generation 2, versions 2.1–2.8 and later 2.x read as 2.8)"
            ),
        ));
    }
    let mut dna = Dna {
        version: FormatVersion {
            generation,
            version,
        },
        ..Dna::default()
    };
    let want = Wanted::of(layers);
    if version == 1 {
        read_v21(&mut c, &mut dna, want)?;
    } else {
        read_indexed(&mut c, &mut dna, want)?;
        let raw = dna.definition.raw_control_names.len();
        let psd = usize::from(dna.behavior.psd_count);
        fill_rbf_ext(&mut dna.extensions, raw, psd);
    }
    Ok(dna)
}

/// Format 2.1: the section table, the four layers at their offsets, the footer.
fn read_v21(c: &mut Cursor<'_>, dna: &mut Dna, want: Wanted) -> Result<()> {
    let names = [
        "descriptor",
        "definition",
        "behavior",
        "controls",
        "joints",
        "blendShapeChannels",
        "animatedMaps",
        "geometry",
    ];
    let mut offsets = [0u32; 8];
    let depth = c.key("sections");
    for (o, name) in offsets.iter_mut().zip(names) {
        *o = c.u32(name)?;
    }
    c.back(depth);
    dna.layout = FileLayout::V21 { offsets };
    let len = c.len();
    let at = |i: usize| offsets[i] as usize;
    c.region(at(0), len, "sections.descriptor")?;
    read_descriptor(c, &mut dna.descriptor)?;
    if want.definition {
        c.region(at(1), len, "sections.definition")?;
        dna.definition = read_definition(c)?;
    }
    if want.behavior {
        c.region(0, len, "")?;
        c.seek(at(2), "sections.behavior")?;
        let parts = PartOffsets {
            controls: at(3),
            joints: at(4),
            blend_shapes: at(5),
            animated_maps: at(6),
        };
        dna.behavior = read_behavior(c, Some(parts))?;
    }
    c.region(at(7), len, "sections.geometry")?;
    let (meshes, after) = read_geometry(c, MeshEnd::Offset, want.geometry, want.blend_shapes)?;
    dna.meshes = meshes;
    c.region(after, len, "footer")?;
    let footer = c.take(3, "footer")?;
    if footer != b"AND" {
        return Err(c.fail_at(
            "footer",
            after,
            format!(
                "expected \"AND\" after the geometry, found {:?}",
                String::from_utf8_lossy(footer)
            ),
        ));
    }
    Ok(())
}

/// Format 2.2+: the index table, then each section at its offset in table order.
fn read_indexed(c: &mut Cursor<'_>, dna: &mut Dna, want: Wanted) -> Result<()> {
    let n = c.count("index", 16)?;
    let mut sections = Vec::with_capacity(n);
    let depth = c.key("index");
    for i in 0..n {
        c.at(i);
        let id = c.u32("id")?.to_be_bytes();
        let version = c.u32("version")?;
        let offset = c.u32("offset")?;
        let size = c.u32("size")?;
        let known = matches!(
            (&id, version),
            (b"desc" | b"defn" | b"bhvr" | b"geom", CORE_LAYER)
                | (
                    b"mlbh" | b"rbfb" | b"rbfe" | b"jbmd" | b"twsw" | b"mlbe" | b"dsce",
                    EXT_LAYER
                )
        );
        let end = offset as u64 + size as u64;
        if end > c.len() as u64 {
            return Err(c.fail(
                "",
                format!(
                    "section '{}' spans bytes {offset}..{end}, past the end of the file ({} bytes)",
                    id_text(id),
                    c.len()
                ),
            ));
        }
        if known
            && let Some(j) = sections
                .iter()
                .position(|s: &Section| s.id == id && s.known)
        {
            return Err(c.fail(
                "",
                format!(
                    "section '{}' is listed twice (index entries {j} and {i})",
                    id_text(id)
                ),
            ));
        }
        sections.push(Section {
            id,
            version,
            offset,
            size,
            known,
        });
        c.back(depth + 1);
    }
    c.back(depth);
    let file_version = dna.version.version;
    for s in &sections {
        if !s.known {
            continue;
        }
        let start = s.offset as usize;
        c.region(start, start + s.size as usize, "index")?;
        match &s.id {
            b"desc" => read_descriptor(c, &mut dna.descriptor)?,
            b"defn" if want.definition => dna.definition = read_definition(c)?,
            b"bhvr" if want.behavior => dna.behavior = read_behavior(c, None)?,
            b"geom" if want.geometry => {
                dna.meshes = read_geometry(c, MeshEnd::Size, true, want.blend_shapes)?.0;
            }
            b"mlbh" if want.ml => dna.extensions.machine_learned = read_ml(c)?,
            b"rbfb" if want.rbf => dna.extensions.rbf = read_rbf(c)?,
            b"rbfe" if want.rbf => dna.extensions.rbf_ext = read_rbf_ext(c)?,
            b"jbmd" if want.joint_metadata => {
                dna.extensions.joint_metadata = read_joint_metadata(c)?;
            }
            b"twsw" if want.twist_swing => dna.extensions.twist_swing = read_twist_swing(c)?,
            b"mlbe" if want.ml => dna.extensions.machine_learned_ext = read_ml_ext(c)?,
            b"dsce" => read_descriptor_ext(c, &mut dna.descriptor, file_version >= 8)?,
            _ => {}
        }
    }
    dna.layout = FileLayout::Indexed { sections };
    Ok(())
}
