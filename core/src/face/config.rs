//! The animator's tunables in one place: [`AnimationConfig`], its defaults
//! [`DEFAULT_ANIMATION_CONFIG`], and [`resolve_animation_config`], which lays a project's partial
//! [`AnimationConfigOverrides`] over the defaults and validates the result.
//!
//! Source: seed 004 "shared tuning knobs" (the three-piece config: an interface holding every
//! tunable, a default constant, a resolve function merging partial overrides; the idle-passive
//! timeout of 30 s is its first entry). mien adds the per-state idle behaviour the animator reads
//! (blink intervals, gaze wander, looking at the speaker) and strict parsing: an unknown key in an
//! overrides file is an error, and every value is range-checked with the failing field named.
//!
//! # Defaults and their sources
//!
//! Blink intervals are drawn uniformly in `[min_s, max_s]`, so the mean rate is
//! `60 / ((min_s + max_s) / 2)` per minute:
//!
//! | state | interval (s) | mean rate (/min) | source |
//! |---|---|---|---|
//! | idle_active | 2.0–5.0 | 17 | resting rate 17/min (Bentivoglio et al. 1997) |
//! | idle_passive | 3.0–9.0 | 10 | below the resting mean so that the character reads as calm: a stylistic choice within the large inter-subject spread Bentivoglio et al. report |
//! | listening | 2.5–5.0 | 16 | near the resting rate; listeners' blinks cluster at the speaker's pauses (Nakano & Kitazawa 2010), which the animator may use instead of the interval |
//! | thinking | 1.5–4.0 | 22 | the rate rises with mental load (Tanaka & Yamaoka 1993) |
//! | talking | 1.5–3.5 | 24 | conversation 26/min (Bentivoglio et al. 1997) |
//!
//! Gaze wander (amplitude in radians, period in seconds: the mean time between gaze shifts):
//! idle_active 0.08 rad / 3 s, idle_passive 0.20 rad / 5 s (the eyes roam), listening 0.03 rad / 2 s
//! (listeners look at the speaker most of the time, speakers look at the listener less: Argyle &
//! Cook 1976), thinking 0.25 rad / 4 s (gaze aversion while retrieving: Glenberg et al. 1998),
//! talking 0.12 rad / 2.5 s. All stay below 15° (0.26 rad), the size of most natural saccades
//! (Bahill, Adler & Stark 1975).
//!
//! References: A. R. Bentivoglio et al., "Analysis of blink rate patterns in normal subjects",
//! Movement Disorders 12(6), 1997. T. Nakano and S. Kitazawa, "Eyeblink entrainment at breakpoints
//! of speech", Experimental Brain Research 205(4), 2010. Y. Tanaka and K. Yamaoka, "Blink activity
//! and task difficulty", Perceptual and Motor Skills 77(1), 1993. M. Argyle and M. Cook, "Gaze and
//! Mutual Gaze", Cambridge University Press, 1976. A. M. Glenberg, J. L. Schroeder and D. A.
//! Robertson, "Averting the gaze disengages the environment and facilitates remembering", Memory &
//! Cognition 26(4), 1998. A. T. Bahill, D. Adler and L. Stark, "Most naturally occurring human
//! saccades have magnitudes of 15 degrees or less", Investigative Ophthalmology 14(6), 1975.

use super::state::AvatarState;
use crate::error::{Error, Result};

/// One value per [`AvatarState`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PerState<T> {
    /// In [`AvatarState::IdleActive`].
    pub idle_active: T,
    /// In [`AvatarState::IdlePassive`].
    pub idle_passive: T,
    /// In [`AvatarState::Listening`].
    pub listening: T,
    /// In [`AvatarState::Thinking`].
    pub thinking: T,
    /// In [`AvatarState::Talking`].
    pub talking: T,
}

impl<T> PerState<T> {
    /// The value for `state`.
    pub fn get(&self, state: AvatarState) -> &T {
        match state {
            AvatarState::IdleActive => &self.idle_active,
            AvatarState::IdlePassive => &self.idle_passive,
            AvatarState::Listening => &self.listening,
            AvatarState::Thinking => &self.thinking,
            AvatarState::Talking => &self.talking,
        }
    }

    /// The value for `state`, mutable.
    pub fn get_mut(&mut self, state: AvatarState) -> &mut T {
        match state {
            AvatarState::IdleActive => &mut self.idle_active,
            AvatarState::IdlePassive => &mut self.idle_passive,
            AvatarState::Listening => &mut self.listening,
            AvatarState::Thinking => &mut self.thinking,
            AvatarState::Talking => &mut self.talking,
        }
    }
}

/// A closed interval of seconds on the media clock.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TimeRange {
    /// Lower end, seconds.
    pub min_s: f64,
    /// Upper end, seconds.
    pub max_s: f64,
}

/// Every tunable of the animator (seed 004 `AnimationConfig`). Build it with
/// [`resolve_animation_config`]; a hand-built one is checked by [`AnimationConfig::validate`]
/// wherever it is consumed.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct AnimationConfig {
    /// Seconds in idle-active with no signal before the idle timeout moves the avatar to
    /// idle-passive. Finite, > 0. Default 30 (seed 004).
    pub idle_passive_timeout_s: f64,
    /// Range of the interval between spontaneous blinks per state, seconds; `0 < min_s ≤ max_s`,
    /// finite. Defaults in the module table.
    pub blink_interval: PerState<TimeRange>,
    /// Amplitude of the idle gaze wander around the gaze target per state, radians; finite in
    /// `[0, π/2]`.
    pub gaze_wander_amplitude_rad: PerState<f64>,
    /// Period of the idle gaze wander (mean time between gaze shifts) per state, seconds; finite,
    /// > 0.
    pub gaze_wander_period_s: PerState<f64>,
    /// Whether the eyes seek the speaker (the look-at target) while listening.
    pub listening_looks_at_speaker: bool,
}

/// The defaults of every tunable; sources in the module documentation.
pub const DEFAULT_ANIMATION_CONFIG: AnimationConfig = AnimationConfig {
    idle_passive_timeout_s: 30.0,
    blink_interval: PerState {
        idle_active: TimeRange {
            min_s: 2.0,
            max_s: 5.0,
        },
        idle_passive: TimeRange {
            min_s: 3.0,
            max_s: 9.0,
        },
        listening: TimeRange {
            min_s: 2.5,
            max_s: 5.0,
        },
        thinking: TimeRange {
            min_s: 1.5,
            max_s: 4.0,
        },
        talking: TimeRange {
            min_s: 1.5,
            max_s: 3.5,
        },
    },
    gaze_wander_amplitude_rad: PerState {
        idle_active: 0.08,
        idle_passive: 0.20,
        listening: 0.03,
        thinking: 0.25,
        talking: 0.12,
    },
    gaze_wander_period_s: PerState {
        idle_active: 3.0,
        idle_passive: 5.0,
        listening: 2.0,
        thinking: 4.0,
        talking: 2.5,
    },
    listening_looks_at_speaker: true,
};

impl Default for AnimationConfig {
    fn default() -> Self {
        DEFAULT_ANIMATION_CONFIG
    }
}

/// Per-state partial overrides: a state left out keeps its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerStateOverrides<T> {
    /// Override for [`AvatarState::IdleActive`].
    pub idle_active: Option<T>,
    /// Override for [`AvatarState::IdlePassive`].
    pub idle_passive: Option<T>,
    /// Override for [`AvatarState::Listening`].
    pub listening: Option<T>,
    /// Override for [`AvatarState::Thinking`].
    pub thinking: Option<T>,
    /// Override for [`AvatarState::Talking`].
    pub talking: Option<T>,
}

/// Partial override of a [`TimeRange`]: either end alone may be given.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeRangeOverrides {
    /// New lower end, seconds.
    pub min_s: Option<f64>,
    /// New upper end, seconds.
    pub max_s: Option<f64>,
}

/// A project's partial [`AnimationConfig`]: every field optional, unknown keys refused. JSON shape:
/// `{"idle_passive_timeout_s": 20, "blink_interval": {"listening": {"max_s": 4}}}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationConfigOverrides {
    /// See [`AnimationConfig::idle_passive_timeout_s`].
    pub idle_passive_timeout_s: Option<f64>,
    /// See [`AnimationConfig::blink_interval`].
    pub blink_interval: Option<PerStateOverrides<TimeRangeOverrides>>,
    /// See [`AnimationConfig::gaze_wander_amplitude_rad`].
    pub gaze_wander_amplitude_rad: Option<PerStateOverrides<f64>>,
    /// See [`AnimationConfig::gaze_wander_period_s`].
    pub gaze_wander_period_s: Option<PerStateOverrides<f64>>,
    /// See [`AnimationConfig::listening_looks_at_speaker`].
    pub listening_looks_at_speaker: Option<bool>,
}

impl AnimationConfigOverrides {
    /// Parse overrides from JSON text; `file` labels the source in errors.
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` for malformed JSON, an unknown key (at any depth) or a value
    /// of the wrong type, with serde's line and column. Ranges are checked later, by
    /// [`resolve_animation_config`].
    pub fn from_json(text: &str, file: &str) -> Result<AnimationConfigOverrides> {
        serde_json::from_str(text)
            .map_err(|e| Error::format(file, "animation config overrides", e.to_string()))
    }
}

/// Lay `overrides` over [`DEFAULT_ANIMATION_CONFIG`] and validate the result (seed 004
/// `resolveAnimationConfig`).
///
/// # Errors
/// As [`AnimationConfig::validate`], for the merged config.
pub fn resolve_animation_config(overrides: &AnimationConfigOverrides) -> Result<AnimationConfig> {
    let mut config = DEFAULT_ANIMATION_CONFIG;
    if let Some(t) = overrides.idle_passive_timeout_s {
        config.idle_passive_timeout_s = t;
    }
    if let Some(o) = &overrides.blink_interval {
        merge(&mut config.blink_interval, o, |range, o| {
            if let Some(v) = o.min_s {
                range.min_s = v;
            }
            if let Some(v) = o.max_s {
                range.max_s = v;
            }
        });
    }
    if let Some(o) = &overrides.gaze_wander_amplitude_rad {
        merge(&mut config.gaze_wander_amplitude_rad, o, |v, o| *v = *o);
    }
    if let Some(o) = &overrides.gaze_wander_period_s {
        merge(&mut config.gaze_wander_period_s, o, |v, o| *v = *o);
    }
    if let Some(b) = overrides.listening_looks_at_speaker {
        config.listening_looks_at_speaker = b;
    }
    config.validate()?;
    Ok(config)
}

/// Apply each state's override, when present, with `set`.
fn merge<T, O>(
    values: &mut PerState<T>,
    overrides: &PerStateOverrides<O>,
    set: impl Fn(&mut T, &O),
) {
    for state in AvatarState::ALL {
        let o = match state {
            AvatarState::IdleActive => &overrides.idle_active,
            AvatarState::IdlePassive => &overrides.idle_passive,
            AvatarState::Listening => &overrides.listening,
            AvatarState::Thinking => &overrides.thinking,
            AvatarState::Talking => &overrides.talking,
        };
        if let Some(o) = o {
            set(values.get_mut(state), o);
        }
    }
}

/// A config problem naming its field as a JSON path (`blink_interval.listening.min_s`).
fn bad(field: String, reason: String) -> Error {
    Error::Invalid {
        what: format!("animation config: {field}"),
        reason,
    }
}

impl AnimationConfig {
    /// Check every range: the timeout and periods finite and > 0; blink intervals finite with
    /// `0 < min_s ≤ max_s`; wander amplitudes finite in `[0, π/2]`.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the field (`animation config: blink_interval.listening.min_s`),
    /// every problem collected ([`Error::collect`]).
    pub fn validate(&self) -> Result<()> {
        let mut problems = Vec::new();
        let t = self.idle_passive_timeout_s;
        if !(t.is_finite() && t > 0.0) {
            problems.push(bad(
                "idle_passive_timeout_s".into(),
                format!("{t} s is not a finite positive time"),
            ));
        }
        for state in AvatarState::ALL {
            let name = state.name();
            let r = self.blink_interval.get(state);
            for (end, v) in [("min_s", r.min_s), ("max_s", r.max_s)] {
                if !(v.is_finite() && v > 0.0) {
                    problems.push(bad(
                        format!("blink_interval.{name}.{end}"),
                        format!("{v} s is not a finite positive time"),
                    ));
                }
            }
            if r.min_s > r.max_s {
                problems.push(bad(
                    format!("blink_interval.{name}"),
                    format!("min_s {} s exceeds max_s {} s", r.min_s, r.max_s),
                ));
            }
            let a = *self.gaze_wander_amplitude_rad.get(state);
            if !(0.0..=std::f64::consts::FRAC_PI_2).contains(&a) {
                problems.push(bad(
                    format!("gaze_wander_amplitude_rad.{name}"),
                    format!("{a} rad is not in [0, pi/2]"),
                ));
            }
            let p = *self.gaze_wander_period_s.get(state);
            if !(p.is_finite() && p > 0.0) {
                problems.push(bad(
                    format!("gaze_wander_period_s.{name}"),
                    format!("{p} s is not a finite positive time"),
                ));
            }
        }
        Error::collect(problems)
    }
}
