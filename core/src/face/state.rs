//! Avatar state: what the character is doing in a conversation (idle, listening, thinking,
//! talking), a pure reducer over a small closed set of signals, and [`AvatarStateMachine`], which
//! owns the idle clock on the media clock.
//!
//! Source: seed 004 "avatar state" (the five states with idle split into active and passive, the
//! timer-free reducer, the wrapper that owns the idle-passive timeout and re-arms it on every entry
//! into idle-active). mien runs the wrapper on media time (seconds, f64) passed in by the caller,
//! never on wall time, so a replay gives the same states at the same times.

use super::config::AnimationConfig;
use crate::error::{Error, Result};

/// The avatar's conversational state (seed 004 `AvatarState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AvatarState {
    /// Idle right after a turn: still engaged. The initial state.
    IdleActive,
    /// Idle after nothing happened for [`AnimationConfig::idle_passive_timeout_s`]: ambient idle.
    /// Reached only through [`Signal::IdleTimeout`].
    IdlePassive,
    /// The user is speaking.
    Listening,
    /// Between the end of the user's turn (or a request) and the response's first output.
    Thinking,
    /// The avatar is speaking.
    Talking,
}

impl AvatarState {
    /// Every state, in declaration order.
    pub const ALL: [AvatarState; 5] = [
        AvatarState::IdleActive,
        AvatarState::IdlePassive,
        AvatarState::Listening,
        AvatarState::Thinking,
        AvatarState::Talking,
    ];

    /// The snake_case name, as in JSON (`idle_active`).
    pub fn name(self) -> &'static str {
        match self {
            AvatarState::IdleActive => "idle_active",
            AvatarState::IdlePassive => "idle_passive",
            AvatarState::Listening => "listening",
            AvatarState::Thinking => "thinking",
            AvatarState::Talking => "talking",
        }
    }
}

/// What can happen to the avatar (seed 004's closed signal set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The user started speaking.
    ListeningStarted,
    /// The user stopped speaking: a response is expected next.
    ListeningStopped,
    /// A response was requested (a typed input was sent).
    ResponseRequested,
    /// The avatar's speech (audio or transcript) started.
    TalkingStarted,
    /// The avatar's speech ended.
    TalkingStopped,
    /// Nothing happened for the idle-passive timeout.
    IdleTimeout,
    /// The session started or ended.
    Reset,
}

impl Signal {
    /// Every signal, in declaration order.
    pub const ALL: [Signal; 7] = [
        Signal::ListeningStarted,
        Signal::ListeningStopped,
        Signal::ResponseRequested,
        Signal::TalkingStarted,
        Signal::TalkingStopped,
        Signal::IdleTimeout,
        Signal::Reset,
    ];

    /// The snake_case name, as in JSON (`listening_started`).
    pub fn name(self) -> &'static str {
        match self {
            Signal::ListeningStarted => "listening_started",
            Signal::ListeningStopped => "listening_stopped",
            Signal::ResponseRequested => "response_requested",
            Signal::TalkingStarted => "talking_started",
            Signal::TalkingStopped => "talking_stopped",
            Signal::IdleTimeout => "idle_timeout",
            Signal::Reset => "reset",
        }
    }
}

/// The state after `signal` in `current`: a pure, total function (seed 004 `nextAvatarState`).
///
/// Rules: `listening_started` → listening; `listening_stopped` and `response_requested` →
/// thinking (ending listening means a response is coming, so the avatar does not relax first);
/// `talking_started` → talking; `talking_stopped` and `reset` → idle-active (never straight to
/// idle-passive); `idle_timeout` → idle-passive from idle-active only, ignored elsewhere. Every rule
/// but the last applies from every state. The full table (rows: current state, columns: signal):
///
/// | current | listening_started | listening_stopped | response_requested | talking_started | talking_stopped | idle_timeout | reset |
/// |---|---|---|---|---|---|---|---|
/// | idle_active | listening | thinking | thinking | talking | idle_active | **idle_passive** | idle_active |
/// | idle_passive | listening | thinking | thinking | talking | idle_active | idle_passive | idle_active |
/// | listening | listening | thinking | thinking | talking | idle_active | listening | idle_active |
/// | thinking | listening | thinking | thinking | talking | idle_active | thinking | idle_active |
/// | talking | listening | thinking | thinking | talking | idle_active | talking | idle_active |
pub fn next_state(current: AvatarState, signal: Signal) -> AvatarState {
    match signal {
        Signal::ListeningStarted => AvatarState::Listening,
        Signal::ListeningStopped | Signal::ResponseRequested => AvatarState::Thinking,
        Signal::TalkingStarted => AvatarState::Talking,
        Signal::TalkingStopped | Signal::Reset => AvatarState::IdleActive,
        Signal::IdleTimeout => match current {
            AvatarState::IdleActive => AvatarState::IdlePassive,
            other => other,
        },
    }
}

/// Slack of the idle-timeout comparison, seconds (1 ns). Media timestamps such as `k / fps` carry
/// f64 rounding, so `t − entered` can land an ulp below a timeout it reaches exactly; 1 ns absorbs
/// that and is far below any frame period.
pub const IDLE_TIMEOUT_TOLERANCE_S: f64 = 1e-9;

/// The reducer plus the idle clock, on the media clock (seed 004 `deriveAvatarState`'s timer).
///
/// Starts in idle-active. Every entry into idle-active arms the timer: a signal that changes the
/// state, or `reset` / `talking_stopped` (which re-enter idle-active even from idle-active),
/// records its time as [`entered_at`](Self::entered_at). [`update`](Self::update) fires the idle
/// timeout when the state is still idle-active and `t − entered_at ≥ idle_passive_timeout_s`
/// (within [`IDLE_TIMEOUT_TOLERANCE_S`]). A signal that keeps the state (`listening_started` while
/// listening, an ignored `idle_timeout`) is not an entry and leaves `entered_at` alone. Times must
/// not decrease across `new`, `signal` and `update`; equal times are fine (several signals in one
/// frame). No randomness and no wall clock: the same calls give the same states.
#[derive(Clone, Debug, PartialEq)]
pub struct AvatarStateMachine {
    state: AvatarState,
    entered_at: f64,
    last_t: f64,
    timeout_s: f64,
}

impl AvatarStateMachine {
    /// A machine in idle-active, entered at `t0` (seconds, media clock), timing out after
    /// `config.idle_passive_timeout_s`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `t0` is not finite, or anything [`AnimationConfig::validate`]
    /// refuses.
    pub fn new(config: &AnimationConfig, t0: f64) -> Result<AvatarStateMachine> {
        config.validate()?;
        if !t0.is_finite() {
            return Err(Error::Invalid {
                what: "avatar state machine start time".into(),
                reason: format!("{t0} s is not finite"),
            });
        }
        Ok(AvatarStateMachine {
            state: AvatarState::IdleActive,
            entered_at: t0,
            last_t: t0,
            timeout_s: config.idle_passive_timeout_s,
        })
    }

    /// Apply `signal` at media time `t` (seconds) through [`next_state`]; returns the new state.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `t` is not finite or is before the last time seen; the machine is
    /// unchanged.
    pub fn signal(&mut self, signal: Signal, t: f64) -> Result<AvatarState> {
        self.advance_clock(t)?;
        let next = next_state(self.state, signal);
        let reenters_idle = next == AvatarState::IdleActive
            && matches!(signal, Signal::Reset | Signal::TalkingStopped);
        if next != self.state || reenters_idle {
            self.entered_at = t;
        }
        self.state = next;
        Ok(next)
    }

    /// Advance to media time `t` (seconds): fire the idle timeout when due. Returns whether it
    /// fired. The idle-passive state is entered at the deadline `entered_at + timeout` (capped at
    /// `t`), not at `t`, so its entry time does not depend on the frame rate.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `t` is not finite or is before the last time seen; the machine is
    /// unchanged.
    pub fn update(&mut self, t: f64) -> Result<bool> {
        self.advance_clock(t)?;
        let due = t - self.entered_at >= self.timeout_s - IDLE_TIMEOUT_TOLERANCE_S;
        if self.state == AvatarState::IdleActive && due {
            self.state = next_state(self.state, Signal::IdleTimeout);
            self.entered_at = (self.entered_at + self.timeout_s).min(t);
            return Ok(true);
        }
        Ok(false)
    }

    /// The current state.
    pub fn state(&self) -> AvatarState {
        self.state
    }

    /// Media time (seconds) at which the current state was last entered.
    pub fn entered_at(&self) -> f64 {
        self.entered_at
    }

    /// Media time (seconds) at which the idle timeout will fire, while in idle-active.
    pub fn idle_deadline(&self) -> Option<f64> {
        (self.state == AvatarState::IdleActive).then_some(self.entered_at + self.timeout_s)
    }

    /// The latest media time (seconds) passed to `new`, `signal` or `update`.
    pub fn last_time(&self) -> f64 {
        self.last_t
    }

    /// The idle-passive timeout in use, seconds.
    pub fn idle_passive_timeout_s(&self) -> f64 {
        self.timeout_s
    }

    /// Refuse a non-finite or backward `t`; otherwise record it.
    fn advance_clock(&mut self, t: f64) -> Result<()> {
        if !t.is_finite() || t < self.last_t {
            return Err(Error::Invalid {
                what: "avatar state machine time".into(),
                reason: format!(
                    "{t} s is not finite or is before the last time seen, {} s",
                    self.last_t
                ),
            });
        }
        self.last_t = t;
        Ok(())
    }
}
