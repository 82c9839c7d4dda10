//! Group commit for signup requests. One writer thread owns the intake transaction: it takes
//! every request waiting in its channel (up to [`MAX_BATCH`]), checks and counts each against
//! the rate limit, appends the accepted ones to `intake`, commits once, and only then answers
//! each request. With `synchronous = FULL` every commit costs an fsync; sharing it is what makes
//! a bot wave cheap without weakening "persist first, then answer".
//!
//! If the transaction fails, it is rolled back whole and every request in the batch is answered
//! with an error (503): nothing is half-written and nothing unacknowledged is kept.

use std::sync::Arc;

use tokio::sync::{Notify, mpsc, oneshot};

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::{EmailAddress, ListId};
use crate::ratelimit::{ClientNet, Decision, RateLimiter};
use crate::storage::{self, Db, intake};

/// Most requests committed together; bounds the time one transaction holds the write lock.
const MAX_BATCH: usize = 512;
/// Requests waiting for the writer; beyond this, callers wait (backpressure), they are not
/// dropped.
const CHANNEL_CAPACITY: usize = 4096;

/// A validated signup request.
#[derive(Debug, Clone)]
pub struct SignupRequest {
    pub list_id: ListId,
    pub email: EmailAddress,
    pub client: ClientNet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntakeOutcome {
    /// Durably recorded.
    Accepted,
    RateLimited {
        retry_after_secs: u64,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("the signup could not be stored")]
    Storage(#[source] anyhow::Error),
    #[error("the intake writer has stopped")]
    Stopped,
}

struct Job {
    request: SignupRequest,
    reply: oneshot::Sender<Result<IntakeOutcome, Arc<anyhow::Error>>>,
}

/// The handle request handlers use; cheap to clone.
#[derive(Debug, Clone)]
pub struct IntakeWriter {
    sender: mpsc::Sender<Job>,
    accepted: Arc<Notify>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

impl IntakeWriter {
    /// Starts the writer thread. It ends when every handle is dropped.
    pub fn start(db: Db, config: Arc<Config>, limiter: RateLimiter, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let (sender, receiver) = mpsc::channel(CHANNEL_CAPACITY);
        let accepted = Arc::new(Notify::new());
        let writer = Writer { db, config, limiter, clock, accepted: accepted.clone() };
        std::thread::Builder::new().name("signupd-intake".into()).spawn(move || writer.run(receiver))?;
        Ok(Self { sender, accepted })
    }

    /// Records `request` durably (or refuses it for the rate limit) and returns only after the
    /// commit.
    pub async fn submit(&self, request: SignupRequest) -> Result<IntakeOutcome, IntakeError> {
        let (reply, answer) = oneshot::channel();
        self.sender.send(Job { request, reply }).await.map_err(|_| IntakeError::Stopped)?;
        match answer.await {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(error)) => Err(IntakeError::Storage(anyhow::anyhow!("{error:#}"))),
            Err(_) => Err(IntakeError::Stopped),
        }
    }

    /// Completes when new items were committed since the last call.
    pub async fn accepted(&self) {
        self.accepted.notified().await;
    }
}

struct Writer {
    db: Db,
    config: Arc<Config>,
    limiter: RateLimiter,
    clock: Arc<dyn Clock>,
    accepted: Arc<Notify>,
}

impl Writer {
    fn run(self, mut receiver: mpsc::Receiver<Job>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while let Some(first) = receiver.blocking_recv() {
            batch.push(first);
            while batch.len() < MAX_BATCH {
                match receiver.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            match self.commit(&batch) {
                Ok(outcomes) => {
                    if outcomes.contains(&IntakeOutcome::Accepted) {
                        self.accepted.notify_one();
                    }
                    for (job, outcome) in batch.drain(..).zip(outcomes) {
                        let _ = job.reply.send(Ok(outcome));
                    }
                }
                Err(error) => {
                    tracing::error!(error = format!("{error:#}"), requests = batch.len(), "cannot store signups");
                    let error = Arc::new(error);
                    for job in batch.drain(..) {
                        let _ = job.reply.send(Err(error.clone()));
                    }
                }
            }
        }
    }

    /// One transaction for the whole batch: all of it is stored, or none.
    fn commit(&self, batch: &[Job]) -> anyhow::Result<Vec<IntakeOutcome>> {
        let mut conn = self.db.conn()?;
        let tx = storage::immediate(&mut conn)?;
        let now = self.clock.now();
        let mut outcomes = Vec::with_capacity(batch.len());
        let mut consent_recorded: Vec<&str> = Vec::new();
        for job in batch {
            let request = &job.request;
            let outcome = match self.limiter.check_and_count(&tx, &request.client, now)? {
                Decision::Limited { retry_after_secs } => IntakeOutcome::RateLimited { retry_after_secs },
                Decision::Allowed => {
                    let list = self
                        .config
                        .list(request.list_id.as_ref())
                        .ok_or_else(|| anyhow::anyhow!("list {} is not configured", request.list_id))?;
                    intake::append(&tx, list.id.as_ref(), request.email.as_ref(), &list.consent_version, now)?;
                    if !consent_recorded.contains(&list.id.as_ref()) {
                        intake::record_consent_text(
                            &tx,
                            list.id.as_ref(),
                            &list.consent_version,
                            &list.consent_text,
                            now,
                        )?;
                        consent_recorded.push(list.id.as_ref());
                    }
                    IntakeOutcome::Accepted
                }
            };
            outcomes.push(outcome);
        }
        tx.commit()?;
        Ok(outcomes)
    }
}
