//! One pull-request comment, kept up to date: `tardy comment FILE` finds the
//! comment that carries tardy's hidden marker (`<!-- tardy-ci -->`) among the
//! pull request's comments and edits it, or creates it the first time, through
//! GitHub's REST API (`GET`/`PATCH`/`POST` on issue comments). A pull request
//! from a fork gets a read-only token: the error says so and points to the
//! two-workflow pattern (measure on `pull_request`, comment on `workflow_run`).

use std::time::Duration;

use serde_json::Value;

/// Where and as whom to comment.
#[derive(Debug, Clone)]
pub struct Target {
    /// `https://api.github.com`, or `$GITHUB_API_URL` (GitHub Enterprise, a test's mock).
    pub api: String,
    /// `owner/name`.
    pub repo: String,
    pub pr: u64,
    pub token: String,
    /// The hidden line that marks tardy's comment.
    pub marker: String,
}

impl Target {
    /// The target from what a workflow gives: `pr` (default: the pull
    /// request of `$GITHUB_EVENT_PATH`'s event), `repo` (OWNER/NAME), a
    /// token, and the API (default: github.com's); one line saying what is
    /// missing.
    pub fn from_job(
        pr: Option<u64>,
        repo: Option<String>,
        token: Option<String>,
        api: Option<String>,
        marker: String,
    ) -> Result<Target, String> {
        let pr = match pr {
            Some(n) => n,
            None => std::env::var_os("GITHUB_EVENT_PATH")
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|e| pr_from_event(&e))
                .ok_or("no pull request: give --pr N (outside a pull_request job there is no event to read it from)")?,
        };
        let repo = (repo.filter(|r| r.contains('/')))
            .ok_or("no repository: give --repo OWNER/NAME (or set $GITHUB_REPOSITORY)")?;
        let token = token.filter(|t| !t.is_empty()).ok_or(
            "no token: set $GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: ${{ github.token }})",
        )?;
        let api =
            (api.filter(|a| !a.is_empty())).unwrap_or_else(|| "https://api.github.com".into());
        Ok(Target {
            api,
            repo,
            pr,
            token,
            marker,
        })
    }
}

/// A comment's body from `file`: at most what GitHub takes.
pub fn body(file: &std::path::Path) -> Result<String, String> {
    let body = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if body.len() > 65_000 {
        return Err(format!(
            "{}: {} bytes; GitHub takes comments of at most 65,536 characters",
            file.display(),
            body.len()
        ));
    }
    Ok(body)
}

/// What was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    Created(u64),
    Updated(u64),
}

/// The pull request's number from the event GitHub Actions describes in
/// `$GITHUB_EVENT_PATH` (`pull_request.number`, or `number`).
pub fn pr_from_event(event_json: &str) -> Option<u64> {
    let v: Value = serde_json::from_str(event_json).ok()?;
    v["pull_request"]["number"]
        .as_u64()
        .or_else(|| v["number"].as_u64())
}

/// Most pages of comments read while looking for the marker (100 per page).
const MAX_PAGES: u32 = 50;

/// Create or update the marked comment with `body` (the marker is added at
/// the top when the body lacks it).
pub fn upsert(t: &Target, body: &str) -> Result<Done, String> {
    let body = if body.contains(&t.marker) {
        body.to_string()
    } else {
        format!("{}\n{body}", t.marker)
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build()
        .into();
    let api = t.api.trim_end_matches('/');
    let call = |method: &str, url: &str, payload: Option<&Value>| -> Result<(u16, Value), String> {
        let auth = format!("Bearer {}", t.token);
        let result = match (method, payload) {
            ("GET", _) => agent
                .get(url)
                .header("Authorization", &auth)
                .header("Accept", "application/vnd.github+json")
                .header("User-Agent", "tardy")
                .call(),
            (m, Some(p)) => {
                let req = if m == "PATCH" {
                    agent.patch(url)
                } else {
                    agent.post(url)
                };
                req.header("Authorization", &auth)
                    .header("Accept", "application/vnd.github+json")
                    .header("User-Agent", "tardy")
                    .header("Content-Type", "application/json")
                    .send(p.to_string().as_bytes())
            }
            (m, None) => return Err(format!("{m} needs a body")),
        };
        let mut resp = result.map_err(|e| format!("{method} {url}: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_to_string()
            .unwrap_or_default();
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        match status {
            200..=299 => Ok((status, v)),
            401 | 403 | 404 => Err(format!(
                "{method} {url}: {status} {}: the token cannot write comments on {} (a pull request from a fork gets a read-only token: measure on pull_request and comment from a workflow_run workflow, as docs/book/04-ci-and-server.md shows)",
                v["message"].as_str().unwrap_or(""),
                t.repo
            )),
            _ => Err(format!(
                "{method} {url}: {status} {}",
                v["message"].as_str().unwrap_or("")
            )),
        }
    };
    let mut found = None;
    for page in 1..=MAX_PAGES {
        let url = format!(
            "{api}/repos/{}/issues/{}/comments?per_page=100&page={page}",
            t.repo, t.pr
        );
        let (_, v) = call("GET", &url, None)?;
        let list = v.as_array().cloned().unwrap_or_default();
        found = list.iter().find_map(|c| {
            c["body"]
                .as_str()
                .filter(|b| b.contains(&t.marker))
                .and(c["id"].as_u64())
        });
        if found.is_some() || list.len() < 100 {
            break;
        }
    }
    let payload = serde_json::json!({ "body": body });
    match found {
        Some(id) => {
            call(
                "PATCH",
                &format!("{api}/repos/{}/issues/comments/{id}", t.repo),
                Some(&payload),
            )?;
            Ok(Done::Updated(id))
        }
        None => {
            let (_, v) = call(
                "POST",
                &format!("{api}/repos/{}/issues/{}/comments", t.repo, t.pr),
                Some(&payload),
            )?;
            Ok(Done::Created(v["id"].as_u64().unwrap_or(0)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pull_request_number_comes_from_the_event() {
        assert_eq!(
            pr_from_event(r#"{"pull_request": {"number": 42}}"#),
            Some(42)
        );
        assert_eq!(
            pr_from_event(r#"{"number": 7, "action": "opened"}"#),
            Some(7)
        );
        assert_eq!(pr_from_event(r#"{"push": {}}"#), None);
        assert_eq!(pr_from_event("not json"), None);
    }
}
