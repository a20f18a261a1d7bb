//! The animator of a run: a face definition, the avatar state machine, and a script of events on
//! the media clock (`--face`, `--look-at`, `--state-script`; the built-in head's own script).

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use glam::Vec3;
use mien_core::face::{AnimationConfig, Animator, FaceDef, Signal};
use mien_core::rig::Character;
use serde::Deserialize;

use crate::args::{AnimateArgs, AnimatorChoice};
use crate::face_rules;
use crate::text::num;

/// One scripted event.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Event {
    /// An avatar-state signal.
    Signal(Signal),
    /// Fade an expression to a weight.
    Expression(String, f32),
    /// Look at a point, or release the gaze.
    LookAt(Option<[f32; 3]>),
    /// Blink now.
    Blink,
}

/// A state script: events at media times, and where the speaker stands.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Script {
    /// `(media time, event)`, times non-decreasing.
    pub events: Vec<(f64, Event)>,
    /// The speaker (listening gaze), world metres.
    pub speaker: Option<[f32; 3]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    format: String,
    version: u32,
    #[serde(default)]
    speaker: Option<[f32; 3]>,
    events: Vec<EventFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventFile {
    t: f64,
    #[serde(default)]
    signal: Option<Signal>,
    #[serde(default)]
    expression: Option<String>,
    #[serde(default)]
    weight: Option<f32>,
    #[serde(default, deserialize_with = "nullable")]
    look_at: Option<Option<[f32; 3]>>,
    #[serde(default)]
    blink: Option<bool>,
}

/// Distinguish a missing `look_at` (None) from `"look_at": null` (Some(None)).
fn nullable<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Option<[f32; 3]>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

impl Script {
    /// Read a `mien-state-script` file: `{"format": "mien-state-script", "version": 1,
    /// "speaker": [x, y, z]?, "events": [{"t": seconds, one of "signal" | "expression" + "weight" |
    /// "look_at": [x, y, z] or null | "blink": true}]}`. Strict: unknown keys, an event with none or
    /// several actions (`"blink": false` is no action), times outside 0 to
    /// [`face_rules::MAX_EVENT_TIME_S`] s or going back, and points beyond ±1e6 m are refused naming
    /// the event.
    ///
    /// # Errors
    /// Unreadable or invalid files, naming the event index.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = mien_core::io::read::read_file_capped(path, 16 << 20)?;
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let f: ScriptFile = serde_path_to_error::deserialize(de)
            .map_err(|e| anyhow::anyhow!("{}: {}: {}", path.display(), e.path(), e.inner()))?;
        ensure!(
            f.format == "mien-state-script" && f.version == 1,
            "{}: format must be \"mien-state-script\" version 1",
            path.display()
        );
        let mut events = Vec::new();
        let mut last = f64::NEG_INFINITY;
        for (i, e) in f.events.into_iter().enumerate() {
            let at = |what: &str| format!("{}: events[{i}]: {what}", path.display());
            if let Err(why) = face_rules::event_time(e.t) {
                bail!("{}", at(&why));
            }
            ensure!(
                e.t >= last,
                "{}",
                at(&format!(
                    "time {} s goes back (the previous event is at {} s)",
                    num(e.t),
                    num(last)
                ))
            );
            last = e.t;
            let mut actions = Vec::new();
            if let Some(s) = e.signal {
                actions.push(Event::Signal(s));
            }
            if let Some(x) = e.expression {
                let w = e.weight.unwrap_or(1.0);
                ensure!(
                    (0.0..=1.0).contains(&w),
                    "{}",
                    at(&format!("weight {w} is outside [0, 1]"))
                );
                actions.push(Event::Expression(x, w));
            } else {
                ensure!(
                    e.weight.is_none(),
                    "{}",
                    at("`weight` without `expression`")
                );
            }
            if let Some(l) = e.look_at {
                if let Some(Err(why)) = l.map(face_rules::point) {
                    bail!("{}", at(&format!("look_at: {why}")));
                }
                actions.push(Event::LookAt(l));
            }
            if e.blink == Some(true) {
                actions.push(Event::Blink);
            }
            ensure!(
                actions.len() == 1,
                "{}",
                at(if actions.is_empty() && e.blink == Some(false) {
                    "`\"blink\": false` is no action; an event needs exactly one of signal, expression, look_at, blink: true"
                } else {
                    "needs exactly one of signal, expression, look_at, blink"
                })
            );
            events.push((e.t, actions.remove(0)));
        }
        if let Some(Err(why)) = f.speaker.map(face_rules::point) {
            bail!("{}: speaker: {why}", path.display());
        }
        Ok(Script {
            events,
            speaker: f.speaker,
        })
    }

    /// The built-in head's script: talking over its two phrases, a glance to its left then right
    /// while it speaks, a smile in the pause (its stream's own smile), the gaze released after.
    pub fn builtin() -> Self {
        let e = |t: f64, ev: Event| (t, ev);
        Script {
            events: vec![
                e(0.0, Event::Signal(Signal::TalkingStarted)),
                e(1.3, Event::LookAt(Some([0.8, 0.05, 1.2]))),
                e(2.35, Event::LookAt(Some([-0.8, 0.05, 1.2]))),
                e(2.9, Event::Signal(Signal::TalkingStopped)),
                e(3.05, Event::LookAt(None)),
                e(4.2, Event::Signal(Signal::TalkingStarted)),
            ],
            speaker: None,
        }
    }
}

/// The run's animator and its script, or `None` when it does not run.
pub struct RunAnimator {
    /// The animator.
    pub animator: Animator,
    script: Script,
    next: usize,
    /// `(media time, state name)` at every change.
    pub states: Vec<(f64, String)>,
    /// What the report says about it.
    pub report: serde_json::Value,
}

impl RunAnimator {
    /// Whether the animator runs for `args` (`builtin`: the built-in head).
    ///
    /// # Errors
    /// `--animator off` together with an animator flag.
    pub fn will_run(args: &AnimateArgs, builtin: bool) -> Result<bool> {
        let asked = args.face.is_some() || args.look_at.is_some() || args.state_script.is_some();
        Ok(match args.animator {
            AnimatorChoice::Off => {
                if asked {
                    bail!("--animator off contradicts --face / --look-at / --state-script");
                }
                false
            }
            AnimatorChoice::On => true,
            AnimatorChoice::Auto => asked || builtin,
        })
    }

    /// Build the animator `args` ask for (`builtin`: the built-in head is running).
    ///
    /// # Errors
    /// Unreadable face or script files; a face that drives nothing on the character.
    pub fn new(args: &AnimateArgs, ch: &Character, builtin: bool, t0: f64) -> Result<Option<Self>> {
        if !Self::will_run(args, builtin)? {
            return Ok(None);
        }
        let def = match &args.face {
            Some(p) => {
                let bytes = mien_core::io::read::read_file_capped(p, 1 << 20)?;
                let text = String::from_utf8(bytes)
                    .with_context(|| format!("{}: not UTF-8", p.display()))?;
                let file = p.display().to_string();
                let def = FaceDef::from_json(&text, &file)?;
                face_rules::face_expressions(&text, &def, ch, &file)?;
                def
            }
            None => FaceDef::arkit_default(),
        };
        let mut script = match &args.state_script {
            Some(p) => Script::read(p)?,
            None if builtin && args.look_at.is_none() => Script::builtin(),
            None => Script::default(),
        };
        let mut animator = Animator::new(ch, def, AnimationConfig::default(), t0)
            .context("cannot put the face controller on the character")?;
        let face_name = args
            .face
            .as_ref()
            .map_or("the built-in ARKit face".to_string(), |p| {
                p.display().to_string()
            });
        for (i, (_, ev)) in script.events.iter().enumerate() {
            if let Event::Expression(name, _) = ev
                && !animator.face().expression_names().any(|n| n == name)
            {
                let known: Vec<&str> = animator.face().expression_names().collect();
                let file = args
                    .state_script
                    .as_ref()
                    .map_or("the built-in script".to_string(), |p| {
                        p.display().to_string()
                    });
                bail!(
                    "{file}: events[{i}]: expression `{name}` is not one of {face_name}'s: {}",
                    known.join(", ")
                );
            }
        }
        if let Some(p) = args.look_at {
            script.events.insert(0, (t0, Event::LookAt(Some(p))));
        }
        animator.set_speaker(script.speaker.map(Vec3::from));
        let report = serde_json::json!({
            "face": args.face.as_ref().map_or("built-in ARKit face".to_string(), |p| p.display().to_string()),
            "script": args.state_script.as_ref().map_or(if builtin { "built-in".to_string() } else { "none".to_string() }, |p| p.display().to_string()),
            "events": script.events.len(),
            "expressions": animator.face().expression_names().collect::<Vec<_>>(),
        });
        let states = vec![(t0, animator_state(&animator))];
        Ok(Some(RunAnimator {
            animator,
            script,
            next: 0,
            states,
            report,
        }))
    }

    /// Apply the script's events up to media time `t`, then the face, onto `pose`.
    ///
    /// # Errors
    /// An event the face refuses (an unknown expression).
    pub fn update(
        &mut self,
        ch: &Character,
        t: f64,
        world: &[glam::Mat4],
        pose: &mut mien_core::rig::Pose,
    ) -> Result<()> {
        while let Some((te, ev)) = self.script.events.get(self.next) {
            if *te > t {
                break;
            }
            let a = &mut self.animator;
            match ev {
                Event::Signal(s) => {
                    a.signal(*s, t.max(*te))?;
                }
                Event::Expression(n, w) => a.face_mut().set_expression(n, *w)?,
                Event::LookAt(p) => a.face_mut().look_at(p.map(Vec3::from))?,
                Event::Blink => a.face_mut().blink_now(*te),
            }
            self.next += 1;
        }
        self.animator.update(ch, t, world, pose)?;
        let s = animator_state(&self.animator);
        if self.states.last().is_none_or(|(_, l)| *l != s) {
            self.states.push((t, s));
        }
        Ok(())
    }
}

fn animator_state(a: &Animator) -> String {
    a.state().name().to_string()
}
