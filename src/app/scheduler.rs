//! The hourly cleanup, run by tokio-cron-scheduler on `cleanup.schedule` (six fields,
//! seconds first, UTC; default minute 23 of every hour) and once at start:
//!
//! - pending rows whose confirm link expired (a pending signup lives at most about
//!   `confirm_ttl` + 1 h after its last mail);
//! - pending rows that never got a mail, `confirm_ttl` after the signup, with their queued
//!   mail (under a flood over the mail budget, or over an address's cap, the database stays
//!   bounded by what the budget can send in one confirm window, and an address that was never
//!   mailed is not kept);
//! - the confirm hash of confirmed rows once their link's lifetime ended (kept until then so a
//!   repeated confirm POST is idempotent);
//! - expired rate-limit counters, mail-budget buckets and surge and network counts, and the
//!   per-address mail counts older than a day;
//! - the status page's hourly rollups older than [`rollups::RETENTION_DAYS`] (400 days), and
//!   its rollups by source older than [`rollups::SOURCE_RETENTION_DAYS`] (31 days).
//!
//! Intake and outbox items are deleted by their workers when done, and go with their row when
//! it is deleted. Each run logs what it removed (counts only).

use anyhow::Context;
use tokio_cron_scheduler::{Job, JobScheduler};

use crate::clock::UnixSeconds;
use crate::storage::{
    Batch, Command, address_mails, audit, counters, networks, relay_events, rollups, service_runs, subscribers,
};
use crate::web::state::AppState;

/// What one cleanup run removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanupReport {
    pub expired_pending: usize,
    pub expired_never_mailed: usize,
    pub cleared_confirm_hashes: usize,
    pub expired_counters: usize,
    pub expired_address_mails: usize,
    pub expired_rollups: usize,
    /// Per-network mail counts older than an hour, and reputations older than
    /// `signup.reputation_days`.
    pub expired_network_records: usize,
    /// Receipts of relay events past their window, and complaints older than the breaker's hour.
    pub expired_relay_records: usize,
    /// Audit log entries older than `cleanup.audit_days`.
    pub expired_audit_entries: usize,
}

/// One cleanup run, in one command of the writer.
pub async fn run_cleanup(state: &AppState) -> anyhow::Result<CleanupReport> {
    let now = state.clock.now();
    let confirm_ttl = crate::outbound::mail::queue::secs(state.config.signup.confirm_ttl);
    let reputation_days = state.config.signup.reputation_days;
    let audit_days = state.config.cleanup.audit_days;
    let report = state.writer.execute(Cleanup { now, confirm_ttl, reputation_days, audit_days }).await?;
    tracing::info!(
        expired_pending = report.expired_pending,
        expired_never_mailed = report.expired_never_mailed,
        expired_address_mails = report.expired_address_mails,
        cleared_confirm_hashes = report.cleared_confirm_hashes,
        expired_counters = report.expired_counters,
        expired_rollups = report.expired_rollups,
        expired_network_records = report.expired_network_records,
        expired_relay_records = report.expired_relay_records,
        expired_audit_entries = report.expired_audit_entries,
        "cleanup finished"
    );
    Ok(report)
}

/// One cleanup run, as a command of the writer.
struct Cleanup {
    now: UnixSeconds,
    confirm_ttl: i64,
    reputation_days: u32,
    audit_days: u32,
}

impl Command for Cleanup {
    type Output = CleanupReport;
    // Deletes whatever expired since the last run: it commits apart from the requests.
    const BACKGROUND: bool = true;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<CleanupReport> {
        let conn = batch.conn();
        cleanup(conn, self.now, self.confirm_ttl, self.reputation_days, self.audit_days)
    }
}

fn cleanup(
    conn: &rusqlite::Connection,
    now: UnixSeconds,
    confirm_ttl: i64,
    reputation_days: u32,
    audit_days: u32,
) -> anyhow::Result<CleanupReport> {
    let report = CleanupReport {
        expired_pending: subscribers::delete_expired_pending(conn, now)?,
        expired_never_mailed: subscribers::delete_never_mailed_before(conn, now.saturating_sub(confirm_ttl))?,
        cleared_confirm_hashes: subscribers::clear_spent_confirm_hashes(conn, now)?,
        expired_counters: counters::delete_expired(conn, now)?,
        expired_address_mails: address_mails::delete_expired(conn, now)?,
        expired_rollups: rollups::delete_before(conn, rollups::hour_of(now) - rollups::RETENTION_DAYS * 24)?
            + rollups::delete_sources_before(conn, rollups::hour_of(now) - rollups::SOURCE_RETENTION_DAYS * 24)?,
        expired_network_records: networks::delete_expired(conn, now, reputation_days)?,
        expired_relay_records: relay_events::delete_expired(conn, now)?,
        expired_audit_entries: audit::delete_before(conn, now - i64::from(audit_days) * 86_400)?,
    };
    service_runs::record_cleanup(conn, now)?;
    Ok(report)
}

/// Starts the scheduler with the cleanup job. Stop it with `shutdown`.
pub async fn start(state: AppState) -> anyhow::Result<JobScheduler> {
    let scheduler = JobScheduler::new().await.context("cannot create the scheduler")?;
    let schedule = state.config.cleanup.schedule.clone();
    let job = Job::new_async(schedule.as_str(), move |_id, _scheduler| {
        let state = state.clone();
        Box::pin(async move {
            if let Err(error) = run_cleanup(&state).await {
                tracing::error!(error = format!("{error:#}"), "cleanup failed; it runs again at the next tick");
            }
        })
    })
    .with_context(|| format!("cleanup.schedule: cannot schedule {schedule:?}"))?;
    scheduler.add(job).await.context("cannot add the cleanup job")?;
    scheduler.start().await.context("cannot start the scheduler")?;
    Ok(scheduler)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_removes_expired_pending_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        let insert = "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, confirm_hash, confirm_expires_at, removal_hash)
                      VALUES (?1, 'news', ?1, ?2, 'v1', 0, ?3, ?4, ?1)";
        conn.execute(insert, rusqlite::params!["expired", "pending", "h1", 99]).unwrap();
        conn.execute(insert, rusqlite::params!["live", "pending", "h2", 101]).unwrap();
        conn.execute(insert, rusqlite::params!["done", "confirmed", "h3", 99]).unwrap();
        conn.execute("INSERT INTO rate_limits (key, count, expires_at) VALUES ('k', 1, 50)", []).unwrap();

        let report = cleanup(&conn, 100, 48 * 3600, 90, 400).unwrap();
        assert_eq!(
            report,
            CleanupReport { expired_pending: 1, cleared_confirm_hashes: 1, expired_counters: 1, ..Default::default() }
        );
        let left: Vec<String> = conn
            .prepare("SELECT id || ':' || coalesce(confirm_hash, '-') FROM subscribers ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(left, ["done:-", "live:h2"]);
    }

    #[test]
    fn a_pending_row_never_mailed_expires_confirm_ttl_after_the_signup_with_its_queued_mail() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        let insert = "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, confirmation_sent_at, removal_hash)
                      VALUES (?1, 'news', ?1, ?2, 'v1', ?3, ?4, ?1)";
        let ttl = 1_000;
        conn.execute(insert, rusqlite::params!["old-unmailed", "pending", 10_000 - ttl - 1, None::<i64>]).unwrap();
        conn.execute(insert, rusqlite::params!["young-unmailed", "pending", 10_000 - ttl + 1, None::<i64>]).unwrap();
        conn.execute(insert, rusqlite::params!["old-confirmed", "confirmed", 0, 5]).unwrap();
        conn.execute(
            "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at) VALUES ('confirm', 'old-unmailed', 0, 0), ('confirm', 'young-unmailed', 0, 0)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO address_mails (hash, sent_at) VALUES ('a', ?1), ('b', ?2)",
            [10_000 - 86_400, 10_000 - 86_399],
        )
        .unwrap();

        let report = cleanup(&conn, 10_000, ttl, 90, 400).unwrap();
        assert_eq!(report.expired_never_mailed, 1);
        assert_eq!(report.expired_address_mails, 1);
        let rows: Vec<String> = conn
            .prepare("SELECT id FROM subscribers ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows, ["old-confirmed", "young-unmailed"]);
        let queued: Vec<String> = conn
            .prepare("SELECT subscriber_id FROM outbox")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(queued, ["young-unmailed"], "the expired row's queued mail went with it");
    }

    #[test]
    fn cleanup_prunes_status_rollups_older_than_400_days_those_by_source_after_31_and_keeps_the_rest() {
        // Arrange: an injected "now" and rollups of the hour just past 400 days, of the first
        // hour kept, and of the current hour
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        let now: UnixSeconds = 1_780_000_000;
        let oldest_kept = rollups::hour_of(now) - 400 * 24;
        for hour in [oldest_kept - 1, oldest_kept, rollups::hour_of(now)] {
            rollups::add(&conn, hour, "news", "signups.accepted", 1).unwrap();
        }
        let oldest_source_kept = rollups::hour_of(now) - 31 * 24;
        let signup = crate::metrics::tally::SourceFigures { signups: 1, confirmations: 0 };
        for hour in [oldest_source_kept - 1, oldest_source_kept] {
            rollups::add_source(&conn, hour, "news", "footer", signup).unwrap();
        }

        // Act
        let report = cleanup(&conn, now, 48 * 3600, 90, 400).unwrap();

        // Assert
        assert_eq!(report.expired_rollups, 2, "one of each");
        let hours: Vec<i64> = rollups::between(&conn, 0, i64::MAX).unwrap().iter().map(|row| row.hour).collect();
        assert_eq!(hours, [oldest_kept, rollups::hour_of(now)]);
        let mut by_source = 0;
        rollups::visit_sources_between(&conn, 0, i64::MAX, |_, _, figures| by_source += figures.signups).unwrap();
        assert_eq!(by_source, 1, "the hour of 31 days ago is kept");
        let mut by_day = Vec::new();
        rollups::visit_daily_sources_between(&conn, 0, i64::MAX, |_, _, figures| by_day.push(figures.signups)).unwrap();
        assert_eq!(by_day, [2], "the day of 31 days ago is kept whole, with the hour before");
        conn.execute("DELETE FROM source_rollups", []).unwrap();
        cleanup(&conn, now + 24 * 3600, 48 * 3600, 90, 400).unwrap();
        let mut left = 0;
        rollups::visit_daily_sources_between(&conn, 0, i64::MAX, |_, _, _| left += 1).unwrap();
        assert_eq!(left, 0, "a day later, that day goes too");
    }
}
