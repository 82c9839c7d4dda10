//! The embedded, versioned schema. Each migration runs in its own transaction and bumps
//! `PRAGMA user_version` (rusqlite_migration); migrations are append-only — never edit one that
//! has shipped, add the next.

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

const MIGRATION_SLICE: &[M<'_>] = &[
    M::up(include_str!("migrations/0001_initial.sql")),
    M::up(include_str!("migrations/0002_operator.sql")),
    M::up(include_str!("migrations/0003_webhooks.sql")),
    M::up(include_str!("migrations/0004_under_attack.sql")),
    M::up(include_str!("migrations/0005_lists_and_attribution.sql")).foreign_key_check(),
    M::up(include_str!("migrations/0006_status_rollups.sql")),
    M::up(include_str!("migrations/0007_many_networks.sql")),
    M::up(include_str!("migrations/0008_event_order.sql")),
    M::up(include_str!("migrations/0009_sink_leases.sql")),
    M::up(include_str!("migrations/0010_bounces_and_complaints.sql")),
    M::up(include_str!("migrations/0011_relay_events.sql")),
    M::up(include_str!("migrations/0012_audit_log.sql")),
    M::up(include_str!("migrations/0013_fields.sql")),
    M::up(include_str!("migrations/0014_source_rollups.sql")),
    M::up(include_str!("migrations/0015_complaint_domains.sql")),
    M::up(include_str!("migrations/0016_daily_source_rollups.sql")),
    M::up(include_str!("migrations/0017_languages.sql")),
];

pub const MIGRATIONS: Migrations<'_> = Migrations::from_slice(MIGRATION_SLICE);

/// The schema version this binary writes.
pub const LATEST_VERSION: usize = MIGRATION_SLICE.len();

#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error(
        "the database has schema version {found}, but this signupd knows versions up to {LATEST_VERSION}; \
         it was written by a newer signupd: run that version, or restore a backup taken before the upgrade"
    )]
    TooNew { found: usize },
    #[error("cannot read the schema version")]
    Version(#[source] rusqlite::Error),
    #[error("cannot switch foreign keys off for the migrations")]
    ForeignKeys(#[source] rusqlite::Error),
    #[error("cannot apply migrations")]
    Apply(#[source] rusqlite_migration::Error),
}

/// The schema version stored in the file (0 for a new database).
pub fn schema_version(conn: &Connection) -> Result<usize, MigrationError> {
    let version: i64 =
        conn.pragma_query_value(None, "user_version", |row| row.get(0)).map_err(MigrationError::Version)?;
    Ok(usize::try_from(version).unwrap_or(usize::MAX))
}

/// Refuses a database written by a newer binary; reads only.
pub fn ensure_not_newer(conn: &Connection) -> Result<usize, MigrationError> {
    let found = schema_version(conn)?;
    if found > LATEST_VERSION {
        return Err(MigrationError::TooNew { found });
    }
    Ok(found)
}

/// Applies every pending migration; a no-op on an up-to-date database. Returns how many ran.
///
/// Foreign keys are off while migrations run (a pragma inside a migration's transaction would
/// be a no-op): a migration that rebuilds a table drops the old one, and with foreign keys on
/// that would delete the rows that refer to it. Migrations that rebuild check the keys before
/// they commit (`foreign_key_check`). The setting the connection had is restored.
pub fn migrate(conn: &mut Connection) -> Result<usize, MigrationError> {
    let before = ensure_not_newer(conn)?;
    if before == LATEST_VERSION {
        return Ok(0);
    }
    let foreign_keys: bool =
        conn.pragma_query_value(None, "foreign_keys", |row| row.get(0)).map_err(MigrationError::ForeignKeys)?;
    conn.pragma_update(None, "foreign_keys", false).map_err(MigrationError::ForeignKeys)?;
    let applied = MIGRATIONS.to_latest(conn).map_err(MigrationError::Apply);
    conn.pragma_update(None, "foreign_keys", foreign_keys).map_err(MigrationError::ForeignKeys)?;
    applied?;
    Ok(LATEST_VERSION - before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        MIGRATIONS.validate().unwrap();
    }

    #[test]
    fn apply_from_empty_then_again_as_a_no_op() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION);
        assert_eq!(schema_version(&conn).unwrap(), LATEST_VERSION);
        assert_eq!(migrate(&mut conn).unwrap(), 0);
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tables,
            [
                "address_mails",
                "audit_log",
                "complaints",
                "consent_texts",
                "intake",
                "mail_bucket",
                "network_mails",
                "network_reputation",
                "outbox",
                "rate_limits",
                "relay_receipts",
                "rollups",
                "send_refs",
                "service_runs",
                "sink_leases",
                "source_rollups",
                "source_rollups_daily",
                "subscribers",
                "suppressions",
                "webhook_deliveries",
            ]
        );
    }

    #[test]
    fn rebuilding_suppressions_keeps_every_row_and_allows_bounced_and_complained_only_from_then_on() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        MIGRATIONS.to_version(&mut conn, 9).unwrap();
        conn.execute_batch(
            "INSERT INTO suppressions (hash, reason, created_at, list_id) VALUES ('a', 'not_me', 1, 'news'),
                                                                               ('b', 'unsubscribed', 2, NULL);",
        )
        .unwrap();
        let refused =
            conn.execute("INSERT INTO suppressions (hash, reason, created_at) VALUES ('c', 'bounced', 3)", []);
        assert!(refused.is_err(), "version 9 knows no bounces");

        MIGRATIONS.to_version(&mut conn, 10).unwrap();

        let rows: Vec<(String, String, i64, Option<String>)> = conn
            .prepare("SELECT hash, reason, created_at, list_id FROM suppressions ORDER BY hash")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            rows,
            [("a".into(), "not_me".into(), 1, Some("news".into())), ("b".into(), "unsubscribed".into(), 2, None)]
        );
        for (hash, reason) in [("c", "bounced"), ("d", "complained")] {
            conn.execute(
                "INSERT INTO suppressions (hash, reason, created_at, list_id) VALUES (?1, ?2, 3, '*')",
                [hash, reason],
            )
            .unwrap();
        }
        let other = conn.execute("INSERT INTO suppressions (hash, reason, created_at) VALUES ('e', 'spam', 3)", []);
        assert!(other.is_err(), "no other reason");
    }

    #[test]
    fn rebuilding_subscribers_keeps_every_row_and_the_mail_that_refers_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        MIGRATIONS.to_version(&mut conn, 4).unwrap();
        conn.execute_batch(
            "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, confirm_hash,
                                      confirmed_at, confirm_method, removal_hash)
             VALUES ('a', 'news', 'ann@example.com', 'confirmed', 'v1', 5, 'h', 9, 'retype', 'r');
             INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at) VALUES ('welcome', 'a', 9, 9);",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION - 4);
        let row: (String, String, i64, Option<String>) = conn
            .query_row("SELECT email, confirm_method, confirmed_at, source FROM subscribers WHERE id = 'a'", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .unwrap();
        assert_eq!(row, ("ann@example.com".into(), "retype".into(), 9, None));
        let queued: i64 = conn.query_row("SELECT count(*) FROM outbox", [], |r| r.get(0)).unwrap();
        assert_eq!(queued, 1, "dropping the old table must not cascade into the outbox");
        let foreign_keys: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap();
        assert!(foreign_keys, "the connection's setting is restored");
        conn.execute("DELETE FROM subscribers WHERE id = 'a'", []).unwrap();
        let queued: i64 = conn.query_row("SELECT count(*) FROM outbox", [], |r| r.get(0)).unwrap();
        assert_eq!(queued, 0, "the rebuilt table is still the outbox's parent");
    }

    #[test]
    fn version_13_adds_fields_to_rows_and_waiting_signups_of_version_12_as_none() {
        // Arrange: at version 12, a confirmed row and a signup still in the intake queue
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        MIGRATIONS.to_version(&mut conn, 12).unwrap();
        conn.execute_batch(
            "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash, source)
             VALUES ('a', 'news', 'ann@example.com', 'confirmed', 'v1', 5, 'r', 'footer');
             INSERT INTO intake (list_id, email, consent_version, received_at, network)
             VALUES ('news', 'bob@example.com', 'v1', 6, 'n');",
        )
        .unwrap();
        let refused = conn.execute("UPDATE subscribers SET fields = '{}'", []);
        assert!(refused.is_err(), "version 12 has no fields");

        // Act
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION - 12);

        // Assert: both keep everything and have no fields; new rows may have them
        let row: (String, Option<String>) = conn
            .query_row("SELECT source, fields FROM subscribers WHERE id = 'a'", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(row, ("footer".into(), None));
        let waiting: (String, Option<String>) =
            conn.query_row("SELECT email, fields FROM intake", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(waiting, ("bob@example.com".into(), None));
        conn.execute("UPDATE subscribers SET fields = '{\"first_name\":\"Ann\"}' WHERE id = 'a'", []).unwrap();
    }

    #[test]
    fn version_16_sums_the_hours_by_source_into_days_keeping_the_100_largest_names_of_each() {
        // Arrange: at version 15, day 1 of news: 101 named sources in hour 24 (s000 the largest,
        // s100 the smallest), none and other in hour 30, s000 again in hour 47; day 2 apart
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        MIGRATIONS.to_version(&mut conn, 15).unwrap();
        let insert = "INSERT INTO source_rollups VALUES (?1, 'news', ?2, ?3, ?4)";
        for n in 0..=100_i64 {
            conn.execute(insert, rusqlite::params![24, format!("s{n:03}"), 200 - n, 1]).unwrap();
        }
        conn.execute(insert, rusqlite::params![30, "", 5, 2]).unwrap();
        conn.execute(insert, rusqlite::params![30, "(other)", 7, 0]).unwrap();
        conn.execute(insert, rusqlite::params![47, "s000", 3, 3]).unwrap();
        conn.execute(insert, rusqlite::params![48, "s100", 1, 0]).unwrap();

        // Act
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION - 15);

        // Assert
        let day = |day: i64, source: &str| -> Option<(i64, i64)> {
            conn.query_row(
                "SELECT signups, confirmations FROM source_rollups_daily WHERE day = ?1 AND list = 'news' AND source = ?2",
                rusqlite::params![day, source],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .ok()
        };
        assert_eq!(day(1, "s000"), Some((203, 4)), "its two hours summed");
        assert_eq!(day(1, "s099"), Some((101, 1)));
        assert_eq!(day(1, "s100"), None, "the 101st name is summed as other");
        assert_eq!(day(1, "(other)"), Some((7 + 100, 1)));
        assert_eq!(day(1, ""), Some((5, 2)));
        assert_eq!(day(2, "s100"), Some((1, 0)), "a day of its own");
        let totals = |table: &str| -> (i64, i64) {
            conn.query_row(&format!("SELECT sum(signups), sum(confirmations) FROM {table}"), [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap()
        };
        assert_eq!(totals("source_rollups_daily"), totals("source_rollups"));
    }

    #[test]
    fn version_15_counts_complaints_by_a_domain_hash_and_drops_the_hour_of_version_14s() {
        // Arrange: at version 14, a complaint of the last hour, which names no domain
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        MIGRATIONS.to_version(&mut conn, 14).unwrap();
        conn.execute("INSERT INTO complaints (list_id, at) VALUES ('news', 10)", []).unwrap();

        // Act
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION - 14);

        // Assert: the old row is gone; a complaint needs its domain's hash
        let left: i64 = conn.query_row("SELECT count(*) FROM complaints", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0);
        assert!(conn.execute("INSERT INTO complaints (list_id, at) VALUES ('news', 10)", []).is_err());
        conn.execute("INSERT INTO complaints (list_id, domain, at) VALUES ('news', 'ab12', 10)", []).unwrap();
    }

    #[test]
    fn version_14_adds_the_source_rollups_beside_the_rollups_of_version_13() {
        // Arrange: at version 13, an hour of rollups
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        MIGRATIONS.to_version(&mut conn, 13).unwrap();
        conn.execute("INSERT INTO rollups (hour, list, series, value) VALUES (10, 'news', 'confirmations', 3)", [])
            .unwrap();
        let absent = conn.execute("INSERT INTO source_rollups VALUES (10, 'news', 'footer', 1, 0)", []);
        assert!(absent.is_err(), "version 13 has no source rollups");

        // Act
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION - 13);

        // Assert: the rollups are kept; a source's hour is one row, its counts integers only
        let kept: i64 = conn.query_row("SELECT value FROM rollups WHERE hour = 10", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 3);
        conn.execute("INSERT INTO source_rollups VALUES (10, 'news', 'footer', 1, 0)", []).unwrap();
        assert!(conn.execute("INSERT INTO source_rollups VALUES (10, 'news', 'footer', 1, 0)", []).is_err());
        assert!(conn.execute("INSERT INTO source_rollups VALUES (10, 'news', 'x', 'many', 0)", []).is_err());
    }

    #[test]
    fn events_queued_before_version_8_keep_their_order_without_the_order_index() {
        // Arrange: at version 7, a subscriber confirmed and left while two endpoints were down;
        // another's confirmed event waits alone.
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        MIGRATIONS.to_version(&mut conn, 7).unwrap();
        conn.execute_batch(
            "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash)
             VALUES ('b', 'news', 'bob@example.com', 'confirmed', 'v1', 5, 'rb');
             INSERT INTO webhook_deliveries (id, endpoint, event_id, event_type, subscriber_id, payload, created_at,
                                             next_attempt_at)
             VALUES (1, 'crm', 'e1', 'subscriber.confirmed', 'a', '{}', 9, 9),
                    (2, 'out', 'e1', 'subscriber.confirmed', 'a', '{}', 9, 9),
                    (3, 'crm', 'e2', 'subscriber.confirmed', 'b', '{}', 9, 9),
                    (4, 'crm', 'e3', 'subscriber.unsubscribed', 'a', '{}', 10, 10),
                    (5, 'out', 'e3', 'subscriber.unsubscribed', 'a', '{}', 10, 10);",
        )
        .unwrap();

        // Act
        assert_eq!(migrate(&mut conn).unwrap(), LATEST_VERSION - 7);

        // Assert: each unsubscribed row waits for its own endpoint's confirmed row
        let after: Vec<(i64, Option<i64>)> = conn
            .prepare("SELECT id, after_id FROM webhook_deliveries ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(after, [(1, None), (2, None), (3, None), (4, Some(1)), (5, Some(2))]);
        let first: Option<i64> =
            conn.query_row("SELECT confirmed_event FROM subscribers WHERE id = 'b'", [], |r| r.get(0)).unwrap();
        assert_eq!(first, Some(3), "a confirmed row still queued is found from its subscriber");
        let order_index: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'webhook_deliveries_order'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(order_index, 0);
    }

    #[test]
    fn a_newer_database_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        let error = migrate(&mut conn).unwrap_err();
        assert!(matches!(error, MigrationError::TooNew { found: 99 }), "{error}");
        assert_eq!(schema_version(&conn).unwrap(), 99);
    }

    #[test]
    fn email_uniqueness_ignores_case() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        migrate(&mut conn).unwrap();
        let insert = "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash)
                      VALUES (?1, 'news', ?2, 'pending', 'v1', 0, ?1)";
        conn.execute(insert, ["a", "ann@example.com"]).unwrap();
        assert!(conn.execute(insert, ["b", "ANN@example.com"]).is_err());
        conn.execute(insert, ["c", "bob@example.com"]).unwrap();
    }
}
