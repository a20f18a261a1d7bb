#![no_main]
//! Fuzz target `ply`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Ply`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Ply, data);
});
