//! `--speech`: read a timing file, build the sampler, bind visemes onto the character.

use anyhow::{Context, Result, ensure};
use mien_core::anim::drive::SpeechLayer;
use mien_core::io::speech::{SpeechFormat, read_speech};
use mien_core::rig::Character;
use mien_core::speech::{EnvelopeParams, SpeechSampler};

use crate::args::{AnimateArgs, Sampler};
use crate::load::node_label;

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
    ensure!(
        args.audio_offset.is_finite(),
        "--audio-offset {}: not a finite media time",
        args.audio_offset
    );
    ensure!(
        args.min_hold.is_finite() && (0.0..=1.0).contains(&args.min_hold),
        "--min-hold {}: must be 0–1 s",
        args.min_hold
    );
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
