//! The shipped schemas against the readers: `scenario.schema.json` and the typed scenario model
//! accept and refuse the same documents (and name the same place), `state-script.schema.json`
//! and `animator::Script::read` likewise (with the one rule a schema cannot state listed).

use serde_json::{Value, json};

use super::Problem;
use super::parse::parse;
use super::schema::{STATE_SCRIPT_SCHEMA, compile, problems, scenario_validator};

fn doc(steps: Value) -> Value {
    json!({"format": "mien-scenario", "version": 1, "character": "builtin", "steps": steps})
}

fn one(step: Value) -> Value {
    doc(json!([step]))
}

/// Steps the schema and the model both accept.
fn valid_steps() -> Vec<Value> {
    vec![
        json!({"step": {"frames": 1, "dt": 1}}),
        json!({"step": {"frames": 100000, "dt": 0.5}}),
        json!({"step": {"frames": 10.0, "dt": 1e-9}}),
        json!({"animate": {"clip": "Take 001"}}),
        json!({"animate": {"clip": "0"}}),
        json!({"animate": {"clip": 3}}),
        json!({"animate": {"stream": "take.csv"}}),
        json!({"animate": {"rest": true}}),
        json!({"face": {"expression": "smile", "weight": 0.5}}),
        json!({"face": {"blink": "now"}}),
        json!({"face": {"blink_enabled": false}}),
        json!({"face": {"look_at": [0.5, -1, 2]}}),
        json!({"face": {"look_at": null}}),
        json!({"face": {"override": {"target": "jawOpen", "value": -2}}}),
        json!({"face": {"override": {"target": "jawOpen", "value": null}}}),
        json!({"face": {"expression": "sad", "weight": 1, "look_at": null, "blink": "now"}}),
        json!({"say": {"file": "line.TextGrid"}}),
        json!({"say": {"file": "line.json", "sampler": "held"}}),
        json!({"say": {"phonemes": [["HH", 0, 0.1], ["AH", 0.1, 0.3]], "sampler": "envelope"}}),
        json!({"state": {"signal": "listening_started"}}),
        json!({"state": {"signal": "idle_timeout"}}),
        json!({"hash": {"name": "a-B_9"}}),
        json!({"assert": {"kind": "morph", "target": "jawOpen", "min": 0.1}}),
        json!({"assert": {"kind": "morph", "target": "jawOpen", "node": "head", "max": 1}}),
        json!({"assert": {"kind": "bone", "node": "eyeLeft", "axis": "y", "min": 0, "max": 1}}),
        json!({"assert": {"kind": "bone", "node": "eyeLeft", "axis": "x", "of": "forward", "max": 0.5}}),
        json!({"assert": {"kind": "time", "min": 2}}),
        json!({"assert": {"kind": "state", "equals": "thinking"}}),
        json!({"assert": {"kind": "hash", "name": "x", "equals": "0123456789abcdef"}}),
        json!({"capture": {"name": "front"}}),
        json!({"capture": {"name": "front", "cell": 4096}}),
        json!({"golden": {"name": "front"}}),
        json!({"golden": {"name": "front", "cell": 64, "tolerance": 0}}),
        json!({"golden": {"name": "front", "tolerance": 255}}),
        json!({"walk": {"speed": 0}}),
        json!({"walk": {"speed": 1.4}}),
        json!({"transform": {"position": [0, 0, 100]}}),
        json!({"transform": {"position": [1, 2, 3], "yaw": -90}}),
        json!({"ground": "flat"}),
        json!({"ground": "flat:0.1"}),
        json!({"ground": "slope:10"}),
        json!({"ground": "step:0.15:0.4"}),
        json!({"ground": "none"}),
        json!({"wind": [2, 0, -1.5]}),
        json!({"assert": {"kind": "bone_y", "node": "LeftFoot", "min": 0.1}}),
        json!({"assert": {"kind": "foot_slide", "foot": "LeftFoot", "max": 0.01}}),
        json!({"assert": {"kind": "chain_tip", "spring": "hair", "axis": "y", "max": 1.5}}),
    ]
}

/// Steps both refuse, and the pointer the schema names.
fn invalid_steps() -> Vec<(Value, &'static str)> {
    vec![
        // Unknown keys anywhere, unknown step kinds, not exactly one key.
        (
            json!({"step": {"frames": 1, "dt": 0.1, "wind": 2}}),
            "/steps/0/step/wind",
        ),
        (json!({"jump": {"height": 1}}), "/steps/0/jump"),
        (json!({}), "/steps/0"),
        (
            json!({"step": {"frames": 1, "dt": 0.1}, "hash": {"name": "a"}}),
            "/steps/0",
        ),
        (json!("step"), "/steps/0"),
        // Frames and dt.
        (
            json!({"step": {"frames": 0, "dt": 0.1}}),
            "/steps/0/step/frames",
        ),
        (
            json!({"step": {"frames": 100001, "dt": 0.1}}),
            "/steps/0/step/frames",
        ),
        (
            json!({"step": {"frames": 1.5, "dt": 0.1}}),
            "/steps/0/step/frames",
        ),
        (json!({"step": {"frames": 1, "dt": 0}}), "/steps/0/step/dt"),
        (
            json!({"step": {"frames": 1, "dt": 1.0001}}),
            "/steps/0/step/dt",
        ),
        (
            json!({"step": {"frames": 1, "dt": -0.5}}),
            "/steps/0/step/dt",
        ),
        (json!({"step": {"frames": 1}}), "/steps/0/step"),
        // Animate with no source, or two.
        (json!({"animate": {}}), "/steps/0/animate"),
        (
            json!({"animate": {"clip": "a", "rest": true}}),
            "/steps/0/animate",
        ),
        (json!({"animate": {"rest": false}}), "/steps/0/animate/rest"),
        (json!({"animate": {"clip": -1}}), "/steps/0/animate/clip"),
        (json!({"animate": {"clip": ""}}), "/steps/0/animate/clip"),
        (json!({"animate": {"clip": 0.5}}), "/steps/0/animate/clip"),
        // A face step that does nothing or half a thing.
        (json!({"face": {}}), "/steps/0/face"),
        (json!({"face": {"weight": 0.5}}), "/steps/0/face"),
        (json!({"face": {"expression": "smile"}}), "/steps/0/face"),
        (
            json!({"face": {"expression": "smile", "weight": 1.5}}),
            "/steps/0/face/weight",
        ),
        (json!({"face": {"blink": "later"}}), "/steps/0/face/blink"),
        (json!({"face": {"blink": true}}), "/steps/0/face/blink"),
        (
            json!({"face": {"look_at": [1, 2]}}),
            "/steps/0/face/look_at",
        ),
        (
            json!({"face": {"look_at": [1e7, 0, 0]}}),
            "/steps/0/face/look_at",
        ),
        (
            json!({"face": {"override": {"target": "jawOpen"}}}),
            "/steps/0/face/override",
        ),
        (
            json!({"face": {"override": {"target": "jawOpen", "value": 3}}}),
            "/steps/0/face/override/value",
        ),
        (
            json!({"face": {"override": {"target": "jawOpen", "value": 1, "mode": "add"}}}),
            "/steps/0/face/override/mode",
        ),
        (json!({"face": {"smile": 1}}), "/steps/0/face/smile"),
        // Say.
        (json!({"say": {}}), "/steps/0/say"),
        (json!({"say": {"sampler": "held"}}), "/steps/0/say"),
        (
            json!({"say": {"file": "a.json", "phonemes": [["AH", 0, 1]]}}),
            "/steps/0/say",
        ),
        (json!({"say": {"phonemes": []}}), "/steps/0/say/phonemes"),
        (
            json!({"say": {"phonemes": [["AH", 0]]}}),
            "/steps/0/say/phonemes/0",
        ),
        (
            json!({"say": {"phonemes": [["AH", 0, 1, 2]]}}),
            "/steps/0/say/phonemes/0/3",
        ),
        (
            json!({"say": {"phonemes": [["AH", -1, 1]]}}),
            "/steps/0/say/phonemes/0/1",
        ),
        (
            json!({"say": {"file": "a.json", "sampler": "fast"}}),
            "/steps/0/say/sampler",
        ),
        // State.
        (
            json!({"state": {"signal": "shouting_started"}}),
            "/steps/0/state/signal",
        ),
        (json!({"state": {}}), "/steps/0/state"),
        // Hash and capture names.
        (json!({"hash": {"name": "a b"}}), "/steps/0/hash/name"),
        (
            json!({"hash": {"name": "a", "value": "x"}}),
            "/steps/0/hash/value",
        ),
        (
            json!({"capture": {"name": "../up"}}),
            "/steps/0/capture/name",
        ),
        (
            json!({"capture": {"name": "a", "cell": 8}}),
            "/steps/0/capture/cell",
        ),
        (json!({"capture": {}}), "/steps/0/capture"),
        (json!({"golden": {"name": "a/b"}}), "/steps/0/golden/name"),
        (
            json!({"golden": {"name": "a", "tolerance": 256}}),
            "/steps/0/golden/tolerance",
        ),
        (
            json!({"golden": {"name": "a", "tolerance": 1.5}}),
            "/steps/0/golden/tolerance",
        ),
        (
            json!({"golden": {"name": "a", "cell": 5000}}),
            "/steps/0/golden/cell",
        ),
        (
            json!({"golden": {"name": "a", "threshold": 2}}),
            "/steps/0/golden/threshold",
        ),
        // Assertions: neither min nor max, misspelled keys, unknown kinds, missing equals.
        (
            json!({"assert": {"kind": "morph", "target": "jawOpen"}}),
            "/steps/0/assert",
        ),
        (
            json!({"assert": {"kind": "morph", "target": "jawOpen", "mni": 0.2}}),
            "/steps/0/assert/mni",
        ),
        (
            json!({"assert": {"kind": "morph", "target": "jawOpen", "min": 0.2, "axis": "x"}}),
            "/steps/0/assert/axis",
        ),
        (
            json!({"assert": {"kind": "bone_z", "node": "head", "min": 0}}),
            "/steps/0/assert/kind",
        ),
        (
            json!({"assert": {"kind": "bone", "node": "head", "axis": "w", "min": 0}}),
            "/steps/0/assert/axis",
        ),
        (
            json!({"assert": {"kind": "bone", "node": "head", "min": 0}}),
            "/steps/0/assert",
        ),
        (
            json!({"assert": {"kind": "bone", "node": "head", "axis": "x", "of": "up", "min": 0}}),
            "/steps/0/assert/of",
        ),
        (
            json!({"assert": {"kind": "time", "min": 0, "target": "x"}}),
            "/steps/0/assert/target",
        ),
        (json!({"assert": {"kind": "time"}}), "/steps/0/assert"),
        (json!({"assert": {"kind": "state"}}), "/steps/0/assert"),
        (
            json!({"assert": {"kind": "state", "equals": "asleep"}}),
            "/steps/0/assert/equals",
        ),
        (
            json!({"assert": {"kind": "state", "equals": "talking", "min": 0}}),
            "/steps/0/assert/min",
        ),
        (
            json!({"assert": {"kind": "hash", "name": "x"}}),
            "/steps/0/assert",
        ),
        (
            json!({"assert": {"kind": "hash", "name": "x", "equals": "0123456789ABCDEF"}}),
            "/steps/0/assert/equals",
        ),
        (
            json!({"assert": {"kind": "hash", "name": "x", "equals": "0123"}}),
            "/steps/0/assert/equals",
        ),
        (json!({"assert": {"min": 0}}), "/steps/0/assert"),
        // The body steps and assertions.
        (json!({"walk": {"speed": -1}}), "/steps/0/walk/speed"),
        (json!({"walk": {"speed": 101}}), "/steps/0/walk/speed"),
        (json!({"walk": {}}), "/steps/0/walk"),
        (
            json!({"transform": {"position": [0, 0]}}),
            "/steps/0/transform/position",
        ),
        (
            json!({"transform": {"position": [0, 0, 2e6]}}),
            "/steps/0/transform/position/2",
        ),
        (
            json!({"transform": {"position": [0, 0, 0], "yaw": 400}}),
            "/steps/0/transform/yaw",
        ),
        (json!({"ground": "hill:3"}), "/steps/0/ground"),
        (json!({"ground": 3}), "/steps/0/ground"),
        (json!({"wind": [1, 2]}), "/steps/0/wind"),
        (json!({"wind": [1, 2, 5000]}), "/steps/0/wind/2"),
        (
            json!({"assert": {"kind": "bone_y", "node": "Hips"}}),
            "/steps/0/assert",
        ),
        (
            json!({"assert": {"kind": "foot_slide", "foot": "LeftFoot"}}),
            "/steps/0/assert",
        ),
        (
            json!({"assert": {"kind": "foot_slide", "foot": "LeftFoot", "max": -1}}),
            "/steps/0/assert/max",
        ),
        (
            json!({"assert": {"kind": "chain_tip", "spring": "hair", "min": 0}}),
            "/steps/0/assert",
        ),
    ]
}

/// Whole documents both refuse, and the pointer.
fn invalid_documents() -> Vec<(Value, &'static str)> {
    let base = one(json!({"step": {"frames": 1, "dt": 0.1}}));
    let with = |k: &str, v: Value| {
        let mut d = base.clone();
        d[k] = v;
        d
    };
    let mut missing = base.clone();
    missing.as_object_mut().map(|o| o.remove("character"));
    vec![
        (with("format", json!("mien-scene")), "/format"),
        (with("version", json!(2)), "/version"),
        (with("version", json!("1")), "/version"),
        (with("character", json!("")), "/character"),
        (with("character", json!(5)), "/character"),
        (with("face", json!("")), "/face"),
        (with("body", json!({"springs": "maybe"})), "/body/springs"),
        (with("body", json!({"foot_ik": ""})), "/body/foot_ik"),
        (with("body", json!({"feet": "auto"})), "/body/feet"),
        (with("steps", json!([])), "/steps"),
        (with("steps", json!({})), "/steps"),
        (with("stepz", json!([])), "/stepz"),
        (missing, ""),
        (json!([1, 2]), ""),
    ]
}

fn schema(v: &Value) -> Vec<Problem> {
    problems(scenario_validator().unwrap(), v)
}

#[test]
fn the_schema_and_the_model_accept_the_same_steps() {
    for step in valid_steps() {
        let d = one(step.clone());
        assert!(
            schema(&d).is_empty(),
            "schema refused {step}: {:?}",
            schema(&d)
        );
        assert!(parse(&d).is_ok(), "model refused {step}: {:?}", parse(&d));
    }
    let d = doc(json!(valid_steps()));
    assert_eq!(parse(&d).unwrap().steps.len(), valid_steps().len());
}

#[test]
fn the_schema_and_the_model_refuse_the_same_steps_at_the_same_place() {
    for (step, at) in invalid_steps() {
        let d = one(step.clone());
        let s = schema(&d);
        assert!(
            s.iter().any(|p| p.pointer == at),
            "schema on {step}: wanted {at}, got {s:?}"
        );
        let m = parse(&d).expect_err(&format!("the model accepted {step}"));
        assert!(
            m.iter().all(|p| p.pointer.starts_with("/steps/0")),
            "model on {step}: {m:?}"
        );
        assert!(
            m.iter()
                .any(|p| at.starts_with(&p.pointer) || p.pointer.starts_with(at)),
            "model on {step}: wanted {at} or a parent, got {m:?}"
        );
    }
}

#[test]
fn the_schema_and_the_model_refuse_the_same_documents() {
    for (d, at) in invalid_documents() {
        let s = schema(&d);
        assert!(
            s.iter().any(|p| p.pointer == at),
            "schema on {d}: wanted {at:?}, got {s:?}"
        );
        let m = parse(&d).expect_err(&format!("the model accepted {d}"));
        assert!(
            m.iter().any(|p| p.pointer == at),
            "model on {d}: wanted {at:?}, got {m:?}"
        );
    }
}

#[test]
fn the_schema_names_every_problem_of_a_document() {
    let d = doc(json!([
        {"step": {"frames": 0, "dt": 2}},
        {"assert": {"kind": "morph", "target": "jawOpen", "mni": 0.2}},
        {"face": {}}
    ]));
    let mut at: Vec<String> = schema(&d).into_iter().map(|p| p.pointer).collect();
    at.sort();
    at.dedup();
    assert_eq!(
        at,
        [
            "/steps/0/step/dt",
            "/steps/0/step/frames",
            "/steps/1/assert",
            "/steps/1/assert/mni",
            "/steps/2/face"
        ]
    );
}

/// State-script documents: `(events or whole document, reader accepts)`.
fn state_scripts() -> Vec<(Value, bool)> {
    let s = |events: Value| json!({"format": "mien-state-script", "version": 1, "events": events});
    vec![
        (s(json!([])), true),
        (s(json!([{"t": 0, "signal": "talking_started"}])), true),
        (s(json!([{"t": 0.5, "expression": "smile"}])), true),
        (
            s(json!([{"t": 0.5, "expression": "smile", "weight": 0.25}])),
            true,
        ),
        (
            s(json!([{"t": 1, "look_at": [0.1, 0, 2]}, {"t": 2, "look_at": null}])),
            true,
        ),
        (s(json!([{"t": 1, "blink": true}])), true),
        (
            s(json!([{"t": 1, "blink": false, "signal": "reset"}])),
            true,
        ),
        (s(json!([{"t": -1, "signal": "reset"}])), false),
        (s(json!([{"t": 1e300, "blink": true}])), false),
        (s(json!([{"t": 1e6, "blink": true}])), true),
        (s(json!([{"t": 0, "look_at": [1e38, 0, 0]}])), false),
        (s(json!([{"t": 0, "look_at": [-1e6, 0, 1e6]}])), true),
        (
            json!({"format": "mien-state-script", "version": 1, "speaker": [1e38, 0, 0], "events": []}),
            false,
        ),
        (
            json!({"format": "mien-state-script", "version": 1, "speaker": [0, 1.6, 2], "events": []}),
            true,
        ),
        (
            json!({"format": "mien-state-script", "version": 1, "speaker": null, "events": []}),
            true,
        ),
        (s(json!([{"t": 0}])), false),
        (s(json!([{"t": 0, "blink": false}])), false),
        (s(json!([{"signal": "reset"}])), false),
        (
            s(json!([{"t": 0, "signal": "reset", "blink": true}])),
            false,
        ),
        (
            s(json!([{"t": 0, "signal": "reset", "look_at": null}])),
            false,
        ),
        (
            s(json!([{"t": 0, "expression": "smile", "look_at": [0, 0, 1]}])),
            false,
        ),
        (s(json!([{"t": 0, "signal": "shout"}])), false),
        (
            s(json!([{"t": 0, "signal": "reset", "weight": 0.5}])),
            false,
        ),
        (
            s(json!([{"t": 0, "expression": "smile", "weight": 1.5}])),
            false,
        ),
        (
            s(json!([{"t": 0, "expression": "smile", "weight": -0.1}])),
            false,
        ),
        (s(json!([{"t": 0, "look_at": [0, 1]}])), false),
        (s(json!([{"t": 0, "look_at": [0, 1, 1e39]}])), false),
        (s(json!([{"t": 0, "signal": "reset", "extra": 1}])), false),
        (s(json!([{"t": "0", "signal": "reset"}])), false),
        (
            json!({"format": "mien-state-script", "version": 2, "events": []}),
            false,
        ),
        (
            json!({"format": "mien-script", "version": 1, "events": []}),
            false,
        ),
        (json!({"format": "mien-state-script", "version": 1}), false),
        (
            json!({"format": "mien-state-script", "version": 1, "events": [], "fps": 30}),
            false,
        ),
        (
            json!({"format": "mien-state-script", "version": 1, "speaker": [0, 1], "events": []}),
            false,
        ),
    ]
}

#[test]
fn the_state_script_schema_accepts_what_the_reader_accepts() {
    let v = compile(STATE_SCRIPT_SCHEMA).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (k, (d, accepted)) in state_scripts().into_iter().enumerate() {
        let path = dir.path().join(format!("s{k}.json"));
        std::fs::write(&path, d.to_string()).unwrap();
        let reader = crate::Script::read(&path);
        assert_eq!(reader.is_ok(), accepted, "reader on {d}: {reader:?}");
        assert_eq!(v.is_valid(&d), accepted, "schema on {d}");
    }
    // The one rule beyond the schema: times must not go back.
    let back = json!({"format": "mien-state-script", "version": 1,
        "events": [{"t": 1, "signal": "reset"}, {"t": 0.5, "signal": "reset"}]});
    let path = dir.path().join("back.json");
    std::fs::write(&path, back.to_string()).unwrap();
    assert!(v.is_valid(&back));
    let e = crate::Script::read(&path).unwrap_err().to_string();
    assert!(e.contains("events[1]") && e.contains("goes back"), "{e}");
}

fn result(hashes: &[(&str, u64)], final_hash: u64) -> super::exec::RunResult {
    super::exec::RunResult {
        hashes: hashes
            .iter()
            .enumerate()
            .map(|(k, (name, h))| super::exec::Recorded {
                pointer: format!("/steps/{}/hash", 2 * k),
                name: (*name).to_owned(),
                t: k as f64,
                hash: *h,
            })
            .collect(),
        outcomes: Vec::new(),
        captures: Vec::new(),
        states: Vec::new(),
        final_hash,
        end_s: 2.0,
        frames: 3,
    }
}

#[test]
fn a_hash_the_repeat_does_not_reproduce_is_a_failure_naming_its_step() {
    use super::report::compare;
    let a = result(&[("start", 1), ("talking", 0xabc)], 7);
    let (h, f) = compare(&a, &result(&[("start", 1), ("talking", 0xabc)], 7));
    assert!(f.is_empty() && h.iter().all(|e| e.matched));
    assert_eq!(h.len(), 3);
    assert_eq!((h[2].name.as_str(), h[2].step.as_str()), ("final", ""));

    let (h, f) = compare(&a, &result(&[("start", 1), ("talking", 0xabd)], 7));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].step, "/steps/2/hash");
    assert_eq!(
        f[0].message,
        "hash `talking` did not repeat: first run 0000000000000abc, repeat 0000000000000abd"
    );
    assert!(h[0].matched && !h[1].matched && h[2].matched);

    // A different final frame, and a repeat that recorded fewer hashes.
    let (_, f) = compare(&a, &result(&[("start", 1)], 8));
    let steps: Vec<&str> = f.iter().map(|x| x.step.as_str()).collect();
    assert_eq!(steps, ["/steps/2/hash", ""]);
    assert!(f[0].message.ends_with("repeat none"), "{}", f[0].message);
}

#[test]
fn a_bad_ground_is_named_in_words_not_by_its_pattern() {
    let p = schema(&one(json!({"ground": "hill:3"})));
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].pointer, "/steps/0/ground");
    assert!(
        p[0].message
            .contains("\"hill:3\" is not none, flat, flat:HEIGHT"),
        "{}",
        p[0].message
    );
}
