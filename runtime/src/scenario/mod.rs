//! Scenarios: strict, headless, deterministic runs of a character (seed 003
//! "character.scenario.run"), in the library so an embedder runs the same files `mien scenario`
//! does. A `mien-scenario` file (docs/scenarios.md, `docs/schemas/scenario.schema.json`) is checked
//! against the schema and parsed into a typed model ([`model::Scenario`]); every name and file it
//! refers to is resolved against the character before any step runs ([`prepare`] → [`Plan`], or
//! every [`Problem`] at once with its JSON pointer). Then [`run_twice`] runs the steps on the
//! media clock (every failed assertion is an outcome and the run goes on), runs the whole scenario
//! again from scratch and compares every recorded hash.
//!
//! ```no_run
//! use mien_runtime::scenario;
//! let mut plan = scenario::prepare("walk.scenario.json".as_ref(), false)
//!     .map_err(|p| format!("{} problems", p.len()))?;
//! let (report, _images) = scenario::run_twice(&mut plan, vec![], Default::default(), &|| false)?;
//! assert!(report.passed, "{:?}", report.failures);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | stage | module |
//! |---|---|
//! | read, schema, typed model | [`read`], [`schema`], [`parse`] → [`model`] |
//! | resolve against the character | [`check`], [`sources`], [`bind`] |
//! | run the steps (the body: [`crate::body`]) | [`exec`] (captures: [`capture`]) |
//! | the report of two runs | [`report`] |

pub mod bind;
pub mod body;
pub mod capture;
pub mod check;
pub mod exec;
pub mod model;
pub mod parse;
pub mod read;
pub mod report;
pub mod schema;
pub mod sources;
#[cfg(test)]
mod tests;

pub use check::{Plan, prepare};
pub use report::{Report, run_twice};

/// One problem with a scenario, at a JSON pointer into it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// RFC 6901 pointer (`/steps/3/assert/min`; empty for the whole document).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    /// `/steps/3/assert/min: 2 is above max 1` (`/` for the whole document).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// What an invalid scenario is refused with: `FILE: invalid scenario (N problems); no step was
/// run`, then each problem on its own line, indented by two spaces (what `mien scenario` prints
/// after `error: `, and the Python package's `ScenarioError` says).
pub fn invalid_text(file: &std::path::Path, problems: &[Problem]) -> String {
    let mut text = format!(
        "{}: invalid scenario ({} problem{}); no step was run",
        file.display(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    for p in problems {
        text.push_str(&format!("\n  {p}"));
    }
    text
}

impl Problem {
    /// A problem at `pointer`.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}
