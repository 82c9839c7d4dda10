//! The `webhook_deliveries` table: events waiting for an endpoint, claimed with a lease like mail.
//! Only the oldest waiting event about a subscriber is claimable per endpoint, so a receiver
//! never sees a later event about someone before an earlier one (`unsubscribed` before
//! `confirmed`), even while that earlier one is being retried.

use rusqlite::{Connection, params};

use crate::clock::UnixSeconds;

/// An event to queue for one endpoint. No `Debug`: the payload holds an address.
#[allow(missing_debug_implementations)]
#[derive(Clone)]
pub struct NewDelivery<'a> {
    pub endpoint: &'a str,
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub subscriber_id: &'a str,
    /// The JSON body. Holds an address.
    pub payload: &'a str,
    pub now: UnixSeconds,
}

pub fn insert(conn: &Connection, delivery: &NewDelivery<'_>) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO webhook_deliveries (endpoint, event_id, event_type, subscriber_id, payload, created_at, next_attempt_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    )?
    .execute(params![
        delivery.endpoint,
        delivery.event_id,
        delivery.event_type,
        delivery.subscriber_id,
        delivery.payload,
        delivery.now
    ])?;
    Ok(())
}

/// A claimed delivery. Its payload holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
pub struct Claimed {
    pub id: i64,
    pub event_id: String,
    pub event_type: String,
    pub payload: String,
    pub created_at: UnixSeconds,
    /// Including this one.
    pub attempts: i64,
}

/// The head-of-line condition: no older delivery about the same subscriber waits for this endpoint.
const CLAIMABLE: &str = "d.endpoint = ?1 AND d.next_attempt_at <= ?2 AND (d.lease_until IS NULL OR d.lease_until <= ?2)
     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                     WHERE e.endpoint = d.endpoint AND e.subscriber_id = d.subscriber_id AND e.id < d.id)";

/// Claims up to `limit` due deliveries of `endpoint`, at most one per subscriber. Ordered by due
/// time (then id), which the `(endpoint, next_attempt_at)` index yields as it is read: ordering by
/// id alone made SQLite collect and sort every due row first, a stall of the writer that grew with
/// the queue. The order across subscribers does not matter; within one, the head-of-line rule
/// keeps it.
pub fn claim_due(
    conn: &Connection,
    endpoint: &str,
    now: UnixSeconds,
    lease_until: UnixSeconds,
    limit: usize,
) -> rusqlite::Result<Vec<Claimed>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(&format!(
        "UPDATE webhook_deliveries SET lease_until = ?3, attempts = attempts + 1
         WHERE id IN (SELECT d.id FROM webhook_deliveries d WHERE {CLAIMABLE} ORDER BY d.next_attempt_at, d.id LIMIT ?4)
         RETURNING id, event_id, event_type, payload, created_at, attempts"
    ))?
    .query_map(params![endpoint, now, lease_until, limit], |row| {
        Ok(Claimed {
            id: row.get(0)?,
            event_id: row.get(1)?,
            event_type: row.get(2)?,
            payload: row.get(3)?,
            created_at: row.get(4)?,
            attempts: row.get(5)?,
        })
    })?
    .collect()
}

/// Whether `endpoint` has a claimable delivery (read-only: an idle worker never writes).
pub fn any_due(conn: &Connection, endpoint: &str, now: UnixSeconds) -> rusqlite::Result<bool> {
    conn.prepare_cached(&format!("SELECT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE {CLAIMABLE})"))?
        .query_row(params![endpoint, now], |row| row.get(0))
}

pub fn delete(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM webhook_deliveries WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Releases the lease and schedules the next attempt. `last_error` never holds an address.
pub fn retry_at(conn: &Connection, id: i64, next_attempt_at: UnixSeconds, last_error: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE webhook_deliveries SET lease_until = NULL, next_attempt_at = ?2, last_error = ?3 WHERE id = ?1",
    )?
    .execute(params![id, next_attempt_at, last_error])?;
    Ok(())
}
