//! Avatar state (`mien_core::face::state`): the reducer against a hand-written table of all 35
//! (state, signal) pairs, and the state machine's idle clock on the media clock: the timeout fires
//! on the exact boundary frame at 24/30/60/144 Hz, other signals prevent it, reset and
//! talking_stopped re-arm it, backward or non-finite times are refused with the machine unchanged,
//! and the outcome does not depend on the frame rate.

mod support;

use mien_core::Error;
use mien_core::face::config::{AnimationConfig, DEFAULT_ANIMATION_CONFIG};
use mien_core::face::state::{AvatarState, AvatarStateMachine, Signal, next_state};
use proptest::prelude::*;

use AvatarState::{
    IdleActive as IA, IdlePassive as IP, Listening as L, Talking as T, Thinking as TH,
};
use Signal::{
    IdleTimeout, ListeningStarted, ListeningStopped, Reset, ResponseRequested, TalkingStarted,
    TalkingStopped,
};

/// Every (state, signal) pair with its expected next state, written out by hand from the rules.
const TABLE: [(AvatarState, Signal, AvatarState); 35] = [
    (IA, ListeningStarted, L),
    (IA, ListeningStopped, TH),
    (IA, ResponseRequested, TH),
    (IA, TalkingStarted, T),
    (IA, TalkingStopped, IA),
    (IA, IdleTimeout, IP),
    (IA, Reset, IA),
    (IP, ListeningStarted, L),
    (IP, ListeningStopped, TH),
    (IP, ResponseRequested, TH),
    (IP, TalkingStarted, T),
    (IP, TalkingStopped, IA),
    (IP, IdleTimeout, IP),
    (IP, Reset, IA),
    (L, ListeningStarted, L),
    (L, ListeningStopped, TH),
    (L, ResponseRequested, TH),
    (L, TalkingStarted, T),
    (L, TalkingStopped, IA),
    (L, IdleTimeout, L),
    (L, Reset, IA),
    (TH, ListeningStarted, L),
    (TH, ListeningStopped, TH),
    (TH, ResponseRequested, TH),
    (TH, TalkingStarted, T),
    (TH, TalkingStopped, IA),
    (TH, IdleTimeout, TH),
    (TH, Reset, IA),
    (T, ListeningStarted, L),
    (T, ListeningStopped, TH),
    (T, ResponseRequested, TH),
    (T, TalkingStarted, T),
    (T, TalkingStopped, IA),
    (T, IdleTimeout, T),
    (T, Reset, IA),
];

#[test]
fn reducer_matches_the_full_table() {
    // The table covers every pair exactly once.
    for s in AvatarState::ALL {
        for g in Signal::ALL {
            let rows = TABLE.iter().filter(|(a, b, _)| *a == s && *b == g).count();
            assert_eq!(rows, 1, "{s:?} × {g:?}");
        }
    }
    for (state, signal, want) in TABLE {
        assert_eq!(next_state(state, signal), want, "{state:?} + {signal:?}");
    }
    // idle-passive is reached only through idle_timeout, and only from idle-active.
    for (state, signal, want) in TABLE {
        if want == IP && state != IP {
            assert_eq!((state, signal), (IA, IdleTimeout));
        }
    }
}

#[test]
fn names_are_the_json_spelling() {
    for s in AvatarState::ALL {
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            format!("\"{}\"", s.name())
        );
    }
    for g in Signal::ALL {
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            format!("\"{}\"", g.name())
        );
    }
    assert_eq!(IA.name(), "idle_active");
    assert_eq!(ListeningStopped.name(), "listening_stopped");
}

fn config(timeout_s: f64) -> AnimationConfig {
    AnimationConfig {
        idle_passive_timeout_s: timeout_s,
        ..DEFAULT_ANIMATION_CONFIG
    }
}

/// Idle-active entered at frame `k0` (through talking_stopped when `k0 > 0`); frames stepped at
/// `fps`. The timeout must fire on the first frame `k` with `(k − k0) / fps ≥ timeout` in exact
/// arithmetic: `k − k0 = ceil(timeout_ms · fps / 1000)`.
#[test]
fn timeout_fires_on_the_boundary_frame() {
    for fps in [24u64, 30, 60, 144] {
        for timeout_ms in [30_000u64, 2_500, 1_010, 333, 1] {
            for k0 in [0u64, 7, 37, 1001] {
                let at = |k: u64| k as f64 / fps as f64;
                let mut m =
                    AvatarStateMachine::new(&config(timeout_ms as f64 / 1000.0), 0.0).unwrap();
                if k0 > 0 {
                    m.signal(TalkingStarted, at(k0 / 2)).unwrap();
                    assert_eq!(m.signal(TalkingStopped, at(k0)).unwrap(), IA);
                }
                assert_eq!(m.entered_at(), at(k0));
                let n = (timeout_ms * fps).div_ceil(1000);
                let case = format!("{fps} Hz, {timeout_ms} ms, entered at frame {k0}");
                for k in k0 + 1..k0 + n {
                    assert!(
                        !m.update(at(k)).unwrap(),
                        "{case}: fired early at frame {k}"
                    );
                    assert_eq!(m.state(), IA, "{case}");
                }
                assert!(
                    m.update(at(k0 + n)).unwrap(),
                    "{case}: not fired at frame {}",
                    k0 + n
                );
                assert_eq!(m.state(), IP, "{case}");
                // Entered at the deadline, not at the frame that noticed it.
                let deadline = at(k0) + timeout_ms as f64 / 1000.0;
                assert!(
                    (m.entered_at() - deadline).abs() < 1e-9,
                    "{case}: {}",
                    m.entered_at()
                );
                assert_eq!(m.idle_deadline(), None);
                // It fires once.
                assert!(!m.update(at(k0 + n + 1)).unwrap());
                assert!(!m.update(at(k0 + 10 * n + 5)).unwrap());
                assert_eq!(m.state(), IP);
            }
        }
    }
}

#[test]
fn other_signals_prevent_the_timeout() {
    for s in [
        ListeningStarted,
        ListeningStopped,
        ResponseRequested,
        TalkingStarted,
    ] {
        let mut m = AvatarStateMachine::new(&DEFAULT_ANIMATION_CONFIG, 100.0).unwrap();
        assert_eq!(m.idle_deadline(), Some(130.0));
        m.signal(s, 110.0).unwrap();
        assert_eq!(m.idle_deadline(), None);
        for t in [129.0, 130.0, 140.0, 1000.0] {
            assert!(!m.update(t).unwrap(), "{s:?} at {t}");
            assert_eq!(m.state(), next_state(IA, s));
        }
        assert_eq!(m.entered_at(), 110.0);
        // Back to idle-active: a fresh 30 s from the return.
        m.signal(TalkingStopped, 1001.0).unwrap();
        assert!(!m.update(1030.5).unwrap());
        assert!(m.update(1031.0).unwrap());
        assert_eq!(m.state(), IP);
    }
}

#[test]
fn reset_and_talking_stopped_rearm() {
    for s in [Reset, TalkingStopped] {
        // From idle-active itself: the deadline moves.
        let mut m = AvatarStateMachine::new(&DEFAULT_ANIMATION_CONFIG, 0.0).unwrap();
        m.update(20.0).unwrap();
        assert_eq!(m.signal(s, 20.0).unwrap(), IA);
        assert_eq!(m.entered_at(), 20.0);
        assert_eq!(m.idle_deadline(), Some(50.0));
        assert!(!m.update(30.0).unwrap(), "{s:?}: old deadline still armed");
        assert!(!m.update(49.99).unwrap());
        assert!(m.update(50.0).unwrap());
        // From idle-passive: back to idle-active, armed again.
        assert_eq!(m.signal(s, 60.0).unwrap(), IA);
        assert!(!m.update(89.9).unwrap());
        assert!(m.update(90.0).unwrap());
        assert_eq!(m.state(), IP);
    }
    // An ignored idle_timeout or a repeated signal is not an entry.
    let mut m = AvatarStateMachine::new(&DEFAULT_ANIMATION_CONFIG, 0.0).unwrap();
    m.signal(ListeningStarted, 1.0).unwrap();
    m.signal(ListeningStarted, 2.0).unwrap();
    m.signal(IdleTimeout, 3.0).unwrap();
    assert_eq!((m.state(), m.entered_at()), (L, 1.0));
    // A signalled idle_timeout in idle-active goes passive at once.
    m.signal(Reset, 4.0).unwrap();
    assert_eq!(m.signal(IdleTimeout, 5.0).unwrap(), IP);
    assert_eq!(m.entered_at(), 5.0);
}

#[test]
fn backward_and_non_finite_times_are_refused() {
    let mut m = AvatarStateMachine::new(&DEFAULT_ANIMATION_CONFIG, 10.0).unwrap();
    m.signal(ListeningStarted, 12.0).unwrap();
    let before = m.clone();
    for t in [
        11.999,
        0.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert!(
            matches!(m.signal(Reset, t), Err(Error::Invalid { .. })),
            "signal at {t}"
        );
        assert!(
            matches!(m.update(t), Err(Error::Invalid { .. })),
            "update at {t}"
        );
        assert_eq!(m, before, "changed by a refused call at {t}");
    }
    // Equal times are fine: several signals in one frame.
    m.signal(ListeningStopped, 12.0).unwrap();
    m.signal(TalkingStarted, 12.0).unwrap();
    assert_eq!((m.state(), m.last_time()), (T, 12.0));

    assert!(AvatarStateMachine::new(&DEFAULT_ANIMATION_CONFIG, f64::NAN).is_err());
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = AvatarStateMachine::new(&config(bad), 0.0).unwrap_err();
        assert!(err.to_string().contains("idle_passive_timeout_s"), "{err}");
    }
}

/// A signal at a time in milliseconds.
fn event() -> impl Strategy<Value = (u64, Signal)> {
    (
        0u64..5_000,
        prop::sample::select(vec![
            ListeningStarted,
            ListeningStopped,
            ResponseRequested,
            TalkingStarted,
            TalkingStopped,
            Reset,
        ]),
    )
}

/// Run `events` (sorted by time, ms) with updates every frame at `fps` up to `end_ms`.
fn simulate(
    timeout_ms: u64,
    events: &[(u64, Signal)],
    fps: u64,
    end_ms: u64,
) -> Vec<(AvatarState, f64)> {
    let mut m = AvatarStateMachine::new(&config(timeout_ms as f64 / 1000.0), 0.0).unwrap();
    let mut trace = Vec::new();
    let mut frame = 0u64;
    let mut next = events.iter().peekable();
    loop {
        let t_frame_ms_x_fps = frame * 1000; // frame time = frame / fps s = (frame·1000 / fps) ms
        while let Some(&&(ms, s)) = next.peek() {
            if ms * fps > t_frame_ms_x_fps {
                break;
            }
            m.signal(s, ms as f64 / 1000.0).unwrap();
            trace.push((m.state(), m.entered_at()));
            next.next();
        }
        if frame * 1000 > end_ms * fps {
            break;
        }
        m.update(frame as f64 / fps as f64).unwrap();
        assert!(m.entered_at() <= m.last_time());
        frame += 1;
    }
    m.update(end_ms as f64 / 1000.0).unwrap();
    trace.push((m.state(), m.entered_at()));
    trace
}

proptest! {
    #![proptest_config(support::proptest_config(128))]

    /// The state after each signal, and at the end, with its entry time, is the same whether the
    /// caller updates at 24 or 144 Hz (and the same again on a second run).
    #[test]
    fn frame_rate_does_not_change_the_outcome(
        timeout_ms in 100u64..3_000,
        mut events in prop::collection::vec(event(), 0..12),
        tail_ms in 0u64..4_000,
    ) {
        events.sort_by_key(|e| e.0);
        let end = events.last().map_or(0, |e| e.0) + tail_ms;
        let slow = simulate(timeout_ms, &events, 24, end);
        let fast = simulate(timeout_ms, &events, 144, end);
        prop_assert_eq!(slow.len(), fast.len());
        for (a, b) in slow.iter().zip(&fast) {
            prop_assert_eq!(a.0, b.0);
            prop_assert!((a.1 - b.1).abs() < 1e-9, "{:?} vs {:?}", a, b);
        }
        prop_assert_eq!(simulate(timeout_ms, &events, 144, end), fast);
    }
}
