#![no_main]
//! Fuzz target `polly`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Polly`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Polly, data);
});
