//! glTF 2.0 import into a [`Character`] (nodes, meshes, morph targets, skins, clips).
//!
//! The pipeline, one file per stage:
//!
//! | file | stage |
//! |---|---|
//! | `container.rs` | GLB header / chunk checks, or plain JSON |
//! | `validate.rs` | the `gltf` crate's JSON validation, filtered to the extensions mien handles |
//! | `structure.rs` | glTF-Validator-style checks of buffers, views, accessors, extensions |
//! | `checks.rs` | meshes (formats, counts, morph targets, buffer-view usage) checked before any data is read |
//! | `limits.rs` | size budgets (vertices, morph deltas, vertices stored nowhere) checked before any data is read |
//! | `links.rs` | nodes, skins, scenes and animation samplers checked before any data is read |
//! | `buffers.rs` | buffer bytes (GLB BIN, external files, `data:` URIs) and buffer-view slices |
//! | `meshopt.rs` | `EXT_meshopt_compression` views decoded with meshoptimizer |
//! | `accessor.rs` | accessors decoded by their own component type, `normalized` flag and sparse part |
//! | `scene.rs` | nodes (TRS / decomposed matrices), hierarchy, scene roots |
//! | `mesh.rs` | primitives, triangle lists, normals, UVs, morph targets |
//! | `skin.rs` | skin influences (`JOINTS_n` / `WEIGHTS_n`) and skins |
//! | `animation.rs` | clips and their samplers |
//! | `write.rs` | the other way: a [`Character`] written as a GLB ([`character_to_glb`]) |
//!
//! Sources: the glTF 2.0 specification (Khronos, §3.5 nodes, §3.6 buffers and accessors, §3.7 meshes and
//! skins, §3.11 animations, §4.4 GLB), `KHR_mesh_quantization`, `EXT_meshopt_compression`, and the
//! checks (and tolerances) of the Khronos glTF-Validator. Problems are named like a glTF-Validator JSON
//! pointer in field syntax: `/meshes/0/weights` is reported as `meshes[0].weights`.
//!
//! Materials keep their base colour (factor, texture, sampler, transform: `material`); only the
//! images a base colour uses are read, and one that cannot be read is a note, never an error — a
//! missing PNG does not stop geometry from loading.

mod accessor;
mod animation;
pub mod bake;
mod buffers;
mod checks;
mod container;
pub use container::write_glb;
mod limits;
mod links;
pub mod lod;
mod material;
mod mesh;
mod meshopt;
mod scene;
mod skin;
mod structure;
mod validate;
pub mod write;
pub use write::{WriteOptions, WrittenCharacter, character_to_glb};

use std::path::Path;

use gltf::json;

use crate::error::{Error, Result};
use crate::rig::{Character, ImportNote};

pub use accessor::{MAX_DECODED_COMPONENTS, MAX_IMPLICIT_COMPONENTS};
pub use limits::{MAX_CHARACTER_MORPH_DELTAS, MAX_CHARACTER_VERTICES, MAX_IMPLICIT_VERTICES};

/// Extensions whose `extensionsRequired` entry mien accepts: the geometry ones it decodes itself,
/// and the texture ones whose images the colour lift decodes ([`crate::texture::decode`]: KTX2,
/// WebP) or whose UV transform it applies.
pub const HANDLED_REQUIRED_EXTENSIONS: &[&str] = &[
    "KHR_mesh_quantization",
    "EXT_meshopt_compression",
    "KHR_texture_basisu",
    "KHR_texture_transform",
    "EXT_texture_webp",
    "VRM",
    "VRMC_vrm",
    "VRMC_vrm_animation",
    "VRMC_springBone",
    "VRMC_springBone_extended_collider",
];

/// Largest glTF input read, in bytes: 2 GiB (2³¹). It caps the `.gltf` / `.glb` file itself, each
/// external buffer's `byteLength`, and the external buffers of one import together. A GLB cannot
/// exceed 4 GiB (its header length is a u32); 2 GiB is two orders of magnitude above any face
/// character (facecap.glb is 333 KB) while keeping a hostile file from taking the machine's memory.
pub const MAX_GLTF_BYTES: u64 = 1 << 31;

/// Import a `.gltf` or `.glb` file into a validated [`Character`]. External buffers (`.bin`) are
/// resolved relative to the file's folder and must lie inside it (see the `buffers` stage); images
/// are never opened. The file must be a regular file of at most [`MAX_GLTF_BYTES`]
/// ([`crate::io::read::read_file_capped`]).
///
/// Every field of the character is filled: nodes (a node `matrix` is decomposed into TRS), the
/// hierarchy, the scene roots (`scene`, else scene 0, else all parentless nodes), meshes with morph
/// targets, skins, clips, `required_extensions`, and an [`ImportNote`] for everything changed or
/// ignored. Positions stay in the file's units (glTF: metres), quantised data is dequantised per
/// `KHR_mesh_quantization` (the dequantisation transform stays in the node transform, as in the file).
///
/// # Errors
/// [`Error::Format`] (or [`Error::Many`] with every problem found) naming the file, the field in
/// glTF-Validator pointer form (`meshes[0].primitives[1].targets`) and the index; this includes
/// unreadable external buffers and buffer URIs that leave the model's folder. [`Error::Io`] when
/// the file cannot be read; [`Error::Format`] (field `file type`) when it is not a regular file (a
/// FIFO, a device); [`Error::Limit`] when it (or an external buffer) is over [`MAX_GLTF_BYTES`],
/// or the model asks for more than [`MAX_CHARACTER_VERTICES`] vertices.
pub fn import_gltf(path: &Path) -> Result<Character> {
    let bytes = crate::io::read::read_file_capped(path, MAX_GLTF_BYTES)?;
    import_gltf_bytes(&bytes, path.parent(), &path.display().to_string())
}

/// Import a glTF from memory: `bytes` is a GLB or glTF JSON; external buffer URIs resolve against
/// `base_dir` (an external URI with no `base_dir` is an error); `label` names the source in messages
/// and becomes [`Character::source`].
///
/// # Errors
/// As [`import_gltf`].
pub fn import_gltf_bytes(bytes: &[u8], base_dir: Option<&Path>, label: &str) -> Result<Character> {
    let parts = container::split(bytes, label)?;
    let gltf = gltf::Gltf::from_slice_without_validation(parts.json).map_err(|e| {
        Error::format(
            label,
            if parts.glb { "JSON chunk" } else { "JSON" },
            format!("not valid glTF JSON: {e}"),
        )
    })?;
    let root = gltf.document.as_json();
    validate::crate_validation(root, label)?;
    structure::check(root, label)?;
    checks::check(root, label)?;

    let mut ctx = Ctx {
        file: label,
        root,
        buffers: buffers::Buffers::new(
            label,
            base_dir,
            parts.bin,
            root.buffers.len(),
            root.buffer_views.len(),
        ),
        notes: parts.notes,
        decoded: 0,
    };
    ignored_notes(&mut ctx);

    let mut nodes = scene::nodes(&mut ctx)?;
    let mut scene_roots = scene::scene_roots(&mut ctx, &nodes)?;
    let mut meshes = mesh::meshes(&mut ctx)?;
    let skins = skin::skins(&mut ctx)?;
    let clips = animation::clips(&mut ctx, &meshes)?;
    let vrm = vrm_control(&mut ctx, &mut nodes, &mut meshes, &mut scene_roots)?;
    let vrm_animation = match ctx.root.extensions.as_ref() {
        Some(ext) => {
            let scene = crate::vrm::parse::Scene {
                file: ctx.file,
                nodes: &nodes,
                meshes: &meshes,
            };
            crate::vrm::parse::read_animation(&ext.others, &scene, &mut ctx.notes)?
        }
        None => None,
    };
    let spring_bones = match ctx.root.extensions.as_ref() {
        Some(ext) => {
            let children: Vec<Vec<crate::rig::NodeId>> =
                nodes.iter().map(|n| n.children.clone()).collect();
            let rest: Vec<crate::rig::Transform> = nodes.iter().map(|n| n.rest).collect();
            crate::anim::spring::read_spring_bones(
                &ext.others,
                ctx.file,
                &children,
                &rest,
                &mut ctx.notes,
            )?
        }
        None => None,
    };
    let materials = material::materials(&mut ctx);
    let images = material::images(&mut ctx, &materials);
    let hierarchy = crate::rig::Hierarchy::new(label, &nodes)?;

    let character = Character {
        source: label.to_string(),
        nodes,
        hierarchy,
        scene_roots,
        meshes,
        skins,
        clips,
        required_extensions: root.extensions_required.clone(),
        notes: ctx.notes,
        vrm,
        vrm_animation,
        spring_bones,
        materials,
        images,
        rig_logic: None,
    };
    character.validate()?;
    Ok(character)
}

/// Read a VRM extension (0.x `VRM` or 1.0 `VRMC_vrm`, [`crate::vrm::parse::read`]) and append its
/// expression control node: a scene root with a geometry-less mesh whose morph targets are the
/// expressions ([`crate::vrm::CONTROL_NODE_NAME`]).
fn vrm_control(
    ctx: &mut Ctx,
    nodes: &mut Vec<crate::rig::Node>,
    meshes: &mut Vec<crate::rig::Mesh>,
    scene_roots: &mut Vec<crate::rig::NodeId>,
) -> Result<Option<crate::vrm::Vrm>> {
    let Some(ext) = ctx.root.extensions.as_ref() else {
        return Ok(None);
    };
    let control = crate::rig::NodeId(nodes.len() as u32);
    let scene = crate::vrm::parse::Scene {
        file: ctx.file,
        nodes,
        meshes,
    };
    let Some(vrm) = crate::vrm::parse::read(&ext.others, &scene, control, &mut ctx.notes)? else {
        return Ok(None);
    };
    let names: Vec<String> = vrm.expressions.iter().map(|e| e.name.clone()).collect();
    let mesh = crate::rig::MeshId(meshes.len() as u32);
    meshes.push(crate::rig::Mesh {
        name: Some(crate::vrm::CONTROL_NODE_NAME.to_string()),
        primitives: Vec::new(),
        default_weights: vec![0.0; names.len()],
        target_names: names,
    });
    nodes.push(crate::rig::Node {
        name: Some(crate::vrm::CONTROL_NODE_NAME.to_string()),
        mesh: Some(mesh),
        ..Default::default()
    });
    scene_roots.push(control);
    Ok(Some(vrm))
}

/// Shared state of one import: the file label, the parsed JSON, buffer data and the notes so far.
pub(crate) struct Ctx<'a> {
    file: &'a str,
    root: &'a json::Root,
    buffers: buffers::Buffers<'a>,
    notes: Vec<ImportNote>,
    /// Components decoded from accessors so far (see [`accessor::MAX_DECODED_COMPONENTS`]).
    decoded: u64,
}

impl Ctx<'_> {
    /// An [`Error::Format`] for this file.
    fn err(&self, field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::format(self.file, field, reason)
    }

    /// Record something the importer changed or ignored.
    fn note(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.notes.push(ImportNote {
            field: field.into(),
            message: message.into(),
        });
    }
}

/// Notes for whole categories mien does not import.
fn ignored_notes(ctx: &mut Ctx) {
    let r = ctx.root;
    if !r.materials.is_empty() {
        ctx.note(
            "materials",
            "only the base colour (factor, texture, sampler, KHR_texture_transform) is read; metal, roughness, normal, occlusion and emission maps are ignored",
        );
    }
    // Extensions mien reads; a required one it does not read refuses the file (validate.rs), so
    // what remains here is only *used*: it changes nothing mien imports.
    let ignored: Vec<&str> = r
        .extensions_used
        .iter()
        .map(String::as_str)
        .filter(|e| {
            !matches!(
                *e,
                "KHR_mesh_quantization"
                    | "EXT_meshopt_compression"
                    | "KHR_texture_transform"
                    | "KHR_texture_basisu"
                    | "EXT_texture_webp"
                    | "VRM"
                    | "VRMC_vrm"
                    | "VRMC_vrm_animation"
                    | "VRMC_springBone"
                    | "VRMC_springBone_extended_collider"
            )
        })
        .collect();
    let (required, used): (Vec<&str>, Vec<&str>) = ignored
        .into_iter()
        .partition(|e| r.extensions_required.iter().any(|q| q == e));
    if !used.is_empty() {
        ctx.note(
            "extensionsUsed",
            format!(
                "ignored (not needed for geometry or animation): {}",
                used.join(", ")
            ),
        );
    }
    if !required.is_empty() {
        ctx.note(
            "extensionsRequired",
            format!(
                "required by the file but not read by mien: {}",
                required.join(", ")
            ),
        );
    }
    if !r.cameras.is_empty() {
        ctx.note("cameras", format!("{} cameras ignored", r.cameras.len()));
    }
}

/// The field prefix of a primitive: `meshes[m].primitives[p]`.
pub(crate) fn prim_field(mesh: usize, prim: usize) -> String {
    format!("meshes[{mesh}].primitives[{prim}]")
}
