//! The face driver of an instance: a face definition (expressions, visemes, blink, look-at), the
//! avatar state machine (seed 004's reducer), and a script of events on the media clock — what
//! `mien animate --face / --look-at / --state-script` attach, and what the built-in head plays.

use std::path::Path;

use glam::Vec3;
use mien_core::face::{AnimationConfig, Animator, FaceDef, Signal};
use mien_core::rig::Character;
use serde::Deserialize;

use crate::error::{Context as _, Error, Result};
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
    /// Unreadable or invalid files ([`Error::Invalid`] naming the file and the event index).
    pub fn read(path: &Path) -> Result<Self> {
        let file = path.display().to_string();
        let bytes = mien_core::io::read::read_file_capped(path, 16 << 20)?;
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let f: ScriptFile = serde_path_to_error::deserialize(de)
            .map_err(|e| Error::invalid(format!("{file}: {}", e.path()), e.inner().to_string()))?;
        if !(f.format == "mien-state-script" && f.version == 1) {
            return Err(Error::invalid(
                &file,
                "format must be \"mien-state-script\" version 1",
            ));
        }
        let mut events = Vec::new();
        let mut last = f64::NEG_INFINITY;
        for (i, e) in f.events.into_iter().enumerate() {
            let at = |why: &str| Error::invalid(format!("{file}: events[{i}]"), why);
            if let Err(why) = face_rules::event_time(e.t) {
                return Err(at(&why));
            }
            if e.t < last {
                return Err(at(&format!(
                    "time {} s goes back (the previous event is at {} s)",
                    num(e.t),
                    num(last)
                )));
            }
            last = e.t;
            let mut actions = Vec::new();
            if let Some(s) = e.signal {
                actions.push(Event::Signal(s));
            }
            if let Some(x) = e.expression {
                let w = e.weight.unwrap_or(1.0);
                if !(0.0..=1.0).contains(&w) {
                    return Err(at(&format!("weight {w} is outside [0, 1]")));
                }
                actions.push(Event::Expression(x, w));
            } else if e.weight.is_some() {
                return Err(at("`weight` without `expression`"));
            }
            if let Some(l) = e.look_at {
                if let Some(Err(why)) = l.map(face_rules::point) {
                    return Err(at(&format!("look_at: {why}")));
                }
                actions.push(Event::LookAt(l));
            }
            if e.blink == Some(true) {
                actions.push(Event::Blink);
            }
            if actions.len() != 1 {
                return Err(at(if actions.is_empty() && e.blink == Some(false) {
                    "`\"blink\": false` is no action; an event needs exactly one of signal, expression, look_at, blink: true"
                } else {
                    "needs exactly one of signal, expression, look_at, blink"
                }));
            }
            events.push((e.t, actions.remove(0)));
        }
        if let Some(Err(why)) = f.speaker.map(face_rules::point) {
            return Err(Error::invalid(format!("{file}: speaker"), why));
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

/// Where a [`FaceDriver`]'s definition and script came from, for its report.
#[derive(Clone, Debug, Default)]
pub struct FaceSources {
    /// The face file (`None`: the built-in ARKit face).
    pub face: Option<String>,
    /// The script file (`None`: `builtin` when [`FaceSources::builtin_script`], else none).
    pub script: Option<String>,
    /// The script is the built-in head's own.
    pub builtin_script: bool,
}

/// The face controller of one instance and its script of events on the media clock.
#[derive(Clone, Debug)]
pub struct FaceDriver {
    /// The animator (seed 003's face controller under seed 004's avatar state reducer).
    pub animator: Animator,
    script: Script,
    next: usize,
    /// `(media time, state name)` at every change.
    pub states: Vec<(f64, String)>,
    /// What the report says about it.
    pub report: serde_json::Value,
    /// The state hash of the last updated pose (seed 003 determinism hash).
    pub last_hash: u64,
    /// The shape of the character it was built for.
    pub(crate) shape: Vec<usize>,
}

/// Read a face definition file (`docs/schemas/face.schema.json`) and check its own expressions
/// against `ch` ([`face_rules::face_expressions`]).
///
/// # Errors
/// Unreadable files, files over 1 MiB, invalid definitions, expressions naming targets the
/// character lacks — each naming the file.
pub fn read_face(path: &Path, ch: &Character) -> Result<FaceDef> {
    let bytes = mien_core::io::read::read_file_capped(path, 1 << 20)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::invalid(path.display().to_string(), "not UTF-8"))?;
    let file = path.display().to_string();
    let def = FaceDef::from_json(&text, &file)?;
    face_rules::face_expressions(&text, &def, ch, &file)?;
    Ok(def)
}

impl FaceDriver {
    /// A face driver on `ch` starting at media time `t0`: the definition `def` (see [`read_face`],
    /// or [`FaceDef::arkit_default`]), `script` (see [`Script::read`], [`Script::builtin`]), and an
    /// optional first `look_at` point (world metres) at `t0`.
    ///
    /// # Errors
    /// A face that drives nothing on the character (`cannot put the face controller on the
    /// character`); a scripted expression the face lacks (naming the script and event index).
    pub fn new(
        ch: &Character,
        def: FaceDef,
        mut script: Script,
        look_at: Option<[f32; 3]>,
        t0: f64,
        sources: &FaceSources,
    ) -> Result<Self> {
        let mut animator = Animator::new(ch, def, AnimationConfig::default(), t0)
            .context("cannot put the face controller on the character")?;
        let face_name = sources
            .face
            .clone()
            .unwrap_or_else(|| "the built-in ARKit face".to_string());
        for (i, (_, ev)) in script.events.iter().enumerate() {
            if let Event::Expression(name, _) = ev
                && !animator.face().expression_names().any(|n| n == name)
            {
                let known: Vec<&str> = animator.face().expression_names().collect();
                let file = sources
                    .script
                    .clone()
                    .unwrap_or_else(|| "the built-in script".to_string());
                return Err(Error::invalid(
                    format!("{file}: events[{i}]"),
                    format!(
                        "expression `{name}` is not one of {face_name}'s: {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        if let Some(p) = look_at {
            if let Err(why) = face_rules::point(p) {
                return Err(Error::invalid("look-at point", why));
            }
            script.events.insert(0, (t0, Event::LookAt(Some(p))));
        }
        animator.set_speaker(script.speaker.map(Vec3::from));
        let report = serde_json::json!({
            "face": sources.face.clone().unwrap_or_else(|| "built-in ARKit face".to_string()),
            "script": sources.script.clone().unwrap_or_else(|| if sources.builtin_script { "built-in".to_string() } else { "none".to_string() }),
            "events": script.events.len(),
            "expressions": animator.face().expression_names().collect::<Vec<_>>(),
        });
        let states = vec![(t0, animator_state(&animator))];
        Ok(FaceDriver {
            animator,
            script,
            next: 0,
            states,
            report,
            last_hash: 0,
            shape: crate::asset::shape(ch),
        })
    }

    /// Schedule `event` at media time `t` (seconds), after the script's events at or before `t`:
    /// live control from code (an expression's target weight, a look-at point or release, a
    /// blink, an avatar-state signal), applied by the next [`FaceDriver::update`] at or after `t`.
    /// An event earlier than one already applied is applied at the next update.
    ///
    /// # Errors
    /// A time outside 0 to [`face_rules::MAX_EVENT_TIME_S`] s, an expression the face lacks (its
    /// expressions listed), a weight outside 0–1, a look-at point beyond ±10⁶ m.
    pub fn push(&mut self, t: f64, event: Event) -> Result<()> {
        if !(t.is_finite() && (0.0..=face_rules::MAX_EVENT_TIME_S).contains(&t)) {
            return Err(Error::invalid(
                format!("event time {t}"),
                format!(
                    "must be a media time from 0 to {} s",
                    face_rules::MAX_EVENT_TIME_S
                ),
            ));
        }
        match &event {
            Event::Expression(name, w) => {
                if !self.animator.face().expression_names().any(|n| n == name) {
                    let known: Vec<&str> = self.animator.face().expression_names().collect();
                    return Err(Error::invalid(
                        format!("expression `{name}`"),
                        format!("not one of the face's: {}", known.join(", ")),
                    ));
                }
                if !(w.is_finite() && (0.0..=1.0).contains(w)) {
                    return Err(Error::invalid(
                        format!("expression `{name}` weight {w}"),
                        "must be from 0 to 1",
                    ));
                }
            }
            Event::LookAt(Some(p)) => {
                if let Err(why) = face_rules::point(*p) {
                    return Err(Error::invalid("look-at point", why));
                }
            }
            _ => {}
        }
        let at = self.next
            + self.script.events[self.next..]
                .iter()
                .take_while(|(te, _)| *te <= t)
                .count();
        self.script.events.insert(at, (t, event));
        Ok(())
    }

    /// The point the face looks at (a script's or the caller's look-at), world metres.
    pub fn look_target(&self) -> Option<glam::Vec3> {
        self.animator.face().look_target()
    }

    /// Apply the script's events up to media time `t`, then the face, onto `pose` (`world`: the
    /// node world matrices of the pose so far, for look-at), and update the state hash.
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
        self.last_hash = self.animator.hash(pose);
        let s = animator_state(&self.animator);
        if self.states.last().is_none_or(|(_, l)| *l != s) {
            self.states.push((t, s));
        }
        Ok(())
    }

    /// The report with the state changes and the last state hash.
    pub fn final_report(&self) -> serde_json::Value {
        let mut rep = self.report.clone();
        rep["states"] = serde_json::json!(
            self.states
                .iter()
                .map(|(t, s)| serde_json::json!({"t": t, "state": s}))
                .collect::<Vec<_>>()
        );
        rep["last_state_hash"] = serde_json::json!(format!("{:016x}", self.last_hash));
        rep
    }
}

fn animator_state(a: &Animator) -> String {
    a.state().name().to_string()
}
