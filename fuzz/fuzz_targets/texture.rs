#![no_main]
//! Fuzz target `texture`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Texture`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Texture, data);
});
