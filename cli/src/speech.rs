//! `--speech`: read a timing file, build the sampler, bind visemes onto the character.

use anyhow::{Context, Result, ensure};
use mien_core::anim::drive::SpeechLayer;
use mien_core::io::speech::{SpeechFormat, read_speech};
use mien_core::rig::Character;
use mien_core::speech::{EnvelopeParams, SpeechSampler};

use crate::args::{AnimateArgs, Sampler};
use crate::load::node_label;
use crate::text::num;

/// Largest `--audio-offset` either way, seconds (about 11.6 days: far beyond any take, small
/// enough that f64 media times keep sub-nanosecond resolution).
pub const MAX_AUDIO_OFFSET_S: f64 = 1e6;
/// Largest `--min-hold`, seconds.
pub const MAX_MIN_HOLD_S: f64 = 1.0;

/// The speech flags' ranges: `--audio-offset` within ±[`MAX_AUDIO_OFFSET_S`], `--min-hold` in
/// [0, [`MAX_MIN_HOLD_S`]] and only with `--sampler envelope` (the held sampler holds each viseme
/// over exactly its interval, so a minimum hold would do nothing).
///
/// # Errors
/// The first flag out of range, named with its value in short form and the allowed range.
pub fn check_flags(args: &AnimateArgs) -> Result<()> {
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
    Ok(())
}

/// The speech layer of a run and its report (`None` without `--speech`).
///
/// # Errors
/// Unreadable or invalid timing files, a face file that names targets the character lacks, a
/// character no viseme binds to.
pub fn layer(
    args: &AnimateArgs,
    ch: &Character,
) -> Result<Option<(SpeechLayer, serde_json::Value)>> {
    let Some(path) = &args.speech else {
        return Ok(None);
    };
    let forced = args
        .speech_format
        .as_deref()
        .and_then(SpeechFormat::from_name);
    let (file, format) = read_speech(path, forced)
        .with_context(|| format!("cannot read speech {}", path.display()))?;
    let origin = args.audio_offset;
    let sampler: Box<dyn SpeechSampler + Send + Sync> = match args.sampler {
        Sampler::Held => Box::new(
            file.to_aligned(origin)
                .with_context(|| format!("{}: cannot hold its visemes", path.display()))?,
        ),
        Sampler::Envelope => {
            let params = EnvelopeParams {
                min_hold: args.min_hold as f32,
                ..EnvelopeParams::default()
            };
            Box::new(
                file.to_envelope(origin, params)
                    .with_context(|| format!("{}: cannot build envelopes", path.display()))?,
            )
        }
    };
    // A face file's visemes, when it has a `visemes` section; else the built-in map per mesh.
    let face = match &args.face {
        Some(p) => {
            let text = String::from_utf8(mien_core::io::read::read_file_capped(p, 1 << 20)?)
                .with_context(|| format!("{}: not UTF-8", p.display()))?;
            mien_core::face::FaceDef::from_json(&text, &p.display().to_string())?
                .visemes
                .map(|m| (m, p.display().to_string()))
        }
        None => None,
    };
    let layer = SpeechLayer::new(sampler, ch, face.as_ref().map(|(m, f)| (m, f.as_str())))
        .context("cannot put the speech on the character")?;
    let bindings: Vec<serde_json::Value> =
        layer.reports().map(|(node, r)| serde_json::json!({ "mesh_node": node_label(ch, node.index()), "visemes": r })).collect();
    let (a, b) = layer.span();
    let report = serde_json::json!({
        "file": path.display().to_string(),
        "format": format.name(),
        "label": file.label(),
        "segments": file.segments().len(),
        "sampler": format!("{:?}", args.sampler).to_lowercase(),
        "audio_offset_s": origin,
        "span_s": [a, b],
        "conversion": file.report(),
        "bindings": bindings,
        "face_file": args.face.as_ref().map(|p| p.display().to_string()),
    });
    Ok(Some((layer, report)))
}
