//! The glTF-Validator's rules a baked animation relies on, checked on the file as written: what
//! [`super::append_animation`] promises and what `verify` re-checks on a file read back.
//!
//! Source: glTF 2.0 §3.11 "Animations" and §5.3–5.6 (the JSON schema: `channels` and `samplers`
//! have `minItems: 1`; `interpolation` is `LINEAR`, `STEP` or `CUBICSPLINE`), §3.6.2 "Accessors"
//! (`min`/`max`, data inside the buffer view, the view inside the buffer), and the Khronos
//! glTF-Validator's issue codes, named in every refusal so a user can look them up:
//!
//! | code | rule |
//! |---|---|
//! | `EMPTY_ENTITY` | an animation has at least one channel and one sampler |
//! | `UNRESOLVED_REFERENCE` | every sampler, node, accessor and buffer view index exists |
//! | `ANIMATION_DUPLICATE_TARGETS` | no two channels drive the same node's same path |
//! | `ANIMATION_CHANNEL_TARGET_NODE_WEIGHTS_NO_MORPHS` | `weights` only on a node whose mesh has targets |
//! | `ANIMATION_SAMPLER_INPUT_ACCESSOR_INVALID_FORMAT` | input is a FLOAT SCALAR accessor |
//! | `ANIMATION_SAMPLER_INPUT_ACCESSOR_WITHOUT_BOUNDS` | input declares `min` and `max` |
//! | `ACCESSOR_MIN_MISMATCH` / `ACCESSOR_MAX_MISMATCH` | the declared bounds are the data's |
//! | `ANIMATION_SAMPLER_INPUT_ACCESSOR_NON_INCREASING` | key times increase strictly |
//! | `ACCESSOR_ANIMATION_INPUT_NEGATIVE` | key times are ≥ 0 |
//! | `ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_FORMAT` | FLOAT VEC3 (translation, scale), VEC4 (rotation), SCALAR (weights) |
//! | `ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_COUNT` | outputs = keys × targets (× 3 for CUBICSPLINE) |
//! | `ACCESSOR_INVALID_FLOAT` | no NaN or infinity |
//! | `ACCESSOR_NON_UNIT` | rotations are unit quaternions (within [`UNIT_TOLERANCE`]) |
//! | `ACCESSOR_TOO_LONG` / `BUFFER_VIEW_TOO_LONG` | data inside its view, views inside the BIN chunk |
//!
//! mien writes tightly packed FLOAT data only; any other component type in a baked animation is
//! refused as not mien's (the validator would accept normalized integers).

use serde_json::Value;

use crate::error::{Error, Result};
use crate::io::gltf::container;

/// How far a rotation key's length may stray from 1 (mien's bound; mien writes normalised
/// quaternions, off by f32 rounding only).
pub const UNIT_TOLERANCE: f32 = 5e-3;

/// What [`check_animation`] read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnimationCheck {
    /// Channels C.
    pub channels: usize,
    /// Samplers.
    pub samplers: usize,
    /// Keys over all samplers' inputs (a shared input counted once per sampler).
    pub keys: u64,
}

fn rule(file: &str, index: usize, where_: &str, code: &str, what: String) -> Error {
    Error::Invalid {
        what: format!("{file}: animations[{index}]{where_}"),
        reason: format!("{what} (glTF-Validator {code})"),
    }
}

/// One FLOAT accessor's data, bounds-checked against its view and the BIN chunk.
struct Floats<'a> {
    ty: &'a str,
    count: usize,
    values: Vec<f32>,
}

fn width(ty: &str) -> Option<usize> {
    match ty {
        "SCALAR" => Some(1),
        "VEC2" => Some(2),
        "VEC3" => Some(3),
        "VEC4" => Some(4),
        _ => None,
    }
}

/// Read accessor `a` (FLOAT, any stride) from `root` and `bin`; `err(code, what)` builds the
/// refusal.
fn floats<'a>(
    root: &'a Value,
    bin: &[u8],
    a: &Value,
    err: &dyn Fn(&str, String) -> Error,
) -> Result<Floats<'a>> {
    let Some(ai) = a.as_u64() else {
        return Err(err("UNRESOLVED_REFERENCE", "no accessor".into()));
    };
    let acc = root["accessors"].get(ai as usize).ok_or_else(|| {
        err(
            "UNRESOLVED_REFERENCE",
            format!("accessor {ai} does not exist"),
        )
    })?;
    let ty = acc["type"].as_str().unwrap_or("");
    let w = width(ty).ok_or_else(|| {
        err(
            "ACCESSOR_INVALID_TYPE",
            format!("accessor {ai} has type {}", acc["type"]),
        )
    })?;
    if acc["componentType"] != 5126 {
        return Err(err(
            "ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_FORMAT",
            format!(
                "accessor {ai} has componentType {} where mien writes FLOAT (5126)",
                acc["componentType"]
            ),
        ));
    }
    let count = acc["count"].as_u64().unwrap_or(0) as usize;
    if count == 0 {
        return Err(err("EMPTY_ENTITY", format!("accessor {ai} has count 0")));
    }
    let vi = acc["bufferView"].as_u64().ok_or_else(|| {
        err(
            "UNRESOLVED_REFERENCE",
            format!("accessor {ai} has no buffer view (mien writes its keys)"),
        )
    })?;
    let view = root["bufferViews"].get(vi as usize).ok_or_else(|| {
        err(
            "UNRESOLVED_REFERENCE",
            format!("accessor {ai}: buffer view {vi} does not exist"),
        )
    })?;
    if view["buffer"].as_u64() != Some(0) {
        return Err(err(
            "UNRESOLVED_REFERENCE",
            format!("buffer view {vi} is not in the GLB's BIN chunk (buffer 0)"),
        ));
    }
    let v_off = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let v_len = view["byteLength"].as_u64().unwrap_or(0) as usize;
    if v_off.checked_add(v_len).is_none_or(|end| end > bin.len()) {
        return Err(err(
            "BUFFER_VIEW_TOO_LONG",
            format!(
                "buffer view {vi} ({v_len} bytes at {v_off}) runs past the BIN chunk ({} bytes)",
                bin.len()
            ),
        ));
    }
    let a_off = acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    let stride = view["byteStride"].as_u64().map_or(4 * w, |s| s as usize);
    if stride < 4 * w {
        return Err(err(
            "BUFFER_VIEW_INVALID_BYTE_STRIDE",
            format!("buffer view {vi} has stride {stride} for {w} floats"),
        ));
    }
    let need = (count - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(4 * w))
        .and_then(|x| x.checked_add(a_off));
    if need.is_none_or(|n| n > v_len) {
        return Err(err(
            "ACCESSOR_TOO_LONG",
            format!("accessor {ai} ({count} × {ty}) does not fit buffer view {vi} ({v_len} bytes)"),
        ));
    }
    let data = &bin[v_off + a_off..v_off + v_len];
    let mut values = Vec::with_capacity(count * w);
    for e in 0..count {
        for k in 0..w {
            let o = e * stride + 4 * k;
            let b = [data[o], data[o + 1], data[o + 2], data[o + 3]];
            let x = f32::from_le_bytes(b);
            if !x.is_finite() {
                return Err(err(
                    "ACCESSOR_INVALID_FLOAT",
                    format!("accessor {ai} element {e} is {x}"),
                ));
            }
            values.push(x);
        }
    }
    Ok(Floats { ty, count, values })
}

/// Morph targets of the mesh on node `node` (its first primitive's; glTF requires all primitives
/// of a mesh to have the same count), or `None` for a node without a mesh.
fn target_count(root: &Value, node: usize) -> Option<usize> {
    let mesh = root["nodes"][node]["mesh"].as_u64()?;
    Some(
        root["meshes"][mesh as usize]["primitives"][0]["targets"]
            .as_array()
            .map_or(0, Vec::len),
    )
}

/// Check animation `index` of the GLB `bytes` (named `file` in messages) against the rules in the
/// module docs.
///
/// # Errors
/// [`Error::Format`] for bytes that are not a GLB; [`Error::Invalid`] naming the file, the
/// animation, the channel or sampler index and the validator's issue code for the first rule
/// broken (a missing animation is `UNRESOLVED_REFERENCE`).
pub fn check_animation(bytes: &[u8], file: &str, index: usize) -> Result<AnimationCheck> {
    let parts = container::split(bytes, file)?;
    let root: Value = serde_json::from_slice(parts.json)
        .map_err(|e| Error::format(file, "JSON", e.to_string()))?;
    let bin = parts.bin.unwrap_or(&[]);
    let Some(anim) = root["animations"].get(index) else {
        return Err(rule(
            file,
            index,
            "",
            "UNRESOLVED_REFERENCE",
            "the file has no such animation".into(),
        ));
    };
    let empty = Vec::new();
    let channels = anim["channels"].as_array().unwrap_or(&empty);
    let samplers = anim["samplers"].as_array().unwrap_or(&empty);
    for (name, list) in [("channels", channels), ("samplers", samplers)] {
        if list.is_empty() {
            return Err(rule(
                file,
                index,
                &format!(".{name}"),
                "EMPTY_ENTITY",
                format!("an animation needs at least one of its {name}; this one has none"),
            ));
        }
    }
    let nodes = root["nodes"].as_array().map_or(0, Vec::len);
    let mut targets_seen: Vec<(u64, &str)> = Vec::new();
    let mut report = AnimationCheck {
        channels: channels.len(),
        samplers: samplers.len(),
        keys: 0,
    };
    for (ci, c) in channels.iter().enumerate() {
        let at = format!(".channels[{ci}]");
        let err = |code: &str, what: String| rule(file, index, &at, code, what);
        let node = c["target"]["node"]
            .as_u64()
            .filter(|&n| (n as usize) < nodes)
            .ok_or_else(|| {
                err(
                    "UNRESOLVED_REFERENCE",
                    format!("target node {} (the file has {nodes})", c["target"]["node"]),
                )
            })?;
        let path = c["target"]["path"].as_str().unwrap_or("");
        let want = match path {
            "translation" | "scale" => "VEC3",
            "rotation" => "VEC4",
            "weights" => "SCALAR",
            other => {
                return Err(err(
                    "INVALID_VALUE",
                    format!("target path `{other}` is not translation, rotation, scale or weights"),
                ));
            }
        };
        if targets_seen.contains(&(node, path)) {
            return Err(err(
                "ANIMATION_DUPLICATE_TARGETS",
                format!("node {node}'s {path} is driven by an earlier channel too"),
            ));
        }
        targets_seen.push((node, path));
        let per_key = if path == "weights" {
            match target_count(&root, node as usize) {
                Some(t) if t > 0 => t,
                _ => {
                    return Err(err(
                        "ANIMATION_CHANNEL_TARGET_NODE_WEIGHTS_NO_MORPHS",
                        format!("node {node} has no mesh with morph targets to weight"),
                    ));
                }
            }
        } else {
            1
        };
        let si = c["sampler"].as_u64().unwrap_or(u64::MAX) as usize;
        let s = samplers.get(si).ok_or_else(|| {
            err(
                "UNRESOLVED_REFERENCE",
                format!(
                    "sampler {} (the animation has {})",
                    c["sampler"],
                    samplers.len()
                ),
            )
        })?;
        let at_s = format!(".samplers[{si}]");
        let serr = |code: &str, what: String| rule(file, index, &at_s, code, what);
        let cubic = match s["interpolation"].as_str().unwrap_or("LINEAR") {
            "LINEAR" | "STEP" => 1,
            "CUBICSPLINE" => 3,
            other => {
                return Err(serr(
                    "INVALID_VALUE",
                    format!("interpolation `{other}` is not LINEAR, STEP or CUBICSPLINE"),
                ));
            }
        };
        let input = floats(&root, bin, &s["input"], &|code, what| {
            let code = if code == "ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_FORMAT" {
                "ANIMATION_SAMPLER_INPUT_ACCESSOR_INVALID_FORMAT"
            } else {
                code
            };
            serr(code, format!("input: {what}"))
        })?;
        if input.ty != "SCALAR" {
            return Err(serr(
                "ANIMATION_SAMPLER_INPUT_ACCESSOR_INVALID_FORMAT",
                format!("input accessor is {}, not SCALAR", input.ty),
            ));
        }
        let acc = &root["accessors"][s["input"].as_u64().unwrap_or(0) as usize];
        let (Some(lo), Some(hi)) = (acc["min"][0].as_f64(), acc["max"][0].as_f64()) else {
            return Err(serr(
                "ANIMATION_SAMPLER_INPUT_ACCESSOR_WITHOUT_BOUNDS",
                "the input accessor declares no min and max".into(),
            ));
        };
        let t = &input.values;
        if let Some(i) = t.iter().position(|&x| x < 0.0) {
            return Err(serr(
                "ACCESSOR_ANIMATION_INPUT_NEGATIVE",
                format!("key time {i} is {} s", t[i]),
            ));
        }
        if let Some(i) = t.windows(2).position(|w| w[1] <= w[0]) {
            return Err(serr(
                "ANIMATION_SAMPLER_INPUT_ACCESSOR_NON_INCREASING",
                format!("key time {} ({} s) after {} s", i + 1, t[i + 1], t[i]),
            ));
        }
        // The declared bounds are compared as f32, as they are stored.
        if lo as f32 != t[0] {
            return Err(serr(
                "ACCESSOR_MIN_MISMATCH",
                format!("declared min {lo} s, the first key is at {} s", t[0]),
            ));
        }
        if hi as f32 != t[t.len() - 1] {
            return Err(serr(
                "ACCESSOR_MAX_MISMATCH",
                format!(
                    "declared max {hi} s, the last key is at {} s",
                    t[t.len() - 1]
                ),
            ));
        }
        let output = floats(&root, bin, &s["output"], &|code, what| {
            serr(code, format!("output: {what}"))
        })?;
        if output.ty != want {
            return Err(serr(
                "ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_FORMAT",
                format!("output accessor is {} where {path} needs {want}", output.ty),
            ));
        }
        let expect = input.count * per_key * cubic;
        if output.count != expect {
            return Err(serr(
                "ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_COUNT",
                format!(
                    "{} outputs for {} keys × {per_key} × {cubic} = {expect}",
                    output.count, input.count
                ),
            ));
        }
        if path == "rotation" {
            for (e, q) in output.values.chunks_exact(4).enumerate() {
                let len = q.iter().map(|x| x * x).sum::<f32>().sqrt();
                // A CUBICSPLINE's tangents are not rotations: only its values (the middle third).
                if (cubic == 1 || e % 3 == 1) && (len - 1.0).abs() > UNIT_TOLERANCE {
                    return Err(serr(
                        "ACCESSOR_NON_UNIT",
                        format!("rotation key {e} has length {len}"),
                    ));
                }
            }
        }
        report.keys += input.count as u64;
    }
    Ok(report)
}
