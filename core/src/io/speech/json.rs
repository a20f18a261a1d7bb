//! Small accessors over a parsed `serde_json::Value` that name every failure by JSON pointer
//! (RFC 6901) — the shared layer under the JSON speech readers.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// `parent` + `/key`, with `~` and `/` escaped as RFC 6901 §3 says.
pub(crate) fn ptr(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// `parent` + `/index`.
pub(crate) fn ptr_at(parent: &str, index: usize) -> String {
    format!("{parent}/{index}")
}

/// An [`Error::Format`] at `pointer` (the root is shown as `/`), with the element index.
pub(crate) fn err(file: &str, pointer: &str, index: Option<usize>, reason: String) -> Error {
    Error::Format {
        file: file.to_owned(),
        field: if pointer.is_empty() {
            "/".to_owned()
        } else {
            pointer.to_owned()
        },
        index,
        reason,
    }
}

/// Parse JSON text; a syntax error names its line and column.
pub(crate) fn parse(text: &str, file: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        Error::format_at(
            file,
            "JSON",
            e.line(),
            format!(
                "not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })
}

/// The JSON type of `v`, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `v` as an object.
pub(crate) fn object<'v>(
    v: &'v Value,
    file: &str,
    at: &str,
    index: Option<usize>,
) -> Result<&'v Map<String, Value>> {
    v.as_object().ok_or_else(|| {
        err(
            file,
            at,
            index,
            format!("expected an object, found {}", kind(v)),
        )
    })
}

/// `v` as an array.
pub(crate) fn array<'v>(
    v: &'v Value,
    file: &str,
    at: &str,
    index: Option<usize>,
) -> Result<&'v Vec<Value>> {
    v.as_array().ok_or_else(|| {
        err(
            file,
            at,
            index,
            format!("expected an array, found {}", kind(v)),
        )
    })
}

/// `v` as a string.
pub(crate) fn string<'v>(
    v: &'v Value,
    file: &str,
    at: &str,
    index: Option<usize>,
) -> Result<&'v str> {
    v.as_str().ok_or_else(|| {
        err(
            file,
            at,
            index,
            format!("expected a string, found {}", kind(v)),
        )
    })
}

/// `v` as a finite, non-negative number.
pub(crate) fn time(v: &Value, file: &str, at: &str, index: Option<usize>) -> Result<f64> {
    match v.as_f64() {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Some(x) => Err(err(
            file,
            at,
            index,
            format!("{x} is not a finite non-negative time"),
        )),
        None => Err(err(
            file,
            at,
            index,
            format!("expected a number, found {}", kind(v)),
        )),
    }
}

/// The required member `key` of `obj` (at `at`).
pub(crate) fn member<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    file: &str,
    at: &str,
    index: Option<usize>,
) -> Result<&'v Value> {
    obj.get(key)
        .ok_or_else(|| err(file, &ptr(at, key), index, format!("`{key}` is missing")))
}

/// Refuse any member of `obj` not in `allowed`, naming the first by pointer (mien's own format is
/// strict: a misspelt key is an error, never ignored).
pub(crate) fn deny_unknown(
    obj: &Map<String, Value>,
    allowed: &[&str],
    file: &str,
    at: &str,
    index: Option<usize>,
) -> Result<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(err(
            file,
            &ptr(at, k),
            index,
            format!("unknown key `{k}` (allowed: {})", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}
