//! How often the operator API may be called, in fixed one-minute windows kept in memory (a
//! restart forgets them, which costs an attacker nothing: a token is 256 bits and cannot be
//! guessed). A valid token is counted in its own window only, in a table of its own: only a
//! token that authenticated has a key there, so it holds at most the configured tokens and no
//! flood can fill it. A client's failed authentications have a window of their own, far smaller,
//! so a wrong or rotated-out token hammering the API is answered 429 — but only calls that
//! present no valid token are counted or refused there: automation tools share egress addresses
//! (n8n cloud, Zapier, a NAT), and one tool's wrong token must not lock out another's right one.
//! The same entry holds the log line of a client's failures to one a minute. Shared by `/api/v1/`
//! on the public listener and the admin page on the metrics listener, each with its own tables.
//!
//! The failures' table is bounded: at [`MAX_TRACKED`] clients, windows that ended are dropped,
//! and when that finds no room the oldest window is forgotten. A flood from many networks costs
//! memory once and refuses nobody it did not come from; the price, a flooding client's count
//! starting again, is paid only by the flood itself.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use crate::clock::UnixSeconds;

/// Requests a token may make in a window.
pub const PER_TOKEN: u32 = 600;
/// Failed authentications a client network may make in a window; past them a call without a
/// valid token is `429` instead of `401`.
pub const FAILURES_PER_CLIENT: u32 = 20;
/// The window, in seconds.
pub const WINDOW_SECS: i64 = 60;
/// The most client networks whose failures are held at once.
pub const MAX_TRACKED: usize = 100_000;

#[derive(Debug, Clone, Copy)]
struct Window {
    start: UnixSeconds,
    count: u32,
}

impl Window {
    fn ended(&self, now: UnixSeconds) -> bool {
        now >= self.start + WINDOW_SECS
    }

    /// Counts one call; `Err(seconds)` to wait when `limit` calls were already counted.
    fn take(&mut self, limit: u32, now: UnixSeconds) -> Result<(), u64> {
        if self.ended(now) {
            *self = Window { start: now, count: 0 };
        }
        if self.count >= limit {
            return Err(u64::try_from(self.start + WINDOW_SECS - now).unwrap_or(1).max(1));
        }
        self.count += 1;
        Ok(())
    }
}

/// A client network's failures in its window, and whether its log line was written.
#[derive(Debug, Clone, Copy)]
struct Failures {
    window: Window,
    logged: bool,
}

/// What a failed authentication gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed {
    /// `Err(seconds)` once the client's failures fill their window: `429` instead of `401`.
    pub answer: Result<(), u64>,
    /// Whether this failure is the client's first in its window, the one that is logged.
    pub log: bool,
}

/// The failures' table: the windows by client, and the clients in the order their windows
/// began, so the oldest is found without a scan.
#[derive(Debug, Default)]
struct FailureTable {
    windows: HashMap<String, Failures>,
    /// Each window's client and start as it began; an entry whose client has since begun a new
    /// window is stale and skipped.
    order: VecDeque<(String, UnixSeconds)>,
}

impl FailureTable {
    fn is_current(&self, client: &str, start: UnixSeconds) -> bool {
        self.windows.get(client).is_some_and(|failures| failures.window.start == start)
    }

    /// Makes room for one more client: windows that ended go first, then the oldest.
    fn make_room(&mut self, capacity: usize, now: UnixSeconds) {
        while let Some((client, start)) = self.order.front() {
            let current = self.is_current(client, *start);
            let over = self.windows.len() >= capacity;
            if current && !over && now < start + WINDOW_SECS {
                break;
            }
            if let Some((client, start)) = self.order.pop_front()
                && self.is_current(&client, start)
            {
                self.windows.remove(&client);
            }
        }
    }

    fn fail(&mut self, client: &str, capacity: usize, now: UnixSeconds) -> Failed {
        let room = if self.windows.contains_key(client) { capacity + 1 } else { capacity };
        self.make_room(room, now);
        let fresh = Failures { window: Window { start: now, count: 0 }, logged: false };
        let failures = self.windows.entry(client.to_owned()).or_insert(fresh);
        let began = failures.window.count == 0 || failures.window.ended(now);
        if began {
            *failures = fresh;
            self.order.push_back((client.to_owned(), now));
        }
        let answer = failures.window.take(FAILURES_PER_CLIENT, now);
        let log = !failures.logged;
        failures.logged = true;
        Failed { answer, log }
    }
}

/// The counters.
#[derive(Debug)]
pub struct Limits {
    tokens: Mutex<HashMap<String, Window>>,
    failures: Mutex<FailureTable>,
    capacity: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self::with_capacity(MAX_TRACKED)
    }
}

impl Limits {
    /// Counters holding at most `capacity` clients' failures.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { tokens: Mutex::default(), failures: Mutex::default(), capacity: capacity.max(1) }
    }

    /// Counts one call of the valid token `name`; `Err(seconds)` to wait when its window is full.
    pub fn take_token(&self, name: &str, now: UnixSeconds) -> Result<(), u64> {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens.entry(name.to_owned()).or_insert(Window { start: now, count: 0 }).take(PER_TOKEN, now)
    }

    /// Counts one call without a valid token from `client` (its network).
    pub fn fail(&self, client: &str, now: UnixSeconds) -> Failed {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.fail(client, self.capacity, now)
    }

    /// How many clients' failures are held.
    pub fn failing_clients(&self) -> usize {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner).windows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_window_refuses_until_it_ends_and_tokens_are_apart() {
        let limits = Limits::default();
        for _ in 0..PER_TOKEN {
            assert_eq!(limits.take_token("n8n", 1_000), Ok(()));
        }
        assert_eq!(limits.take_token("n8n", 1_010), Err(50), "the rest of the window");
        assert_eq!(limits.take_token("n8n", 1_059), Err(1));
        assert_eq!(limits.take_token("other", 1_010), Ok(()), "another token has its own");
        assert_eq!(limits.fail("n8n", 1_010).answer, Ok(()), "a client of the same name too");
        assert_eq!(limits.take_token("n8n", 1_060), Ok(()), "a new window");
    }

    #[test]
    fn a_client_fails_until_its_window_is_full_and_is_logged_once_a_window() {
        let limits = Limits::default();
        let failed: Vec<Failed> = (0..FAILURES_PER_CLIENT + 2).map(|_| limits.fail("192.0.2.1/32", 5)).collect();
        assert!(failed[..FAILURES_PER_CLIENT as usize].iter().all(|failed| failed.answer.is_ok()), "{failed:?}");
        assert_eq!(failed[FAILURES_PER_CLIENT as usize].answer, Err(60));
        assert_eq!(failed.iter().filter(|failed| failed.log).count(), 1, "one log line: {failed:?}");
        assert_eq!(limits.fail("192.0.2.1/32", 65), Failed { answer: Ok(()), log: true }, "a new window");
    }

    #[test]
    fn a_full_failures_table_forgets_the_oldest_window_and_refuses_no_newcomer() {
        let limits = Limits::with_capacity(3);
        for _ in 0..FAILURES_PER_CLIENT {
            limits.fail("a", 0);
        }
        assert!(limits.fail("a", 0).answer.is_err(), "a's window is full");
        limits.fail("b", 1);
        limits.fail("c", 2);

        assert_eq!(limits.fail("d", 3).answer, Ok(()), "a newcomer finds room");
        assert_eq!(limits.failing_clients(), 3);
        assert_eq!(limits.fail("a", 4), Failed { answer: Ok(()), log: true }, "a, the oldest, was forgotten");
        assert_eq!(limits.failing_clients(), 3, "and b with it, to make room for a");
        for _ in 0..FAILURES_PER_CLIENT {
            limits.fail("c", 5);
        }
        assert!(limits.fail("c", 5).answer.is_err(), "c, younger than b, is still held");
        assert_eq!(limits.take_token("n8n", 5), Ok(()), "a token meets none of it");
    }

    #[test]
    fn ended_windows_make_room_before_a_current_one_is_forgotten() {
        let limits = Limits::with_capacity(2);
        limits.fail("old", 0);
        for _ in 0..=FAILURES_PER_CLIENT {
            limits.fail("busy", 30);
        }
        assert_eq!(limits.fail("new", 61).answer, Ok(()));
        assert!(limits.fail("busy", 61).answer.is_err(), "the ended window went, not busy's");
    }

    #[test]
    fn a_flood_of_clients_holds_at_most_the_capacity() {
        let limits = Limits::with_capacity(100);
        for client in 0..1_000 {
            assert_eq!(limits.fail(&client.to_string(), 10).answer, Ok(()), "client {client}");
        }
        assert_eq!(limits.failing_clients(), 100);
    }
}
