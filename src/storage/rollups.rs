//! The `rollups` table: the status page's hourly counts (`crate::status`). One row per clock
//! hour (Unix seconds ÷ 3600), list and series; counters are added to, gauges keep the hour's
//! maximum. Counts only: a list id (or `''` for the service-wide series) and a fixed word.

use rusqlite::{Connection, params};

use crate::clock::UnixSeconds;

/// Seconds in an hour: a rollup's `hour` is a Unix time divided by this.
pub const HOUR: i64 = 3600;

/// How long rollups are kept: the hourly cleanup deletes older ones. Over a year, so a year's
/// page (or a future longer range) has its hours, and the table stays small (BENCHMARKS.md).
pub const RETENTION_DAYS: i64 = 400;

/// The clock hour of `time`.
pub fn hour_of(time: UnixSeconds) -> i64 {
    time.div_euclid(HOUR)
}

/// One stored value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollup {
    pub hour: i64,
    pub list: String,
    pub series: String,
    pub value: i64,
}

/// Adds `value` to the counter `series` of `list` in `hour`.
pub fn add(conn: &Connection, hour: i64, list: &str, series: &str, value: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO rollups (hour, list, series, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (hour, list, series) DO UPDATE SET value = value + excluded.value",
    )?
    .execute(params![hour, list, series, value])?;
    Ok(())
}

/// Raises the gauge `series` of `list` in `hour` to `value`, if that is higher.
pub fn raise(conn: &Connection, hour: i64, list: &str, series: &str, value: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO rollups (hour, list, series, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (hour, list, series) DO UPDATE SET value = max(value, excluded.value)",
    )?
    .execute(params![hour, list, series, value])?;
    Ok(())
}

/// Series named with this prefix are gauges (an hour holds its largest sample); the others are
/// counts.
pub const GAUGE_PREFIX: &str = "queue.";

/// Calls `visit(hour, list, series, value)` for every value from hour `first` to hour `last`,
/// both included, in primary-key order: a range scan of the key, whatever the table's age, and
/// nothing copied per row (the status page sums about 30,000 rows for its 30 days; SQLite's own
/// `GROUP BY` over a computed bucket would sort them first, which measured ten times slower).
pub fn visit_between(
    conn: &Connection,
    first: i64,
    last: i64,
    mut visit: impl FnMut(i64, &str, &str, i64),
) -> rusqlite::Result<()> {
    let mut statement = conn.prepare_cached(
        "SELECT hour, list, series, value FROM rollups WHERE hour >= ?1 AND hour <= ?2 ORDER BY hour, list, series",
    )?;
    let mut rows = statement.query(params![first, last])?;
    while let Some(row) = rows.next()? {
        let text = |index: usize| row.get_ref(index).and_then(|value| Ok(value.as_str()?));
        visit(row.get(0)?, text(1)?, text(2)?, row.get(3)?);
    }
    Ok(())
}

/// Every value from hour `first` to hour `last`, both included, oldest first: a range scan of
/// the primary key, whatever the table's age.
pub fn between(conn: &Connection, first: i64, last: i64) -> rusqlite::Result<Vec<Rollup>> {
    let mut statement = conn.prepare_cached(
        "SELECT hour, list, series, value FROM rollups WHERE hour >= ?1 AND hour <= ?2 ORDER BY hour, list, series",
    )?;
    statement
        .query_map(params![first, last], |row| {
            Ok(Rollup { hour: row.get(0)?, list: row.get(1)?, series: row.get(2)?, value: row.get(3)? })
        })?
        .collect()
}

/// Deletes the values of hours before `hour`; returns how many went.
pub fn delete_before(conn: &Connection, hour: i64) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM rollups WHERE hour < ?1")?.execute([hour])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_gauges_keep_the_maximum_and_a_range_reads_only_its_hours() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();

        add(&conn, 10, "news", "signups.accepted", 2).unwrap();
        add(&conn, 10, "news", "signups.accepted", 3).unwrap();
        raise(&conn, 10, "", "queue.mail.depth", 7).unwrap();
        raise(&conn, 10, "", "queue.mail.depth", 4).unwrap();
        add(&conn, 9, "news", "signups.accepted", 1).unwrap();
        add(&conn, 12, "news", "signups.accepted", 1).unwrap();

        let rows = between(&conn, 10, 11).unwrap();
        assert_eq!(
            rows,
            [
                Rollup { hour: 10, list: String::new(), series: "queue.mail.depth".into(), value: 7 },
                Rollup { hour: 10, list: "news".into(), series: "signups.accepted".into(), value: 5 },
            ]
        );
        let mut visited = Vec::new();
        visit_between(&conn, 10, 11, |hour, list, series, value| {
            visited.push((hour, list.to_owned(), series.to_owned(), value))
        })
        .unwrap();
        let read: Vec<_> = rows.iter().map(|r| (r.hour, r.list.clone(), r.series.clone(), r.value)).collect();
        assert_eq!(visited, read, "the same rows, visited");
        assert_eq!(delete_before(&conn, 10).unwrap(), 1);
        assert_eq!(between(&conn, 0, 100).unwrap().len(), 3);
        let plan: String = conn
            .query_row(
                "EXPLAIN QUERY PLAN SELECT hour, list, series, value FROM rollups WHERE hour >= 1 AND hour <= 2",
                [],
                |row| row.get(3),
            )
            .unwrap();
        assert!(plan.contains("USING PRIMARY KEY"), "{plan}");
    }
}
