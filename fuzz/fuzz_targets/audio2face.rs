#![no_main]
//! Fuzz target `audio2face`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Audio2face`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Audio2face, data);
});
