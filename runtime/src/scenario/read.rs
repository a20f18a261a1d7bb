//! Reading a scenario file: bytes (capped) → JSON → schema → typed model. Every problem carries a
//! JSON pointer; the schema's problems are all listed (the typed model is parsed only from a
//! document the schema accepted, so its problems are the ones a schema cannot state).

use std::path::Path;

use serde_json::Value;

use super::Problem;
use super::model::Scenario;
use super::parse::parse;
use super::schema::{problems, scenario_validator};

/// Largest scenario file read, bytes (4 MiB: about 40 000 steps).
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

/// Parse JSON text into a value; a number too large for f64 or a syntax error is named with the
/// pointer of where it stands when serde can tell, and the line and column.
///
/// # Errors
/// The one problem found.
pub fn json(bytes: &[u8]) -> Result<Value, Problem> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let v: Value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let mut at = String::new();
        for s in e.path() {
            use serde_path_to_error::Segment;
            match s {
                Segment::Seq { index } => at.push_str(&format!("/{index}")),
                Segment::Map { key } => {
                    at.push('/');
                    at.push_str(&super::parse::escape(key));
                }
                _ => {}
            }
        }
        Problem::new(at, format!("not valid JSON: {}", e.inner()))
    })?;
    de.end()
        .map_err(|e| Problem::new("", format!("not valid JSON: {e}")))?;
    Ok(v)
}

/// Check `value` against the schema, then parse it into a [`Scenario`].
///
/// # Errors
/// Every schema problem; else the typed model's problems.
pub fn scenario_from_value(value: &Value) -> Result<Scenario, Vec<Problem>> {
    let validator = scenario_validator().map_err(|e| vec![Problem::new("", e.to_string())])?;
    let p = problems(validator, value);
    if !p.is_empty() {
        return Err(p);
    }
    parse(value)
}

/// Read and check the scenario at `path` (schema and typed model; names and files are resolved
/// by [`super::check`]).
///
/// # Errors
/// Unreadable files (pointer `""`), invalid JSON, schema and model problems.
pub fn scenario(path: &Path) -> Result<Scenario, Vec<Problem>> {
    let bytes = mien_core::io::read::read_file_capped(path, MAX_SCENARIO_BYTES)
        .map_err(|e| vec![Problem::new("", format!("cannot read the scenario: {e}"))])?;
    let value = json(&bytes).map_err(|p| vec![p])?;
    scenario_from_value(&value)
}
