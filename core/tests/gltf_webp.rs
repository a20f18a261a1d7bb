//! `EXT_texture_webp` (what VRoid Studio and many web pipelines write) on small files built here:
//! the WebP image is found through the extension's `source`, decoded, and colours the lift; the
//! core `source` is the fallback; textures whose image mien cannot read are notes naming the
//! field, never a bogus index; a required texture extension is never called "not needed".
//!
//! The shared data holds no file using `EXT_texture_webp` (checked 2026-12-03: `grep -rli webp
//! ../shared/data` finds only a corrupt HTML page), so every input here is hand-built; the WebP
//! bytes come from the `image` crate's lossless encoder.

use base64::Engine as _;
use mien_core::io::gltf::import_gltf_bytes;
use mien_core::lift::SurfaceColors;
use mien_core::rig::RigData;
use serde_json::{Value, json};

mod gltf_common;
use gltf_common::{f32_bytes, with_data_uri};

/// The 2×2 texture, sRGB bytes, row 0 on top: top-left, top-right, bottom-left, bottom-right.
const TEXELS: [[u8; 4]; 4] = [
    [200, 30, 90, 255],
    [20, 180, 60, 255],
    [40, 70, 230, 255],
    [250, 240, 10, 255],
];

/// A lossless WebP of `TEXELS` (RIFF … WEBP VP8L).
fn webp() -> Vec<u8> {
    let mut out = Vec::new();
    let raw: Vec<u8> = TEXELS.iter().flatten().copied().collect();
    image::codecs::webp::WebPEncoder::new_lossless(&mut out)
        .encode(&raw, 2, 2, image::ExtendedColorType::Rgba8)
        .unwrap();
    assert_eq!(&out[..4], b"RIFF");
    assert_eq!(&out[8..12], b"WEBP");
    out
}

/// A 2×2 PNG of one colour.
fn png(c: [u8; 4]) -> Vec<u8> {
    let mut out = Vec::new();
    let raw: Vec<u8> = [c; 4].iter().flatten().copied().collect();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        &raw,
        2,
        2,
        image::ExtendedColorType::Rgba8,
    )
    .unwrap();
    out
}

fn data_uri(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// One triangle whose corners sit on the centres of texels top-left, top-right and bottom-left
/// (UV `(¼,¼)`, `(¾,¼)`, `(¼,¾)`), a material with a base colour texture 0 (nearest sampler) and
/// the WebP image in buffer view 1 (`image/webp`, as a GLB from VRoid Studio stores it); `edit`
/// changes the document.
fn doc(edit: impl Fn(&mut Value)) -> Vec<u8> {
    let mut bin = f32_bytes(&[
        0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, // POSITION
        0.25, 0.25, 0.75, 0.25, 0.25, 0.75, // TEXCOORD_0
    ]);
    let image = webp();
    bin.extend_from_slice(&image);
    let mut d = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "material": 0}]}],
        "bufferViews": [
            {"buffer": 0, "byteLength": 60},
            {"buffer": 0, "byteOffset": 60, "byteLength": image.len()}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "type": "VEC3", "count": 3, "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 0, "byteOffset": 36, "componentType": 5126, "type": "VEC2", "count": 3}
        ],
        "extensionsUsed": ["EXT_texture_webp"],
        "extensionsRequired": ["EXT_texture_webp"],
        "images": [{"bufferView": 1, "mimeType": "image/webp"}],
        "samplers": [{"magFilter": 9728, "minFilter": 9728}],
        "textures": [{"sampler": 0, "extensions": {"EXT_texture_webp": {"source": 0}}}],
        "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]
    });
    edit(&mut d);
    with_data_uri(d, &bin)
}

/// The lift's colour at each corner of triangle 0, sRGB in `[0, 1]`.
fn corner_colours(bytes: &[u8]) -> ([[f32; 4]; 3], mien_core::lift::color::ColorReport) {
    let c = import_gltf_bytes(bytes, None, "webp.gltf").unwrap();
    let rig = RigData::from_character(&c).unwrap();
    let colors = SurfaceColors::from_character(&c, &rig).unwrap();
    let at = |b: [f32; 3]| colors.color(0, b);
    (
        [
            at([1.0, 0.0, 0.0]),
            at([0.0, 1.0, 0.0]),
            at([0.0, 0.0, 1.0]),
        ],
        colors.report.clone(),
    )
}

fn assert_texels(got: [[f32; 4]; 3], want: [[u8; 4]; 3]) {
    for (g, w) in got.iter().zip(want) {
        for k in 0..4 {
            assert!(
                (g[k] - f32::from(w[k]) / 255.0).abs() < 2e-3,
                "got {got:?}, want {want:?}"
            );
        }
    }
}

/// The required extension's image is decoded and each corner takes its texel's colour: before
/// WebP support this was a white triangle and a note "image 4294967295 does not exist".
#[test]
fn a_webp_texture_colours_the_lift() {
    let bytes = doc(|_| {});
    let c = import_gltf_bytes(&bytes, None, "webp.gltf").unwrap();
    assert_eq!(c.materials[0].texture.as_ref().map(|t| t.image), Some(0));
    assert!(c.images[0].is_some());
    for n in &c.notes {
        assert!(
            !n.message.contains("4294967295") && !n.message.contains("EXT_texture_webp"),
            "{n:?}"
        );
    }
    let tex = mien_core::texture::decode(c.images[0].as_ref().unwrap()).unwrap();
    assert_eq!((tex.width, tex.height, tex.format.as_str()), (2, 2, "webp"));
    assert_eq!(tex.texels, TEXELS);
    let (got, report) = corner_colours(&bytes);
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(report.textured_triangles, 1);
    assert_texels(got, [TEXELS[0], TEXELS[1], TEXELS[2]]);
}

/// The surface lift of the WebP-textured triangle is in its colours, not the white of an
/// undecoded texture: a gaussian inside one texel takes that texel's colour (nearest sampler;
/// one on a texel edge blends its neighbours), at least half of them sit inside one, and the
/// three texels the triangle's UVs cover (top-left, top-right, bottom-left) all appear.
#[test]
fn the_surface_lift_of_a_webp_textured_triangle_is_in_its_colours() {
    let c = import_gltf_bytes(&doc(|_| {}), None, "webp.gltf").unwrap();
    let rig = RigData::from_character(&c).unwrap();
    let colors = SurfaceColors::from_character(&c, &rig).unwrap();
    let lift = mien_core::lift::surface_lift(
        &rig.positions,
        &rig.normals,
        &rig.triangles,
        &colors,
        &mien_core::lift::SurfaceOptions::default(),
    )
    .unwrap();
    let n = lift.gaussians.len();
    assert!(n > 3, "{n}");
    let mut seen = [0usize; 4];
    for g in &lift.gaussians {
        let got = mien_core::sink::unpack4x8unorm(g.color);
        assert!(got[..3].iter().any(|&x| x < 0.9), "white gaussian {got:?}");
        if let Some(k) = (0..4).find(|&k| {
            (0..3).all(|c| (got[c] - f32::from(TEXELS[k][c]) / 255.0).abs() <= 2.0 / 255.0)
        }) {
            seen[k] += 1;
        }
    }
    assert!(
        seen[..3].iter().all(|&k| k > 0) && seen[3] == 0,
        "{seen:?} of {n}"
    );
    assert!(2 * seen.iter().sum::<usize>() >= n, "{seen:?} of {n}");
}

/// The extension's `source` wins over the core one (a PNG fallback for clients without WebP);
/// an extension naming no existing image falls back to the core `source`, with a note naming the
/// field.
#[test]
fn the_extension_source_wins_and_the_core_source_is_the_fallback() {
    let grey = [128, 128, 128, 255];
    let with_png = |ext_source: Value| {
        doc(move |d| {
            d["images"]
                .as_array_mut()
                .unwrap()
                .push(json!({"uri": data_uri("image/png", &png(grey))}));
            d["textures"][0]["source"] = json!(1);
            d["textures"][0]["extensions"]["EXT_texture_webp"]["source"] = ext_source.clone();
            d["extensionsRequired"] = json!([]);
        })
    };
    let (got, _) = corner_colours(&with_png(json!(0)));
    assert_texels(got, [TEXELS[0], TEXELS[1], TEXELS[2]]);

    let bytes = with_png(json!(7));
    let c = import_gltf_bytes(&bytes, None, "webp.gltf").unwrap();
    assert!(
        c.notes.iter().any(
            |n| n.field == "textures[0].extensions.EXT_texture_webp.source"
                && n.message.contains("image 7 does not exist")
        ),
        "{:?}",
        c.notes
    );
    let (got, report) = corner_colours(&bytes);
    assert_eq!(report.textures[0].1, "png");
    assert_texels(got, [grey; 3]);

    // A broken extension source and no core source: both named, the factor used.
    let c = import_gltf_bytes(
        &doc(|d| d["textures"][0]["extensions"]["EXT_texture_webp"]["source"] = json!(7)),
        None,
        "webp.gltf",
    )
    .unwrap();
    assert!(c.materials[0].texture.is_none());
    assert!(
        c.notes.iter().any(|n| n.field == "textures[0]"
            && n.message
                .contains("no core `source` to fall back on after EXT_texture_webp's")),
        "{:?}",
        c.notes
    );
    assert!(!c.notes.iter().any(|n| n.message.contains("4294967295")));
}

/// A texture without a readable image is a note naming it and what is missing — never the
/// `gltf` crate's placeholder index — and an image in a format mien does not decode is reported
/// by name while the triangle keeps the factor.
#[test]
fn unreadable_textures_are_clear_notes_never_a_bogus_index() {
    // Only MSFT_texture_dds names the image.
    let bytes = doc(|d| {
        d["textures"][0]["extensions"] = json!({"MSFT_texture_dds": {"source": 0}});
        d["extensionsUsed"] = json!(["MSFT_texture_dds"]);
        d["extensionsRequired"] = json!([]);
        d["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] = json!([0.5, 0.25, 1.0, 1.0]);
    });
    let c = import_gltf_bytes(&bytes, None, "webp.gltf").unwrap();
    let note = c.notes.iter().find(|n| n.field == "textures[0]");
    assert!(
        note.is_some_and(|n| n.message.contains("MSFT_texture_dds")
            && n.message.contains("colour from the factor")),
        "{:?}",
        c.notes
    );
    assert!(c.materials[0].texture.is_none());
    // No source at all.
    let bytes = doc(|d| {
        d["textures"][0] = json!({});
        d["extensionsUsed"] = json!([]);
        d["extensionsRequired"] = json!([]);
    });
    // No source at all: the `gltf` crate's validation refuses the file, naming the field.
    let e = import_gltf_bytes(&bytes, None, "webp.gltf")
        .unwrap_err()
        .to_string();
    assert!(e.contains("textures[0].source"), "{e}");
    // A GIF behind the WebP extension: decoded by no one, named in the colour report.
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec();
    let bytes = doc(|d| {
        d["images"][0] = json!({"uri": data_uri("image/webp", &gif)});
    });
    let (got, report) = corner_colours(&bytes);
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert!(
        report.failed[0].contains("images[0]") && report.failed[0].contains("Gif"),
        "{report:?}"
    );
    assert_texels(got, [[255; 4]; 3]);
}

/// A required extension is never called "not needed": `EXT_texture_webp` is read, so it is not in
/// the ignored-extensions note; a used-only extension mien does not read still is.
#[test]
fn a_required_texture_extension_is_not_called_not_needed() {
    let c = import_gltf_bytes(
        &doc(|d| d["extensionsUsed"] = json!(["EXT_texture_webp", "KHR_materials_unlit"])),
        None,
        "webp.gltf",
    )
    .unwrap();
    let ignored: Vec<_> = c
        .notes
        .iter()
        .filter(|n| n.message.contains("not needed"))
        .collect();
    assert_eq!(ignored.len(), 1, "{:?}", c.notes);
    assert!(ignored[0].message.contains("KHR_materials_unlit"));
    assert!(!ignored[0].message.contains("EXT_texture_webp"));
    assert_eq!(c.required_extensions, ["EXT_texture_webp"]);
}

/// The `gltf` fuzz target's hand-written seed (`mien_core::fuzz`) imports, so the fuzzer starts
/// inside the texture-source rules: texture 0 through EXT_texture_webp, texture 1 through
/// KHR_texture_basisu (preferred: its broken EXT_texture_webp source is never read).
#[test]
fn the_gltf_fuzz_seed_reaches_the_texture_rules() {
    let seeds = mien_core::fuzz::Target::Gltf.builtin_seeds();
    let c = import_gltf_bytes(&seeds[0], None, "seed.gltf").unwrap();
    let images: Vec<_> = c
        .materials
        .iter()
        .map(|m| m.texture.as_ref().map(|t| t.image))
        .collect();
    assert_eq!(images, [Some(0), Some(0)]);
    assert!(
        !c.notes.iter().any(|n| n.field.starts_with("textures")),
        "{:?}",
        c.notes
    );
}

/// A lossy WebP (VP8, what VRoid Studio and most web pipelines write): a 4×4 image of one sRGB
/// colour (200, 30, 90) encoded here with libwebp's `cwebp -q 90 -m 6 -sharp_yuv` (60 bytes);
/// libwebp's own `dwebp` decodes it to (199, 30, 89). Every texel must come back within 4 of
/// the colour (YUV 4:2:0 and quantisation), opaque.
#[test]
fn a_lossy_webp_decodes_to_its_colour() {
    // The same bytes seed the `texture` fuzz target.
    const LOSSY: [u8; 60] = mien_core::fuzz::LOSSY_WEBP_SEED;
    let img = mien_core::rig::material::EncodedImage {
        label: "lossy.webp".into(),
        mime: "image/webp".into(),
        bytes: std::sync::Arc::from(&LOSSY[..]),
    };
    let t = mien_core::texture::decode(&img).unwrap();
    assert_eq!((t.width, t.height, t.format.as_str()), (4, 4, "webp"));
    for px in &t.texels {
        for (k, want) in [200u8, 30, 90, 255].into_iter().enumerate() {
            assert!(px[k].abs_diff(want) <= 4, "{px:?}");
        }
    }
    // Cut short: a clear refusal naming the image, never a panic (the VP8 decoder alone returns
    // a grey image for this cut).
    let cut = mien_core::rig::material::EncodedImage {
        bytes: std::sync::Arc::from(&LOSSY[..40]),
        ..img
    };
    let e = mien_core::texture::decode(&cut).unwrap_err().to_string();
    assert!(
        e.contains("lossy.webp") && e.contains("declares 60 bytes") && e.contains("40 bytes"),
        "{e}"
    );
    // Every cut, lossy or lossless: refused, never a panic.
    for bytes in [LOSSY.to_vec(), webp()] {
        for len in 0..bytes.len() {
            let cut = mien_core::rig::material::EncodedImage {
                label: "cut.webp".into(),
                mime: String::new(),
                bytes: std::sync::Arc::from(&bytes[..len]),
            };
            assert!(
                mien_core::texture::decode(&cut).is_err(),
                "{len} bytes decoded"
            );
        }
    }
}
