//! A MetaHuman DNA character's take baked to glTF (issue 29): the ICT rig
//! (`metahuman_dna/mien_ict_rig.dna`) plays the Live Link Face take
//! (`livelinkface/MySlate_3_Jason_Millers_iPhone.csv`) through ARKit → its face board → RigLogic,
//! and `bake` writes the character as a GLB (control node left out) with 2 s of keys at 30 fps.
//!
//! Checked against a second runtime playing the same take (not the bake's buffers): the baked
//! file read back by mien's importer and sampled by its clip sampler at key times gives the head's
//! morph weights (as the pose holds them after the per-frame active-target limit every backend
//! poses with: this take turns on more than 32 of the 63 channels) and the jaw's rotation the
//! runtime posed; `verify` passes; the Khronos
//! glTF-Validator reports no error; and three.js (GLTFLoader + AnimationMixer in headless
//! Chromium, `browser/mixer.mjs`, as `cli/tests/browser.rs` drives it) plays the same weights and
//! jaw rotation at the key times, and mien's sampling of the file between them.
//!
//! Skips with a notice when the shared data is absent; the validator and three.js checks skip
//! with a notice without node, chromium or `browser/node_modules` (`npm ci` in `browser/`),
//! unless `MIEN_REQUIRE_BROWSER=1`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use glam::Quat;
use mien_core::io::gltf::import_gltf_bytes;
use mien_core::rig::{ACTIVE_MORPH_LIMIT, Character, LimitStats, MorphLimiter};
use mien_runtime::bake::{BakeOptions, bake, verify};
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};

const FPS: f64 = 30.0;
const FRAMES: u32 = 61; // 2 s
const TAKE: &str = "mien: MySlate_3";
const JAW: &str = "FACIAL_C_Jaw";
const HEAD: &str = "head_lod0_mesh";

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn inputs() -> Option<(PathBuf, PathBuf)> {
    let (dna, csv) = (
        data("metahuman_dna/mien_ict_rig.dna"),
        data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"),
    );
    if dna.exists() && csv.exists() {
        Some((dna, csv))
    } else {
        eprintln!("notice: skipped, ../shared/data/metahuman_dna or livelinkface not found");
        None
    }
}

/// A one-instance runtime of `asset` playing the take.
fn playing(asset: &Arc<Asset>, csv: &Path) -> Runtime {
    let opts = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let mut rt = Runtime::new(Arc::clone(asset), &Device::Cpu, &opts).unwrap();
    rt.instance_mut(0).unwrap().play_livelink_csv(csv).unwrap();
    rt
}

/// The baked GLB (`source` empty: a DNA character's bytes are not read).
fn baked(asset: &Arc<Asset>, csv: &Path) -> Vec<u8> {
    let mut rt = playing(asset, csv);
    let (glb, report) = bake(&mut rt, &[], &BakeOptions::new(TAKE, FPS, FRAMES)).unwrap();
    assert_eq!(report.keys, FRAMES);
    assert_eq!(report.weight_channels, 1, "the head's targets");
    assert!(report.transform_channels >= 1, "the jaw turns");
    glb
}

fn node(ch: &Character, name: &str) -> usize {
    ch.nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// What the runtime posed at each of `times`: the head's morph weights as the pose holds them
/// after the per-frame rules every backend poses with (at most
/// [`ACTIVE_MORPH_LIMIT`] non-zero, the strongest kept: [`MorphLimiter`]), how many the limit
/// dropped, and the jaw's local rotation.
fn runtime_truth(asset: &Arc<Asset>, csv: &Path, times: &[f64]) -> Vec<(Vec<f32>, usize, Quat)> {
    let ch = asset.character();
    let (head, jaw) = (node(ch, HEAD), node(ch, JAW));
    let mut rt = playing(asset, csv);
    let mut limiter = MorphLimiter::new();
    let mut stats = LimitStats::default();
    times
        .iter()
        .map(|&t| {
            rt.update(t).unwrap();
            let pose = rt.instance(0).unwrap().pose();
            let mut w = pose.weights[head].clone();
            limiter.limit(&mut w, ACTIVE_MORPH_LIMIT, &mut stats);
            (w, stats.dropped.len(), pose.locals[jaw].rotation)
        })
        .collect()
}

fn key_time(k: u32) -> f64 {
    f64::from(k) / FPS
}

/// Up to sign, the largest component difference of two rotations.
fn rot_diff(a: Quat, b: Quat) -> f32 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (a - b)
        .to_array()
        .iter()
        .fold(0.0f32, |m, x| m.max(x.abs()))
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
}

/// The bake verifies; the file read back by mien's importer, sampled at key times by its clip
/// sampler, holds the head's weights and the jaw's rotation a second runtime poses then.
#[test]
fn a_dna_take_bakes_verifies_and_reads_back() {
    let Some((dna, csv)) = inputs() else { return };
    let asset = Arc::new(Asset::load(&dna).unwrap());
    let glb = baked(&asset, &csv);
    let r = verify(&glb, "ict_take.glb").unwrap();
    assert_eq!(r.takes, vec![TAKE.to_string()]);
    assert_eq!(r.parts, 1, "the head");

    let back = import_gltf_bytes(&glb, None, "ict_take.glb").unwrap();
    let ch = asset.character();
    assert_eq!(back.nodes.len(), ch.nodes.len() - 1, "no control node");
    let (head, jaw) = (node(&back, HEAD), node(&back, JAW));
    let clip = back.find_clip(TAKE).unwrap();
    let keys: Vec<u32> = (0..FRAMES).collect();
    let times: Vec<f64> = keys.iter().map(|&k| key_time(k)).collect();
    let truth = runtime_truth(&asset, &csv, &times);
    let rest_jaw = ch.nodes[node(ch, JAW)].rest.rotation;
    let (mut turned, mut active, mut dropped) = (0.0f32, 0usize, 0usize);
    for (k, &t) in times.iter().enumerate() {
        let mut pose = back.rest_pose();
        back.apply_clip(clip, t, &mut pose);
        let (w, d, q) = &truth[k];
        dropped = dropped.max(*d);
        let dw = max_diff(&pose.weights[head], w);
        assert!(dw < 1e-6, "key {k}: weights differ by {dw}");
        let dq = rot_diff(pose.locals[jaw].rotation, *q);
        assert!(dq < 1e-6, "key {k}: jaw rotation differs by {dq}");
        turned = turned.max(q.angle_between(rest_jaw));
        active = active.max(w.iter().filter(|x| **x != 0.0).count());
    }
    // The take moves the face: the jaw turns by degrees, many channels are on.
    assert!(turned.to_degrees() > 1.0, "the jaw turned {turned} rad");
    assert!(active > 10, "{active} channels on at most");
    eprintln!(
        "{} keys: the jaw turns up to {:.2}°, up to {active} channels on (the active limit drops up to {dropped} more); {} bytes",
        FRAMES,
        turned.to_degrees(),
        glb.len()
    );
    // The record names the DNA, not a folder.
    let jl = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&glb[20..20 + jl]).unwrap();
    let anim = json["animations"].as_array().unwrap().last().unwrap();
    assert_eq!(anim["extras"]["mien"]["dna"], "mien_ict_rig.dna");
}

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../browser")
}

/// Whether node, chromium and the npm packages are here (`needs_chromium`: also chromium and
/// three.js); a missing one is a printed notice, or a failure under `MIEN_REQUIRE_BROWSER=1`.
fn ready(needs_chromium: bool) -> bool {
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let modules: &[&str] = if needs_chromium {
        &["gltf-validator", "three", "puppeteer-core"]
    } else {
        &["gltf-validator"]
    };
    let modules = modules
        .iter()
        .all(|m| browser_dir().join("node_modules").join(m).is_dir());
    let missing: Vec<&str> = [
        (needs_chromium && !chromium.exists()).then_some("chromium"),
        (!node).then_some("node"),
        (!modules).then_some("browser/node_modules (npm ci in browser/)"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return true;
    }
    if std::env::var("MIEN_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
        panic!("MIEN_REQUIRE_BROWSER=1 but missing: {}", missing.join(", "));
    }
    eprintln!(
        "notice: browser check skipped, missing: {}",
        missing.join(", ")
    );
    false
}

fn write_tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The baked DNA take passes the Khronos glTF-Validator with no error.
#[test]
fn the_dna_bake_passes_the_gltf_validator() {
    let Some((dna, csv)) = inputs() else { return };
    if !ready(false) {
        return;
    }
    let asset = Arc::new(Asset::load(&dna).unwrap());
    let path = write_tmp("ict_take_validate.glb", &baked(&asset, &csv));
    let o = Command::new("node")
        .current_dir(browser_dir())
        .arg("validate.mjs")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let issues = &report["issues"];
    let messages = issues["messages"].as_array().unwrap();
    let codes: Vec<String> = messages
        .iter()
        .map(|m| format!("{} {} {}", m["severity"], m["code"], m["pointer"]))
        .collect();
    eprintln!(
        "glTF-Validator: {} errors, {} warnings, {} infos: {codes:?}",
        issues["numErrors"], issues["numWarnings"], issues["numInfos"]
    );
    assert_eq!(issues["numErrors"], 0, "{messages:?}");
}

/// three.js's AnimationMixer playing the baked file gives, at key times, the head's weights and
/// the jaw's rotation the runtime posed (1e-5), and between keys what mien's own clip sampler
/// reads from the file (1e-5).
#[test]
fn three_js_plays_the_dna_bake_as_mien_posed_it() {
    let Some((dna, csv)) = inputs() else { return };
    if !ready(true) {
        return;
    }
    let asset = Arc::new(Asset::load(&dna).unwrap());
    let glb = baked(&asset, &csv);
    let path = write_tmp("ict_take_three.glb", &glb);
    let back = import_gltf_bytes(&glb, None, "ict_take.glb").unwrap();
    let (head, jaw) = (node(&back, HEAD), node(&back, JAW));
    let clip = back.find_clip(TAKE).unwrap();
    // Ten keys, and ten times between keys.
    let keys: Vec<u32> = (0..10).map(|i| i * 6 + 3).collect();
    let on: Vec<f64> = keys.iter().map(|&k| key_time(k)).collect();
    let between: Vec<f64> = keys.iter().map(|&k| key_time(k) + 0.37 / FPS).collect();
    let times: Vec<f64> = on.iter().chain(&between).copied().collect();
    let o = Command::new("node")
        .current_dir(browser_dir())
        .arg("mixer.mjs")
        .arg("--file")
        .arg(&path)
        .args(["--clip", TAKE, "--times"])
        .arg(
            times
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(","),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let three: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let floats = |v: &serde_json::Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let three_at = |i: usize| {
        let w = floats(&three["weights"][head.to_string()][i]);
        let q = floats(&three["rotation"][jaw.to_string()][i]);
        (w, Quat::from_xyzw(q[0], q[1], q[2], q[3]))
    };
    let truth = runtime_truth(&asset, &csv, &on);
    let (mut worst_w, mut worst_q) = (0.0f32, 0.0f32);
    for (i, (w, _, q)) in truth.iter().enumerate() {
        let (tw, tq) = three_at(i);
        worst_w = worst_w.max(max_diff(&tw, w));
        worst_q = worst_q.max(rot_diff(tq, *q));
    }
    for (i, &t) in between.iter().enumerate() {
        let (tw, tq) = three_at(on.len() + i);
        let mut pose = back.rest_pose();
        back.apply_clip(clip, t, &mut pose);
        worst_w = worst_w.max(max_diff(&tw, &pose.weights[head]));
        worst_q = worst_q.max(rot_diff(tq, pose.locals[jaw].rotation));
    }
    eprintln!(
        "three.js vs mien over {} times: weights within {worst_w:e}, jaw rotation within {worst_q:e}",
        times.len()
    );
    assert!(worst_w < 1e-5, "weights differ by {worst_w}");
    assert!(worst_q < 1e-5, "jaw rotation differs by {worst_q}");
}
