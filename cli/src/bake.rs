//! `mien bake`: a take baked into the character's own GLB ([`mien_runtime::bake`]); a linear head
//! (`.aosrig`) or a MetaHuman DNA (`.dna`) is written as a GLB first (the library does it; the
//! file's bytes are read but not used).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use mien_runtime::take::{MAX_KEYS, Take, TakeBaked, TakeOptions, bake_take};

/// `mien bake` arguments.
#[derive(Debug, Args)]
pub struct BakeArgs {
    /// The character: a .glb or .vrm (its own bytes are kept; the take is appended), or one
    /// written as a GLB first: an .aosrig linear head, a .dna MetaHuman DNA (its control node left
    /// out; what RigLogic poses is baked).
    #[arg(long, value_name = "FILE", required_unless_present = "verify")]
    pub character: Option<PathBuf>,

    /// Check a baked file instead of baking: its record intact, every facial part's vertex order,
    /// positions, indices, target names and offsets unchanged.
    #[arg(long, value_name = "BAKED", conflicts_with_all = ["character", "arkit", "clip", "out", "speech"])]
    pub verify: Option<PathBuf>,

    /// An ARKit-52 stream to bake (.csv Live Link Face; .json Audio2Face or MediaPipe; .pbtxt).
    #[arg(long, value_name = "FILE", conflicts_with = "clip")]
    pub arkit: Option<PathBuf>,

    /// Lip-sync (`--speech FILE` and its flags, as `mien animate` takes them). Without --clip or
    /// --arkit the rest of the face holds the rest pose under the speech (pass --clip 0 to keep
    /// the character's own clip).
    #[command(flatten)]
    pub speech: crate::args::SpeechArgs,

    /// One of the character's own clips (name or index), `all`, or `rest`. Default: its first
    /// clip's take, or the rest pose.
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,

    /// The baked animation's name (default `mien: <take>`, the take's file name without its
    /// folder and extension, or the clip's name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Keys per second (1 to 1000).
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,

    /// Media time of the first key, seconds; the keys keep it (an engine holds the first pose
    /// until then).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub start: f64,

    /// Reduce keys: drop those LINEAR interpolation reproduces within WEIGHT (morph weights;
    /// metres for translations, also scales) and DEGREES (rotations), e.g. `0.005,0.25`. Default:
    /// a key at every frame.
    #[arg(
        long,
        value_name = "WEIGHT,DEGREES",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub tolerance: Option<Vec<f64>>,

    /// A game-face LOD of N triangles in all: the facial parts (meshes with morph targets) kept
    /// whole, 32 reserved for every other part, the rest shared out and reduced with
    /// meshoptimizer's simplifier (borders locked). Refused below 128 with a face, or when it
    /// cannot be met, before anything is written.
    #[arg(long, value_name = "TRIANGLES")]
    pub lod: Option<u64>,

    /// Keys (default: the take's span at --fps).
    #[arg(long)]
    pub frames: Option<u32>,

    /// Also write the take's ARKit-52 curves as a Live Link Face CSV (the app's export layout;
    /// --fps must be a timecode rate: 24, 25, 30, 48, 50, 60, 100 or 120).
    #[arg(long, value_name = "FILE.csv", conflicts_with = "verify")]
    pub csv: Option<PathBuf>,

    /// Also write the take's ARKit-52 curves as Audio2Face blendshape-weight JSON.
    #[arg(long, value_name = "FILE.json", conflicts_with = "verify")]
    pub json: Option<PathBuf>,

    /// The baked GLB to write (replaced atomically).
    #[arg(short, long, value_name = "FILE", required_unless_present = "verify")]
    pub out: Option<PathBuf>,
}

/// Bake and write; the summary to print.
///
/// # Errors
/// Flags out of range, unreadable inputs, a character that is not a GLB, a refused write.
pub fn run(a: &BakeArgs) -> Result<String> {
    if let Some(path) = &a.verify {
        let bytes = mien_core::io::read::read_file_capped(path, 1 << 31)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file = path.display().to_string();
        let r = mien_runtime::bake::verify(&bytes, &file)?;
        let mut text = format!(
            "{}: ok — {} ({} facial parts unchanged, records intact, the glTF-Validator's animation rules met, mapping revisions this mien's)\n",
            path.display(),
            r.takes.join(", "),
            r.parts
        );
        // Each speech take's timing record, as `bake::alignment` recovers it.
        for take in &r.takes {
            if let Some(t) = mien_runtime::bake::alignment(&bytes, &file, take)? {
                text.push_str(&format!(
                    "  {take}: utterance `{}` ({}) at {} s on the media clock, {:.3} s, {} intervals, {} visemes{}; {}, {}\n",
                    t.label,
                    t.file.as_deref().unwrap_or("no file"),
                    t.origin_s,
                    t.duration_s,
                    t.intervals.len(),
                    t.sampler,
                    if t.min_hold_s > 0.0 {
                        format!(" held at least {} s", t.min_hold_s)
                    } else {
                        String::new()
                    },
                    t.mapping_revision,
                    t.timing_revision
                ));
            }
        }
        return Ok(text);
    }
    let (Some(character), Some(out)) = (&a.character, &a.out) else {
        bail!("--character and --out are required to bake");
    };
    // No output may replace an input or another output.
    let same = crate::outdir::same_file;
    let inputs: Vec<(&str, &std::path::Path)> = [
        ("--character", Some(character.as_path())),
        ("--arkit", a.arkit.as_deref()),
        ("--speech", a.speech.speech.as_deref()),
    ]
    .into_iter()
    .filter_map(|(n, p)| p.map(|p| (n, p)))
    .collect();
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("--out", Some(out.as_path())),
        ("--csv", a.csv.as_deref()),
        ("--json", a.json.as_deref()),
    ]
    .into_iter()
    .filter_map(|(n, p)| p.map(|p| (n, p)))
    .collect();
    crate::outdir::check_output_folders(&outputs)?;
    for (i, (on, op)) in outputs.iter().enumerate() {
        for (n, p) in inputs.iter().chain(&outputs[..i]) {
            if same(op, p) {
                bail!(
                    "{on} {} is also {n}: an output must not replace an input or another output",
                    op.display()
                );
            }
        }
    }
    crate::speech::check_flags(&a.speech)?;
    if a.frames.is_some_and(|f| f > MAX_KEYS) {
        bail!(
            "--frames {}: at most {MAX_KEYS} keys per take",
            a.frames.unwrap_or(0)
        );
    }
    if !(a.fps.is_finite() && (1.0..=1000.0).contains(&a.fps)) {
        bail!("--fps {}: must be 1 to 1000 keys per second", a.fps);
    }
    if !(a.start.is_finite() && a.start >= 0.0) {
        bail!("--start {}: must be a media time of 0 s or later", a.start);
    }
    if a.frames == Some(0) {
        bail!("--frames 0: a bake needs at least one key");
    }
    // A baked take is a GLB; a VRM's bake keeps its VRM extensions, so `.vrm` is one too.
    if !out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("vrm"))
    {
        bail!(
            "--out {}: a baked take is a .glb file (or .vrm, baking a VRM avatar)",
            out.display()
        );
    }
    let asset = Arc::new(crate::load::character(Some(character))?);
    // The built-ins have no file: the bake writes them as GLBs itself.
    let source = if asset.is_builtin() {
        Vec::new()
    } else {
        mien_core::io::read::read_file_capped(character, 1 << 31)
            .with_context(|| format!("cannot read {}", character.display()))?
    };
    let ch = asset.character();
    if ch.vrm.is_none()
        && out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("vrm"))
    {
        bail!(
            "--out {}: {} is not a VRM avatar, so its bake is a .glb file",
            out.display(),
            character.display()
        );
    }
    let tolerance = match a.tolerance.as_deref() {
        Some([w, d]) => {
            if !(w.is_finite()
                && *w >= 0.0
                && *w <= 1.0
                && d.is_finite()
                && *d >= 0.0
                && *d <= 45.0)
            {
                bail!(
                    "--tolerance {w},{d}: a weight from 0 to 1 and an angle from 0 to 45 degrees"
                );
            }
            Some(mien_runtime::bake::Tolerance {
                value: *w as f32,
                angle_rad: d.to_radians() as f32,
            })
        }
        Some(other) => bail!(
            "--tolerance: two values, WEIGHT,DEGREES (e.g. 0.005,0.25), not {}",
            other.len()
        ),
        None => None,
    };
    let take = Take {
        arkit: a.arkit.clone(),
        speech: a.speech.speech.clone(),
        speech_options: crate::speech::options(&a.speech, None),
        clip: a.clip.clone(),
    };
    let opts = TakeOptions {
        name: a.name.clone(),
        fps: a.fps,
        start_s: a.start,
        frames: a.frames,
        tolerance,
        lod: a.lod,
        curves: a.csv.is_some() || a.json.is_some(),
        caller: None,
    };
    let baked = bake_take(&asset, &source, &out.display().to_string(), &take, &opts)?;
    let TakeBaked {
        bytes,
        report: rep,
        label: name,
        frames,
        lod,
        curves,
        notes: take_notes,
        ..
    } = baked;
    // What the user should know about the take (printed after the summary).
    let mut notes = take_notes;
    const SHOWN: usize = 8;
    for n in ch.notes.iter().take(SHOWN) {
        notes.push(format!(
            "{}: {}: {}",
            character.display(),
            n.field,
            n.message
        ));
    }
    if ch.notes.len() > SHOWN {
        notes.push(format!(
            "… and {} more import notes (`mien inspect {}` lists them all)",
            ch.notes.len() - SHOWN,
            character.display()
        ));
    }
    // The curves are made (and refused) before anything is written.
    let mut curves_text = Vec::new();
    if let Some(sampled) = &curves {
        if let Some(p) = &a.csv {
            let text = mien_core::io::curves::livelink_csv(&sampled.curves)
                .with_context(|| format!("--csv {}", p.display()))?;
            curves_text.push((p.clone(), text));
        }
        if let Some(p) = &a.json {
            let text = mien_core::io::curves::audio2face_json(&sampled.curves)
                .with_context(|| format!("--json {}", p.display()))?;
            curves_text.push((p.clone(), text));
        }
    }
    mien_core::io::atomic::write_atomic_bytes(out, &bytes)
        .with_context(|| format!("cannot write {}", out.display()))?;
    for (p, text) in &curves_text {
        mien_core::io::atomic::write_atomic_bytes(p, text.as_bytes())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(format!(
        "{}: {} baked into {} — {} keys at {} fps ({:.3}–{:.3} s), {} weight channel(s), {} joint channel(s), {} keys written, {} bytes\n",
        out.display(),
        name,
        character.display(),
        rep.keys,
        a.fps,
        a.start,
        a.start + f64::from(frames - 1) / a.fps,
        rep.weight_channels,
        rep.transform_channels,
        rep.keys_written,
        bytes.len()
    ) + &lod
        .map(|r| {
            format!(
                "  LOD: {} triangles of a budget of {} ({} facial, kept whole; {} parts reduced)\n",
                r.total,
                r.budget,
                r.facial,
                r.parts.iter().filter(|p| p.after < p.before).count()
            )
        })
        .unwrap_or_default()
        + &curves_text
            .iter()
            .map(|(p, _)| {
                format!(
                    "{}: the take's ARKit-52 curves, {frames} frames\n",
                    p.display()
                )
            })
            .collect::<String>()
        + &notes
            .iter()
            .map(|n| format!("  note: {n}\n"))
            .collect::<String>())
}
