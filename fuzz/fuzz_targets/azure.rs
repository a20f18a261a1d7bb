#![no_main]
//! Fuzz target `azure`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Azure`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Azure, data);
});
