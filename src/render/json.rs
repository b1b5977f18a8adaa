//! JSON: the results file format (docs/results-format.md).

use crate::model::Results;

/// Pretty JSON of the results, newline-terminated.
pub fn results(r: &Results) -> String {
    let mut s =
        serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
