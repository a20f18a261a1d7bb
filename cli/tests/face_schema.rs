//! `docs/schemas/face.schema.json` accepts what the face reader (`FaceDef::from_json`) accepts
//! and refuses what it refuses, on the face files the tests and docs use and on one case per rule.

use std::path::Path;

use mien_core::face::FaceDef;
use serde_json::{Value, json};

fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schemas/face.schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

/// `(document, the reader accepts it)`.
fn faces() -> Vec<(Value, bool)> {
    let f = |body: Value| {
        let mut d = json!({"format": "mien-face", "version": 1});
        for (k, v) in body.as_object().unwrap() {
            d[k] = v.clone();
        }
        d
    };
    vec![
        // The faces of the tests (cli/tests/animator.rs, speech.rs; core face and speech tests).
        (f(json!({})), true),
        (
            f(json!({"expressions": {"grin": {"mouthSmile_L": 1, "mouthSmile_R": 1}}})),
            true,
        ),
        (
            f(
                json!({"visemes": {"PP": {"mouthClose": 1.0, "lipsTogether": 0.5}, "aa": {"jawOpen": 0.8}}}),
            ),
            true,
        ),
        (f(json!({"visemes": {"PP": {"lipsTogether": 1}}})), true),
        (
            f(json!({
                "description": "every section",
                "expressions": {"grin": {"mouthSmileLeft": 1, "mouthSmileRight": 1}},
                "expression_speed": 10,
                "blink": {"targets": {"eyeBlinkLeft": 1}, "duration": 0.3, "close_fraction": 0.5, "seed": 42, "interval": [1, 2]},
                "look": {"mode": "morphs", "joints": ["eyeL", "eyeR"], "centers": [[0.03, 1.6, 0.1], [-0.03, 1.6, 0.1]],
                         "forward": [0, 0, 1], "up": [0, 1, 0], "yaw_limit_deg": 20, "pitch_limit_deg": 15,
                         "max_speed_deg": 300, "degrees_per_unit": 20},
                "clamp": "all"
            })),
            true,
        ),
        (f(json!({"clamp": ["jawOpen", "mouthClose"]})), true),
        (f(json!({"clamp": "none"})), true),
        // One refusal per rule.
        (json!({"format": "mien-face"}), false),
        (f(json!({"visemes": {}, "extra": 1})), false),
        (json!({"format": "mien-face", "version": 2}), false),
        (json!({"format": "face", "version": 1}), false),
        (f(json!({"visemes": {"AA": {"jawOpen": 1}}})), false),
        (f(json!({"visemes": {"aa": {"jawOpen": 3}}})), false),
        (f(json!({"visemes": {"aa": [1]}})), false),
        (
            f(json!({"expressions": {"grin": {"jawOpen": -2.5}}})),
            false,
        ),
        (f(json!({"expression_speed": 0})), false),
        (f(json!({"blink": {"duration": -1}})), false),
        (f(json!({"blink": {"duration": 3}})), false),
        (f(json!({"blink": {"close_fraction": 1}})), false),
        (f(json!({"blink": {"interval": [0, 1]}})), false),
        (f(json!({"blink": {"interval": [1]}})), false),
        (f(json!({"blink": {"seed": -1}})), false),
        (f(json!({"blink": {"wink": 1}})), false),
        (f(json!({"look": {"mode": "eyes"}})), false),
        (f(json!({"look": {"wink": 1}})), false),
        (f(json!({"look": {"forward": [0, 0, 0]}})), false),
        (f(json!({"look": {"yaw_limit_deg": 91}})), false),
        (f(json!({"look": {"max_speed_deg": 0}})), false),
        (f(json!({"look": {"joints": ["eyeL"]}})), false),
        (f(json!({"clamp": 5})), false),
        (f(json!({"clamp": "some"})), false),
    ]
}

#[test]
fn the_face_schema_accepts_what_the_reader_accepts() {
    let v = validator();
    for (d, accepted) in faces() {
        let reader = FaceDef::from_json(&d.to_string(), "face.json");
        assert_eq!(reader.is_ok(), accepted, "reader on {d}: {reader:?}");
        assert_eq!(v.is_valid(&d), accepted, "schema on {d}");
    }
    // The one rule beyond the schema: a blink interval's min must not exceed its max.
    let back = json!({"format": "mien-face", "version": 1, "blink": {"interval": [3, 1]}});
    assert!(v.is_valid(&back));
    assert!(FaceDef::from_json(&back.to_string(), "face.json").is_err());
}
