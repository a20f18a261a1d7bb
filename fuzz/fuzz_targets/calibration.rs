#![no_main]
//! Fuzz target `calibration`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Calibration`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Calibration, data);
});
