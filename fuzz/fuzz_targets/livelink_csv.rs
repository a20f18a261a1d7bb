#![no_main]
//! Fuzz target `livelink_csv`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::LivelinkCsv`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::LivelinkCsv, data);
});
