#![no_main]
//! Fuzz target `rhubarb`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Rhubarb`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Rhubarb, data);
});
