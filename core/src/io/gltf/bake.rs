//! A take baked into a character's own GLB: the file's JSON and BIN are kept as they are (meshes,
//! skins, morph targets, their names and deltas, vertex order and indices untouched) and one
//! animation is appended — its key times and values as new accessors over new buffer views at the
//! end of the BIN chunk, its channels LINEAR (seed 002: bake with the ordinary glTF writer, the
//! character unchanged).
//!
//! Source: glTF 2.0 §3.11 "Animations" (a sampler's input is a FLOAT SCALAR accessor of strictly
//! increasing times in seconds with `min`/`max`; outputs are VEC3 for translation and scale, VEC4
//! `(x, y, z, w)` for rotation, and `keys × targets` FLOAT scalars for `weights`; LINEAR rotation
//! is a spherical interpolation), §4.4 "Binary glTF Layout" (4-byte aligned chunks, the JSON chunk
//! padded with spaces, the BIN chunk with zeros).
//!
//! **Deterministic bytes**: the JSON is re-serialised by `serde_json` from the parsed value (keys in
//! map order, numbers in their shortest round-trip form), the appended data in key order: the same
//! source and the same animation give the same file.

use serde_json::{Value, json};

use super::container;

mod check;
use crate::error::{Error, Result};
pub use check::{AnimationCheck, UNIT_TOLERANCE, check_animation};

/// Which property of a node a baked track drives (glTF `channel.target.path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackPath {
    /// `translation`, metres, 3 values per key.
    Translation,
    /// `rotation`, a unit quaternion `(x, y, z, w)` per key.
    Rotation,
    /// `scale`, 3 values per key.
    Scale,
    /// `weights`: the node's mesh's morph weights, one per target per key.
    Weights,
}

impl TrackPath {
    fn name(self) -> &'static str {
        match self {
            TrackPath::Translation => "translation",
            TrackPath::Rotation => "rotation",
            TrackPath::Scale => "scale",
            TrackPath::Weights => "weights",
        }
    }
}

/// One baked channel: `values` `(keys × width,)` for glTF node `node`.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedTrack {
    /// glTF node index.
    pub node: usize,
    /// What it drives.
    pub path: TrackPath,
    /// Values per key (3, 4, or the mesh's target count for weights).
    pub width: usize,
    /// `(keys × width,)`, key-major.
    pub values: Vec<f32>,
    /// This track's own key times `(K',)` after [`reduce`] (a subset of the animation's), or
    /// `None` for the animation's.
    pub times: Option<Vec<f32>>,
}

/// How far a reduced track may stray from the sampled keys it drops ([`reduce`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Morph weights, translations and scales: largest absolute difference per component
    /// (weights unitless, translations metres).
    pub value: f32,
    /// Rotations: largest angle between the interpolated and the sampled rotation, radians.
    pub angle_rad: f32,
}

/// The largest error of interpolating `values` linearly (or by slerp for rotations) from key `a`
/// to key `b` at the keys strictly between, and where it is.
fn segment_error(
    times: &[f32],
    values: &[f32],
    width: usize,
    rotation: bool,
    a: usize,
    b: usize,
) -> (f32, usize) {
    let at = |k: usize| &values[k * width..(k + 1) * width];
    let mut worst = (0.0f32, a);
    for k in a + 1..b {
        let u = f64::from(times[k] - times[a]) / f64::from(times[b] - times[a]);
        let e = if rotation {
            let q = |k: usize| {
                glam::DQuat::from_slice(&at(k).iter().map(|&x| f64::from(x)).collect::<Vec<_>>())
            };
            let s = q(a).slerp(q(b), u);
            let d = s.dot(q(k)).abs().min(1.0);
            (2.0 * d.acos()) as f32
        } else {
            at(a)
                .iter()
                .zip(at(b))
                .zip(at(k))
                .map(|((&x, &y), &v)| {
                    ((f64::from(x) + u * f64::from(y - x)) - f64::from(v)).abs() as f32
                })
                .fold(0.0, f32::max)
        };
        if e > worst.0 {
            worst = (e, k);
        }
    }
    worst
}

/// `anim` with each track's keys reduced (Ramer–Douglas–Peucker over time): a key is dropped only
/// when interpolating between the kept keys reproduces it within `tol` (every component for
/// weights, translations and scales; the rotation angle for rotations), so every sampled key is
/// within the tolerance; the first and last keys are kept. Tracks get their own times.
pub fn reduce(anim: &BakedAnimation, tol: Tolerance) -> BakedAnimation {
    let times = &anim.times;
    let mut out = anim.clone();
    for t in &mut out.tracks {
        let n = times.len();
        if n <= 2 {
            continue;
        }
        let rotation = t.path == TrackPath::Rotation;
        let limit = if rotation { tol.angle_rad } else { tol.value };
        let mut keep = vec![false; n];
        keep[0] = true;
        keep[n - 1] = true;
        let mut stack = vec![(0usize, n - 1)];
        while let Some((a, b)) = stack.pop() {
            if b <= a + 1 {
                continue;
            }
            let (e, k) = segment_error(times, &t.values, t.width, rotation, a, b);
            if e > limit {
                keep[k] = true;
                stack.push((a, k));
                stack.push((k, b));
            }
        }
        let kept: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
        t.values = kept
            .iter()
            .flat_map(|&k| t.values[k * t.width..(k + 1) * t.width].to_vec())
            .collect();
        t.times = Some(kept.iter().map(|&k| times[k]).collect());
    }
    out
}

/// An animation to bake: key times `(K,)` seconds (strictly increasing), the tracks, and extras
/// stored on the glTF animation (mien's record of the take).
#[derive(Clone, Debug, PartialEq)]
pub struct BakedAnimation {
    /// The glTF animation's name.
    pub name: String,
    /// Key times `(K,)`, seconds, strictly increasing, finite.
    pub times: Vec<f32>,
    /// The channels.
    pub tracks: Vec<BakedTrack>,
    /// `animation.extras` (a JSON object), or `Value::Null` for none.
    pub extras: Value,
}

fn invalid(what: &str, reason: String) -> Error {
    Error::Invalid {
        what: format!("bake: {what}"),
        reason,
    }
}

/// Check `anim` against the source JSON: times strictly increasing and finite, every track's node
/// inside the file, its width right for its path (the mesh's target count for weights), its value
/// count `K × width`, every value finite.
fn check(anim: &BakedAnimation, root: &Value) -> Result<()> {
    let k = anim.times.len();
    if k == 0 {
        return Err(invalid("times", "no keys".into()));
    }
    if anim.tracks.is_empty() {
        return Err(invalid(
            "tracks",
            "no channel: glTF refuses an animation without channels and samplers \
             (glTF-Validator EMPTY_ENTITY)"
                .into(),
        ));
    }
    if let Some(i) = anim.times.iter().position(|t| !t.is_finite()) {
        return Err(invalid(&format!("times[{i}]"), "not finite".into()));
    }
    if let Some(i) = anim.times.windows(2).position(|w| w[1] <= w[0]) {
        return Err(invalid(
            &format!("times[{}]", i + 1),
            format!(
                "{} s after {} s: key times must increase strictly",
                anim.times[i + 1],
                anim.times[i]
            ),
        ));
    }
    let nodes = root["nodes"].as_array().map_or(0, Vec::len);
    for (ti, t) in anim.tracks.iter().enumerate() {
        let what = format!("tracks[{ti}] (node {}, {})", t.node, t.path.name());
        if t.node >= nodes {
            return Err(invalid(&what, format!("the file has {nodes} nodes")));
        }
        let want = match t.path {
            TrackPath::Translation | TrackPath::Scale => 3,
            TrackPath::Rotation => 4,
            TrackPath::Weights => {
                let mesh = root["nodes"][t.node]["mesh"]
                    .as_u64()
                    .ok_or_else(|| invalid(&what, "weights on a node without a mesh".into()))?;
                let prims = root["meshes"][mesh as usize]["primitives"].as_array();
                prims
                    .and_then(|p| p.first())
                    .and_then(|p| p["targets"].as_array())
                    .map_or(0, Vec::len)
            }
        };
        if t.width != want || want == 0 {
            return Err(invalid(
                &what,
                format!("{} values per key where the file needs {want}", t.width),
            ));
        }
        let keys = t.times.as_ref().map_or(k, Vec::len);
        if let Some(tt) = &t.times
            && (tt.is_empty()
                || tt.iter().any(|x| !x.is_finite())
                || tt.windows(2).any(|w| w[1] <= w[0]))
        {
            return Err(invalid(
                &what,
                "its own key times must be finite and increase strictly".into(),
            ));
        }
        if t.values.len() != keys * t.width {
            return Err(invalid(
                &what,
                format!("{} values for {keys} keys × {}", t.values.len(), t.width),
            ));
        }
        if let Some(i) = t.values.iter().position(|v| !v.is_finite()) {
            return Err(invalid(&what, format!("value {i} is not finite")));
        }
    }
    Ok(())
}

/// `source` (a GLB, named `file` in messages) with `anim` appended as one more animation.
///
/// # Errors
/// [`Error::Format`] for a source that is not a well-formed GLB (a `.gltf` with external buffers
/// is refused: bake a `.glb`); [`Error::Invalid`] for an animation that does not fit the file
/// (see [`BakedAnimation`]: times, node indices, widths, non-finite values); [`Error::Limit`] for a
/// result over a GLB's 32-bit length.
pub fn append_animation(source: &[u8], file: &str, anim: &BakedAnimation) -> Result<Vec<u8>> {
    let parts = container::split(source, file)?;
    if !parts.glb {
        return Err(Error::format(
            file,
            "container",
            "a baked take is appended to a GLB (.glb / .vrm); convert a .gltf to .glb first",
        ));
    }
    let mut root: Value = serde_json::from_slice(parts.json)
        .map_err(|e| Error::format(file, "JSON", e.to_string()))?;
    if !root.is_object() {
        return Err(Error::format(file, "JSON", "not a JSON object"));
    }
    check(anim, &root)?;
    let mut bin: Vec<u8> = parts.bin.map(<[u8]>::to_vec).unwrap_or_default();
    // The BIN chunk is buffers[0] of a GLB; a GLB without one gets it.
    let buffers = root["buffers"].as_array().map_or(0, Vec::len);
    if parts.bin.is_none() {
        let buf = json!({"byteLength": 0});
        match root["buffers"].as_array_mut() {
            Some(b) => b.insert(0, buf),
            None => root["buffers"] = json!([buf]),
        }
        // Every bufferView pointing at buffer i ≥ 0 now points at i + 1.
        if buffers > 0
            && let Some(views) = root["bufferViews"].as_array_mut()
        {
            for v in views {
                if let Some(b) = v["buffer"].as_u64() {
                    v["buffer"] = json!(b + 1);
                }
            }
        }
    }
    let add_view = |bin: &mut Vec<u8>, root: &mut Value, data: &[f32]| -> usize {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let offset = bin.len();
        for v in data {
            bin.extend_from_slice(&v.to_le_bytes());
        }
        let views = root["bufferViews"].as_array_mut();
        let view = json!({"buffer": 0, "byteOffset": offset, "byteLength": data.len() * 4});
        match views {
            Some(v) => {
                v.push(view);
                v.len() - 1
            }
            None => {
                root["bufferViews"] = json!([view]);
                0
            }
        }
    };
    let add_accessor = |root: &mut Value, acc: Value| -> usize {
        match root["accessors"].as_array_mut() {
            Some(a) => {
                a.push(acc);
                a.len() - 1
            }
            None => {
                root["accessors"] = json!([acc]);
                0
            }
        }
    };
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    // Tracks with their own key times (after `reduce`) get their own inputs; equal time lists
    // share one.
    let mut inputs: Vec<(Vec<f32>, usize)> = Vec::new();
    for t in &anim.tracks {
        let times = t.times.as_ref().unwrap_or(&anim.times);
        let input = match inputs.iter().find(|(tt, _)| tt == times) {
            Some((_, i)) => *i,
            None => {
                let tv = add_view(&mut bin, &mut root, times);
                let i = add_accessor(
                    &mut root,
                    json!({
                        "bufferView": tv, "componentType": 5126, "count": times.len(),
                        "type": "SCALAR", "min": [times[0]], "max": [times[times.len() - 1]],
                    }),
                );
                inputs.push((times.clone(), i));
                i
            }
        };
        let k = times.len();
        let v = add_view(&mut bin, &mut root, &t.values);
        let (ty, count) = match t.path {
            TrackPath::Translation | TrackPath::Scale => ("VEC3", k),
            TrackPath::Rotation => ("VEC4", k),
            TrackPath::Weights => ("SCALAR", k * t.width),
        };
        let output = add_accessor(
            &mut root,
            json!({"bufferView": v, "componentType": 5126, "count": count, "type": ty}),
        );
        channels.push(json!({
            "sampler": samplers.len(),
            "target": {"node": t.node, "path": t.path.name()},
        }));
        samplers.push(json!({"input": input, "output": output, "interpolation": "LINEAR"}));
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    root["buffers"][0]["byteLength"] = json!(bin.len());
    let mut animation = json!({"name": anim.name, "channels": channels, "samplers": samplers});
    if !anim.extras.is_null() {
        animation["extras"] = anim.extras.clone();
    }
    let index = match root["animations"].as_array_mut() {
        Some(a) => {
            a.push(animation);
            a.len() - 1
        }
        None => {
            root["animations"] = json!([animation]);
            0
        }
    };
    let out = container::write_glb(&root, bin, file)?;
    // What was written passes the validator's animation rules (check.rs), or nothing is returned.
    check_animation(&out, file, index)?;
    Ok(out)
}

/// The key under an animation's `extras` where mien keeps a bake's record.
pub const RECORD_KEY: &str = "mien";

/// The bake records of a glTF file: `(animation index, animation name, extras.mien)` for every
/// animation that has one, found by that key (never by index).
///
/// # Errors
/// [`Error::Format`] for bytes that are not a glTF container or JSON.
pub fn bake_records(bytes: &[u8], file: &str) -> Result<Vec<(usize, String, Value)>> {
    let parts = container::split(bytes, file)?;
    let root: Value = serde_json::from_slice(parts.json)
        .map_err(|e| Error::format(file, "JSON", e.to_string()))?;
    Ok(root["animations"]
        .as_array()
        .map(|a| {
            a.iter()
                .enumerate()
                .filter_map(|(i, an)| {
                    let r = an.get("extras")?.get(RECORD_KEY)?;
                    Some((i, an["name"].as_str().unwrap_or("").to_string(), r.clone()))
                })
                .collect()
        })
        .unwrap_or_default())
}

/// The names of a glTF file's animations, in order (`""` for an unnamed one).
///
/// # Errors
/// [`Error::Format`] for bytes that are not a glTF container or JSON.
pub fn animation_names(bytes: &[u8], file: &str) -> Result<Vec<String>> {
    let parts = container::split(bytes, file)?;
    let root: Value = serde_json::from_slice(parts.json)
        .map_err(|e| Error::format(file, "JSON", e.to_string()))?;
    Ok(root["animations"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|an| an["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default())
}

/// What one channel contributes to the keys' fingerprint before its data: its target node
/// (u32 LE), its path and its interpolation (UTF-8, each followed by a 0 byte).
fn channel_header(bytes: &mut Vec<u8>, node: u64, path: &str, interpolation: &str) {
    bytes.extend_from_slice(&(node as u32).to_le_bytes());
    for s in [path, interpolation] {
        bytes.extend_from_slice(s.as_bytes());
        bytes.push(0);
    }
}

/// FNV-1a 64 over an animation's channels as [`append_animation`] writes them: for each track in
/// order, its target node, path and interpolation (`LINEAR`), then its key times and values as
/// little-endian f32 bits — so a changed key, a retargeted channel or a changed interpolation
/// changes it.
pub fn keys_fingerprint(anim: &BakedAnimation) -> u64 {
    let mut bytes = Vec::new();
    for t in &anim.tracks {
        channel_header(&mut bytes, t.node as u64, t.path.name(), "LINEAR");
        let times = t.times.as_ref().unwrap_or(&anim.times);
        for v in times.iter().chain(&t.values) {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    crate::rig::fingerprint::fnv1a64(&bytes)
}

/// The same fingerprint read back from animation `index` of a GLB: for each channel in order, its
/// target node, path and sampler interpolation (glTF's default `LINEAR` when absent), then its
/// sampler's input and output accessors (FLOAT, tightly packed, in the BIN chunk).
///
/// # Errors
/// [`Error::Format`] for a file that is not a GLB, an animation or accessor that is missing or not
/// FLOAT data inside the BIN chunk.
pub fn read_keys_fingerprint(bytes: &[u8], file: &str, index: usize) -> Result<u64> {
    let parts = container::split(bytes, file)?;
    let root: Value = serde_json::from_slice(parts.json)
        .map_err(|e| Error::format(file, "JSON", e.to_string()))?;
    let bin = parts.bin.unwrap_or(&[]);
    let anim = &root["animations"][index];
    let bad = |what: String| Error::format(file, format!("animations[{index}]"), what);
    let read = |acc: &Value, out: &mut Vec<u8>| -> Result<()> {
        let i = acc
            .as_u64()
            .ok_or_else(|| bad("a sampler without its accessor".into()))? as usize;
        let a = &root["accessors"][i];
        let width = match a["type"].as_str() {
            Some("SCALAR") => 1,
            Some("VEC3") => 3,
            Some("VEC4") => 4,
            _ => return Err(bad(format!("accessor {i} is not SCALAR/VEC3/VEC4"))),
        };
        if a["componentType"] != 5126 {
            return Err(bad(format!("accessor {i} is not FLOAT")));
        }
        let count = a["count"].as_u64().unwrap_or(0) as usize;
        let view = &root["bufferViews"][a["bufferView"].as_u64().unwrap_or(u64::MAX) as usize];
        let start = view["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let len = count * width * 4;
        let data = bin
            .get(start..start.saturating_add(len))
            .ok_or_else(|| bad(format!("accessor {i} reads past the BIN chunk")))?;
        out.extend_from_slice(data);
        Ok(())
    };
    let mut data = Vec::new();
    for c in anim["channels"]
        .as_array()
        .ok_or_else(|| bad("no channels".into()))?
    {
        let s = &anim["samplers"][c["sampler"].as_u64().unwrap_or(u64::MAX) as usize];
        channel_header(
            &mut data,
            c["target"]["node"].as_u64().unwrap_or(u64::MAX),
            c["target"]["path"].as_str().unwrap_or(""),
            s["interpolation"].as_str().unwrap_or("LINEAR"),
        );
        read(&s["input"], &mut data)?;
        read(&s["output"], &mut data)?;
    }
    Ok(crate::rig::fingerprint::fnv1a64(&data))
}
