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
//!   connection, a policy: `SendError::holds_the_queue`) → nothing is lost: the stamp is
//!   undone, the reservation given back, the rest of the batch goes back unsent, and the whole
//!   queue waits ([`super::relay_hold`]); the operator is alerted once per episode
//!   (`relay_refused`), and told once when the relay takes mail again.
//! - the recipient deferred it (4xx at `RCPT TO`) → the same undoing, and this item alone
//!   retries after `retry_base` × 2^(attempt−1) with ±20 % jitter, capped at 1 h, until the
//!   confirm window (`confirm_ttl` from when the item was queued) ends.
//! - the recipient refused it for good, or its window ended, or the mail could not be built →
//!   item dropped; a pending row that never got a confirmation is deleted (nothing is kept for
//!   an address that never got a link) and the operator is alerted.
//!
//! The paced budget (`mail.burst`, refilled at `max_mails_per_hour`) is taken from at claim
//! time, inside the writer, so no span of T seconds sends more than `burst + T × max / 3600`
//! however many workers race. A crash between send and settle sends the
//! mail again after the lease ends (at least once), never zero times.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use ring::hmac;

use super::alert::{self, Alert};
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

/// A permanent refusal of the address itself at send time (`SendError::refused_address`): a
/// hard bounce, as a relay would report it later.
#[derive(Debug, Clone)]
pub struct RefusedAddress {
    pub list_id: String,
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
    // Minted before the claim; each is used only if its item is a confirmation that wins its
    // compare-and-set, otherwise dropped unseen.
    let tokens = (0..limit).map(|_| ConfirmToken::mint()).collect::<Result<Vec<_>, _>>()?;
    let lease_for = batch_bound(mailer, limit);
    let claim = ClaimMail {
        config: mailer.config.clone(),
        now,
        lease_until: now.saturating_add(secs(lease_for)),
        tokens,
        address_key: hmac::Key::new(hmac::HMAC_SHA256, mailer.secrets.hash_key.expose()),
        fair_order,
    };
    let claim = mailer.writer.execute(claim).await?;
    for _ in 0..claim.capped {
        crate::metrics::mail("confirmation", "capped");
    }
    let mut outcomes = vec![MailOutcome::Skipped; claim.skipped];
    outcomes.extend(std::iter::repeat_n(MailOutcome::Capped, claim.capped));
    if claim.ready.is_empty() {
        if outcomes.is_empty() {
            outcomes.push(if claim.budget_exhausted { MailOutcome::BudgetExhausted } else { MailOutcome::EmptyQueue });
        }
        return Ok(outcomes);
    }

    // Sending: one mail after another. Past the deadline, or once the relay is unreachable,
    // the rest goes back to the queue unsent.
    let deadline = Instant::now() + lease_for.saturating_sub(mailer.transport.send_bound());
    let mut settlements = Vec::with_capacity(claim.ready.len());
    // Settled after every mail's own, so the settlements' answers line up with the mails.
    let mut companion_settlements = Vec::new();
    let mut targets = Vec::with_capacity(claim.ready.len());
    // Set by the first failure that holds the queue: the rest of the batch goes back unsent.
    let mut held: Option<(SendError, UnixSeconds)> = None;
    let mut episode_began: Option<SendError> = None;
    let mut relay_took_mail = false;
    for (ready, outgoing) in prepare_all(mailer, claim.ready, now).await? {
        let undo = match &ready.kind {
            ReadyKind::Confirm { token, .. } => Some(Undo {
                stamped_at: now,
                stamped_hash: token.hash(),
                previous: ready.target.previous_link.clone(),
                address_hash: ready.address_hash.clone(),
            }),
            ReadyKind::Welcome => None,
        };
        let kind = if undo.is_some() { "confirmation" } else { "welcome" };
        let result = match (&held, Instant::now() > deadline) {
            (Some((error, _)), _) => Err(error.clone()),
            (None, true) => Err(SendError::temporary("not attempted in time".into())),
            (None, false) => {
                let started = Instant::now();
                let sent = match outgoing {
                    Ok(outgoing) => mailer.transport.deliver(outgoing).await,
                    Err(error) => Err(error),
                };
                crate::metrics::smtp_send(started.elapsed());
                sent
            }
        };
        let (settlement, outcome, code) = match result {
            Ok(delivered) => {
                log_delivered(&delivered, kind, &ready.target);
                relay_took_mail |= matches!(delivered, Delivered::Smtp { .. });
                (Settlement::Sent { item_id: ready.item.id }, MailOutcome::Sent, (None, None))
            }
            Err(error) if error.holds_the_queue() => {
                let until = match &held {
                    Some((_, until)) => *until,
                    None => {
                        let refusal =
                            mailer.transport.hold().refused(mailer.clock.now(), mailer.config.mail.retry_base);
                        if refusal.began {
                            episode_began = Some(error.clone());
                        }
                        held = Some((error.clone(), refusal.until));
                        refusal.until
                    }
                };
                let settlement = Settlement::Retry {
                    item_id: ready.item.id,
                    subscriber_id: ready.target.id.clone(),
                    next_attempt_at: until,
                    last_error: error.detail.clone(),
                    undo,
                    reserved_at: Some(ready.reserved_at),
                };
                (settlement, MailOutcome::Retrying { detail: error.detail }, (None, None))
            }
            Err(error) => {
                let code = error.code;
                let refused = error.refused_address();
                let (settlement, outcome) =
                    failed(mailer, &ready.item, &ready.target, error, now, undo, Some(ready.reserved_at));
                (settlement, outcome, (code, refused))
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
        settlements.push(settlement);
        outcomes.push(outcome);
        targets.push((ready.target, code));
    }

    settlements.extend(companion_settlements);
    let settle = SettleMail { settlements, pace: pace(&mailer.config), now: mailer.clock.now() };
    let deleted_rows = mailer.writer.execute(settle).await?;
    if relay_took_mail && mailer.transport.hold().accepted() {
        tracing::info!("the relay accepts mail again; sending what waited");
    }
    if let Some(error) = &episode_began {
        alert::relay_refused(&mailer.config, &mailer.http_client, error).await;
    }
    let quiet = held.is_some();
    let unsent = claim.skipped + claim.capped;
    for ((outcome, (target, (code, refused))), deleted_row) in
        outcomes.iter().skip(unsent).zip(&targets).zip(deleted_rows)
    {
        // Mails that wait for a refusing relay are told of once, in its alert.
        if !(quiet && matches!(outcome, MailOutcome::Retrying { .. }) && code.is_none()) {
            report(mailer, outcome, target, *code, deleted_row).await;
        }
        if let (Some(status), Some(hook)) = (refused, &mailer.on_refused_address) {
            let refused =
                RefusedAddress { list_id: target.list_id.clone(), email: target.email.clone(), status: status.clone() };
            hook(refused).await;
        }
    }
    Ok(outcomes)
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
    let domain = target.email.rsplit_once('@').map(|(_, domain)| domain.to_owned()).unwrap_or_default();
    match outcome {
        MailOutcome::Retrying { detail } => {
            tracing::warn!(list = %target.list_id, recipient_domain = %domain, detail = %detail, "mail not sent; will retry");
        }
        MailOutcome::GaveUp { detail } if deleted_row => {
            let alert = Alert {
                event: "confirmation_undeliverable",
                list: target.list_id.clone(),
                smtp_code,
                recipient_domain: domain,
                detail: detail.clone(),
            };
            alert::send(&mailer.config, &mailer.http_client, &alert).await;
        }
        MailOutcome::GaveUp { detail } => {
            tracing::error!(list = %target.list_id, recipient_domain = %domain, detail = %detail, "mail could not be delivered; giving up");
        }
        _ => {}
    }
}
