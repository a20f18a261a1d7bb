//! Base-colour textures: decoding (PNG, JPEG and WebP — lossy and lossless, `EXT_texture_webp` —
//! with the `image` crate, KTX2 / Basis Universal with
//! the pure-Rust `basisu` transcoder) and sampling through a glTF sampler and
//! `KHR_texture_transform`.
//!
//! Texels are kept as decoded sRGB bytes; [`Texture::sample`] converts the four texels it reads to
//! linear light (IEC 61966-2-1) before the bilinear blend, as a GPU sampling an `*_SRGB` format
//! does (glTF 2.0 §3.9.2: base-colour texels are sRGB-encoded, alpha linear).

use crate::error::{Error, Result};
use crate::rig::material::{EncodedImage, Sampler, Wrap};

/// Largest decoded image side, texels (16 384: a 1 GiB RGBA8 image).
pub const MAX_SIDE: u32 = 16_384;
/// Largest decoded image, bytes (256 MiB).
pub const MAX_DECODED_BYTES: u64 = 256 << 20;

/// A decoded texture: `(H,W,4)` sRGB-encoded RGBA8, row 0 at `v = 0` (glTF's UV origin is the image's
/// top-left texel).
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    /// Width, texels.
    pub width: u32,
    /// Height, texels.
    pub height: u32,
    /// Texels, row-major from the top row.
    pub texels: Vec<[u8; 4]>,
    /// What it was decoded from (`png`, `jpeg`, `ktx2 (ETC1S)`, …), for reports.
    pub format: String,
}

/// sRGB-encoded byte → linear, a 256-entry table (IEC 61966-2-1).
fn srgb_lut() -> &'static [f32; 256] {
    static LUT: std::sync::OnceLock<[f32; 256]> = std::sync::OnceLock::new();
    LUT.get_or_init(|| std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0)))
}

/// sRGB transfer → linear (IEC 61966-2-1).
pub fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear → sRGB transfer (IEC 61966-2-1).
pub fn linear_to_srgb(c: f32) -> f32 {
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

fn refuse(img: &EncodedImage, reason: impl Into<String>) -> Error {
    Error::format(&img.label, "image", reason)
}

fn check_dims(img: &EncodedImage, w: u32, h: u32) -> Result<()> {
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(refuse(
            img,
            format!("{w}×{h} texels: each side must be 1 to {MAX_SIDE}"),
        ));
    }
    if u64::from(w) * u64::from(h) * 4 > MAX_DECODED_BYTES {
        return Err(Error::Limit {
            what: format!("{}: decoded texture bytes", img.label),
            limit: MAX_DECODED_BYTES,
            found: u64::from(w) * u64::from(h) * 4,
        });
    }
    Ok(())
}

/// A WebP's RIFF container must hold what it declares: the RIFF size (bytes 4..8, little-endian,
/// plus the 8-byte RIFF header) and its first chunk (`VP8 `, `VP8L` or `VP8X`: size at bytes
/// 16..20, plus its 8-byte header) within the bytes present. The VP8 (lossy) decoder reads a cut
/// frame as zeros and returns a grey image rather than an error; this refuses the cut instead.
/// Source: the WebP container specification (RIFF header, "Simple file format").
fn check_riff(img: &EncodedImage) -> Result<()> {
    let b = &img.bytes[..];
    let u32_at = |o: usize| {
        b.get(o..o + 4)
            .map(|x| u64::from(u32::from_le_bytes([x[0], x[1], x[2], x[3]])))
    };
    let riff = u32_at(4).map(|n| n + 8);
    let chunk = u32_at(16).map(|n| 20 + n + (n & 1));
    match (riff, chunk) {
        (Some(r), Some(c)) if r <= b.len() as u64 && c <= r => Ok(()),
        _ => Err(refuse(
            img,
            format!(
                "a cut or damaged WebP: its RIFF header declares {} bytes and its first chunk ends at byte {}, {} bytes are present",
                riff.map_or_else(|| "no".into(), |r| r.to_string()),
                chunk.map_or_else(|| "?".into(), |c| c.to_string()),
                b.len()
            ),
        )),
    }
}

/// Decode an image by its content (the magic bytes; the MIME type only names it in messages).
///
/// # Errors
/// [`Error::Format`] naming the image for an unknown or damaged encoding (GIF, DDS and other
/// formats mien does not decode are named, and a WebP whose RIFF container is cut short), sides
/// over [`MAX_SIDE`]; [`Error::Limit`] over
/// [`MAX_DECODED_BYTES`]. Dimensions are checked from the header before any texel is allocated.
pub fn decode(img: &EncodedImage) -> Result<Texture> {
    let b = &img.bytes[..];
    if b.starts_with(b"\xABKTX 20\xBB\r\n\x1A\n") {
        return decode_ktx2(img);
    }
    let format = match image::guess_format(b) {
        Ok(image::ImageFormat::Png) => "png",
        Ok(image::ImageFormat::Jpeg) => "jpeg",
        Ok(image::ImageFormat::WebP) => {
            check_riff(img)?;
            "webp"
        }
        Ok(f) => {
            return Err(refuse(
                img,
                format!("{f:?} images are not decoded (PNG, JPEG, WebP and KTX2 are)"),
            ));
        }
        Err(_) => {
            return Err(refuse(
                img,
                format!(
                    "not a PNG, JPEG, WebP or KTX2 image{}",
                    if img.mime.is_empty() {
                        String::new()
                    } else {
                        format!(" (declared `{}`)", img.mime)
                    }
                ),
            ));
        }
    };
    let reader = image::ImageReader::new(std::io::Cursor::new(b))
        .with_guessed_format()
        .map_err(|e| refuse(img, e.to_string()))?;
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| refuse(img, e.to_string()))?;
    check_dims(img, w, h)?;
    let mut reader = image::ImageReader::new(std::io::Cursor::new(b))
        .with_guessed_format()
        .map_err(|e| refuse(img, e.to_string()))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES * 2);
    reader.limits(limits);
    let rgba = reader
        .decode()
        .map_err(|e| refuse(img, e.to_string()))?
        .into_rgba8();
    Ok(Texture {
        width: rgba.width(),
        height: rgba.height(),
        texels: bytemuck::cast_slice::<u8, [u8; 4]>(rgba.as_raw()).to_vec(),
        format: format.into(),
    })
}

fn decode_ktx2(img: &EncodedImage) -> Result<Texture> {
    let t = basisu::Transcoder::new(&img.bytes).map_err(|e| refuse(img, format!("KTX2: {e:?}")))?;
    let (w, h) = t.base_dimensions();
    check_dims(img, w, h)?;
    let out = t
        .transcode(0, basisu::TargetFormat::Rgba32, basisu::DecodeFlags::NONE)
        .map_err(|e| refuse(img, format!("KTX2 level 0: {e:?}")))?;
    if out.len() as u64 != u64::from(w) * u64::from(h) * 4 {
        return Err(refuse(
            img,
            format!("KTX2 level 0 transcoded to {} bytes for {w}×{h}", out.len()),
        ));
    }
    Ok(Texture {
        width: w,
        height: h,
        texels: bytemuck::cast_slice::<u8, [u8; 4]>(&out).to_vec(),
        format: format!("ktx2 ({:?})", t.source_format()),
    })
}

/// `x` wrapped into `0..n` by `mode` (glTF §3.8.4: repeat, clamp to edge, mirrored repeat).
#[inline]
fn wrap(x: i64, n: u32, mode: Wrap) -> usize {
    let n = i64::from(n);
    (match mode {
        Wrap::Clamp => x.clamp(0, n - 1),
        Wrap::Repeat => x.rem_euclid(n),
        Wrap::Mirror => {
            let m = x.rem_euclid(2 * n);
            if m < n { m } else { 2 * n - 1 - m }
        }
    }) as usize
}

impl Texture {
    /// The texel at `(x, y)` (wrapped), linear RGB and alpha.
    #[inline]
    fn texel(&self, x: i64, y: i64, s: &Sampler) -> [f32; 4] {
        let (i, j) = (
            wrap(x, self.width, s.wrap[0]),
            wrap(y, self.height, s.wrap[1]),
        );
        let t = self.texels[j * self.width as usize + i];
        let lut = srgb_lut();
        [
            lut[t[0] as usize],
            lut[t[1] as usize],
            lut[t[2] as usize],
            f32::from(t[3]) / 255.0,
        ]
    }

    /// Sample at `uv` (texture space, after any transform): linear RGB, linear alpha. Bilinear
    /// between the four nearest texel centres (texel `i` has its centre at `(i + ½)/W`), or the
    /// nearest texel for a `nearest` sampler. A non-finite `uv` samples texel (0, 0).
    pub fn sample(&self, uv: [f32; 2], s: &Sampler) -> [f32; 4] {
        let uv = if uv[0].is_finite() && uv[1].is_finite() {
            uv
        } else {
            [0.0, 0.0]
        };
        // f64 so UVs far outside [0, 1] (repeat) keep their fraction.
        let x = f64::from(uv[0]) * f64::from(self.width) - 0.5;
        let y = f64::from(uv[1]) * f64::from(self.height) - 0.5;
        let clamp = |v: f64| v.clamp(-1e15, 1e15);
        if s.nearest {
            return self.texel(clamp(x.round()) as i64, clamp(y.round()) as i64, s);
        }
        let (x0, y0) = (clamp(x.floor()), clamp(y.floor()));
        let (fx, fy) = ((x - x0) as f32, (y - y0) as f32);
        let (x0, y0) = (x0 as i64, y0 as i64);
        let a = self.texel(x0, y0, s);
        let b = self.texel(x0 + 1, y0, s);
        let c = self.texel(x0, y0 + 1, s);
        let d = self.texel(x0 + 1, y0 + 1, s);
        std::array::from_fn(|k| {
            (a[k] * (1.0 - fx) + b[k] * fx) * (1.0 - fy) + (c[k] * (1.0 - fx) + d[k] * fx) * fy
        })
    }
}

/// Apply a row-major 2×3 UV affine.
#[inline]
pub fn transform_uv(m: &[f32; 6], uv: [f32; 2]) -> [f32; 2] {
    [
        m[0] * uv[0] + m[1] * uv[1] + m[2],
        m[3] * uv[0] + m[4] * uv[1] + m[5],
    ]
}
