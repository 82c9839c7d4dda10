//! The `webhook_deliveries` table: events waiting for an endpoint or destination, and
//! `sink_leases`, which worker delivers a sink's events until when. Each sink has one worker; it
//! takes the sink's lease (one row) and reads the due events, and writes an event only when it
//! settles it (schema 9: a lease written into every claimed row was a write of each event more,
//! on the writer the confirm pages wait for). The lease keeps a second worker on the same file,
//! and the next start after a `kill -9`, from delivering the same events while they are in
//! flight. A receiver never sees a later event about someone before an earlier one
//! (`unsubscribed` before `confirmed`), even while that earlier one is being retried: the only
//! pair of events about one subscriber row is its `subscriber.confirmed` and then its
//! `subscriber.unsubscribed`, so the unsubscribed row names the confirmed row it waits for
//! (`after_id`), found through the first id the confirmed event's rows got
//! (`subscribers.confirmed_event`; the rows of one event are inserted together, so their ids
//! follow one another). Schema 8 replaced an index on `(endpoint, subscriber_id, id)` with this:
//! that index put one page at a random place of the file into every confirm's commit.

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
    /// The queued event of the same endpoint this one waits for.
    pub after_id: Option<i64>,
}

/// Queues one delivery; its id.
pub fn insert(conn: &Connection, delivery: &NewDelivery<'_>) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO webhook_deliveries
             (endpoint, event_id, event_type, subscriber_id, payload, created_at, next_attempt_at, after_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
    )?
    .execute(params![
        delivery.endpoint,
        delivery.event_id,
        delivery.event_type,
        delivery.subscriber_id,
        delivery.payload,
        delivery.now,
        delivery.after_id
    ])?;
    Ok(conn.last_insert_rowid())
}

/// The most rows one event is queued as: one per webhook endpoint and destination.
const MAX_SINKS: i64 = crate::config::MAX_SINKS as i64;

/// The rows of subscriber `subscriber_id`'s `subscriber.confirmed` still queued, as (endpoint,
/// id): they were inserted together from id `first` on. A scan of at most `MAX_SINKS` ids.
pub fn queued_confirmed(conn: &Connection, first: i64, subscriber_id: &str) -> rusqlite::Result<Vec<(String, i64)>> {
    conn.prepare_cached(
        "SELECT endpoint, id FROM webhook_deliveries
         WHERE id >= ?1 AND id < ?1 + ?3 AND subscriber_id = ?2 AND event_type = 'subscriber.confirmed'",
    )?
    .query_map(params![first, subscriber_id, MAX_SINKS], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect()
}

/// A claimed delivery. Its payload holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
pub struct Claimed {
    pub id: i64,
    pub event_id: String,
    pub event_type: String,
    pub payload: String,
    pub created_at: UnixSeconds,
    /// Including this one: the attempts settled before it, and one.
    pub attempts: i64,
}

/// Due, and the event it waits for (if any) is gone: delivered or dropped.
const CLAIMABLE: &str = "d.endpoint = ?1 AND d.next_attempt_at <= ?2
     AND (d.after_id IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.id = d.after_id))";

/// Takes (or extends) the lease of `sink` for `holder` until `lease_until`, unless another
/// holder's lease runs past `now`. Whether `holder` has it.
pub fn take_sink_lease(
    conn: &Connection,
    sink: &str,
    holder: &str,
    now: UnixSeconds,
    lease_until: UnixSeconds,
) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(
            "INSERT INTO sink_leases (sink, holder, lease_until) VALUES (?1, ?2, ?4)
             ON CONFLICT (sink) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
             WHERE sink_leases.holder = excluded.holder OR sink_leases.lease_until <= ?3",
        )?
        .execute(params![sink, holder, now, lease_until])?;
    Ok(changed == 1)
}

/// Ends `holder`'s lease of `sink` at `now`: the sink's events are free for the next claim.
pub fn release_sink_lease(conn: &Connection, sink: &str, holder: &str, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sink_leases SET lease_until = ?3 WHERE sink = ?1 AND holder = ?2")?
        .execute(params![sink, holder, now])?;
    Ok(())
}

/// Up to `limit` claimable deliveries of `endpoint`, never one that waits for another; read
/// under the sink's lease. Ordered by due time (then id), which the `(endpoint,
/// next_attempt_at)` index yields as it is read: ordering by id alone made SQLite collect and
/// sort every due row first, a stall of the writer that grew with the queue. The order across
/// subscribers does not matter; within one, the `after_id` rule keeps it.
pub fn due(conn: &Connection, endpoint: &str, now: UnixSeconds, limit: usize) -> rusqlite::Result<Vec<Claimed>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(&format!(
        "SELECT id, event_id, event_type, payload, created_at, attempts + 1 FROM webhook_deliveries d
         WHERE {CLAIMABLE} ORDER BY d.next_attempt_at, d.id LIMIT ?3"
    ))?
    .query_map(params![endpoint, now, limit], |row| {
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

/// Whether `endpoint` has a claimable delivery that no other holder's live lease keeps from
/// `holder` (read-only: an idle worker never writes).
pub fn any_due(conn: &Connection, endpoint: &str, holder: &str, now: UnixSeconds) -> rusqlite::Result<bool> {
    conn.prepare_cached(&format!(
        "SELECT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE {CLAIMABLE})
            AND NOT EXISTS (SELECT 1 FROM sink_leases WHERE sink = ?1 AND holder <> ?3 AND lease_until > ?2)"
    ))?
    .query_row(params![endpoint, now, holder], |row| row.get(0))
}

pub fn delete(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM webhook_deliveries WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Counts a failed attempt and schedules the next. `last_error` never holds an address.
pub fn retry_at(conn: &Connection, id: i64, next_attempt_at: UnixSeconds, last_error: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ?2, last_error = ?3 WHERE id = ?1",
    )?
    .execute(params![id, next_attempt_at, last_error])?;
    Ok(())
}
