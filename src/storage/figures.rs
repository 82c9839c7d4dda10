//! Read-only figures about the lists and queues, for `signupd stats` and the metrics gauges:
//! counts, never rows, so nothing here returns an address.
//!
//! Decision: a list's signups and confirmations *in a window* are events, counted as
//! the status page counts them — the `signups.accepted` and `confirmations` rollups
//! ([`super::rollups::counter_since`]) — not rows here. A removal deletes the row ("not me", an
//! unsubscribe, `signupd remove`, a hard bounce) and the cleanup deletes expired pending rows,
//! but the signup and the confirmation still happened: counted from rows, `stats` showed fewer
//! signups in the last 24 hours than the status page for the same hours, and the more people
//! left, the fewer. `stats` is to show the signups and confirmations of the last 24 h and 7 d,
//! and `docs/operations.md` defines them, on the status page, as accepted answers and
//! confirmations by any method. What only rows can answer stays here: how many there are now, and the cohort
//! figures — of the rows created in the last 7 days still held, how many are confirmed, and by
//! source — which `stats` labels as such.

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

/// What waits in the event queue for one sink (a webhook endpoint or a destination).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkWaiting {
    pub sink: String,
    pub waiting: i64,
    /// Of those, how many have failed at least one attempt and wait for the next.
    pub retrying: i64,
    /// When the oldest waiting event was queued.
    pub oldest_at: UnixSeconds,
}

/// The sinks with events waiting, by name (for the status page's destinations). One pass over
/// the `(endpoint, next_attempt_at)` index and the rows, on the metrics listener only.
pub fn waiting_by_sink(conn: &Connection) -> rusqlite::Result<Vec<SinkWaiting>> {
    conn.prepare_cached(
        "SELECT endpoint, count(*), sum(attempts > 0), min(created_at) FROM webhook_deliveries
         GROUP BY endpoint ORDER BY endpoint",
    )?
    .query_map([], |row| {
        Ok(SinkWaiting { sink: row.get(0)?, waiting: row.get(1)?, retrying: row.get(2)?, oldest_at: row.get(3)? })
    })?
    .collect()
}

/// Rows of `list` in `status`.
/// The rows of `list` created since `since`, by their stored language code (`None`: a row from
/// before there was one), through the `(list_id, created_at, language)` index.
pub fn rows_by_language(
    conn: &Connection,
    list: &str,
    since: UnixSeconds,
) -> rusqlite::Result<Vec<(Option<String>, i64)>> {
    conn.prepare_cached(
        "SELECT language, count(*) FROM subscribers INDEXED BY subscribers_list_language
         WHERE list_id = ?1 AND created_at >= ?2 GROUP BY language",
    )?
    .query_map(params![list, since], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect()
}

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

/// Confirmed rows of `list` that `signupd import` brought over: confirmed on the operator's
/// word, not through signupd.
pub fn imported(conn: &Connection, list: &str) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT count(*) FROM subscribers WHERE list_id = ?1 AND status = 'confirmed' AND confirm_method = 'import'",
    )?
    .query_row([list], |row| row.get(0))
}

// The figures below are about signups and confirmations signupd saw: imported rows
// (`confirm_method = 'import'`) are neither, and `IS NOT` keeps the rows whose method is NULL
// (pending ones).

/// Rows of `list` created at or after `since` (signups that made a row; imports left out).
pub fn created_since(conn: &Connection, list: &str, since: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT count(*) FROM subscribers
         WHERE list_id = ?1 AND created_at >= ?2 AND confirm_method IS NOT 'import'",
    )?
    .query_row(params![list, since], |row| row.get(0))
}

/// Rows of `list` created at or after `since` that are confirmed now (imports left out).
pub fn confirmed_of_created_since(conn: &Connection, list: &str, since: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT count(*) FROM subscribers
         WHERE list_id = ?1 AND created_at >= ?2 AND status = 'confirmed' AND confirm_method IS NOT 'import'",
    )?
    .query_row(params![list, since], |row| row.get(0))
}

/// The median seconds from confirmation mail to confirm click, over `list`'s confirmations at
/// or after `since`; `None` without any. An imported row has no delay (no mail was sent), so it
/// never counts here.
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

/// Signups of one source (or of several, summed): rows created in a window, and how many of
/// them are confirmed now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceCounts {
    /// Rows created at or after the recent cut (the last 24 h in `stats`).
    pub created_recent: i64,
    /// Rows created at or after the window's start (the last 7 d in `stats`).
    pub created: i64,
    /// Of `created`, the rows confirmed now.
    pub confirmed: i64,
}

impl SourceCounts {
    fn add(&mut self, other: &Self) {
        self.created_recent += other.created_recent;
        self.created += other.created;
        self.confirmed += other.confirmed;
    }
}

/// A list's signups by source, bounded: the source is whatever the form sent, so a visitor can
/// make up any number of them, and only the `top` largest are kept by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceFigures {
    /// The largest named sources, most rows first (ties by name), at most the `top` asked for.
    pub named: Vec<(String, SourceCounts)>,
    /// Rows without a source; `None` when there are none.
    pub without: Option<SourceCounts>,
    /// How many named sources did not fit in `named`, and their rows summed; `None` when all
    /// fit.
    pub other: Option<(i64, SourceCounts)>,
}

/// Rows of `list` created at or after `since` by source, with those created at or after
/// `recent` counted apart: the `top` largest named sources, the rows without a source, and the
/// rest summed; imported rows are no signups and are left out. SQLite groups and sorts; this side keeps at most `top` entries however many
/// sources there are.
pub fn created_by_source_since(
    conn: &Connection,
    list: &str,
    since: UnixSeconds,
    recent: UnixSeconds,
    top: usize,
) -> rusqlite::Result<SourceFigures> {
    let mut statement = conn.prepare_cached(
        "SELECT source, count(*), sum(created_at >= ?3), sum(status = 'confirmed')
         FROM subscribers WHERE list_id = ?1 AND created_at >= ?2 AND confirm_method IS NOT 'import'
         GROUP BY source
         ORDER BY source IS NULL, count(*) DESC, source",
    )?;
    let mut rows = statement.query(params![list, since, recent])?;
    let mut figures = SourceFigures::default();
    while let Some(row) = rows.next()? {
        let source: Option<String> = row.get(0)?;
        let counts = SourceCounts { created: row.get(1)?, created_recent: row.get(2)?, confirmed: row.get(3)? };
        match source {
            None => figures.without = Some(counts),
            Some(source) if figures.named.len() < top => figures.named.push((source, counts)),
            Some(_) => {
                let (sources, sum) = figures.other.get_or_insert_with(Default::default);
                *sources += 1;
                sum.add(&counts);
            }
        }
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixSeconds = 1_767_225_600;

    /// A row of `list`, `age` seconds old, from `source`.
    fn insert(conn: &Connection, list: &str, source: Option<&str>, age: i64, status: &str) {
        conn.execute(
            "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash, source)
             VALUES (lower(hex(randomblob(16))), ?1, lower(hex(randomblob(8))) || '@example.com', ?2, 'v1', ?3,
                     lower(hex(randomblob(16))), ?4)",
            params![list, status, NOW - age, source],
        )
        .unwrap();
    }

    #[test]
    fn signups_by_source_keep_the_largest_by_name_count_none_apart_and_sum_the_rest() {
        // Arrange: on news, `big` with 3 rows (one confirmed, one 2 days old, one 8 days old),
        // 24 sources with one row each, two rows without a source; a row of another list
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        insert(&conn, "news", Some("big"), 60, "confirmed");
        insert(&conn, "news", Some("big"), 60, "pending");
        insert(&conn, "news", Some("big"), 2 * 86_400, "pending");
        insert(&conn, "news", Some("big"), 8 * 86_400, "confirmed");
        for n in 0..24 {
            insert(&conn, "news", Some(&format!("s{n:02}")), 60, if n == 23 { "confirmed" } else { "pending" });
        }
        insert(&conn, "news", None, 60, "pending");
        insert(&conn, "news", None, 60, "confirmed");
        insert(&conn, "other", Some("big"), 60, "pending");

        // Act
        let figures = created_by_source_since(&conn, "news", NOW - 7 * 86_400, NOW - 86_400, 5).unwrap();

        // Assert: `big` first, then by name; the 8-day-old row and the other list's row left out
        let names: Vec<&str> = figures.named.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["big", "s00", "s01", "s02", "s03"]);
        assert_eq!(figures.named[0].1, SourceCounts { created_recent: 2, created: 3, confirmed: 1 });
        assert_eq!(figures.named[1].1, SourceCounts { created_recent: 1, created: 1, confirmed: 0 });
        assert_eq!(figures.without, Some(SourceCounts { created_recent: 2, created: 2, confirmed: 1 }));
        assert_eq!(figures.other, Some((20, SourceCounts { created_recent: 20, created: 20, confirmed: 1 })));
        let quiet = created_by_source_since(&conn, "none-such", NOW - 7 * 86_400, NOW - 86_400, 5).unwrap();
        assert_eq!(quiet, SourceFigures::default());
    }
}
