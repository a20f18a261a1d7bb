//! A weight stream bound to a character: sample at media time, then route to morph weights.
//!
//! Source: STYLE 13 (signals as curves: `sample(t)` with a documented domain and clamping);
//! [`WeightStream::sample`] then [`Binding::apply`].

use super::Binding;
use crate::anim::stream::WeightStream;
use crate::error::{Error, Result};

/// A [`WeightStream`] with its [`Binding`] to one character's morph targets and a scratch frame, so
/// [`BoundStream::weights_at`] is allocation-free.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundStream {
    stream: WeightStream,
    binding: Binding,
    scratch: Vec<f32>,
}

impl BoundStream {
    /// Bind `stream` to the morph targets named `targets` `(T,)` with [`Binding::new`].
    ///
    /// # Errors
    /// Whatever [`WeightStream::validate`] refuses (no frames, bad shapes or times).
    pub fn new<T: AsRef<str>>(stream: WeightStream, targets: &[T]) -> Result<Self> {
        let binding = Binding::new(&stream.channels, targets);
        Self::from_parts(stream, binding)
    }

    /// Pair `stream` with a binding made for it.
    ///
    /// # Errors
    /// Whatever [`WeightStream::validate`] refuses; [`Error::Mismatch`] when the binding expects a
    /// different channel count than the stream has.
    pub fn from_parts(stream: WeightStream, binding: Binding) -> Result<Self> {
        stream.validate()?;
        if binding.channel_count() != stream.channel_count() {
            return Err(Error::Mismatch {
                what: format!("{}: binding channels", stream.source),
                expected: stream.channel_count() as u64,
                found: binding.channel_count() as u64,
            });
        }
        let scratch = vec![0.0; stream.channel_count()];
        Ok(BoundStream {
            stream,
            binding,
            scratch,
        })
    }

    /// Write the character's weights at media time `t` seconds into `weights` `(T,)`: the stream
    /// sampled linearly and clamped to its first / last frame ([`WeightStream::sample`]), then
    /// routed ([`Binding::apply`]; undriven targets keep their value). Allocation-free.
    ///
    /// # Panics
    /// When `weights.len()` is not the binding's target count T.
    pub fn weights_at(&mut self, t: f64, weights: &mut [f32]) {
        self.stream.sample(t, &mut self.scratch);
        self.binding.apply(&self.scratch, weights);
    }

    /// The stream.
    pub fn stream(&self) -> &WeightStream {
        &self.stream
    }

    /// The binding (and its report through [`Binding::report`]).
    pub fn binding(&self) -> &Binding {
        &self.binding
    }
}
