//! The hourly cleanup, run by tokio-cron-scheduler on `cleanup.schedule` (six fields,
//! seconds first, UTC; default minute 23 of every hour) and once at start:
//!
//! - pending rows whose confirm link expired (a pending signup lives at most about
//!   `confirm_ttl` + 1 h after its last mail);
//! - the confirm hash of confirmed rows once their link's lifetime ended (kept until then so a
//!   repeated confirm POST is idempotent);
//! - expired rate-limit counters and mail-budget buckets.
//!
//! Intake and outbox items are deleted by their workers when done, and go with their row when
//! it is deleted. Each run logs what it removed (counts only).

use anyhow::Context;
use tokio_cron_scheduler::{Job, JobScheduler};

use crate::clock::UnixSeconds;
use crate::state::AppState;
use crate::storage::Command;

/// What one cleanup run removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanupReport {
    pub expired_pending: usize,
    pub cleared_confirm_hashes: usize,
    pub expired_counters: usize,
}

/// One cleanup run, in one command of the writer.
pub async fn run_cleanup(state: &AppState) -> anyhow::Result<CleanupReport> {
    let now = state.clock.now();
    let report = state.writer.execute(Cleanup { now }).await?;
    tracing::info!(
        expired_pending = report.expired_pending,
        cleared_confirm_hashes = report.cleared_confirm_hashes,
        expired_counters = report.expired_counters,
        "cleanup finished"
    );
    Ok(report)
}

/// One cleanup run, as a command of the writer.
struct Cleanup {
    now: UnixSeconds,
}

impl Command for Cleanup {
    type Output = CleanupReport;

    fn execute(self, conn: &rusqlite::Connection) -> anyhow::Result<CleanupReport> {
        cleanup(conn, self.now)
    }
}

fn cleanup(conn: &rusqlite::Connection, now: UnixSeconds) -> anyhow::Result<CleanupReport> {
    let expired_pending =
        conn.execute("DELETE FROM subscribers WHERE status = 'pending' AND confirm_expires_at < ?1", [now])?;
    let cleared_confirm_hashes = conn.execute(
        "UPDATE subscribers SET confirm_hash = NULL, confirm_expires_at = NULL
         WHERE status = 'confirmed' AND confirm_expires_at < ?1",
        [now],
    )?;
    let expired_counters = crate::ratelimit::delete_expired(conn, now)?;
    conn.prepare_cached(
        "INSERT INTO service_runs (name, last_run_at) VALUES ('cleanup', ?1)
         ON CONFLICT (name) DO UPDATE SET last_run_at = excluded.last_run_at",
    )?
    .execute([now])?;
    Ok(CleanupReport { expired_pending, cleared_confirm_hashes, expired_counters })
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

        let report = cleanup(&conn, 100).unwrap();
        assert_eq!(report, CleanupReport { expired_pending: 1, cleared_confirm_hashes: 1, expired_counters: 1 });
        let left: Vec<String> = conn
            .prepare("SELECT id || ':' || coalesce(confirm_hash, '-') FROM subscribers ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(left, ["done:-", "live:h2"]);
    }
}
