#![no_main]
//! Fuzz target `gentle`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Gentle`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Gentle, data);
});
