//! The peers' own self-test (`benches/peers/selftest.py --no-numpy`: the `.npy` format, the export
//! manifests and their refusals, and `compare.py`'s ratio tables against hand-computed ones) runs
//! with the workspace's tests, so the harness every published peer ratio comes from is checked in
//! CI. Skipped with a notice where `python3` cannot be run.

use std::process::Command;

#[test]
fn the_peers_self_test_passes() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/selftest.py");
    let out = match Command::new("python3")
        .arg(script)
        .arg("--no-numpy")
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("notice: skipping the peers' self-test: python3: {e}");
            return;
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "selftest.py failed:\n{text}");
    assert!(text.contains("0 failed"), "{text}");
}
