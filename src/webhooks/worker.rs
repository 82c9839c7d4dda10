//! Delivering webhook events: one worker per endpoint, so one slow or dead receiver holds up no
//! other. A worker wakes on a jittered tick of about [`TICK`], looks through a reader whether its
//! endpoint has a claimable event (an idle worker never writes), claims up to [`BATCH`] in one
//! writer command, posts them one after another, and settles the batch in one command:
//!
//! - a 2xx answer within `mail.webhook_timeout` → delivered, the event (and the address in it)
//!   deleted;
//! - anything else — another status, a redirect, a timeout, a refused or closed connection — →
//!   retried after the mail backoff (`mail.retry_base`, doubling with jitter, capped at 1 h),
//!   with the same `webhook-id`;
//! - when the next try would come after `mail.webhook_max_age` → dropped: deleted, an error log
//!   line and an `alert_webhook` POST naming the endpoint and the event type, never the address.
//!
//! On shutdown a worker stops between deliveries; the rest of its batch goes back to the queue.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::{Endpoint, Webhooks};
use crate::background::{self, Round, Shutdown, Worker};
use crate::clock::{Clock, SystemClock, UnixSeconds, backoff_secs};
use crate::config::Config;
use crate::storage::webhooks::{self, Claimed};
use crate::storage::{Batch, Command};
use crate::storage::{Db, Writer};

/// Most events one worker claims (and settles) in one command.
pub const BATCH: usize = 64;
/// How often, on average, an idle worker looks for events (±50 % jitter).
pub const TICK: Duration = Duration::from_secs(1);

/// What a webhook worker works with: the parts of the running service it needs, and its
/// endpoint.
#[derive(Debug, Clone)]
pub struct Deliverer {
    pub config: Arc<Config>,
    /// Reads whether anything is due.
    pub db: Db,
    /// Claims and settles.
    pub writer: Writer,
    pub clock: Arc<dyn Clock>,
    /// The HTTP client and timeout the endpoints share.
    pub webhooks: Webhooks,
    /// For the alert webhook.
    pub http_client: reqwest::Client,
    pub endpoint: Arc<Endpoint>,
}

/// Why an event was not delivered, in words without the address or the URL's query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryFailure {
    /// The receiver answered a redirect, which is not followed.
    Redirect(u16),
    /// The receiver answered, with another status than 2xx.
    Status(u16),
    /// No answer within the timeout.
    Timeout(Duration),
    /// Nothing listens on that host and port.
    Refused,
    /// DNS, TLS or the network failed before a connection stood.
    Connect,
    /// The connection closed before an answer.
    Closed,
}

impl DeliveryFailure {
    /// The failure a status is, or `None` for a 2xx.
    pub fn from_status(status: reqwest::StatusCode) -> Option<Self> {
        if status.is_success() {
            None
        } else if status.is_redirection() {
            Some(Self::Redirect(status.as_u16()))
        } else {
            Some(Self::Status(status.as_u16()))
        }
    }

    /// What a request error was; `timeout` is the one the request was sent with.
    pub fn from_error(error: &reqwest::Error, timeout: Duration) -> Self {
        let refused = std::iter::successors(std::error::Error::source(error), |cause| cause.source()).any(|cause| {
            cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        });
        if error.is_timeout() {
            Self::Timeout(timeout)
        } else if refused {
            Self::Refused
        } else if error.is_connect() {
            Self::Connect
        } else {
            Self::Closed
        }
    }

    /// What the operator can do about it (`signupd send-test-webhook`).
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Redirect(_) => "signupd does not follow redirects: configure the final URL",
            Self::Status(401 | 403) => "the receiver refused the signature: check that it uses the same whsec_ secret",
            Self::Status(_) => "the receiver answered, but not with 2xx: check its logs",
            Self::Timeout(_) => "the receiver is too slow: it should answer at once and work afterwards",
            Self::Refused => "is the receiver listening on that host and port?",
            Self::Connect | Self::Closed => "check the host name (DNS) and, for https, the certificate",
        }
    }
}

impl std::fmt::Display for DeliveryFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Redirect(status) => write!(f, "HTTP {status} (redirects are not followed)"),
            Self::Status(status) => write!(f, "HTTP {status}"),
            Self::Timeout(timeout) => write!(f, "no answer within {}s", timeout.as_secs()),
            Self::Refused => f.write_str("connection refused"),
            Self::Connect => f.write_str("could not connect (DNS, TLS or the network)"),
            Self::Closed => f.write_str("the connection closed before an answer"),
        }
    }
}

/// What happened to one event (or why nothing happened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    Delivered,
    Retrying {
        detail: String,
    },
    Dropped {
        detail: String,
    },
    /// Put back unsent (shutdown).
    Released,
    EmptyQueue,
}

/// Claims up to `limit` events of the deliverer's endpoint, posts them and settles them. Tests
/// call this directly with the background workers off.
pub async fn try_deliver_batch(
    deliverer: &Deliverer,
    limit: usize,
    mut stopping: impl FnMut() -> bool + Send,
) -> anyhow::Result<Vec<DeliveryOutcome>> {
    let endpoint = &*deliverer.endpoint;
    let now = deliverer.clock.now();
    let name = endpoint.config.name.clone();
    let due = deliverer.db.run(move |conn| Ok::<_, anyhow::Error>(webhooks::any_due(conn, &name, now)?)).await?;
    if !due {
        return Ok(vec![DeliveryOutcome::EmptyQueue]);
    }
    let timeout = deliverer.webhooks.timeout();
    let lease = timeout.saturating_mul(u32::try_from(limit).unwrap_or(u32::MAX)) + Duration::from_secs(60);
    let claim = ClaimDeliveries {
        endpoint: endpoint.config.name.clone(),
        now,
        lease_until: now.saturating_add(i64::try_from(lease.as_secs()).unwrap_or(i64::MAX)),
        limit,
    };
    let claimed = deliverer.writer.execute(claim).await?;
    if claimed.is_empty() {
        return Ok(vec![DeliveryOutcome::EmptyQueue]);
    }
    let max_age = i64::try_from(deliverer.config.mail.webhook_max_age.as_secs()).unwrap_or(i64::MAX);
    let mut settlements = Vec::with_capacity(claimed.len());
    let mut outcomes = Vec::with_capacity(claimed.len());
    for event in &claimed {
        if stopping() {
            settlements.push((event.id, Settle::Retry { at: now, last_error: "not attempted: shutting down".into() }));
            outcomes.push(DeliveryOutcome::Released);
            continue;
        }
        let (settle, outcome) = match post(deliverer, event).await {
            Ok(()) => (Settle::Delivered, DeliveryOutcome::Delivered),
            Err(failure) => {
                let detail = failure.to_string();
                let now = deliverer.clock.now();
                let next = now.saturating_add(backoff_secs(deliverer.config.mail.retry_base, event.attempts));
                if next > event.created_at.saturating_add(max_age) {
                    (Settle::Drop, DeliveryOutcome::Dropped { detail })
                } else {
                    (Settle::Retry { at: next, last_error: detail.clone() }, DeliveryOutcome::Retrying { detail })
                }
            }
        };
        settlements.push((event.id, settle));
        outcomes.push(outcome);
    }
    deliverer.writer.execute(SettleDeliveries(settlements)).await?;
    for (event, outcome) in claimed.iter().zip(&outcomes) {
        report(deliverer, event, outcome).await;
    }
    Ok(outcomes)
}

/// One signed POST.
async fn post(deliverer: &Deliverer, event: &Claimed) -> Result<(), DeliveryFailure> {
    let timeout = deliverer.webhooks.timeout();
    // Receivers compare `webhook-timestamp` with their own clock (replay protection): it is the
    // wall-clock time of this attempt, not the injected clock.
    let timestamp = SystemClock.now();
    let client = deliverer.webhooks.client();
    match super::send(client, &deliverer.endpoint, &event.event_id, &event.payload, timestamp, timeout).await {
        Ok(status) => DeliveryFailure::from_status(status).map_or(Ok(()), Err),
        Err(error) => Err(DeliveryFailure::from_error(&error, timeout)),
    }
}

async fn report(deliverer: &Deliverer, event: &Claimed, outcome: &DeliveryOutcome) {
    let endpoint = &deliverer.endpoint;
    let name = endpoint.config.name.as_str();
    match outcome {
        DeliveryOutcome::Delivered => crate::metrics::webhook("delivered"),
        DeliveryOutcome::Retrying { detail } => {
            crate::metrics::webhook("retry");
            tracing::warn!(endpoint = name, event_type = %event.event_type, attempt = event.attempts, detail = %detail, "webhook not delivered; will retry");
        }
        DeliveryOutcome::Dropped { detail } => {
            crate::metrics::webhook("dropped");
            crate::mail::alert::webhook_dropped(
                &deliverer.config,
                &deliverer.http_client,
                name,
                &event.event_type,
                detail,
            )
            .await;
        }
        DeliveryOutcome::Released | DeliveryOutcome::EmptyQueue => {}
    }
}

/// The background worker of one endpoint; stops between deliveries when `shutdown` completes.
pub async fn run_worker(deliverer: Deliverer, shutdown: impl Future<Output = ()> + Send + 'static) {
    background::run(deliverer, shutdown).await;
}

impl Worker for Deliverer {
    fn name(&self) -> &str {
        &self.endpoint.config.name
    }

    fn tick(&self) -> Duration {
        TICK
    }

    async fn round(&mut self, shutdown: &mut Shutdown) -> anyhow::Result<Round> {
        let outcomes = try_deliver_batch(self, BATCH, || shutdown.is_stopping()).await?;
        let moved = outcomes.iter().any(|outcome| *outcome != DeliveryOutcome::EmptyQueue);
        Ok(if moved { Round::Moved } else { Round::Idle })
    }
}

/// Claims due events of one endpoint, at most one per subscriber, oldest first.
struct ClaimDeliveries {
    endpoint: String,
    now: UnixSeconds,
    lease_until: UnixSeconds,
    limit: usize,
}

impl Command for ClaimDeliveries {
    type Output = Vec<Claimed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Claimed>> {
        let conn = batch.conn();
        Ok(webhooks::claim_due(conn, &self.endpoint, self.now, self.lease_until, self.limit)?)
    }
}

#[derive(Debug)]
enum Settle {
    Delivered,
    Retry { at: UnixSeconds, last_error: String },
    Drop,
}

/// Records how each claimed event ended, in one commit.
#[derive(Debug)]
struct SettleDeliveries(Vec<(i64, Settle)>);

impl Command for SettleDeliveries {
    type Output = ();

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
        let conn = batch.conn();
        for (id, settle) in &self.0 {
            match settle {
                Settle::Delivered | Settle::Drop => webhooks::delete(conn, *id)?,
                Settle::Retry { at, last_error } => webhooks::retry_at(conn, *id, *at, last_error)?,
            }
        }
        Ok(())
    }
}
