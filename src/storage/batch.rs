//! What a write command runs against: the writer's connection, inside the batch transaction,
//! and the batch's **counters** (the `rate_limits` rows of the rate limits and the surge
//! alert).
//!
//! A signup counts its client and neighbourhood once per rule, and most requests of a wave share
//! their counters: counted in SQL, every request would read and rewrite the same rows, a dozen
//! statements each. Here a counter is read from the table the first time a batch touches it, and
//! counted in memory after that; when the batch commits, each counter it changed is written back
//! once, by one upsert in the same transaction. So:
//!
//! - every command sees every earlier command of its batch, as in SQL: the writer runs them one
//!   after another, so a limit of N lets exactly N requests through however they race;
//! - what a failed command counted is undone with its savepoint (and only that);
//! - the counts reach the file in the commit that records the requests they counted, or not at
//!   all: no acknowledged request is missing from its counter after a crash, and none counts
//!   without being recorded.
//!
//! Other counters (the per-network mail counts of the fair budget) are read in SQL by queries
//! that rank many at once, and stay in SQL.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;

/// The transaction one command runs in; given to [`super::Command::execute`].
#[allow(missing_debug_implementations)]
pub struct Batch<'a> {
    conn: &'a Connection,
    counters: &'a mut Counters,
}

impl<'a> Batch<'a> {
    pub(super) fn new(conn: &'a Connection, counters: &'a mut Counters) -> Self {
        Self { conn, counters }
    }

    /// The connection, inside the batch's transaction and this command's savepoint.
    pub fn conn(&self) -> &'a Connection {
        self.conn
    }

    /// The counter `key` at `now`, with everything counted earlier in this batch and by this
    /// command; 0 if it does not exist or its window ended.
    pub fn counter(&mut self, key: &str, now: UnixSeconds) -> rusqlite::Result<i64> {
        Ok(self.counters.entry(self.conn, key, now)?.value())
    }

    /// Adds `by` to the counter `key` (created to expire at `expires_at` if new); returns its
    /// new value. Written when the batch commits, dropped if this command fails.
    pub fn count(&mut self, key: &str, by: i64, expires_at: UnixSeconds, now: UnixSeconds) -> rusqlite::Result<i64> {
        let entry = self.counters.entry(self.conn, key, now)?;
        entry.by_command += by;
        entry.expires_at = entry.expires_at.max(expires_at);
        Ok(entry.value())
    }
}

/// The counters one batch has touched.
#[derive(Debug, Default)]
pub(super) struct Counters {
    /// By key; ordered, so the write-back walks the table's index in order.
    entries: BTreeMap<String, Entry>,
}

#[derive(Debug)]
struct Entry {
    /// As read from the table at the batch's first touch.
    stored: i64,
    /// Added by commands of this batch that succeeded.
    by_batch: i64,
    /// Added by the command running now.
    by_command: i64,
    expires_at: UnixSeconds,
}

impl Entry {
    fn value(&self) -> i64 {
        self.stored + self.by_batch + self.by_command
    }
}

impl Counters {
    fn entry(&mut self, conn: &Connection, key: &str, now: UnixSeconds) -> rusqlite::Result<&mut Entry> {
        if !self.entries.contains_key(key) {
            let stored = conn
                .prepare_cached("SELECT count, expires_at FROM rate_limits WHERE key = ?1 AND expires_at > ?2")?
                .query_row(params![key, now], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            let (stored, expires_at) = stored.unwrap_or((0, 0));
            self.entries.insert(key.to_owned(), Entry { stored, by_batch: 0, by_command: 0, expires_at });
        }
        Ok(self.entries.get_mut(key).expect("inserted above"))
    }

    /// The running command succeeded: what it counted is the batch's.
    pub(super) fn keep_command(&mut self) {
        for entry in self.entries.values_mut() {
            entry.by_batch += std::mem::take(&mut entry.by_command);
        }
    }

    /// The running command failed and was rolled back: so is what it counted.
    pub(super) fn drop_command(&mut self) {
        for entry in self.entries.values_mut() {
            entry.by_command = 0;
        }
    }

    /// Writes every counter the batch changed, one upsert each, inside the batch's transaction;
    /// empties the set for the next batch.
    pub(super) fn write_back(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let entries = std::mem::take(&mut self.entries);
        for (key, entry) in entries.into_iter().filter(|(_, entry)| entry.by_batch != 0) {
            conn.prepare_cached(
                "INSERT INTO rate_limits (key, count, expires_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET count = count + excluded.count",
            )?
            .execute(params![key, entry.by_batch, entry.expires_at])?;
        }
        Ok(())
    }
}

/// Runs `work` as the writer runs one command alone in its batch, on `conn` in the caller's
/// transaction: for tests of commands without the writer thread.
#[cfg(test)]
pub(crate) fn run_alone<T>(
    conn: &Connection,
    work: impl FnOnce(&mut Batch<'_>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut counters = Counters::default();
    let output = work(&mut Batch::new(conn, &mut counters))?;
    counters.keep_command();
    counters.write_back(conn)?;
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    fn stored(conn: &Connection, key: &str) -> Option<i64> {
        conn.query_row("SELECT count FROM rate_limits WHERE key = ?1", [key], |row| row.get(0)).optional().unwrap()
    }

    #[test]
    fn a_batch_counts_in_memory_and_writes_each_counter_once_with_what_it_kept() {
        let (_dir, conn) = database();
        conn.execute("INSERT INTO rate_limits (key, count, expires_at) VALUES ('a', 5, 1000)", []).unwrap();
        let mut counters = Counters::default();

        // Two commands that succeed, one that fails in between.
        let mut batch = Batch::new(&conn, &mut counters);
        assert_eq!(batch.count("a", 1, 1000, 10).unwrap(), 6);
        assert_eq!(batch.count("b", 1, 2000, 10).unwrap(), 1);
        counters.keep_command();
        let mut batch = Batch::new(&conn, &mut counters);
        assert_eq!(batch.count("a", 10, 1000, 10).unwrap(), 16, "a command sees its own count");
        counters.drop_command();
        let mut batch = Batch::new(&conn, &mut counters);
        assert_eq!(batch.counter("a", 10).unwrap(), 6, "and the failed command's count is gone");
        assert_eq!(batch.count("a", 1, 1000, 10).unwrap(), 7);
        counters.keep_command();
        assert_eq!(stored(&conn, "a"), Some(5), "nothing is written before the commit");

        counters.write_back(&conn).unwrap();

        assert_eq!(stored(&conn, "a"), Some(7));
        assert_eq!(stored(&conn, "b"), Some(1));
        let expires: i64 =
            conn.query_row("SELECT expires_at FROM rate_limits WHERE key = 'b'", [], |r| r.get(0)).unwrap();
        assert_eq!(expires, 2000);
        assert!(counters.entries.is_empty(), "the next batch reads afresh");
    }

    #[test]
    fn an_ended_window_reads_as_zero_and_a_counter_only_read_is_not_written() {
        let (_dir, conn) = database();
        conn.execute("INSERT INTO rate_limits (key, count, expires_at) VALUES ('old', 9, 100)", []).unwrap();
        let mut counters = Counters::default();
        let mut batch = Batch::new(&conn, &mut counters);
        assert_eq!(batch.counter("old", 100).unwrap(), 0);
        assert_eq!(batch.counter("never", 100).unwrap(), 0);
        counters.keep_command();
        counters.write_back(&conn).unwrap();
        assert_eq!(stored(&conn, "never"), None);
        assert_eq!(stored(&conn, "old"), Some(9));
    }
}
