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
    /// The keyed hash of the signup's neighbourhood (confirmations only).
    pub network: Option<String>,
}

/// Claims the oldest due item that no live lease holds.
pub fn claim_due(conn: &Connection, now: UnixSeconds, lease_until: UnixSeconds) -> rusqlite::Result<Option<Claimed>> {
    conn.prepare_cached(
        "UPDATE outbox SET lease_until = ?2, attempts = attempts + 1
         WHERE id = (SELECT id FROM outbox
                     WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
                     ORDER BY next_attempt_at, id LIMIT 1)
         RETURNING id, kind, subscriber_id, created_at, attempts, network",
    )?
    .query_row(params![now, lease_until], claimed)
    .optional()
}

/// Claims the item `id` if it is still due and no live lease holds it (another worker may have
/// taken it since it was chosen).
pub fn claim_by_id(
    conn: &Connection,
    id: i64,
    now: UnixSeconds,
    lease_until: UnixSeconds,
) -> rusqlite::Result<Option<Claimed>> {
    conn.prepare_cached(
        "UPDATE outbox SET lease_until = ?3, attempts = attempts + 1
         WHERE id = ?1 AND next_attempt_at <= ?2 AND (lease_until IS NULL OR lease_until <= ?2)
         RETURNING id, kind, subscriber_id, created_at, attempts, network",
    )?
    .query_row(params![id, now, lease_until], claimed)
    .optional()
}

/// Claims the queued confirmation of `subscriber_id`, due or waiting for a retry, if no live
/// lease holds it: it goes out with another list's confirmation, in one mail.
pub fn claim_confirmation_of(
    conn: &Connection,
    subscriber_id: &str,
    now: UnixSeconds,
    lease_until: UnixSeconds,
) -> rusqlite::Result<Option<Claimed>> {
    conn.prepare_cached(
        "UPDATE outbox SET lease_until = ?3, attempts = attempts + 1
         WHERE subscriber_id = ?1 AND kind = 'confirm' AND (lease_until IS NULL OR lease_until <= ?2)
         RETURNING id, kind, subscriber_id, created_at, attempts, network",
    )?
    .query_row(params![subscriber_id, now, lease_until], claimed)
    .optional()
}

fn claimed(row: &rusqlite::Row<'_>) -> rusqlite::Result<Claimed> {
    let kind: String = row.get(1)?;
    Ok(Claimed {
        id: row.get(0)?,
        kind: if kind == "welcome" { MailKind::Welcome } else { MailKind::Confirm },
        subscriber_id: row.get(2)?,
        created_at: row.get(3)?,
        attempts: row.get(4)?,
        network: row.get(5)?,
    })
}

/// Whether more than `room` items are due and unleased. The span of the queue's ids bounds how
/// many items it holds, so when the budget's room exceeds the whole queue the answer costs one
/// step of the primary key; only otherwise are due items counted, and never more than `room + 1`.
pub fn more_due_than(conn: &Connection, now: UnixSeconds, room: usize) -> rusqlite::Result<bool> {
    let span: Option<i64> =
        conn.prepare_cached("SELECT max(id) - min(id) + 1 FROM outbox")?.query_row([], |row| row.get(0))?;
    if usize::try_from(span.unwrap_or(0)).unwrap_or(0) <= room {
        return Ok(false);
    }
    Ok(count_due_up_to(conn, now, room + 1)? > room)
}

/// How many items are due and unleased, counting no further than `limit` (so the answer costs
/// at most `limit` index steps however long the queue is).
fn count_due_up_to(conn: &Connection, now: UnixSeconds, limit: usize) -> rusqlite::Result<usize> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let count: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM outbox
                                   WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
                                   LIMIT ?2)",
        )?
        .query_row(params![now, limit], |row| row.get(0))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

/// The next `limit` due items in the order of the fair budget: the network that has had the
/// fewest mails in this clock hour and the one before goes first, one mail at a time. Each item
/// is ranked by its network's mails plus its place in that network's own queue (oldest first),
/// so a network with 10,000 items waiting and one with a single item both get their turn after
/// every round; counting the previous hour too means that when the hour turns, a visitor who had
/// no mail still goes before the networks that had the last hour's budget. An item without a
/// network (a welcome mail, or queued before networks were recorded) is a network of its own.
pub fn fair_order(conn: &Connection, now: UnixSeconds, limit: usize) -> rusqlite::Result<Vec<i64>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "SELECT item.id FROM (
             SELECT id, next_attempt_at, network,
                    row_number() OVER (PARTITION BY coalesce(network, 'item/' || id)
                                       ORDER BY next_attempt_at, id) AS place
             FROM outbox
             WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
         ) AS item
         LEFT JOIN rate_limits AS sent ON sent.key = ?3 || (?1 / 3600) || '/' || item.network
         LEFT JOIN rate_limits AS earlier ON earlier.key = ?3 || (?1 / 3600 - 1) || '/' || item.network
         ORDER BY coalesce(sent.count, 0) + coalesce(earlier.count, 0) + item.place, item.next_attempt_at, item.id
         LIMIT ?2",
    )?
    .query_map(params![now, limit, super::counters::NETWORK_MAIL_PREFIX], |row| row.get(0))?
    .collect()
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
