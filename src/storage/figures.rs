//! Read-only figures about the lists and queues, for `signupd stats` and the metrics gauges:
//! counts, never rows, so nothing here returns an address.

use rusqlite::{Connection, OptionalExtension, params};

use super::subscribers::Status;
use super::suppressions::Reason;
use crate::clock::UnixSeconds;

/// How many items wait in one queue, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueDepth {
    /// `intake`, `mail` or `webhook`.
    pub name: &'static str,
    pub depth: i64,
    /// When the oldest waiting item arrived; `None` for an empty queue.
    pub oldest_at: Option<UnixSeconds>,
}

impl QueueDepth {
    /// How long the oldest item has waited at `now`.
    pub fn oldest_age(&self, now: UnixSeconds) -> Option<i64> {
        self.oldest_at.map(|oldest| (now - oldest).max(0))
    }
}

/// The three queues, in a fixed order.
pub fn queue_depths(conn: &Connection) -> rusqlite::Result<Vec<QueueDepth>> {
    [
        ("intake", "SELECT count(*), min(received_at) FROM intake"),
        ("mail", "SELECT count(*), min(created_at) FROM outbox"),
        ("webhook", "SELECT count(*), min(created_at) FROM webhook_deliveries"),
    ]
    .into_iter()
    .map(|(name, sql)| {
        conn.prepare_cached(sql)?
            .query_row([], |row| Ok(QueueDepth { name, depth: row.get(0)?, oldest_at: row.get(1)? }))
    })
    .collect()
}

/// Rows of `list` in `status`.
pub fn subscribers(conn: &Connection, list: &str, status: Status) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM subscribers WHERE list_id = ?1 AND status = ?2")?
        .query_row(params![list, status.as_str()], |row| row.get(0))
}

/// Rows in `status`, over all lists.
pub fn all_subscribers(conn: &Connection, status: Status) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM subscribers WHERE status = ?1")?
        .query_row([status.as_str()], |row| row.get(0))
}

/// Suppressions of `list` for `reason`.
pub fn suppressions(conn: &Connection, list: &str, reason: Reason) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM suppressions WHERE list_id = ?1 AND reason = ?2")?
        .query_row(params![list, reason.as_str()], |row| row.get(0))
}

/// Suppressions over all lists.
pub fn all_suppressions(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM suppressions")?.query_row([], |row| row.get(0))
}

/// Rows of `list` created at or after `since` (signups that made a row).
pub fn created_since(conn: &Connection, list: &str, since: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM subscribers WHERE list_id = ?1 AND created_at >= ?2")?
        .query_row(params![list, since], |row| row.get(0))
}

/// Rows of `list` created at or after `since` that are confirmed now.
pub fn confirmed_of_created_since(conn: &Connection, list: &str, since: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT count(*) FROM subscribers WHERE list_id = ?1 AND created_at >= ?2 AND status = 'confirmed'",
    )?
    .query_row(params![list, since], |row| row.get(0))
}

/// Confirmations of `list` at or after `since`.
pub fn confirmed_since(conn: &Connection, list: &str, since: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM subscribers WHERE list_id = ?1 AND confirmed_at >= ?2")?
        .query_row(params![list, since], |row| row.get(0))
}

/// The median seconds from confirmation mail to confirm click, over `list`'s confirmations at
/// or after `since`; `None` without any.
pub fn median_confirm_delay_since(conn: &Connection, list: &str, since: UnixSeconds) -> rusqlite::Result<Option<i64>> {
    let delays: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM subscribers
             WHERE list_id = ?1 AND confirmed_at >= ?2 AND confirm_delay_secs IS NOT NULL",
        )?
        .query_row(params![list, since], |row| row.get(0))?;
    if delays == 0 {
        return Ok(None);
    }
    conn.prepare_cached(
        "SELECT confirm_delay_secs FROM subscribers
         WHERE list_id = ?1 AND confirmed_at >= ?2 AND confirm_delay_secs IS NOT NULL
         ORDER BY confirm_delay_secs LIMIT 1 OFFSET ?3",
    )?
    .query_row(params![list, since, delays / 2], |row| row.get(0))
    .optional()
}
