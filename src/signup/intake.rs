//! Recording a signup request: the whole of a signup's synchronous work, the same for every
//! address. [`record`] computes the rate-limit keys on the request's own thread, then the
//! [`RecordSignup`] command counts the client and appends the request to `intake` in the
//! writer's next group commit; the answer is sent only after that commit.

use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::domain::{EmailAddress, ListId};
use crate::ratelimit::{self, ClientNet, Counter, Decision};
use crate::state::AppState;
use crate::storage::intake::{self, ConsentText};
use crate::storage::{Command, WriteError};

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
    Storage(#[source] WriteError),
    #[error("list {0} is not configured")]
    UnknownList(ListId),
}

/// Records `request` durably (or refuses it for the rate limit); returns after the commit.
pub async fn record(state: &AppState, request: SignupRequest) -> Result<IntakeOutcome, IntakeError> {
    let list =
        state.config.list(request.list_id.as_ref()).ok_or_else(|| IntakeError::UnknownList(request.list_id.clone()))?;
    let now = state.clock.now();
    let command = RecordSignup {
        counters: state.limiter.counters(&request.client, now),
        list_id: request.list_id,
        email: request.email,
        consent: ConsentText::new(&list.consent_version, &list.consent_text),
        now,
    };
    state.writer.execute(command).await.map_err(IntakeError::Storage)
}

/// Counts the client against its limits and, if it has room, appends the request to `intake`
/// and records the consent text the first time it is used.
struct RecordSignup {
    counters: Vec<Counter>,
    list_id: ListId,
    email: EmailAddress,
    consent: ConsentText,
    now: UnixSeconds,
}

impl Command for RecordSignup {
    type Output = IntakeOutcome;

    fn execute(self, conn: &Connection) -> anyhow::Result<IntakeOutcome> {
        if let Decision::Limited { retry_after_secs } = ratelimit::check_and_count(conn, &self.counters, self.now)? {
            return Ok(IntakeOutcome::RateLimited { retry_after_secs });
        }
        let list_id = self.list_id.as_ref();
        intake::append(conn, list_id, self.email.as_ref(), &self.consent.version, self.now)?;
        intake::record_consent_text(conn, list_id, &self.consent, self.now)?;
        Ok(IntakeOutcome::Accepted)
    }
}
