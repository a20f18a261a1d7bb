//! Shared helpers of `mien-core`'s integration tests.

#![allow(dead_code)]

use proptest::test_runner::{Config, RngSeed};

/// Proptest configuration with a fixed seed (STYLE 9) unless `PROPTEST_RNG_SEED` asks for another,
/// and no failure-persistence files written into the source tree.
pub fn proptest_config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: cases_from_env(cases),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// `../shared/data` seen from the workspace root (tests run with the crate folder as cwd), or
/// `$MIEN_DATA` (a copy of it on a machine without the checkout), as the CLI's tests read it.
pub fn data_dir() -> std::path::PathBuf {
    std::env::var_os("MIEN_DATA").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
        std::path::PathBuf::from,
    )
}

/// `cases`, or `$MIEN_PROPTEST_CASES` when set (more cases on a fast machine).
fn cases_from_env(cases: u32) -> u32 {
    std::env::var("MIEN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases)
}
