//! Loading a run's inputs: the character and what drives it.

use std::path::Path;

use anyhow::{Context, Result, bail};
use mien_core::anim::{Drive, StreamDrive};
use mien_core::rig::{Character, ClipId};
use mien_core::sample::sample_performance;
use mien_runtime::Asset;

use crate::report::AnimationReport;

/// Frame rate of the built-in performance stream (it is resampled at the run's `--fps`).
const BUILTIN_STREAM_FPS: f64 = 60.0;

/// Load `path` (glTF / GLB, or an `.aosrig` linear head pack driven through its control
/// character), or the built-in sample head when `None`.
///
/// # Errors
/// Unsupported extensions and every importer / pack parser error, with the file named.
pub fn character(path: Option<&Path>) -> Result<Asset> {
    Ok(match path {
        Some(p) if p == Path::new(mien_runtime::character::BUILTIN_HEAD) => Asset::builtin(),
        Some(p) if p == Path::new(mien_runtime::character::BUILTIN_BODY) => Asset::builtin_body(),
        Some(p) => Asset::load(p)?,
        None => Asset::builtin(),
    })
}

/// Choose the drive: `--arkit` stream, `--clip` (a clip, `all`, or `rest`), the built-in
/// performance for the sample head, the character's first clip, or its rest pose.
///
/// # Errors
/// Unreadable streams, a stream that binds to nothing, an unknown clip.
pub fn drive(
    loaded: &Asset,
    arkit: Option<&Path>,
    calibration: Option<&Path>,
    clip: Option<&str>,
    speech: bool,
    animator: bool,
) -> Result<(Drive, AnimationReport)> {
    let ch = loaded.character();
    let mut report = AnimationReport::default();
    let drive = if let Some(path) = arkit {
        let (mut stream, notes) = mien_core::io::read_stream(path)
            .with_context(|| format!("cannot read ARKit stream {}", path.display()))?;
        report.notes.extend(notes);
        // Ranges as recorded, before any calibration.
        report.channel_ranges = Some(stream.channel_ranges());
        if let Some(c) = calibration {
            let text = mien_core::io::read::read_file_capped(c, 1 << 20)
                .with_context(|| format!("cannot read calibration {}", c.display()))?;
            let cal = mien_core::anim::Calibration::from_json(
                &String::from_utf8_lossy(&text),
                &c.display().to_string(),
            )?;
            let r = cal.apply(&mut stream);
            report.notes.push(format!(
                "calibration {}: {} channel(s) calibrated, {} value(s) clamped{}",
                c.display(),
                r.applied.len(),
                r.clamped,
                if r.absent.is_empty() {
                    String::new()
                } else {
                    format!("; not in the stream: {}", r.absent.join(", "))
                }
            ));
        }
        report.kind = "arkit".into();
        report.name = path.display().to_string();
        Drive::Stream(
            StreamDrive::new(stream, ch).context("cannot map the stream onto the character")?,
        )
    } else if clip == Some("all") && ch.clips.iter().all(|c| c.name.as_deref() != Some("all")) {
        if ch.clips.is_empty() {
            bail!("{}: --clip all: the character has no clips", ch.source);
        }
        let ids: Vec<ClipId> = (0..ch.clips.len() as u32).map(ClipId).collect();
        report.kind = "clip".into();
        report.name = format!("all {} clips together", ids.len());
        Drive::Clips(ids)
    } else if clip == Some("rest") && ch.clips.iter().all(|c| c.name.as_deref() != Some("rest")) {
        // The rest pose on purpose: what `mien bind` expects a capture to be made in.
        report.kind = "rest".into();
        report.name = "rest pose (--clip rest)".into();
        Drive::Rest
    } else if let Some(key) = clip {
        let id = ch.find_clip(key)?;
        report.kind = "clip".into();
        report.name = clip_label(ch, id.index());
        Drive::Clips(vec![id])
    } else if speech {
        report.kind = "rest".into();
        report.name = "rest pose under the speech".into();
        report.notes.push(
            "--speech without --clip or --arkit: the speech moves the mouth over the rest pose"
                .into(),
        );
        Drive::Rest
    } else if loaded.is_builtin() {
        report.kind = "builtin".into();
        report.name =
            "built-in performance (speech, smile, brows; blinks and gaze from the animator)".into();
        let mut stream = sample_performance(BUILTIN_STREAM_FPS);
        if animator {
            // The animator generates blinks and gaze; the stream keeps the mouth, smile and brows.
            strip_channels(&mut stream, |c| {
                c.starts_with("eyeBlink") || c.starts_with("eyeLook")
            });
        } else {
            report.name = "built-in performance (speech, blinks, smile, gaze)".into();
        }
        Drive::Stream(StreamDrive::new(stream, ch)?)
    } else if !ch.clips.is_empty() {
        let take = ch.take_of(ClipId(0));
        report.kind = "clip".into();
        report.name = take
            .iter()
            .map(|c| clip_label(ch, c.index()))
            .collect::<Vec<_>>()
            .join(" + ");
        report.notes.push(if take.len() > 1 {
            format!("no --clip or --arkit given: playing the first clip with the {} other clips of its take", take.len() - 1)
        } else {
            "no --clip or --arkit given: playing the character's first clip".into()
        });
        Drive::Clips(take)
    } else {
        report.kind = "rest".into();
        report.name = "rest pose".into();
        report.notes.push(
            "the character has no clips and no --arkit stream was given: posing its rest pose"
                .into(),
        );
        Drive::Rest
    };
    if let Drive::Stream(s) = &drive {
        let reports: Vec<serde_json::Value> = s
            .reports()
            .map(|(node, r)| {
                serde_json::json!({
                    "mesh_node": node_label(ch, node.index()),
                    "report": r,
                })
            })
            .collect();
        report.binding = Some(serde_json::Value::Array(reports));
    }
    let span = drive.span(ch);
    report.span_s = [span.0, span.1];
    Ok((drive, report))
}

/// Remove the channels `drop` selects from `stream` (values and names together).
fn strip_channels(stream: &mut mien_core::anim::WeightStream, drop: impl Fn(&str) -> bool) {
    let keep: Vec<bool> = stream.channels.iter().map(|c| !drop(c)).collect();
    let c = stream.channels.len();
    stream.values = stream
        .values
        .chunks_exact(c)
        .flat_map(|row| row.iter().zip(&keep).filter(|(_, k)| **k).map(|(v, _)| *v))
        .collect();
    stream.channels.retain(|c| !drop(c));
}

/// `index: name` of a clip, `(unnamed)` when the file gives none.
pub fn clip_label(ch: &Character, i: usize) -> String {
    format!(
        "{i}: {}",
        ch.clips[i].name.as_deref().unwrap_or("(unnamed)")
    )
}

pub use mien_runtime::node_label;
