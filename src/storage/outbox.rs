//! The `outbox` table: mail waiting to be sent, claimed by a worker with a lease so two workers
//! (or a worker and its restarted self) never send one item at the same time. A crash while an
//! item is leased leaves it to be claimed again when the lease ends: delivery is at least once.

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    Confirm,
    Welcome,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: i64,
    pub kind: MailKind,
    pub subscriber_id: String,
    pub created_at: UnixSeconds,
    /// Including this one.
    pub attempts: i64,
}

/// Claims the oldest due item that no live lease holds.
pub fn claim_due(conn: &Connection, now: UnixSeconds, lease_until: UnixSeconds) -> rusqlite::Result<Option<Claimed>> {
    conn.prepare_cached(
        "UPDATE outbox SET lease_until = ?2, attempts = attempts + 1
         WHERE id = (SELECT id FROM outbox
                     WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
                     ORDER BY next_attempt_at, id LIMIT 1)
         RETURNING id, kind, subscriber_id, created_at, attempts",
    )?
    .query_row(params![now, lease_until], |row| {
        let kind: String = row.get(1)?;
        Ok(Claimed {
            id: row.get(0)?,
            kind: if kind == "welcome" { MailKind::Welcome } else { MailKind::Confirm },
            subscriber_id: row.get(2)?,
            created_at: row.get(3)?,
            attempts: row.get(4)?,
        })
    })
    .optional()
}

/// Whether any item is due and unleased (to tell "budget spent" from "nothing to do").
pub fn any_due(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM outbox WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1))",
    )?
    .query_row([now], |row| row.get(0))
}

pub fn delete(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM outbox WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Releases the lease and schedules the next attempt. `last_error` is an SMTP code and reason,
/// never an address.
pub fn retry_at(conn: &Connection, id: i64, next_attempt_at: UnixSeconds, last_error: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE outbox SET lease_until = NULL, next_attempt_at = ?2, last_error = ?3 WHERE id = ?1")?
        .execute(params![id, next_attempt_at, last_error])?;
    Ok(())
}

/// Queues a welcome mail for a confirmed row.
pub fn queue_welcome(conn: &Connection, subscriber_id: &str, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at) VALUES ('welcome', ?1, ?2, ?2)",
    )?
    .execute(params![subscriber_id, now])?;
    Ok(())
}

/// Mails reserved in the hour bucket containing `now` (the `max_mails_per_hour` budget): every
/// claimed mail counts when it is claimed, and a failed send gives its reservation back, so
/// however many workers claim side by side, no hour sends more than the budget. Kept in
/// `rate_limits` under a key that is not an HMAC, so it cannot collide with a client counter.
pub fn reserved_this_hour(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count FROM rate_limits WHERE key = ?1")?
        .query_row([budget_key(now)], |row| row.get(0))
        .optional()
        .map(Option::unwrap_or_default)
}

/// Reserves `mails` of the budget of the hour containing `now`.
pub fn reserve(conn: &Connection, now: UnixSeconds, mails: usize) -> rusqlite::Result<()> {
    if mails == 0 {
        return Ok(());
    }
    let expires_at = (now.div_euclid(3600) + 1) * 3600;
    conn.prepare_cached(
        "INSERT INTO rate_limits (key, count, expires_at) VALUES (?1, ?3, ?2)
         ON CONFLICT (key) DO UPDATE SET count = count + excluded.count",
    )?
    .execute(params![budget_key(now), expires_at, i64::try_from(mails).unwrap_or(i64::MAX)])?;
    Ok(())
}

/// Gives back one reservation made at `reserved_at` (a send that failed).
pub fn refund(conn: &Connection, reserved_at: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE rate_limits SET count = count - 1 WHERE key = ?1 AND count > 0")?
        .execute([budget_key(reserved_at)])?;
    Ok(())
}

fn budget_key(now: UnixSeconds) -> String {
    format!("mail-budget/{}", now.div_euclid(3600))
}
