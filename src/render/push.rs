//! The lines `tardy push` (and `run --push`) writes about each upload: the
//! retries while a server does not answer, what was stored, the alerts it
//! opened and the regressions still open.

use serde_json::Value;

/// While a server does not answer: which attempt failed, why, and when the
/// next one is.
pub fn retry_line(file: &str, failed: u32, of: u32, why: &str, wait_s: f64) -> String {
    format!("tardy: {file}: attempt {failed} of {of} failed ({why}); trying again in {wait_s:.1} s")
}

/// An upload the server refused.
pub fn refused_line(file: &str, status: u16, message: &str) -> String {
    format!(
        "tardy: error: {file}: the server refused it (HTTP {status}): {}",
        crate::fmt::clip::message(message)
    )
}

/// An upload no attempt delivered.
pub fn failed_line(file: &str, message: &str) -> String {
    format!(
        "tardy: error: {file}: {}",
        crate::fmt::clip::message(message)
    )
}

/// Something in a file read but left out.
pub fn warning_line(file: &str, text: &str) -> String {
    format!(
        "tardy: {file}: warning: {}",
        crate::fmt::clip::message(text)
    )
}

/// What the server's answer `b` to `file` (run `run_id`, after `attempts`)
/// says: stored or stored before, its warnings, the alerts it opened and
/// the regressions still open on its series (with their pages under `url`).
pub fn answer_lines(url: &str, file: &str, b: &Value, run_id: &str, attempts: u32) -> Vec<String> {
    let retried = if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    };
    match b.get("status").and_then(|s| s.as_str()) {
        // An earlier attempt reached the server, which stored it, and its answer
        // was lost on the way back: this upload is stored, once.
        Some("duplicate") if attempts > 1 => vec![format!(
            "tardy: {file}: stored (by an earlier attempt whose answer was lost; run {run_id}){retried}"
        )],
        Some("duplicate") => vec![format!(
            "tardy: {file}: already stored (run {run_id}) by an earlier push; nothing written"
        )],
        _ => {
            let series = b
                .get("series")
                .and_then(|s| s.as_array())
                .map_or(0, Vec::len);
            let points = b.get("points").and_then(|s| s.as_u64()).unwrap_or(0);
            let mut lines = vec![format!(
                "tardy: {file}: stored {points} point{} in {series} series (run {run_id}){retried}",
                if points == 1 { "" } else { "s" },
            )];
            lines.extend(
                b.get("warnings")
                    .and_then(|w| w.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|w| w.as_str())
                    .map(|w| warning_line(file, w)),
            );
            lines.extend(alert_lines(url, b));
            lines
        }
    }
}

/// The answer's new alerts, then the regressions still open that are not new.
fn alert_lines(url: &str, b: &Value) -> Vec<String> {
    let url = url.trim_end_matches('/');
    let text = |a: &Value, k: &str| {
        a.get(k)
            .and_then(|s| s.as_str())
            .unwrap_or(if k == "url" { "" } else { "?" })
            .to_string()
    };
    let list = |k: &str| {
        b.get(k)
            .and_then(|a| a.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let id = |a: &Value| a.get("id").and_then(|i| i.as_u64());
    let alerts = list("alerts");
    let mut lines = Vec::new();
    for a in &alerts {
        lines.push(format!(
            "tardy: new alert: {} in {} series between {} and {}: {url}{}",
            a.get("kind").and_then(|k| k.as_str()).unwrap_or("change"),
            a.get("series").and_then(|s| s.as_u64()).unwrap_or(0),
            text(a, "from_commit"),
            text(a, "to_commit"),
            text(a, "url")
        ));
    }
    let new: Vec<u64> = alerts.iter().filter_map(id).collect();
    for a in list("open_regressions") {
        let n = id(&a).unwrap_or(0);
        if new.contains(&n) {
            continue;
        }
        lines.push(format!(
            "tardy: open regression alert #{n} (not acknowledged) between {} and {}: {url}{}",
            text(&a, "from_commit"),
            text(&a, "to_commit"),
            text(&a, "url")
        ));
    }
    lines
}
