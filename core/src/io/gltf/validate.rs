//! The `gltf` crate's own JSON validation (index ranges, required properties, enum values), run on
//! the document parsed with `Gltf::from_slice_without_validation`, with three kinds of complaint
//! filtered out:
//!
//! 1. "unsupported required extension" for the extensions mien handles
//!    ([`super::HANDLED_REQUIRED_EXTENSIONS`]); any other required extension is refused by name;
//! 2. `accessors[i].bufferView` missing: glTF 2.0 §3.6.2.1 allows an accessor without a buffer view
//!    (its elements are zeros), the crate reports it whenever `sparse` is absent too;
//! 3. `textures[i].source` missing when the texture names its image through a texture extension
//!    (`KHR_texture_basisu`, `EXT_texture_webp`, `MSFT_texture_dds`); the importer resolves the
//!    image itself (`material.rs`) and notes a texture whose image it cannot read.

use gltf::json;
use json::validation::{Error as VError, Validate};

use super::HANDLED_REQUIRED_EXTENSIONS;
use crate::error::{Error, Result};

/// Texture extensions that carry the image index themselves.
const TEXTURE_SOURCE_EXTENSIONS: &[&str] =
    &["KHR_texture_basisu", "EXT_texture_webp", "MSFT_texture_dds"];

/// Extensions that define attribute semantics of their own (`NAME:…`).
const EXTENSION_SEMANTICS: &[&str] = &["KHR_gaussian_splatting"];

/// Run the crate's validation and turn what remains into errors naming the fields.
///
/// # Errors
/// All remaining problems ([`Error::Many`] when several), each naming `file` and the field.
pub(super) fn crate_validation(root: &json::Root, file: &str) -> Result<()> {
    // The crate's primitive hook indexes `accessors` by the POSITION index unchecked; refuse such a
    // file before it runs.
    let mut problems = Vec::new();
    for (mi, m) in root.meshes.iter().enumerate() {
        for (pi, p) in m.primitives.iter().enumerate() {
            for (sem, acc) in &p.attributes {
                if acc.value() >= root.accessors.len() {
                    problems.push(Error::format(
                        file,
                        format!(
                            "meshes[{mi}].primitives[{pi}].attributes.{}",
                            semantic_name(sem)
                        ),
                        format!(
                            "accessor {} does not exist ({} accessors)",
                            acc.value(),
                            root.accessors.len()
                        ),
                    ));
                }
            }
        }
    }
    Error::collect(problems)?;

    let mut found: Vec<(String, VError)> = Vec::new();
    root.validate(root, json::Path::new, &mut |path, error| {
        found.push((path().0, error))
    });
    let mut problems = Vec::new();
    for (path, error) in found {
        if let Some(problem) = judge(root, file, &path, error) {
            problems.push(problem);
        }
    }
    Error::collect(problems)
}

/// The name a semantic has in the file.
pub(super) fn semantic_name(sem: &json::validation::Checked<json::mesh::Semantic>) -> String {
    match sem {
        json::validation::Checked::Valid(s) => s.to_string(),
        json::validation::Checked::Invalid => "<invalid semantic>".into(),
    }
}

/// `None` when the complaint is one mien deliberately accepts, else the error to report.
fn judge(root: &json::Root, file: &str, path: &str, error: VError) -> Option<Error> {
    let field = field_syntax(path);
    match error {
        VError::Unsupported => {
            let index = list_index(&field, "extensionsRequired");
            let name = index
                .and_then(|i| root.extensions_required.get(i))
                .map(String::as_str)
                .unwrap_or("?");
            if HANDLED_REQUIRED_EXTENSIONS.contains(&name) {
                return None;
            }
            let field = index.map_or(field.clone(), |i| format!("extensionsRequired[{i}]"));
            Some(Error::format(
                file,
                field,
                format!(
                    "required extension `{name}` is not supported (mien handles {}; textures are never loaded)",
                    HANDLED_REQUIRED_EXTENSIONS.join(", ")
                ),
            ))
        }
        VError::Missing if is_accessor_field(&field, "bufferView") => None,
        VError::Missing if texture_has_source_extension(root, &field) => None,
        // An extension's own attribute semantics (`KHR_gaussian_splatting:SCALE`, …: glTF 2.0
        // allows extensions to define semantics) are not ones the crate knows; a file that uses
        // such an extension keeps them, and the importer lists them as ignored.
        VError::Invalid
            if field.contains(".attributes.")
                && root
                    .extensions_used
                    .iter()
                    .any(|e| EXTENSION_SEMANTICS.contains(&e.as_str())) =>
        {
            None
        }
        other => Some(Error::format(file, field, describe(other))),
    }
}

fn describe(e: VError) -> &'static str {
    match e {
        VError::IndexOutOfBounds => "index out of range",
        VError::Invalid => "invalid value",
        VError::Missing => "required property is missing",
        VError::Oversize => "size exceeds what this machine can address",
        VError::Unsupported => "unsupported extension",
    }
}

/// The crate's path (`meshes[0].attributes["POSITION"].min`, `x[0] = "v"`) in mien's field syntax
/// (`meshes[0].attributes.POSITION.min`).
fn field_syntax(path: &str) -> String {
    let path = path.split(" = ").next().unwrap_or(path);
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(i) = rest.find("[\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find("\"]") {
            Some(j) => {
                out.push('.');
                out.push_str(&after[..j]);
                rest = &after[j + 2..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `Some(i)` when `field` is `name[i]`.
fn list_index(field: &str, name: &str) -> Option<usize> {
    field
        .strip_prefix(name)?
        .strip_prefix('[')?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Whether `field` is `accessors[i].<leaf>`.
fn is_accessor_field(field: &str, leaf: &str) -> bool {
    field
        .strip_prefix("accessors[")
        .and_then(|r| r.split_once("]."))
        .is_some_and(|(i, l)| i.parse::<usize>().is_ok() && l == leaf)
}

/// Whether `field` is `textures[i].source` of a texture that names its image through an extension.
fn texture_has_source_extension(root: &json::Root, field: &str) -> bool {
    let Some((i, "source")) = field
        .strip_prefix("textures[")
        .and_then(|r| r.split_once("]."))
    else {
        return false;
    };
    let Some(t) = i.parse::<usize>().ok().and_then(|i| root.textures.get(i)) else {
        return false;
    };
    t.extensions.as_ref().is_some_and(|x| {
        TEXTURE_SOURCE_EXTENSIONS
            .iter()
            .any(|n| x.others.contains_key(*n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_paths_become_field_syntax() {
        assert_eq!(
            field_syntax(r#"meshes[0].primitives[1].attributes["POSITION"].min"#),
            "meshes[0].primitives[1].attributes.POSITION.min"
        );
        assert_eq!(
            field_syntax(r#"extensionsRequired[2] = "KHR_draco_mesh_compression""#),
            "extensionsRequired[2]"
        );
        assert_eq!(
            list_index("extensionsRequired[2]", "extensionsRequired"),
            Some(2)
        );
        assert!(is_accessor_field("accessors[12].bufferView", "bufferView"));
        assert!(!is_accessor_field("accessors[x].bufferView", "bufferView"));
    }

    fn run(json: &str) -> Result<()> {
        let g = gltf::Gltf::from_slice_without_validation(json.as_bytes()).unwrap();
        crate_validation(g.document.as_json(), "t.gltf")
    }

    #[test]
    fn handled_required_extensions_pass_others_are_named() {
        run(r#"{"asset":{"version":"2.0"},"extensionsUsed":["KHR_mesh_quantization","EXT_meshopt_compression"],
               "extensionsRequired":["KHR_mesh_quantization","EXT_meshopt_compression"]}"#)
        .unwrap();
        let e = run(
            r#"{"asset":{"version":"2.0"},"extensionsUsed":["KHR_draco_mesh_compression"],
                        "extensionsRequired":["KHR_draco_mesh_compression"]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("KHR_draco_mesh_compression") && e.contains("extensionsRequired[0]"),
            "{e}"
        );
    }

    #[test]
    fn accessor_without_view_is_fine_bad_index_is_not() {
        run(r#"{"asset":{"version":"2.0"},"accessors":[{"componentType":5126,"count":3,"type":"VEC3"}]}"#).unwrap();
        let e = run(r#"{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{"POSITION":7}}]}]}"#).unwrap_err().to_string();
        assert!(
            e.contains("meshes[0].primitives[0].attributes.POSITION"),
            "{e}"
        );
    }
}
