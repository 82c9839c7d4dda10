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
//! tell what the previous address was. On the tick, the work is applied in chunks of mixed items,
//! each in a commit of its own between two batches of requests: its cost is not tied to any one
//! request, and no request waits for it inside its own commit. The tick, the rounds and the stop
//! are the loop every worker shares ([`crate::clock::background`]).

mod intake;
mod state_table;
mod surge;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use intake::{IntakeError, IntakeOutcome, ListSignup, RecordConsentTexts, Recorder, SignupRequest, record};
pub use state_table::{Action, ApplyIntake, Prepared};

use crate::clock::Clock;
use crate::clock::background::{self, Round, Shutdown, Worker};
use crate::config::secrets::Secrets;
use crate::storage::intake as intake_table;
use crate::storage::{Db, Writer};

/// How often, on average, the worker applies new intake items (±50 % jitter). A confirmation
/// mail still leaves within a second or two of the signup.
pub const INTAKE_TICK: Duration = Duration::from_millis(250);
/// Most items one command applies. Each chunk commits alone, between two batches of requests
/// (`Command::BACKGROUND`), so its size is how long a request that arrives meanwhile may wait
/// for it: its statements, and the fsync of the pages it dirtied (about one random page of the
/// address index per new row). Measured (BENCHMARKS.md): chunks of up to 256 applied a wave
/// faster, but their commits (~1 MiB of WAL each) took the p99 at half the maximum rate from
/// 10 to 24–42 ms; 64 keeps up with the maximum rate all the same.
const CHUNK: usize = 64;

/// What the intake worker works with: the parts of the running service it needs, and no more.
#[derive(Debug, Clone)]
pub struct Intake {
    /// Reads the waiting items.
    pub db: Db,
    /// Applies them.
    pub writer: Writer,
    /// The hash key, for the addresses' hashes (made off the writer thread).
    pub secrets: Arc<Secrets>,
    pub clock: Arc<dyn Clock>,
    /// `signup.resend_cooldown`.
    pub resend_cooldown: Duration,
}

/// What one call of [`try_execute_task`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionOutcome {
    TaskCompleted,
    EmptyQueue,
}

/// Applies the state table to the oldest chunk of intake items. Tests call this directly (with
/// the background worker off) so they never race background work.
pub async fn try_execute_task(intake: &Intake) -> anyhow::Result<ExecutionOutcome> {
    let items = read_chunk(intake, 0, CHUNK).await?;
    if items.is_empty() {
        return Ok(ExecutionOutcome::EmptyQueue);
    }
    apply(intake, items).await?;
    Ok(ExecutionOutcome::TaskCompleted)
}

/// Reads the oldest `size` items after item `after` through a reader, and prepares their hashes
/// off the writer thread.
async fn read_chunk(intake: &Intake, after: i64, size: usize) -> anyhow::Result<Vec<Prepared>> {
    let hash_key = intake.secrets.hash_key.clone();
    intake
        .db
        .run(move |conn| {
            let items = intake_table::oldest(conn, after, size)?;
            Ok::<_, anyhow::Error>(items.into_iter().map(|item| Prepared::new(item, &hash_key)).collect::<Vec<_>>())
        })
        .await
}

/// Applies `items` in one command.
async fn apply(intake: &Intake, items: Vec<Prepared>) -> anyhow::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let resend_cooldown = i64::try_from(intake.resend_cooldown.as_secs()).unwrap_or(i64::MAX);
    intake.writer.execute(ApplyIntake { items, resend_cooldown, now: intake.clock.now() }).await?;
    Ok(())
}

/// The background intake worker: on every tick, applies what is waiting, chunk after chunk,
/// until `shutdown` completes. It reads the next chunk while the writer applies the one before
/// (in order: a chunk is sent only once the one before is applied), so the writer has the next
/// chunk at hand when its turn comes between two batches of requests; it checks for shutdown
/// between chunks, so a stop never waits for a backlog: what is not applied stays in `intake`
/// for the next start. Errors are logged and retried on the next tick.
pub async fn run_worker(intake: Intake, shutdown: impl Future<Output = ()> + Send + 'static) {
    background::run(intake, shutdown).await;
}

impl Worker for Intake {
    fn name(&self) -> &str {
        "intake"
    }

    fn tick(&self) -> Duration {
        INTAKE_TICK
    }

    /// Applies every item waiting now, or until `shutdown` comes. Either way the queue is left
    /// to the next tick: what arrives meanwhile waits for it, so its cost is not tied to the
    /// request that brought it.
    async fn round(&mut self, shutdown: &mut Shutdown) -> anyhow::Result<Round> {
        let mut chunk = read_chunk(self, 0, CHUNK).await?;
        while chunk.len() == CHUNK {
            let after = chunk.last().map_or(0, Prepared::intake_id);
            let (applied, next) = tokio::join!(apply(self, chunk), read_chunk(self, after, CHUNK));
            applied?;
            if shutdown.is_stopping() {
                return Ok(Round::Idle);
            }
            chunk = next?;
        }
        apply(self, chunk).await?;
        Ok(Round::Idle)
    }
}
