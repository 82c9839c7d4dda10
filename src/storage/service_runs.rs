//! The `service_runs` table: when each periodic job last finished.

use rusqlite::{Connection, OptionalExtension};

use crate::clock::UnixSeconds;

/// Records that the hourly cleanup finished at `now`.
pub fn record_cleanup(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO service_runs (name, last_run_at) VALUES ('cleanup', ?1)
         ON CONFLICT (name) DO UPDATE SET last_run_at = excluded.last_run_at",
    )?
    .execute([now])?;
    Ok(())
}

/// When the hourly cleanup last finished; `None` before its first run.
pub fn last_cleanup_at(conn: &Connection) -> rusqlite::Result<Option<UnixSeconds>> {
    conn.prepare_cached("SELECT last_run_at FROM service_runs WHERE name = 'cleanup'")?
        .query_row([], |row| row.get(0))
        .optional()
}
