#![no_main]
//! Fuzz target `mien_json`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::MienJson`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::MienJson, data);
});
