//! Bearer tokens: the token file holds only their SHA-256 hashes, one per
//! line (`sha256:HEX SCOPE LABEL`, SCOPE `write` or `read`), so a leaked
//! file grants nothing. `tardy token add` makes a token and appends its hash.

use std::path::Path;

use sha2::{Digest, Sha256};

use std::collections::BTreeMap;

use axum::http::{HeaderMap, StatusCode, header};

use super::AppState;
use super::error::ApiError;

pub use super::scope::Scope;

/// The tokens a server accepts.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    entries: Vec<([u8; 32], Scope, String)>,
}

/// A problem with the token file, naming the line.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read token file '{path}': {detail}")]
    Io { path: String, detail: String },
    #[error("{path}:{line}: expected 'sha256:<64 hex digits> write|read [label]', found '{found}'")]
    Syntax {
        path: String,
        line: usize,
        found: String,
    },
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.trim().as_bytes()).into()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).ok()?;
    Some(out)
}

/// Compare without stopping at the first differing byte.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

impl Tokens {
    /// Read a token file; a missing file holds no tokens only when
    /// `missing_ok`.
    pub fn load(path: &Path) -> Result<Tokens, TokenError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TokenError::Io {
            path: name.clone(),
            detail: e.to_string(),
        })?;
        Tokens::parse(&text, &name)
    }

    pub fn parse(text: &str, name: &str) -> Result<Tokens, TokenError> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.splitn(3, char::is_whitespace);
            let digest = parts
                .next()
                .and_then(|h| h.strip_prefix("sha256:"))
                .and_then(unhex);
            let scope = parts.next().map(str::trim).and_then(Scope::parse);
            match (digest, scope) {
                (Some(d), Some(s)) => {
                    entries.push((d, s, parts.next().unwrap_or("").trim().to_string()))
                }
                _ => {
                    return Err(TokenError::Syntax {
                        path: name.to_string(),
                        line: i + 1,
                        found: line.chars().take(40).collect(),
                    });
                }
            }
        }
        Ok(Tokens { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The scope of `token` (and its label), if it is one of ours.
    pub fn check(&self, token: &str) -> Option<(Scope, &str)> {
        let h = hash(token);
        // Every entry is compared, so timing does not tell which matched.
        let mut found = None;
        for (d, scope, label) in &self.entries {
            if same(d, &h) && found.is_none() {
                found = Some((*scope, label.as_str()));
            }
        }
        found
    }
}

/// A new random token and the line that stores its hash.
pub fn new_token(scope: Scope, label: &str) -> std::io::Result<(String, String)> {
    let mut bytes = [0u8; 24];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    let token = format!("tardy_{}", hex::encode(bytes));
    let label: String = label.chars().filter(|c| !c.is_control()).collect();
    let line = format!(
        "sha256:{} {} {}",
        hex::encode(hash(&token)),
        scope.as_str(),
        label
    );
    Ok((token, line.trim_end().to_string()))
}

/// `tardy token add`: a new token of `scope` labelled `label`, its hash
/// appended to the token file `file` (made 0600 when missing; a file that is
/// not a token file is refused, never appended to). The token, shown once.
pub fn add_token(file: &Path, scope: Scope, label: &str) -> Result<String, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if file.exists() {
        Tokens::load(file).map_err(|e| e.to_string())?;
    }
    let (token, line) = new_token(scope, label).map_err(|e| format!("cannot make a token: {e}"))?;
    let cannot = |e: std::io::Error| format!("cannot write '{}': {e}", file.display());
    let mut f = (std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600))
    .open(file)
    .map_err(cannot)?;
    writeln!(f, "{line}").map_err(cannot)?;
    Ok(token)
}

// Access to the API and pages: tokens, the sign-in cookie, query
// parameters and ids, shared by both (neither imports the other for them).

/// The query's parameters; a name outside `allowed` is an error (a typo
/// would otherwise be silently ignored).
pub fn query_params(
    raw: Option<&str>,
    allowed: &[&str],
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut out = BTreeMap::new();
    for (k, v) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        if !allowed.contains(&k.as_ref()) {
            return Err(ApiError::bad_request(format!(
                "unknown query parameter '{}' (expected one of: {})",
                k.chars().take(40).collect::<String>(),
                allowed.join(", ")
            )));
        }
        if v.chars().any(char::is_control) || v.len() > 512 {
            return Err(ApiError::bad_request(format!(
                "query parameter '{k}' must be at most 512 characters without control characters"
            )));
        }
        if out.insert(k.to_string(), v.into_owned()).is_some() {
            return Err(ApiError::bad_request(format!(
                "query parameter '{k}' is given more than once"
            )));
        }
    }
    Ok(out)
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            // The scheme is case-insensitive (RFC 9110): Bearer, bearer, BEARER.
            let (scheme, token) = v.trim_start().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)
        })
        .map(|t| t.trim().to_string())
}

/// The session id in the `tardy_session` cookie the sign-in page sets.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    let prefix = format!("{}=", super::session::COOKIE);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(prefix.as_str()).map(str::to_string))
}

/// The live sign-in session of this request, if any.
pub fn session_of(st: &AppState, headers: &HeaderMap) -> Option<super::session::Session> {
    st.sessions.get(&session_cookie(headers)?)
}

/// May this request do `need`? Writes need a write token; reads need a
/// token only when the server was started with `--read-token`. The sign-in
/// cookie serves reads; writes through the API take `Authorization: Bearer` only.
pub fn authorize(st: &AppState, headers: &HeaderMap, need: Scope) -> Result<(), ApiError> {
    if need == Scope::Read && !st.opts.read_protected {
        return Ok(());
    }
    if need == Scope::Write && st.opts.tokens.is_empty() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "uploads_off",
            "this server takes no writes: start `tardy serve` with --token-file (see `tardy token add`)",
        ));
    }
    let Some(token) = bearer(headers) else {
        if need == Scope::Read && session_of(st, headers).is_some() {
            return Ok(());
        }
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing token: send 'Authorization: Bearer <token>'",
        ));
    };
    check_token(st, &token, need)
}

/// Whether `token` is known and may do `need`.
pub fn check_token(st: &AppState, token: &str, need: Scope) -> Result<(), ApiError> {
    match st.opts.tokens.check(token) {
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unknown token",
        )),
        Some((scope, _)) if scope < need => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this token may only read",
        )),
        Some(_) => Ok(()),
    }
}

pub fn alert_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse::<i64>().ok().filter(|&i| i > 0).ok_or_else(|| {
        ApiError::not_found(format!(
            "no alert '{}'",
            raw.chars().take(40).collect::<String>()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_by_hash() {
        let (w, wl) = new_token(Scope::Write, "ci").unwrap();
        let (r, rl) = new_token(Scope::Read, "").unwrap();
        assert!(!wl.contains(&w) && w.starts_with("tardy_"));
        let t = Tokens::parse(&format!("# tokens\n{wl}\n\n{rl}\n"), "f").unwrap();
        assert_eq!(t.check(&w), Some((Scope::Write, "ci")));
        assert_eq!(t.check(&r).map(|x| x.0), Some(Scope::Read));
        assert_eq!(t.check("tardy_nope"), None);
        assert_eq!(t.check(""), None);
        let e = Tokens::parse("sha256:zz write\n", "tokens").unwrap_err();
        assert!(e.to_string().starts_with("tokens:1:"), "{e}");
        assert!(Tokens::parse(&format!("{} admin", &wl[..71]), "f").is_err());
    }
}
