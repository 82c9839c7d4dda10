//! What happens to a valid signup request (the last two steps of a signup, and the state table).
//!
//! The request path does the same work for every address — count the client against its rate
//! limits and append the request to `intake`, one command in the writer's group commit
//! ([`intake::record`]) — and answers only after that commit. So the answer is identical, and
//! costs the same, whether the address is unknown, pending, confirmed or suppressed.
//!
//! The state table is applied afterwards by the intake worker ([`try_execute_task`],
//! [`run_worker`]), and not right behind the request: the worker wakes on a jittered tick of
//! about [`INTAKE_TICK`] and applies everything that arrived since, in chunks. An unknown
//! address costs more to apply than a confirmed one (a new row and a queued mail), and if that
//! work ran right after each request, the *next* request would wait for it, and its timing would
//! tell what the previous address was. On the tick, the cost lands on whichever request happens
//! to share a commit with a chunk of a few hundred mixed items: it is not tied to any one.

mod intake;
mod state_table;
mod surge;

use std::future::Future;
use std::time::Duration;

pub use intake::{IntakeError, IntakeOutcome, RecordConsentTexts, SignupRequest, record};
pub use state_table::{Action, ApplyIntake, Prepared};

use crate::clock::jittered;
use crate::state::AppState;
use crate::storage::intake as intake_table;

/// How often, on average, the worker applies new intake items (±50 % jitter). A confirmation
/// mail still leaves within a second or two of the signup.
pub const INTAKE_TICK: Duration = Duration::from_millis(250);
/// Most items one command applies: small enough that the requests sharing its commit wait a
/// millisecond or two for it (applying an unknown address is a handful of index inserts); the
/// worker sends the next chunk as soon as one is done, so a backlog still drains at once.
const CHUNK: usize = 64;

/// What one call of [`try_execute_task`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionOutcome {
    TaskCompleted,
    EmptyQueue,
}

/// Applies the state table to the oldest chunk of intake items. Tests call this directly (with
/// the background worker off) so they never race background work.
pub async fn try_execute_task(state: &AppState) -> anyhow::Result<ExecutionOutcome> {
    Ok(if apply_chunk(state).await? == 0 { ExecutionOutcome::EmptyQueue } else { ExecutionOutcome::TaskCompleted })
}

/// Reads the oldest items through a reader, prepares their hashes off the writer thread, and
/// applies them in one command. Returns how many items were read.
async fn apply_chunk(state: &AppState) -> anyhow::Result<usize> {
    let hash_key = state.secrets.hash_key.clone();
    let items = state
        .db
        .run(move |conn| {
            let items = intake_table::oldest(conn, CHUNK)?;
            Ok::<_, anyhow::Error>(items.into_iter().map(|item| Prepared::new(item, &hash_key)).collect::<Vec<_>>())
        })
        .await?;
    let read = items.len();
    if read > 0 {
        let resend_cooldown = i64::try_from(state.config.signup.resend_cooldown.as_secs()).unwrap_or(i64::MAX);
        state.writer.execute(ApplyIntake { items, resend_cooldown, now: state.clock.now() }).await?;
    }
    Ok(read)
}

/// The background intake worker: on every tick, applies what is waiting, chunk after chunk,
/// until `shutdown` completes. It checks for shutdown between chunks, so a stop never waits
/// for a backlog: what is not applied stays in `intake` for the next start. Errors are logged
/// and retried on the next tick.
pub async fn run_worker(state: AppState, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        loop {
            match apply_chunk(&state).await {
                Ok(read) if read == CHUNK => {}
                Ok(_) => break,
                Err(error) => {
                    tracing::error!(error = format!("{error:#}"), "intake worker: cannot apply signups; retrying");
                    break;
                }
            }
            if futures_util::poll!(&mut shutdown).is_ready() {
                return;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(jittered(INTAKE_TICK)) => {}
            () = &mut shutdown => return,
        }
    }
}
