//! A take as a user names it — an ARKit-52 stream file, a speech timing file, one of the
//! character's clips, or nothing — turned into what the runtime plays ([`choose_drive`]), and a
//! whole take baked in one call ([`bake_take`]): what `mien bake`, the Python package's `bake` and
//! its Ray batch bake (`python -m mien.ray_bake`) all run.
//!
//! Units: seconds on the media clock, keys per second.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::anim::{ChannelRange, Drive, StreamDrive};
use mien_core::rig::{Character, ClipId};
use mien_core::sample::sample_performance;
use serde_json::{Value, json};

use crate::bake::{BakeOptions, BakeReport, Tolerance, bake};
use crate::error::{Context, Error, Result};
use crate::speech::{Speech, SpeechOptions};
use crate::{Asset, Device, Runtime, RuntimeOptions};

/// Frame rate of the built-in performance stream (it is resampled at the run's rate).
const BUILTIN_STREAM_FPS: f64 = 60.0;

/// Most keys one take bake samples (an hour at 250 fps); a longer take is refused.
pub const MAX_KEYS: u32 = 900_000;

/// What drives instance 0 of a take: the inputs of [`choose_drive`].
#[derive(Clone, Copy, Debug, Default)]
pub struct DriveRequest<'a> {
    /// An ARKit-52 stream file (Live Link Face `.csv`, Audio2Face or MediaPipe `.json`,
    /// MediaPipe `.pbtxt`; [`mien_core::io::read_stream`]).
    pub arkit: Option<&'a Path>,
    /// A calibration JSON applied to the stream ([`mien_core::anim::Calibration`]).
    pub calibration: Option<&'a Path>,
    /// One of the character's clips by name or index, `all` (every clip together) or `rest`.
    pub clip: Option<&'a str>,
    /// A speech layer will own the mouth: without a stream or clip the rest pose is played
    /// under it.
    pub speech: bool,
    /// The face animator generates blinks and gaze: the built-in performance drops its own.
    pub animator: bool,
}

/// What [`choose_drive`] chose, for a report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DriveChoice {
    /// `clip`, `arkit`, `builtin` or `rest`.
    pub kind: String,
    /// The clip's `index: name`, the stream file, or a description.
    pub name: String,
    /// Media-time span of the drive, seconds.
    pub span_s: [f64; 2],
    /// The stream's channel binding per mesh node (streams only).
    pub binding: Option<Value>,
    /// Per stream channel, the values' range as recorded (streams only).
    pub channel_ranges: Option<Vec<ChannelRange>>,
    /// Anything worth knowing (which default was taken, a calibration's counts).
    pub notes: Vec<String>,
}

/// Choose the drive: the `arkit` stream, the `clip` (a clip, `all`, or `rest`), the built-in
/// performance for the built-in head, the character's first clip's take, or its rest pose — in
/// that order.
///
/// # Errors
/// An unreadable or invalid stream or calibration (the file named), a stream that binds to nothing
/// on the character, an unknown clip, `all` on a character without clips.
pub fn choose_drive(asset: &Asset, req: &DriveRequest<'_>) -> Result<(Drive, DriveChoice)> {
    let ch = asset.character();
    let mut c = DriveChoice::default();
    let drive = if let Some(path) = req.arkit {
        let (mut stream, notes) = mien_core::io::read_stream(path)
            .context(format!("cannot read ARKit stream {}", path.display()))?;
        c.notes.extend(notes);
        // Ranges as recorded, before any calibration.
        c.channel_ranges = Some(stream.channel_ranges());
        if let Some(cal_path) = req.calibration {
            let text = mien_core::io::read::read_file_capped(cal_path, 1 << 20)
                .context(format!("cannot read calibration {}", cal_path.display()))?;
            let cal = mien_core::anim::Calibration::from_json(
                &String::from_utf8_lossy(&text),
                &cal_path.display().to_string(),
            )?;
            let r = cal.apply(&mut stream);
            c.notes.push(format!(
                "calibration {}: {} channel(s) calibrated, {} value(s) clamped{}",
                cal_path.display(),
                r.applied.len(),
                r.clamped,
                if r.absent.is_empty() {
                    String::new()
                } else {
                    format!("; not in the stream: {}", r.absent.join(", "))
                }
            ));
        }
        c.kind = "arkit".into();
        c.name = path.display().to_string();
        Drive::Stream(
            StreamDrive::new(stream, ch).context("cannot map the stream onto the character")?,
        )
    } else if req.clip == Some("all") && ch.clips.iter().all(|c| c.name.as_deref() != Some("all")) {
        if ch.clips.is_empty() {
            return Err(Error::invalid(
                format!("{}: clip all", ch.source),
                "the character has no clips",
            ));
        }
        let ids: Vec<ClipId> = (0..ch.clips.len() as u32).map(ClipId).collect();
        c.kind = "clip".into();
        c.name = format!("all {} clips together", ids.len());
        Drive::Clips(ids)
    } else if req.clip == Some("rest") && ch.clips.iter().all(|c| c.name.as_deref() != Some("rest"))
    {
        // The rest pose on purpose: what a capture is expected to be made in.
        c.kind = "rest".into();
        c.name = "rest pose (clip rest)".into();
        Drive::Rest
    } else if let Some(key) = req.clip {
        let id = ch.find_clip(key)?;
        c.kind = "clip".into();
        c.name = clip_label(ch, id.index());
        Drive::Clips(vec![id])
    } else if req.speech {
        c.kind = "rest".into();
        c.name = "rest pose under the speech".into();
        c.notes.push(
            "speech without a clip or ARKit stream: the speech moves the mouth over the rest pose"
                .into(),
        );
        Drive::Rest
    } else if asset.is_builtin() {
        c.kind = "builtin".into();
        c.name =
            "built-in performance (speech, smile, brows; blinks and gaze from the animator)".into();
        let mut stream = sample_performance(BUILTIN_STREAM_FPS);
        if req.animator {
            // The animator generates blinks and gaze; the stream keeps the mouth, smile and brows.
            strip_channels(&mut stream, |c| {
                c.starts_with("eyeBlink") || c.starts_with("eyeLook")
            });
        } else {
            c.name = "built-in performance (speech, blinks, smile, gaze)".into();
        }
        Drive::Stream(StreamDrive::new(stream, ch)?)
    } else if !ch.clips.is_empty() {
        let take = ch.take_of(ClipId(0));
        c.kind = "clip".into();
        c.name = take
            .iter()
            .map(|id| clip_label(ch, id.index()))
            .collect::<Vec<_>>()
            .join(" + ");
        c.notes.push(if take.len() > 1 {
            format!(
                "no clip or ARKit stream given: playing the first clip with the {} other clips of its take",
                take.len() - 1
            )
        } else {
            "no clip or ARKit stream given: playing the character's first clip".into()
        });
        Drive::Clips(take)
    } else {
        c.kind = "rest".into();
        c.name = "rest pose".into();
        c.notes.push(
            "the character has no clips and no ARKit stream was given: posing its rest pose".into(),
        );
        Drive::Rest
    };
    if let Drive::Stream(s) = &drive {
        let reports: Vec<Value> = s
            .reports()
            .map(|(node, r)| {
                json!({
                    "mesh_node": crate::node_label(ch, node.index()),
                    "report": r,
                })
            })
            .collect();
        c.binding = Some(Value::Array(reports));
    }
    let span = drive.span(ch);
    c.span_s = [span.0, span.1];
    Ok((drive, c))
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

/// One take to bake: what drives the face (at most one of `arkit` and `clip`) and an optional
/// speech layer over it. Nothing at all bakes the character's first clip's take, or refuses a
/// character with nothing to move.
#[derive(Clone, Debug, Default)]
pub struct Take {
    /// An ARKit-52 stream file ([`DriveRequest::arkit`]).
    pub arkit: Option<PathBuf>,
    /// A speech timing file ([`Speech::from_file`]: TextGrid, Gentle, Rhubarb, Polly, Azure,
    /// mien's utterance JSON).
    pub speech: Option<PathBuf>,
    /// How the speech is sampled (sampler, audio offset, minimum hold, format).
    pub speech_options: SpeechOptions,
    /// One of the character's clips, `all` or `rest` ([`DriveRequest::clip`]).
    pub clip: Option<String>,
}

/// How a take is sampled and named: [`bake_take`]'s options.
#[derive(Clone, Debug, PartialEq)]
pub struct TakeOptions {
    /// The animation's name; `None`: `mien: <take>` (the speech's label, the stream file's stem,
    /// or the clip's name).
    pub name: Option<String>,
    /// Keys per second, 1 to 1000.
    pub fps: f64,
    /// Media time of the first key, seconds, ≥ 0.
    pub start_s: f64,
    /// Keys; `None`: the take's span at `fps` (at most [`MAX_KEYS`]).
    pub frames: Option<u32>,
    /// Drop keys LINEAR interpolation reproduces within this bound; `None` keeps every key.
    pub tolerance: Option<Tolerance>,
    /// A game-face LOD of this many triangles ([`mien_core::io::gltf::lod::apply_lod`]).
    pub lod: Option<u64>,
    /// Also sample the take's ARKit-52 curves ([`crate::curves::sample_arkit`]).
    pub curves: bool,
    /// Anything the caller wants kept with the take: stored in the record's `take` object under
    /// `caller` (covered by the record's checksum; the Ray batch bake keeps each row's digest
    /// there, to tell a finished row from a file baked with other options).
    pub caller: Option<Value>,
}

impl Default for TakeOptions {
    fn default() -> Self {
        TakeOptions {
            name: None,
            fps: 30.0,
            start_s: 0.0,
            frames: None,
            tolerance: None,
            lod: None,
            curves: false,
            caller: None,
        }
    }
}

/// What [`bake_take`] made.
#[derive(Debug)]
pub struct TakeBaked {
    /// The baked GLB (the character's own bytes with the take appended; a `.vrm` stays one).
    pub bytes: Vec<u8>,
    /// Keys and channels written.
    pub report: BakeReport,
    /// The take's label (speech label, stream file stem or clip name), without `mien: `.
    pub label: String,
    /// The animation's name in the file.
    pub name: String,
    /// Keys sampled.
    pub frames: u32,
    /// The take's media-time span, seconds (the drive's, widened by the speech's).
    pub span_s: [f64; 2],
    /// What was chosen to drive it.
    pub drive: DriveChoice,
    /// The speech layer's report (file, format, conversions, bindings), if any.
    pub speech: Option<Value>,
    /// The LOD's report, if one was asked for.
    pub lod: Option<mien_core::io::gltf::lod::LodReport>,
    /// The take's ARKit-52 curves, if [`TakeOptions::curves`].
    pub curves: Option<crate::curves::SampledCurves>,
    /// Things worth telling the user (keys past the take's end, the character's import notes).
    pub notes: Vec<String>,
}

/// Bake `take` on `asset` (loaded from the file whose bytes are `source`, named `file` in
/// messages) on the CPU reference: the drive chosen ([`choose_drive`]), the speech layered over
/// it, `frames` keys from `start_s` sampled by [`bake`], then the LOD if asked. Nothing is written:
/// the caller writes [`TakeBaked::bytes`] (atomically: [`mien_core::io::atomic`]).
///
/// The result depends only on the inputs' contents and the options (never on paths beyond the
/// take's file stem, the time or the thread count), so a retried bake writes the same bytes.
///
/// # Errors
/// Options out of range (`fps` 1–1000, `start_s` ≥ 0 and before the take's end, `frames` 1–
/// [`MAX_KEYS`], the tolerance, a speech option) named with the value; both `arkit` and `clip`;
/// unreadable or invalid stream, speech or clip; a take that moves nothing; the bake's and LOD's
/// refusals.
///
/// ```
/// use std::sync::Arc;
/// use mien_runtime::Asset;
/// use mien_runtime::take::{Take, TakeOptions, bake_take};
/// let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
/// let file = data.join("facecap/facecap.glb");
/// let asset = Arc::new(Asset::load(&file)?);
/// // A line of dialogue over the rest of the face held still, keyed at 24 fps.
/// let take = Take {
///     speech: Some(data.join("gentle/lucier_golden.json")),
///     clip: Some("rest".into()),
///     ..Take::default()
/// };
/// let opts = TakeOptions { fps: 24.0, ..TakeOptions::default() };
/// let baked = bake_take(&asset, &std::fs::read(&file)?, "line.glb", &take, &opts)?;
/// assert_eq!(baked.name, "mien: lucier_golden");
/// assert_eq!(baked.frames, (baked.span_s[1] * 24.0).floor() as u32 + 1);
/// mien_core::io::atomic::write_atomic_bytes(&std::env::temp_dir().join("line.glb"), &baked.bytes)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn bake_take(
    asset: &Arc<Asset>,
    source: &[u8],
    file: &str,
    take: &Take,
    opts: &TakeOptions,
) -> Result<TakeBaked> {
    if take.arkit.is_some() && take.clip.is_some() {
        return Err(Error::invalid(
            "take",
            "an ARKit stream and a clip both drive the face: give one",
        ));
    }
    if !(opts.fps.is_finite() && (1.0..=1000.0).contains(&opts.fps)) {
        return Err(Error::invalid(
            format!("fps {}", opts.fps),
            "must be 1 to 1000 keys per second",
        ));
    }
    if !(opts.start_s.is_finite() && opts.start_s >= 0.0) {
        return Err(Error::invalid(
            format!("start {}", opts.start_s),
            "must be a media time of 0 s or later",
        ));
    }
    match opts.frames {
        Some(0) => {
            return Err(Error::invalid("frames 0", "a bake needs at least one key"));
        }
        Some(f) if f > MAX_KEYS => {
            return Err(Error::invalid(
                format!("frames {f}"),
                format!("at most {MAX_KEYS} keys per take"),
            ));
        }
        _ => {}
    }
    if let Some(t) = &opts.tolerance
        && !(t.value.is_finite()
            && (0.0..=1.0).contains(&t.value)
            && t.angle_rad.is_finite()
            && (0.0..=45f32.to_radians()).contains(&t.angle_rad))
    {
        return Err(Error::invalid(
            format!("tolerance {},{} rad", t.value, t.angle_rad),
            "a weight from 0 to 1 and an angle from 0 to 45 degrees (0.785 rad)",
        ));
    }
    if take.speech.is_some() {
        take.speech_options.check()?;
    }
    let ch = asset.character();
    let (drive, choice) = choose_drive(
        asset,
        &DriveRequest {
            arkit: take.arkit.as_deref(),
            calibration: None,
            clip: take.clip.as_deref(),
            speech: take.speech.is_some(),
            animator: false,
        },
    )?;
    let speech = match &take.speech {
        Some(p) => Some(Speech::from_file(p, &take.speech_options, ch)?),
        None => None,
    };
    let mut span = drive.span(ch);
    if let Some(sp) = &speech {
        span.1 = span.1.max(sp.span().1);
    }
    if opts.start_s > span.1 {
        return Err(Error::invalid(
            format!("start {} s", opts.start_s),
            format!("past the take's end ({:.3} s)", span.1),
        ));
    }
    let frames = match opts.frames {
        Some(f) => f,
        None => {
            let keys = ((span.1 - opts.start_s) * opts.fps).floor() as u64 + 1;
            if keys > u64::from(MAX_KEYS) {
                return Err(Error::invalid(
                    "take",
                    format!(
                        "{keys} keys at {} fps, over the {MAX_KEYS} a bake samples: give frames or a lower fps",
                        opts.fps
                    ),
                ));
            }
            keys as u32
        }
    };
    let mut notes = Vec::new();
    let last_key = opts.start_s + f64::from(frames - 1) / opts.fps;
    if last_key > span.1 + 1e-9 {
        notes.push(format!(
            "{frames} keys reach {last_key:.3} s, past the take's end ({:.3} s): the keys after it hold the take's last pose",
            span.1
        ));
    }
    let mut rt = Runtime::new(
        Arc::clone(asset),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )?;
    let speech_report = speech.as_ref().map(|sp| sp.report().clone());
    rt.instance_mut(0)?.set_drive(drive)?.set_speech(speech)?;
    // The take's label without folders (the bytes must not depend on how a path was typed).
    let stem = |p: &Path| {
        p.file_stem().map_or_else(
            || p.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    };
    let label = match (&speech_report, &take.arkit) {
        (Some(r), _) => r["label"].as_str().unwrap_or("speech").to_string(),
        (None, Some(p)) => stem(p),
        (None, None) if choice.name.is_empty() => choice.kind.clone(),
        (None, None) => choice.name.clone(),
    };
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| format!("mien: {label}"));
    let mut bake_opts = BakeOptions {
        tolerance: opts.tolerance,
        fps: opts.fps,
        start_s: opts.start_s,
        frames,
        name: name.clone(),
        // The speech's timing record and the mapping revisions are the library's to record.
        take: json!({
            "kind": if speech_report.is_some() { "speech" } else { choice.kind.as_str() },
            "name": label,
            "drive": if take.arkit.is_some() { label.clone() } else { choice.name.clone() },
        }),
    };
    if let Some(c) = &opts.caller {
        bake_opts.take["caller"] = c.clone();
    }
    let (bytes, report) = bake(&mut rt, source, &bake_opts)?;
    let (bytes, lod) = match opts.lod {
        Some(n) => {
            let baked = mien_core::io::gltf::import_gltf_bytes(&bytes, None, file)?;
            let (b, r) = mien_core::io::gltf::lod::apply_lod(&bytes, &baked, n, file)?;
            (b, Some(r))
        }
        None => (bytes, None),
    };
    let curves = if opts.curves {
        Some(crate::curves::sample_arkit(
            &mut rt,
            opts.fps,
            opts.start_s,
            frames,
        )?)
    } else {
        None
    };
    Ok(TakeBaked {
        bytes,
        report,
        label,
        name,
        frames,
        span_s: [span.0, span.1],
        drive: choice,
        speech: speech_report,
        lod,
        curves,
        notes,
    })
}
