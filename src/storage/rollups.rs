//! The `rollups` table: the status page's hourly counts (`crate::operator::status`). One row per clock
//! hour (Unix seconds ÷ 3600), list and series; counters are added to, gauges keep the hour's
//! maximum. Counts only: a list id (or `''` for the service-wide series) and a fixed word.
//!
//! Beside it, `source_rollups`: per hour, list and source, the accepted signups and the
//! confirmations, for the page's confirmation rate by source. An hour of a list keeps at most
//! [`SOURCES_PER_HOUR`] sources by name and sums the rest under [`OTHER_SOURCES`], so a flood of
//! made-up sources adds at most that many rows an hour; they are kept
//! [`SOURCE_RETENTION_DAYS`]. The same counts are added, in the same statement's command, to
//! `source_rollups_daily`, one row per UTC day, list and source under the same bound per day:
//! the page's 30 days read 31 rows a source instead of 744, and a day's totals are always the
//! sum of its hours (only which sources keep their names can differ, past the bound).

use std::sync::LazyLock;

use rusqlite::{Connection, params};

use crate::clock::UnixSeconds;
use crate::metrics::tally::{NO_SOURCE, OTHER_SOURCES, SOURCES_PER_HOUR, SourceFigures};

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

/// The counter `series` of `list` summed over the hours from `first` on, the current one
/// included: what the status page sums for those hours. `signupd stats` asks it for a list's
/// accepted signups and confirmations (`crate::storage::figures` says why not its rows).
pub fn counter_since(conn: &Connection, list: &str, series: &str, first: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT coalesce(sum(value), 0) FROM rollups WHERE hour >= ?1 AND list = ?2 AND series = ?3")?
        .query_row(params![first, list, series], |row| row.get(0))
}

/// Deletes the values of hours before `hour`; returns how many went.
pub fn delete_before(conn: &Connection, hour: i64) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM rollups WHERE hour < ?1")?.execute([hour])
}

/// How long the source rollups are kept: the page's longest range (30 days, from midnight)
/// and a day. Shorter than [`RETENTION_DAYS`] because their rows are bounded by a rule
/// ([`SOURCES_PER_HOUR`]), not by the configuration: at most 31 × 24 × 102 rows a list.
pub const SOURCE_RETENTION_DAYS: i64 = 31;

/// Hours in a day: a daily source rollup's `day` is an hour divided by this (UTC days, as the
/// page's 30-day buckets).
pub const HOURS_PER_DAY: i64 = 24;

/// The UTC day of the clock hour `hour`.
pub fn day_of(hour: i64) -> i64 {
    hour.div_euclid(HOURS_PER_DAY)
}

/// Adds `figures` to `source` of `list` in `hour`, and in its day (`source`: a source,
/// [`NO_SOURCE`] or [`OTHER_SOURCES`]). A source the hour (or the day) does not hold yet goes to
/// [`OTHER_SOURCES`] once it holds [`SOURCES_PER_HOUR`] of the list by name. One statement a
/// table, in the writer: nothing else writes between its count and its insert.
pub fn add_source(
    conn: &Connection,
    hour: i64,
    list: &str,
    source: &str,
    figures: SourceFigures,
) -> rusqlite::Result<()> {
    add_bounded_source(conn, &BY_HOUR, hour, list, source, figures)?;
    add_bounded_source(conn, &BY_DAY, day_of(hour), list, source, figures)
}

/// The upsert of [`add_source`] into the hours' table and into the days' table.
static BY_HOUR: LazyLock<String> = LazyLock::new(|| bounded_source_upsert("source_rollups", "hour"));
static BY_DAY: LazyLock<String> = LazyLock::new(|| bounded_source_upsert("source_rollups_daily", "day"));

/// One statement that adds a source's figures to `table`, keyed by `key` (an hour or a day), and
/// sums a source past the bound under [`OTHER_SOURCES`]: `?1` the key, `?2` the list, `?3` the
/// source, `?4`/`?5` the figures, `?6`/`?7` [`NO_SOURCE`] and [`OTHER_SOURCES`], `?8` the bound.
fn bounded_source_upsert(table: &str, key: &str) -> String {
    format!(
        "INSERT INTO {table} ({key}, list, source, signups, confirmations)
         SELECT ?1, ?2,
                CASE WHEN ?3 IN (?6, ?7)
                       OR EXISTS (SELECT 1 FROM {table} WHERE {key} = ?1 AND list = ?2 AND source = ?3)
                       OR (SELECT count(*) FROM {table}
                           WHERE {key} = ?1 AND list = ?2 AND source NOT IN (?6, ?7)) < ?8
                     THEN ?3 ELSE ?7 END,
                ?4, ?5
         WHERE true
         ON CONFLICT ({key}, list, source) DO UPDATE
         SET signups = signups + excluded.signups, confirmations = confirmations + excluded.confirmations"
    )
}

fn add_bounded_source(
    conn: &Connection,
    statement: &str,
    key: i64,
    list: &str,
    source: &str,
    figures: SourceFigures,
) -> rusqlite::Result<()> {
    let bound = i64::try_from(SOURCES_PER_HOUR).unwrap_or(i64::MAX);
    conn.prepare_cached(statement)?.execute(params![
        key,
        list,
        source,
        figures.signups,
        figures.confirmations,
        NO_SOURCE,
        OTHER_SOURCES,
        bound
    ])?;
    Ok(())
}

/// Calls `visit(list, source, figures)` for every source's hour from hour `first` to hour
/// `last`, both included: a range scan of the primary key.
pub fn visit_sources_between(
    conn: &Connection,
    first: i64,
    last: i64,
    visit: impl FnMut(&str, &str, SourceFigures),
) -> rusqlite::Result<()> {
    visit_source_rows(
        conn,
        "SELECT list, source, signups, confirmations FROM source_rollups WHERE hour >= ?1 AND hour <= ?2",
        first,
        last,
        visit,
    )
}

/// Calls `visit(list, source, figures)` for every source's day from day `first` to day `last`,
/// both included: a range scan of the primary key of `source_rollups_daily`.
pub fn visit_daily_sources_between(
    conn: &Connection,
    first: i64,
    last: i64,
    visit: impl FnMut(&str, &str, SourceFigures),
) -> rusqlite::Result<()> {
    visit_source_rows(
        conn,
        "SELECT list, source, signups, confirmations FROM source_rollups_daily WHERE day >= ?1 AND day <= ?2",
        first,
        last,
        visit,
    )
}

/// Runs `query` (list, source, signups, confirmations between keys `first` and `last`) and hands
/// each row to `visit` without copying its strings.
fn visit_source_rows(
    conn: &Connection,
    query: &str,
    first: i64,
    last: i64,
    mut visit: impl FnMut(&str, &str, SourceFigures),
) -> rusqlite::Result<()> {
    let mut statement = conn.prepare_cached(query)?;
    let mut rows = statement.query(params![first, last])?;
    while let Some(row) = rows.next()? {
        let text = |index: usize| row.get_ref(index).and_then(|value| Ok(value.as_str()?));
        visit(text(0)?, text(1)?, SourceFigures { signups: row.get(2)?, confirmations: row.get(3)? });
    }
    Ok(())
}

/// Deletes the source rollups of hours before `hour`, and of the days before its day; returns
/// how many went.
pub fn delete_sources_before(conn: &Connection, hour: i64) -> rusqlite::Result<usize> {
    let hours = conn.prepare_cached("DELETE FROM source_rollups WHERE hour < ?1")?.execute([hour])?;
    let days = conn.prepare_cached("DELETE FROM source_rollups_daily WHERE day < ?1")?.execute([day_of(hour)])?;
    Ok(hours + days)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_keeps_the_bound_of_sources_by_name_and_sums_the_rest_as_other() {
        // Arrange: an hour of news that holds the bound's sources by name, and none
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        let signup = SourceFigures { signups: 1, confirmations: 0 };
        for n in 0..SOURCES_PER_HOUR {
            add_source(&conn, 10, "news", &format!("s{n:03}"), signup).unwrap();
        }
        add_source(&conn, 10, "news", NO_SOURCE, signup).unwrap();

        // Act: sources the hour does not hold, one it holds, the next hour, another list
        for n in 0..30 {
            add_source(&conn, 10, "news", &format!("late{n}"), signup).unwrap();
        }
        add_source(&conn, 10, "news", "s042", SourceFigures { signups: 2, confirmations: 1 }).unwrap();
        add_source(&conn, 10, "news", OTHER_SOURCES, SourceFigures { signups: 5, confirmations: 0 }).unwrap();
        add_source(&conn, 11, "news", "late0", signup).unwrap();
        add_source(&conn, 10, "other", "late0", signup).unwrap();

        // Assert
        let mut hour = std::collections::BTreeMap::new();
        visit_sources_between(&conn, 10, 10, |list, source, figures| {
            hour.insert((list.to_owned(), source.to_owned()), figures);
        })
        .unwrap();
        let of_news = hour.keys().filter(|(list, _)| list == "news").count();
        assert_eq!(of_news, SOURCES_PER_HOUR + 2, "the named sources, none and other");
        let news = |source: &str| hour.get(&("news".to_owned(), source.to_owned())).copied();
        assert_eq!(news(OTHER_SOURCES), Some(SourceFigures { signups: 35, confirmations: 0 }));
        assert_eq!(news("s042"), Some(SourceFigures { signups: 3, confirmations: 1 }));
        assert_eq!(news("late0"), None, "past the bound");
        assert_eq!(news(NO_SOURCE), Some(signup));
        assert_eq!(hour.get(&("other".to_owned(), "late0".to_owned())), Some(&signup), "a list of its own");
        let mut next = Vec::new();
        visit_sources_between(&conn, 11, 11, |list, source, _| next.push(format!("{list}/{source}"))).unwrap();
        assert_eq!(next, ["news/late0"], "a new hour, a new bound");
        assert_eq!(delete_sources_before(&conn, 11).unwrap(), of_news + 1);
    }

    #[test]
    fn a_day_holds_the_sum_of_its_hours_under_the_same_bound_and_its_totals_equal_theirs() {
        // Arrange: day 1 (hours 24 to 47) of news, each of two hours with 100 sources of its own
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        let signup = SourceFigures { signups: 1, confirmations: 0 };
        let confirmed_pair = SourceFigures { signups: 2, confirmations: 1 };

        // Act
        for n in 0..SOURCES_PER_HOUR {
            add_source(&conn, 24, "news", &format!("a{n:03}"), signup).unwrap();
        }
        for n in 0..SOURCES_PER_HOUR {
            add_source(&conn, 47, "news", &format!("b{n:03}"), confirmed_pair).unwrap();
        }
        add_source(&conn, 47, "news", NO_SOURCE, signup).unwrap();
        add_source(&conn, 48, "news", "a000", signup).unwrap();

        // Assert: the day keeps the first 100 names it saw, sums the rest as other, and adds up
        // to its hours; the next hour starts the next day
        let read = |daily: bool, first: i64, last: i64| {
            let mut rows = std::collections::BTreeMap::new();
            let mut visit = |_: &str, source: &str, figures: SourceFigures| {
                let total: &mut SourceFigures = rows.entry(source.to_owned()).or_default();
                total.signups += figures.signups;
                total.confirmations += figures.confirmations;
            };
            if daily {
                visit_daily_sources_between(&conn, first, last, &mut visit).unwrap();
            } else {
                visit_sources_between(&conn, first, last, &mut visit).unwrap();
            }
            rows
        };
        let day = read(true, 1, 1);
        let hours = read(false, 24, 47);
        assert_eq!(day.len(), SOURCES_PER_HOUR + 2, "100 names, none and other: {day:?}");
        assert!(day.contains_key("a099") && !day.contains_key("b000"), "{day:?}");
        assert_eq!(day[OTHER_SOURCES], SourceFigures { signups: 200, confirmations: 100 });
        let sum = |rows: &std::collections::BTreeMap<String, SourceFigures>| {
            rows.values().fold((0, 0), |(s, c), figures| (s + figures.signups, c + figures.confirmations))
        };
        assert_eq!(sum(&day), sum(&hours), "a day's totals are its hours'");
        assert_eq!(sum(&day), (301, 100));
        assert_eq!(read(true, 2, 2).keys().collect::<Vec<_>>(), ["a000"], "hour 48 is day 2");
        assert_eq!(delete_sources_before(&conn, 48).unwrap(), 2 * SOURCES_PER_HOUR + 1 + SOURCES_PER_HOUR + 2);
        assert_eq!(read(true, 0, 2).keys().collect::<Vec<_>>(), ["a000"], "day 2 is kept");
    }

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
