//! Playback on the audio player's media clock: a stateless lookup plus a pause state.
//!
//! Source: seed 002 "Pause, seek and reset": `sample(position)` is a stateless lookup of the
//! position (or of the paused position while paused); `pause(position)` holds where the audio
//! actually paused; `resume(position)` continues; `seek(position)` returns the destination's weights
//! at once and keeps the paused state; `reset()` pauses at the utterance origin. Positions come from
//! the audio player's media clock — never wall time or frame counts. An invalid (non-finite) position
//! leaves the state unchanged.

use super::SpeechSampler;
use super::viseme::VISEME_COUNT;
use crate::error::{Error, Result};

/// Whether playback follows the clock or holds a position.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum Transport {
    /// Samples follow the given positions.
    Playing,
    /// Samples hold this media position.
    Paused(f64),
}

impl Transport {
    /// The media position to sample at clock position `position`: the paused position while
    /// paused.
    pub fn position(self, position: f64) -> f64 {
        match self {
            Transport::Paused(at) => at,
            Transport::Playing => position,
        }
    }

    /// Hold `position`, where the audio actually paused.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite position (the state is unchanged).
    pub fn pause(&mut self, position: f64) -> Result<()> {
        *self = Transport::Paused(finite("pause", position)?);
        Ok(())
    }

    /// Follow the clock again from `position` (the player's current position).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite position (the state is unchanged).
    pub fn resume(&mut self, position: f64) -> Result<()> {
        finite("resume", position)?;
        *self = Transport::Playing;
        Ok(())
    }

    /// After the player accepted a seek to `position`: a paused transport stays paused, now at
    /// `position`; returns the position to sample at once.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite position (the state is unchanged).
    pub fn seek(&mut self, position: f64) -> Result<f64> {
        let p = finite("seek", position)?;
        if let Transport::Paused(_) = self {
            *self = Transport::Paused(p);
        }
        Ok(p)
    }
}

/// A speech sampler with a transport.
#[derive(Clone, Debug)]
pub struct SpeechPlayback<S> {
    speech: S,
    transport: Transport,
}

fn finite(what: &str, position: f64) -> Result<f64> {
    if position.is_finite() {
        Ok(position)
    } else {
        Err(Error::Invalid {
            what: format!("speech playback {what}"),
            reason: format!("{position} is not a finite media-clock position"),
        })
    }
}

impl<S: SpeechSampler> SpeechPlayback<S> {
    /// Playing from the start.
    pub fn new(speech: S) -> Self {
        SpeechPlayback {
            speech,
            transport: Transport::Playing,
        }
    }

    /// The sampler.
    pub fn speech(&self) -> &S {
        &self.speech
    }

    /// The transport state.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Weights `(15,)` at media `position` seconds (the paused position while paused). Fresh each
    /// call; never accumulates. A non-finite position gives rest.
    pub fn sample(&self, position: f64) -> [f32; VISEME_COUNT] {
        let p = self.transport.position(position);
        let mut out = [0.0; VISEME_COUNT];
        self.speech.weights_at(p, &mut out);
        out
    }

    /// Hold `position`, where the audio actually paused.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite position (the state is unchanged).
    pub fn pause(&mut self, position: f64) -> Result<()> {
        self.transport.pause(position)
    }

    /// Follow the clock again from `position` (the player's current position).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite position (the state is unchanged).
    pub fn resume(&mut self, position: f64) -> Result<()> {
        self.transport.resume(position)
    }

    /// After the player accepted a seek to `position`: the destination's weights, at once; a
    /// paused playback stays paused, now at `position`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite position (the state is unchanged).
    pub fn seek(&mut self, position: f64) -> Result<[f32; VISEME_COUNT]> {
        let p = self.transport.seek(position)?;
        let mut out = [0.0; VISEME_COUNT];
        self.speech.weights_at(p, &mut out);
        Ok(out)
    }

    /// Pause at the utterance origin.
    pub fn reset(&mut self) {
        self.transport = Transport::Paused(self.speech.span().0);
    }
}
