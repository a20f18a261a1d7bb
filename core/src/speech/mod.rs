//! Speech: visemes and phonemes, the two samplers (held intervals, envelopes), playback on the media
//! clock, and the mapping of visemes onto a character's morph targets.

pub mod aligned;
pub mod envelope;
pub mod face;
pub mod hold;
pub mod playback;
pub mod viseme;

pub use aligned::{AlignedSpeech, TimedViseme};
pub use envelope::{EnvelopeParams, EnvelopeTrack};
pub use face::{BoundVisemes, VisemeMap, VisemeMapKind};
pub use hold::apply_min_hold;
pub use playback::{SpeechPlayback, Transport};
pub use viseme::{VISEME_COUNT, VISEME_NAMES, VISEMES, Viseme};

/// A speech signal sampled on the media clock.
pub trait SpeechSampler {
    /// Viseme weights `(15,)` in [`VISEMES`] order at media `position` seconds, written fresh into
    /// `out` (never accumulated). Rest is all zeros.
    fn weights_at(&self, position: f64, out: &mut [f32; VISEME_COUNT]);

    /// The media-clock span `[origin, end]` the signal covers, seconds.
    fn span(&self) -> (f64, f64);
}
