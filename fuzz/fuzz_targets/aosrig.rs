#![no_main]
//! Fuzz target `aosrig`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Aosrig`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Aosrig, data);
});
