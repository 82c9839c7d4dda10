//! What happens to a valid signup request (SPEC §4.1, steps 5 and 6, and the state table).
//!
//! The request path does the same work for every address — count the client against its rate
//! limits and append the request to `intake`, in one group-committed transaction
//! ([`IntakeWriter`]) — and answers only after that commit. So the answer is identical, and
//! costs the same, whether the address is unknown, pending, confirmed or suppressed. The state
//! table is applied afterwards by the intake worker ([`try_execute_task`], [`run_worker`]).

mod intake_writer;
mod state_table;

use std::future::Future;
use std::time::Duration;

use crate::app::AppState;
pub use intake_writer::{IntakeError, IntakeOutcome, IntakeWriter, SignupRequest};
pub use state_table::Action;

/// How many intake items one worker transaction applies: small, so the write lock is free again
/// within a few milliseconds for the signups that are waiting to be recorded.
const WORKER_BATCH: usize = 32;
/// The worker also wakes this often without a signal, so nothing waits forever if a wake-up is
/// missed (for example, items left by a crash before the worker started).
const WORKER_IDLE_POLL: Duration = Duration::from_secs(30);

/// What one call of [`try_execute_task`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionOutcome {
    TaskCompleted,
    EmptyQueue,
}

/// Applies the state table to the oldest batch of intake items. Tests call this directly (with
/// the background worker off) so they never race background work.
pub async fn try_execute_task(state: &AppState) -> anyhow::Result<ExecutionOutcome> {
    let config = state.config.clone();
    let secrets = state.secrets.clone();
    let now = state.clock.now();
    let applied = state
        .db
        .run(move |conn| state_table::apply_oldest(conn, &config, &secrets.hash_key, now, WORKER_BATCH))
        .await?;
    Ok(if applied.is_empty() { ExecutionOutcome::EmptyQueue } else { ExecutionOutcome::TaskCompleted })
}

/// The background intake worker: drains the queue whenever the writer signals new items, until
/// `shutdown` completes. Errors are logged and retried on the next wake-up; intake items stay
/// in SQLite until applied, so nothing is lost.
pub async fn run_worker(state: AppState, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        loop {
            match try_execute_task(&state).await {
                Ok(ExecutionOutcome::TaskCompleted) => {
                    state.wake_mail_workers();
                    continue;
                }
                Ok(ExecutionOutcome::EmptyQueue) => break,
                Err(error) => {
                    tracing::error!(error = format!("{error:#}"), "intake worker: cannot apply signups; retrying");
                    break;
                }
            }
        }
        tokio::select! {
            () = state.intake.accepted() => {}
            () = tokio::time::sleep(WORKER_IDLE_POLL) => {}
            () = &mut shutdown => return,
        }
    }
}
