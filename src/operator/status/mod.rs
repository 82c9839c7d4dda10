//! The status page (`docs/operations.md`, "The status page"): `GET /status` on the metrics
//! listener only, a server-rendered page with inline SVG charts and no JavaScript, over the last
//! 48 hours by hour or the last 30 days by day.
//!
//! Its data are hourly rollups in SQLite (`storage::rollups`), counts only, so the charts
//! survive restarts; beside them, per list and source, the accepted signups and confirmations
//! that the table by source sums (bounded to 100 sources an hour by name, kept 31 days). They are written on a tick, never per request: the record functions of
//! [`crate::metrics`] add each event to an in-memory tally, and the rollup worker
//! ([`recorder`]) stores the tally and a sample of the queues every few seconds in one
//! background command of the writer; one last round runs at a clean stop. The hourly cleanup
//! deletes rollups older than 400 days.
//!
//! What a crash loses: the counts of the last tick ([`recorder::TICK`], about 5 s, at most
//! 7.5 s), which were in memory only; a `kill -9` or a power cut loses them, a clean stop does
//! not. Counts are filed under the hour in which the worker stored them, so an event in the
//! last seconds of an hour may count in the next one.
//!
//! The tally is process-wide, like the Prometheus recorder: two applications in one process
//! (only tests run that) share it, and either's worker may store the other's counts.
//!
//! Layout: [`recorder`] (the worker and its writer command), [`view`] (ranges, buckets and the
//! sums into them), [`chart`] (the charts' geometry), `page` (the handler and its template).

pub mod chart;
mod page;
pub mod recorder;
pub mod view;

use std::future::Future;

pub use page::{status_page, stylesheet};
pub use recorder::Recorder;

use crate::web::state::AppState;

/// Runs the rollup worker until `shutdown`.
pub fn run_worker(
    state: &AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> impl Future<Output = ()> + Send + 'static {
    crate::clock::background::run(Recorder::new(state), shutdown)
}

/// One round of the rollup worker, now: at a clean stop, and in tests that run no workers.
pub async fn record_rollups(state: &AppState) -> anyhow::Result<()> {
    Recorder::new(state).record().await.map(|_| ())
}
