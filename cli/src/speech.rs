//! `--speech`, `--speech-format`, `--sampler`, `--min-hold`, `--audio-offset`: the flags of a run's
//! speech, as [`mien_runtime::SpeechOptions`].

use anyhow::{Result, ensure};
use mien_core::io::speech::SpeechFormat;
use mien_core::rig::Character;
use mien_runtime::speech::{Sampler as RtSampler, Speech, SpeechOptions};

use std::path::Path;

use crate::args::{Sampler, SpeechArgs};
use crate::text::num;

/// The speech options of `args` (the face file's visemes not read yet).
pub fn options(args: &SpeechArgs, face: Option<&Path>) -> SpeechOptions {
    SpeechOptions {
        format: args
            .speech_format
            .as_deref()
            .and_then(SpeechFormat::from_name),
        sampler: match args.sampler {
            Sampler::Held => RtSampler::Held,
            Sampler::Envelope => RtSampler::Envelope,
        },
        audio_offset: args.audio_offset,
        min_hold: args.min_hold,
        visemes: None,
        face_file: face.map(|p| p.display().to_string()),
    }
}

/// The speech flags' ranges ([`SpeechOptions::check`]).
///
/// # Errors
/// The first flag out of range, named with its value and the allowed range.
pub fn check_flags(args: &SpeechArgs) -> Result<()> {
    use mien_runtime::speech::{MAX_AUDIO_OFFSET_S, MAX_MIN_HOLD_S};
    let o = args.audio_offset;
    ensure!(
        o.is_finite() && o.abs() <= MAX_AUDIO_OFFSET_S,
        "--audio-offset {}: must be a media time from -{m} to {m} seconds",
        num(o),
        m = num(MAX_AUDIO_OFFSET_S)
    );
    let h = args.min_hold;
    ensure!(
        h.is_finite() && (0.0..=MAX_MIN_HOLD_S).contains(&h),
        "--min-hold {}: must be from 0 to {} seconds",
        num(h),
        num(MAX_MIN_HOLD_S)
    );
    ensure!(
        h == 0.0 || args.sampler == Sampler::Envelope,
        "--min-hold {}: applies to --sampler envelope only; the default held sampler holds each viseme over exactly its interval (add --sampler envelope, or leave --min-hold out)",
        num(h)
    );
    // The library's own check agrees (it words the options as fields).
    Ok(options(args, None).check()?)
}

/// The speech of a run (`None` without `--speech`); `face` is `mien animate --face`, whose visemes
/// the speech uses.
///
/// # Errors
/// Unreadable or invalid timing files, a face file that names targets the character lacks, a
/// character no viseme binds to.
pub fn layer(args: &SpeechArgs, face: Option<&Path>, ch: &Character) -> Result<Option<Speech>> {
    let Some(path) = &args.speech else {
        return Ok(None);
    };
    let mut o = options(args, face);
    if let Some(p) = face {
        let text = String::from_utf8(mien_core::io::read::read_file_capped(p, 1 << 20)?)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8", p.display()))?;
        let file = p.display().to_string();
        let def = mien_core::face::FaceDef::from_json(&text, &file)?;
        o.visemes = Speech::face_visemes(&def, &file);
    }
    Ok(Some(Speech::from_file(path, &o, ch)?))
}
