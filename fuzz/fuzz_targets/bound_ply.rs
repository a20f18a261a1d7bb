#![no_main]
//! Fuzz target `bound_ply`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::BoundPly`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::BoundPly, data);
});
