//! Bake a take: sample instance 0 of a runtime at `fps` (its drive, speech, face driver, head
//! motion, VRM expressions and a DNA's RigLogic, exactly as a frame poses it) and append the
//! result to the character's own GLB as one animation ([`mien_core::io::gltf::bake`]), so any glTF
//! engine plays what mien posed. A character without a GLB is written as one first: a linear head
//! ([`mien_core::gnm::export::pack_to_glb`]) or a MetaHuman DNA
//! ([`mien_core::io::gltf::character_to_glb`], its control node left out).
//!
//! **What is baked.** Per frame, the morph weights mien poses with — after the per-frame rules
//! (clamp ±2, zeroed non-finite, at most [`mien_core::rig::ACTIVE_MORPH_LIMIT`] active targets per
//! mesh: [`mien_core::rig::FrameControls`]) — as a `weights` channel for every mesh node whose
//! weights are not all zero in some frame, and the local translation, rotation and scale of every
//! node that leaves its rest value in some frame (joints the clip or the head motion moves). Keys
//! at every frame, LINEAR, so at the key times an engine's pose equals mien's; rotations are kept
//! in one hemisphere from key to key (the shortest slerp). With a [`Tolerance`] each channel keeps
//! only the keys interpolation cannot reproduce within it (Ramer–Douglas–Peucker; every sampled
//! key stays within the bound), recorded in the record.
//!
//! **The record** (seed 002's timing record and fingerprint), in the animation's
//! `extras.mien`: the take (as the caller describes it), its media origin and duration, the key
//! rate and count, the speech's timing record (label, file, format, origin, duration, every
//! interval; [`alignment`] recovers it) and the revisions of the mappings used ([`revisions`]:
//! `mien-arkit52-names-v2`, `mien-arpabet-viseme-v1`, `mien-audio-clock-half-open-held-v1`);
//! one ordered content
//! fingerprint per facial part (each mesh with morph targets: [`PartFingerprint`] — vertex order and
//! base positions, indices, target names, target offsets) found again by the mesh's name; and an
//! FNV-1a 64 of the record itself, so an edited record is refused too. [`verify`] reads a baked
//! file back and checks all of it: the record, the revisions against this mien's, the facial
//! parts, the keys, and the glTF-Validator's animation rules the bake relies on
//! ([`mien_core::io::gltf::bake::check_animation`]). A take that moves nothing is refused, never
//! written as an empty animation. FNV-1a is a change detector, not a cryptographic hash.

use std::sync::Arc;

use glam::Quat;
pub use mien_core::io::gltf::bake::Tolerance;
use mien_core::io::gltf::bake::{
    BakedAnimation, BakedTrack, TrackPath, append_animation, bake_records, check_animation,
    keys_fingerprint, read_keys_fingerprint, reduce,
};
use mien_core::rig::fingerprint::{PartFingerprint, fnv1a64};
use mien_core::rig::{Character, FrameControls, RigControls};
use serde_json::{Value, json};

use crate::error::{Context, Error, Result};
use crate::runtime::Runtime;

/// What to sample, and how the animation is named.
///
/// The record's speech (label, file, format, origin, duration, every interval) and its mapping
/// and timing revisions are taken from instance 0's attached [`crate::Speech`], not from here.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeOptions {
    /// Key rate, frames per second (> 0).
    pub fps: f64,
    /// Media time of the first key, seconds (≥ 0).
    pub start_s: f64,
    /// Keys (≥ 1).
    pub frames: u32,
    /// The glTF animation's name (what [`alignment`] and engines find the take by).
    pub name: String,
    /// The take as the caller describes it, kept in the record: a JSON object such as
    /// `{"kind": "arkit", "name": "take"}` (`{}` for nothing).
    pub take: Value,
    /// Drop keys that interpolation reproduces within this bound
    /// ([`mien_core::io::gltf::bake::reduce`]); `None` keeps every key.
    pub tolerance: Option<Tolerance>,
}

impl BakeOptions {
    /// `frames` keys at `fps` from media time 0, every key kept, into an animation named `name`.
    pub fn new(name: impl Into<String>, fps: f64, frames: u32) -> Self {
        BakeOptions {
            fps,
            start_s: 0.0,
            frames,
            name: name.into(),
            take: json!({}),
            tolerance: None,
        }
    }
}

/// The revisions of the mappings a bake used, recorded in `extras.mien.revisions` and compared by
/// [`verify`] with the reader's own: `(record key, revision)`. The ARKit-52 name binding always;
/// the phoneme → viseme table and the speech timing rule for a take with speech (seed 002: "both
/// mapping revisions" in the timing record).
///
/// `speech` is the speech's sampler (`"held"` or `"envelope"`), `None` for a take without speech.
pub fn revisions(speech: Option<&str>) -> Vec<(&'static str, &'static str)> {
    let mut r = vec![("arkit", mien_core::anim::canon::NAMES_REVISION)];
    if let Some(sampler) = speech {
        r.push(("visemes", mien_core::speech::viseme::MAPPING_REVISION));
        r.push((
            "timing",
            if sampler == "envelope" {
                mien_core::speech::envelope::ENVELOPE_REVISION
            } else {
                mien_core::speech::aligned::TIMING_REVISION
            },
        ));
    }
    r
}

/// Instance 0's speech as the record keeps it (seed 002's timing record): label, file (its name
/// without folders), format, sampler, origin on the media clock (the audio offset), duration and
/// every interval in utterance seconds; `None` without speech.
fn speech_record(rt: &Runtime) -> Result<Option<Value>> {
    let Some(sp) = rt.instance(0)?.speech() else {
        return Ok(None);
    };
    let r = sp.report();
    let file = r["file"].as_str().map(|f| {
        std::path::Path::new(f)
            .file_name()
            .map_or_else(|| f.to_string(), |n| n.to_string_lossy().into_owned())
    });
    let mut rec = json!({
        "label": r["label"],
        "file": file,
        "format": r["format"],
        "sampler": r["sampler"],
        "origin_s": r["audio_offset_s"],
        "duration_s": r["duration_s"],
        "intervals": r["intervals"],
    });
    // The envelope's minimum hold changes the curves: recorded when it is on.
    if let Some(h) = r
        .get("min_hold_s")
        .filter(|h| h.as_f64().is_some_and(|h| h > 0.0))
    {
        rec["min_hold_s"] = h.clone();
    }
    Ok(Some(rec))
}

/// Version of the record layout in `extras.mien`.
///
/// 2 (issue 25): the speech's timing record under `speech`, revision identifiers under
/// `revisions`; version 1 files are refused by [`verify`] (bake them again).
pub const RECORD_VERSION: u32 = 2;

fn hex(v: u64) -> String {
    format!("{v:016x}")
}

/// `v` as canonical JSON: objects with their keys sorted (by UTF-8 bytes), at every depth, no
/// whitespace; strings and numbers as serde_json writes them. The same record gives the same text
/// whatever order a tool re-serialising the file put its keys in.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The record's own FNV-1a 64: over its canonical JSON ([`canonical`]: keys sorted at every
/// depth) without the `record_fnv1a64` field.
fn record_hash(record: &Value) -> u64 {
    let mut r = record.clone();
    if let Some(o) = r.as_object_mut() {
        o.remove("record_fnv1a64");
    }
    let mut text = String::new();
    canonical(&r, &mut text);
    fnv1a64(text.as_bytes())
}

fn part_json(ch: &Character, mesh: usize) -> Value {
    let m = &ch.meshes[mesh];
    let f = PartFingerprint::of(m);
    json!({
        "mesh": mesh,
        "name": m.name,
        "vertices": m.vertex_count(),
        "targets": m.target_count(),
        "fingerprint": {
            "positions": hex(f.positions),
            "indices": hex(f.indices),
            "target_names": hex(f.target_names),
            "target_offsets": hex(f.target_offsets),
        },
    })
}

/// What a bake wrote.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BakeReport {
    /// Keys sampled per channel.
    pub keys: u32,
    /// Keys written over all channels (after reduction; `keys × channels` without).
    pub keys_written: u64,
    /// `weights` channels (mesh nodes).
    pub weight_channels: u32,
    /// Translation, rotation and scale channels (nodes).
    pub transform_channels: u32,
    /// Bytes of the baked file.
    pub bytes: u64,
}

/// Sample instance 0 of `rt` and append the take to `source`, the bytes of the character's GLB
/// (the file `rt`'s asset was loaded from). A linear head (`.aosrig`) has no GLB: it is exported
/// as one first ([`mien_core::gnm::export::pack_to_glb`]: its basis as targets, its eyes as
/// joints; `source` is not read) and the take's coefficients, gaze and joint turns are baked onto
/// it. A MetaHuman DNA character (`.dna`, a character with
/// [`rig_logic`](mien_core::rig::Character::rig_logic)) has none either: it is written as one
/// first ([`mien_core::io::gltf::character_to_glb`]: its joints, its LOD's meshes with their
/// blend-shape targets and skin; its control node left out, as a VRM's expression node is;
/// `source` is not read), and what RigLogic posed each frame — the channel weights on the head's
/// targets and the joints' local transforms — is baked onto it exactly as for a glTF rig; the
/// record names the DNA file under `dna`. The built-in head and body ([`Asset::is_builtin`]) are
/// written as GLBs the same way (`source` is not read).
///
/// **The runtime is advanced**: the bake calls [`Runtime::sample`] at every key time (the drivers
/// and controls, no vertex posing or lift), so afterwards `rt`'s frame count, drivers and last
/// frame report are the bake's last key's, while [`Runtime::posed`] and [`Runtime::splats`] are
/// those of the last [`Runtime::update`]. A runtime made for baking (`lift: None`) is smallest;
/// the lift is not baked. The animation is named
/// [`BakeOptions::name`] (`mien bake` names it `mien: <take>`): [`verify`] and [`alignment`] find the
/// take by that name.
///
/// # Errors
/// Options out of domain (a frame rate ≤ 0, a negative start, no key, keys closer than f32 key
/// times tell apart, an empty name, a name the file already has); a take that moves nothing; a
/// `source` that is not the asset's GLB (another node count, or a mesh with another target
/// count); a pack or a DNA character the export refuses; the runtime's frame errors; the writer's
/// refusals.
///
/// ```
/// use std::sync::Arc;
/// use mien_runtime::bake::{BakeOptions, bake, verify};
/// use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};
/// let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/facecap/facecap.glb");
/// let asset = Arc::new(Asset::load(&file)?);
/// let mut rt = Runtime::new(asset, &Device::Cpu, &RuntimeOptions { instances: 1, lift: None })?;
/// rt.instance_mut(0)?.play_clip("0")?; // the character's own take
/// let opts = BakeOptions::new("take", 30.0, 10); // 10 keys at 30 fps from 0 s
/// let (glb, report) = bake(&mut rt, &std::fs::read(&file)?, &opts)?;
/// assert_eq!(report.keys, 10);
/// assert_eq!(verify(&glb, "take.glb")?.takes, vec!["take".to_string()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn bake(rt: &mut Runtime, source: &[u8], opts: &BakeOptions) -> Result<(Vec<u8>, BakeReport)> {
    if !(opts.fps.is_finite() && opts.fps > 0.0) {
        return Err(Error::invalid(
            format!("bake fps {}", opts.fps),
            "must be a frame rate above 0",
        ));
    }
    if !(opts.start_s.is_finite() && opts.start_s >= 0.0) || opts.frames == 0 {
        return Err(Error::invalid(
            "bake span",
            format!(
                "start {} s, {} frames: the start must be ≥ 0 s and there must be a frame",
                opts.start_s, opts.frames
            ),
        ));
    }
    // Keys are stored as f32 seconds (glTF): consecutive keys must stay apart at that precision.
    let last = opts.start_s + f64::from(opts.frames - 1) / opts.fps;
    if opts.frames > 1 {
        let step = last as f32 - (last - 1.0 / opts.fps) as f32;
        if !(step > 0.0) {
            return Err(Error::invalid(
                "bake span",
                format!(
                    "keys at {} fps up to {last} s fall closer than a glTF key time (f32 seconds) \
                     can tell apart: start nearer 0 s or lower the key rate",
                    opts.fps
                ),
            ));
        }
    }
    if opts.name.trim().is_empty() {
        return Err(Error::invalid(
            "bake name",
            "the animation needs a name (takes are found by name)",
        ));
    }
    if let Some(t) = opts.tolerance
        && !(t.value.is_finite() && t.value >= 0.0 && t.angle_rad.is_finite() && t.angle_rad >= 0.0)
    {
        return Err(Error::invalid(
            "bake tolerance",
            format!(
                "{} (values), {} rad: must be finite and ≥ 0",
                t.value, t.angle_rad
            ),
        ));
    }
    let asset = Arc::clone(rt.asset());
    let Some(rig) = asset.rig() else {
        return bake_linear_head(rt, opts);
    };
    let ch = asset.character();
    // The GLB the take is appended to, and where each character node is in it. A VRM's
    // expression control node is mien's own, appended last: not in the file. A DNA character and
    // the built-ins have no GLB: each is written as one (a DNA's control node left out, as the
    // VRM's).
    let written;
    let (glb, node_index, mesh_index, glb_ch) = if ch.rig_logic.is_some() || asset.is_builtin() {
        use mien_core::io::gltf::{WriteOptions, character_to_glb, import_gltf_bytes};
        written = character_to_glb(ch, &WriteOptions::for_character(ch))?;
        // The facial parts are fingerprinted as the file holds them (what `verify` reads).
        let back = import_gltf_bytes(&written.glb, None, asset.source())?;
        let (nodes, meshes) = (written.node_index.clone(), written.mesh_index.clone());
        (written.glb.as_slice(), nodes, meshes, Some(back))
    } else {
        let nodes = ch.nodes.len() - usize::from(ch.vrm.is_some());
        let node_index: Vec<Option<usize>> = (0..ch.nodes.len())
            .map(|n| (n < nodes).then_some(n))
            .collect();
        let mesh_index = (0..ch.meshes.len()).map(Some).collect::<Vec<_>>();
        (source, node_index, mesh_index, None)
    };
    let part_ch = glb_ch.as_ref().unwrap_or(ch);
    let rest = ch.rest_pose();
    let k = opts.frames as usize;
    let mut times = Vec::with_capacity(k);
    let mut locals = Vec::with_capacity(k);
    let mut weights: Vec<Vec<f32>> = Vec::with_capacity(k);
    let mut fc = FrameControls::new(rig);
    let mut rc = RigControls::default();
    for f in 0..opts.frames {
        let t = opts.start_s + f64::from(f) / opts.fps;
        rt.sample(t)
            .with_context(|| format!("baking frame {f} at {t} s"))?;
        let inst = rt.instance(0)?;
        rig.controls_from_pose(inst.pose(), inst.world(), &mut rc);
        fc.set(&rc)?;
        times.push(t as f32);
        locals.push(inst.pose().locals.clone());
        weights.push(fc.weights.clone());
    }
    let mut tracks = Vec::new();
    let mut report = BakeReport {
        keys: opts.frames,
        ..Default::default()
    };
    for (n, g) in node_index.iter().enumerate() {
        let Some(g) = *g else { continue };
        let r = &rest.locals[n];
        let moved =
            |f: &dyn Fn(&mien_core::rig::Transform) -> bool| locals.iter().any(|l| f(&l[n]));
        if moved(&|l| l.translation != r.translation) {
            tracks.push(BakedTrack {
                node: g,
                path: TrackPath::Translation,
                width: 3,
                values: locals
                    .iter()
                    .flat_map(|l| l[n].translation.to_array())
                    .collect(),
                times: None,
            });
        }
        if moved(&|l| l.rotation != r.rotation) {
            let mut prev = Quat::IDENTITY;
            let mut values = Vec::with_capacity(4 * k);
            for (i, l) in locals.iter().enumerate() {
                let mut q = l[n].rotation;
                if i > 0 && q.dot(prev) < 0.0 {
                    q = -q;
                }
                prev = q;
                values.extend_from_slice(&q.to_array());
            }
            tracks.push(BakedTrack {
                node: g,
                path: TrackPath::Rotation,
                width: 4,
                values,
                times: None,
            });
        }
        if moved(&|l| l.scale != r.scale) {
            tracks.push(BakedTrack {
                node: g,
                path: TrackPath::Scale,
                width: 3,
                values: locals.iter().flat_map(|l| l[n].scale.to_array()).collect(),
                times: None,
            });
        }
    }
    report.transform_channels = tracks.len() as u32;
    for inst in &rig.instances {
        let Some(g) = node_index[inst.node.index()] else {
            continue;
        };
        let (a, b) = (
            inst.weight_base as usize,
            (inst.weight_base + inst.target_count) as usize,
        );
        if inst.target_count == 0 || weights.iter().all(|w| w[a..b].iter().all(|x| *x == 0.0)) {
            continue;
        }
        tracks.push(BakedTrack {
            node: g,
            path: TrackPath::Weights,
            width: inst.target_count as usize,
            values: weights
                .iter()
                .flat_map(|w| w[a..b].iter().copied())
                .collect(),
            times: None,
        });
        report.weight_channels += 1;
    }
    // The facial parts: every mesh with morph targets (driven in this take or not), once.
    let mut meshes: Vec<usize> = rig
        .instances
        .iter()
        .filter(|i| i.target_count > 0 && node_index[i.node.index()].is_some())
        .filter_map(|i| mesh_index[i.mesh.index()])
        .collect();
    meshes.sort_unstable();
    meshes.dedup();
    let parts: Vec<Value> = meshes.iter().map(|&m| part_json(part_ch, m)).collect();
    if tracks.is_empty() {
        return Err(Error::invalid(
            asset.source(),
            format!(
                "the take moves nothing over its {} keys ({:.3}–{:.3} s): no morph weight leaves 0 and no \
                 node leaves its rest pose, and glTF has no valid animation without channels \
                 (glTF-Validator EMPTY_ENTITY). A character at rest, or a take none of whose channels \
                 bind to the character (`mien animate` reports the binding); a LOD or a record needs a \
                 take that moves the character — nothing was written",
                opts.frames,
                opts.start_s,
                opts.start_s + f64::from(opts.frames - 1) / opts.fps
            ),
        ));
    }
    let mut extra: Vec<(&str, Value)> = speech_record(rt)?
        .map(|v| ("speech", v))
        .into_iter()
        .collect();
    if glb_ch.is_some() {
        extra.push(("dna", json!(file_name(asset.source()))));
    }
    finish(
        opts,
        times,
        tracks,
        parts,
        extra,
        glb,
        asset.source(),
        report,
    )
}

/// The record (take, span, intervals, mappings, facial parts, tolerance, the keys' and its own
/// fingerprints), key reduction, and the animation appended to `glb` — shared by the rig and the
/// linear-head paths. `extra` is one more record field.
#[allow(clippy::too_many_arguments)]
fn finish(
    opts: &BakeOptions,
    times: Vec<f32>,
    tracks: Vec<BakedTrack>,
    parts: Vec<Value>,
    extra: Vec<(&str, Value)>,
    glb: &[u8],
    file: &str,
    mut report: BakeReport,
) -> Result<(Vec<u8>, BakeReport)> {
    let speech = extra
        .iter()
        .find(|(k, _)| *k == "speech")
        .map(|(_, v)| v["sampler"].as_str().unwrap_or("held").to_string());
    let revisions: serde_json::Map<String, Value> = revisions(speech.as_deref())
        .into_iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut record = json!({
        "version": RECORD_VERSION,
        "animation": opts.name,
        "take": opts.take,
        "origin_s": opts.start_s,
        "duration_s": f64::from(opts.frames - 1) / opts.fps,
        "fps": opts.fps,
        "keys": opts.frames,
        "speech": Value::Null,
        "revisions": revisions,
        "parts": parts,
    });
    for (k, v) in extra {
        record[k] = v;
    }
    if let Some(t) = opts.tolerance {
        record["tolerance"] = json!({"value": t.value, "angle_rad": t.angle_rad});
    }
    let mut anim = BakedAnimation {
        name: opts.name.clone(),
        times,
        tracks,
        extras: Value::Null,
    };
    if let Some(t) = opts.tolerance {
        anim = reduce(&anim, t);
    }
    record["keys_fnv1a64"] = json!(hex(keys_fingerprint(&anim)));
    record["record_fnv1a64"] = json!(hex(record_hash(&record)));
    anim.extras = json!({ "mien": record });
    report.keys_written = anim
        .tracks
        .iter()
        .map(|t| t.times.as_ref().map_or(anim.times.len(), Vec::len) as u64)
        .sum();
    if mien_core::io::gltf::bake::animation_names(glb, file)?.contains(&opts.name) {
        return Err(Error::invalid(
            format!("{file}: animation `{}`", opts.name),
            "the file already has an animation of this name (a take is found by its name): choose another name",
        ));
    }
    let bytes = append_animation(glb, file, &anim)?;
    report.bytes = bytes.len() as u64;
    Ok((bytes, report))
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VerifyReport {
    /// The baked animations checked (by name).
    pub takes: Vec<String>,
    /// Facial parts whose fingerprints matched.
    pub parts: usize,
}

/// Check a baked file: every animation with a mien record (found by `extras.mien`, never by
/// index) has an intact record (its own FNV-1a matches, its fields are there) and every facial
/// part it names is found by mesh name (else index) with the same fingerprints.
///
/// # Errors
/// [`Error::Invalid`] naming the file, the take and what changed: no record at all, an altered or
/// incomplete record, a missing part, or a part whose vertex order or base positions, triangle
/// indices, target names or target offsets changed; the importer's errors.
pub fn verify(bytes: &[u8], file: &str) -> Result<VerifyReport> {
    let records = bake_records(bytes, file)?;
    if records.is_empty() {
        return Err(Error::invalid(
            file,
            "no mien bake record (no animation has extras.mien): not a file `mien bake` wrote, or its record was removed",
        ));
    }
    // Takes are found by name: two baked takes of one name are refused.
    for (i, (_, name, _)) in records.iter().enumerate() {
        if records[..i].iter().any(|(_, n, _)| n == name) {
            return Err(Error::invalid(
                format!("{file}: take `{name}`"),
                "two baked takes have this name (a take is found by its name)",
            ));
        }
    }
    // First the glTF-Validator's rules the bake relies on (an empty or broken animation), before
    // the importer reads the animations.
    for (index, _, _) in &records {
        check_animation(bytes, file, *index)?;
    }
    let ch = mien_core::io::gltf::import_gltf_bytes(bytes, None, file)?;
    let mut report = VerifyReport {
        takes: Vec::new(),
        parts: 0,
    };
    for (index, name, record) in &records {
        let what = format!("{file}: take `{name}`");
        let stored = record["record_fnv1a64"].as_str().unwrap_or("");
        if stored != hex(record_hash(record)) {
            return Err(Error::invalid(
                what,
                "its bake record was altered (the record's own fingerprint does not match)",
            ));
        }
        if record["version"].as_u64() != Some(u64::from(RECORD_VERSION)) {
            return Err(Error::invalid(
                what,
                format!(
                    "record version {} (mien reads {RECORD_VERSION})",
                    record["version"]
                ),
            ));
        }
        if record["animation"].as_str() != Some(name.as_str()) {
            return Err(Error::invalid(
                what,
                format!(
                    "the animation was renamed since the bake (the record names it {})",
                    record["animation"]
                ),
            ));
        }
        let sampler = record["speech"]["sampler"].as_str().unwrap_or("held");
        let speech = (!record["speech"].is_null()).then_some(sampler);
        for (k, want) in revisions(speech) {
            match record["revisions"][k].as_str() {
                Some(got) if got == want => {}
                Some(got) => {
                    return Err(Error::invalid(
                        what,
                        format!(
                            "baked with the {k} mapping revision `{got}`; this mien reads `{want}` \
                             (bake the take again with this mien)"
                        ),
                    ));
                }
                None => {
                    return Err(Error::invalid(
                        what,
                        format!(
                            "the record names no {k} mapping revision (this mien reads `{want}`)"
                        ),
                    ));
                }
            }
        }
        let keys = read_keys_fingerprint(bytes, file, *index)?;
        if record["keys_fnv1a64"].as_str() != Some(hex(keys).as_str()) {
            return Err(Error::invalid(
                what,
                "its animation keys were changed since the bake (times or values differ from the record's fingerprint)",
            ));
        }
        let Some(parts) = record["parts"].as_array() else {
            return Err(Error::invalid(what, "the record lists no facial parts"));
        };
        for p in parts {
            let label = p["name"]
                .as_str()
                .map_or_else(|| format!("mesh {}", p["mesh"]), |n| format!("mesh `{n}`"));
            let found = match p["name"].as_str() {
                Some(n) => ch.meshes.iter().position(|m| m.name.as_deref() == Some(n)),
                None => p["mesh"]
                    .as_u64()
                    .map(|i| i as usize)
                    .filter(|&i| i < ch.meshes.len()),
            };
            let Some(mi) = found else {
                return Err(Error::invalid(
                    what,
                    format!("facial part {label} is missing from the file"),
                ));
            };
            let want = PartFingerprint::of(&ch.meshes[mi]);
            let field = |k: &str| {
                p["fingerprint"][k]
                    .as_str()
                    .and_then(|h| u64::from_str_radix(h, 16).ok())
            };
            let (Some(a), Some(b), Some(c), Some(d)) = (
                field("positions"),
                field("indices"),
                field("target_names"),
                field("target_offsets"),
            ) else {
                return Err(Error::invalid(
                    what,
                    format!("the record's fingerprint of {label} is incomplete"),
                ));
            };
            let stored = PartFingerprint {
                positions: a,
                indices: b,
                target_names: c,
                target_offsets: d,
            };
            let changed = stored.differences(&want);
            if !changed.is_empty() {
                return Err(Error::invalid(
                    what,
                    format!(
                        "facial part {label} changed since the bake: {} (rebuild the bake rather than editing its facial parts)",
                        changed.join(", ")
                    ),
                ));
            }
            report.parts += 1;
        }
        report.takes.push(name.clone());
    }
    Ok(report)
}

/// One interval of a [`TimingRecord`]: `[start_s, end_s)` utterance seconds (the media time adds
/// [`TimingRecord::origin_s`]) and what the speech file said there (an ARPABET phoneme or a viseme).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TimedUnit {
    /// Start, seconds (utterance time, ≥ 0).
    pub start_s: f64,
    /// End, seconds (> `start_s`, half-open).
    pub end_s: f64,
    /// The phoneme or viseme.
    pub unit: String,
}

/// A baked take's timing record, recovered from the file and validated (seed 002's
/// `binding.alignment(scene)`): the utterance's label, origin, duration and every interval, and
/// the mapping and timing revisions it was baked with — what an application needs to play the same
/// audio against the baked animation. Audio bytes are never in the file.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TimingRecord {
    /// The baked animation's name.
    pub take: String,
    /// The utterance label (the speech file's own, else its file name).
    pub label: String,
    /// The speech file's name (without folders), when it came from a file.
    pub file: Option<String>,
    /// The speech file's format (`textgrid`, `gentle`, `rhubarb`, …).
    pub format: Option<String>,
    /// Where utterance time 0 lies on the media clock, seconds (the audio offset).
    pub origin_s: f64,
    /// The utterance's duration, seconds.
    pub duration_s: f64,
    /// Every interval, in file order.
    pub intervals: Vec<TimedUnit>,
    /// How visemes followed the timings: `held` or `envelope`.
    pub sampler: String,
    /// The envelope's minimum hold, seconds (0: off, and always 0 for `held`).
    pub min_hold_s: f64,
    /// The phoneme → viseme table's revision ([`mien_core::speech::viseme::MAPPING_REVISION`]).
    pub mapping_revision: String,
    /// The timing rule's revision ([`mien_core::speech::aligned::TIMING_REVISION`], or the
    /// envelope's).
    pub timing_revision: String,
}

/// Recover the timing record of take `take` (the baked animation's name) from a baked file,
/// after [`verify`] has checked the whole file: `Ok(None)` for a take baked without speech.
///
/// Validated: origin and duration finite (duration ≥ 0); every interval finite with
/// `0 ≤ start < end`, in order of start, ending by the duration (10 µs of rounding allowed).
///
/// # Errors
/// Everything [`verify`] refuses; [`Error::Invalid`] naming the file and take for a take the file
/// does not have (listing the ones it has), and naming the field and interval index of a timing
/// record that breaks a rule above.
pub fn alignment(bytes: &[u8], file: &str, take: &str) -> Result<Option<TimingRecord>> {
    verify(bytes, file)?;
    let records = bake_records(bytes, file)?;
    let Some((_, _, record)) = records.iter().find(|(_, n, _)| n == take) else {
        let names: Vec<&str> = records.iter().map(|(_, n, _)| n.as_str()).collect();
        return Err(Error::invalid(
            format!("{file}: take `{take}`"),
            format!(
                "no baked take of that name (the file has: {})",
                names.join(", ")
            ),
        ));
    };
    let sp = &record["speech"];
    if sp.is_null() {
        return Ok(None);
    }
    let what = |field: &str| format!("{file}: take `{take}`: speech.{field}");
    let num = |field: &str| -> Result<f64> {
        sp[field].as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
            Error::invalid(what(field), format!("{} is not a finite number", sp[field]))
        })
    };
    let origin_s = num("origin_s")?;
    let duration_s = num("duration_s")?;
    if duration_s < 0.0 {
        return Err(Error::invalid(
            what("duration_s"),
            format!("{duration_s} s is negative"),
        ));
    }
    let mut intervals = Vec::new();
    let empty = Vec::new();
    for (i, iv) in sp["intervals"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .enumerate()
    {
        let at = what(&format!("intervals[{i}]"));
        let (Some(a), Some(b), Some(unit)) = (
            iv["start_s"].as_f64(),
            iv["end_s"].as_f64(),
            iv["unit"].as_str(),
        ) else {
            return Err(Error::invalid(at, "needs start_s, end_s and unit"));
        };
        if !(a.is_finite() && b.is_finite() && a >= 0.0 && a < b && b <= duration_s + 1e-5) {
            return Err(Error::invalid(
                at,
                format!("[{a}, {b}) s: needs 0 ≤ start < end ≤ the duration {duration_s} s"),
            ));
        }
        if let Some(prev) = intervals.last().map(|p: &TimedUnit| p.start_s)
            && a < prev
        {
            return Err(Error::invalid(
                at,
                format!("starts at {a} s, before the previous interval ({prev} s)"),
            ));
        }
        intervals.push(TimedUnit {
            start_s: a,
            end_s: b,
            unit: unit.to_string(),
        });
    }
    let rev = |k: &str| record["revisions"][k].as_str().unwrap_or("").to_string();
    Ok(Some(TimingRecord {
        take: take.to_string(),
        label: sp["label"].as_str().unwrap_or("").to_string(),
        file: sp["file"].as_str().map(str::to_string),
        format: sp["format"].as_str().map(str::to_string),
        origin_s,
        duration_s,
        intervals,
        sampler: sp["sampler"].as_str().unwrap_or("held").to_string(),
        min_hold_s: sp["min_hold_s"].as_f64().unwrap_or(0.0),
        mapping_revision: rev("visemes"),
        timing_revision: rev("timing"),
    }))
}

/// The linear-head branch of [`bake`]: export the pack, then key its coefficients as the mesh's
/// weights, each eye's gaze as its eye joint's rotation `Q·R·Q⁻¹`, and the pack joints' local
/// transforms where the take turns them.
fn bake_linear_head(rt: &mut Runtime, opts: &BakeOptions) -> Result<(Vec<u8>, BakeReport)> {
    use mien_core::gnm::export::pack_to_glb;
    use mien_core::gnm::forward::{eye_rotation, from_row_major};
    let asset = Arc::clone(rt.asset());
    let Some(pack) = asset.pack() else {
        return Err(Error::invalid(
            asset.source(),
            "neither a rig nor a linear head",
        ));
    };
    let out = pack_to_glb(pack, asset.source())?;
    let ch = mien_core::io::gltf::import_gltf_bytes(&out.glb, None, asset.source())?;
    let e = pack.coeff_count();
    let joints = &pack.header.joints;
    let rest: Vec<glam::Mat4> = pack.rest_world.iter().map(from_row_major).collect();
    let k = opts.frames as usize;
    let (mut times, mut coeffs, mut eyes, mut locals) = (
        Vec::with_capacity(k),
        Vec::with_capacity(k * e),
        [Vec::with_capacity(4 * k), Vec::with_capacity(4 * k)],
        Vec::with_capacity(k),
    );
    for f in 0..opts.frames {
        let t = opts.start_s + f64::from(f) / opts.fps;
        rt.sample(t)
            .with_context(|| format!("baking frame {f} at {t} s"))?;
        let Some((head_ext, world)) = rt.head_inputs(0) else {
            return Err(Error::invalid(
                asset.source(),
                "no linear-head inputs for instance 0",
            ));
        };
        let (c, gaze) = head_ext.split_at(e);
        times.push(t as f32);
        coeffs.extend_from_slice(c);
        for i in 0..2 {
            let r = eye_rotation(gaze[2 * i], gaze[2 * i + 1]);
            let q = (out.eye_frame * r * out.eye_frame.inverse()).normalize();
            eyes[i].extend_from_slice(&q.to_array());
        }
        locals.push(
            joints
                .iter()
                .enumerate()
                .map(|(j, pj)| {
                    let l = if pj.parent >= 0 {
                        world[pj.parent as usize].inverse() * world[j]
                    } else {
                        world[j]
                    };
                    l.to_scale_rotation_translation()
                })
                .collect::<Vec<_>>(),
        );
    }
    let mut tracks = vec![BakedTrack {
        node: out.mesh_node,
        path: TrackPath::Weights,
        width: e,
        values: coeffs,
        times: None,
    }];
    for (i, values) in eyes.into_iter().enumerate() {
        tracks.push(BakedTrack {
            node: out.eye_nodes[i],
            path: TrackPath::Rotation,
            width: 4,
            values,
            times: None,
        });
    }
    // Pack joints the take turns (head motion's overrides): their local rotation and translation.
    for (j, pj) in joints.iter().enumerate() {
        let rest_local = if pj.parent >= 0 {
            rest[pj.parent as usize].inverse() * rest[j]
        } else {
            rest[j]
        };
        let (_, r0, _) = rest_local.to_scale_rotation_translation();
        if locals.iter().all(|l| l[j].1.angle_between(r0) < 1e-6) {
            continue;
        }
        tracks.push(BakedTrack {
            node: j,
            path: TrackPath::Rotation,
            width: 4,
            values: locals
                .iter()
                .flat_map(|l| l[j].1.normalize().to_array())
                .collect(),
            times: None,
        });
    }
    let report = BakeReport {
        keys: opts.frames,
        weight_channels: 1,
        transform_channels: (tracks.len() - 1) as u32,
        ..Default::default()
    };
    let name = file_name(asset.source());
    finish(
        opts,
        times,
        tracks,
        vec![part_json(&ch, 0)],
        std::iter::once(("linear_head", json!(name)))
            .chain(speech_record(rt)?.map(|v| ("speech", v)))
            .collect(),
        &out.glb,
        asset.source(),
        report,
    )
}

/// `path`'s file name without folders (the record's bytes must not depend on how a path was typed).
fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
}
