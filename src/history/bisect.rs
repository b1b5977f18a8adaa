//! What to bisect for an alert: the `tardy bisect` command line that
//! finds the commit behind it, from the alert's commit range and the
//! stored command of one of its series. `tardy history bisect` runs it;
//! the alert page of `tardy serve` shows it to copy.

use crate::store::history::Alert;
use crate::store::{DbError, History};

/// What to run for an alert: the `tardy bisect` arguments over its range
/// (widened `widen` times), and the next wider range to try when the ends
/// do not reproduce the change.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub argv: Vec<String>,
    pub good: String,
    pub bad: String,
    /// The range one widening further, when the series has points beyond.
    pub wider: Option<(String, String)>,
}

/// The good and bad commits of `alert` widened `widen` times over the
/// points of `series_id`: each widening moves both ends out by 2, 4, 8...
/// points (the alert's range already spans every place its boundary may
/// be, at 99%; a bisection whose ends do not reproduce needs wider ones).
fn range(
    store: &dyn History,
    series_id: i64,
    alert: &Alert,
    widen: u32,
) -> Result<Option<(String, String)>, String> {
    let (Some(good), Some(bad)) = (&alert.from_commit, &alert.to_commit) else {
        return Ok(None);
    };
    if widen == 0 {
        return Ok(Some((good.clone(), bad.clone())));
    }
    let points = store
        .points(series_id, &Default::default())
        .map_err(|e| e.to_string())?;
    let at = |c: &str| points.iter().rposition(|p| p.commit.as_deref() == Some(c));
    let (Some(g), Some(b)) = (at(good), at(bad)) else {
        return Ok(None);
    };
    let extra = 1usize << widen.min(20);
    let (g, b) = (g.saturating_sub(extra), (b + extra).min(points.len() - 1));
    match (&points[g].commit, &points[b].commit) {
        (Some(x), Some(y)) => Ok(Some((x.clone(), y.clone()))),
        _ => Ok(None),
    }
}

/// The plan of `tardy bisect` for `alert` (on `series`, else the first
/// member whose command is known), its range widened `widen` times.
pub fn bisect_plan(
    store: &dyn History,
    alert: &Alert,
    series: Option<&str>,
    widen: u32,
) -> Result<Plan, String> {
    let id = alert.id;
    if alert.from_commit.is_none() || alert.to_commit.is_none() {
        return Err(format!(
            "alert #{id} has no commit range (its points were saved without git data)"
        ));
    }
    let member = match series {
        Some(name) => alert
            .members
            .iter()
            .find(|m| m.series == name)
            .ok_or_else(|| format!("alert #{id} does not include series '{name}'"))?,
        // Among its 100 largest changes: an alert of 100,000 series does
        // not look up every one of them for a command.
        None => alert
            .members
            .iter()
            .take(100)
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
    let (good, bad) = range(store, info.id, alert, widen)?.ok_or_else(|| {
        format!(
            "alert #{id}'s commits are not among the points of '{}'",
            info.name
        )
    })?;
    let wider =
        range(store, info.id, alert, widen + 1)?.filter(|w| *w != (good.clone(), bad.clone()));
    let Some(command) = &info.command else {
        return Err(format!(
            "series '{}' was stored without its command (push it with `tardy run --push` or a tardy or hyperfine JSON), so run \
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
    argv.push(format!("{:.2}%", threshold * 100.0));
    if !member.regression {
        argv.push("--invert".into());
    }
    argv.extend(info.options.iter().cloned());
    argv.push("--".into());
    argv.push(command.clone());
    Ok(Plan {
        argv,
        good,
        bad,
        wider,
    })
}

/// The arguments of `tardy bisect` for `alert` over its range.
pub fn bisect_argv(
    store: &dyn History,
    alert: &Alert,
    series: Option<&str>,
) -> Result<Vec<String>, String> {
    bisect_plan(store, alert, series, 0).map(|p| p.argv)
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
