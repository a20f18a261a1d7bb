#![no_main]
//! Fuzz target `textgrid`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Textgrid`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Textgrid, data);
});
