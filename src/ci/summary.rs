//! GitHub Actions' job summary: Markdown appended to the file named by
//! `GITHUB_STEP_SUMMARY` (shown on the run's page), as `tardy compare
//! --github`, `tardy tests diff --github` and `tardy ci --github` write it.

use std::io::Write;

/// Append `markdown` to the job summary; `Ok(false)` when there is none
/// (`GITHUB_STEP_SUMMARY` unset: not in a GitHub Actions job).
pub fn append(markdown: &str) -> Result<bool, String> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Ok(false);
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown.as_bytes()))
        .map_err(|e| {
            format!(
                "cannot write the job summary {}: {e}",
                path.to_string_lossy()
            )
        })?;
    Ok(true)
}
