//! `mien inspect FILE`: what a character, stream or splat file holds.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

/// Describe `path` as text (or JSON when `as_json`): [`mien_runtime::inspect::inspect`].
///
/// # Errors
/// Unknown file kinds and every reader error, with the file named.
pub fn run(path: &Path, as_json: bool) -> Result<String> {
    let value = mien_runtime::inspect::inspect(path)?;
    if as_json {
        return serde_json::to_string_pretty(&value).context("cannot serialise");
    }
    Ok(to_text(&value, 0))
}

/// Indented `key: value` text of a JSON value.
fn to_text(v: &serde_json::Value, indent: usize) -> String {
    let pad = "  ".repeat(indent);
    let mut out = String::new();
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                match x {
                    serde_json::Value::Object(_) => {
                        let _ = writeln!(out, "{pad}{k}:");
                        out.push_str(&to_text(x, indent + 1));
                    }
                    serde_json::Value::Array(a) if a.iter().any(|e| e.is_object()) => {
                        let _ = writeln!(out, "{pad}{k}:");
                        for e in a {
                            out.push_str(&to_text(e, indent + 1));
                            let _ = writeln!(out);
                        }
                    }
                    // Long lists, and lists of sentences, one item a line.
                    serde_json::Value::Array(a)
                        if a.len() > 6 || a.iter().map(|e| scalar(e).len()).sum::<usize>() > 80 =>
                    {
                        let _ = writeln!(out, "{pad}{k} ({}):", a.len());
                        for e in a {
                            let _ = writeln!(out, "{pad}  {}", scalar(e));
                        }
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{k}: {}", scalar(x));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other));
        }
    }
    out
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) if a.is_empty() => "none".into(),
        serde_json::Value::Array(a) => a.iter().map(scalar).collect::<Vec<_>>().join(", "),
        serde_json::Value::Null => "-".into(),
        other => other.to_string(),
    }
}
