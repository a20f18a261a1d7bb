//! `mien retarget`: a clip from another skeleton baked into a character's own GLB
//! ([`mien_runtime::retarget::retarget`], then [`mien_runtime::bake::bake`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use mien_runtime::bake::{BakeOptions, bake};
use mien_runtime::retarget::{
    MAX_RETARGET_FPS, Reference, RetargetDef, RetargetOptions, RetargetRequest, load_source,
    retarget,
};
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};

/// `mien retarget`'s extra help: examples and exit codes.
pub const HELP: &str = "Examples:
  mien retarget KnightCharacter.glb --clip 'HumanArmature|Walking' --to avatar.glb --out walk.glb
  mien retarget dance.vrma --to avatar.vrm --reference t-pose --out dance.vrm
  mien retarget walk.glb --to robot.glb --write-map map.json --out x.glb    then edit map.json, pass --map
  mien bake --verify walk.glb                      check the baked file

Exit codes: 0 written; 1 a refused input, flag or map (every problem named; nothing written);
2 the command line could not be parsed.";

/// `mien retarget` arguments.
#[derive(Debug, Args)]
pub struct RetargetArgs {
    /// The source: any glTF/GLB, VRM or VRM Animation (.vrma) file with the clip (a skeleton-only
    /// clip file will do).
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The target character (.glb, .vrm): its own bytes are kept and the retargeted clip appended.
    #[arg(long, value_name = "CHARACTER")]
    pub to: PathBuf,

    /// The source clip, by name or index, played with the other clips of its take. Default: the
    /// first clip.
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,

    /// A bone map (`mien-retarget` JSON, docs/retarget.md). Default: the automatic map by
    /// humanoid role (the VRM/VRMA humanoid maps, else bone names: `mixamorig:LeftUpLeg`,
    /// `UpperLeg.L`, `thigh.l`, … all read as `leftUpperLeg`).
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,

    /// Write the map used (the automatic one, or --map's) as `mien-retarget` JSON, to edit and
    /// pass back with --map.
    #[arg(long, value_name = "FILE")]
    pub write_map: Option<PathBuf>,

    /// The pose each skeleton's transfer is relative to: `rest` (a clip at the source's rest
    /// leaves the target at its rest) or `t-pose` (both turned into T-poses first: an A-pose and a
    /// T-pose character reach the same pose).
    #[arg(long, value_enum, default_value_t = ReferenceArg::Rest)]
    pub reference: ReferenceArg,

    /// The source's reference pose is a frame of one of its own clips instead: `CLIP@SECONDS`
    /// (the clip by name or index).
    #[arg(long, value_name = "CLIP@SECONDS")]
    pub source_frame: Option<String>,

    /// The target's reference pose is a frame of one of its own clips: `CLIP@SECONDS`.
    #[arg(long, value_name = "CLIP@SECONDS")]
    pub target_frame: Option<String>,

    /// Refuse the map when any bone of either skeleton is unmapped.
    #[arg(long)]
    pub strict: bool,

    /// Keys per second of the baked clip (1 to 240).
    #[arg(long, default_value_t = 30.0, value_name = "N")]
    pub fps: f64,

    /// The baked animation's name. Default: `mien: <clip> (retargeted)`.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Write the retarget report (mapped bones, unmapped bones of each side, scale, model
    /// rotation) as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,

    /// The baked GLB to write (replaced atomically; .vrm for a VRM target).
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
}

/// `--reference`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReferenceArg {
    /// Each skeleton's rest pose.
    Rest,
    /// An automatic T-pose of each skeleton.
    TPose,
}

/// `mien animate --retarget`: the clip of `source` retargeted onto `target` (the automatic map,
/// or `map`), appended to the character's clips.
///
/// # Errors
/// Unreadable files, a map that does not fit, the retargeter's refusals (all named).
pub fn onto(
    target: &Asset,
    source: &Path,
    clip: Option<&str>,
    map: Option<&Path>,
    reference: ReferenceArg,
) -> Result<mien_runtime::retarget::Retargeted> {
    let map = match map {
        Some(p) => {
            let bytes = mien_core::io::read::read_file_capped(p, 1 << 24)
                .with_context(|| format!("cannot read {}", p.display()))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", p.display()))?;
            Some(RetargetDef::from_json(&text, &p.display().to_string())?)
        }
        None => None,
    };
    let src = load_source(source)?;
    let reference = match reference {
        ReferenceArg::Rest => Reference::Rest,
        ReferenceArg::TPose => Reference::TPose,
    };
    let req = RetargetRequest {
        clip: clip.map(str::to_string),
        map,
        options: RetargetOptions {
            source_reference: reference,
            target_reference: reference,
            strict: false,
        },
        fps: 60.0,
        name: None,
    };
    retarget(&src, target, &req).with_context(|| format!("--retarget {}", source.display()))
}

/// Retarget, bake and write; the summary to print.
///
/// # Errors
/// Flags out of range, unreadable inputs, a map that does not fit the skeletons (every problem
/// named), a refused write. Nothing is written on an error.
pub fn run(a: &RetargetArgs) -> Result<String> {
    let same = crate::outdir::same_file;
    let inputs: Vec<(&str, &Path)> = [
        ("SOURCE", Some(a.source.as_path())),
        ("--to", Some(a.to.as_path())),
        ("--map", a.map.as_deref()),
    ]
    .into_iter()
    .filter_map(|(n, p)| p.map(|p| (n, p)))
    .collect();
    let outputs: Vec<(&str, &Path)> = [
        ("--out", Some(a.out.as_path())),
        ("--write-map", a.write_map.as_deref()),
        ("--report", a.report.as_deref()),
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
    if !(a.fps.is_finite() && (1.0..=MAX_RETARGET_FPS).contains(&a.fps)) {
        bail!(
            "--fps {}: must be 1 to {MAX_RETARGET_FPS} keys per second",
            a.fps
        );
    }
    let ext = a
        .out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if !matches!(ext.as_deref(), Some("glb" | "vrm")) {
        bail!(
            "--out {}: a retargeted bake is a .glb file (or .vrm for a VRM target)",
            a.out.display()
        );
    }
    let map = match &a.map {
        Some(p) => {
            let bytes = mien_core::io::read::read_file_capped(p, 1 << 24)
                .with_context(|| format!("cannot read {}", p.display()))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", p.display()))?;
            Some(RetargetDef::from_json(&text, &p.display().to_string())?)
        }
        None => None,
    };
    let source = load_source(&a.source)?;
    if [
        mien_runtime::character::BUILTIN_HEAD,
        mien_runtime::character::BUILTIN_BODY,
    ]
    .iter()
    .any(|b| a.to == std::path::Path::new(b))
    {
        bail!(
            "--to {}: a retargeted bake is the target's own GLB with the clip appended, and the built-in characters have no GLB; play the clip on the built-in body with `mien animate --retarget {}` or a character file's clips (docs/characters/builtin_body.character.json)",
            a.to.display(),
            a.source.display()
        );
    }
    let target = Asset::load(&a.to)?;
    if ext.as_deref() == Some("vrm") && target.character().vrm.is_none() {
        bail!(
            "--out {}: {} is not a VRM avatar, so its bake is a .glb file",
            a.out.display(),
            a.to.display()
        );
    }
    let reference = match a.reference {
        ReferenceArg::Rest => Reference::Rest,
        ReferenceArg::TPose => Reference::TPose,
    };
    // A clip frame as one side's reference: `CLIP@SECONDS`, the clip found by name or index.
    let frame =
        |flag: &str, v: &Option<String>, ch: &mien_core::rig::Character| -> Result<Reference> {
            let Some(v) = v else { return Ok(reference) };
            let Some((clip, t)) = v.rsplit_once('@') else {
                bail!("{flag} {v}: CLIP@SECONDS (a clip's name or index, a time in seconds)");
            };
            let t: f64 = t
                .parse()
                .ok()
                .filter(|t: &f64| t.is_finite())
                .ok_or_else(|| anyhow::anyhow!("{flag} {v}: `{t}` is not a time in seconds"))?;
            let id = ch.find_clip(clip).with_context(|| format!("{flag} {v}"))?;
            Ok(Reference::ClipFrame(id, t))
        };
    let req = RetargetRequest {
        clip: a.clip.clone(),
        map,
        options: RetargetOptions {
            source_reference: frame("--source-frame", &a.source_frame, &source)?,
            target_reference: frame("--target-frame", &a.target_frame, target.character())?,
            strict: a.strict,
        },
        fps: a.fps,
        name: None,
    };
    let r = retarget(&source, &target, &req)?;
    let take = r.source_clips[0].clone();
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("mien: {take} (retargeted)"));
    let bytes_in = mien_core::io::read::read_file_capped(&a.to, 1 << 31)
        .with_context(|| format!("cannot read {}", a.to.display()))?;
    let keys = u32::try_from(r.keys).context("key count")?;
    let start = r.asset.character().clips[r.clip.index()].start();
    let mut rt = Runtime::new(
        Arc::new(r.asset.clone()),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )?;
    rt.instance_mut(0)?.play_clips(&[r.clip])?;
    let source_name = a.source.file_name().map_or_else(
        || a.source.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let opts = BakeOptions {
        tolerance: None,
        fps: a.fps,
        start_s: start,
        frames: keys,
        name,
        take: serde_json::json!({
            "kind": "retarget",
            "name": take,
            "source": source_name,
            "reference": r.report.source_reference,
            "mapped": r.report.mapped.len(),
            "scale": r.report.scale,
        }),
    };
    let (bytes, rep) = match bake(&mut rt, &bytes_in, &opts) {
        Err(e) if e.chain_text().contains("moves nothing") => bail!(
            "{}: `{take}` holds the source's reference pose throughout, so its retarget leaves {} at its rest: there is nothing to bake (nothing was written)",
            a.source.display(),
            a.to.display()
        ),
        r => r?,
    };
    let report_json = serde_json::to_string_pretty(&r.report)?;
    // Everything is made before anything is written.
    mien_core::io::atomic::write_atomic_bytes(&a.out, &bytes)
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    if let Some(p) = &a.write_map {
        mien_core::io::atomic::write_atomic_bytes(p, r.map.to_json().as_bytes())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = &a.report {
        mien_core::io::atomic::write_atomic_bytes(p, report_json.as_bytes())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else if v.len() > 8 {
            format!("{}, … ({} in all)", v[..8].join(", "), v.len())
        } else {
            v.join(", ")
        }
    };
    let rep_ = &r.report;
    let mut text = format!(
        "{}: `{take}` of {} retargeted onto {} — {} bones mapped ({} reference), {} keys at {} fps, {} bytes\n",
        a.out.display(),
        a.source.display(),
        a.to.display(),
        rep_.mapped.len(),
        rep_.source_reference,
        rep.keys,
        a.fps,
        bytes.len()
    );
    text.push_str(&format!(
        "  scale {:.4} ({}), model rotation {:.1}° about +Y ({})\n",
        rep_.scale, rep_.scale_from, rep_.model_rotation_deg, rep_.model_rotation_from
    ));
    text.push_str(&format!(
        "  target bones left at rest: {}\n  source bones not used: {}\n",
        list(&rep_.unmapped_target),
        list(&rep_.unmapped_source)
    ));
    for n in &rep_.notes {
        text.push_str(&format!("  note: {n}\n"));
    }
    for (flag, p) in [("map", &a.write_map), ("report", &a.report)] {
        if let Some(p) = p {
            text.push_str(&format!("{}: the {flag}\n", p.display()));
        }
    }
    Ok(text)
}
