//! Delivering subscriber events: one worker per webhook endpoint and per destination (a
//! [`Sink`]), so one slow or dead receiver holds up no other. A worker wakes on a jittered tick
//! of about [`TICK`], looks through a reader whether its sink has a claimable event (an idle
//! worker never writes), takes the sink's lease and reads up to [`BATCH`] due events in one
//! writer command (`storage::webhooks`: nothing is written into the events), delivers them one
//! after another, and settles the batch and gives the lease back in one command; then, while the
//! rest of signupd keeps the writer busy, it waits (up to [`MAX_YIELD`]) before the next batch
//! (`yield_to_the_pages`):
//!
//! - delivered (a webhook's 2xx within `mail.webhook_timeout`; a destination's calls done, a
//!   duplicate included) → the event (and the address in it) deleted;
//! - failed → retried with the same `webhook-id` after the mail backoff (`mail.retry_base`,
//!   doubling with jitter, capped at 1 h), or after exactly what a destination's 429 asked for;
//!   a webhook retries every failure — another status, a redirect, a timeout, a refused or
//!   closed connection — and a destination all but a refusal that will not change
//!   (`crate::outbound::destinations`), which is dropped at once;
//! - when the next try would come after `mail.webhook_max_age` → dropped: deleted, an error log
//!   line and an `alert_webhook` POST naming the endpoint or destination and the event type,
//!   never the address.
//!
//! On shutdown a worker stops between deliveries; the rest of its batch stays queued as it was.
//! So does what is left of a batch after `MAX_BATCH_WORK`: no event is begun later, so a lease
//! ends `MAX_BATCH_WORK` + the longest one event may take + `LEASE_MARGIN` after its claim
//! (a minute and a half for a destination at the default timeout), and after a `kill -9` the
//! sink's events are delivered again that soon, the ones in flight at the kill among them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::{Endpoint, Webhooks};
use crate::clock::background::{self, Round, Shutdown, Worker};
use crate::clock::{Clock, SystemClock, UnixSeconds, backoff_secs};
use crate::config::Config;
pub use crate::outbound::delivery::DeliveryFailure;
use crate::outbound::delivery::{Failed, Retry};
use crate::outbound::destinations::{Destination, Http};
use crate::storage::webhooks::{self, Claimed};
use crate::storage::{Batch, Command};
use crate::storage::{Db, Writer};

/// Most events one worker claims (and settles) in one command.
pub const BATCH: usize = 64;
/// How often, on average, an idle worker looks for events (±50 % jitter).
pub const TICK: Duration = Duration::from_secs(1);
/// The longest a worker spends on one claimed batch; the rest is released for the next round.
const MAX_BATCH_WORK: Duration = Duration::from_secs(30);
/// A lease lasts the batch's time and this much more, for the settling command to reach the
/// writer.
const LEASE_MARGIN: Duration = Duration::from_secs(30);
/// How long the writer's demand is watched before a worker's next batch.
const DEMAND_SAMPLE: Duration = Duration::from_millis(250);
/// More foreground commands than this in one `DEMAND_SAMPLE` (400 a second: a wave of signups
/// or confirmations; the mail workers draining at their pace send a few dozen) is a busy writer.
pub const BUSY_DEMAND: u64 = 100;
/// The longest a worker waits for a busy writer before its next batch: under a load that never
/// ends, it still hands on a batch this often.
pub const MAX_YIELD: Duration = Duration::from_secs(10);

/// What a delivery worker works with: the parts of the running service it needs, and its sink.
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
    pub sink: Sink,
    /// Who holds the sink's lease while this worker delivers: random, one per worker.
    pub holder: String,
}

/// Where a worker delivers: a webhook endpoint or a destination. Their events share one queue,
/// under the sink's name (unique among both, `crate::config`).
#[derive(Debug, Clone)]
pub enum Sink {
    Endpoint(Arc<Endpoint>),
    Destination(Arc<Destination>),
}

impl Sink {
    pub fn name(&self) -> &str {
        match self {
            Self::Endpoint(endpoint) => &endpoint.config.name,
            Self::Destination(destination) => destination.name(),
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
        /// Refused for good (a destination's 4xx), rather than out of time.
        refused: bool,
        /// What the operator can do about it.
        hint: String,
    },
    /// Put back unsent (shutdown).
    Released,
    EmptyQueue,
}

/// Claims up to `limit` events of the deliverer's sink, delivers them and settles them. Tests
/// call this directly with the background workers off.
pub async fn try_deliver_batch(
    deliverer: &Deliverer,
    limit: usize,
    mut stopping: impl FnMut() -> bool + Send,
) -> anyhow::Result<Vec<DeliveryOutcome>> {
    let now = deliverer.clock.now();
    let (name, holder) = (deliverer.sink.name().to_owned(), deliverer.holder.clone());
    let due =
        deliverer.db.run(move |conn| Ok::<_, anyhow::Error>(webhooks::any_due(conn, &name, &holder, now)?)).await?;
    if !due {
        return Ok(vec![DeliveryOutcome::EmptyQueue]);
    }
    // The worst one event can take: a destination may make three calls for it (listmonk:
    // create, look up, add). The batch is worked on for at most `budget`, and what is left then
    // goes back to the queue, so the lease — all a `kill -9` leaves behind — ends soon after.
    let calls = if matches!(deliverer.sink, Sink::Destination(_)) { 3 } else { 1 };
    let per_event = deliverer.webhooks.timeout().saturating_mul(calls);
    let budget = per_event.saturating_mul(u32::try_from(limit).unwrap_or(u32::MAX)).min(MAX_BATCH_WORK);
    // The last event begun within the budget may take `per_event` more.
    let lease = budget + per_event + LEASE_MARGIN;
    let started = std::time::Instant::now();
    let claim = ClaimDeliveries {
        endpoint: deliverer.sink.name().to_owned(),
        holder: deliverer.holder.clone(),
        now,
        lease_until: now.saturating_add(i64::try_from(lease.as_secs()).unwrap_or(i64::MAX)),
        limit,
    };
    let claimed = deliverer.writer.execute_uncounted(claim).await?;
    if claimed.is_empty() {
        return Ok(vec![DeliveryOutcome::EmptyQueue]);
    }
    let max_age = i64::try_from(deliverer.config.mail.webhook_max_age.as_secs()).unwrap_or(i64::MAX);
    let mut settlements = Vec::with_capacity(claimed.len());
    let mut outcomes = Vec::with_capacity(claimed.len());
    for event in &claimed {
        let out_of_time = !outcomes.is_empty() && started.elapsed() >= budget;
        if stopping() || out_of_time {
            settlements.push((event.id, Settle::Release));
            outcomes.push(DeliveryOutcome::Released);
            continue;
        }
        let (settle, outcome) = match deliver(deliverer, event).await {
            Ok(()) => (Settle::Delivered, DeliveryOutcome::Delivered),
            Err(Failed { failure, retry }) => {
                let detail = failure.to_string();
                let now = deliverer.clock.now();
                let next = match retry {
                    Retry::Backoff => {
                        Some(now.saturating_add(backoff_secs(deliverer.config.mail.retry_base, event.attempts)))
                    }
                    Retry::After(wait) => {
                        Some(now.saturating_add(i64::try_from(wait.as_secs()).unwrap_or(i64::MAX).max(1)))
                    }
                    Retry::Never => None,
                };
                match next {
                    Some(at) if at <= event.created_at.saturating_add(max_age) => {
                        (Settle::Retry { at, last_error: detail.clone() }, DeliveryOutcome::Retrying { detail })
                    }
                    _ => {
                        let hint = match &deliverer.sink {
                            Sink::Endpoint(_) => failure.hint().to_owned(),
                            Sink::Destination(destination) => destination.hint(&failure),
                        };
                        (Settle::Drop, DeliveryOutcome::Dropped { detail, refused: next.is_none(), hint })
                    }
                }
            }
        };
        settlements.push((event.id, settle));
        outcomes.push(outcome);
    }
    let settle = SettleDeliveries {
        endpoint: deliverer.sink.name().to_owned(),
        holder: deliverer.holder.clone(),
        now: deliverer.clock.now(),
        settlements,
    };
    deliverer.writer.execute_uncounted(settle).await?;
    for (event, outcome) in claimed.iter().zip(&outcomes) {
        report(deliverer, event, outcome).await;
    }
    Ok(outcomes)
}

/// One event to the sink: a signed POST to an endpoint, or a destination's calls.
async fn deliver(deliverer: &Deliverer, event: &Claimed) -> Result<(), Failed> {
    let timeout = deliverer.webhooks.timeout();
    let client = deliverer.webhooks.client();
    match &deliverer.sink {
        Sink::Endpoint(endpoint) => {
            // Receivers compare `webhook-timestamp` with their own clock (replay protection): it
            // is the wall-clock time of this attempt, not the injected clock.
            let timestamp = SystemClock.now();
            match super::send(client, endpoint, &event.event_id, &event.payload, timestamp, timeout).await {
                Ok(status) => {
                    DeliveryFailure::from_status(status).map_or(Ok(()), |failure| Err(Failed::backoff(failure)))
                }
                Err(error) => Err(Failed::backoff(DeliveryFailure::from_error(&error, timeout))),
            }
        }
        Sink::Destination(destination) => {
            destination.deliver(Http { client, timeout }, &event.event_id, &event.payload).await
        }
    }
}

async fn report(deliverer: &Deliverer, event: &Claimed, outcome: &DeliveryOutcome) {
    let name = deliverer.sink.name();
    let record = |result: &'static str| match &deliverer.sink {
        Sink::Endpoint(_) => crate::metrics::webhook(result),
        Sink::Destination(_) => crate::metrics::destination(name, result),
    };
    match outcome {
        DeliveryOutcome::Delivered => record("delivered"),
        DeliveryOutcome::Retrying { detail } => {
            record("retry");
            let what = match deliverer.sink {
                Sink::Endpoint(_) => "webhook not delivered; will retry",
                Sink::Destination(_) => "subscriber event not handed to the destination; will retry",
            };
            tracing::warn!(sink = name, event_type = %event.event_type, attempt = event.attempts, detail = %detail, "{what}");
        }
        DeliveryOutcome::Dropped { detail, refused, hint } => {
            record("dropped");
            let (config, client) = (&deliverer.config, &deliverer.http_client);
            match &deliverer.sink {
                Sink::Endpoint(_) => {
                    crate::outbound::mail::alert::webhook_dropped(config, client, name, &event.event_type, detail)
                        .await;
                }
                Sink::Destination(_) => {
                    let dropped = crate::outbound::mail::alert::DestinationDropped {
                        event: "destination_dropped",
                        destination: name,
                        event_type: &event.event_type,
                        detail,
                        refused: *refused,
                        hint,
                    };
                    crate::outbound::mail::alert::destination_dropped(config, client, &dropped).await;
                }
            }
        }
        DeliveryOutcome::Released | DeliveryOutcome::EmptyQueue => {}
    }
}

/// The background worker of one sink; stops between deliveries when `shutdown` completes.
pub async fn run_worker(deliverer: Deliverer, shutdown: impl Future<Output = ()> + Send + 'static) {
    background::run(deliverer, shutdown).await;
}

impl Worker for Deliverer {
    fn name(&self) -> &str {
        self.sink.name()
    }

    fn tick(&self) -> Duration {
        TICK
    }

    async fn round(&mut self, shutdown: &mut Shutdown) -> anyhow::Result<Round> {
        let during = Demand::since_now(&self.writer);
        let outcomes = try_deliver_batch(self, BATCH, || shutdown.is_stopping()).await?;
        let moved = outcomes.iter().any(|outcome| *outcome != DeliveryOutcome::EmptyQueue);
        if moved && during.was_busy(&self.writer) {
            yield_to_the_pages(&self.writer, shutdown).await;
        }
        Ok(if moved { Round::Moved } else { Round::Idle })
    }
}

/// The writer's demand from a moment on: whether it was busy since.
struct Demand {
    commands: u64,
    since: std::time::Instant,
}

impl Demand {
    fn since_now(writer: &Writer) -> Self {
        Self { commands: writer.demand(), since: std::time::Instant::now() }
    }

    /// More than [`BUSY_DEMAND`] commands per [`DEMAND_SAMPLE`] since then.
    fn was_busy(&self, writer: &Writer) -> bool {
        let commands = u128::from(writer.demand().saturating_sub(self.commands));
        let elapsed = self.since.elapsed().as_micros().max(1);
        commands * DEMAND_SAMPLE.as_micros() > u128::from(BUSY_DEMAND) * elapsed
    }
}

/// After a batch during which the writer was busy: waits while the rest of signupd keeps it busy
/// ([`BUSY_DEMAND`]), up to [`MAX_YIELD`] or the shutdown. The hand-on has no hurry — its events
/// wait in their durable queue, in order — and the pages do: on a machine a wave of confirmations
/// keeps busy, delivering beside them took a tenth of their rate even at the lowest CPU priority,
/// in the worker's HTTP calls, the receiver's answers and the settling writes (BENCHMARKS.md,
/// "Destinations"). The demand is measured over the batch itself, so a quiet writer costs a worker
/// no wait at all; a worker waits only after a batch, so the first events after a quiet spell go
/// out at once; the worker's own claims and settles are not counted (`Writer::execute_uncounted`),
/// so it never waits for itself, nor for another sink's worker.
async fn yield_to_the_pages(writer: &Writer, shutdown: &mut Shutdown) {
    let started = std::time::Instant::now();
    while started.elapsed() < MAX_YIELD && !shutdown.is_stopping() {
        let sample = Demand::since_now(writer);
        tokio::time::sleep(DEMAND_SAMPLE).await;
        if !sample.was_busy(writer) {
            return;
        }
    }
}

/// Takes the sink's lease and reads its due events, none that waits for another, oldest first;
/// none when another worker holds the lease.
struct ClaimDeliveries {
    endpoint: String,
    holder: String,
    now: UnixSeconds,
    lease_until: UnixSeconds,
    limit: usize,
}

impl Command for ClaimDeliveries {
    type Output = Vec<Claimed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Claimed>> {
        let conn = batch.conn();
        if !webhooks::take_sink_lease(conn, &self.endpoint, &self.holder, self.now, self.lease_until)? {
            return Ok(Vec::new());
        }
        Ok(webhooks::due(conn, &self.endpoint, self.now, self.limit)?)
    }
}

#[derive(Debug)]
enum Settle {
    Delivered,
    Retry {
        at: UnixSeconds,
        last_error: String,
    },
    Drop,
    /// Not attempted: left as it was.
    Release,
}

/// Records how each claimed event ended and gives the sink's lease back, in one commit.
#[derive(Debug)]
struct SettleDeliveries {
    endpoint: String,
    holder: String,
    now: UnixSeconds,
    settlements: Vec<(i64, Settle)>,
}

impl Command for SettleDeliveries {
    type Output = ();

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
        let conn = batch.conn();
        for (id, settle) in &self.settlements {
            match settle {
                Settle::Delivered | Settle::Drop => webhooks::delete(conn, *id)?,
                Settle::Retry { at, last_error } => webhooks::retry_at(conn, *id, *at, last_error)?,
                Settle::Release => {}
            }
        }
        webhooks::release_sink_lease(conn, &self.endpoint, &self.holder, self.now)?;
        Ok(())
    }
}
