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

use super::Endpoint;
use crate::clock::{Clock, SystemClock, UnixSeconds, backoff_secs, jittered};
use crate::state::AppState;
use crate::storage::webhooks::{self, Claimed};
use crate::storage::{Batch, Command};

/// Most events one worker claims (and settles) in one command.
pub const BATCH: usize = 64;
/// How often, on average, an idle worker looks for events (±50 % jitter).
pub const TICK: Duration = Duration::from_secs(1);

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

/// Claims up to `limit` events of `endpoint`, posts them and settles them. Tests call this
/// directly with the background workers off.
pub async fn try_deliver_batch(
    state: &AppState,
    endpoint: &Endpoint,
    limit: usize,
    mut stopping: impl FnMut() -> bool,
) -> anyhow::Result<Vec<DeliveryOutcome>> {
    let now = state.clock.now();
    let name = endpoint.config.name.clone();
    let due = state.db.run(move |conn| Ok::<_, anyhow::Error>(webhooks::any_due(conn, &name, now)?)).await?;
    if !due {
        return Ok(vec![DeliveryOutcome::EmptyQueue]);
    }
    let timeout = state.webhooks.timeout();
    let lease = timeout.saturating_mul(u32::try_from(limit).unwrap_or(u32::MAX)) + Duration::from_secs(60);
    let claim = ClaimDeliveries {
        endpoint: endpoint.config.name.clone(),
        now,
        lease_until: now.saturating_add(i64::try_from(lease.as_secs()).unwrap_or(i64::MAX)),
        limit,
    };
    let claimed = state.writer.execute(claim).await?;
    if claimed.is_empty() {
        return Ok(vec![DeliveryOutcome::EmptyQueue]);
    }
    let max_age = i64::try_from(state.config.mail.webhook_max_age.as_secs()).unwrap_or(i64::MAX);
    let mut settlements = Vec::with_capacity(claimed.len());
    let mut outcomes = Vec::with_capacity(claimed.len());
    for event in &claimed {
        if stopping() {
            settlements.push((event.id, Settle::Retry { at: now, last_error: "not attempted: shutting down".into() }));
            outcomes.push(DeliveryOutcome::Released);
            continue;
        }
        let (settle, outcome) = match post(state, endpoint, event).await {
            Ok(()) => (Settle::Delivered, DeliveryOutcome::Delivered),
            Err(detail) => {
                let now = state.clock.now();
                let next = now.saturating_add(backoff_secs(state.config.mail.retry_base, event.attempts));
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
    state.writer.execute(SettleDeliveries(settlements)).await?;
    for (event, outcome) in claimed.iter().zip(&outcomes) {
        report(state, endpoint, event, outcome).await;
    }
    Ok(outcomes)
}

/// One signed POST; `Err` carries what went wrong in words without the address.
async fn post(state: &AppState, endpoint: &Endpoint, event: &Claimed) -> Result<(), String> {
    let timeout = state.webhooks.timeout();
    // Receivers compare `webhook-timestamp` with their own clock (replay protection): it is the
    // wall-clock time of this attempt, not the injected clock.
    let timestamp = SystemClock.now();
    let sent =
        super::send(state.webhooks.client(), endpoint, &event.event_id, &event.payload, timestamp, timeout).await;
    match sent {
        Ok(status) if status.is_success() => Ok(()),
        Ok(status) if status.is_redirection() => Err(format!("HTTP {} (redirects are not followed)", status.as_u16())),
        Ok(status) => Err(format!("HTTP {}", status.as_u16())),
        Err(error) => Err(describe(&error, timeout)),
    }
}

/// A request error in words; never the URL's query or anything from the payload.
pub fn describe(error: &reqwest::Error, timeout: Duration) -> String {
    if error.is_timeout() {
        return format!("no answer within {}s", timeout.as_secs());
    }
    let refused = std::iter::successors(std::error::Error::source(error), |cause| cause.source()).any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    if refused {
        "connection refused".to_owned()
    } else if error.is_connect() {
        "could not connect (DNS, TLS or the network)".to_owned()
    } else {
        "the connection closed before an answer".to_owned()
    }
}

async fn report(state: &AppState, endpoint: &Endpoint, event: &Claimed, outcome: &DeliveryOutcome) {
    let name = endpoint.config.name.as_str();
    match outcome {
        DeliveryOutcome::Delivered => crate::metrics::webhook("delivered"),
        DeliveryOutcome::Retrying { detail } => {
            crate::metrics::webhook("retry");
            tracing::warn!(endpoint = name, event_type = %event.event_type, attempt = event.attempts, detail = %detail, "webhook not delivered; will retry");
        }
        DeliveryOutcome::Dropped { detail } => {
            crate::metrics::webhook("dropped");
            crate::mail::alert::webhook_dropped(&state.config, &state.http_client, name, &event.event_type, detail)
                .await;
        }
        DeliveryOutcome::Released | DeliveryOutcome::EmptyQueue => {}
    }
}

/// The background worker of one endpoint; stops between deliveries when `shutdown` completes.
pub async fn run_worker(state: AppState, endpoint: Arc<Endpoint>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    // Set once the shutdown future completed; a completed future is never polled again.
    let mut stopped = false;
    loop {
        let stopping = || {
            stopped = stopped || futures_util::FutureExt::now_or_never(&mut shutdown).is_some();
            stopped
        };
        let moved = match try_deliver_batch(&state, &endpoint, BATCH, stopping).await {
            Ok(outcomes) => outcomes.iter().any(|outcome| *outcome != DeliveryOutcome::EmptyQueue),
            Err(error) => {
                tracing::error!(endpoint = %endpoint.config.name, error = format!("{error:#}"), "webhook worker: cannot read the queue; retrying");
                false
            }
        };
        if stopped {
            return;
        }
        if moved {
            if futures_util::poll!(&mut shutdown).is_ready() {
                return;
            }
            continue;
        }
        tokio::select! {
            () = tokio::time::sleep(jittered(TICK)) => {}
            () = &mut shutdown => return,
        }
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
