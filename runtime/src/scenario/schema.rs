//! The shipped JSON Schemas (embedded with `include_str!`) and validation against them with the
//! `jsonschema` crate (draft 2020-12, no resolvers: the schemas have only internal `$ref`s).
//!
//! Every error becomes a [`Problem`] whose pointer is the instance location (`jsonschema`'s
//! instance paths are RFC 6901 pointers); an `additionalProperties` error is moved onto the
//! unexpected key (`/steps/3/assert` + `mni` → `/steps/3/assert/mni`), so a misspelled key is
//! named where it stands.

use std::sync::OnceLock;

use crate::error::{Error, Result};
use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::Problem;
use super::parse::escape;

/// `docs/schemas/scenario.schema.json`.
pub const SCENARIO_SCHEMA: &str = include_str!("../../../docs/schemas/scenario.schema.json");

/// `docs/schemas/state-script.schema.json` (`mien animate --state-script`; checked against the
/// reader by the tests).
#[cfg(test)]
pub const STATE_SCRIPT_SCHEMA: &str =
    include_str!("../../../docs/schemas/state-script.schema.json");

/// Compile an embedded schema.
///
/// # Errors
/// When the embedded text is not a valid 2020-12 schema (a build defect, caught by the tests).
pub fn compile(text: &str) -> Result<Validator> {
    let schema: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid("an embedded schema", format!("not JSON: {e}")))?;
    jsonschema::draft202012::new(&schema)
        .map_err(|e| Error::invalid("an embedded schema", format!("does not compile: {e}")))
}

/// The scenario validator, compiled once.
///
/// # Errors
/// As [`compile`].
pub fn scenario_validator() -> Result<&'static Validator> {
    static V: OnceLock<std::result::Result<Validator, String>> = OnceLock::new();
    V.get_or_init(|| compile(SCENARIO_SCHEMA).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::invalid("the scenario schema", e.clone()))
}

/// Longest message kept from one schema error, characters (messages quote the instance).
const MAX_MESSAGE_CHARS: usize = 300;

/// A schema error in words: `anyOf` / `oneOf` failures list what each allowed form wanted.
fn message(e: &jsonschema::ValidationError<'_>) -> String {
    let m = match e.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            let forms: Vec<String> = context
                .iter()
                .map(|errs| {
                    errs.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .collect();
            format!("fits none of the allowed forms: {}", forms.join("; or "))
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "fits more than one of the allowed forms; give exactly one".to_string()
        }
        // A ground's short form in words rather than its pattern.
        ValidationErrorKind::Pattern { .. }
            if e.instance_path().to_string().ends_with("/ground") =>
        {
            format!(
                "{} is not none, flat, flat:HEIGHT, slope:DEGREES or step:HEIGHT[:Z]",
                e.instance()
            )
        }
        _ => e.to_string(),
    };
    if m.chars().count() > MAX_MESSAGE_CHARS {
        let cut: String = m.chars().take(MAX_MESSAGE_CHARS).collect();
        format!("{cut}…")
    } else {
        m
    }
}

/// Every schema error of `instance`, pointers first-to-last in document order of discovery,
/// duplicates removed.
pub fn problems(validator: &Validator, instance: &Value) -> Vec<Problem> {
    let mut out: Vec<Problem> = Vec::new();
    for e in validator.iter_errors(instance) {
        let at = e.instance_path().as_str().to_owned();
        match e.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for k in unexpected {
                    out.push(Problem::new(
                        format!("{at}/{}", escape(k)),
                        "is not a known key here",
                    ));
                }
            }
            _ => out.push(Problem::new(at, message(&e))),
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert((p.pointer.clone(), p.message.clone())));
    out
}
