//! The mail worker: turns `outbox` items into sent mail (SPEC §5), after the request that caused
//! them was answered.
//!
//! Per item, two transactions around the send: the first claims the item with a lease, reads its
//! row and, for a confirmation, stamps the new token's hash and send time (compare-and-set on the
//! send time it read, so two workers or a resend race can never send twice within the cooldown);
//! the second deletes the item and counts the budget. Several workers run side by side
//! ([`WORKERS`]): the lease keeps them off each other's items, and the SMTP pool gives each its
//! connection. Outcomes:
//!
//! - sent → item deleted; the budget counts it.
//! - temporary failure (4xx, connection, timeout) → the stamp is undone, the item retries after
//!   `retry_base` × 2^(attempt−1) with ±20 % jitter, capped at 1 h, until the confirm window
//!   (`confirm_ttl` from when the item was queued) ends.
//! - permanent failure (5xx), or the window ended → item dropped; a pending row that never got a
//!   confirmation is deleted (nothing is kept for an address that never got a link) and the
//!   operator is alerted.
//!
//! `max_mails_per_hour` caps sending: over the budget, items wait in the queue. A crash between
//! send and delete sends the mail again after the lease ends (at least once), never zero times.

use std::time::Duration;

use ring::rand::{SecureRandom, SystemRandom};
use rusqlite::Connection;

use super::alert::{self, Alert};
use super::message;
use super::transport::{Delivered, SendError};
use crate::app::AppState;
use crate::clock::UnixSeconds;
use crate::config::Config;
use crate::storage::outbox::{self, Claimed, MailKind};
use crate::storage::subscribers::{self, MailTarget, Status};
use crate::tokens::{ConfirmToken, RemovalToken};

/// Mail workers run side by side by `serve`; each sends one mail at a time. Sending is mostly
/// waiting on the relay (round trips, and lettre's sockets keep Nagle's algorithm on, which
/// stalls each mail ~40 ms against a delayed-ACK peer), so throughput scales with workers until
/// SQLite's commits are the limit. The SMTP pool has as many connections.
pub const WORKERS: usize = 16;
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(3600);
/// How often an idle worker looks for due retries.
const IDLE_POLL: Duration = Duration::from_secs(5);

/// What one call of [`try_execute_task`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailOutcome {
    /// A mail was sent (or written to a file).
    Sent,
    /// The item was due but needed no mail (row gone, confirmed, or mailed within the cooldown).
    Skipped,
    /// Sending failed temporarily; the item will be retried.
    Retrying { detail: String },
    /// Sending failed for good; the item was dropped and the operator alerted.
    GaveUp { detail: String },
    /// No item is due.
    EmptyQueue,
    /// Items are due, but the hourly budget is spent.
    BudgetExhausted,
}

/// A claimed item, ready to send.
enum Prepared {
    Empty,
    Budget,
    /// Nothing to send; the item was deleted in the same transaction.
    Skipped,
    Confirm {
        item: Claimed,
        target: MailTarget,
        token: ConfirmToken,
        expires_at: UnixSeconds,
    },
    Welcome {
        item: Claimed,
        target: MailTarget,
    },
}

/// Sends the next due mail, if any. Tests call this directly, with the background workers off.
pub async fn try_execute_task(state: &AppState) -> anyhow::Result<MailOutcome> {
    let now = state.clock.now();
    let lease = now + lease_secs(state);
    // Minted before the transaction, used only if the item is a confirmation that wins its
    // compare-and-set; otherwise it is dropped unseen.
    let token = ConfirmToken::mint()?;
    let config = state.config.clone();
    let prepared = state.db.run(move |conn| prepare(conn, &config, now, lease, token)).await?;
    match prepared {
        Prepared::Empty => Ok(MailOutcome::EmptyQueue),
        Prepared::Budget => Ok(MailOutcome::BudgetExhausted),
        Prepared::Skipped => Ok(MailOutcome::Skipped),
        Prepared::Confirm { item, target, token, expires_at } => {
            let message = confirmation_mail(state, &target, &token, expires_at)?;
            deliver(state, item, target, message, Some((now, token.hash())), now).await
        }
        Prepared::Welcome { item, target } => {
            let message = welcome_mail(state, &target, now)?;
            deliver(state, item, target, message, None, now).await
        }
    }
}

/// One transaction: budget check, claim, read the row, and for a confirmation the stamp.
fn prepare(
    conn: &mut Connection,
    config: &Config,
    now: UnixSeconds,
    lease: UnixSeconds,
    token: ConfirmToken,
) -> anyhow::Result<Prepared> {
    let tx = crate::storage::immediate(conn)?;
    if outbox::sent_this_hour(&tx, now)? >= i64::from(config.mail.max_mails_per_hour) {
        return Ok(if outbox::any_due(&tx, now)? { Prepared::Budget } else { Prepared::Empty });
    }
    let Some(item) = outbox::claim_due(&tx, now, lease)? else {
        return Ok(Prepared::Empty);
    };
    let target =
        subscribers::mail_target(&tx, &item.subscriber_id)?.filter(|target| config.list(&target.list_id).is_some());
    let prepared = match (item.kind, target) {
        (MailKind::Confirm, Some(target)) if target.status == Status::Pending => {
            let cooldown = secs(config.signup.resend_cooldown);
            let recently_mailed = target.confirmation_sent_at.is_some_and(|sent| now.saturating_sub(sent) < cooldown);
            let expires_at = now.saturating_add(secs(config.signup.confirm_ttl));
            if !recently_mailed
                && subscribers::stamp_confirmation(
                    &tx,
                    &target.id,
                    target.confirmation_sent_at,
                    &token.hash(),
                    now,
                    expires_at,
                )?
            {
                Prepared::Confirm { item, target, token, expires_at }
            } else {
                outbox::delete(&tx, item.id)?;
                Prepared::Skipped
            }
        }
        (MailKind::Welcome, Some(target)) if target.status == Status::Confirmed => Prepared::Welcome { item, target },
        _ => {
            outbox::delete(&tx, item.id)?;
            Prepared::Skipped
        }
    };
    tx.commit()?;
    Ok(prepared)
}

fn secs(duration: Duration) -> i64 {
    i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
}

/// Runs until `shutdown`; the mail in flight is finished first.
pub async fn run_worker(state: AppState, shutdown: impl std::future::Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        let idle = match try_execute_task(&state).await {
            Ok(MailOutcome::EmptyQueue | MailOutcome::BudgetExhausted) => true,
            Ok(_) => false,
            Err(error) => {
                tracing::error!(error = format!("{error:#}"), "mail worker: cannot read the queue; retrying");
                true
            }
        };
        if idle {
            tokio::select! {
                () = state.mail_wakeup.notified() => {}
                () = tokio::time::sleep(IDLE_POLL) => {}
                () = &mut shutdown => return,
            }
        } else if futures_util::poll!(&mut shutdown).is_ready() {
            return;
        }
    }
}

fn lease_secs(state: &AppState) -> i64 {
    // Longer than one whole SMTP conversation (capped at 3 × timeout by the transport).
    secs(state.config.mail.smtp.timeout).saturating_mul(4) + 60
}

/// After a successful send: the item goes and the budget counts it, in one transaction.
async fn finish_sent(state: &AppState, item_id: i64, now: UnixSeconds) -> anyhow::Result<()> {
    state
        .db
        .run(move |conn| {
            let tx = crate::storage::immediate(conn)?;
            outbox::count_sent(&tx, now)?;
            outbox::delete(&tx, item_id)?;
            tx.commit()?;
            Ok::<_, anyhow::Error>(())
        })
        .await
}

/// The mail for a prepared confirmation: a new confirm link and the manage link.
fn confirmation_mail(
    state: &AppState,
    target: &MailTarget,
    token: &ConfirmToken,
    expires_at: UnixSeconds,
) -> anyhow::Result<lettre::Message> {
    let list = configured_list(state, target)?;
    let removal = RemovalToken::derive(&state.secrets.hash_key, &target.id);
    message::confirmation(&state.config, list, &target.email, token.expose(), removal.expose(), expires_at)
}

/// The mail for a prepared welcome: the manage link and a signed one-click unsubscribe link.
fn welcome_mail(state: &AppState, target: &MailTarget, now: UnixSeconds) -> anyhow::Result<lettre::Message> {
    let list = configured_list(state, target)?;
    let removal = RemovalToken::derive(&state.secrets.hash_key, &target.id);
    let unsubscribe = state.keyring.sign_unsubscribe(&target.list_id, &target.id, now);
    message::welcome(&state.config, list, &target.email, removal.expose(), &unsubscribe)
}

fn configured_list<'a>(state: &'a AppState, target: &MailTarget) -> anyhow::Result<&'a crate::config::ListConfig> {
    state
        .config
        .list(&target.list_id)
        .ok_or_else(|| anyhow::anyhow!("list {} vanished from the configuration", target.list_id))
}

/// Sends a prepared mail and settles its item. `undo` is the confirmation stamp (time, hash)
/// to take back if the send fails.
async fn deliver(
    state: &AppState,
    item: Claimed,
    target: MailTarget,
    message: lettre::Message,
    undo: Option<(UnixSeconds, String)>,
    now: UnixSeconds,
) -> anyhow::Result<MailOutcome> {
    let kind = if undo.is_some() { "confirmation" } else { "welcome" };
    match state.transport.send(message).await {
        Ok(delivered) => {
            log_delivered(&delivered, kind, &target);
            finish_sent(state, item.id, now).await?;
            Ok(MailOutcome::Sent)
        }
        Err(error) => {
            let window_ends = item.created_at.saturating_add(secs(state.config.signup.confirm_ttl));
            handle_failure(state, &item, &target, error, now, window_ends, undo).await
        }
    }
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

/// After a failed send, in one transaction: undo the confirmation stamp (`undo`: the stamp's
/// time and hash), then either schedule a retry or drop the item — and, for a confirmation that
/// never reached anyone, the row. Alerts go out after the commit.
async fn handle_failure(
    state: &AppState,
    item: &Claimed,
    target: &MailTarget,
    error: SendError,
    now: UnixSeconds,
    window_ends: UnixSeconds,
    undo: Option<(UnixSeconds, String)>,
) -> anyhow::Result<MailOutcome> {
    let next = now.saturating_add(backoff_secs(state, item.attempts));
    let retry = !error.permanent && next < window_ends;
    let is_confirmation = undo.is_some();
    let (item_id, subscriber_id, previous, detail) =
        (item.id, target.id.clone(), target.previous_link.clone(), error.detail.clone());
    let deleted_row = state
        .db
        .run(move |conn| {
            let tx = crate::storage::immediate(conn)?;
            if let Some((stamped_at, stamped_hash)) = &undo {
                subscribers::unstamp_confirmation(&tx, &subscriber_id, *stamped_at, stamped_hash, &previous)?;
            }
            let deleted = if retry {
                outbox::retry_at(&tx, item_id, next, &detail)?;
                false
            } else {
                outbox::delete(&tx, item_id)?;
                is_confirmation && subscribers::delete_never_mailed(&tx, &subscriber_id)?
            };
            tx.commit()?;
            Ok::<_, anyhow::Error>(deleted)
        })
        .await?;

    if retry {
        tracing::warn!(
            list = %target.list_id,
            attempt = item.attempts,
            retry_in_secs = next - now,
            detail = %error.detail,
            "mail not sent; will retry"
        );
        return Ok(MailOutcome::Retrying { detail: error.detail });
    }
    let domain = target.email.rsplit_once('@').map(|(_, domain)| domain.to_owned()).unwrap_or_default();
    if deleted_row {
        let alert = Alert {
            event: "confirmation_undeliverable",
            list: target.list_id.clone(),
            smtp_code: error.code,
            recipient_domain: domain,
            detail: error.detail.clone(),
        };
        alert::send(&state.config, &state.http_client, &alert).await;
    } else {
        tracing::error!(list = %target.list_id, recipient_domain = %domain, detail = %error.detail, "mail could not be delivered; giving up");
    }
    Ok(MailOutcome::GaveUp { detail: error.detail })
}

/// `retry_base` × 2^(attempt−1), capped at an hour, ±20 % jitter so a relay coming back is not
/// hit by every retry at once.
fn backoff_secs(state: &AppState, attempt: i64) -> i64 {
    let base = state.config.mail.retry_base.as_secs_f64();
    let exponent = i32::try_from(attempt.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
    let plain = (base * 2f64.powi(exponent)).min(MAX_BACKOFF.as_secs_f64());
    let mut byte = [0u8; 1];
    let jitter = if SystemRandom::new().fill(&mut byte).is_ok() { f64::from(byte[0]) / 255.0 * 0.4 - 0.2 } else { 0.0 };
    (plain * (1.0 + jitter)).round().max(1.0) as i64
}
