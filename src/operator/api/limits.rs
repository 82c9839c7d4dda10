//! How often the operator API may be called, in fixed one-minute windows kept in memory (a
//! restart forgets them, which costs an attacker nothing: a token is 256 bits and cannot be
//! guessed). A valid token is counted in its own window only. A client's failed
//! authentications have a window of their own, far smaller, so a wrong or rotated-out token
//! hammering the API is answered 429 — but only calls that present no valid token are counted
//! or refused there: automation tools share egress addresses (n8n cloud, Zapier, a NAT), and one
//! tool's wrong token must not lock out another's right one. A third window holds the
//! log line of a client's failures to one a minute. Shared by `/api/v1/` on the public listener
//! and the admin page on the metrics listener, each with its own table.
//!
//! The table is bounded: at [`MAX_TRACKED`] keys, windows that ended are dropped, and a new key
//! that still finds no room is refused, so a flood from many networks costs memory once, not
//! without end.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::clock::UnixSeconds;

/// Requests a token may make in a window.
pub const PER_TOKEN: u32 = 600;
/// Failed authentications a client network may make in a window; past them a call without a
/// valid token is `429` instead of `401`.
pub const FAILURES_PER_CLIENT: u32 = 20;
/// Log lines about a client network's failed authentications in a window.
pub const FAILURE_LOGS_PER_CLIENT: u32 = 1;
/// The window, in seconds.
pub const WINDOW_SECS: i64 = 60;
/// The most keys held at once.
pub const MAX_TRACKED: usize = 100_000;

/// What is counted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// A valid token's calls, by its name.
    Token(String),
    /// A client network's calls without a valid token.
    Failures(String),
    /// A client network's log lines about those.
    FailureLog(String),
}

impl Key {
    fn limit(&self) -> u32 {
        match self {
            Self::Token(_) => PER_TOKEN,
            Self::Failures(_) => FAILURES_PER_CLIENT,
            Self::FailureLog(_) => FAILURE_LOGS_PER_CLIENT,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    start: UnixSeconds,
    count: u32,
}

/// The counters.
#[derive(Debug, Default)]
pub struct Limits {
    windows: Mutex<HashMap<Key, Window>>,
}

impl Limits {
    /// Counts one request against `key`; `Err(seconds)` to wait when its window is full.
    pub fn take(&self, key: Key, now: UnixSeconds) -> Result<(), u64> {
        self.count(key, now, true)
    }

    /// Whether `key`'s window is full, without counting.
    pub fn check(&self, key: Key, now: UnixSeconds) -> Result<(), u64> {
        self.count(key, now, false)
    }

    fn count(&self, key: Key, now: UnixSeconds, take: bool) -> Result<(), u64> {
        let limit = key.limit();
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        if windows.len() >= MAX_TRACKED && !windows.contains_key(&key) {
            windows.retain(|_, window| now < window.start + WINDOW_SECS);
            if windows.len() >= MAX_TRACKED {
                return Err(u64::try_from(WINDOW_SECS).unwrap_or(60));
            }
        }
        let window = windows.entry(key).or_insert(Window { start: now, count: 0 });
        if now >= window.start + WINDOW_SECS {
            *window = Window { start: now, count: 0 };
        }
        if window.count >= limit {
            return Err(u64::try_from(window.start + WINDOW_SECS - now).unwrap_or(1).max(1));
        }
        if take {
            window.count += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_window_refuses_until_it_ends_and_keys_are_apart() {
        let limits = Limits::default();
        let token = || Key::Token("n8n".into());
        for _ in 0..PER_TOKEN {
            assert_eq!(limits.take(token(), 1_000), Ok(()));
        }
        assert_eq!(limits.take(token(), 1_010), Err(50), "the rest of the window");
        assert_eq!(limits.check(token(), 1_059), Err(1));
        assert_eq!(limits.take(Key::Token("other".into()), 1_010), Ok(()), "another token has its own");
        assert_eq!(limits.take(Key::Failures("n8n".into()), 1_010), Ok(()), "a client of the same name too");
        assert_eq!(limits.take(token(), 1_060), Ok(()), "a new window");
    }

    #[test]
    fn checking_does_not_count() {
        let limits = Limits::default();
        let failures = || Key::Failures("192.0.2.1/32".into());
        for _ in 0..FAILURES_PER_CLIENT * 2 {
            assert_eq!(limits.check(failures(), 5), Ok(()));
        }
        for _ in 0..FAILURES_PER_CLIENT {
            limits.take(failures(), 5).unwrap();
        }
        assert!(limits.check(failures(), 5).is_err());
    }
}
