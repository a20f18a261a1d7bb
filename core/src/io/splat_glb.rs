//! Splats as glTF: a binary `.glb` with one `POINTS` primitive carrying Khronos'
//! `KHR_gaussian_splatting` extension.
//!
//! Source: the ratified extension (KhronosGroup/glTF `extensions/2.0/Khronos/KHR_gaussian_splatting`):
//! attributes `POSITION` (VEC3 float, with `min`/`max` as glTF 2.0 §5.1.1 requires),
//! `KHR_gaussian_splatting:ROTATION` (VEC4 float, unit quaternion `x y z w`),
//! `KHR_gaussian_splatting:SCALE` (VEC3 float, **linear** σ — not the `.ply`'s log),
//! `KHR_gaussian_splatting:OPACITY` (SCALAR float, **activated** `[0, 1]` — not the `.ply`'s logit),
//! `KHR_gaussian_splatting:SH_DEGREE_0_COEF_0` (VEC3 float, the DC coefficient `(rgb − ½)/C0`), and
//! `COLOR_0` (VEC4 float, linear) as the fallback colour of viewers that draw the points; the
//! extension object `{"kernel": "ellipse", "colorSpace": "srgb_rec709_display"}` (mien's colours
//! are display colours, as every 3DGS file's). The extension is used, not required, so a viewer
//! without it still shows a point cloud. GLB container: glTF 2.0 §4.4 (12-byte header, a JSON chunk
//! padded with spaces, a BIN chunk padded with zeros, 4-byte alignment).

use crate::error::{Error, Result};
use crate::io::ply::gaussian::{SH_C0, decompose_covariance};
use crate::sink::{SlotRange, SplatBuffers};
use crate::texture::srgb_to_linear;

/// What [`encode_splat_glb`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GlbWriteReport {
    /// Splats written.
    pub written: u64,
    /// Slots skipped because their opacity was 0 (cleared slots).
    pub transparent_skipped: u64,
    /// Covariance eigenvalues raised to the `.ply` writer's floor (σ² = 10⁻¹⁴ m²).
    pub scales_floored: u64,
}

/// [`encode_splat_glb`], then the bytes written to `path` atomically
/// ([`crate::io::atomic::write_atomic_bytes`]: the target keeps its old content, or stays absent,
/// on any error). The same shape as [`crate::io::ply::write_splat_ply`].
///
/// # Errors
/// As [`encode_splat_glb`]; [`Error::Io`] naming `path` when writing fails.
pub fn write_splat_glb(
    path: &std::path::Path,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<GlbWriteReport> {
    let (bytes, report) = encode_splat_glb(buffers, ranges)?;
    crate::io::atomic::write_atomic_bytes(path, &bytes)?;
    Ok(report)
}

/// Encode the slots `ranges` of `buffers` as a `.glb` with one `KHR_gaussian_splatting` point
/// primitive (slots of opacity 0 skipped and counted).
///
/// # Errors
/// [`Error::Invalid`] naming the slot for a non-finite centre or covariance; [`Error::Slots`] for a
/// range outside the buffers; [`Error::Limit`] past the GLB's 4 GiB length field.
pub fn encode_splat_glb(
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<(Vec<u8>, GlbWriteReport)> {
    buffers.check_file_ranges(ranges)?;
    let mut rep = GlbWriteReport::default();
    let (slots, skipped) = buffers.visible_slots(ranges);
    rep.transparent_skipped = skipped;
    let n = slots.len();
    // Attribute arrays, each a tightly packed f32 view.
    let (mut pos, mut rot, mut scl, mut opa, mut dc, mut col) = (
        Vec::with_capacity(3 * n),
        Vec::with_capacity(4 * n),
        Vec::with_capacity(3 * n),
        Vec::with_capacity(n),
        Vec::with_capacity(3 * n),
        Vec::with_capacity(4 * n),
    );
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for &i in &slots {
        let bad = |r: &str| Error::Invalid {
            what: format!("glb slot {i}"),
            reason: r.into(),
        };
        let c = &buffers.center[i][..3];
        if !c.iter().all(|x| x.is_finite()) {
            return Err(bad("centre not finite"));
        }
        for k in 0..3 {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
        pos.extend_from_slice(c);
        let sr = decompose_covariance(buffers.covariance(i).map(|r| r.map(f64::from)))
            .ok_or_else(|| bad("covariance not finite"))?;
        rep.scales_floored += u64::from(sr.clamped);
        let [w, x, y, z] = sr.rotation;
        rot.extend([x, y, z, w].map(|v| v as f32));
        scl.extend(sr.log_scale.map(|l| l.exp() as f32));
        let rgba = buffers.rgba(i);
        opa.push(rgba[3]);
        dc.extend(
            rgba[..3]
                .iter()
                .map(|&v| ((f64::from(v) - 0.5) / SH_C0) as f32),
        );
        col.extend([
            srgb_to_linear(rgba[0]),
            srgb_to_linear(rgba[1]),
            srgb_to_linear(rgba[2]),
            rgba[3],
        ]);
    }
    if n == 0 {
        lo = [0.0; 3];
        hi = [0.0; 3];
    }
    // BIN: the six arrays one after another (every one a multiple of 4 bytes).
    let arrays: [(&[f32], &str, &str); 6] = [
        (&pos, "VEC3", "POSITION"),
        (&rot, "VEC4", "KHR_gaussian_splatting:ROTATION"),
        (&scl, "VEC3", "KHR_gaussian_splatting:SCALE"),
        (&opa, "SCALAR", "KHR_gaussian_splatting:OPACITY"),
        (&dc, "VEC3", "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0"),
        (&col, "VEC4", "COLOR_0"),
    ];
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    let mut attributes = serde_json::Map::new();
    for (k, (data, ty, name)) in arrays.iter().enumerate() {
        let offset = bin.len();
        bin.extend_from_slice(bytemuck::cast_slice(data));
        // target 34962 ARRAY_BUFFER: vertex data (glTF 2.0 §5.11.4).
        views.push(serde_json::json!({
            "buffer": 0, "byteOffset": offset, "byteLength": data.len() * 4, "target": 34962
        }));
        let mut acc = serde_json::json!({
            "bufferView": k, "componentType": 5126, "count": n, "type": ty
        });
        if *name == "POSITION" {
            acc["min"] = serde_json::json!(lo);
            acc["max"] = serde_json::json!(hi);
        }
        accessors.push(acc);
        attributes.insert((*name).into(), serde_json::json!(k));
    }
    if bin.is_empty() {
        // A buffer is at least one byte (glTF 2.0 schema); no splat still makes a valid file.
        bin.extend_from_slice(&[0; 4]);
    }
    let json = serde_json::json!({
        "asset": {"version": "2.0", "generator": concat!("mien ", env!("CARGO_PKG_VERSION"))},
        "extensionsUsed": ["KHR_gaussian_splatting"],
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "name": "splats"}],
        "meshes": [{"primitives": [{
            "mode": 0,
            "attributes": attributes,
            "extensions": {"KHR_gaussian_splatting": {"kernel": "ellipse", "colorSpace": "srgb_rec709_display"}}
        }]}],
        "buffers": [{"byteLength": bin.len()}],
        "bufferViews": views,
        "accessors": accessors,
    });
    let out = crate::io::gltf::write_glb(&json, bin, "splat glb")?;
    rep.written = n as u64;
    Ok((out, rep))
}
