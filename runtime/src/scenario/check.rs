//! Resolving a checked scenario against its character, before any step runs: the character, the
//! face, every clip, stream, speech file and phoneme list, expression, override target, morph
//! target, node and hash name, and the totals. The result is a [`Plan`] the runner executes as
//! often as it likes; every problem found is listed with its JSON pointer.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use glam::Mat4;
use mien_core::anim::Drive;
use mien_core::face::{AnimationConfig, Animator, FaceDef, Signal};
use mien_core::io::speech::SpeechFile;
use mien_core::rig::Character;
use mien_core::speech::VisemeMap;

use super::Problem;
use super::bind::Check;
use super::capture::Capturer;
use super::model::{Assertion, FaceAction, GOLDENS_DIR, Step, UPDATE_GOLDENS_ENV};
use super::sources::{drive, files_only, utterance};

/// Most frames one run of a scenario advances over all its `step`s.
pub const MAX_TOTAL_FRAMES: u64 = 1_000_000;

/// A scenario resolved against its character, ready to run.
pub struct Plan {
    /// The scenario file.
    pub file: PathBuf,
    /// The character.
    pub character: Character,
    /// What the report calls it.
    pub character_label: String,
    /// The animator each run starts from (cloned), `None` when the face drives nothing on the
    /// character (then no step may need it).
    pub animator: Option<Animator>,
    /// The face file's viseme map and its name, for speech.
    pub visemes: Option<(VisemeMap, String)>,
    /// The steps, resolved.
    pub steps: Vec<Planned>,
    /// Frames posed per run (the first frame at t = 0 and every advanced one).
    pub frames: u64,
    /// Media time at the end, seconds.
    pub end_s: f64,
    /// World matrices of the rest pose (for the `forward` bone measure).
    pub rest_world: Vec<Mat4>,
    /// The renderer of capture steps (only when they are written).
    pub capturer: Option<Capturer>,
    /// What the report notes.
    pub notes: Vec<String>,
    /// The body step each run starts from.
    pub(crate) body: super::body::BodyPlan,
    /// The character's cloth and hair (from its character file) and the rig they ride.
    pub(crate) dynamics: crate::dynamics::Dynamics,
    pub(crate) rig: Option<std::sync::Arc<mien_core::rig::RigData>>,
}

/// One resolved step and its pointer (`/steps/3/assert`).
pub struct Planned {
    /// JSON pointer of the step's body.
    pub pointer: String,
    /// What it does.
    pub action: Action,
}

/// A resolved step.
pub enum Action {
    /// Advance `frames` frames of `dt` seconds.
    Advance {
        /// Count.
        frames: u32,
        /// Seconds.
        dt: f64,
    },
    /// Drive from now on (`Drive` time 0 = now).
    Drive(Drive),
    /// Walking speed from now on, m/s.
    Walk(f64),
    /// The placement (character to world) from now on.
    Transform(glam::DMat4),
    /// The ground from now on.
    Ground(mien_core::anim::ground::Ground),
    /// Wind on the spring bones from now on, m/s².
    Wind(glam::DVec3),
    /// Face actions.
    Face(Vec<FaceAction>),
    /// Speech starting at `origin`.
    Say {
        /// The utterance.
        file: SpeechFile,
        /// Envelopes instead of held intervals.
        envelope: bool,
        /// Media time of its start, seconds.
        origin: f64,
    },
    /// Avatar-state signal.
    Signal(Signal),
    /// Record a hash.
    Hash(String),
    /// Check the current frame.
    Assert(Check),
    /// Render to `<name>.png`.
    Capture {
        /// File stem.
        name: String,
        /// Cell side, pixels.
        cell: u32,
    },
    /// Render like a capture and compare with the golden image (or rewrite it).
    Golden(Golden),
}

/// A resolved `golden` step.
pub struct Golden {
    /// File stem.
    pub name: String,
    /// Cell side, pixels.
    pub cell: u32,
    /// Largest allowed difference of any 8-bit channel of any pixel.
    pub tolerance: u8,
    /// `goldens/<name>.png` next to the scenario.
    pub path: PathBuf,
    /// The golden image, or `None` when [`UPDATE_GOLDENS_ENV`] asks to rewrite it.
    pub expected: Option<image::RgbImage>,
}

/// Whether [`UPDATE_GOLDENS_ENV`] asks golden steps to rewrite their images: `1`, `true` or
/// `yes` (any case); unset, empty, `0`, `false` or `no` compare. Another value is refused (a typo
/// must not silently compare or rewrite).
///
/// # Errors
/// A value of none of those forms, quoted.
pub fn updating_goldens() -> std::result::Result<bool, String> {
    let Ok(v) = std::env::var(UPDATE_GOLDENS_ENV) else {
        return Ok(false);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "" | "0" | "false" | "no" => Ok(false),
        _ => Err(format!(
            "{UPDATE_GOLDENS_ENV}={v:?}: give 1 to rewrite the goldens, or unset it to compare"
        )),
    }
}

/// Read the golden image at `path` (its size is compared with the render when the step runs).
fn read_golden(path: &Path) -> std::result::Result<image::RgbImage, String> {
    let shown = path.display();
    let rewrite = format!("run with {UPDATE_GOLDENS_ENV}=1 to write it from this build");
    if !path.is_file() {
        return Err(format!("{shown} does not exist; {rewrite}"));
    }
    let bytes = mien_core::io::read::read_file_capped(path, 64 << 20).map_err(|e| e.to_string())?;
    let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| format!("{shown}: not a readable PNG ({e}); {rewrite}"))?
        .to_rgb8();
    Ok(img)
}

/// The path `rel` names, relative to the scenario's folder.
pub(super) fn resolve(base: &Path, rel: &str) -> PathBuf {
    base.join(rel)
}

/// Read, check and resolve the scenario at `file`. `render` asks for the capture renderer (the
/// run writes its captures); its rest-pose work check is part of the validation.
///
/// # Errors
/// Every problem, each with its pointer.
pub fn prepare(file: &Path, render: bool) -> Result<Plan, Vec<Problem>> {
    let sc = super::read::scenario(file)?;
    let base = file.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    let mut p = Vec::new();
    // Problems independent of each other are all listed: the character, the face and every file a
    // step reads are each checked even when another is bad.
    let loaded = match &sc.character {
        None => Ok((
            mien_core::sample::sample_head(),
            "built-in head".to_string(),
            None,
        )),
        Some(rel) if rel.ends_with(".character.json") || rel == crate::character::BUILTIN_BODY => {
            let loaded = if rel == crate::character::BUILTIN_BODY {
                crate::character::CharacterDef::builtin_body()
            } else {
                crate::character::CharacterDef::load(resolve(&base, rel))
            };
            loaded.map(|l| (l.asset.character().clone(), rel.clone(), Some(l)))
        }
        Some(rel) => crate::Asset::load(resolve(&base, rel))
            .map(|a| (a.character().clone(), rel.clone(), None)),
    };
    let loaded = match loaded {
        Ok(l) => Some(l),
        Err(e) => {
            p.push(Problem::new(
                "/character",
                format!(
                    "{}; clips, stream bindings, face targets, nodes and morph targets are checked once it loads",
                    e.chain_text()
                ),
            ));
            None
        }
    };
    let face = match &sc.face {
        None => Some((FaceDef::arkit_default(), None)),
        Some(rel) => {
            let path = resolve(&base, rel);
            let file = path.display().to_string();
            let read = mien_core::io::read::read_file_capped(&path, 1 << 20)
                .map_err(|e| e.to_string())
                .and_then(|b| String::from_utf8(b).map_err(|_| format!("{file}: not UTF-8")))
                .and_then(|t| {
                    FaceDef::from_json(&t, &file)
                        .map(|d| (d, Some((t, file.clone()))))
                        .map_err(|e| e.to_string())
                });
            match read {
                Ok(d) => Some(d),
                Err(e) => {
                    p.push(Problem::new("/face", e));
                    None
                }
            }
        }
    };
    let Some((character, label, char_file)) = loaded else {
        files_only(&sc.steps, &base, &mut p);
        return Err(p);
    };
    let (dynamics, dyn_rig) = match &char_file {
        Some(l) => (l.asset.dynamics().clone(), l.asset.rig().cloned()),
        None => (Default::default(), None),
    };
    let face_ok = face.is_some();
    let def = match face {
        Some(_) if sc.face.is_none() => match char_file.as_ref().and_then(|l| l.face.as_ref()) {
            Some((d, _)) => d.clone(),
            None => FaceDef::for_character(&character),
        },
        Some((def, text)) => {
            if let Some((text, file)) = text
                && let Err(e) = crate::face_rules::face_expressions(&text, &def, &character, &file)
            {
                p.push(Problem::new("/face", e.to_string()));
            }
            def
        }
        None => FaceDef::arkit_default(),
    };
    let visemes = match (&def.visemes, &sc.face) {
        (Some(m), Some(f)) => Some((m.clone(), f.clone())),
        _ => None,
    };
    let animator = Animator::new(&character, def.clone(), AnimationConfig::default(), 0.0);
    let mut notes = Vec::new();
    let animator = match animator {
        // A face that did not read: its names cannot be checked, and it is already a problem.
        _ if !face_ok => None,
        Ok(a) => Some(a),
        Err(e) => {
            notes.push(format!("no animator: {e}"));
            // Any step that needs one is refused below.
            if let Some((i, s)) = sc.steps.iter().enumerate().find(|(_, s)| needs_animator(s)) {
                p.push(Problem::new(
                    format!("/steps/{i}/{}", s.key()),
                    format!("needs the face animator, which this character cannot have: {e}"),
                ));
            }
            None
        }
    };
    let body = super::body::resolve(&character, &sc.body, char_file.as_ref(), &base, &mut p);
    if let Some(l) = char_file.as_ref().and_then(|l| l.locomotion) {
        notes.push(format!(
            "locomotion: the walk plays at 1× at {} m/s{}",
            crate::text::sig5(l.walk_speed),
            match l.stride_speed {
                Some(s) => format!(" (its stance feet measure {} m/s)", crate::text::sig5(s)),
                None => " (its stance feet could not be measured)".into(),
            }
        ));
    }
    let rest = character.rest_pose();
    let (mut locals, mut rest_world) = (Vec::new(), Vec::new());
    character.world_matrices(&rest, &mut locals, &mut rest_world);

    let mut steps = Vec::with_capacity(sc.steps.len());
    let (mut t, mut frames) = (0.0f64, 1u64);
    let mut hashes: HashSet<&str> = HashSet::new();
    let mut captures: HashSet<&str> = HashSet::new();
    let mut goldens: HashSet<&str> = HashSet::new();
    let mut cells = Vec::new();
    let mut golden_cells = Vec::new();
    let updating = updating_goldens().unwrap_or_else(|e| {
        if sc.steps.iter().any(|s| matches!(s, Step::Golden { .. })) {
            p.push(Problem::new("", e));
        }
        false
    });
    // How far walking can carry the character (within the ±10⁶ m every position keeps to).
    let (mut speed, mut reach) = (0.0f64, 0.0f64);
    for (i, s) in sc.steps.iter().enumerate() {
        let at = format!("/steps/{i}/{}", s.key());
        let action = match s {
            Step::Advance { frames: n, dt } => {
                let before = reach;
                reach += speed * f64::from(*n) * dt;
                if before <= super::model::MAX_COORD_M && reach > super::model::MAX_COORD_M {
                    p.push(Problem::new(
                        format!("{at}/frames"),
                        format!(
                            "walking at {speed} m/s carries the character past 1 000 000 m from the origin"
                        ),
                    ));
                }
                frames += u64::from(*n);
                if frames - 1 > MAX_TOTAL_FRAMES {
                    p.push(Problem::new(
                        format!("{at}/frames"),
                        format!("takes the scenario past {MAX_TOTAL_FRAMES} frames in all"),
                    ));
                }
                t += f64::from(*n) * dt;
                Some(Action::Advance {
                    frames: *n,
                    dt: *dt,
                })
            }
            Step::Animate(src) => drive(&character, &base, src, &at, &mut p).map(Action::Drive),
            Step::Walk { speed: v } => {
                speed = *v;
                Some(Action::Walk(*v))
            }
            Step::Transform { position, yaw_deg } => Some(Action::Transform({
                reach = glam::DVec3::from_array(*position).length();
                glam::DMat4::from_translation(glam::DVec3::from_array(*position))
                    * glam::DMat4::from_rotation_y(yaw_deg.to_radians())
            })),
            Step::Ground(g) => {
                if body.body.foot.is_none() {
                    p.push(Problem::new(
                        at.clone(),
                        "the ground is what foot placement stands on, and this scenario has none (body.foot_ik)",
                    ));
                }
                Some(Action::Ground(g.clone()))
            }
            Step::Wind(w) => {
                if body.body.springs.is_none() && dynamics.is_empty() {
                    p.push(Problem::new(
                        at.clone(),
                        "wind moves spring bones, cloth and hair, and this scenario simulates none (body.springs, the character file's cloth and hair)",
                    ));
                }
                Some(Action::Wind(glam::DVec3::from_array(*w)))
            }
            Step::Face(actions) => {
                if let Some(a) = &animator {
                    super::bind::face_names(&character, a, actions, &at, &mut p);
                }
                Some(Action::Face(actions.clone()))
            }
            Step::Say { speech, envelope } => {
                let file = utterance(&base, speech, i, &at, &mut p);
                file.filter(|_| face_ok).and_then(|f| {
                    // Bind it now, exactly as the runs will.
                    match super::exec::speech_layer(&character, &f, *envelope, t, visemes.as_ref())
                    {
                        Ok(_) => Some(Action::Say {
                            file: f,
                            envelope: *envelope,
                            origin: t,
                        }),
                        Err(e) => {
                            p.push(Problem::new(at.clone(), format!("{e:#}")));
                            None
                        }
                    }
                })
            }
            Step::State(s) => Some(Action::Signal(*s)),
            Step::Hash(name) => {
                if !hashes.insert(name) {
                    p.push(Problem::new(
                        format!("{at}/name"),
                        format!("hash `{name}` is already recorded by an earlier step"),
                    ));
                }
                Some(Action::Hash(name.clone()))
            }
            Step::Capture { name, cell } => {
                if !captures.insert(name) {
                    p.push(Problem::new(
                        format!("{at}/name"),
                        format!("capture `{name}` is already written by an earlier step"),
                    ));
                }
                cells.push((at.clone(), *cell));
                Some(Action::Capture {
                    name: name.clone(),
                    cell: *cell,
                })
            }
            Step::Golden {
                name,
                cell,
                tolerance,
            } => {
                if !goldens.insert(name) {
                    p.push(Problem::new(
                        format!("{at}/name"),
                        format!("golden `{name}` is already compared by an earlier step"),
                    ));
                }
                golden_cells.push((at.clone(), *cell));
                let path = base.join(GOLDENS_DIR).join(format!("{name}.png"));
                let expected = if updating {
                    None
                } else {
                    match read_golden(&path) {
                        Ok(img) => Some(img),
                        Err(e) => {
                            p.push(Problem::new(at.clone(), e));
                            None
                        }
                    }
                };
                Some(Action::Golden(Golden {
                    name: name.clone(),
                    cell: *cell,
                    tolerance: *tolerance,
                    path,
                    expected,
                }))
            }
            Step::Assert(a) => {
                super::bind::assertion(&character, a, &hashes, &body, &dynamics, &at, &mut p)
                    .map(Action::Assert)
            }
        };
        if let Some(action) = action {
            steps.push(Planned {
                pointer: at,
                action,
            });
        }
    }
    if !render && !cells.is_empty() {
        notes.push("no --out: capture steps were not rendered".into());
    }
    // Goldens are rendered with or without --out; captures only when written.
    if render {
        cells.extend(golden_cells);
    } else {
        cells = golden_cells;
    }
    let capturer = match cells.first() {
        Some((first, _)) if p.is_empty() => {
            let list: Vec<u32> = cells.iter().map(|c| c.1).collect();
            match Capturer::new(&character, &dynamics, &list) {
                Ok(c) => Some(c),
                Err(e) => {
                    p.push(Problem::new(
                        first.clone(),
                        format!("cannot capture: {e:#}"),
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    if !p.is_empty() {
        return Err(p);
    }
    Ok(Plan {
        file: file.to_path_buf(),
        character,
        character_label: label,
        animator,
        visemes,
        steps,
        frames,
        end_s: t,
        rest_world,
        capturer,
        notes,
        body,
        dynamics,
        rig: dyn_rig,
    })
}

fn needs_animator(s: &Step) -> bool {
    matches!(
        s,
        Step::Face(_) | Step::State(_) | Step::Assert(Assertion::State(_))
    )
}
