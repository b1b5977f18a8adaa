//! Sign-in sessions for the web pages.
//!
//! Signing in with a token gives the browser a cookie holding a random session
//! id, never the token: the server keeps the session (its scope, its CSRF token,
//! its expiry) in memory, keyed by the id's SHA-256. The cookie serves pages and
//! their forms only; API writes need `Authorization: Bearer`. A form post needs
//! the session's CSRF token in a field and an `Origin` (or `Referer`) of this
//! very server: SameSite cookies are sent from any port of the same host, so the
//! cookie alone proves nothing about which page posted the form.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::scope::Scope;

/// How long a session lives after sign-in.
pub const TTL: Duration = Duration::from_secs(12 * 3600);
/// Sessions one token may have at once; its oldest is dropped for a new
/// one beyond this, so signing in again and again with one token never
/// signs anyone else out.
pub const PER_TOKEN: usize = 16;
/// Sessions kept at most (a bound on memory with many tokens); the oldest
/// is dropped for a new one beyond this.
pub const MAX_SESSIONS: usize = 10_000;
/// The cookie's name.
pub const COOKIE: &str = "tardy_session";

#[derive(Debug, Clone)]
pub struct Session {
    pub scope: Scope,
    /// Which token signed in (its SHA-256).
    pub token: [u8; 32],
    /// The token every form of this session must carry.
    pub csrf: String,
    pub expires: Instant,
}

#[derive(Debug, Default)]
pub struct Sessions {
    inner: Mutex<HashMap<[u8; 32], Session>>,
}

/// `n` random bytes as hex (the operating system's generator).
pub fn random_hex(n: usize) -> Option<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).ok()?;
    Some(hex::encode(bytes))
}

fn key(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

impl Sessions {
    /// A new session of `scope` for `token`: its id (for the cookie) and its
    /// CSRF token.
    pub fn create(&self, scope: Scope, token: &str) -> Option<(String, String)> {
        let id = random_hex(32)?;
        let csrf = random_hex(32)?;
        let token = key(token);
        let now = Instant::now();
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, s| s.expires > now);
        let oldest = |map: &HashMap<[u8; 32], Session>, of: Option<[u8; 32]>| {
            map.iter()
                .filter(|(_, s)| of.is_none_or(|t| s.token == t))
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| *k)
        };
        if map.values().filter(|s| s.token == token).count() >= PER_TOKEN
            && let Some(k) = oldest(&map, Some(token))
        {
            map.remove(&k);
        }
        if map.len() >= MAX_SESSIONS
            && let Some(k) = oldest(&map, None)
        {
            map.remove(&k);
        }
        map.insert(
            key(&id),
            Session {
                scope,
                token,
                csrf: csrf.clone(),
                expires: now + TTL,
            },
        );
        Some((id, csrf))
    }

    /// The live session of this id.
    pub fn get(&self, id: &str) -> Option<Session> {
        let map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&key(id))
            .filter(|s| s.expires > Instant::now())
            .cloned()
    }
}

/// Whether a form's CSRF field matches the session's (in constant time).
pub fn csrf_matches(session: &Session, field: &str) -> bool {
    session.csrf.len() == field.len() && bool::from(session.csrf.as_bytes().ct_eq(field.as_bytes()))
}

/// Whether `origin` (an `Origin` value, or a `Referer` URL) is this server, named
/// by the request's `Host`.
pub fn same_origin(origin: &str, host: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    let Some(rest) = rest else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    !host.is_empty() && authority.eq_ignore_ascii_case(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_random_expiring_and_checked_in_constant_time() {
        let s = Sessions::default();
        let (id, csrf) = s.create(Scope::Write, "tardy_w").unwrap();
        let (id2, csrf2) = s.create(Scope::Read, "tardy_r").unwrap();
        assert_ne!(id, id2);
        assert_ne!(csrf, csrf2);
        assert_eq!(id.len(), 64);
        let got = s.get(&id).unwrap();
        assert_eq!(got.scope, Scope::Write);
        assert!(csrf_matches(&got, &csrf));
        assert!(!csrf_matches(&got, &csrf2));
        assert!(!csrf_matches(&got, ""));
        assert!(s.get("not-a-session").is_none());
        // Signing in again and again with one token drops only its own
        // oldest sessions.
        let mine: Vec<String> = (0..3 * PER_TOKEN)
            .map(|_| s.create(Scope::Read, "tardy_r").unwrap().0)
            .collect();
        assert!(s.get(&id).is_some(), "another token's session survives");
        assert!(s.get(&mine[0]).is_none());
        assert!(s.get(mine.last().unwrap()).is_some());
    }

    #[test]
    fn only_this_server_is_the_same_origin() {
        assert!(same_origin("http://127.0.0.1:8080", "127.0.0.1:8080"));
        assert!(same_origin(
            "http://127.0.0.1:8080/alert/3",
            "127.0.0.1:8080"
        ));
        assert!(!same_origin("http://127.0.0.1:9090", "127.0.0.1:8080"));
        assert!(!same_origin(
            "http://127.0.0.1:8080.evil.example",
            "127.0.0.1:8080"
        ));
        assert!(!same_origin("null", "127.0.0.1:8080"));
        assert!(!same_origin("http://127.0.0.1:8080", ""));
    }
}
