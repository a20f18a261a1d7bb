//! Speech on an instance: timed visemes or phonemes (seed 002) sampled on the media clock — held
//! intervals or envelopes (seed 003) — bound onto the character's mouth targets, with the audio
//! player's transport (play, pause, resume, seek, reset: seed 002 "Pause, seek and reset").

use std::path::Path;

use mien_core::anim::drive::SpeechLayer;
use mien_core::face::FaceDef;
use mien_core::io::speech::{SpeechFormat, read_speech};
use mien_core::rig::{Character, Pose};
use mien_core::speech::{EnvelopeParams, SpeechSampler, Transport};

use crate::error::{Context as _, Error, Result};
use crate::text::num;

/// Largest audio offset either way, seconds (about 11.6 days: far beyond any take, small enough
/// that f64 media times keep sub-nanosecond resolution).
pub const MAX_AUDIO_OFFSET_S: f64 = 1e6;
/// Largest minimum hold of the envelope sampler, seconds.
pub const MAX_MIN_HOLD_S: f64 = 1.0;

/// How visemes are sampled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sampler {
    /// Held intervals (seed 002): each viseme at full weight over its half-open `[start, end)`.
    #[default]
    Held,
    /// Envelopes (seed 003): attack, hold, release and lead; overlaps scaled to sum ≤ 1.
    Envelope,
}

/// How a speech timing file becomes weights on the media clock.
#[derive(Clone, Debug, Default)]
pub struct SpeechOptions {
    /// Force a reader instead of detecting the format by content.
    pub format: Option<SpeechFormat>,
    /// The sampler.
    pub sampler: Sampler,
    /// Where the utterance's time 0 lies on the media clock, seconds, within
    /// ±[`MAX_AUDIO_OFFSET_S`].
    pub audio_offset: f64,
    /// Envelope sampler only: the shortest time a kept viseme is held, seconds, in
    /// `[0, MAX_MIN_HOLD_S]` (0 with the held sampler; 0 = off). Short shapes borrow time from a
    /// neighbour that can spare it, else merge with one, so the shown shape changes at most
    /// `1 / min_hold` times a second (the rule: [`mien_core::speech::hold`]).
    pub min_hold: f64,
    /// The viseme map of a face definition file (and the file, for messages); `None`: each mesh
    /// gets its built-in map (`viseme_*` targets, else the documented ARKit combinations).
    pub visemes: Option<(mien_core::speech::VisemeMap, String)>,
    /// The face definition file the run uses, for the report (whether or not it has visemes).
    pub face_file: Option<String>,
}

impl SpeechOptions {
    /// The options' ranges: `audio_offset` within ±[`MAX_AUDIO_OFFSET_S`], `min_hold` in
    /// `[0, MAX_MIN_HOLD_S]` and only with [`Sampler::Envelope`] (the held sampler holds each
    /// viseme over exactly its interval, so a minimum hold would do nothing).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first option out of range (`audio_offset`, `min_hold`), its
    /// value and the allowed range.
    pub fn check(&self) -> Result<()> {
        let o = self.audio_offset;
        if !(o.is_finite() && o.abs() <= MAX_AUDIO_OFFSET_S) {
            return Err(Error::invalid(
                format!("audio_offset {}", num(o)),
                format!(
                    "must be a media time from -{m} to {m} seconds",
                    m = num(MAX_AUDIO_OFFSET_S)
                ),
            ));
        }
        let h = self.min_hold;
        if !(h.is_finite() && (0.0..=MAX_MIN_HOLD_S).contains(&h)) {
            return Err(Error::invalid(
                format!("min_hold {}", num(h)),
                format!("must be from 0 to {} seconds", num(MAX_MIN_HOLD_S)),
            ));
        }
        if h != 0.0 && self.sampler != Sampler::Envelope {
            return Err(Error::invalid(
                format!("min_hold {}", num(h)),
                "applies to the envelope sampler only; the held sampler holds each viseme over exactly its interval",
            ));
        }
        Ok(())
    }
}

/// Speech bound to a character, with its transport. The speech owns the mouth targets (jaw, mouth,
/// tongue) it binds; the instance's stream or clip keeps the rest.
pub struct Speech {
    layer: SpeechLayer,
    /// The shape of the character it was bound to (see [`crate::asset::Asset::shape`]).
    pub(crate) shape: Vec<usize>,
    transport: Transport,
    report: serde_json::Value,
}

impl std::fmt::Debug for Speech {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speech")
            .field("transport", &self.transport)
            .field("span", &self.layer.span())
            .finish()
    }
}

impl Speech {
    /// Read a timing file (MFA / Praat TextGrid, Gentle JSON, Rhubarb TSV / JSON, Polly speech
    /// marks, Azure viseme events, mien's utterance JSON; detected by content) and bind it to
    /// `ch`. Playing from the start.
    ///
    /// # Errors
    /// Options out of range ([`SpeechOptions::check`]); unreadable or invalid files (`cannot read
    /// speech PATH`); a face file that names targets the character lacks; a character no viseme
    /// binds to.
    pub fn from_file(
        path: impl AsRef<Path>,
        options: &SpeechOptions,
        ch: &Character,
    ) -> Result<Self> {
        let path = path.as_ref();
        options.check()?;
        let (file, format) = read_speech(path, options.format)
            .with_context(|| format!("cannot read speech {}", path.display()))?;
        let origin = options.audio_offset;
        // With a minimum hold, the segments the envelopes are built from (after its rule).
        let mut held = None;
        let sampler: Box<dyn SpeechSampler + Send + Sync> = match options.sampler {
            Sampler::Held => Box::new(
                file.to_aligned(origin)
                    .with_context(|| format!("{}: cannot hold its visemes", path.display()))?,
            ),
            Sampler::Envelope => {
                let params = EnvelopeParams {
                    min_hold: options.min_hold as f32,
                    ..EnvelopeParams::default()
                };
                let track = file
                    .to_envelope(origin, params)
                    .with_context(|| format!("{}: cannot build envelopes", path.display()))?;
                if options.min_hold > 0.0 {
                    held = Some(
                        track
                            .segments()
                            .iter()
                            .map(|s| {
                                serde_json::json!({
                                    "start_s": s.start,
                                    "end_s": s.end,
                                    "viseme": s.viseme.name(),
                                })
                            })
                            .collect::<Vec<_>>(),
                    );
                }
                Box::new(track)
            }
        };
        let mut speech = Self::from_sampler(sampler, ch, options.visemes.as_ref())?;
        let (a, b) = speech.layer.span();
        let bindings = speech.report["bindings"].take();
        speech.report = serde_json::json!({
            "file": path.display().to_string(),
            "format": format.name(),
            "label": file.label(),
            "segments": file.segments().len(),
            "duration_s": file.duration(),
            // Every interval as read (utterance seconds; the media time adds the offset).
            "intervals": file
                .segments()
                .iter()
                .map(|g| serde_json::json!({
                    "start_s": g.start,
                    "end_s": g.end,
                    "unit": match &g.unit {
                        mien_core::io::speech::utterance::Unit::Phoneme(p) => p.clone(),
                        mien_core::io::speech::utterance::Unit::Viseme(v) => format!("{v:?}"),
                    },
                }))
                .collect::<Vec<_>>(),
            "sampler": format!("{:?}", options.sampler).to_lowercase(),
            "audio_offset_s": origin,
            "span_s": [a, b],
            "conversion": file.report(),
            "bindings": bindings,
            "face_file": options.face_file,
        });
        if let Some(held) = held {
            speech.report["min_hold_s"] = options.min_hold.into();
            speech.report["held"] = held.into();
        }
        Ok(speech)
    }

    /// Bind any sampler (an [`mien_core::speech::AlignedSpeech`], an
    /// [`mien_core::speech::EnvelopeTrack`], or the caller's own) to `ch`.
    ///
    /// # Errors
    /// A face file's missing targets; a character no viseme binds to.
    pub fn from_sampler(
        sampler: Box<dyn SpeechSampler + Send + Sync>,
        ch: &Character,
        visemes: Option<&(mien_core::speech::VisemeMap, String)>,
    ) -> Result<Self> {
        let layer = SpeechLayer::new(sampler, ch, visemes.map(|(m, f)| (m, f.as_str())))
            .context("cannot put the speech on the character")?;
        let bindings: Vec<serde_json::Value> = layer
            .reports()
            .map(|(node, r)| {
                serde_json::json!({ "mesh_node": crate::node_label(ch, node.index()), "visemes": r })
            })
            .collect();
        let (a, b) = layer.span();
        let report = serde_json::json!({ "span_s": [a, b], "bindings": bindings });
        Ok(Speech {
            layer,
            shape: crate::asset::shape(ch),
            transport: Transport::Playing,
            report,
        })
    }

    /// The viseme map of a face definition, when it has a `visemes` section.
    pub fn face_visemes(
        def: &FaceDef,
        file: &str,
    ) -> Option<(mien_core::speech::VisemeMap, String)> {
        def.visemes.clone().map(|m| (m, file.to_string()))
    }

    /// The utterance's span on the media clock, seconds.
    pub fn span(&self) -> (f64, f64) {
        self.layer.span()
    }

    /// What the report says about the speech: file, format, sampler, span, conversion, bindings;
    /// with a minimum hold also `min_hold_s` and `held`, the `{start_s, end_s, viseme}` segments
    /// (utterance seconds) the envelopes are built from after the minimum hold's rule.
    pub fn report(&self) -> &serde_json::Value {
        &self.report
    }

    /// The transport state.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Hold `position` (the media position where the audio actually paused).
    ///
    /// # Errors
    /// A non-finite position; the state is unchanged.
    pub fn pause(&mut self, position: f64) -> Result<()> {
        Ok(self.transport.pause(position)?)
    }

    /// Follow the media clock again (`position`: the player's current position).
    ///
    /// # Errors
    /// A non-finite position; the state is unchanged.
    pub fn resume(&mut self, position: f64) -> Result<()> {
        Ok(self.transport.resume(position)?)
    }

    /// After the player accepted a seek to `position`: a paused speech stays paused, now at
    /// `position`; a playing one follows the clock, which the next update passes.
    ///
    /// # Errors
    /// A non-finite position; the state is unchanged.
    pub fn seek(&mut self, position: f64) -> Result<()> {
        self.transport.seek(position)?;
        Ok(())
    }

    /// Pause at the utterance's start.
    pub fn reset(&mut self) {
        self.transport = Transport::Paused(self.layer.span().0);
    }

    /// Overwrite the mouth targets of `pose` with the speech at media time `t` (the paused
    /// position while paused). Allocation-free.
    pub fn apply(&mut self, t: f64, pose: &mut Pose) {
        self.layer.apply(self.transport.position(t), pose);
    }
}
