//! The mail workers: turn `outbox` items into sent mail, after the request that
//! caused them was answered, and not right behind it.
//!
//! A worker wakes on a jittered tick of about [`MAIL_TICK`] (so the cost of a mail is not tied
//! to the request that queued it), looks through a reader whether anything is due and the
//! paced budget has room — an idle worker never opens a write transaction — and if so:
//!
//! 1. claims a batch of up to [`CLAIM_BATCH`] due items in one writer command
//!    ([`ClaimMail`]): leases them, stamps each confirmation's new token and takes them from
//!    the budget, all in one commit;
//! 2. builds their mails together on a blocking thread, then sends them one after another over
//!    its own pooled SMTP connection;
//! 3. settles the whole batch in one command ([`SettleMail`]).
//!
//! It goes on without waiting while items are due. [`WORKERS`] workers run side by side; the
//! leases keep them off each other's items. Outcomes per mail:
//!
//! - sent → item deleted; its place in the budget stays spent.
//! - the relay refused signupd itself or could not be reached (a login, a sender, TLS, the
//!   connection, any refusal at the end of `DATA`: `SendError::holds_the_queue`) → nothing is
//!   lost: the stamp is undone, the reservation given back, the rest of the batch goes back
//!   unsent, each held mail keeps its due time and its count of tries, and the whole queue
//!   waits ([`super::relay_hold`], in memory: after a restart held mail goes at once); the
//!   operator is alerted once per episode (`relay_refused`), and told once when the relay
//!   takes mail again.
//! - refused at `RCPT TO` → whose refusal it is, the reply alone cannot tell (Exim's `550 relay
//!   not permitted` reads like a missing mailbox). The next mail to another address settles
//!   it: the relay keeps the session (`RSET`, [`super::relay`]) and the worker sends the next
//!   mail of its batch, or claims one more ([`SETTLING_CLAIMS`]). Refused the same way (same
//!   code and enhanced status): the relay's, held as above. Taken: the refusal was this
//!   mail's — a recipient status or a bare 550/551/553 (`SendError::refused_address`) gives a
//!   confirmation up, deletes a pending row that never got a link, suppresses the address on
//!   the mail's lists and alerts; a welcome mail's is retried (its subscriber stays
//!   confirmed: only a verified bounce acts on a confirmed address) and alerted once
//!   (`welcome_refused`); any other code (a policy refusal of one recipient, a deferral) waits
//!   with its own backoff while the queue goes on. With no other mail to try, the refused mail
//!   waits with its own backoff; nothing else is held. So one address never holds back
//!   another.
//! - this mail's own temporary failure (a mailbox busy at `DATA`, 4.1.x/4.2.x; the file
//!   transport) → the same undoing, and this item alone retries after `retry_base` ×
//!   2^(attempt−1) with ±20 % jitter, capped at 1 h, until the confirm window (`confirm_ttl`
//!   from when the item was queued) ends.
//! - its window ended, or the mail could not be built → item dropped; a pending row that never
//!   got a confirmation is deleted (nothing is kept for an address that never got a link) and
//!   the operator is alerted.
//!
//! Same session: lettre's `SmtpTransport` quits the connection on any refusal (its `send`
//! aborts with `QUIT`), so signupd sends `MAIL`, `RCPT` and `DATA` itself and answers a refused
//! recipient with `RSET`, keeping the connection in its pool. The pool hands the last
//! connection put back to the next send first, so the settling mail goes on the same session
//! unless another worker took that connection in between; the relay's verdict is the same
//! either way.
//!
//! The paced budget (`mail.burst`, refilled at `max_mails_per_hour`) is taken from at claim
//! time, inside the writer, so no span of T seconds sends more than `burst + T × max / 3600`
//! however many workers race. A crash between send and settle sends the
//! mail again after the lease ends (at least once), never zero times.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use ring::hmac;

use super::alert::{self, Alert, MailEvent};
use super::failure::SendError;
use super::message::{self, Recipient};
use super::queue::{ClaimMail, Companion, Ready, ReadyKind, SettleMail, Settlement, Undo, pace, secs};
use super::reference::{MailKind, ReferenceKey};
use super::transport::{Delivered, Outgoing, Transport};
use crate::clock::background::{self, Round, Shutdown, Worker};
use crate::clock::{Clock, UnixSeconds, backoff_secs};
use crate::config::presentation::Language;
use crate::config::secrets::Secrets;
use crate::config::tokens::{ConfirmToken, Keyring, RemovalToken};
use crate::config::{Config, ListConfig};
use crate::storage::subscribers::MailTarget;
use crate::storage::{Db, Writer};
use crate::storage::{mail_bucket, networks, outbox, suppressions};

/// Mail workers run side by side by `serve`, each with its own SMTP connection. With
/// `TCP_NODELAY` a mail to a local relay takes well under a millisecond of waiting, so a few
/// workers keep a relay busy; more would only queue on the writer.
pub const WORKERS: usize = 4;
/// Most items one worker claims (and settles) in one command.
pub const CLAIM_BATCH: usize = 32;
/// How often, on average, an idle worker looks for due mail (±50 % jitter).
pub const MAIL_TICK: Duration = Duration::from_secs(1);

/// A permanent refusal of the address itself at send time (`SendError::refused_address`,
/// settled by the relay taking another recipient): a hard bounce for the pending signups its
/// mail was for, and never for a confirmed row.
#[derive(Debug, Clone)]
pub struct RefusedAddress {
    /// The lists the refused mail was for (a confirmation's companions share its mail); no
    /// other list is touched.
    pub lists: Vec<String>,
    pub email: String,
    /// The enhanced status the server gave (`5.1.1`), or empty.
    pub status: String,
}

/// What becomes of a [`RefusedAddress`], after the mail's settlement committed. The app hands it
/// to `relays` as a hard bounce; this module cannot, since `relays` reads its references.
pub type OnRefusedAddress = Arc<dyn Fn(RefusedAddress) -> BoxFuture<'static, ()> + Send + Sync>;

/// A future a hook returns.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a mail worker works with: the parts of the running service it needs, and no more.
#[derive(Clone)]
pub struct Mailer {
    pub config: Arc<Config>,
    /// Reads whether anything is due, and the budget.
    pub db: Db,
    /// Claims and settles.
    pub writer: Writer,
    /// The hash key, for addresses' daily caps and the removal tokens in the mails.
    pub secrets: Arc<Secrets>,
    pub clock: Arc<dyn Clock>,
    pub transport: Transport,
    /// For the alert webhook.
    pub http_client: reqwest::Client,
    /// Signs the one-click unsubscribe links in welcome mails.
    pub keyring: Arc<Keyring>,
    /// Seals the `X-Signupd-Ref` of every mail.
    pub references: Arc<ReferenceKey>,
    /// Told of each address the SMTP server refused for good; `None`: nobody is.
    pub on_refused_address: Option<OnRefusedAddress>,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("transport", &self.transport).finish_non_exhaustive()
    }
}

/// What happened to one mail (or, for the last two, why nothing happened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailOutcome {
    /// A mail was sent (or written to a file).
    Sent,
    /// The item was due but needed no mail (row gone, confirmed, or mailed within the cooldown).
    Skipped,
    /// A confirmation not sent: its address had `max_mails_per_address_per_day` already.
    Capped,
    /// Sending failed temporarily; the item will be retried.
    Retrying { detail: String },
    /// Sending failed for good; the item was dropped and the operator alerted.
    GaveUp { detail: String },
    /// No item is due.
    EmptyQueue,
    /// Items are due, but the paced budget has no room now.
    BudgetExhausted,
    /// The relay refuses signupd; every mail waits until the next try ([`super::relay_hold`]).
    RelayRefusing,
}

impl MailOutcome {
    /// Whether a worker moved the queue (and should look again at once).
    fn moved_the_queue(&self) -> bool {
        !matches!(self, Self::EmptyQueue | Self::BudgetExhausted | Self::RelayRefusing)
    }
}

/// Sends the next due mail, if any: a batch of one. Tests call this directly, with the
/// background workers off.
pub async fn try_execute_task(mailer: &Mailer) -> anyhow::Result<MailOutcome> {
    let outcomes = try_execute_batch(mailer, 1).await?;
    Ok(outcomes.into_iter().next().unwrap_or(MailOutcome::EmptyQueue))
}

/// Claims up to `limit` due mails, sends them and settles them; one outcome per claimed item,
/// or a single `EmptyQueue` / `BudgetExhausted`.
pub async fn try_execute_batch(mailer: &Mailer, limit: usize) -> anyhow::Result<Vec<MailOutcome>> {
    let now = mailer.clock.now();
    let fair_order = match look(mailer, now, limit).await? {
        Look::Idle(idle) => return Ok(vec![idle]),
        Look::Claim { fair_order } => fair_order,
    };
    let lease_for = batch_bound(mailer, limit);
    let claimed = claim(mailer, limit, fair_order).await?;
    let mut unsent = Unsent { skipped: claimed.skipped, capped: claimed.capped };
    if claimed.ready.is_empty() {
        let mut outcomes = unsent.outcomes();
        if outcomes.is_empty() {
            outcomes.push(if claimed.budget_exhausted {
                MailOutcome::BudgetExhausted
            } else {
                MailOutcome::EmptyQueue
            });
        }
        return Ok(outcomes);
    }

    // Sending: one mail after another. Past the deadline, or once the relay refuses signupd,
    // the rest goes back to the queue unsent.
    let deadline = Instant::now() + lease_for.saturating_sub(mailer.transport.send_bound());
    let mut batch = Batch::default();
    let mut prepared = prepare_all(mailer, claimed.ready, now).await?;
    for more in 0..=SETTLING_CLAIMS {
        for (ready, outgoing) in prepared {
            let tried = match (&batch.held, Instant::now() > deadline) {
                (Some(error), _) => Tried::Held(error.clone()),
                (None, true) => Tried::Failed(SendError::temporary("not attempted in time".into())),
                (None, false) => {
                    let started = Instant::now();
                    let sent = match outgoing {
                        Ok(outgoing) => mailer.transport.deliver(outgoing).await,
                        Err(error) => Err(error),
                    };
                    crate::metrics::smtp_send(started.elapsed());
                    batch.tried(mailer, &ready, sent)
                }
            };
            batch.mails.push((ready, tried));
        }
        // A refusal at RCPT TO that no other mail settled yet: the next due mail, sent now on
        // the same session, settles it.
        if more == SETTLING_CLAIMS || !batch.unsettled() || Instant::now() > deadline {
            break;
        }
        // Another worker met the relay refusing signupd meanwhile: this refusal is most
        // likely the same, and waits with the queue rather than claim more.
        if mailer.transport.hold().holding(mailer.clock.now()) {
            batch.wait_with_the_queue();
            break;
        }
        let settling = claim(mailer, 1, None).await?;
        unsent.skipped += settling.skipped;
        unsent.capped += settling.capped;
        if settling.ready.is_empty() {
            break;
        }
        prepared = prepare_all(mailer, settling.ready, mailer.clock.now()).await?;
    }

    let mut settlements = Vec::with_capacity(batch.mails.len());
    // Settled after every mail's own, so the settlements' answers line up with the mails.
    let mut companion_settlements = Vec::new();
    let mut outcomes = Vec::with_capacity(batch.mails.len());
    let mut targets = Vec::with_capacity(batch.mails.len());
    for (ready, tried) in batch.mails {
        let undo = match &ready.kind {
            ReadyKind::Confirm { token, .. } => Some(Undo {
                stamped_at: ready.reserved_at,
                stamped_hash: token.hash(),
                previous: ready.target.previous_link.clone(),
                address_hash: ready.address_hash.clone(),
            }),
            ReadyKind::Welcome => None,
        };
        let kind = if undo.is_some() { "confirmation" } else { "welcome" };
        let reserved_at = Some(ready.reserved_at);
        let mut told = Told::default();
        let (settlement, outcome) = match tried {
            Tried::Taken(delivered) => {
                log_delivered(&delivered, kind, &ready.target);
                (Settlement::Sent { item_id: ready.item.id }, MailOutcome::Sent)
            }
            Tried::Held(error) => {
                told.quiet = true;
                let settlement = Settlement::Held {
                    item_id: ready.item.id,
                    subscriber_id: ready.target.id.clone(),
                    last_error: error.detail.clone(),
                    undo,
                    reserved_at,
                };
                (settlement, MailOutcome::Retrying { detail: error.detail })
            }
            // The relay took another recipient after refusing this one: the refusal was this
            // mail's. A refusal that names the recipient counts against a pending signup's
            // address; a welcome mail's address is confirmed, and only a verified bounce acts
            // on it (§5.3), so its refusal is retried, and the operator told the first time.
            Tried::Refused { error, settled: true } if error.refused_address().is_some() && undo.is_some() => {
                told.code = error.code;
                told.refused = error.refused_address();
                failed(mailer, &ready.item, &ready.target, error, now, undo, reserved_at)
            }
            Tried::Refused { error, settled } => {
                told.code = error.code;
                told.welcome_refused = settled && error.refused_address().is_some() && ready.item.attempts == 1;
                // A policy refusal of this recipient, or one nothing settled yet: retried with
                // its own backoff, while the queue goes on.
                let error = SendError { permanent: false, ..error };
                failed(mailer, &ready.item, &ready.target, error, now, undo, reserved_at)
            }
            Tried::Failed(error) => {
                told.code = error.code;
                failed(mailer, &ready.item, &ready.target, error, now, undo, reserved_at)
            }
        };
        for companion in &ready.companions {
            companion_settlements.push(alongside(&settlement, companion));
        }
        let result = match &outcome {
            MailOutcome::Sent => "sent",
            MailOutcome::Retrying { .. } => "retry",
            _ => "failed",
        };
        crate::metrics::mail(kind, result);
        told.lists = std::iter::once(&ready.target)
            .chain(ready.companions.iter().map(|companion| &companion.target))
            .map(|target| target.list_id.clone())
            .collect();
        settlements.push(settlement);
        outcomes.push(outcome);
        targets.push((ready.target, told));
    }

    settlements.extend(companion_settlements);
    let settle = SettleMail { settlements, pace: pace(&mailer.config), now: mailer.clock.now() };
    let deleted_rows = mailer.writer.execute(settle).await?;
    // A relay that took a mail and then refused signupd (within one batch) still refuses.
    if batch.relay_took_mail && batch.held.is_none() && mailer.transport.hold().accepted() {
        tracing::info!("the relay accepts mail again; sending what waited");
    }
    if let Some(error) = &batch.episode_began {
        alert::relay_refused(&mailer.config, &mailer.http_client, error).await;
    }
    for ((outcome, (target, told)), deleted_row) in outcomes.iter().zip(&targets).zip(deleted_rows) {
        // Mails that wait for a refusing relay are told of once, in its alert.
        if !told.quiet {
            report(mailer, outcome, target, told.code, deleted_row).await;
        }
        if told.welcome_refused {
            welcome_refused(mailer, outcome, target, told.code).await;
        }
        if let (Some(status), Some(hook)) = (&told.refused, &mailer.on_refused_address) {
            let refused =
                RefusedAddress { lists: told.lists.clone(), email: target.email.clone(), status: status.clone() };
            hook(refused).await;
        }
    }
    let mut all = unsent.outcomes();
    all.extend(outcomes);
    Ok(all)
}

/// How many more single mails a batch claims to settle a refusal at `RCPT TO` when none of its
/// own mails to another address came after it (each may be to the same address, which settles
/// nothing).
pub const SETTLING_CLAIMS: usize = 3;

/// Claims up to `limit` due mails, in `fair_order` when given.
async fn claim(mailer: &Mailer, limit: usize, fair_order: Option<Vec<i64>>) -> anyhow::Result<super::queue::Claim> {
    let now = mailer.clock.now();
    // Minted before the claim; each is used only if its item is a confirmation that wins its
    // compare-and-set, otherwise dropped unseen.
    let tokens = (0..limit).map(|_| ConfirmToken::mint()).collect::<Result<Vec<_>, _>>()?;
    let claim = ClaimMail {
        config: mailer.config.clone(),
        now,
        lease_until: now.saturating_add(secs(batch_bound(mailer, limit))),
        tokens,
        address_key: hmac::Key::new(hmac::HMAC_SHA256, mailer.secrets.hash_key.expose()),
        fair_order,
    };
    let claim = mailer.writer.execute(claim).await?;
    for _ in 0..claim.capped {
        crate::metrics::mail("confirmation", "capped");
    }
    Ok(claim)
}

/// Items a batch's claims deleted without a mail.
struct Unsent {
    skipped: usize,
    capped: usize,
}

impl Unsent {
    fn outcomes(&self) -> Vec<MailOutcome> {
        let mut outcomes = vec![MailOutcome::Skipped; self.skipped];
        outcomes.extend(std::iter::repeat_n(MailOutcome::Capped, self.capped));
        outcomes
    }
}

/// What one send of a batch came to, before its settlement is written.
enum Tried {
    Taken(Delivered),
    /// The relay refuses signupd: not sent, and no try counted.
    Held(SendError),
    /// Refused at `RCPT TO`; `settled` once the relay took a mail to another address after it.
    Refused {
        error: SendError,
        settled: bool,
    },
    /// This mail's own failure.
    Failed(SendError),
}

/// A batch's sends so far, and whose refusals they met.
#[derive(Default)]
struct Batch {
    mails: Vec<(Ready, Tried)>,
    /// The relay's refusal of signupd that holds the rest of the batch (and the queue).
    held: Option<SendError>,
    /// That refusal began an episode: the operator is told once.
    episode_began: Option<SendError>,
    relay_took_mail: bool,
}

impl Batch {
    /// Reads one send's result against the refusals before it (RFC 5321 leaves whose a refusal
    /// at `RCPT TO` is to the next recipient): a mail taken settles every earlier refusal of
    /// another address as that mail's own; a refusal the same as an unsettled one of another
    /// address is the relay's, and so is any failure that holds the queue by itself.
    fn tried(&mut self, mailer: &Mailer, ready: &Ready, sent: Result<Delivered, SendError>) -> Tried {
        let email = &ready.target.email;
        match sent {
            Ok(delivered) => {
                self.relay_took_mail |= matches!(delivered, Delivered::Smtp { .. });
                for (earlier, tried) in &mut self.mails {
                    if let Tried::Refused { settled, .. } = tried
                        && earlier.target.email != *email
                    {
                        *settled = true;
                    }
                }
                Tried::Taken(delivered)
            }
            Err(error) if error.refused_at_rcpt() => {
                let same = self.mails.iter().any(|(earlier, tried)| {
                    matches!(tried, Tried::Refused { error: first, settled: false }
                        if earlier.target.email != *email && first.same_refusal(&error))
                });
                if same {
                    self.hold(mailer, &error);
                    Tried::Held(error)
                } else {
                    Tried::Refused { error, settled: false }
                }
            }
            Err(error) if error.holds_the_queue() => {
                self.hold(mailer, &error);
                Tried::Held(error)
            }
            Err(error) => Tried::Failed(error),
        }
    }

    /// The relay refuses signupd: the queue waits, and so does every refusal this batch had
    /// not settled yet (it was the relay's, or cannot be told now).
    fn hold(&mut self, mailer: &Mailer, error: &SendError) {
        let refusal = mailer.transport.hold().refused(mailer.clock.now(), mailer.config.mail.retry_base);
        if let Some(relay) = mailer.transport.relay() {
            relay.close_idle();
        }
        if refusal.began {
            self.episode_began = Some(error.clone());
        }
        self.wait_with_the_queue();
        self.held = Some(error.clone());
    }

    /// The queue is held by another worker's refusal: the refusals not settled wait with it.
    fn wait_with_the_queue(&mut self) {
        for (_, tried) in &mut self.mails {
            if let Tried::Refused { error, settled: false } = tried {
                *tried = Tried::Held(error.clone());
            }
        }
    }

    /// Whether a refusal waits for the next mail to settle it.
    fn unsettled(&self) -> bool {
        self.held.is_none()
            && self.mails.iter().any(|(_, tried)| matches!(tried, Tried::Refused { settled: false, .. }))
    }
}

/// What is told of one mail after the settlement committed.
#[derive(Default)]
struct Told {
    /// It waits for a refusing relay: told of once, in its alert.
    quiet: bool,
    code: Option<u16>,
    /// The refusal names the recipient of a pending signup: a hard bounce on `lists`.
    refused: Option<String>,
    /// A welcome mail's recipient was refused, for the first time.
    welcome_refused: bool,
    /// The lists the mail was for: its own and its companions'.
    lists: Vec<String>,
}

/// What a look through a reader found.
enum Look {
    Idle(MailOutcome),
    /// Something is due and the budget has room. With more due than that room, the items to
    /// claim in the order that prefers people.
    Claim {
        fair_order: Option<Vec<i64>>,
    },
}

/// Through a reader, without a write transaction: whether there is anything to claim, and if
/// more is due than the budget lets out now, the order to claim it in. Reading the order
/// here keeps its sort off the writer; the claim re-checks each item.
async fn look(mailer: &Mailer, now: UnixSeconds, limit: usize) -> anyhow::Result<Look> {
    let pace = pace(&mailer.config);
    let reputation_days = mailer.config.signup.reputation_days;
    let reputation_since = (reputation_days > 0).then(|| networks::reputation_since(now, reputation_days));
    let holding = mailer.transport.hold().holding(now);
    mailer
        .db
        .run(move |conn| {
            // One snapshot for the whole look, so the fair order's passes see one queue. Read
            // only: dropped, it rolls back.
            let conn = conn.transaction()?;
            if !outbox::any_due(&conn, now)? {
                return Ok(Look::Idle(MailOutcome::EmptyQueue));
            }
            if holding {
                return Ok(Look::Idle(MailOutcome::RelayRefusing));
            }
            let room = mail_bucket::room(&conn, pace, now)?;
            if room == 0 {
                return Ok(Look::Idle(MailOutcome::BudgetExhausted));
            }
            let contended = outbox::more_due_than(&conn, now, room)?;
            let fair_order =
                if contended { Some(outbox::fair_order(&conn, now, limit.min(room), reputation_since)?) } else { None };
            Ok::<_, anyhow::Error>(Look::Claim { fair_order })
        })
        .await
}

/// How long a batch of `mails` may take to send, one after another, with a minute to spare:
/// its lease. No send starts later than one send bound before the lease ends.
fn batch_bound(mailer: &Mailer, mails: usize) -> Duration {
    let sends = mailer.transport.send_bound().saturating_mul(u32::try_from(mails).unwrap_or(u32::MAX));
    sends.saturating_add(Duration::from_secs(60))
}

/// How a companion's confirmation is settled: as the mail it went out in was. Its stamp (the
/// mail's token, over its own previous link) is taken back with the mail's.
fn alongside(mail: &Settlement, companion: &Companion) -> Settlement {
    let (item_id, subscriber_id) = (companion.item.id, companion.target.id.clone());
    let undo = |mail_undo: &Option<Undo>| {
        mail_undo.as_ref().map(|mail_undo| Undo {
            stamped_at: mail_undo.stamped_at,
            stamped_hash: mail_undo.stamped_hash.clone(),
            previous: companion.target.previous_link.clone(),
            address_hash: None,
        })
    };
    match mail {
        Settlement::Sent { .. } => Settlement::Sent { item_id },
        Settlement::Retry { next_attempt_at, last_error, undo: mail_undo, .. } => Settlement::Retry {
            item_id,
            subscriber_id,
            next_attempt_at: *next_attempt_at,
            last_error: last_error.clone(),
            undo: undo(mail_undo),
            reserved_at: None,
        },
        Settlement::Held { last_error, undo: mail_undo, .. } => Settlement::Held {
            item_id,
            subscriber_id,
            last_error: last_error.clone(),
            undo: undo(mail_undo),
            reserved_at: None,
        },
        Settlement::GiveUp { undo: mail_undo, .. } => {
            Settlement::GiveUp { item_id, subscriber_id, undo: undo(mail_undo), reserved_at: None }
        }
    }
}

/// Builds, signs and formats the mails of a claim, together on a blocking thread: the CPU part
/// of sending (about a third of a mail's cost, measured) kept off the threads that serve
/// requests and move the other workers' bytes. A mail that cannot be built fails for good.
async fn prepare_all(
    mailer: &Mailer,
    ready: Vec<Ready>,
    now: UnixSeconds,
) -> anyhow::Result<Vec<(Ready, Result<Outgoing, SendError>)>> {
    let mailer = mailer.clone();
    let prepared = tokio::task::spawn_blocking(move || {
        ready
            .into_iter()
            .map(|ready| {
                let outgoing = prepare(&mailer, &ready, now);
                (ready, outgoing)
            })
            .collect()
    });
    prepared.await.context("building the mails was cancelled")
}

fn prepare(mailer: &Mailer, ready: &Ready, now: UnixSeconds) -> Result<Outgoing, SendError> {
    let target = &ready.target;
    let message = match &ready.kind {
        ReadyKind::Confirm { token, expires_at } => {
            confirmation_mail(mailer, target, &ready.companions, token, *expires_at)
        }
        ReadyKind::Welcome => welcome_mail(mailer, target, now),
    };
    let message = message.map_err(|error| SendError {
        permanent: true,
        code: None,
        stage: None,
        detail: format!("the mail could not be built: {error:#}"),
    })?;
    Ok(mailer.transport.prepare(message))
}

/// Runs until `shutdown`; the batch in flight is finished (sent and settled) first.
pub async fn run_worker(mailer: Mailer, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
    background::run(mailer, shutdown).await;
}

impl Worker for Mailer {
    fn name(&self) -> &str {
        "mail"
    }

    fn tick(&self) -> Duration {
        MAIL_TICK
    }

    async fn round(&mut self, _: &mut Shutdown) -> anyhow::Result<Round> {
        let outcomes = try_execute_batch(self, CLAIM_BATCH).await?;
        Ok(if outcomes.iter().any(MailOutcome::moved_the_queue) { Round::Moved } else { Round::Idle })
    }
}

/// The mail for a prepared confirmation: a new confirm link (for the companions' lists too)
/// and the manage link.
fn confirmation_mail(
    mailer: &Mailer,
    target: &MailTarget,
    companions: &[Companion],
    token: &ConfirmToken,
    expires_at: UnixSeconds,
) -> anyhow::Result<lettre::Message> {
    let list = configured_list(mailer, target)?;
    let also = companions
        .iter()
        .map(|companion| configured_list(mailer, &companion.target))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let removal = RemovalToken::derive(&mailer.secrets.hash_key, &target.id);
    let reference = seal_reference(mailer, target, MailKind::Confirmation)?;
    let to = Recipient { address: &target.email, reference: &reference, language: Some(language_of(list, target)) };
    message::confirmation(&mailer.config, list, &also, to, token.expose(), removal.expose(), expires_at)
}

/// The mail for a prepared welcome: the manage link and a signed one-click unsubscribe link.
fn welcome_mail(mailer: &Mailer, target: &MailTarget, now: UnixSeconds) -> anyhow::Result<lettre::Message> {
    let list = configured_list(mailer, target)?;
    let removal = RemovalToken::derive(&mailer.secrets.hash_key, &target.id);
    let unsubscribe = mailer.keyring.sign_unsubscribe(&target.list_id, &target.id, now);
    let reference = seal_reference(mailer, target, MailKind::Welcome)?;
    let to = Recipient { address: &target.email, reference: &reference, language: Some(language_of(list, target)) };
    message::welcome(&mailer.config, list, to, removal.expose(), &unsubscribe)
}

/// The language `target`'s row reads in.
fn language_of(list: &ListConfig, target: &MailTarget) -> Language {
    list.row_language(target.language.as_deref())
}

/// The `X-Signupd-Ref` of a mail of `kind` to `target`: its list, its row and its address's
/// every-list suppression key, sealed.
fn seal_reference(mailer: &Mailer, target: &MailTarget, kind: MailKind) -> anyhow::Result<String> {
    let row = uuid::Uuid::parse_str(&target.id).context("a subscriber id is a UUID")?;
    let key = suppressions::every_list_hash(&mailer.secrets.hash_key, &target.email);
    mailer.references.seal(&target.list_id, kind, row, &key, mailer.clock.now())
}

fn configured_list<'a>(mailer: &'a Mailer, target: &MailTarget) -> anyhow::Result<&'a ListConfig> {
    mailer
        .config
        .list(&target.list_id)
        .ok_or_else(|| anyhow::anyhow!("list {} vanished from the configuration", target.list_id))
}

fn log_delivered(delivered: &Delivered, kind: &str, target: &MailTarget) {
    let masked = crate::domain::EmailAddress::parse(&target.email).map(|e| e.masked()).unwrap_or_default();
    match delivered {
        Delivered::Smtp { code } => {
            tracing::info!(kind, to = %masked, list = %target.list_id, smtp_code = code, "mail sent");
        }
        Delivered::File { path } => {
            tracing::info!(kind, to = %masked, list = %target.list_id, file = %path.display(), "mail written to file");
        }
    }
}

/// After a failed send: retry later, or give up for good (permanent failure, or the confirm
/// window would end first).
fn failed(
    mailer: &Mailer,
    item: &outbox::Claimed,
    target: &MailTarget,
    error: SendError,
    now: UnixSeconds,
    undo: Option<Undo>,
    reserved_at: Option<UnixSeconds>,
) -> (Settlement, MailOutcome) {
    let window_ends = item.created_at.saturating_add(secs(mailer.config.signup.confirm_ttl));
    let next = now.saturating_add(backoff_secs(mailer.config.mail.retry_base, item.attempts));
    if !error.permanent && next < window_ends {
        let settlement = Settlement::Retry {
            item_id: item.id,
            subscriber_id: target.id.clone(),
            next_attempt_at: next,
            last_error: error.detail.clone(),
            undo,
            reserved_at,
        };
        return (settlement, MailOutcome::Retrying { detail: error.detail });
    }
    let settlement = Settlement::GiveUp { item_id: item.id, subscriber_id: target.id.clone(), undo, reserved_at };
    (settlement, MailOutcome::GaveUp { detail: error.detail })
}

/// After the settlement committed: a warning for a retry, an alert for a confirmation that never
/// reached anyone, an error for any other mail given up.
async fn report(
    mailer: &Mailer,
    outcome: &MailOutcome,
    target: &MailTarget,
    smtp_code: Option<u16>,
    deleted_row: bool,
) {
    match outcome {
        MailOutcome::Retrying { detail } => {
            let domain = alert::recipient_domain(&target.email);
            tracing::warn!(list = %target.list_id, recipient_domain = %domain, detail = %detail, "mail not sent; will retry");
        }
        MailOutcome::GaveUp { detail } if deleted_row => {
            let alert =
                Alert::new(MailEvent::ConfirmationUndeliverable, &target.list_id, smtp_code, &target.email, detail);
            alert::send(&mailer.config, &mailer.http_client, &alert).await;
        }
        MailOutcome::GaveUp { detail } => {
            let domain = alert::recipient_domain(&target.email);
            tracing::error!(list = %target.list_id, recipient_domain = %domain, detail = %detail, "mail could not be delivered; giving up");
        }
        _ => {}
    }
}

/// A welcome mail whose recipient the relay refused, though it took others: the address is
/// confirmed, and a send-time refusal never removes it (only a verified bounce does), so the
/// mail is retried and the operator told, once.
async fn welcome_refused(mailer: &Mailer, outcome: &MailOutcome, target: &MailTarget, smtp_code: Option<u16>) {
    let (MailOutcome::Retrying { detail } | MailOutcome::GaveUp { detail }) = outcome else {
        return;
    };
    let alert = Alert::new(MailEvent::WelcomeRefused, &target.list_id, smtp_code, &target.email, detail);
    alert::send(&mailer.config, &mailer.http_client, &alert).await;
}
