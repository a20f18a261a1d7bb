#![no_main]
//! Fuzz target `dna`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Dna`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Dna, data);
});
