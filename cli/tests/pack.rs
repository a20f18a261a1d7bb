//! `mien pack` and `mien inspect` on `.aosrig` packs, end to end through the binary: the real
//! ICT-FaceKit head (MIT, © 2020 USC ICT) packed twice into the same bytes and inspected (header,
//! regions, blob sizes and file bytes against figures computed here), facecap (Face Cap, MIT) packed
//! from its glTF morph targets, a pack with a bad magic refused naming the file, and every pack
//! refusal exiting non-zero with the file named and nothing left in the output folder.

use std::path::Path;

use serde_json::Value;

mod common;

use common::{data, mien, names};

/// `mien pack INPUT --out OUT --quiet extra…`.
fn pack(input: &Path, out: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "pack",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    mien(&args)
}

#[test]
fn ict_packs_identically_twice_and_inspects() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.aosrig"), dir.path().join("b.aosrig"));
    let run = pack(&data("ict-facekit"), &a, &[]);
    assert!(run.ok(), "{}{}", run.stdout, run.stderr);
    for needle in [
        "26719 vertices",
        "57 expression coefficients",
        "units cm (detected: largest extent",
        "ARKit table: 51 channels → 53 terms",
        "ARKit channels with no shape: tongueOut",
    ] {
        assert!(
            run.stdout.contains(needle),
            "lacks `{needle}`:\n{}",
            run.stdout
        );
    }
    let run = pack(&data("ict-facekit"), &b, &[]);
    assert!(run.ok(), "{}", run.stderr);
    let bytes = std::fs::read(&a).unwrap();
    assert!(bytes == std::fs::read(&b).unwrap(), "two packs differ");
    assert_eq!(&bytes[..8], b"\x89AOSRIG\n");
    // Only the two packs: no temporary files left.
    assert_eq!(names(dir.path()), ["a.aosrig", "b.aosrig"]);

    let run = mien(&["inspect", "--json", a.to_str().unwrap()]);
    assert!(run.ok(), "{}", run.stderr);
    let j: Value = serde_json::from_str(&run.stdout).unwrap();
    let (v, e) = (26_719u64, 57u64);
    assert_eq!(
        (j["vertices"].as_u64(), j["coefficients"].as_u64()),
        (Some(v), Some(e))
    );
    let regions: Vec<(&str, u64, &str)> = j["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let slots = r["slots"].as_str().unwrap();
            (
                r["region"].as_str().unwrap(),
                r["coefficients"].as_u64().unwrap(),
                slots,
            )
        })
        .collect();
    assert_eq!(
        regions,
        [
            ("left_eye", 7, "0..7"),
            ("right_eye", 7, "7..14"),
            ("brows", 6, "14..20"),
            ("lower_face", 35, "20..55"),
            ("pupils", 2, "55..57")
        ]
    );
    assert_eq!(j["regions"][3]["shapes"][8], "jawOpen");
    // Blob sizes from V and E: f32 (V,3), f16 (V,E,3), f32 (E,), f32 (2,V), u16/f16 (V,4).
    let blob = |name: &str| {
        let b = j["blobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["blob"] == name)
            .unwrap();
        (b["bytes"].as_u64().unwrap(), b["offset"].as_u64().unwrap())
    };
    for (name, want) in [
        ("neutral", v * 12),
        ("basis", v * e * 6),
        ("basis_scale", e * 4),
        ("eye_weights", 2 * v * 4),
        ("skin_index", v * 8),
        ("skin_weight", v * 8),
        ("quads", 25_836 * 16),
    ] {
        let (bytes, offset) = blob(name);
        assert_eq!(bytes, want, "{name}");
        assert_eq!(offset % 8, 0, "{name} offset {offset}");
    }
    assert_eq!(j["bytes"]["file"].as_u64(), Some(bytes.len() as u64));
    assert_eq!(j["bytes"]["basis_fp16"].as_u64(), Some(v * e * 6));
    // The text form shows the same header, regions and bytes.
    let run = mien(&["inspect", a.to_str().unwrap()]);
    assert!(run.ok(), "{}", run.stderr);
    for needle in [
        "kind: linear head pack (.aosrig)".to_owned(),
        "vertices: 26719".to_owned(),
        "coefficients: 57".to_owned(),
        "region: lower_face".to_owned(),
        "blob: basis".to_owned(),
        format!("file: {}", bytes.len()),
    ] {
        assert!(
            run.stdout.contains(&needle),
            "lacks `{needle}`:\n{}",
            run.stdout
        );
    }
}

#[test]
fn facecap_packs_from_its_morph_targets() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = (dir.path().join("facecap.aosrig"), dir.path().join("r.json"));
    let run = pack(
        &data("facecap/facecap.glb"),
        &out,
        &["--report", report.to_str().unwrap()],
    );
    assert!(run.ok(), "{}", run.stderr);
    // The full report: one row per coefficient, the measured fp16 error within its bound.
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["shapes"].as_array().map(Vec::len), Some(52));
    assert!(r["fp16_error_over_bound"].as_f64().unwrap() <= 1.0);
    for needle in [
        "2694 vertices",
        "52 expression coefficients",
        "glTF is metres",
        "empty shapes (no vertex moves; scale 0): tongueOut",
    ] {
        assert!(
            run.stdout.contains(needle),
            "lacks `{needle}`:\n{}",
            run.stdout
        );
    }
    let run = mien(&["inspect", "--json", out.to_str().unwrap()]);
    let j: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (j["vertices"].as_u64(), j["coefficients"].as_u64()),
        (Some(2694), Some(52))
    );
}

#[test]
fn a_bad_magic_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.aosrig");
    let run = pack(&data("facecap/facecap.glb"), &good, &[]);
    assert!(run.ok(), "{}", run.stderr);
    let mut bytes = std::fs::read(&good).unwrap();
    bytes[1] = b'X';
    let bad = dir.path().join("bad.aosrig");
    std::fs::write(&bad, &bytes).unwrap();
    let run = mien(&["inspect", bad.to_str().unwrap()]);
    assert!(!run.ok());
    assert!(
        run.stderr.contains(bad.to_str().unwrap()) && run.stderr.contains("magic"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    // Cut short after the header: refused, the file named.
    std::fs::write(&bad, &std::fs::read(&good).unwrap()[..200]).unwrap();
    let run = mien(&["inspect", bad.to_str().unwrap()]);
    assert!(
        !run.ok() && run.stderr.contains(bad.to_str().unwrap()),
        "{}",
        run.stderr
    );
}

/// A 4-vertex quad neutral in centimetres.
const NEUTRAL: &str = "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0\nf 1 2 3 4\n";
/// The quad, vertex 3 moved.
const MOVED: &str = "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0.5\nf 1 2 3 4\n";

/// `mien pack` on a folder of `files` must fail with every needle in its message, and leave the
/// output folder empty.
#[track_caller]
fn refused(files: &[(&str, &str)], extra: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("head");
    std::fs::create_dir(&input).unwrap();
    for (name, text) in files {
        std::fs::write(input.join(name), text).unwrap();
    }
    refused_input(&input, extra, needles);
}

#[track_caller]
fn refused_input(input: &Path, extra: &[&str], needles: &[&str]) {
    let outdir = tempfile::tempdir().unwrap();
    let out = outdir.path().join("head.aosrig");
    let run = pack(input, &out, extra);
    assert!(!run.ok(), "must fail: {}", run.stdout);
    for n in needles {
        assert!(
            run.stderr.contains(n),
            "message lacks `{n}`:\n{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(
        names(outdir.path()),
        Vec::<String>::new(),
        "output left behind"
    );
}

#[test]
fn pack_refusals_exit_non_zero_and_write_nothing() {
    let n = ("neutral.obj", NEUTRAL);
    // Vertex count, topology, a non-finite number, a bad face index: file (and line) named.
    refused(
        &[n, ("jawOpen.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\n")],
        &[],
        &["jawOpen.obj: v: 3 vertices, the neutral neutral.obj has 4"],
    );
    refused(
        &[
            n,
            (
                "jawOpen.obj",
                "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0.5\nf 1 2 4 3\n",
            ),
        ],
        &[],
        &["jawOpen.obj: f [0]: polygon 1 is `f 1 2 4 3`"],
    );
    refused(
        &[
            n,
            ("jawOpen.obj", "v 0 0 0\nv 10 0 0\nv 10 nan 0\nv 0 10 0\n"),
        ],
        &[],
        &["jawOpen.obj: line 3: v.y: `nan` is not finite"],
    );
    refused(
        &[
            ("neutral.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 4\n"),
            ("jawOpen.obj", MOVED),
        ],
        &[],
        &["neutral.obj: line 4: f corner 3"],
    );
    // An empty folder, no neutral, two neutrals, a neutral alone.
    refused(&[], &[], &["holds no .obj files"]);
    refused(
        &[("jawOpen.obj", MOVED)],
        &[],
        &["no .obj file has `neutral` in its name", "--neutral"],
    );
    refused(
        &[n, ("neutral_old.obj", NEUTRAL)],
        &[],
        &["several neutral candidates (neutral.obj, neutral_old.obj)"],
    );
    refused(&[n], &[], &["no shapes to bake"]);
    refused(
        &[n, ("jawOpen.obj", MOVED)],
        &["--neutral", "head.obj"],
        &["the neutral `head.obj` is not one of its .obj files"],
    );
    // Two spellings of one shape.
    refused(
        &[n, ("eyeBlink_L.obj", MOVED), ("eyeBlinkLeft.obj", MOVED)],
        &[],
        &["`eyeBlinkLeft` and `eyeBlink_L` are the same shape (ARKit eyeBlinkLeft)"],
    );
    // Units: a 300-unit head is refused under auto.
    let big = "v 0 0 0\nv 300 0 0\nv 300 300 0\nv 0 300 0\nf 1 2 3 4\n";
    refused(
        &[("neutral.obj", big), ("jawOpen.obj", big)],
        &[],
        &["largest extent is 300", "--units m, cm or mm"],
    );
    // An eyeball range past the vertices, and a malformed one (refused by the argument parser).
    refused(
        &[n, ("jawOpen.obj", MOVED)],
        &["--eyeballs", "2-9"],
        &["eyeballs 2-9"],
    );
    refused(
        &[n, ("jawOpen.obj", MOVED)],
        &["--eyeballs", "9-2"],
        &["the first vertex is after the last"],
    );
    // A missing input; a glTF without morph targets.
    let dir = tempfile::tempdir().unwrap();
    refused_input(
        &dir.path().join("nothing"),
        &[],
        &["nothing", "cannot bake"],
    );
    common::triangle_gltf(dir.path(), "tri", [0.0; 3], None);
    refused_input(
        &dir.path().join("tri.gltf"),
        &[],
        &["tri.gltf", "has no morph targets to bake"],
    );
}

#[test]
fn units_mm_and_an_unwritable_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("head");
    std::fs::create_dir(&input).unwrap();
    let big = "v 0 0 0\nv 300 0 0\nv 300 300 0\nv 0 300 0\nf 1 2 3 4\n";
    std::fs::write(input.join("neutral.obj"), big).unwrap();
    std::fs::write(
        input.join("jawOpen.obj"),
        big.replace("v 0 300 0", "v 0 300 5"),
    )
    .unwrap();
    let out = dir.path().join("head.aosrig");
    let run = pack(&input, &out, &["--units", "mm"]);
    assert!(run.ok(), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("units mm (--units mm), stored in metres"),
        "{}",
        run.stdout
    );
    // The largest delta: 5 mm.
    assert!(
        run.stdout.contains("largest delta 5.00 mm (jawOpen)"),
        "{}",
        run.stdout
    );
    // An output folder that does not exist: refused, nothing written.
    let run = pack(
        &input,
        &dir.path().join("no/such/head.aosrig"),
        &["--units", "mm"],
    );
    assert!(
        !run.ok() && run.stderr.contains("no/such/head.aosrig"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("no").exists());
}

/// `--out` / `--report` that would destroy an input or each other are refused before any work,
/// and the inputs are left byte-identical.
#[test]
fn outputs_that_would_overwrite_an_input_or_each_other_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("head");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("neutral.obj"), NEUTRAL).unwrap();
    std::fs::write(input.join("jawOpen.obj"), MOVED).unwrap();
    let i = input.to_str().unwrap();
    let neutral = input.join("neutral.obj");
    let n = neutral.to_str().unwrap();
    let p = dir.path().join("x.aosrig");
    let x = p.to_str().unwrap();
    for (args, needle) in [
        (vec!["pack", i, "--out", n], "--out"),
        (vec!["pack", i, "--out", x, "--report", n], "--report"),
        (vec!["pack", i, "--out", x, "--report", x], "the same file"),
        (vec!["pack", n, "--out", n], "is the input"),
        (
            vec!["pack", i, "--out", dir.path().to_str().unwrap()],
            "is a folder",
        ),
    ] {
        let run = mien(&args);
        assert!(!run.ok(), "{args:?} must fail: {}", run.stdout);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
        assert_eq!(std::fs::read_to_string(&neutral).unwrap(), NEUTRAL);
        assert!(!p.exists());
    }
    // A pack inside the input folder is fine: it is not a shape.
    let inside = input.join("head.aosrig");
    let run = mien(&["pack", i, "--out", inside.to_str().unwrap(), "--quiet"]);
    assert!(run.ok(), "{}", run.stderr);
}
