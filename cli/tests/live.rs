//! `mien live` end to end: a recording replayed over loopback into a VRM avatar, the take saved
//! and read back, the report's counts; refused flags exit 1 with the flag named.

use std::path::{Path, PathBuf};
use std::process::Command;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

#[test]
fn a_replay_drives_a_vrm_and_saves_a_take_mien_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let take = dir.path().join("take.csv");
    let report = dir.path().join("live.json");
    let out = Command::new(env!("CARGO_BIN_EXE_mien"))
        .args(["live", "-c"])
        .arg(data("vrm/Godette_vrm_v4.vrm"))
        .arg("--replay")
        .arg(data("livelink-udp/debug-jawopen.gesichter"))
        .args([
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--backend",
            "cpu",
            "--replay-speed",
            "4",
        ])
        .arg("--record")
        .arg(&take)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("66 received"), "{stdout}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["packets"]["received"], 66);
    assert_eq!(r["packets"]["accepted"], 66);
    let played = r["packets"]["played"].as_u64().unwrap();
    let skipped = r["packets"]["skipped"].as_u64().unwrap();
    assert_eq!(played + skipped, 66);
    assert_eq!(r["frames_posed"].as_u64().unwrap(), played);
    assert!(r["latency_ms"]["arrival_to_posed"]["p99"].as_f64().unwrap() > 0.0);
    // The take reads back with mien's own Live Link reader.
    let inspect = Command::new(env!("CARGO_BIN_EXE_mien"))
        .arg("inspect")
        .arg(&take)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        inspect.status.success() && text.contains("frames: 66"),
        "{text}"
    );
}

#[test]
fn refused_live_flags_name_the_flag() {
    for (args, needle) in [
        (vec!["--fps", "0"], "--fps"),
        (vec!["--delay-ms", "20000"], "--delay-ms"),
        (vec!["--duration", "0"], "--duration"),
        (vec!["--replay", "/nonexistent.gesichter"], "--replay"),
        (vec!["--delay-ms", "-5"], "--delay-ms"),
        (vec!["--duration", "-1"], "--duration"),
        // Checked before listening: a take is never lost at the end of a session.
        (
            vec!["--duration", "30", "--record", "/nonexistent/dir/take.csv"],
            "--record /nonexistent/dir/take.csv",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mien"))
            .arg("live")
            .args(&args)
            .args(["--port", "0"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
