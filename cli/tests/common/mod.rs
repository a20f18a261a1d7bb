//! Helpers shared by the CLI test files: run the binary, read what it wrote, write small glTF
//! characters.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The `mien` binary under test, or `$MIEN_BIN` (e.g. an older build, to see a test fail on it).
pub fn bin() -> PathBuf {
    std::env::var_os("MIEN_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mien")), PathBuf::from)
}

/// `../shared/data/<rel>`.
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time, seconds.
    pub secs: f64,
}

impl Run {
    /// Exit code 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// A `mien` command with `NODEVICE_SELECT=1` (no device-selection layer on lavapipe).
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .env("NODEVICE_SELECT", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Run `command` to the end.
pub fn finish(mut c: Command) -> Run {
    let t = Instant::now();
    let out = c.output().expect("spawn mien");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
        secs: t.elapsed().as_secs_f64(),
    }
}

/// Run `mien args…`.
pub fn mien(args: &[&str]) -> Run {
    finish(command(args))
}

/// Run `mien animate --quiet --backend cpu --out <out> [--format ply] extra…`.
pub fn animate(out: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "animate",
        "--quiet",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ];
    // The tests read frames back as .ply (SPZ is the default): `--format` in `extra` overrides.
    if !extra.contains(&"--format") {
        args.extend_from_slice(&["--format", "ply"]);
    }
    args.extend_from_slice(extra);
    mien(&args)
}

/// `out/report.json`, parsed.
pub fn report(out: &Path) -> serde_json::Value {
    let bytes = std::fs::read(out.join("report.json"))
        .unwrap_or_else(|e| panic!("{}/report.json: {e}", out.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// Sorted names in `dir` (empty when it does not exist).
pub fn names(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Frame files in `out/frames` (`.spz`, the default, `.ply` or `.glb`).
pub fn frame_count(out: &Path) -> usize {
    names(&out.join("frames"))
        .iter()
        .filter(|n| n.ends_with(".ply") || n.ends_with(".spz") || n.ends_with(".glb"))
        .count()
}

/// Entries of `parent` that are staging or old folders of mien runs.
pub fn leftovers(parent: &Path) -> Vec<String> {
    names(parent)
        .into_iter()
        .filter(|n| n.contains(".mien-"))
        .collect()
}

/// Write `dir/<name>.gltf` (+ `.bin`): one triangle 10 cm on a side in a node with `translation`,
/// and, when `clip_end` is given, a clip moving the node 1 cm up from 0 s to `clip_end` s.
pub fn triangle_gltf(
    dir: &Path,
    name: &str,
    translation: [f64; 3],
    clip_end: Option<f32>,
) -> PathBuf {
    let mut bin: Vec<u8> = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1, 0.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    let end = clip_end.unwrap_or(1.0);
    for v in [0.0f32, end] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    for v in [0.0f32, 0.0, 0.0, 0.0, 0.01, 0.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(dir.join(format!("{name}.bin")), &bin).unwrap();
    let animations = if clip_end.is_some() {
        r#","animations":[{"name":"rise","channels":[{"sampler":0,"target":{"node":0,"path":"translation"}}],"samplers":[{"input":1,"output":2}]}]"#
    } else {
        ""
    };
    let [tx, ty, tz] = translation;
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},
"buffers":[{{"byteLength":{len},"uri":"{name}.bin"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":8}},{{"buffer":0,"byteOffset":44,"byteLength":24}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[0.1,0.1,0]}},
{{"bufferView":1,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[{end}]}},
{{"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],
"nodes":[{{"mesh":0,"translation":[{tx:e},{ty:e},{tz:e}]}}],
"scenes":[{{"nodes":[0]}}],"scene":0{animations}}}"#,
        len = bin.len()
    );
    let path = dir.join(format!("{name}.gltf"));
    std::fs::write(&path, json).unwrap();
    path
}

/// A 684-byte glTF whose POSITION accessor has 5,000,000 vertices and no bufferView (all zero).
pub const IMPLICIT_5M: &str = r#"{"asset": {"version": "2.0"}, "buffers": [{"byteLength": 72, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAD8AAAAA"}], "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 36}], "accessors": [{"componentType": 5126, "type": "VEC3", "count": 5000000, "min": [0, 0, 0], "max": [0, 0, 0]}, {"componentType": 5126, "type": "VEC3", "count": 3, "bufferView": 1, "min": [0, 0, 0], "max": [0, 0.5, 0]}], "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": []}]}], "nodes": [{"mesh": 0}], "scenes": [{"nodes": [0]}], "scene": 0}"#;
