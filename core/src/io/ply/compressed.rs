//! SuperSplat's compressed `.ply` (PlayCanvas): a `chunk` element of per-chunk bounds, then a
//! `vertex` element of four packed `u32` per splat, then optionally an `sh` element of quantised
//! rest coefficients. Decoded by the header's property lists (any order, any scalar type that holds
//! the values), never by a fixed stride.
//!
//! Source: the layout SuperSplat 2.x writes and PlayCanvas' engine and `splat-transform` read
//! (their decoders, read for the rules, not copied):
//! - splat `i` belongs to chunk `⌊i / 256⌋`;
//! - `packed_position` and `packed_scale` are 11-10-11 bit unorms (x in bits 21–31, y in 11–20, z in
//!   0–10), each mapped linearly onto the chunk's `[min, max]` (`min_x … max_z`; the scale bounds
//!   `min_scale_* … max_scale_*` are log scales);
//! - `packed_rotation` stores the largest quaternion component's index in bits 30–31 and the other
//!   three, in order, as 10-bit unorms in bits 20–29, 10–19, 0–9, each `(u − ½)·√2`; the largest
//!   is `√(1 − a² − b² − c²)`; the four components in order are `rot_0 … rot_3` (w, x, y, z);
//! - `packed_color` is RGBA8 (R in bits 24–31): RGB mapped onto the chunk's `min_r … max_b` when the
//!   chunk has them (else taken as is) gives `0.5 + C0·f_dc`; A is the opacity itself (a sigmoid).

use super::gaussian::compose_covariance;
use super::reader::{Element, SplatCloud, sh_degree_of};
use crate::error::{Error, Result};

/// Splats per chunk.
pub const CHUNK_SPLATS: u64 = 256;

/// Whether a header's elements are the compressed layout: a `chunk` element and a `vertex` element
/// with `packed_position`.
pub(super) fn is_compressed(elements: &[Element]) -> bool {
    elements.iter().any(|e| e.name == "chunk")
        && elements
            .iter()
            .any(|e| e.name == "vertex" && e.props.iter().any(|p| p.name == "packed_position"))
}

/// `value`'s lowest `bits` bits as a unorm in `[0, 1]`.
fn unorm(value: u32, bits: u32) -> f64 {
    let max = (1u32 << bits) - 1;
    f64::from(value & max) / f64::from(max)
}

/// An 11-10-11 bit triple.
fn unpack_111011(v: u32) -> [f64; 3] {
    [unorm(v >> 21, 11), unorm(v >> 11, 10), unorm(v, 11)]
}

/// The quaternion `(rot_0, rot_1, rot_2, rot_3)` of a 2-10-10-10 packed rotation.
pub fn unpack_rotation(v: u32) -> [f64; 4] {
    let s = std::f64::consts::SQRT_2;
    let abc = [
        (unorm(v >> 20, 10) - 0.5) * s,
        (unorm(v >> 10, 10) - 0.5) * s,
        (unorm(v, 10) - 0.5) * s,
    ];
    let m = (1.0 - abc.iter().map(|x| x * x).sum::<f64>())
        .max(0.0)
        .sqrt();
    let largest = (v >> 30) as usize;
    let mut q = [0.0; 4];
    let mut rest = abc.iter();
    for (k, c) in q.iter_mut().enumerate() {
        *c = if k == largest {
            m
        } else {
            *rest.next().unwrap_or(&0.0)
        };
    }
    q
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a * (1.0 - t) + b * t
}

/// The byte offset of each element's records (elements before the last one read must have
/// scalar properties only), checked against the bytes the file holds.
fn layout(bytes: &[u8], file: &str, elements: &[Element], data: usize) -> Result<Vec<u64>> {
    let mut at = data as u64;
    let mut starts = Vec::with_capacity(elements.len());
    for e in elements {
        if let Some(list) = &e.list {
            let field = format!("element {}.property {list}", e.name);
            return Err(Error::format(
                file,
                field,
                "list properties are not supported",
            ));
        }
        starts.push(at);
        let need = e
            .count
            .checked_mul(e.stride as u64)
            .and_then(|b| b.checked_add(at));
        match need {
            Some(end) if end <= bytes.len() as u64 => at = end,
            _ => {
                return Err(Error::format(
                    file,
                    format!("element {}", e.name),
                    format!(
                        "declares {} records × {} bytes but only {} bytes follow: the file is \
                         truncated or its header is wrong",
                        e.count,
                        e.stride,
                        (bytes.len() as u64).saturating_sub(at)
                    ),
                ));
            }
        }
    }
    Ok(starts)
}

/// Decode a compressed file whose header `elements` [`is_compressed`] says it is.
///
/// # Errors
/// [`Error::Format`] naming `file` and the field: a missing chunk bound or packed property; fewer
/// chunks than `⌈splats / 256⌉`; records past the end of the file; a packed value that is not a
/// whole number in `0..2³²`; a bound that is not finite; an `sh` element whose property count no SH
/// degree gives or whose row count differs from the splats'.
pub(super) fn parse_compressed(
    bytes: &[u8],
    file: &str,
    elements: &[Element],
    data: usize,
) -> Result<SplatCloud> {
    let starts = layout(bytes, file, elements, data)?;
    let index = |name: &str| elements.iter().position(|e| e.name == name);
    let (Some(ci), Some(vi)) = (index("chunk"), index("vertex")) else {
        return Err(Error::format(file, "element chunk/vertex", "missing"));
    };
    let (chunk, vertex) = (&elements[ci], &elements[vi]);
    let col = |e: &Element, name: &str, required: bool| -> Result<Option<(usize, _)>> {
        match e.props.iter().find(|p| p.name == name) {
            Some(p) => Ok(Some((p.offset, p.kind))),
            None if required => Err(Error::format(
                file,
                format!("element {}.property {name}", e.name),
                "missing",
            )),
            None => Ok(None),
        }
    };
    let bounds = [
        "min_x",
        "min_y",
        "min_z",
        "max_x",
        "max_y",
        "max_z",
        "min_scale_x",
        "min_scale_y",
        "min_scale_z",
        "max_scale_x",
        "max_scale_y",
        "max_scale_z",
    ];
    let colours = ["min_r", "min_g", "min_b", "max_r", "max_g", "max_b"];
    let bound_cols = bounds
        .iter()
        .map(|n| col(chunk, n, true).map(|c| c.unwrap_or((0, super::ScalarKind::F32))))
        .collect::<Result<Vec<_>>>()?;
    let colour_cols = colours
        .iter()
        .map(|n| col(chunk, n, false))
        .collect::<Result<Vec<_>>>()?;
    let has_colour = colour_cols.iter().all(Option::is_some);
    let packed = [
        "packed_position",
        "packed_rotation",
        "packed_scale",
        "packed_color",
    ];
    let packed_cols = packed
        .iter()
        .map(|n| col(vertex, n, true).map(|c| c.unwrap_or((0, super::ScalarKind::U32))))
        .collect::<Result<Vec<_>>>()?;
    let n = vertex.count;
    if chunk.count < n.div_ceil(CHUNK_SPLATS) {
        return Err(Error::format(
            file,
            "element chunk",
            format!(
                "{} chunks for {n} splats: {} are needed (256 splats each)",
                chunk.count,
                n.div_ceil(CHUNK_SPLATS)
            ),
        ));
    }
    // Rest coefficients: read past (a cloud keeps only their count), but checked.
    let sh_rest = match index("sh") {
        None => 0,
        Some(si) => {
            let sh = &elements[si];
            let rest = sh.props.len();
            if sh_degree_of(rest).is_none() || sh.count != n {
                return Err(Error::format(
                    file,
                    "element sh",
                    format!(
                        "{rest} properties × {} rows: expected 9, 24 or 45 properties (SH degree \
                         1–3) and one row per splat ({n})",
                        sh.count
                    ),
                ));
            }
            rest
        }
    };
    let read = |start: u64, e: &Element, row: u64, (off, kind): (usize, super::ScalarKind)| {
        let at = start + row * e.stride as u64 + off as u64;
        bytes.get(at as usize..).and_then(|b| kind.read(b))
    };
    // Chunk bounds, checked finite once.
    let chunks = n.div_ceil(CHUNK_SPLATS) as usize;
    let mut chunk_vals = Vec::with_capacity(chunks);
    for c in 0..chunks as u64 {
        let mut v = [0.0f64; 18];
        for (k, &cc) in bound_cols.iter().enumerate() {
            v[k] = read(starts[ci], chunk, c, cc).unwrap_or(f64::NAN);
        }
        if has_colour {
            for (k, cc) in colour_cols.iter().enumerate() {
                v[12 + k] = cc.map_or(f64::NAN, |cc| {
                    read(starts[ci], chunk, c, cc).unwrap_or(f64::NAN)
                });
            }
        }
        if let Some(k) = (0..if has_colour { 18 } else { 12 }).find(|&k| !v[k].is_finite()) {
            let name = if k < 12 { bounds[k] } else { colours[k - 12] };
            return Err(Error::format_at(
                file,
                format!("element chunk.property {name}"),
                c as usize,
                "not finite",
            ));
        }
        chunk_vals.push(v);
    }
    let mut cloud = SplatCloud {
        center: Vec::with_capacity(n as usize),
        rgba: Vec::with_capacity(n as usize),
        covariance: Vec::with_capacity(n as usize),
        properties: vertex.props.clone(),
        sh_rest,
    };
    for i in 0..n {
        let mut words = [0u32; 4];
        for (k, &pc) in packed_cols.iter().enumerate() {
            let x = read(starts[vi], vertex, i, pc);
            words[k] = match x {
                Some(x) if x >= 0.0 && x <= f64::from(u32::MAX) && x.fract() == 0.0 => x as u32,
                _ => {
                    return Err(Error::format_at(
                        file,
                        format!("property {}", packed[k]),
                        i as usize,
                        "not a whole number in 0..2³²",
                    ));
                }
            };
        }
        let b = &chunk_vals[(i / CHUNK_SPLATS) as usize];
        let p = unpack_111011(words[0]);
        let s = unpack_111011(words[2]);
        let center = [0, 1, 2].map(|k| lerp(b[k], b[3 + k], p[k]) as f32);
        let log_scale = [0, 1, 2].map(|k| lerp(b[6 + k], b[9 + k], s[k]));
        let rot = unpack_rotation(words[1]);
        let c = [
            unorm(words[3] >> 24, 8),
            unorm(words[3] >> 16, 8),
            unorm(words[3] >> 8, 8),
            unorm(words[3], 8),
        ];
        let rgb = [0, 1, 2].map(|k| {
            if has_colour {
                lerp(b[12 + k], b[15 + k], c[k])
            } else {
                c[k]
            }
        });
        let cov = compose_covariance(log_scale, rot)
            .map(|m| m.map(|row| row.map(|x| x as f32)))
            .filter(|m| m.iter().flatten().all(|x| x.is_finite()))
            .ok_or_else(|| {
                Error::format_at(
                    file,
                    "property packed_scale",
                    i as usize,
                    "covariance overflows",
                )
            })?;
        cloud.center.push(center);
        cloud
            .rgba
            .push([rgb[0] as f32, rgb[1] as f32, rgb[2] as f32, c[3] as f32]);
        cloud.covariance.push(cov);
    }
    Ok(cloud)
}
