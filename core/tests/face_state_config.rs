//! The animator's config (`mien_core::face::config`): documented defaults, partial JSON overrides
//! merged onto them, strict parsing (unknown keys at any depth, wrong types), and range validation
//! with the failing field named.

mod support;

use mien_core::Error;
use mien_core::face::config::{
    AnimationConfig, AnimationConfigOverrides, DEFAULT_ANIMATION_CONFIG, PerState, TimeRange,
    resolve_animation_config,
};
use mien_core::face::state::AvatarState;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn parse(text: &str) -> mien_core::Result<AnimationConfigOverrides> {
    AnimationConfigOverrides::from_json(text, "anim.json")
}

#[test]
fn defaults_are_the_documented_ones() {
    let d = DEFAULT_ANIMATION_CONFIG;
    d.validate().unwrap();
    assert_eq!(AnimationConfig::default(), d);
    assert_eq!(d.idle_passive_timeout_s, 30.0);
    assert!(d.listening_looks_at_speaker);
    // Mean blink rates per minute of the uniform interval ranges, against the module table:
    // rest 17/min and conversation 26/min (Bentivoglio et al. 1997), higher under mental load.
    let rate = |s| {
        let r: &TimeRange = d.blink_interval.get(s);
        60.0 / ((r.min_s + r.max_s) / 2.0)
    };
    let want = [
        (AvatarState::IdleActive, 17.14),
        (AvatarState::IdlePassive, 10.0),
        (AvatarState::Listening, 16.0),
        (AvatarState::Thinking, 21.82),
        (AvatarState::Talking, 24.0),
    ];
    for (s, r) in want {
        assert!((rate(s) - r).abs() < 0.01, "{s:?}: {}", rate(s));
    }
    assert!(rate(AvatarState::Thinking) > rate(AvatarState::IdleActive));
    // Gaze wander below 15° (Bahill et al. 1975); listening wanders least, thinking most.
    for s in AvatarState::ALL {
        assert!(*d.gaze_wander_amplitude_rad.get(s) < 15f64.to_radians());
    }
    assert_eq!(
        *d.gaze_wander_amplitude_rad.get(AvatarState::Listening),
        0.03
    );
    assert_eq!(
        *d.gaze_wander_amplitude_rad.get(AvatarState::Thinking),
        0.25
    );
    assert_eq!(*d.gaze_wander_period_s.get(AvatarState::IdlePassive), 5.0);
}

#[test]
fn empty_overrides_resolve_to_the_defaults() {
    let o = parse("{}").unwrap();
    assert_eq!(o, AnimationConfigOverrides::default());
    assert_eq!(
        resolve_animation_config(&o).unwrap(),
        DEFAULT_ANIMATION_CONFIG
    );
    // null means "no override".
    let o = parse(r#"{"idle_passive_timeout_s": null, "blink_interval": {"talking": null}}"#);
    assert_eq!(
        resolve_animation_config(&o.unwrap()).unwrap(),
        DEFAULT_ANIMATION_CONFIG
    );
}

#[test]
fn partial_overrides_change_only_what_they_name() {
    let o = parse(
        r#"{
            "idle_passive_timeout_s": 12.5,
            "blink_interval": {"listening": {"max_s": 4}, "talking": {"min_s": 1, "max_s": 2}},
            "gaze_wander_amplitude_rad": {"thinking": 0.1},
            "gaze_wander_period_s": {"idle_active": 7},
            "listening_looks_at_speaker": false
        }"#,
    )
    .unwrap();
    let got = resolve_animation_config(&o).unwrap();
    let d = DEFAULT_ANIMATION_CONFIG;
    let want = AnimationConfig {
        idle_passive_timeout_s: 12.5,
        blink_interval: PerState {
            listening: TimeRange {
                min_s: 2.5,
                max_s: 4.0,
            },
            talking: TimeRange {
                min_s: 1.0,
                max_s: 2.0,
            },
            ..d.blink_interval
        },
        gaze_wander_amplitude_rad: PerState {
            thinking: 0.1,
            ..d.gaze_wander_amplitude_rad
        },
        gaze_wander_period_s: PerState {
            idle_active: 7.0,
            ..d.gaze_wander_period_s
        },
        listening_looks_at_speaker: false,
    };
    assert_eq!(got, want);
}

#[test]
fn unknown_keys_and_wrong_types_are_refused() {
    for text in [
        r#"{"idle_timeout_s": 3}"#,
        r#"{"blink_interval": {"listen": {"min_s": 1}}}"#,
        r#"{"blink_interval": {"listening": {"min": 1}}}"#,
        r#"{"gaze_wander_period_s": {"talking": 1, "dancing": 2}}"#,
        r#"{"listening_looks_at_speaker": "yes"}"#,
        r#"{"idle_passive_timeout_s": "30"}"#,
        r#"{"gaze_wander_amplitude_rad": 0.1}"#,
        r#"[]"#,
        r#"{"idle_passive_timeout_s": 3"#,
    ] {
        match parse(text) {
            Err(Error::Format { file, .. }) => assert_eq!(file, "anim.json", "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    let err = parse(r#"{"blink_interval": {"listening": {"min": 1}}}"#).unwrap_err();
    assert!(err.to_string().contains("min"), "{err}");
}

#[test]
fn bad_ranges_name_their_field() {
    let cases = [
        (r#"{"idle_passive_timeout_s": 0}"#, "idle_passive_timeout_s"),
        (
            r#"{"idle_passive_timeout_s": -5}"#,
            "idle_passive_timeout_s",
        ),
        // min above the default max of 3.5 s.
        (
            r#"{"blink_interval": {"talking": {"min_s": 4}}}"#,
            "blink_interval.talking",
        ),
        (
            r#"{"blink_interval": {"thinking": {"min_s": 0}}}"#,
            "blink_interval.thinking.min_s",
        ),
        (
            r#"{"gaze_wander_amplitude_rad": {"listening": -0.1}}"#,
            "gaze_wander_amplitude_rad.listening",
        ),
        (
            r#"{"gaze_wander_amplitude_rad": {"idle_passive": 1.6}}"#,
            "gaze_wander_amplitude_rad.idle_passive",
        ),
        (
            r#"{"gaze_wander_period_s": {"talking": 0}}"#,
            "gaze_wander_period_s.talking",
        ),
    ];
    for (text, field) in cases {
        let err = resolve_animation_config(&parse(text).unwrap()).unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }), "{text}: {err:?}");
        assert!(err.to_string().contains(field), "{text}: {err}");
    }
    // Non-finite values (only reachable from Rust) and several problems at once, all named.
    let mut c = DEFAULT_ANIMATION_CONFIG;
    c.idle_passive_timeout_s = f64::INFINITY;
    c.blink_interval.listening.max_s = f64::NAN;
    c.gaze_wander_period_s.thinking = f64::NAN;
    let err = c.validate().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Many(ref v) if v.len() == 3), "{text}");
    for field in [
        "idle_passive_timeout_s",
        "blink_interval.listening.max_s",
        "gaze_wander_period_s.thinking",
    ] {
        assert!(text.contains(field), "{field} missing from {text}");
    }
}

const STATES: [&str; 5] = [
    "idle_active",
    "idle_passive",
    "listening",
    "thinking",
    "talking",
];

proptest! {
    #![proptest_config(support::proptest_config(128))]

    /// A random subset of per-state overrides merges field by field: each value is the override
    /// where given, the default elsewhere; validation fails exactly when a given value is out of
    /// its range.
    #[test]
    fn overrides_merge_field_by_field(
        timeout in prop::option::of(-10.0f64..100.0),
        amp in prop::collection::vec(prop::option::of(-0.5f64..2.0), 5),
        period in prop::collection::vec(prop::option::of(-1.0f64..10.0), 5),
        looks in prop::option::of(any::<bool>()),
    ) {
        let mut root = Map::new();
        if let Some(t) = timeout { root.insert("idle_passive_timeout_s".into(), json!(t)); }
        let per = |vals: &[Option<f64>]| -> Value {
            Value::Object(STATES.iter().zip(vals).filter_map(|(s, v)| v.map(|v| ((*s).to_string(), json!(v)))).collect())
        };
        root.insert("gaze_wander_amplitude_rad".into(), per(&amp));
        root.insert("gaze_wander_period_s".into(), per(&period));
        if let Some(b) = looks { root.insert("listening_looks_at_speaker".into(), json!(b)); }
        let o = parse(&Value::Object(root).to_string()).unwrap();

        let ok_time = |v: f64| v > 0.0;
        let ok_amp = |v: f64| (0.0..=std::f64::consts::FRAC_PI_2).contains(&v);
        let valid = timeout.is_none_or(ok_time)
            && amp.iter().flatten().all(|&v| ok_amp(v))
            && period.iter().flatten().all(|&v| ok_time(v));
        match resolve_animation_config(&o) {
            Ok(c) => {
                prop_assert!(valid);
                let d = DEFAULT_ANIMATION_CONFIG;
                prop_assert_eq!(c.idle_passive_timeout_s, timeout.unwrap_or(d.idle_passive_timeout_s));
                prop_assert_eq!(c.listening_looks_at_speaker, looks.unwrap_or(true));
                prop_assert_eq!(c.blink_interval, d.blink_interval);
                for (i, s) in AvatarState::ALL.into_iter().enumerate() {
                    prop_assert_eq!(*c.gaze_wander_amplitude_rad.get(s), amp[i].unwrap_or(*d.gaze_wander_amplitude_rad.get(s)));
                    prop_assert_eq!(*c.gaze_wander_period_s.get(s), period[i].unwrap_or(*d.gaze_wander_period_s.get(s)));
                }
            }
            Err(e) => prop_assert!(!valid, "refused a valid config: {}", e),
        }
    }
}
