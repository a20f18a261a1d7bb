//! `--backend wgpu` and `--backend vulkan` write the same `.ply` frames as `--backend cpu` (the conformance bound of
//! `mien_cpu::conformance`: 1e-5 of the largest magnitude; colour bytes within one) on the real
//! files: facecap over its whole capture, CesiumMan walking. `--backend auto` on a machine with only
//! a software adapter picks the CPU and says why.
//!
//! Without an adapter these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1`.
#![cfg(feature = "wgpu")]

use std::path::{Path, PathBuf};
use std::process::Command;

use mien_core::io::ply::read_splat_ply;

/// `../shared/data`, or `$MIEN_DATA` (a copy of it on a machine without the checkout).
fn data(rel: &str) -> PathBuf {
    std::env::var_os("MIEN_DATA")
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
            PathBuf::from,
        )
        .join(rel)
}

/// The `mien` binary under test, or `$MIEN_BIN`.
fn bin() -> PathBuf {
    std::env::var_os("MIEN_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mien")), PathBuf::from)
}

/// The adapter, or `None` with a notice.
fn adapter() -> Option<mien_wgpu::WgpuContext> {
    match mien_wgpu::WgpuContext::new(&Default::default()) {
        Ok(c) => Some(c),
        Err(e) if mien_wgpu::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => {
            eprintln!("notice: skipping GPU CLI tests: {e}");
            None
        }
    }
}

/// The GPU backends with a device here: `wgpu` when an adapter exists, `vulkan` when a device
/// exists (both required under `MIEN_REQUIRE_GPU=1`).
fn gpu_backends() -> Vec<&'static str> {
    let mut out = Vec::new();
    if adapter().is_some() {
        out.push("wgpu");
    }
    #[cfg(feature = "vulkan")]
    match mien_vulkan::VulkanContext::new(&Default::default()) {
        Ok(_) => out.push("vulkan"),
        Err(e) if mien_vulkan::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => eprintln!("notice: skipping Vulkan CLI tests: {e}"),
    }
    out
}

fn animate(out: &Path, args: &[&str]) -> serde_json::Value {
    let o = Command::new(bin())
        // The Vulkan backend runs under the validation layer and fails on any message.
        .env(
            "MIEN_VK_VALIDATION",
            if mien_wgpu::gpu_required() { "1" } else { "0" },
        )
        // The debug lift: the files carry the posed vertices themselves, so they are compared
        // at the vertex conformance bound. The surface lift's GPU equality is checked where its
        // triangles are known (`runtime/tests/backends.rs`).
        .args([
            "animate",
            "--quiet",
            "--format",
            "ply",
            "--lift",
            "debug",
            "--sheet",
            "0",
            "--out",
            out.to_str().unwrap(),
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// Every frame of `a` equals the same frame of `b` within the conformance bound.
fn same_frames(a: &Path, b: &Path, frames: u64) {
    for i in 0..frames {
        let name = format!("frames/frame_{i:05}.ply");
        let (x, y) = (
            read_splat_ply(&a.join(&name)).unwrap(),
            read_splat_ply(&b.join(&name)).unwrap(),
        );
        assert_eq!(x.len(), y.len(), "{name}");
        let scale = y
            .center
            .iter()
            .flatten()
            .fold(1.0f32, |m, v| m.max(v.abs()));
        let bound = 1e-5 * scale;
        for (s, (p, q)) in x.center.iter().zip(&y.center).enumerate() {
            for k in 0..3 {
                assert!(
                    (p[k] - q[k]).abs() <= bound,
                    "{name} splat {s}: wgpu {p:?} vs cpu {q:?} (bound {bound})"
                );
            }
        }
        for (s, (p, q)) in x.rgba.iter().zip(&y.rgba).enumerate() {
            for k in 0..4 {
                assert!(
                    (p[k] - q[k]).abs() <= 1.0 / 255.0 + 1e-4,
                    "{name} splat {s}: colour {p:?} vs {q:?}"
                );
            }
        }
        for (s, (p, q)) in x.covariance.iter().zip(&y.covariance).enumerate() {
            let m = q.iter().flatten().fold(0.0f32, |m, v| m.max(v.abs()));
            for r in 0..3 {
                for c in 0..3 {
                    assert!(
                        (p[r][c] - q[r][c]).abs() <= 1e-4 * m,
                        "{name} splat {s}: covariance {p:?} vs {q:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn facecap_whole_capture_matches_the_cpu() {
    let backends = gpu_backends();
    if backends.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let facecap = data("facecap/facecap.glb");
    let f = facecap.to_str().unwrap();
    let cpu = animate(
        &dir.path().join("cpu"),
        &["--character", f, "--backend", "cpu"],
    );
    let frames = cpu["frames"]["count"].as_u64().unwrap();
    assert_eq!(frames, 336, "the whole 11.18 s capture at 30 fps");
    for b in backends {
        let gpu = animate(&dir.path().join(b), &["--character", f, "--backend", b]);
        assert_eq!(gpu["backend"]["used"], b);
        assert_eq!(gpu["frames"]["count"], frames);
        assert_eq!(
            gpu["morphs"]["dropped"], cpu["morphs"]["dropped"],
            "{b}: the same weight rules ran"
        );
        same_frames(&dir.path().join(b), &dir.path().join("cpu"), frames);
    }
}

#[test]
fn cesium_man_walking_matches_the_cpu() {
    let backends = gpu_backends();
    if backends.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let man = data("khronos/CesiumMan/CesiumMan_chromedays.glb");
    let f = man.to_str().unwrap();
    let cpu = animate(
        &dir.path().join("cpu"),
        &["--character", f, "--backend", "cpu"],
    );
    for b in backends {
        animate(&dir.path().join(b), &["--character", f, "--backend", b]);
        same_frames(
            &dir.path().join(b),
            &dir.path().join("cpu"),
            cpu["frames"]["count"].as_u64().unwrap(),
        );
    }
}

#[test]
fn the_baked_ict_head_driven_by_live_link_matches_the_cpu() {
    let backends = gpu_backends();
    if backends.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("ict.aosrig");
    let o = Command::new(bin())
        .args(["pack", "--quiet", "--out", pack.to_str().unwrap()])
        .arg(data("ict-facekit"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let args = |b: &'static str| {
        [
            "--character",
            pack.to_str().unwrap(),
            "--arkit",
            csv.to_str().unwrap(),
            "--start",
            "1",
            "--frames",
            "4",
            "--fps",
            "4",
            "--backend",
            b,
        ]
        .map(str::to_string)
    };
    let run = |b: &'static str| {
        let a = args(b);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        animate(&dir.path().join(b), &a)
    };
    let cpu = run("cpu");
    assert_eq!(cpu["character"]["vertices"], 26_719);
    for b in backends {
        let gpu = run(b);
        assert_eq!(gpu["backend"]["used"], b);
        assert_eq!(
            gpu["character"]["linear_head"]["clamped"],
            cpu["character"]["linear_head"]["clamped"]
        );
        same_frames(&dir.path().join(b), &dir.path().join("cpu"), 4);
    }
}

#[test]
fn auto_prefers_the_cpu_over_a_software_adapter() {
    let Some(ctx) = adapter() else { return };
    let dir = tempfile::tempdir().unwrap();
    let r = animate(
        dir.path(),
        &["--frames", "2", "--ply", "none", "--backend", "auto"],
    );
    if ctx.is_software() {
        assert_eq!(r["backend"]["used"], "cpu");
        assert!(
            r["backend"]["reason"]
                .as_str()
                .unwrap()
                .contains("software"),
            "{}",
            r["backend"]
        );
    } else {
        assert_eq!(r["backend"]["used"], "wgpu");
        assert!(
            r["backend"]["adapter"]
                .as_str()
                .unwrap()
                .contains(&ctx.info().name)
        );
    }
}

#[test]
fn gpu_runs_report_the_adapter_and_stage_times() {
    let Some(ctx) = adapter() else { return };
    let dir = tempfile::tempdir().unwrap();
    let r = animate(
        dir.path(),
        &["--frames", "3", "--ply", "none", "--backend", "wgpu"],
    );
    assert!(
        r["backend"]["adapter"]
            .as_str()
            .unwrap()
            .contains(&ctx.info().name)
    );
    if ctx.timestamps().is_some() {
        let g = &r["timings_ms"]["gpu"];
        assert!(
            g["morph"].as_f64().unwrap() >= 0.0 && g["per_frame"].as_f64().unwrap() > 0.0,
            "{g}"
        );
    }
}

/// `mien bench`: a batch past the device's limits is `n/a` with the limit named in bytes (as a
/// CPU row past host memory is), not a failed row: exit 0.
#[test]
fn bench_rows_past_device_limits_are_not_applicable() {
    let Some(ctx) = adapter() else { return };
    // W6 at 60,000 characters with the lift: a 3.1 GB sink, 139 MiB of palettes.
    if ctx.limits().max_buffer_size >= 3_142_080_000 {
        eprintln!("notice: this device holds W6 × 60,000; nothing to refuse");
        return;
    }
    let backends = gpu_backends().join(",");
    let out = std::process::Command::new(bin())
        .args([
            "bench",
            "--quiet",
            "--allow-software",
            "--backend",
            &backends,
        ])
        .args([
            "--workload",
            "W6",
            "--batch",
            "60000",
            "--lift",
            "debug",
            "--frames",
            "1",
        ])
        .env("MIEN_DATA", data(""))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains("W6")).collect();
    assert_eq!(rows.len(), gpu_backends().len(), "{stdout}");
    for r in rows {
        assert!(
            r.contains("n/a:") && r.contains("bytes (") && r.contains("but the device allows"),
            "{r}"
        );
    }
}
