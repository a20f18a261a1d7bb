#![no_main]
//! Fuzz target `spz`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Spz`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Spz, data);
});
