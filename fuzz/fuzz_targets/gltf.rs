#![no_main]
//! Fuzz target `gltf`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Gltf`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Gltf, data);
});
