//! mien's splat files in real viewers: three.js + Spark (npm `three`, `@sparkjsdev/spark`) load
//! the `.ply` and `.spz` frames `mien animate` writes, and Babylon.js's glTF loader (npm
//! `babylonjs`, `babylonjs-loaders`, which reads `KHR_gaussian_splatting`) loads the `.glb` frames,
//! in headless Chromium (Debian's `chromium`, driven by `puppeteer-core` through
//! `browser/render.mjs`); each screenshot is compared with mien's own rasteriser image of the same
//! view by PSNR over RGB — Face Cap in every format, and every character of the surface-lift issue
//! (Face Cap, CesiumMan, the ICT-FaceKit pack, Ready Player Me, a VRM avatar) as `.ply`.
//!
//! Needs `/usr/bin/chromium` (or `$CHROMIUM`), `node`, and `browser/node_modules` (`npm ci` in
//! `browser/`); `.ci/run` installs them. Without them the test prints a notice and passes, unless
//! `MIEN_REQUIRE_BROWSER=1` (CI), which makes a missing browser a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, data};
use mien_core::preview::{Camera, rasterize, splat_bounds};

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../browser")
}

/// Whether the browser pieces are here; a missing one is a failure under `MIEN_REQUIRE_BROWSER=1`.
fn ready() -> bool {
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let modules = [
        "@sparkjsdev/spark",
        "gltf-validator",
        "babylonjs",
        "babylonjs-loaders",
    ]
    .iter()
    .all(|m| browser_dir().join("node_modules").join(m).is_dir());
    let missing: Vec<&str> = [
        (!chromium.exists()).then_some("chromium"),
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
        "notice: browser test skipped, missing: {}",
        missing.join(", ")
    );
    false
}

/// PSNR of two RGB8 images of one size over the pixels `keep` selects, dB.
fn psnr_where(
    a: &image::RgbImage,
    b: &image::RgbImage,
    mut keep: impl FnMut(&[u8], &[u8]) -> bool,
) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let (mut sum, mut n) = (0.0f64, 0u64);
    for (x, y) in a.pixels().zip(b.pixels()) {
        if keep(&x.0, &y.0) {
            sum += (0..3)
                .map(|k| (f64::from(x.0[k]) - f64::from(y.0[k])).powi(2))
                .sum::<f64>();
            n += 3;
        }
    }
    10.0 * (255.0f64 * 255.0 / (sum / n.max(1) as f64).max(1e-12)).log10()
}

/// PSNR over the whole image, and over the character (pixels lit in either image).
fn psnr(a: &image::RgbImage, b: &image::RgbImage) -> (f64, f64) {
    let lit = |p: &[u8]| p.iter().any(|&c| c > 8);
    (
        psnr_where(a, b, |_, _| true),
        psnr_where(a, b, |x, y| lit(x) || lit(y)),
    )
}

/// PSNR inside the character: pixels lit in both images, eroded by 3 pixels (4-neighbour), so
/// the silhouette's edge — where viewers differ in how far they draw a gaussian — is left out.
fn psnr_interior(a: &image::RgbImage, b: &image::RgbImage) -> f64 {
    let (w, h) = a.dimensions();
    let lit = |p: &image::Rgb<u8>| p.0.iter().any(|&c| c > 8);
    let mut keep: Vec<bool> = a
        .pixels()
        .zip(b.pixels())
        .map(|(x, y)| lit(x) && lit(y))
        .collect();
    for _ in 0..3 {
        let prev = keep.clone();
        for y in 0..h as usize {
            for x in 0..w as usize {
                let at = |dx: i64, dy: i64| {
                    let (xx, yy) = (x as i64 + dx, y as i64 + dy);
                    xx >= 0
                        && yy >= 0
                        && (xx as u32) < w
                        && (yy as u32) < h
                        && prev[yy as usize * w as usize + xx as usize]
                };
                keep[y * w as usize + x] =
                    at(0, 0) && at(1, 0) && at(-1, 0) && at(0, 1) && at(0, -1);
            }
        }
    }
    let mut i = 0usize;
    psnr_where(a, b, |_, _| {
        i += 1;
        keep[i - 1]
    })
}

fn animate(out: &Path, format: &str) {
    let facecap = data("facecap/facecap.glb");
    let o = Command::new(bin())
        .args([
            "animate",
            "--quiet",
            "--backend",
            "cpu",
            "--frames",
            "1",
            "--sheet",
            "0",
        ])
        .args(["--gaussians", "30000", "--format", format, "--character"])
        .arg(&facecap)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `file` drawn by `viewer` (`spark` or `babylon`) from `cam`, saved to `out`.
fn view(viewer: &str, file: &Path, cam: &Camera, out: &Path) -> image::RgbImage {
    let v = |p: glam::DVec3| format!("{},{},{}", p.x, p.y, p.z);
    let o = Command::new("node")
        .current_dir(browser_dir())
        .arg("render.mjs")
        .args(["--viewer", viewer])
        .arg("--file")
        .arg(file)
        .args(["--eye", &v(cam.eye), "--target", &v(cam.target)])
        .args(["--fov", &cam.fov_y.to_degrees().to_string()])
        .args([
            "--size",
            &format!("{},{}", cam.width, cam.height),
            "--bg",
            "0,0,0",
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "render.mjs: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    image::open(out).unwrap().to_rgb8()
}

#[test]
fn spark_and_babylon_draw_mien_frames_like_mien() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ply_out, spz_out, glb_out) = (
        dir.path().join("ply"),
        dir.path().join("spz"),
        dir.path().join("glb"),
    );
    animate(&ply_out, "ply");
    animate(&spz_out, "spz");
    animate(&glb_out, "glb");
    let ply = ply_out.join("frames/frame_00000.ply");
    let spz = spz_out.join("frames/frame_00000.spz");
    let glb = glb_out.join("frames/frame_00000.glb");
    let cloud = mien_core::io::ply::read_splat_ply(&ply).unwrap();
    let (buffers, ranges) = cloud.to_buffers().unwrap();
    let (center, radius) = splat_bounds(&buffers, &ranges).unwrap().unwrap().sphere();
    let cam = Camera::framing(center, radius, 256, 256, 0.6, 0.0).unwrap();
    let mine = rasterize(&cam, &buffers, &ranges, [0.0; 3]).unwrap().image;
    let keep = std::env::var_os("MIEN_BROWSER_KEEP").map(PathBuf::from);
    let outdir = keep.clone().unwrap_or_else(|| dir.path().to_path_buf());
    mine.save(outdir.join("mien.png")).unwrap();
    let from_ply = view("spark", &ply, &cam, &outdir.join("spark_ply.png"));
    let from_spz = view("spark", &spz, &cam, &outdir.join("spark_spz.png"));
    let from_glb = view("babylon", &glb, &cam, &outdir.join("babylon_glb.png"));
    let (p1, c1) = psnr(&mine, &from_ply);
    let (p2, c2) = psnr(&mine, &from_spz);
    let (p4, c4) = psnr(&mine, &from_glb);
    let (i1, i4) = (
        psnr_interior(&mine, &from_ply),
        psnr_interior(&mine, &from_glb),
    );
    eprintln!(
        "PSNR mien vs Spark: .ply {p1:.2} dB ({c1:.2} dB over the character, {i1:.2} dB inside it), .spz {p2:.2} dB ({c2:.2} dB); vs Babylon.js: .glb {p4:.2} dB ({c4:.2} dB, {i4:.2} dB inside)"
    );
    // Not blank: the head covers a good part of the view in Spark's image too.
    let lit = from_ply
        .pixels()
        .filter(|p| p.0.iter().any(|&c| c > 40))
        .count();
    assert!(lit > 256 * 256 / 8, "Spark drew {lit} lit pixels");
    assert!(
        p1 >= 28.0 && c1 >= 24.0,
        ".ply in Spark vs mien: {p1:.2} / {c1:.2} dB"
    );
    assert!(
        p2 >= 28.0 && c2 >= 24.0,
        ".spz in Spark vs mien: {p2:.2} / {c2:.2} dB"
    );
    // Babylon.js stops drawing a gaussian closer to its centre than mien and Spark (its
    // silhouette is ~3% smaller), which costs PSNR at the edge; inside the character the two
    // agree as well as Spark does.
    assert!(
        p4 >= 27.0 && i4 >= 32.0,
        ".glb in Babylon.js vs mien: {p4:.2} dB, {i4:.2} dB inside the character"
    );
    // The comparison can fail: mien's image of the head turned 0.3 rad is far from Spark's.
    let turned = Camera::framing(center, radius, 256, 256, 0.6, 0.3).unwrap();
    let other = rasterize(&turned, &buffers, &ranges, [0.0; 3])
        .unwrap()
        .image;
    let (_, c3) = psnr(&other, &from_ply);
    assert!(
        c3 < c1 - 5.0,
        "a turned view scores {c3:.2} dB against {c1:.2}"
    );
    let i5 = psnr_interior(&other, &from_glb);
    assert!(
        i5 < i4 - 8.0,
        "a turned view scores {i5:.2} dB inside the character against Babylon's {i4:.2}"
    );
}

/// `animate --format glb` frames pass the Khronos glTF-Validator (npm `gltf-validator`) with no
/// error but one: the validator's latest release (2.0.0-dev.3.10) predates the ratified
/// extension and calls its colon-prefixed attribute names (`KHR_gaussian_splatting:SCALE`, …)
/// invalid, so exactly those four are allowed and everything else must be clean; mien's own glTF
/// importer reads the points back.
#[test]
fn glb_frames_pass_the_gltf_validator() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    animate(dir.path(), "glb");
    let glb = dir.path().join("frames/frame_00000.glb");
    let o = Command::new("node")
        .current_dir(browser_dir())
        .arg("validate.mjs")
        .arg(&glb)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let issues = &report["issues"];
    eprintln!(
        "glTF-Validator: {} errors, {} warnings, {} infos",
        issues["numErrors"], issues["numWarnings"], issues["numInfos"]
    );
    let messages = issues["messages"].as_array().unwrap();
    let errors: Vec<&serde_json::Value> = messages.iter().filter(|m| m["severity"] == 0).collect();
    for e in &errors {
        let ptr = e["pointer"].as_str().unwrap_or("");
        assert!(
            e["code"] == "MESH_PRIMITIVE_INVALID_ATTRIBUTE"
                && ptr.starts_with("/meshes/0/primitives/0/attributes/KHR_gaussian_splatting:"),
            "an error beyond the extension's attribute names: {e}"
        );
    }
    assert_eq!(errors.len(), 4, "{messages:?}");
    assert!(
        messages
            .iter()
            .all(|m| m["severity"] == 0 || m["code"] == "UNSUPPORTED_EXTENSION"),
        "warnings or infos: {messages:?}"
    );
    let ch = mien_core::io::gltf::import_gltf(&glb).unwrap();
    let points: usize = ch.meshes[0]
        .primitives
        .iter()
        .map(|p| p.positions.len())
        .sum();
    let rep: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(
        points as u64,
        rep["outputs"]["splats_per_frame"].as_u64().unwrap()
    );
}

/// Every character of the issue opens in Spark and looks there as it does in mien's own
/// rasteriser: Face Cap and the ICT-FaceKit linear head (baked by `mien pack`) driven by the Live
/// Link take, CesiumMan walking, the Ready Player Me avatar, the VRM avatar at rest and the
/// built-in body with its cape and 11,200 hair strands a second into its walk (issue 27) — one
/// `--format ply` frame each, 30,000 gaussians, framed by its bounds; PSNR at least 26 dB over the
/// view and 23 dB inside the silhouette (measured: 28.3–35.9 and 24.9–41.0 dB, the lowest for
/// CesiumMan's sharp-edged stripes on a thin figure; the body 35.8 and 29.5 dB — Spark draws the
/// sub-pixel strands fainter than mien's rasteriser), and Spark draws the character (a twentieth
/// of the view lit at least).
#[test]
fn every_character_opens_in_spark_like_mien() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let take = take.to_str().unwrap();
    let ict = dir.path().join("ict.aosrig");
    let ict_dir = data("ict-facekit");
    let o = Command::new(bin())
        .args([
            "pack",
            ict_dir.to_str().unwrap(),
            "--out",
            ict.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let facecap = data("facecap/facecap.glb");
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let rpm = data("avatars/rpm_male.glb");
    let vrm = data("vrm/Godette_vrm_v4.vrm");
    // The built-in body one second into its walk: its cape and its 11,200 strands (134,400
    // gaussians beside the body's 30,000).
    let body = Path::new("builtin-body");
    let cases: [(&str, &Path, &[&str]); 6] = [
        ("facecap", &facecap, &["--arkit", take, "--start", "2"]),
        ("ict", &ict, &["--arkit", take, "--start", "2"]),
        ("cesium", &cesium, &["--start", "0.5"]),
        ("rpm", &rpm, &[]),
        ("vrm", &vrm, &[]),
        ("body", body, &["--start", "1"]),
    ];
    let keep = std::env::var_os("MIEN_BROWSER_KEEP").map(PathBuf::from);
    let (mut lines, mut results) = (Vec::new(), Vec::new());
    for (name, character, extra) in cases {
        let out = dir.path().join(name);
        let o = Command::new(bin())
            .args([
                "animate",
                "--quiet",
                "--backend",
                "cpu",
                "--frames",
                "1",
                "--sheet",
                "0",
            ])
            .args(["--gaussians", "30000", "--format", "ply", "--character"])
            .arg(character)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let ply = out.join("frames/frame_00000.ply");
        let cloud = mien_core::io::ply::read_splat_ply(&ply).unwrap();
        if name == "body" {
            // The frame holds the cape's gaussians (at least one per its 504 triangles) and the
            // strands' (11,200 × 12) beside the body's.
            let rep: serde_json::Value =
                serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
            let hair = rep["body"]["hair"]["splats"].as_u64().unwrap();
            let cape = rep["body"]["cloth"]["splats"].as_u64().unwrap();
            assert_eq!(hair, 134_400);
            assert!(cape >= 504, "{cape} cape gaussians");
            let total = rep["outputs"]["splats_per_frame"].as_u64().unwrap();
            assert_eq!(cloud.len() as u64, total);
            assert!(total >= 30_000 + cape + hair, "{total}");
        }
        let (buffers, ranges) = cloud.to_buffers().unwrap();
        let (center, radius) = splat_bounds(&buffers, &ranges).unwrap().unwrap().sphere();
        // VRM 0.x avatars face −z: look at them from there.
        let yaw = if name == "vrm" {
            std::f64::consts::PI
        } else {
            0.0
        };
        let cam = Camera::framing(center, radius, 256, 256, 0.6, yaw).unwrap();
        let mine = rasterize(&cam, &buffers, &ranges, [0.0; 3]).unwrap().image;
        let outdir = keep.clone().unwrap_or_else(|| dir.path().to_path_buf());
        mine.save(outdir.join(format!("mien_{name}.png"))).unwrap();
        let theirs = view(
            "spark",
            &ply,
            &cam,
            &outdir.join(format!("spark_{name}.png")),
        );
        let (whole, _) = psnr(&mine, &theirs);
        let inside = psnr_interior(&mine, &theirs);
        let lit = theirs
            .pixels()
            .filter(|p| p.0.iter().any(|&c| c > 8))
            .count();
        lines.push(format!(
            "{name}: {} splats, PSNR {whole:.2} dB, {inside:.2} dB inside, {lit} px lit",
            cloud.len()
        ));
        results.push((name, whole, inside, lit));
    }
    eprintln!("mien vs Spark per character:\n  {}", lines.join("\n  "));
    for (name, whole, inside, lit) in results {
        assert!(lit > 256 * 256 / 20, "{name}: Spark drew {lit} lit pixels");
        assert!(
            whole >= 26.0 && inside >= 23.0,
            "{name}: {whole:.2} dB, {inside:.2} dB inside the character"
        );
    }
}

/// The ICT-FaceKit linear head, baked by `mien pack` into `dir`.
fn ict_pack(dir: &Path) -> PathBuf {
    let ict = dir.join("ict.aosrig");
    let o = Command::new(bin())
        .args([
            "pack",
            data("ict-facekit").to_str().unwrap(),
            "--out",
            ict.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    ict
}

/// The Khronos glTF-Validator's report of `file`: (errors, warning codes).
fn validate(file: &Path) -> (u64, Vec<String>) {
    let o = Command::new("node")
        .current_dir(browser_dir())
        .arg("validate.mjs")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let issues = &report["issues"];
    let warnings = issues["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["severity"] == 1)
        .map(|m| format!("{} {}", m["code"], m["pointer"]))
        .collect();
    (issues["numErrors"].as_u64().unwrap(), warnings)
}

/// `mien bake` files pass the glTF-Validator with 0 errors and no warning the source file does not
/// already have (Face Cap's KTX2 image, CesiumMan's skinned mesh under a transformed node): Face
/// Cap with the Live Link take and with a Gentle alignment, CesiumMan walking, the ICT-FaceKit
/// linear head with the Live Link take (exported as a morph-target glTF with eye joints), and
/// game-face LODs (Ready Player Me at 21,500 triangles, CesiumMan at 1,500).
#[test]
fn baked_takes_pass_the_gltf_validator() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let gentle = data("gentle/lucier_golden.json");
    let ict = ict_pack(dir.path());
    let knight = data("bodies/KnightCharacter.glb");
    let cesium_map =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/retarget/cesium_man.retarget.json");
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    // `mien retarget` bakes too: (name, target, [SOURCE and flags]) run as `retarget … --to`.
    let retargeted: Vec<(&str, PathBuf, Vec<&str>)> = vec![
        (
            "knight-walk-rpm",
            data("avatars/rpm_male.glb"),
            vec![
                knight.to_str().unwrap(),
                "--clip",
                "HumanArmature|Walking",
                "--reference",
                "t-pose",
            ],
        ),
        (
            "cesium-walk-rpm",
            data("avatars/rpm_male.glb"),
            vec![
                cesium.to_str().unwrap(),
                "--map",
                cesium_map.to_str().unwrap(),
            ],
        ),
        (
            "knight-walk-godette",
            data("vrm/Godette_vrm_v4.vrm"),
            vec![knight.to_str().unwrap(), "--clip", "HumanArmature|Walking"],
        ),
    ];
    let baked = [
        (
            "facecap",
            data("facecap/facecap.glb"),
            vec!["--arkit", take.to_str().unwrap()],
        ),
        (
            "facecap-gentle",
            data("facecap/facecap.glb"),
            vec!["--speech", gentle.to_str().unwrap(), "--frames", "300"],
        ),
        (
            "cesium",
            data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
            vec![],
        ),
        (
            "ict-pack",
            ict.clone(),
            vec!["--arkit", take.to_str().unwrap()],
        ),
        (
            "rpm-lod",
            data("avatars/rpm_male.glb"),
            vec![
                "--arkit",
                take.to_str().unwrap(),
                "--frames",
                "30",
                "--lod",
                "21500",
            ],
        ),
        (
            "cesium-lod",
            data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
            vec!["--lod", "1500"],
        ),
        (
            "cesium-reduced",
            data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
            vec!["--tolerance", "0.001,0.1"],
        ),
    ];
    let cases = baked
        .into_iter()
        .map(|(n, c, e)| (n, c, e, false))
        .chain(retargeted.into_iter().map(|(n, c, e)| (n, c, e, true)));
    for (name, character, extra, retarget) in cases {
        let out = dir.path().join(format!("{name}.glb"));
        let mut cmd = Command::new(bin());
        if retarget {
            cmd.arg("retarget").args(&extra).arg("--to").arg(&character);
        } else {
            cmd.arg("bake")
                .arg("--character")
                .arg(&character)
                .args(&extra);
        }
        let o = cmd.arg("--out").arg(&out).output().unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let (errors, warnings) = validate(&out);
        let before = if character.extension().is_some_and(|e| e == "aosrig") {
            Vec::new()
        } else {
            validate(&character).1
        };
        eprintln!("{name}: baked {errors} errors, warnings {warnings:?}");
        assert_eq!(errors, 0, "{name}: {warnings:?}");
        for w in &warnings {
            assert!(before.contains(w), "{name}: a new warning {w}");
        }
    }
}

/// The error codes of the glTF-Validator's report of `file`.
fn error_codes(file: &Path) -> Vec<String> {
    let o = Command::new("node")
        .current_dir(browser_dir())
        .arg("validate.mjs")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    report["issues"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["severity"] == 0)
        .map(|m| m["code"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A take that moves nothing (CesiumMan at rest) is refused with nothing written — before issue 25
/// it was baked as an animation with empty `channels` and `samplers`. That file, made here by
/// emptying a valid bake's animation, is what the glTF-Validator rejects (EMPTY_ENTITY), and
/// `mien bake --verify` refuses it by the same code: verify applies the validator's rules.
#[test]
fn a_still_take_is_refused_and_verify_agrees_with_the_validator() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let still = dir.path().join("still.glb");
    let o = Command::new(bin())
        .args(["bake", "--clip", "rest", "--character"])
        .arg(&cesium)
        .arg("--out")
        .arg(&still)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("moves nothing"),
        "{stderr}"
    );
    assert!(!still.exists(), "a refused bake wrote its output");

    let walk = dir.path().join("walk.glb");
    let o = Command::new(bin())
        .args(["bake", "--frames", "10", "--character"])
        .arg(&cesium)
        .arg("--out")
        .arg(&walk)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(error_codes(&walk), Vec::<String>::new());
    // The old output: the baked animation (the last) with no channels and no samplers.
    let b = std::fs::read(&walk).unwrap();
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let last = json["animations"].as_array().unwrap().len() - 1;
    json["animations"][last]["channels"] = serde_json::json!([]);
    json["animations"][last]["samplers"] = serde_json::json!([]);
    let mut j = serde_json::to_vec(&json).unwrap();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let bin_chunk = &b[20 + jl..];
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((20 + j.len() + bin_chunk.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(bin_chunk);
    let empty = dir.path().join("empty.glb");
    std::fs::write(&empty, &out).unwrap();
    let codes = error_codes(&empty);
    assert!(codes.iter().any(|c| c == "EMPTY_ENTITY"), "{codes:?}");
    let o = Command::new(bin())
        .args(["bake", "--verify"])
        .arg(&empty)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("EMPTY_ENTITY"),
        "{stderr}"
    );
}

/// three.js (GLTFLoader + AnimationMixer, `browser/mixer.mjs`) plays mien's baked takes as mien
/// does: Face Cap with the Live Link take (meshopt and KTX2 load through three's decoders) and
/// with a Gentle alignment (the first 10 s), CesiumMan walking (every key, and reduced: each
/// channel with its own key times), the ICT-FaceKit linear head with the Live Link take, and
/// `mien retarget`'s bakes (the knight's and CesiumMan's walks on the RPM avatar, the knight's on
/// Godette), sampled at 20 times between and on the keys — every channel's morph weights,
/// rotation (up to sign) and translation within 1e-5 of mien's runtime playing the same file.
#[test]
fn three_js_plays_baked_takes_as_mien_does() {
    use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};
    use std::sync::Arc;
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let gentle = data("gentle/lucier_golden.json");
    let ict = ict_pack(dir.path());
    let knight = data("bodies/KnightCharacter.glb");
    let cesium_map =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/retarget/cesium_man.retarget.json");
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    // `mien retarget` bakes too: (name, target, [SOURCE and flags]) run as `retarget … --to`.
    let retargeted: Vec<(&str, PathBuf, Vec<&str>)> = vec![
        (
            "knight-walk-rpm",
            data("avatars/rpm_male.glb"),
            vec![
                knight.to_str().unwrap(),
                "--clip",
                "HumanArmature|Walking",
                "--reference",
                "t-pose",
            ],
        ),
        (
            "cesium-walk-rpm",
            data("avatars/rpm_male.glb"),
            vec![
                cesium.to_str().unwrap(),
                "--map",
                cesium_map.to_str().unwrap(),
            ],
        ),
        (
            "knight-walk-godette",
            data("vrm/Godette_vrm_v4.vrm"),
            vec![knight.to_str().unwrap(), "--clip", "HumanArmature|Walking"],
        ),
    ];
    let baked = [
        (
            "facecap",
            data("facecap/facecap.glb"),
            vec!["--arkit", take.to_str().unwrap()],
        ),
        (
            "facecap-gentle",
            data("facecap/facecap.glb"),
            vec!["--speech", gentle.to_str().unwrap(), "--frames", "300"],
        ),
        (
            "cesium",
            data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
            vec![],
        ),
        (
            "ict-pack",
            ict.clone(),
            vec!["--arkit", take.to_str().unwrap()],
        ),
        (
            "rpm-lod",
            data("avatars/rpm_male.glb"),
            vec![
                "--arkit",
                take.to_str().unwrap(),
                "--frames",
                "30",
                "--lod",
                "21500",
            ],
        ),
        (
            "cesium-lod",
            data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
            vec!["--lod", "1500"],
        ),
        (
            "cesium-reduced",
            data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
            vec!["--tolerance", "0.001,0.1"],
        ),
    ];
    let cases = baked
        .into_iter()
        .map(|(n, c, e)| (n, c, e, false))
        .chain(retargeted.into_iter().map(|(n, c, e)| (n, c, e, true)));
    for (name, character, extra, retarget) in cases {
        let out = dir.path().join(format!("{name}.glb"));
        let mut cmd = Command::new(bin());
        if retarget {
            cmd.arg("retarget").args(&extra).arg("--to").arg(&character);
        } else {
            cmd.arg("bake")
                .arg("--character")
                .arg(&character)
                .args(&extra);
        }
        let o = cmd.arg("--out").arg(&out).output().unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let bytes = std::fs::read(&out).unwrap();
        let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + jl]).unwrap();
        let anim = json["animations"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let clip = anim["name"].as_str().unwrap().to_string();
        let duration = anim["extras"]["mien"]["duration_s"].as_f64().unwrap();
        // 20 times: keys and between keys.
        let times: Vec<f64> = (0..20).map(|i| duration * f64::from(i) / 19.37).collect();
        let o = Command::new("node")
            .current_dir(browser_dir())
            .arg("mixer.mjs")
            .arg("--file")
            .arg(&out)
            .args(["--clip", &clip, "--times"])
            .arg(
                times
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            )
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let three: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();

        let asset = Arc::new(Asset::load(&out).unwrap());
        let opts = RuntimeOptions {
            instances: 1,
            lift: None,
        };
        let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &opts).unwrap();
        rt.instance_mut(0).unwrap().play_clip(&clip).unwrap();
        let (mut worst, mut checked) = (0.0f64, 0usize);
        for (k, &t) in times.iter().enumerate() {
            rt.update(t).unwrap();
            let pose = rt.instance(0).unwrap().pose().clone();
            for ch in anim["channels"].as_array().unwrap() {
                let node = ch["target"]["node"].as_u64().unwrap() as usize;
                let key = node.to_string();
                let (theirs, mine): (Vec<f64>, Vec<f64>) =
                    match ch["target"]["path"].as_str().unwrap() {
                        "weights" => (
                            three["weights"][&key][k]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|v| v.as_f64().unwrap())
                                .collect(),
                            pose.weights[node].iter().map(|&w| f64::from(w)).collect(),
                        ),
                        "rotation" => {
                            let q = pose.locals[node].rotation.to_array().map(f64::from);
                            let th: Vec<f64> = three["rotation"][&key][k]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|v| v.as_f64().unwrap())
                                .collect();
                            let dot: f64 = q.iter().zip(&th).map(|(a, b)| a * b).sum();
                            (th, q.iter().map(|x| x * dot.signum()).collect())
                        }
                        "translation" => (
                            three["translation"][&key][k]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|v| v.as_f64().unwrap())
                                .collect(),
                            pose.locals[node]
                                .translation
                                .to_array()
                                .iter()
                                .map(|&x| f64::from(x))
                                .collect(),
                        ),
                        _ => continue,
                    };
                assert_eq!(theirs.len(), mine.len(), "{name} node {node}");
                for (a, b) in theirs.iter().zip(&mine) {
                    worst = worst.max((a - b).abs());
                }
                checked += 1;
            }
        }
        eprintln!(
            "{name}: three.js vs mien, {checked} channel samples, largest difference {worst:e}"
        );
        assert!(checked >= 20, "{name}: {checked}");
        assert!(
            worst <= 1e-5,
            "{name}: three.js differs from mien by {worst:e}"
        );
    }
}

/// three-vrm's own VRM Animation path (`@pixiv/three-vrm-animation`'s `createVRMAnimationClip`,
/// `browser/vrma.mjs`) and mien's retargeting (rest references, the automatic humanoid map) pose
/// the same avatar from the same `.vrma` alike: every humanoid bone's world position at 12 times
/// within 1 mm, on a VRM 0.x avatar (Godette: three-vrm flips the clip for 0.x, mien turns it by the
/// facing) and a VRM 1.0 one (the robot), for an arm clip and a hips/spine twist.
#[test]
fn three_vrm_plays_vrma_clips_as_mien_retargets_them() {
    use mien_runtime::retarget::{RetargetRequest, load_source, retarget};
    use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};
    use std::sync::Arc;
    if !ready() {
        return;
    }
    let mut results = Vec::new();
    for (avatar, clip) in [
        ("vrm/Godette_vrm_v4.vrm", "bodies/test.vrma"),
        ("retarget/debug_robot.vrm", "bodies/test.vrma"),
        (
            "retarget/debug_robot.vrm",
            "retarget/hips_spine_twisting.vrma",
        ),
        (
            "vrm/Godette_vrm_v4.vrm",
            "retarget/hips_spine_twisting.vrma",
        ),
    ] {
        let (avatar, clip) = (data(avatar), data(clip));
        let source = load_source(&clip).unwrap();
        let target = Asset::load(&avatar).unwrap();
        let r = retarget(&source, &target, &RetargetRequest::default()).unwrap();
        let duration = r.asset.character().clips[r.clip.index()].end();
        let times: Vec<f64> = (0..12).map(|i| duration * f64::from(i) / 11.3).collect();
        let o = Command::new("node")
            .current_dir(browser_dir())
            .arg("vrma.mjs")
            .arg("--file")
            .arg(&avatar)
            .arg("--vrma")
            .arg(&clip)
            .arg("--times")
            .arg(
                times
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            )
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}: {}",
            avatar.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let three: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let asset = Arc::new(r.asset);
        let opts = RuntimeOptions {
            instances: 1,
            lift: None,
        };
        let mut rt = Runtime::new(Arc::clone(&asset), &Device::Cpu, &opts).unwrap();
        rt.instance_mut(0).unwrap().play_clips(&[r.clip]).unwrap();
        let ch = asset.character();
        // The roles as three-vrm names them (VRM 0.x thumbs renamed to 1.0's, as three-vrm does).
        let humanoid = ch.humanoid().unwrap();
        let (mut worst, mut checked, mut moved) = (0.0f64, 0usize, 0.0f64);
        let mut worst_at = String::new();
        let rest_world = {
            let (mut s, mut w) = (Vec::new(), Vec::new());
            ch.world_matrices(&ch.rest_pose(), &mut s, &mut w);
            w
        };
        for (k, &t) in times.iter().enumerate() {
            rt.update(t).unwrap();
            let pose = rt.instance(0).unwrap().pose().clone();
            let (mut s, mut w) = (Vec::new(), Vec::new());
            ch.world_matrices(&pose, &mut s, &mut w);
            for (bone, node) in &humanoid {
                let Some(theirs) = three["bones"][*bone][k].as_array() else {
                    continue;
                };
                let p = w[node.index()].w_axis;
                let mine = [p.x, p.y, p.z];
                let d = theirs
                    .iter()
                    .zip(mine)
                    .map(|(a, b)| (a.as_f64().unwrap() - f64::from(b)).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if d > worst {
                    worst_at = format!("{bone} at {t:.2} s: three {theirs:?}, mien {mine:?}");
                }
                worst = worst.max(d);
                moved = moved.max(f64::from(
                    (w[node.index()].w_axis - rest_world[node.index()].w_axis).length(),
                ));
                checked += 1;
            }
        }
        eprintln!(
            "{} ← {}: {checked} bone positions, worst {worst:.2e} m ({worst_at}; bones move up to {moved:.3} m)",
            avatar.display(),
            clip.display()
        );
        assert!(checked > 100 && moved > 0.05, "{checked} {moved}");
        results.push((avatar.display().to_string(), worst));
    }
    for (avatar, worst) in &results {
        assert!(*worst < 1e-3, "{avatar}: worst {worst} m");
    }
}
