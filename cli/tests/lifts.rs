//! The lifts, splat formats and captures as a user meets them: the surface lift's report and
//! SPZ frames read back, a capture bound with `mien bind` and played with `animate --capture`
//! (and refused on another character), bind's bad input, a points-only character refused by the
//! surface lift.

mod common;

use common::{animate, data, mien, report};

/// The default surface lift says what it built: facecap's KTX2 texture decoded, a gaussian count
/// that every SPZ frame holds (read back by mien's own SPZ reader and `inspect`), and the summary
/// names the lift, the texture and the format.
#[test]
fn surface_lift_report_and_spz_frames() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let facecap = data("facecap/facecap.glb");
    let r = animate(
        &out,
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--frames",
            "2",
            "--sheet",
            "1",
            "--gaussians",
            "30000",
            "--format",
            "spz",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&out);
    assert_eq!(rep["splats"]["lift"], "surface");
    let g = rep["splats"]["gaussians"].as_u64().unwrap();
    let tris = rep["splats"]["surface"]["triangles"].as_u64().unwrap();
    assert_eq!(tris, 8042);
    assert!(g >= tris && g < 60_000, "{g}");
    let tex = &rep["splats"]["surface"]["colors"]["textures"][0];
    assert!(tex[1].as_str().unwrap().starts_with("ktx2"), "{tex}");
    assert_eq!(rep["outputs"]["frame_format"], "spz");
    assert_eq!(rep["outputs"]["ply_files"], 2);
    for i in 0..2 {
        let f = out.join(format!("frames/frame_{i:05}.spz"));
        let c = mien_core::io::spz::read_spz(&f).unwrap();
        assert_eq!(c.len() as u64, g, "{}", f.display());
    }
    for needle in ["surface lift:", "ktx2", "SPZ version 3", "frame_00000.spz"] {
        assert!(r.stdout.contains(needle), "lacks `{needle}`:\n{}", r.stdout);
    }
    let i = mien(&[
        "inspect",
        out.join("frames/frame_00001.spz").to_str().unwrap(),
    ]);
    assert!(i.ok(), "{}", i.stderr);
    assert!(i.stdout.contains("SPZ version 3") && i.stdout.contains(&format!("splats: {g}")));
}

/// A capture bound to a character and played: Face Cap's own surface splats at rest bound back to
/// it come back where they were (the library's rest render of the bound capture), the bound file
/// opens as a plain 3DGS .ply, `animate --capture` plays it, and a capture bound to another
/// character is refused naming the topology, with nothing written.
#[test]
fn a_bound_capture_plays_on_its_character_and_nowhere_else() {
    use mien_runtime::{Asset, Device, LiftKind, LiftOptions, Runtime, RuntimeOptions};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let f = facecap.to_str().unwrap();
    let asset = Arc::new(Asset::load(&facecap).unwrap());
    let rest_of = |kind: LiftKind| {
        let o = RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions {
                kind,
                ..Default::default()
            }),
        };
        Runtime::new(Arc::clone(&asset), &Device::Cpu, &o)
            .unwrap()
            .render_rest()
            .unwrap()
    };
    let original = rest_of(LiftKind::Surface(mien_core::lift::SurfaceOptions {
        target: 20_000,
        ..Default::default()
    }));
    let n = original.len();
    let capture = dir.path().join("capture.ply");
    mien_core::io::ply::write_splat_ply_with(
        &capture,
        &original,
        &[mien_core::sink::SlotRange {
            offset: 0,
            count: n as u32,
        }],
        &mien_core::io::ply::PlyOptions::default(),
    )
    .unwrap();

    let bound = dir.path().join("bound.ply");
    let b = mien(&[
        "bind",
        capture.to_str().unwrap(),
        "--to",
        f,
        "--out",
        bound.to_str().unwrap(),
    ]);
    assert!(b.ok(), "{}", b.stderr);
    assert!(
        b.stdout.contains(&format!("{n} of {n} gaussians")),
        "{}",
        b.stdout
    );
    let i = mien(&["inspect", bound.to_str().unwrap()]);
    assert!(
        i.ok() && i.stdout.contains(&format!("splats: {n}")),
        "{}",
        i.stdout
    );

    // At rest the bound capture is the capture (f32 rounding of the embedding).
    let cap = mien_runtime::capture::read_bound_capture(&bound).unwrap();
    let again = rest_of(LiftKind::Capture(cap));
    assert_eq!(again.len(), n);
    let scale = original
        .center
        .iter()
        .flatten()
        .fold(1.0f32, |m, x| m.max(x.abs()));
    for k in 0..n {
        for c in 0..3 {
            assert!(
                (again.center[k][c] - original.center[k][c]).abs() <= 1e-5 * scale,
                "gaussian {k}: {:?} vs {:?}",
                again.center[k],
                original.center[k]
            );
        }
    }

    let played = dir.path().join("played");
    let r = animate(
        &played,
        &[
            "--character",
            f,
            "--capture",
            bound.to_str().unwrap(),
            "--frames",
            "2",
            "--sheet",
            "1",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let rep = report(&played);
    assert_eq!(rep["splats"]["lift"], "capture");
    assert_eq!(rep["splats"]["gaussians"].as_u64().unwrap() as usize, n);
    assert!(
        r.stdout.contains("captured splats bound to the mesh"),
        "{}",
        r.stdout
    );

    // Bound to CesiumMan, played on Face Cap: refused, nothing written.
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let other = dir.path().join("other.ply");
    // (Face Cap's splats are nowhere near CesiumMan's surface: a distance that holds them.)
    let b = mien(&[
        "bind",
        capture.to_str().unwrap(),
        "--to",
        cesium.to_str().unwrap(),
        "--out",
        other.to_str().unwrap(),
        "--max-distance",
        "100",
    ]);
    assert!(b.ok(), "{}", b.stderr);
    let wrong = dir.path().join("wrong");
    let r = animate(
        &wrong,
        &[
            "--character",
            f,
            "--capture",
            other.to_str().unwrap(),
            "--frames",
            "1",
        ],
    );
    assert!(!r.ok());
    assert!(
        r.stderr.contains("topology") && r.stderr.contains("CesiumMan"),
        "{}",
        r.stderr
    );
    assert!(!wrong.exists());
}

#[test]
fn bind_refuses_bad_input_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let f = facecap.to_str().unwrap();
    let out = dir.path().join("b.ply");
    let o = out.to_str().unwrap();
    let txt = dir.path().join("x.txt");
    std::fs::write(&txt, "hello").unwrap();
    let junk = dir.path().join("junk.spz");
    std::fs::write(&junk, [0x1f, 0x8b, 0, 1, 2]).unwrap();
    let spz = data("splats/biker.spz");
    for (args, needle) in [
        (
            vec!["bind", txt.to_str().unwrap(), "--to", f, "--out", o],
            "a capture is a 3DGS .ply",
        ),
        (
            vec!["bind", junk.to_str().unwrap(), "--to", f, "--out", o],
            "junk.spz",
        ),
        (
            vec![
                "bind",
                spz.to_str().unwrap(),
                "--to",
                f,
                "--out",
                o,
                "--max-distance",
                "0",
            ],
            "--max-distance 0",
        ),
        (
            vec![
                "bind",
                spz.to_str().unwrap(),
                "--to",
                "/nonexistent.glb",
                "--out",
                o,
            ],
            "/nonexistent.glb",
        ),
    ] {
        let r = mien(&args);
        assert!(!r.ok(), "{args:?}");
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert!(!out.exists(), "{args:?} wrote a file");
    }
    // --out naming the capture itself: refused, the capture untouched.
    let capture = dir.path().join("capture.ply");
    std::fs::copy(data("splats/fruit_drops_minimal.ply"), &capture).unwrap();
    let before = std::fs::read(&capture).unwrap();
    let c = capture.to_str().unwrap();
    let r = mien(&["bind", c, "--to", f, "--out", c]);
    assert!(
        !r.ok() && r.stderr.contains("must not replace an input"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&capture).unwrap(), before);
    // A .ply that is not a bound capture, given to --capture: told to bind it first.
    let plain = data("splats/fruit_drops_minimal.ply");
    let r = mien(&[
        "animate",
        "--character",
        f,
        "--capture",
        plain.to_str().unwrap(),
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert!(!r.ok() && r.stderr.contains("mien bind"), "{}", r.stderr);
}

/// A points-only glTF (mien's own `--format glb` frame) as a character: the surface lift is
/// refused naming the file and the way out, the debug lift runs.
#[test]
fn a_points_only_character_is_refused_by_the_surface_lift() {
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let first = dir.path().join("first");
    let r = animate(
        &first,
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--frames",
            "1",
            "--sheet",
            "0",
            "--gaussians",
            "2000",
            "--format",
            "glb",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let glb = first.join("frames/frame_00000.glb");
    let r = animate(
        &dir.path().join("surface"),
        &["--character", glb.to_str().unwrap(), "--frames", "1"],
    );
    assert!(!r.ok());
    assert!(
        r.stderr.contains("frame_00000.glb")
            && r.stderr.contains("no triangles")
            && r.stderr.contains("debug lift"),
        "{}",
        r.stderr
    );
    let r = animate(
        &dir.path().join("debug"),
        &[
            "--character",
            glb.to_str().unwrap(),
            "--frames",
            "1",
            "--lift",
            "debug",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
}

/// Far captured gaussians left rigid to a joint (`mien bind --far joint`): CesiumMan's own
/// surface splats plus two gaussians floating 0.25–0.3 m above its head. Bound this way they ride
/// the joint that drives the top of the head: while it walks, the two keep their distance and
/// their covariance's trace (a rigid motion) and they move; at rest they are where the capture had
/// them; the file records the anchors.
#[test]
fn far_captured_gaussians_ride_a_joint() {
    use mien_runtime::{Asset, Device, LiftKind, LiftOptions, Runtime, RuntimeOptions};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let asset = Arc::new(Asset::load(&cesium).unwrap());
    let runtime = |kind: LiftKind| {
        let o = RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions {
                kind,
                ..Default::default()
            }),
        };
        Runtime::new(Arc::clone(&asset), &Device::Cpu, &o).unwrap()
    };
    let surface = runtime(LiftKind::Surface(mien_core::lift::SurfaceOptions {
        target: 5_000,
        ..Default::default()
    }))
    .render_rest()
    .unwrap();
    let n = surface.len();
    let capture = dir.path().join("capture.ply");
    let all = |n: usize| {
        [mien_core::sink::SlotRange {
            offset: 0,
            count: n as u32,
        }]
    };
    let opts = mien_core::io::ply::PlyOptions::default();
    mien_core::io::ply::write_splat_ply_with(&capture, &surface, &all(n), &opts).unwrap();
    let mut cloud = mien_core::io::ply::read_splat_ply(&capture).unwrap();
    let top = *cloud
        .center
        .iter()
        .max_by(|a, b| a[1].total_cmp(&b[1]))
        .unwrap();
    let far = [
        [top[0], top[1] + 0.25, top[2]],
        [top[0] + 0.05, top[1] + 0.3, top[2] - 0.02],
    ];
    for c in far {
        cloud.center.push(c);
        cloud.rgba.push([0.9, 0.2, 0.1, 0.8]);
        cloud
            .covariance
            .push([[4e-4, 1e-4, 0.0], [1e-4, 2e-4, 0.0], [0.0, 0.0, 1e-4]]);
    }
    let (buffers, _) = cloud.to_buffers().unwrap();
    mien_core::io::ply::write_splat_ply_with(&capture, &buffers, &all(n + 2), &opts).unwrap();

    let bound = dir.path().join("bound.ply");
    let b = mien(&[
        "bind",
        capture.to_str().unwrap(),
        "--to",
        cesium.to_str().unwrap(),
        "--out",
        bound.to_str().unwrap(),
        "--far",
        "joint",
    ]);
    assert!(b.ok(), "{}", b.stderr);
    assert!(b.stdout.contains("2 left rigid to a joint"), "{}", b.stdout);
    let bytes = std::fs::read(&bound).unwrap();
    let header = String::from_utf8_lossy(&bytes[..1500]);
    assert!(header.contains("comment mien joint anchors "), "{header}");

    let cap = mien_runtime::capture::read_bound_capture(&bound).unwrap();
    assert!(cap.anchors > 0);
    let mut rt = runtime(LiftKind::Capture(cap));
    let rest = rt.render_rest().unwrap();
    for (k, c) in far.iter().enumerate() {
        let got = rest.center[n + k];
        assert!(
            (0..3).all(|i| (got[i] - c[i]).abs() < 1e-5),
            "far gaussian {k} at rest: {got:?} vs {c:?}"
        );
    }
    rt.instance_mut(0).unwrap().play_clip("0").unwrap();
    let mut at = |t: f64| {
        rt.update(t).unwrap();
        rt.splats(0).unwrap()
    };
    let (a, b) = (at(0.25), at(0.75));
    let dist = |s: &mien_core::sink::SplatBuffers| {
        (0..3)
            .map(|i| (s.center[n][i] - s.center[n + 1][i]).powi(2))
            .sum::<f32>()
            .sqrt()
    };
    let trace =
        |s: &mien_core::sink::SplatBuffers, k: usize| s.cov_a[k][0] + s.cov_a[k][3] + s.cov_b[k][1];
    let moved = (0..3)
        .map(|i| (a.center[n][i] - b.center[n][i]).powi(2))
        .sum::<f32>()
        .sqrt();
    assert!(moved > 1e-3, "the far gaussian did not move: {moved} m");
    let d0 = ((far[0][0] - far[1][0]).powi(2)
        + (far[0][1] - far[1][1]).powi(2)
        + (far[0][2] - far[1][2]).powi(2))
    .sqrt();
    for s in [&a, &b] {
        assert!((dist(s) - d0).abs() < 1e-5, "{} vs {d0}", dist(s));
        assert!((trace(s, n) - 7e-4).abs() < 1e-8, "{}", trace(s, n));
    }
}

/// A flag of another lift than the one running is refused naming both (it would be silently
/// ignored), before anything is written; `--format glb` frames rerun into the same folder (mien's
/// own frame files) and `inspect` names them as splats.
#[test]
fn a_flag_of_another_lift_is_refused_and_glb_frames_are_splats() {
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let f = facecap.to_str().unwrap();
    let out = dir.path().join("o");
    for (flags, flag, owner) in [
        (&["--texel-res", "64"][..], "--texel-res", "texel"),
        (
            &["--lift", "debug", "--gaussians", "5"][..],
            "--gaussians",
            "surface",
        ),
        (
            &["--lift", "texel", "--sigma", "0.01"][..],
            "--sigma",
            "debug",
        ),
        (&["--shading", "flat"][..], "--shading", "debug"),
    ] {
        let mut a = vec!["--character", f, "--frames", "1"];
        a.extend_from_slice(flags);
        let r = animate(&out, &a);
        assert!(!r.ok(), "{flags:?} was accepted");
        assert!(
            r.stderr.contains(flag) && r.stderr.contains(&format!("--lift {owner}")),
            "{flags:?}: {}",
            r.stderr
        );
        assert!(!out.exists());
    }
    let a = [
        "--character",
        f,
        "--frames",
        "1",
        "--sheet",
        "0",
        "--gaussians",
        "2000",
        "--format",
        "glb",
    ];
    assert!(animate(&out, &a).ok());
    let r = animate(&out, &a);
    assert!(r.ok(), "a rerun into mien's own glb frames: {}", r.stderr);
    let glb = out.join("frames/frame_00000.glb");
    let i = mien(&["inspect", glb.to_str().unwrap()]);
    assert!(i.ok(), "{}", i.stderr);
    let n = report(&out)["outputs"]["splats_per_frame"]
        .as_u64()
        .unwrap();
    assert!(
        i.stdout.contains("KHR_gaussian_splatting") && i.stdout.contains(&format!("splats: {n}")),
        "{}",
        i.stdout
    );
}

/// The capture workflow from the CLI alone: `animate --clip rest` writes a character's rest-pose
/// splats, which bind with nothing far (and no advice printed) and `inspect` names as a bound
/// capture; the walk's first frame (not the rest pose) is refused under every `--far` rule;
/// played, the report names the capture; played on another character it is refused naming
/// `--capture`.
#[test]
fn a_rest_pose_capture_binds_and_a_posed_one_is_refused_whatever_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let cesium = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let c = cesium.to_str().unwrap();
    let frame = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut a = vec![
            "--character",
            c,
            "--frames",
            "1",
            "--sheet",
            "0",
            "--gaussians",
            "3000",
        ];
        a.extend_from_slice(extra);
        let r = animate(&out, &a);
        assert!(r.ok(), "{}", r.stderr);
        out.join("frames/frame_00000.ply")
    };
    let rest = frame("rest", &["--clip", "rest"]);
    assert_eq!(
        report(&dir.path().join("rest"))["animation"]["kind"],
        "rest"
    );
    let bound = dir.path().join("bound.ply");
    let b = mien(&[
        "bind",
        rest.to_str().unwrap(),
        "--to",
        c,
        "--out",
        bound.to_str().unwrap(),
    ]);
    assert!(b.ok(), "{}", b.stderr);
    assert!(
        b.stdout.contains("0 beyond") && !b.stdout.contains("bound anyway"),
        "{}",
        b.stdout
    );
    let i = mien(&["inspect", bound.to_str().unwrap()]);
    assert!(
        i.ok() && i.stdout.contains("bound capture") && i.stdout.contains("CesiumMan"),
        "{}",
        i.stdout
    );

    let walking = frame("walk", &[]);
    for rule in ["bind", "drop", "joint"] {
        let out = dir.path().join(format!("w_{rule}.ply"));
        let b = mien(&[
            "bind",
            walking.to_str().unwrap(),
            "--to",
            c,
            "--out",
            out.to_str().unwrap(),
            "--far",
            rule,
        ]);
        assert!(
            !b.ok(),
            "--far {rule} accepted a posed capture: {}",
            b.stdout
        );
        assert!(b.stderr.contains("rest pose"), "{}", b.stderr);
        assert!(!out.exists());
    }

    let played = dir.path().join("played");
    let r = animate(
        &played,
        &[
            "--character",
            c,
            "--capture",
            bound.to_str().unwrap(),
            "--frames",
            "2",
            "--sheet",
            "0",
        ],
    );
    assert!(r.ok(), "{}", r.stderr);
    let cap = &report(&played)["splats"]["capture"];
    assert!(
        cap["bound_to"].as_str().unwrap().contains("CesiumMan"),
        "{cap}"
    );
    assert_eq!(cap["joint_anchors"], 0);
    let facecap = data("facecap/facecap.glb");
    let r = animate(
        &dir.path().join("wrong"),
        &[
            "--character",
            facecap.to_str().unwrap(),
            "--capture",
            bound.to_str().unwrap(),
            "--frames",
            "1",
        ],
    );
    assert!(!r.ok());
    assert!(
        r.stderr.contains("--capture") && r.stderr.contains("topology"),
        "{}",
        r.stderr
    );
}
