//! What a parsed (or about to be written) `.aosrig` pack must satisfy beyond its blob shapes: the
//! blob table as a whole, arrays that agree with each other, and values that can pose a head —
//! finite, within the bounds every mien input obeys (positions and deltas within ±1e6 m),
//! invertible transforms, and an ARKit table that resolves against the layout.
//!
//! Source: docs/formats/aosrig.md "Validation"; seed 000 pack reader (refuses rather than clamps).

use glam::Mat4;

use super::forward::from_row_major;
use super::pack::{BLOB_NAMES, GnmPack, PackBuffer, VERSION};
use crate::anim::arkit::arkit_index;
use crate::error::{Error, Result};

/// The largest position, delta or translation a pack may hold, metres (the bound mien applies to
/// every posed vertex).
pub const MAX_METRES: f32 = 1.0e6;

/// Smallest |determinant| of a bind or rest matrix that counts as invertible.
const MIN_DET: f32 = 1e-12;

/// Every blob name known and listed once.
pub(super) fn blob_names(buffers: &[PackBuffer], file: &str) -> Result<()> {
    for (i, b) in buffers.iter().enumerate() {
        if !BLOB_NAMES.contains(&b.name.as_str()) {
            return Err(Error::format_at(
                file,
                "buffers",
                i,
                format!(
                    "unknown blob `{}` (version {VERSION} has {})",
                    b.name,
                    BLOB_NAMES.join(", ")
                ),
            ));
        }
        if let Some(k) = buffers[..i].iter().position(|o| o.name == b.name) {
            return Err(Error::format_at(
                file,
                "buffers",
                i,
                format!("blob `{}` listed again (first at {k})", b.name),
            ));
        }
    }
    Ok(())
}

/// Blobs disjoint, and the blob area ending where the last blob does (nothing trailing, nothing
/// hidden between blobs beyond the 8-byte alignment padding). Run after each blob's own checks.
pub(super) fn blob_spans(buffers: &[PackBuffer], area: u64, file: &str) -> Result<()> {
    let mut spans: Vec<(u64, u64, usize)> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.offset, b.offset.saturating_add(b.length), i))
        .collect();
    spans.sort_unstable();
    let mut end = 0u64;
    for &(start, stop, i) in &spans {
        if start < end {
            return Err(Error::format_at(
                file,
                "buffers",
                i,
                format!(
                    "blob `{}` at byte {start} overlaps the blob before it",
                    buffers[i].name
                ),
            ));
        }
        if start - end >= 8 {
            return Err(Error::format_at(
                file,
                "buffers",
                i,
                format!(
                    "{} unlisted bytes before blob `{}` (padding is under 8)",
                    start - end,
                    buffers[i].name
                ),
            ));
        }
        end = stop;
    }
    if area > end {
        return Err(Error::format(
            file,
            "buffers",
            format!("{} bytes after the last blob", area - end),
        ));
    }
    Ok(())
}

/// Cross-array checks: counts agree, indices in range, numbers finite, skin weights ≥ 0.
pub(super) fn shapes(pack: &GnmPack, file: &str) -> Result<()> {
    let p = pack;
    let v = p.vertex_count();
    let e = p.coeff_count();
    let j = p.header.joints.len();
    let fmt = |f: &str, r: String| Error::format(file, f, r);
    if e != p.header.head_ext.expr_dim() {
        return Err(fmt(
            "basis_scale",
            format!(
                "{e} coefficients, the layout has {}",
                p.header.head_ext.expr_dim()
            ),
        ));
    }
    if p.basis.len() != (v * e * 3).div_ceil(2) {
        return Err(fmt(
            "basis",
            format!("{} words for V={v}, E={e}", p.basis.len()),
        ));
    }
    if p.eye_weights.len() != 2 * v
        || p.skin_index.len() != v
        || p.skin_weight.len() != v
        || p.rest_world.len() != j
    {
        return Err(fmt(
            "arrays",
            "eye weights, skin or rest matrices disagree with V or the joints".into(),
        ));
    }
    if let Some(i) = p.faces.iter().flatten().position(|&x| x as usize >= v) {
        return Err(Error::format_at(
            file,
            "faces",
            i / 3,
            "vertex index out of range",
        ));
    }
    if let Some(q) = &p.quads {
        if let Some(i) = q.iter().flatten().position(|&x| x as usize >= v) {
            return Err(Error::format_at(
                file,
                "quads",
                i / 4,
                "vertex index out of range",
            ));
        }
    }
    for (name, len) in [
        ("uv", p.uv.as_ref().map(Vec::len)),
        ("seam", p.seam.as_ref().map(Vec::len)),
    ] {
        if let Some(n) = len {
            if n != v {
                return Err(fmt(name, format!("{n} entries for {v} vertices")));
            }
        }
    }
    if let Some(i) = p
        .skin_index
        .iter()
        .zip(&p.skin_weight)
        .position(|(ix, w)| (0..4).any(|k| w[k] != 0.0 && ix[k] as usize >= j))
    {
        return Err(Error::format_at(
            file,
            "skin_index",
            i,
            format!("joint outside the {j} joints"),
        ));
    }
    if let Some(i) = p
        .skin_weight
        .iter()
        .position(|w| !w.iter().all(|x| x.is_finite() && *x >= 0.0))
    {
        return Err(Error::format_at(
            file,
            "skin_weight",
            i,
            "negative or not finite",
        ));
    }
    values(p, file)
}

/// A point `(3,)` finite and within ±[`MAX_METRES`].
fn bounded(x: &[f32; 3]) -> bool {
    x.iter().all(|c| c.is_finite() && c.abs() <= MAX_METRES)
}

/// Values that pose a head: positions, deltas and translations finite and within ±1e6 m, no
/// NaN or infinity in the fp16 basis, invertible bind and rest matrices, an ARKit table that
/// resolves against the layout.
fn values(p: &GnmPack, file: &str) -> Result<()> {
    let at = |field: &str, i: usize, r: String| Error::format_at(file, field, i, r);
    if let Some(i) = p.neutral.iter().position(|x| !bounded(x)) {
        return Err(at(
            "neutral",
            i,
            format!("{:?} is not finite within ±1e6 m", p.neutral[i]),
        ));
    }
    if let Some(s) = &p.seam {
        if let Some(i) = s.iter().position(|x| !bounded(x)) {
            return Err(at(
                "seam",
                i,
                format!("{:?} is not finite within ±1e6 m", s[i]),
            ));
        }
    }
    if let Some(i) = p.eye_positions.iter().position(|x| !bounded(x)) {
        return Err(at(
            "eye_positions",
            i,
            format!("{:?} is not finite within ±1e6 m", p.eye_positions[i]),
        ));
    }
    // The basis: every half finite, and each coefficient's largest delta (scale × |half|) bounded.
    let e = p.coeff_count();
    let mut peak = vec![0.0f32; e];
    for i in 0..p.vertex_count() * e * 3 {
        let h = p.half_at(i);
        if !h.is_finite() {
            return Err(at(
                "basis",
                i,
                format!(
                    "vertex {}, coefficient {}: not finite",
                    i / (3 * e),
                    i / 3 % e
                ),
            ));
        }
        let k = i / 3 % e;
        peak[k] = peak[k].max(h.abs());
    }
    for (k, (m, s)) in peak.iter().zip(&p.basis_scale).enumerate() {
        if !s.is_finite() {
            return Err(at("basis_scale", k, "not finite".into()));
        }
        if m * s.abs() > MAX_METRES {
            return Err(at(
                "basis_scale",
                k,
                format!("{s} × the largest basis value {m} moves a vertex over 1e6 m"),
            ));
        }
    }
    if let Some(i) = p.eye_weights.iter().position(|x| !x.is_finite()) {
        return Err(at("eye_weights", i, "not finite".into()));
    }
    let invertible = |m: &Mat4| {
        m.is_finite()
            && m.determinant().abs() >= MIN_DET
            && m.w_axis.truncate().abs().max_element() <= MAX_METRES
    };
    if !invertible(&from_row_major(&p.header.bind_transform)) {
        return Err(Error::format(
            file,
            "bindTransform",
            "not an invertible transform with finite translation within ±1e6 m",
        ));
    }
    if let Some(i) = p
        .rest_world
        .iter()
        .position(|m| !invertible(&from_row_major(m)))
    {
        return Err(at(
            "rest_world",
            i,
            "not an invertible transform with finite translation within ±1e6 m".into(),
        ));
    }
    if let Some(table) = &p.header.arkit {
        let layout = &p.header.head_ext;
        for (channel, terms) in table {
            if arkit_index(channel).is_none() {
                return Err(Error::format(
                    file,
                    format!("arkit.{channel}"),
                    "not an ARKit-52 channel",
                ));
            }
            for (k, t) in terms.iter().enumerate() {
                let field = format!("arkit.{channel}");
                let Some(r) = layout.slice(&t.region) else {
                    return Err(at(
                        &field,
                        k,
                        format!("region `{}` is not in the head_ext layout", t.region),
                    ));
                };
                if t.index >= r.len() {
                    return Err(at(
                        &field,
                        k,
                        format!(
                            "index {} past region `{}` of {}",
                            t.index,
                            t.region,
                            r.len()
                        ),
                    ));
                }
                if !t.gain.is_finite() {
                    return Err(at(&field, k, format!("gain {} is not finite", t.gain)));
                }
            }
        }
    }
    Ok(())
}
