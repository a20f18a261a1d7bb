//! The scenario file's raw layer (STYLE 12): serde structs that mirror the JSON
//! (`deny_unknown_fields` everywhere), turned into the typed [`Scenario`] with every structural
//! rule of `docs/schemas/scenario.schema.json` checked and each problem named by a JSON pointer.
//!
//! The structural rules here and in the schema are the same set (a unit test feeds both the same
//! documents); [`super::check`] adds what a schema cannot say (min above max, names recorded
//! before use, totals) and what needs the character.

use mien_core::face::{AvatarState, Signal};
use serde::Deserialize;
use serde_json::Value;

use super::Problem;
use mien_core::anim::ground::Ground;

use super::model::{
    Assertion, BodySettings, BoneMeasure, CELL_RANGE, DEFAULT_CELL, DEFAULT_GOLDEN_TOLERANCE,
    FaceAction, MAX_COORD_M, MAX_OVERRIDE, MAX_SPEED, MAX_STEP_FRAMES, MAX_WIND, Range, Scenario,
    Source, Speech, Step,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRaw {
    format: String,
    version: Value,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    character: String,
    #[serde(default)]
    face: Option<String>,
    #[serde(default)]
    body: Option<BodyRaw>,
    steps: Vec<StepRaw>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyRaw {
    #[serde(default)]
    foot_ik: Option<String>,
    #[serde(default)]
    springs: Option<SpringsRaw>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum SpringsRaw {
    Auto,
    On,
    Off,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WalkRaw {
    speed: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransformRaw {
    position: Vec<f64>,
    #[serde(default)]
    yaw: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum StepRaw {
    Step(AdvanceRaw),
    Walk(WalkRaw),
    Transform(TransformRaw),
    Ground(String),
    Wind(Vec<f64>),
    Animate(AnimateRaw),
    Face(FaceRaw),
    Say(SayRaw),
    State(StateRaw),
    Hash(NameRaw),
    Assert(AssertRaw),
    Capture(CaptureRaw),
    Golden(GoldenRaw),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AdvanceRaw {
    frames: Value,
    dt: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnimateRaw {
    #[serde(default)]
    clip: Option<Value>,
    #[serde(default)]
    stream: Option<String>,
    #[serde(default)]
    rest: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaceRaw {
    #[serde(default)]
    expression: Option<String>,
    #[serde(default)]
    weight: Option<f64>,
    #[serde(default)]
    blink: Option<String>,
    #[serde(default)]
    blink_enabled: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    look_at: Option<Option<Vec<f64>>>,
    #[serde(default, rename = "override")]
    override_: Option<OverrideRaw>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverrideRaw {
    target: String,
    #[serde(deserialize_with = "nullable")]
    value: Option<Option<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SayRaw {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    phonemes: Option<Vec<(String, f64, f64)>>,
    #[serde(default)]
    sampler: Option<SamplerRaw>,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum SamplerRaw {
    Held,
    Envelope,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateRaw {
    signal: Signal,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameRaw {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaptureRaw {
    name: String,
    #[serde(default)]
    cell: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GoldenRaw {
    name: String,
    #[serde(default)]
    cell: Option<Value>,
    #[serde(default)]
    tolerance: Option<Value>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum AssertRaw {
    Morph {
        target: String,
        #[serde(default)]
        node: Option<String>,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Bone {
        node: String,
        axis: AxisRaw,
        #[serde(default)]
        of: Option<OfRaw>,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    BoneY {
        node: String,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    FootSlide {
        foot: String,
        max: f64,
    },
    ChainTip {
        spring: String,
        axis: AxisRaw,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    ClothMaxStretch {
        max: f64,
    },
    HairTip {
        axis: AxisRaw,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Time {
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    State {
        equals: AvatarState,
    },
    Hash {
        name: String,
        equals: String,
    },
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum AxisRaw {
    X,
    Y,
    Z,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum OfRaw {
    Position,
    Forward,
}

/// Distinguish a missing key (None) from `null` (Some(None)).
fn nullable<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

/// A JSON pointer token (RFC 6901 escaping).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The serde path of an error as a JSON pointer.
fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for s in path {
        match s {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push('/');
                out.push_str(&escape(key));
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// An integer in `lo..=hi` (JSON Schema's `integer`: any number with no fractional part).
fn integer(v: &Value, lo: u64, hi: u64) -> Option<u64> {
    let x = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })?;
    (lo..=hi).contains(&x).then_some(x)
}

/// A name of letters, digits, `_` and `-`, 1–64 long.
pub fn is_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parse `value` into a [`Scenario`]: serde (unknown keys refused) then every structural rule of
/// the schema. Returns every problem found (serde stops at its first).
///
/// # Errors
/// The problems, each with a JSON pointer.
pub fn parse(value: &Value) -> Result<Scenario, Vec<Problem>> {
    if !value.is_object() {
        return Err(vec![Problem::new("", "a scenario is a JSON object")]);
    }
    let raw: FileRaw = serde_path_to_error::deserialize(value)
        .map_err(|e| vec![Problem::new(pointer(e.path()), e.inner().to_string())])?;
    let mut p = Vec::new();
    if raw.format != "mien-scenario" {
        p.push(Problem::new("/format", "must be \"mien-scenario\""));
    }
    if integer(&raw.version, 1, 1).is_none() {
        p.push(Problem::new("/version", "must be 1"));
    }
    if raw.character.is_empty() {
        p.push(Problem::new("/character", "is empty"));
    }
    if raw.face.as_deref() == Some("") {
        p.push(Problem::new("/face", "is empty"));
    }
    let body = match raw.body {
        None => BodySettings::default(),
        Some(b) => {
            if b.foot_ik.as_deref() == Some("") {
                p.push(Problem::new("/body/foot_ik", "is empty"));
            }
            BodySettings {
                foot_ik: b.foot_ik,
                springs: b.springs.map(|s| {
                    match s {
                        SpringsRaw::Auto => "auto",
                        SpringsRaw::On => "on",
                        SpringsRaw::Off => "off",
                    }
                    .to_string()
                }),
            }
        }
    };
    if raw.steps.is_empty() || raw.steps.len() > 10_000 {
        p.push(Problem::new("/steps", "must hold 1 to 10 000 steps"));
    }
    let mut steps = Vec::with_capacity(raw.steps.len());
    for (i, s) in raw.steps.into_iter().enumerate() {
        if let Some(step) = step(s, i, &mut p) {
            steps.push(step);
        }
    }
    if !p.is_empty() {
        return Err(p);
    }
    Ok(Scenario {
        character: (raw.character != crate::character::BUILTIN_HEAD).then_some(raw.character),
        face: raw.face,
        body,
        steps,
    })
}

fn step(s: StepRaw, i: usize, p: &mut Vec<Problem>) -> Option<Step> {
    let at = |key: &str, field: &str| {
        if field.is_empty() {
            format!("/steps/{i}/{key}")
        } else {
            format!("/steps/{i}/{key}/{field}")
        }
    };
    let n = p.len();
    let mut bad = |ptr: String, msg: &str| p.push(Problem::new(ptr, msg));
    let step = match s {
        StepRaw::Step(a) => {
            let frames = integer(&a.frames, 1, u64::from(MAX_STEP_FRAMES));
            if frames.is_none() {
                bad(
                    at("step", "frames"),
                    "must be a whole number from 1 to 100 000",
                );
            }
            if !(a.dt > 0.0 && a.dt <= 1.0) {
                bad(at("step", "dt"), "must be more than 0 and at most 1 second");
            }
            Step::Advance {
                frames: frames.unwrap_or(1) as u32,
                dt: a.dt,
            }
        }
        StepRaw::Walk(w) => {
            if !(w.speed.is_finite() && (0.0..=MAX_SPEED).contains(&w.speed)) {
                bad(at("walk", "speed"), "must be 0 to 100 m/s");
            }
            Step::Walk { speed: w.speed }
        }
        StepRaw::Transform(t) => {
            if t.position.len() != 3 {
                bad(
                    at("transform", "position"),
                    "must be three numbers [x, y, z]",
                );
            }
            for (k, x) in t.position.iter().enumerate() {
                if !(x.is_finite() && x.abs() <= MAX_COORD_M) {
                    bad(
                        format!("{}/{k}", at("transform", "position")),
                        "must be within ±1 000 000 metres",
                    );
                }
            }
            let yaw = t.yaw.unwrap_or(0.0);
            if !(yaw.is_finite() && yaw.abs() <= 360.0) {
                bad(at("transform", "yaw"), "must be −360 to 360 degrees");
            }
            let mut position = [0.0; 3];
            for (d, s) in position.iter_mut().zip(&t.position) {
                *d = *s;
            }
            Step::Transform {
                position,
                yaw_deg: yaw,
            }
        }
        StepRaw::Ground(g) => match Ground::parse(&g) {
            Ok(g) => Step::Ground(g),
            Err(e) => {
                bad(at("ground", ""), &e);
                Step::Ground(Ground::None)
            }
        },
        StepRaw::Wind(w) => {
            if w.len() != 3 {
                bad(at("wind", ""), "must be three numbers [x, y, z] (m/s²)");
            }
            for (k, x) in w.iter().enumerate() {
                if !(x.is_finite() && x.abs() <= MAX_WIND) {
                    bad(
                        format!("{}/{k}", at("wind", "")),
                        "must be within ±1000 m/s²",
                    );
                }
            }
            let mut v = [0.0; 3];
            for (d, s) in v.iter_mut().zip(&w) {
                *d = *s;
            }
            Step::Wind(v)
        }
        StepRaw::Animate(a) => {
            let given = [a.clip.is_some(), a.stream.is_some(), a.rest.is_some()];
            if given.iter().filter(|x| **x).count() != 1 {
                bad(at("animate", ""), "needs exactly one of clip, stream, rest");
            }
            let src = match (a.clip, a.stream, a.rest) {
                (Some(Value::String(s)), _, _) if !s.is_empty() => Source::Clip(s),
                (Some(v), _, _) => match integer(&v, 0, u64::MAX) {
                    Some(k) => Source::ClipIndex(k),
                    None => {
                        bad(at("animate", "clip"), "must be a clip name or index");
                        Source::Rest
                    }
                },
                (None, Some(s), _) => {
                    if s.is_empty() {
                        bad(at("animate", "stream"), "is empty");
                    }
                    Source::Stream(s)
                }
                (None, None, Some(v)) => {
                    if v != Value::Bool(true) {
                        bad(at("animate", "rest"), "must be true");
                    }
                    Source::Rest
                }
                (None, None, None) => Source::Rest,
            };
            Step::Animate(src)
        }
        StepRaw::Face(f) => Step::Face(face(f, &at("face", ""), &mut bad)),
        StepRaw::Say(s) => {
            let speech = match (s.file, s.phonemes) {
                (Some(f), None) => {
                    if f.is_empty() {
                        bad(at("say", "file"), "is empty");
                    }
                    Speech::File(f)
                }
                (None, Some(ph)) => {
                    if ph.is_empty() || ph.len() > 100_000 {
                        bad(at("say", "phonemes"), "must hold 1 to 100 000 phonemes");
                    }
                    for (k, (label, a, b)) in ph.iter().enumerate() {
                        if label.is_empty() {
                            bad(format!("{}/{k}/0", at("say", "phonemes")), "is empty");
                        }
                        for (j, x) in [(1, a), (2, b)] {
                            if !(0.0..=86_400.0).contains(x) {
                                bad(
                                    format!("{}/{k}/{j}", at("say", "phonemes")),
                                    "must be 0 to 86 400 seconds",
                                );
                            }
                        }
                    }
                    Speech::Phonemes(ph)
                }
                _ => {
                    bad(at("say", ""), "needs exactly one of file, phonemes");
                    Speech::Phonemes(Vec::new())
                }
            };
            Step::Say {
                speech,
                envelope: s.sampler == Some(SamplerRaw::Envelope),
            }
        }
        StepRaw::State(s) => Step::State(s.signal),
        StepRaw::Hash(h) => {
            if !is_name(&h.name) {
                bad(
                    at("hash", "name"),
                    "must be 1–64 letters, digits, `_` or `-`",
                );
            }
            Step::Hash(h.name)
        }
        StepRaw::Capture(c) => {
            if !is_name(&c.name) {
                bad(
                    at("capture", "name"),
                    "must be 1–64 letters, digits, `_` or `-`",
                );
            }
            let cell = match &c.cell {
                None => Some(u64::from(DEFAULT_CELL)),
                Some(v) => integer(v, u64::from(CELL_RANGE.0), u64::from(CELL_RANGE.1)),
            };
            if cell.is_none() {
                bad(
                    at("capture", "cell"),
                    "must be a whole number of pixels from 16 to 4096",
                );
            }
            Step::Capture {
                name: c.name,
                cell: cell.unwrap_or(u64::from(DEFAULT_CELL)) as u32,
            }
        }
        StepRaw::Golden(g) => {
            if !is_name(&g.name) {
                bad(
                    at("golden", "name"),
                    "must be 1–64 letters, digits, `_` or `-`",
                );
            }
            let cell = match &g.cell {
                None => Some(u64::from(DEFAULT_CELL)),
                Some(v) => integer(v, u64::from(CELL_RANGE.0), u64::from(CELL_RANGE.1)),
            };
            if cell.is_none() {
                bad(
                    at("golden", "cell"),
                    "must be a whole number of pixels from 16 to 4096",
                );
            }
            let tolerance = match &g.tolerance {
                None => Some(u64::from(DEFAULT_GOLDEN_TOLERANCE)),
                Some(v) => integer(v, 0, 255),
            };
            if tolerance.is_none() {
                bad(
                    at("golden", "tolerance"),
                    "must be a whole number of 8-bit levels from 0 to 255",
                );
            }
            Step::Golden {
                name: g.name,
                cell: cell.unwrap_or(u64::from(DEFAULT_CELL)) as u32,
                tolerance: tolerance.unwrap_or(0) as u8,
            }
        }
        StepRaw::Assert(a) => Step::Assert(assertion(a, &at("assert", ""), &mut bad)),
    };
    (p.len() == n).then_some(step)
}

fn face(f: FaceRaw, at: &str, bad: &mut impl FnMut(String, &str)) -> Vec<FaceAction> {
    let mut out = Vec::new();
    match (f.expression, f.weight) {
        (Some(e), Some(w)) => {
            if e.is_empty() {
                bad(format!("{at}/expression"), "is empty");
            }
            if !(0.0..=1.0).contains(&w) {
                bad(format!("{at}/weight"), "must be 0 to 1");
            }
            out.push(FaceAction::Expression(e, w as f32));
        }
        (Some(_), None) => bad(format!("{at}/expression"), "needs a weight"),
        (None, Some(_)) => bad(format!("{at}/weight"), "needs an expression"),
        (None, None) => {}
    }
    if let Some(b) = f.blink {
        if b != "now" {
            bad(format!("{at}/blink"), "must be \"now\"");
        }
        out.push(FaceAction::Blink);
    }
    if let Some(on) = f.blink_enabled {
        out.push(FaceAction::BlinkEnabled(on));
    }
    if let Some(l) = f.look_at {
        let p = match l {
            None => None,
            Some(v) => {
                if v.len() != 3 || v.iter().any(|c| c.abs() > MAX_COORD_M) {
                    bad(
                        format!("{at}/look_at"),
                        "must be [x, y, z] metres, each within ±1 000 000, or null",
                    );
                }
                let c = |k: usize| v.get(k).copied().unwrap_or(0.0) as f32;
                Some([c(0), c(1), c(2)])
            }
        };
        out.push(FaceAction::LookAt(p));
    }
    if let Some(o) = f.override_ {
        let v = o.value.flatten();
        if o.target.is_empty() {
            bad(format!("{at}/override/target"), "is empty");
        }
        if v.is_some_and(|x| x.abs() > MAX_OVERRIDE) {
            bad(
                format!("{at}/override/value"),
                "must be −2 to 2 (the rig's morph weight limit) or null",
            );
        }
        out.push(FaceAction::Override(o.target, v.map(|x| x as f32)));
    }
    if out.is_empty() {
        bad(at.to_owned(), "does nothing: give at least one action");
    }
    out
}

fn assertion(a: AssertRaw, at: &str, bad: &mut impl FnMut(String, &str)) -> Assertion {
    let mut range = |min: Option<f64>, max: Option<f64>| {
        if min.is_none() && max.is_none() {
            bad(at.to_owned(), "needs min, max or both");
        }
        Range { min, max }
    };
    match a {
        AssertRaw::Morph {
            target,
            node,
            min,
            max,
        } => {
            let range = range(min, max);
            if target.is_empty() {
                bad(format!("{at}/target"), "is empty");
            }
            if node.as_deref() == Some("") {
                bad(format!("{at}/node"), "is empty");
            }
            Assertion::Morph {
                target,
                node,
                range,
            }
        }
        AssertRaw::Bone {
            node,
            axis,
            of,
            min,
            max,
        } => {
            let range = range(min, max);
            if node.is_empty() {
                bad(format!("{at}/node"), "is empty");
            }
            Assertion::Bone {
                node,
                axis: axis as usize,
                of: match of {
                    Some(OfRaw::Forward) => BoneMeasure::Forward,
                    _ => BoneMeasure::Position,
                },
                range,
            }
        }
        AssertRaw::BoneY { node, min, max } => {
            let range = range(min, max);
            if node.is_empty() {
                bad(format!("{at}/node"), "is empty");
            }
            Assertion::BoneY { node, range }
        }
        AssertRaw::FootSlide { foot, max } => {
            if foot.is_empty() {
                bad(format!("{at}/foot"), "is empty");
            }
            if !(max.is_finite() && (0.0..=MAX_COORD_M).contains(&max)) {
                bad(format!("{at}/max"), "must be 0 to 1 000 000 metres");
            }
            Assertion::FootSlide { foot, max }
        }
        AssertRaw::ChainTip {
            spring,
            axis,
            min,
            max,
        } => {
            let range = range(min, max);
            if spring.is_empty() {
                bad(format!("{at}/spring"), "is empty");
            }
            Assertion::ChainTip {
                spring,
                axis: axis as usize,
                range,
            }
        }
        AssertRaw::ClothMaxStretch { max } => {
            if !(max.is_finite() && max >= 0.0) {
                bad(format!("{at}/max"), "must be a stretch ≥ 0");
            }
            Assertion::ClothMaxStretch { max }
        }
        AssertRaw::HairTip { axis, min, max } => Assertion::HairTip {
            axis: axis as usize,
            range: range(min, max),
        },
        AssertRaw::Time { min, max } => Assertion::Time(range(min, max)),
        AssertRaw::State { equals } => Assertion::State(equals),
        AssertRaw::Hash { name, equals } => {
            if !is_name(&name) {
                bad(
                    format!("{at}/name"),
                    "must be 1–64 letters, digits, `_` or `-`",
                );
            }
            let ok = equals.len() == 16
                && equals
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !ok {
                bad(format!("{at}/equals"), "must be 16 lower-case hex digits");
            }
            Assertion::Hash {
                name,
                equals: u64::from_str_radix(&equals, 16).unwrap_or(0),
            }
        }
    }
}
