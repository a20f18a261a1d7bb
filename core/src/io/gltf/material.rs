//! Materials and images: each material's base colour (factor, texture with its sampler and
//! `KHR_texture_transform`, alpha mode) and each image's encoded bytes (a buffer view, a base64
//! `data:` URI, or a file inside the model's folder). Nothing here fails an import: an image that
//! cannot be read, or a texture mien cannot use, becomes a note and the colour falls back to the
//! factor.
//!
//! Source: glTF 2.0 §3.9 "Materials", §3.8 "Texture Data", §5.18 "Image" (`uri` or `bufferView` +
//! `mimeType`); `KHR_texture_basisu` and `EXT_texture_webp` (the texture's `source` in the
//! extension, the core `source` as the fallback).

use std::sync::Arc;

use base64::Engine as _;
use gltf::json;
use json::validation::Checked;

use super::buffers::relative_path;
use super::{Ctx, mesh::texture_transform};
use crate::io::read::read_file_capped;
use crate::rig::material::{
    AlphaMode, EncodedImage, Material, Sampler, TextureRef, UV_IDENTITY, Wrap,
};

/// Largest image file read, bytes (64 MiB: a 8192² PNG of noise).
pub const MAX_IMAGE_BYTES: u64 = 64 << 20;

/// Every material's base colour.
pub(super) fn materials(ctx: &mut Ctx) -> Vec<Material> {
    let root = ctx.root;
    let mut out = Vec::with_capacity(root.materials.len());
    for (i, m) in root.materials.iter().enumerate() {
        let pbr = &m.pbr_metallic_roughness;
        let mut base_color = pbr.base_color_factor.0;
        if !base_color.iter().all(|x| x.is_finite()) {
            ctx.note(
                format!("materials[{i}].pbrMetallicRoughness.baseColorFactor"),
                "not finite: white used",
            );
            base_color = [1.0; 4];
        }
        let alpha = match m.alpha_mode {
            Checked::Valid(json::material::AlphaMode::Mask) => {
                AlphaMode::Mask(m.alpha_cutoff.map_or(0.5, |c| c.0))
            }
            Checked::Valid(json::material::AlphaMode::Blend) => AlphaMode::Blend,
            _ => AlphaMode::Opaque,
        };
        let texture = pbr
            .base_color_texture
            .as_ref()
            .and_then(|info| texture_ref(ctx, i, info));
        out.push(Material {
            name: m.name.clone(),
            base_color,
            texture,
            alpha,
        });
    }
    out
}

/// The texture a material's `baseColorTexture` names, or `None` with a note.
fn texture_ref(ctx: &mut Ctx, mi: usize, info: &json::texture::Info) -> Option<TextureRef> {
    let root = ctx.root;
    let field = format!("materials[{mi}].pbrMetallicRoughness.baseColorTexture");
    let ti = info.index.value();
    let Some(tex) = root.textures.get(ti) else {
        ctx.note(
            field,
            format!("texture {ti} does not exist: colour from the factor"),
        );
        return None;
    };
    let image = image_of(ctx, ti)?;
    let tex_coord = info
        .extensions
        .as_ref()
        .and_then(|e| e.others.get("KHR_texture_transform"))
        .and_then(|x| x.get("texCoord"))
        .and_then(serde_json::Value::as_u64)
        .map_or(info.tex_coord, |c| c as u32);
    if tex_coord != 0 {
        ctx.note(
            field,
            format!(
                "reads TEXCOORD_{tex_coord}; mien imports TEXCOORD_0 only: colour from the factor"
            ),
        );
        return None;
    }
    let sampler = tex
        .sampler
        .and_then(|s| root.samplers.get(s.value()))
        .map_or_else(Sampler::default, |s| {
            let wrap = |w: &Checked<json::texture::WrappingMode>| match w {
                Checked::Valid(m) => Wrap::from_gl(m.as_gl_enum()).unwrap_or_default(),
                Checked::Invalid => Wrap::Repeat,
            };
            Sampler {
                wrap: [wrap(&s.wrap_s), wrap(&s.wrap_t)],
                nearest: matches!(
                    s.mag_filter,
                    Some(Checked::Valid(json::texture::MagFilter::Nearest))
                ),
            }
        });
    Some(TextureRef {
        image,
        texture: ti,
        sampler,
        tex_coord,
        transform: texture_transform(info).unwrap_or(UV_IDENTITY),
    })
}

/// Texture extensions that name the texture's image in their own `source`, in the order mien
/// prefers them, with the encoding they carry. Both are decoded ([`crate::texture::decode`]).
/// Source: the `KHR_texture_basisu` and `EXT_texture_webp` specifications ("a client that supports
/// the extension uses its `source`; the core `source`, when present, is the fallback").
pub(crate) const IMAGE_SOURCE_EXTENSIONS: &[(&str, &str)] =
    &[("KHR_texture_basisu", "KTX2"), ("EXT_texture_webp", "WebP")];

/// The image texture `ti` shows: the `source` of the first extension of
/// [`IMAGE_SOURCE_EXTENSIONS`] it carries, else its core `source`; `None` with a note naming the
/// field when neither names an existing image (the `gltf` crate reads an absent core `source` as
/// index `u32::MAX`: that is reported as absent, never as an index).
fn image_of(ctx: &mut Ctx, ti: usize) -> Option<usize> {
    let root = ctx.root;
    let tex = &root.textures[ti];
    let n = root.images.len();
    let others = tex.extensions.as_ref().map(|e| &e.others);
    let mut broken = None;
    for (name, _) in IMAGE_SOURCE_EXTENSIONS {
        let Some(ext) = others.and_then(|o| o.get(*name)) else {
            continue;
        };
        broken = Some(*name);
        let field = format!("textures[{ti}].extensions.{name}.source");
        match ext.get("source").and_then(serde_json::Value::as_u64) {
            Some(s) if s < n as u64 => return Some(s as usize),
            Some(s) => ctx.note(
                field,
                format!(
                    "image {s} does not exist ({n} images): the core `source` is used if present"
                ),
            ),
            None => ctx.note(
                field,
                "missing or not an image index: the core `source` is used if present",
            ),
        }
    }
    let core = tex.source.value();
    if core == u32::MAX as usize {
        // No core source: name any other extension that carries the image.
        let unread: Vec<&str> = others
            .into_iter()
            .flat_map(|o| o.iter())
            .filter(|(_, v)| v.get("source").is_some())
            .map(|(k, _)| k.as_str())
            .filter(|k| !IMAGE_SOURCE_EXTENSIONS.iter().any(|(e, _)| e == k))
            .collect();
        let why = if let Some(name) = broken {
            format!("no core `source` to fall back on after {name}'s")
        } else if unread.is_empty() {
            "no `source` and no image extension mien reads (KHR_texture_basisu, EXT_texture_webp)"
                .to_string()
        } else {
            format!(
                "its image is named only through {}, whose images mien does not decode (KTX2, WebP, PNG and JPEG are)",
                unread.join(", ")
            )
        };
        ctx.note(
            format!("textures[{ti}]"),
            format!("{why}: colour from the factor"),
        );
        return None;
    }
    if core >= n {
        ctx.note(
            format!("textures[{ti}].source"),
            format!("image {core} does not exist ({n} images): colour from the factor"),
        );
        return None;
    }
    Some(core)
}

/// The encoded bytes of every image a material's base colour uses; `None` for the others, and
/// (with a note) where they cannot be read.
pub(super) fn images(ctx: &mut Ctx, materials: &[Material]) -> Vec<Option<EncodedImage>> {
    let root = ctx.root;
    let mut used = vec![false; root.images.len()];
    for t in materials.iter().filter_map(|m| m.texture.as_ref()) {
        used[t.image] = true;
    }
    (0..root.images.len())
        .map(|i| {
            if !used[i] {
                return None;
            }
            let field = format!("images[{i}]");
            match image_bytes(ctx, i) {
                Ok((bytes, mime)) => Some(EncodedImage {
                    label: root.images[i]
                        .uri
                        .as_deref()
                        .filter(|u| !u.starts_with("data:"))
                        .map_or_else(|| field.clone(), |u| format!("{field} ({u})")),
                    mime,
                    bytes: Arc::from(bytes),
                }),
                Err(why) => {
                    ctx.note(
                        field,
                        format!("{why}: its textures fall back to the factor"),
                    );
                    None
                }
            }
        })
        .collect()
}

fn mime_of_uri(uri: &str) -> &'static str {
    let lower = uri.to_ascii_lowercase();
    if lower.ends_with(".png") {
        "image/png"
    } else if lower.ends_with(".jpg") || lower.ends_with(".jpeg") {
        "image/jpeg"
    } else if lower.ends_with(".ktx2") {
        "image/ktx2"
    } else if lower.ends_with(".webp") {
        "image/webp"
    } else {
        ""
    }
}

fn image_bytes(ctx: &mut Ctx, i: usize) -> std::result::Result<(Vec<u8>, String), String> {
    let root = ctx.root;
    let img = &root.images[i];
    let declared = img.mime_type.as_ref().map(|m| m.0.clone());
    if let Some(v) = img.buffer_view {
        let bytes = ctx
            .buffers
            .view(root, v.value())
            .map_err(|e| format!("bufferView {}: {e}", v.value()))?
            .to_vec();
        return Ok((bytes, declared.unwrap_or_default()));
    }
    let Some(uri) = img.uri.as_deref() else {
        return Err("neither a uri nor a bufferView".into());
    };
    if let Some(rest) = uri.strip_prefix("data:") {
        let (meta, payload) = rest.split_once(',').ok_or("a data: URI without a comma")?;
        let mime = meta
            .strip_suffix(";base64")
            .ok_or("a data: URI that is not base64")?;
        if payload.len() as u64 > MAX_IMAGE_BYTES * 4 / 3 + 4 {
            return Err(format!("a data: URI over {MAX_IMAGE_BYTES} bytes"));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload)
            .map_err(|e| format!("data: URI: {e}"))?;
        return Ok((bytes, declared.unwrap_or_else(|| mime.to_string())));
    }
    let rel = relative_path(uri)?;
    let base = ctx
        .buffers
        .base_dir()
        .ok_or_else(|| format!("external image `{uri}` but no base directory was given"))?;
    let bytes = read_file_capped(&base.join(rel), MAX_IMAGE_BYTES).map_err(|e| e.to_string())?;
    Ok((
        bytes,
        declared.unwrap_or_else(|| mime_of_uri(uri).to_string()),
    ))
}
