//! Materials and images: each material's base colour (factor, texture with its sampler and
//! `KHR_texture_transform`, alpha mode) and each image's encoded bytes (a buffer view, a base64
//! `data:` URI, or a file inside the model's folder). Nothing here fails an import: an image that
//! cannot be read, or a texture mien cannot use, becomes a note and the colour falls back to the
//! factor.
//!
//! Source: glTF 2.0 §3.9 "Materials", §3.8 "Texture Data", §5.18 "Image" (`uri` or `bufferView` +
//! `mimeType`); `KHR_texture_basisu` (the texture's `source` in the extension).

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
    // KHR_texture_basisu's source first (a KTX2 image), then the core source.
    let ext_source = tex.extensions.as_ref().and_then(|e| {
        e.others
            .get("KHR_texture_basisu")
            .and_then(|b| b.get("source"))
            .and_then(serde_json::Value::as_u64)
    });
    let image = ext_source.map_or(tex.source.value(), |s| s as usize);
    if image >= root.images.len() {
        ctx.note(
            format!("textures[{ti}]"),
            format!("image {image} does not exist: colour from the factor"),
        );
        return None;
    }
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
