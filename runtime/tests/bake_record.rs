//! Bake records as seed 002 states them, and the glTF-Validator's animation rules on what a bake
//! writes and what `verify` accepts (issue 25, items 5 and 7):
//!
//! - a take that moves nothing is refused (never an animation with empty `channels` and
//!   `samplers`, which the validator rejects as EMPTY_ENTITY), and `verify` refuses such a file,
//!   and one with a duplicated channel or non-increasing key times, by the validator's code;
//! - the record carries the mapping and timing revision identifiers, and `verify` refuses a
//!   record (sealed as a bake would seal it) whose revisions differ from this mien's;
//! - `alignment` recovers the speech's timing record — label, origin, duration, every interval —
//!   checked against the Gentle file read independently here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_runtime::bake::{BakeOptions, alignment, bake, verify};
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions, Speech, SpeechOptions};
use serde_json::{Value, json};

mod glb;
use glb::{join_glb, split_glb};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn runtime(asset: &Arc<Asset>) -> Runtime {
    let o = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    Runtime::new(Arc::clone(asset), &Device::Cpu, &o).unwrap()
}

/// Face Cap driven by the Gentle alignment (speech at `offset` s on the media clock), baked.
fn facecap_speech(offset: f64, frames: u32) -> Vec<u8> {
    let file = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut rt = runtime(&asset);
    let options = SpeechOptions {
        audio_offset: offset,
        ..SpeechOptions::default()
    };
    let speech = Speech::from_file(
        data("gentle/lucier_golden.json"),
        &options,
        asset.character(),
    )
    .unwrap();
    // No drive: the face at rest, the speech on the mouth.
    rt.instance_mut(0)
        .unwrap()
        .set_speech(Some(speech))
        .unwrap();
    let opts = BakeOptions::new("lucier", 30.0, frames);
    bake(&mut rt, &std::fs::read(&file).unwrap(), &opts)
        .unwrap()
        .0
}

/// The last animation's record, resealed as a bake seals it: the record's own FNV-1a 64 over its
/// JSON without that field (computed here from the FNV-1a definition, not mien's helper).
fn reseal(json: &mut Value) {
    fn fnv1a64(bytes: &[u8]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }
    /// The same value with every object's keys inserted in sorted order (serde_json keeps
    /// insertion order here), so it prints as canonical JSON.
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let last = json["animations"].as_array().unwrap().len() - 1;
    let rec = &mut json["animations"][last]["extras"]["mien"];
    rec.as_object_mut().unwrap().remove("record_fnv1a64");
    let h = fnv1a64(serde_json::to_string(&sorted(rec)).unwrap().as_bytes());
    rec["record_fnv1a64"] = json!(format!("{h:016x}"));
}

/// Every object's keys in reverse order, as a tool re-serialising the file might write them.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.reverse();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), reversed(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

#[test]
fn a_take_that_moves_nothing_is_refused_and_nothing_is_written() {
    // CesiumMan without its walk: no morph targets, every joint at rest.
    let file = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    // No drive: the character at rest.
    let mut rt = runtime(&asset);
    let e = match bake(
        &mut rt,
        &std::fs::read(&file).unwrap(),
        &BakeOptions::new("rest", 30.0, 5),
    ) {
        Ok((_, r)) => panic!("a still take was baked: {r:?}"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("moves nothing") && e.contains("EMPTY_ENTITY") && e.contains("CesiumMan"),
        "{e}"
    );
}

#[test]
fn verify_applies_the_validators_animation_rules() {
    let file = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut rt = runtime(&asset);
    rt.instance_mut(0).unwrap().play_clip("0").unwrap();
    let (bytes, _) = bake(
        &mut rt,
        &std::fs::read(&file).unwrap(),
        &BakeOptions::new("take", 30.0, 8),
    )
    .unwrap();
    verify(&bytes, "ok.glb").unwrap();
    let (json, bin) = split_glb(&bytes);
    let last = json["animations"].as_array().unwrap().len() - 1;

    // What a bake of a still take wrote before: the record kept, channels and samplers empty.
    let mut empty = json.clone();
    empty["animations"][last]["channels"] = json!([]);
    empty["animations"][last]["samplers"] = json!([]);
    let e = verify(&join_glb(&empty, &bin), "empty.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("EMPTY_ENTITY") && e.contains("empty.glb") && e.contains("channels"),
        "{e}"
    );

    // A channel repeated: two channels drive one node's one path.
    let mut twice = json.clone();
    let c0 = twice["animations"][last]["channels"][0].clone();
    twice["animations"][last]["channels"]
        .as_array_mut()
        .unwrap()
        .push(c0);
    let e = verify(&join_glb(&twice, &bin), "twice.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("ANIMATION_DUPLICATE_TARGETS"), "{e}");

    // Key times out of order: swap the first two times of sampler 0's input.
    let s0 = &json["animations"][last]["samplers"][0];
    let acc = &json["accessors"][s0["input"].as_u64().unwrap() as usize];
    let view = &json["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let at = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    let mut swapped = bin.clone();
    let (a, b) = (
        swapped[at..at + 4].to_vec(),
        swapped[at + 4..at + 8].to_vec(),
    );
    swapped[at..at + 4].copy_from_slice(&b);
    swapped[at + 4..at + 8].copy_from_slice(&a);
    let e = verify(&join_glb(&json, &swapped), "swapped.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ANIMATION_SAMPLER_INPUT_ACCESSOR_NON_INCREASING")
            || e.contains("ACCESSOR_MIN_MISMATCH"),
        "{e}"
    );

    // The interpolation changed: every engine would play steps, not what mien posed.
    let mut step = json.clone();
    step["animations"][last]["samplers"][0]["interpolation"] = json!("STEP");
    let e = verify(&join_glb(&step, &bin), "step.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed"), "{e}");

    // Renamed: the record names the animation it was baked as.
    let mut renamed = json.clone();
    renamed["animations"][last]["name"] = json!("another");
    let e = verify(&join_glb(&renamed, &bin), "renamed.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("renamed"), "{e}");

    // The baked animation twice: two takes of one name.
    let mut dup = json.clone();
    let a = dup["animations"][last].clone();
    dup["animations"].as_array_mut().unwrap().push(a);
    let e = verify(&join_glb(&dup, &bin), "dup.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("two baked takes"), "{e}");

    // Re-serialised with every object's keys in another order: the same file to verify.
    verify(&join_glb(&reversed(&json), &bin), "reordered.glb").unwrap();

    // An output accessor one key short.
    let mut short = json.clone();
    let out = s0["output"].as_u64().unwrap() as usize;
    let n = short["accessors"][out]["count"].as_u64().unwrap();
    short["accessors"][out]["count"] = json!(n - 1);
    let e = verify(&join_glb(&short, &bin), "short.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_COUNT"),
        "{e}"
    );
}

#[test]
fn the_record_carries_seed_002s_revisions_and_verify_compares_them() {
    let bytes = facecap_speech(0.0, 30);
    let (json, bin) = split_glb(&bytes);
    let last = json["animations"].as_array().unwrap().len() - 1;
    let rec = &json["animations"][last]["extras"]["mien"];
    assert_eq!(
        rec["revisions"],
        json!({
            "arkit": "mien-arkit52-names-v2",
            "visemes": "mien-arpabet-viseme-v1",
            "timing": "mien-audio-clock-half-open-held-v1",
        })
    );
    assert_eq!(rec["version"], 2);
    verify(&bytes, "speech.glb").unwrap();

    // A record sealed by another mien with another viseme table: intact, but not this reader's.
    let mut other = json.clone();
    other["animations"][last]["extras"]["mien"]["revisions"]["visemes"] =
        json!("mien-arpabet-viseme-v0");
    reseal(&mut other);
    let e = verify(&join_glb(&other, &bin), "other.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mien-arpabet-viseme-v0")
            && e.contains("mien-arpabet-viseme-v1")
            && e.contains("other.glb"),
        "{e}"
    );
    // The same edit without resealing is an altered record: the reseal above is what a bake does.
    let mut unsealed = json.clone();
    unsealed["animations"][last]["extras"]["mien"]["revisions"]["visemes"] =
        json!("mien-arpabet-viseme-v0");
    let e = verify(&join_glb(&unsealed, &bin), "unsealed.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("altered"), "{e}");
    // A record without its timing revision.
    let mut missing = json.clone();
    missing["animations"][last]["extras"]["mien"]["revisions"]
        .as_object_mut()
        .unwrap()
        .remove("timing");
    reseal(&mut missing);
    let e = verify(&join_glb(&missing, &bin), "missing.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no timing mapping revision"), "{e}");
}

#[test]
fn alignment_recovers_the_timing_record_of_a_loaded_bake() {
    let bytes = facecap_speech(0.5, 20);
    let rec = alignment(&bytes, "speech.glb", "lucier")
        .unwrap()
        .expect("a speech take has a timing record");
    // The Gentle file read here: every phone of every timed word, back to back from the word's
    // start, in order; `oov` (no mouth shape) and zero-length phones are gaps, silences too.
    let gentle: Value =
        serde_json::from_slice(&std::fs::read(data("gentle/lucier_golden.json")).unwrap()).unwrap();
    let mut phones = Vec::new();
    for w in gentle["words"].as_array().unwrap() {
        let Some(mut t) = w["start"].as_f64() else {
            continue;
        };
        for p in w["phones"].as_array().unwrap() {
            let d = p["duration"].as_f64().unwrap();
            let label = p["phone"].as_str().unwrap().split('_').next().unwrap();
            if label != "oov" && d > 0.0 {
                phones.push((label.to_uppercase(), t + d));
            }
            t += d;
        }
    }
    let spoken: Vec<_> = rec.intervals.iter().filter(|i| i.unit != "SIL").collect();
    assert_eq!(spoken.len(), phones.len());
    // Ends are where the file puts them (a start may be trimmed onto the previous end).
    for (i, (iv, (unit, end))) in spoken.iter().zip(&phones).enumerate() {
        assert!(
            iv.unit == *unit && (iv.end_s - end).abs() < 1e-6,
            "interval {i}: {iv:?} vs {unit} ending at {end}"
        );
    }
    // `ay_S` of "I": the ARPABET phoneme without Gentle's position suffix.
    assert_eq!(rec.intervals[0].unit, "AY");
    assert_eq!(rec.origin_s, 0.5);
    assert_eq!(rec.file.as_deref(), Some("lucier_golden.json"));
    assert_eq!(rec.format.as_deref(), Some("gentle"));
    assert!(rec.duration_s >= phones.last().unwrap().1 - 1e-6);
    assert_eq!(rec.mapping_revision, "mien-arpabet-viseme-v1");
    assert_eq!(rec.timing_revision, "mien-audio-clock-half-open-held-v1");

    // A take without speech has none; a take the file lacks is refused, naming those it has.
    let e = alignment(&bytes, "speech.glb", "nope")
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope") && e.contains("lucier"), "{e}");

    // An interval edited to end before it starts (record resealed): refused, naming it.
    let (mut json, bin) = split_glb(&bytes);
    let last = json["animations"].as_array().unwrap().len() - 1;
    json["animations"][last]["extras"]["mien"]["speech"]["intervals"][3]["end_s"] = json!(-1.0);
    reseal(&mut json);
    let e = alignment(&join_glb(&json, &bin), "bad.glb", "lucier")
        .unwrap_err()
        .to_string();
    assert!(e.contains("intervals[3]") && e.contains("bad.glb"), "{e}");
}

#[test]
fn a_take_is_not_baked_under_a_name_the_file_has() {
    let file = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut rt = runtime(&asset);
    rt.instance_mut(0).unwrap().play_clip("0").unwrap();
    let opts = BakeOptions::new("once", 30.0, 4);
    let (bytes, _) = bake(&mut rt, &std::fs::read(&file).unwrap(), &opts).unwrap();
    let e = match bake(&mut rt, &bytes, &opts) {
        Ok(_) => panic!("a second take named `once` was baked"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("once") && e.contains("already"), "{e}");
    let e = match bake(&mut rt, &bytes, &BakeOptions::new(" ", 30.0, 4)) {
        Ok(_) => panic!("a take without a name was baked"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("name"), "{e}");
}

#[test]
fn a_take_without_speech_has_no_timing_record() {
    let file = data("facecap/facecap.glb");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut rt = runtime(&asset);
    rt.instance_mut(0).unwrap().play_clip("0").unwrap();
    let (bytes, _) = bake(
        &mut rt,
        &std::fs::read(&file).unwrap(),
        &BakeOptions::new("clip", 30.0, 4),
    )
    .unwrap();
    assert_eq!(alignment(&bytes, "clip.glb", "clip").unwrap(), None);
    let (json, _) = split_glb(&bytes);
    let rec = &json["animations"].as_array().unwrap().last().unwrap()["extras"]["mien"];
    assert_eq!(rec["revisions"], json!({"arkit": "mien-arkit52-names-v2"}));
    assert!(rec["speech"].is_null());
}
