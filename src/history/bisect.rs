//! What to bisect for an alert: the `tardy bisect` command line that
//! finds the commit behind it, from the alert's commit range and the
//! stored command of one of its series. `tardy history bisect` runs it;
//! the alert page of `tardy serve` shows it to copy.

use crate::store::history::Alert;
use crate::store::{DbError, History};

/// The arguments of `tardy bisect` for `alert` (on `series`, else the first
/// member whose command is known).
pub fn bisect_argv(
    store: &dyn History,
    alert: &Alert,
    series: Option<&str>,
) -> Result<Vec<String>, String> {
    let id = alert.id;
    let (Some(good), Some(bad)) = (&alert.from_commit, &alert.to_commit) else {
        return Err(format!(
            "alert #{id} has no commit range (its points were saved without git data)"
        ));
    };
    let member = match series {
        Some(name) => alert
            .members
            .iter()
            .find(|m| m.series == name)
            .ok_or_else(|| format!("alert #{id} does not include series '{name}'"))?,
        None => alert
            .members
            .iter()
            .find(|m| {
                store
                    .series(&m.series)
                    .ok()
                    .flatten()
                    .is_some_and(|s| s.command.is_some())
            })
            .or(alert.members.first())
            .ok_or_else(|| format!("alert #{id} has no series"))?,
    };
    let info = store
        .series(&member.series)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| DbError::NoSeries(member.series.clone()).to_string())?;
    let Some(command) = &info.command else {
        return Err(format!(
            "series '{}' was not recorded by `tardy run --save`, so its command is unknown; run \
`tardy bisect --good {good} --bad {bad} -- CMD` yourself",
            info.name
        ));
    };
    let mut argv: Vec<String> = vec![
        "bisect".into(),
        "--good".into(),
        good.clone(),
        "--bad".into(),
        bad.clone(),
    ];
    let threshold = info
        .threshold
        .unwrap_or((member.change.abs() / 2.0).max(0.01));
    argv.push("--threshold".into());
    argv.push(format!("{:.2}", threshold * 100.0));
    if !member.regression {
        argv.push("--invert".into());
    }
    argv.push("--".into());
    argv.push(command.clone());
    Ok(argv)
}

/// The arguments as one shell line, quoted where needed.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty()
                || a.contains([
                    ' ', '\'', '"', '$', '`', '\\', ';', '&', '|', '<', '>', '(', ')', '*', '?',
                ])
            {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
