//! What a character's surface looks like: glTF materials' base colour (factor, texture, sampler,
//! `KHR_texture_transform`) and the encoded images they point at. Decoding and sampling live in
//! [`crate::texture`]; the lifts read colours through it.
//!
//! Source: glTF 2.0 §3.9.2 "Metallic-Roughness Material" (`baseColorFactor`, `baseColorTexture`,
//! sRGB-encoded texels multiplied by the linear factor and `COLOR_0`), §3.8 "Texture Data"
//! (samplers: `wrapS`/`wrapT` 33071 clamp, 33648 mirrored repeat, 10497 repeat; `magFilter` 9728
//! nearest, 9729 linear), `KHR_texture_transform` (offset, rotation, scale; `u' = T·R·S·u`),
//! `KHR_texture_basisu` (a KTX2 / Basis Universal image as the texture's source).

use std::sync::Arc;

/// Texture coordinate wrap mode of one axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum Wrap {
    /// 10497: the fractional part.
    #[default]
    Repeat,
    /// 33071: clamped to the edge texels.
    Clamp,
    /// 33648: mirrored every other repeat.
    Mirror,
}

impl Wrap {
    /// The glTF enum value's mode, `None` for a value glTF does not define.
    pub fn from_gl(v: u32) -> Option<Wrap> {
        match v {
            10497 => Some(Wrap::Repeat),
            33071 => Some(Wrap::Clamp),
            33648 => Some(Wrap::Mirror),
            _ => None,
        }
    }
}

/// How a texture is sampled (glTF §3.8.4 "Samplers"; no sampler means repeat + linear).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Sampler {
    /// `wrapS`, `wrapT`.
    pub wrap: [Wrap; 2],
    /// `magFilter` 9728: the nearest texel instead of bilinear.
    pub nearest: bool,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            wrap: [Wrap::Repeat; 2],
            nearest: false,
        }
    }
}

/// A base-colour texture reference.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TextureRef {
    /// Index into [`crate::rig::Character::images`].
    pub image: usize,
    /// The glTF texture index (for messages).
    pub texture: usize,
    /// Its sampler.
    pub sampler: Sampler,
    /// Which `TEXCOORD_n` it reads (mien imports `TEXCOORD_0` only).
    pub tex_coord: u32,
    /// `KHR_texture_transform` as a row-major 2×3 affine `[a, b, c, d, e, f]`
    /// (`u' = a·u + b·v + c`, `v' = d·u + e·v + f`); identity when absent.
    pub transform: [f32; 6],
}

/// The identity UV transform.
pub const UV_IDENTITY: [f32; 6] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];

/// glTF `alphaMode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub enum AlphaMode {
    /// Alpha ignored (opacity 1).
    #[default]
    Opaque,
    /// Alpha below the cutoff is transparent, above it opaque.
    Mask(f32),
    /// Alpha is the opacity.
    Blend,
}

/// A material's base colour.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Material {
    /// `materials[i].name`.
    pub name: Option<String>,
    /// `baseColorFactor`, linear RGBA.
    pub base_color: [f32; 4],
    /// `baseColorTexture`, when it has an image mien can read the bytes of.
    pub texture: Option<TextureRef>,
    /// `alphaMode` (with `alphaCutoff`).
    pub alpha: AlphaMode,
}

impl Default for Material {
    /// glTF's default material: white, opaque, untextured.
    fn default() -> Self {
        Material {
            name: None,
            base_color: [1.0; 4],
            texture: None,
            alpha: AlphaMode::Opaque,
        }
    }
}

/// An image's encoded bytes as the file stores them (PNG, JPEG, KTX2), decoded on demand by
/// [`crate::texture::decode`].
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedImage {
    /// Where it came from (`images[3]`, or its URI), for messages.
    pub label: String,
    /// `mimeType`, or the one the URI's extension implies, or empty.
    pub mime: String,
    /// The bytes.
    pub bytes: Arc<[u8]>,
}
