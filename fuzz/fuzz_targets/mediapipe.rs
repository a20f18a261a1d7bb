#![no_main]
//! Fuzz target `mediapipe`: [`mien_core::fuzz::run`] with [`mien_core::fuzz::Target::Mediapipe`].
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mien_core::fuzz::run(mien_core::fuzz::Target::Mediapipe, data);
});
