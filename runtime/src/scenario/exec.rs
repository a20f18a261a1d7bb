//! Running a [`Plan`] once, from scratch: the media clock starts at 0 with the first frame posed
//! (rest drive, no speech, the animator in idle-active); each `step` poses its frames on the
//! media clock exactly as `mien animate` does (drive → speech → animator, eye joints re-read);
//! `face`, `say`, `state` and `animate` take effect from the next posed frame; `hash`, `assert`
//! and `capture` read the last posed frame. Deterministic: no wall clock, no threads in the
//! posing, the same plan gives the same hashes bit for bit.

use crate::error::{Error, Result};
use glam::{DMat4, DVec3, Mat4, Quat, Vec3};
use mien_core::anim::Drive;
use mien_core::anim::drive::SpeechLayer;
use mien_core::face::{Animator, state_hash};
use mien_core::io::speech::SpeechFile;
use mien_core::rig::{Character, Pose};
use mien_core::speech::{EnvelopeParams, SpeechSampler, VisemeMap};

use super::bind::Check;
use super::check::{Action, Plan};
use super::model::{BoneMeasure, FaceAction, Range};

/// A hash recorded by a `hash` step.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The step's pointer.
    pub pointer: String,
    /// Its name.
    pub name: String,
    /// Media time of the frame, seconds.
    pub t: f64,
    /// The value.
    pub hash: u64,
}

/// An assertion's outcome.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Outcome {
    /// The step's pointer.
    pub step: String,
    /// `morph`, `bone`, `time`, `state`, `hash`.
    pub kind: &'static str,
    /// What was measured (`jawOpen on head`).
    pub what: String,
    /// Expected: `[min, max]` (a missing side is ±∞) or the value.
    pub expected: String,
    /// What the frame had.
    pub actual: serde_json::Value,
    /// Media time of the frame, seconds.
    pub t: f64,
    /// Whether it held.
    pub passed: bool,
}

/// A rendered capture.
pub struct Captured {
    /// The step's pointer.
    pub pointer: String,
    /// File stem.
    pub name: String,
    /// Media time, seconds.
    pub t: f64,
    /// The image.
    pub image: image::RgbImage,
}

/// What one run found.
pub struct RunResult {
    /// `hash` steps in order.
    pub hashes: Vec<Recorded>,
    /// Assertions in order.
    pub outcomes: Vec<Outcome>,
    /// Captures (first run only, and only with a renderer).
    pub captures: Vec<Captured>,
    /// `(media time, state)` at the start and at every change.
    pub states: Vec<(f64, &'static str)>,
    /// The hash of the last frame.
    pub final_hash: u64,
    /// Media time at the end, seconds.
    pub end_s: f64,
    /// Frames posed.
    pub frames: u64,
}

/// The speech layer of an utterance starting at media time `origin`, bound to `ch` (with the
/// face file's viseme map when it has one).
///
/// # Errors
/// An utterance that collapses at f32 precision after the origin; a character no viseme binds to;
/// a face file's viseme map naming targets the character lacks.
pub fn speech_layer(
    ch: &Character,
    file: &SpeechFile,
    envelope: bool,
    origin: f64,
    visemes: Option<&(VisemeMap, String)>,
) -> Result<SpeechLayer> {
    let sampler: Box<dyn SpeechSampler + Send + Sync> = if envelope {
        Box::new(file.to_envelope(origin, EnvelopeParams::default())?)
    } else {
        Box::new(file.to_aligned(origin)?)
    };
    Ok(SpeechLayer::new(
        sampler,
        ch,
        visemes.map(|(m, f)| (m, f.as_str())),
    )?)
}

/// The state of one run.
struct Run<'a> {
    plan: &'a Plan,
    drive: Drive,
    drive_t0: f64,
    speech: Option<SpeechLayer>,
    animator: Option<Animator>,
    rest: Pose,
    pose: Pose,
    locals: Vec<Mat4>,
    world: Vec<Mat4>,
    t: f64,
    states: Vec<(f64, &'static str)>,
    /// The body step (foot placement, spring bones, locomotion, placement).
    body: crate::body::Body,
    /// Per placed leg: its stance and slide since the last `foot_slide` assertion on it.
    slides: Vec<Slide>,
    /// The cloth and hair, stepped after the palette.
    dynamics: crate::dynamics::DynState,
    controls: mien_core::rig::RigControls,
}

/// A leg's stance tracking for `foot_slide` assertions.
#[derive(Clone, Copy, Debug, Default)]
struct Slide {
    /// Where the current stance began (the ankle's world position), while planted.
    plant: Option<DVec3>,
    /// Largest horizontal distance from a plant point in the window, metres.
    max: f64,
    /// Planted frames in the window.
    planted: u64,
}

impl Run<'_> {
    /// Pose the frame at media time `t`.
    fn pose_at(&mut self, t: f64) -> Result<()> {
        let ch = &self.plan.character;
        self.t = t;
        self.drive
            .pose_at(ch, &self.rest, t - self.drive_t0, &mut self.pose);
        // Locomotion right after the drive; foot placement and chains after the face.
        let body = self.body.active();
        if body {
            self.body.locomote(ch, &mut self.pose, t);
        }
        if let Some(layer) = &mut self.speech {
            if t > layer.span().1 {
                // The utterance is over: the drive owns the mouth again.
                self.speech = None;
            } else {
                layer.apply(t, &mut self.pose);
            }
        }
        ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
        if let Some(a) = &mut self.animator {
            a.update(ch, t, &self.world, &mut self.pose)?;
            // Eye joints may have turned.
            ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
            let s = a.state().name();
            if self.states.last().is_none_or(|(_, l)| *l != s) {
                self.states.push((t, s));
            }
        }
        if body {
            self.body.place(ch, &mut self.pose)?;
            ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
            if let Some(f) = &self.body.last.foot {
                for (leg, s) in f.legs.iter().zip(&mut self.slides) {
                    let ankle = DVec3::from_array(leg.ankle);
                    match (leg.planted, s.plant) {
                        (true, None) => {
                            s.plant = Some(ankle);
                            s.planted += 1;
                        }
                        (true, Some(p)) => {
                            // Sliding is along the ground: the heel lifting at the end of a
                            // stance is the walk, not a slide.
                            let d = (ankle - p) * DVec3::new(1.0, 0.0, 1.0);
                            s.max = s.max.max(d.length());
                            s.planted += 1;
                        }
                        (false, _) => s.plant = None,
                    }
                }
            }
        }
        // Cloth and hair after the palette (seed 003's order).
        if let Some(rig) = &self.plan.rig
            && self.dynamics.active()
        {
            rig.controls_from_pose(&self.pose, &self.world, &mut self.controls);
            self.dynamics.step(
                &self.plan.dynamics,
                rig,
                &self.controls,
                &self.world,
                self.body.placement,
                t,
            )?;
        }
        Ok(())
    }

    /// Node `k`'s world matrix, the placement included.
    fn placed(&self, k: usize) -> DMat4 {
        self.body.placement * self.world[k].as_dmat4()
    }

    /// The pose's (and the animator's) state hash; with a body step running, mixed (FNV-1a)
    /// with the placement and the spring bones' state.
    fn hash(&self) -> u64 {
        let h = match &self.animator {
            Some(a) => a.hash(&self.pose),
            None => state_hash(&self.pose, None),
        };
        let h = if self.dynamics.active() {
            let mut h = h ^ 0x9e37_79b9_7f4a_7c15;
            self.dynamics.hash_into(&mut |bytes: &[u8]| {
                for b in bytes {
                    h ^= u64::from(*b);
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
            });
            h
        } else {
            h
        };
        if !self.body.active() {
            return h;
        }
        self.body.hash_into(h ^ 0xcbf2_9ce4_8422_2325)
    }

    fn face(&mut self, actions: &[FaceAction]) -> Result<()> {
        let t = self.t;
        let a = self
            .animator
            .as_mut()
            .ok_or_else(|| Error::invalid("a face step", "the scenario has no animator"))?;
        let f = a.face_mut();
        for act in actions {
            match act {
                FaceAction::Expression(n, w) => f.set_expression(n, *w)?,
                FaceAction::Blink => f.blink_now(t),
                FaceAction::BlinkEnabled(on) => f.set_blink_enabled(*on),
                FaceAction::LookAt(p) => f.look_at(p.map(Vec3::from))?,
                FaceAction::Override(target, v) => f.set_override(target, *v)?,
            }
        }
        Ok(())
    }
}

/// A measured f32 as JSON: its shortest decimal form (round-trips to the same f32); `null` when
/// it is not finite.
fn f32_json(x: f32) -> serde_json::Value {
    format!("{x}")
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

fn expected(r: &Range) -> String {
    let side = |x: Option<f64>, inf: &str| x.map_or(inf.to_string(), |v| v.to_string());
    format!("[{}, {}]", side(r.min, "-inf"), side(r.max, "inf"))
}

/// Run `plan` once from scratch; captures are rendered when `render` is true and the plan has a
/// renderer.
///
/// # Errors
/// A failure of the animator or the renderer (never an assertion: those are outcomes).
/// `stop` is asked before every step and every frame: when it says true the run ends with
/// [`Error::Stopped`].
pub fn execute(plan: &mut Plan, render: bool, stop: &dyn Fn() -> bool) -> Result<RunResult> {
    let mut capturer = if render { plan.capturer.take() } else { None };
    let result = execute_with(plan, capturer.as_mut(), stop);
    if render {
        plan.capturer = capturer;
    }
    result
}

/// Compare `got` with a golden step's image: passed when every 8-bit channel of every pixel is
/// within the tolerance. With no golden ([`super::check::updating_goldens`]) the image is written
/// to the golden's path instead (atomically) and the step passes.
fn golden(g: &super::check::Golden, got: &image::RgbImage) -> Result<(serde_json::Value, bool)> {
    let Some(want) = &g.expected else {
        if let Some(dir) = g.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io {
                path: dir.display().to_string(),
                what: "cannot create the goldens folder".into(),
                source: e,
            })?;
        }
        mien_core::preview::write_png(&g.path, got)?;
        return Ok(("rewritten".into(), true));
    };
    if want.dimensions() != got.dimensions() {
        let actual = serde_json::json!({
            "size": [got.width(), got.height()],
            "golden_size": [want.width(), want.height()],
        });
        return Ok((actual, false));
    }
    let (mut over, mut worst, mut at) = (0u64, 0u8, None);
    for (x, y, p) in got.enumerate_pixels() {
        let q = want.get_pixel(x, y);
        let d = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
        if d > worst {
            (worst, at) = (d, Some([x, y]));
        }
        over += u64::from(d > g.tolerance);
    }
    let actual = serde_json::json!({
        "largest_difference": worst,
        "pixels_over": over,
        "worst_pixel": at,
    });
    Ok((actual, over == 0))
}

fn execute_with(
    plan: &Plan,
    mut capturer: Option<&mut super::capture::Capturer>,
    stop: &dyn Fn() -> bool,
) -> Result<RunResult> {
    let stopped = |at: &str| {
        if stop() {
            Err(Error::Stopped {
                what: format!("scenario {} at step {at}", plan.file.display()),
            })
        } else {
            Ok(())
        }
    };
    let ch = &plan.character;
    let rest = ch.rest_pose();
    let mut run = Run {
        plan,
        drive: Drive::Rest,
        drive_t0: 0.0,
        speech: None,
        animator: plan.animator.clone(),
        pose: rest.clone(),
        rest,
        locals: Vec::new(),
        world: Vec::new(),
        t: 0.0,
        states: Vec::new(),
        body: plan.body.body.clone(),
        slides: vec![Slide::default(); plan.body.feet.len()],
        dynamics: crate::dynamics::DynState::new(&plan.dynamics)?,
        controls: Default::default(),
    };
    run.pose_at(0.0)?;
    let mut frames = 1u64;
    let (mut hashes, mut outcomes, mut captures) = (Vec::new(), Vec::new(), Vec::new());
    for step in &plan.steps {
        stopped(&step.pointer)?;
        match &step.action {
            Action::Advance { frames: n, dt } => {
                let t0 = run.t;
                for k in 1..=*n {
                    stopped(&step.pointer)?;
                    run.pose_at(t0 + f64::from(k) * dt)?;
                }
                frames += u64::from(*n);
            }
            Action::Drive(d) => {
                run.drive = d.clone();
                run.drive_t0 = run.t;
            }
            Action::Face(actions) => run.face(actions)?,
            Action::Walk(speed) => match &mut run.body.locomotion {
                Some(l) => l.speed = *speed,
                None => run.body.velocity = *speed,
            },
            Action::Transform(m) => {
                run.body.placement = *m;
                run.body.restart();
            }
            Action::Ground(g) => run.body.ground = g.clone(),
            Action::Wind(w) => {
                if let Some(s) = &mut run.body.springs {
                    s.set_wind(*w)?;
                }
                run.dynamics.set_wind(*w)?;
            }
            Action::Say {
                file,
                envelope,
                origin,
            } => {
                run.speech = Some(speech_layer(
                    ch,
                    file,
                    *envelope,
                    *origin,
                    plan.visemes.as_ref(),
                )?);
            }
            Action::Signal(s) => {
                let t = run.t;
                let a = run.animator.as_mut().ok_or_else(|| {
                    Error::invalid("a state step", "the scenario has no animator")
                })?;
                let now = a.signal(*s, t)?.name();
                if run.states.last().is_none_or(|(_, l)| *l != now) {
                    run.states.push((t, now));
                }
            }
            Action::Hash(name) => hashes.push(Recorded {
                pointer: step.pointer.clone(),
                name: name.clone(),
                t: run.t,
                hash: run.hash(),
            }),
            Action::Assert(c) => outcomes.push(check(&mut run, c, &hashes, &step.pointer)),
            Action::Golden(g) => {
                if let Some(c) = capturer.as_deref_mut() {
                    let image = c.capture(&run.pose, &run.dynamics, g.cell)?;
                    let (actual, passed) = golden(g, &image)?;
                    outcomes.push(Outcome {
                        step: step.pointer.clone(),
                        kind: "golden",
                        what: format!("golden `{}` ({})", g.name, g.path.display()),
                        expected: format!(
                            "every 8-bit channel within {} of the golden image",
                            g.tolerance
                        ),
                        actual,
                        t: run.t,
                        passed,
                    });
                }
            }
            Action::Capture { name, cell } => {
                if let Some(c) = capturer.as_deref_mut() {
                    captures.push(Captured {
                        pointer: step.pointer.clone(),
                        name: name.clone(),
                        t: run.t,
                        image: c.capture(&run.pose, &run.dynamics, *cell)?,
                    });
                }
            }
        }
    }
    Ok(RunResult {
        final_hash: run.hash(),
        end_s: run.t,
        states: run.states,
        hashes,
        outcomes,
        captures,
        frames,
    })
}

/// The direction node `k`'s rest forward points now: its world rotation relative to rest, applied
/// to +Z.
fn forward(now: &Mat4, rest: &Mat4) -> Vec3 {
    let rot = |m: &Mat4| {
        let (_, r, _) = m.to_scale_rotation_translation();
        if r.is_finite() {
            r.normalize()
        } else {
            Quat::IDENTITY
        }
    };
    (rot(now) * rot(rest).inverse()) * Vec3::Z
}

fn check(run: &mut Run<'_>, c: &Check, hashes: &[Recorded], pointer: &str) -> Outcome {
    let t = run.t;
    let o = |kind, what: String, expected: String, actual: serde_json::Value, passed| Outcome {
        step: pointer.to_owned(),
        kind,
        what,
        expected,
        actual,
        t,
        passed,
    };
    match c {
        Check::Morph {
            node,
            target,
            label,
            range,
        } => {
            let w = run.pose.weights[*node][*target];
            let passed = range.contains(f64::from(w));
            o("morph", label.clone(), expected(range), f32_json(w), passed)
        }
        Check::Bone {
            node,
            axis,
            of,
            label,
            range,
        } => {
            let m = run.placed(*node).as_mat4();
            let v = match of {
                BoneMeasure::Position => m.w_axis.truncate(),
                BoneMeasure::Forward => forward(&m, &run.plan.rest_world[*node]),
            };
            let x = v[*axis];
            let passed = range.contains(f64::from(x));
            o("bone", label.clone(), expected(range), f32_json(x), passed)
        }
        Check::BoneY { node, label, range } => {
            let y = run.placed(*node).w_axis.y;
            o(
                "bone_y",
                label.clone(),
                expected(range),
                f32_json(y as f32),
                range.contains(y),
            )
        }
        Check::FootSlide { leg, label, max } => {
            let s = std::mem::take(&mut run.slides[*leg]);
            // The stance goes on across the window's end.
            run.slides[*leg].plant = s.plant;
            let actual = serde_json::json!({
                "slide_m": f32_json(s.max as f32),
                "planted_frames": s.planted,
            });
            o(
                "foot_slide",
                label.clone(),
                format!("planted at least once, sliding at most {max} m"),
                actual,
                s.planted > 0 && s.max <= *max,
            )
        }
        Check::ChainTip {
            spring,
            axis,
            label,
            range,
        } => {
            let x = run.body.springs.as_ref().map_or(f64::NAN, |s| {
                let bones = s.bones();
                let before: usize = bones.springs[..*spring]
                    .iter()
                    .map(|s| s.joints.len())
                    .sum();
                let n = bones.springs[*spring].joints.len();
                let tails = s.tails(&run.plan.character, &run.pose, run.body.placement);
                tails
                    .get((before + n).wrapping_sub(1))
                    .map_or(f64::NAN, |p| p[*axis])
            });
            o(
                "chain_tip",
                label.clone(),
                expected(range),
                f32_json(x as f32),
                range.contains(x),
            )
        }
        Check::ClothMaxStretch { max } => {
            let x = run
                .dynamics
                .report
                .cloth
                .as_ref()
                .map_or(f64::NAN, |c| c.max_stretch);
            o(
                "cloth_max_stretch",
                "cloth stretch".into(),
                format!("at most {max}"),
                f32_json(x as f32),
                x <= *max,
            )
        }
        Check::HairTip { axis, range } => {
            let g = &run.dynamics.hair_out;
            let s1 = run
                .plan
                .dynamics
                .hair
                .as_ref()
                .map_or(1, |h| h.groom.segments + 1);
            let n = g.len() / s1;
            let x = if n == 0 {
                f64::NAN
            } else {
                let sum: DVec3 = (0..n)
                    .map(|i| DVec3::from(g[i * s1 + s1 - 1].map(f64::from)))
                    .sum();
                run.body.placement.transform_point3(sum / n as f64)[*axis]
            };
            o(
                "hair_tip",
                format!("hair tip {}", ["x", "y", "z"][*axis]),
                expected(range),
                f32_json(x as f32),
                range.contains(x),
            )
        }
        Check::Time(range) => o(
            "time",
            "media time".into(),
            expected(range),
            t.into(),
            range.contains(t),
        ),
        Check::State(want) => {
            let got = run.animator.as_ref().map_or("none", |a| a.state().name());
            o(
                "state",
                "avatar state".into(),
                want.name().into(),
                got.into(),
                got == want.name(),
            )
        }
        Check::Hash { name, equals } => {
            let got = hashes
                .iter()
                .rev()
                .find(|h| &h.name == name)
                .map(|h| h.hash);
            o(
                "hash",
                format!("hash `{name}`"),
                format!("{equals:016x}"),
                got.map_or(serde_json::Value::Null, |h| format!("{h:016x}").into()),
                got == Some(*equals),
            )
        }
    }
}
