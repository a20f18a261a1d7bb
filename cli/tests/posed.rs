//! Posed frames obey the rest pose's rule (finite, within ±1e6 m) on every frame, whatever the
//! outputs: an animation that throws the geometry away is refused naming the character file, the
//! frame, its media time and the node, and nothing is written.

mod common;

use std::path::{Path, PathBuf};

use common::{animate, names};

/// `dir/<name>.gltf`: one triangle 10 cm on a side in node `mover`, and a clip that animates its
/// `path` (`translation` or `scale`) linearly from `from` at 0 s to `to` at 1 s.
fn animated_triangle(dir: &Path, name: &str, path: &str, from: [f32; 3], to: [f32; 3]) -> PathBuf {
    let mut bin: Vec<u8> = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 1.0]
        .into_iter()
        .chain(from)
        .chain(to)
    {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(dir.join(format!("{name}.bin")), &bin).unwrap();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},
"buffers":[{{"byteLength":{len},"uri":"{name}.bin"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":8}},{{"buffer":0,"byteOffset":44,"byteLength":24}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[0.1,0.1,0]}},
{{"bufferView":1,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]}},
{{"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],
"nodes":[{{"name":"mover","mesh":0}}],
"scenes":[{{"nodes":[0]}}],"scene":0,
"animations":[{{"channels":[{{"sampler":0,"target":{{"node":0,"path":"{path}"}}}}],"samplers":[{{"input":1,"output":2}}]}}]}}"#,
        len = bin.len()
    );
    let p = dir.join(format!("{name}.gltf"));
    std::fs::write(&p, json).unwrap();
    p
}

/// `mien animate` of `character` with `extra` must fail naming every needle, writing nothing.
fn refused(character: &Path, extra: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec!["--character", character.to_str().unwrap(), "--fps", "4"];
    args.extend_from_slice(extra);
    let r = animate(&out, &args);
    assert!(!r.ok(), "{args:?} must fail:\n{}", r.stdout);
    for n in needles {
        assert!(r.stderr.contains(n), "{args:?}: lacks `{n}`:\n{}", r.stderr);
    }
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(
        names(dir.path()).is_empty(),
        "wrote {:?}",
        names(dir.path())
    );
}

#[test]
fn a_clip_that_scales_to_3e38_is_refused_with_any_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let c = animated_triangle(dir.path(), "swell", "scale", [1.0; 3], [3e38; 3]);
    // Linear from 1 to 3e38 over 1 s: at 4 fps the first frame past the bound is frame 1, 0.25 s.
    let needles = [
        "swell.gltf",
        "frame 1",
        "media time 0.250 s",
        "node 0 (`mover`)",
    ];
    for extra in [
        &[][..],
        &["--ply", "none", "--sheet", "0"][..],
        &["--ply", "dc", "--sheet", "0"][..],
    ] {
        refused(&c, extra, &needles);
    }
}

#[test]
fn a_translation_to_1e30_is_refused_like_a_far_rest_pose() {
    let dir = tempfile::tempdir().unwrap();
    let c = animated_triangle(
        dir.path(),
        "flee",
        "translation",
        [0.0; 3],
        [1e30, 0.0, 0.0],
    );
    for extra in [&["--ply", "dc"][..], &["--ply", "none", "--sheet", "0"][..]] {
        refused(
            &c,
            extra,
            &[
                "flee.gltf",
                "frame 1",
                "0.250 s",
                "`mover`",
                "2.5e29",
                "1000000 m",
            ],
        );
    }
}

#[test]
fn motion_within_the_bound_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    // 1000 km away at the end: far, but a place (the bound is 10⁶ m).
    let c = animated_triangle(
        dir.path(),
        "travel",
        "translation",
        [0.0; 3],
        [0.0, 0.0, 9e5],
    );
    let out = dir.path().join("out");
    let r = animate(
        &out,
        &[
            "--character",
            c.to_str().unwrap(),
            "--fps",
            "4",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    assert_eq!(common::frame_count(&out), 5);
}

/// `dir/<name>.gltf`: one triangle whose morph target moves every vertex `delta` metres up, and a
/// clip that raises the target's weight from 0 at 0 s to 1 at 1 s (node matrices stay identity).
fn morphing_triangle(dir: &Path, name: &str, delta: f32) -> PathBuf {
    let mut bin: Vec<u8> = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1, 0.0]
        .into_iter()
        .chain([0.0, delta, 0.0].repeat(3))
        .chain([0.0, 1.0, 0.0, 1.0])
    {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(dir.join(format!("{name}.bin")), &bin).unwrap();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},
"buffers":[{{"byteLength":{len},"uri":"{name}.bin"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":36}},{{"buffer":0,"byteOffset":72,"byteLength":8}},{{"buffer":0,"byteOffset":80,"byteLength":8}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[0.1,0.1,0]}},
{{"bufferView":1,"componentType":5126,"count":3,"type":"VEC3","min":[0,{delta:e},0],"max":[0,{delta:e},0]}},
{{"bufferView":2,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]}},
{{"bufferView":3,"componentType":5126,"count":2,"type":"SCALAR"}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"targets":[{{"POSITION":1}}]}}],"weights":[0],"extras":{{"targetNames":["lift"]}}}}],
"nodes":[{{"name":"face","mesh":0}}],
"scenes":[{{"nodes":[0]}}],"scene":0,
"animations":[{{"channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],"samplers":[{{"input":2,"output":3}}]}}]}}"#,
        len = bin.len()
    );
    let p = dir.join(format!("{name}.gltf"));
    std::fs::write(&p, json).unwrap();
    p
}

#[test]
fn morph_weights_that_throw_vertices_away_are_refused_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    // Weight 0.75 at frame 3 (0.75 s) moves the vertices 1.35e6 m (frame 2: 9e5 m, within the
    // bound): past it with every node matrix the identity, so only the posed positions can tell.
    let c = morphing_triangle(dir.path(), "stretch", 1.8e6);
    let needles = [
        "stretch.gltf",
        "frame 3",
        "media time 0.750 s",
        "vertex 0",
        "1350000",
    ];
    refused(&c, &["--ply", "none", "--sheet", "0"], &needles);
    refused(&c, &["--ply", "dc", "--sheet", "0"], &needles);
}
