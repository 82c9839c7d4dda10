//! The mail worker: turns `outbox` items into sent mail (SPEC §5), after the request that caused
//! them was answered.
//!
//! One item at a time: claim it with a lease, mint the tokens, stamp the row (compare-and-set on
//! the send time it read, so two workers or a resend race can never send twice within the
//! cooldown), send, then delete the item. Outcomes:
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

use super::alert::{self, Alert};
use super::message;
use super::transport::{Delivered, SendError};
use crate::app::AppState;
use crate::clock::UnixSeconds;
use crate::storage::outbox::{self, Claimed, MailKind};
use crate::storage::subscribers::{self, MailTarget, Status};
use crate::tokens::{ConfirmToken, RemovalToken};

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

/// Sends the next due mail, if any. Tests call this directly, with the background worker off.
pub async fn try_execute_task(state: &AppState) -> anyhow::Result<MailOutcome> {
    let now = state.clock.now();
    let max = i64::from(state.config.mail.max_mails_per_hour);
    let lease = now + lease_secs(state);
    let claimed = state
        .db
        .run(move |conn| -> anyhow::Result<Option<Claimed>> {
            if outbox::sent_this_hour(conn, now)? >= max {
                let due: bool = conn.query_row(
                    "SELECT EXISTS (SELECT 1 FROM outbox WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1))",
                    [now],
                    |row| row.get(0),
                )?;
                return if due { Err(BudgetSpent.into()) } else { Ok(None) };
            }
            Ok(outbox::claim_due(conn, now, lease)?)
        })
        .await;
    let claimed = match claimed {
        Ok(Some(claimed)) => claimed,
        Ok(None) => return Ok(MailOutcome::EmptyQueue),
        Err(error) if error.is::<BudgetSpent>() => return Ok(MailOutcome::BudgetExhausted),
        Err(error) => return Err(error),
    };
    match claimed.kind {
        MailKind::Confirm => send_confirmation(state, claimed, now).await,
        MailKind::Welcome => send_welcome(state, claimed, now).await,
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the hourly mail budget is spent")]
struct BudgetSpent;

/// Runs until `shutdown`; the mail in flight is finished first.
pub async fn run_worker(state: AppState, shutdown: impl std::future::Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        let idle = match try_execute_task(&state).await {
            Ok(MailOutcome::EmptyQueue | MailOutcome::BudgetExhausted) => true,
            Ok(_) => false,
            Err(error) => {
                tracing::error!(
                    error = format!("{error:#}"),
                    "mail worker: cannot read the queue; retrying"
                );
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
    // Long enough for one SMTP conversation, with room for a slow server.
    i64::try_from(state.config.mail.smtp.timeout.as_secs())
        .unwrap_or(60)
        .saturating_mul(4)
        + 60
}

async fn load(state: &AppState, subscriber_id: &str) -> anyhow::Result<Option<MailTarget>> {
    let id = subscriber_id.to_owned();
    state
        .db
        .run(move |conn| Ok::<_, anyhow::Error>(subscribers::mail_target(conn, &id)?))
        .await
}

async fn finish(state: &AppState, item_id: i64) -> anyhow::Result<()> {
    state
        .db
        .run(move |conn| Ok::<_, anyhow::Error>(outbox::delete(conn, item_id)?))
        .await
}

async fn send_confirmation(state: &AppState, item: Claimed, now: UnixSeconds) -> anyhow::Result<MailOutcome> {
    let config = state.config.clone();
    let Some(target) = load(state, &item.subscriber_id).await? else {
        finish(state, item.id).await?;
        return Ok(MailOutcome::Skipped);
    };
    let cooldown = i64::try_from(config.signup.resend_cooldown.as_secs()).unwrap_or(i64::MAX);
    let recently_mailed = target
        .confirmation_sent_at
        .is_some_and(|sent| now.saturating_sub(sent) < cooldown);
    let Some(list) = config
        .list(&target.list_id)
        .filter(|_| target.status == Status::Pending && !recently_mailed)
    else {
        finish(state, item.id).await?;
        return Ok(MailOutcome::Skipped);
    };

    let token = ConfirmToken::mint()?;
    let ttl = i64::try_from(config.signup.confirm_ttl.as_secs()).unwrap_or(i64::MAX);
    let expires_at = now.saturating_add(ttl);
    let (id, previous, hash) = (target.id.clone(), target.confirmation_sent_at, token.hash());
    let won = state
        .db
        .run(move |conn| {
            Ok::<_, anyhow::Error>(subscribers::stamp_confirmation(
                conn, &id, previous, &hash, now, expires_at,
            )?)
        })
        .await?;
    if !won {
        finish(state, item.id).await?;
        return Ok(MailOutcome::Skipped);
    }

    let removal = RemovalToken::derive(&state.secrets.hash_key, &target.id);
    let message = message::confirmation(
        &config,
        list,
        &target.email,
        token.expose(),
        removal.expose(),
        expires_at,
    )?;
    match state.transport.send(message).await {
        Ok(delivered) => {
            log_delivered(&delivered, "confirmation", &target);
            state
                .db
                .run(move |conn| {
                    outbox::count_sent(conn, now)?;
                    Ok::<_, anyhow::Error>(outbox::delete(conn, item.id)?)
                })
                .await?;
            Ok(MailOutcome::Sent)
        }
        Err(error) => {
            let (id, hash, previous_link) = (target.id.clone(), token.hash(), target.previous_link.clone());
            state
                .db
                .run(move |conn| {
                    Ok::<_, anyhow::Error>(subscribers::unstamp_confirmation(
                        conn,
                        &id,
                        now,
                        &hash,
                        &previous_link,
                    )?)
                })
                .await?;
            let window_ends = item.created_at.saturating_add(ttl);
            handle_failure(state, &item, &target, error, now, window_ends, true).await
        }
    }
}

async fn send_welcome(state: &AppState, item: Claimed, now: UnixSeconds) -> anyhow::Result<MailOutcome> {
    let config = state.config.clone();
    let target = load(state, &item.subscriber_id).await?;
    let Some((target, list)) = target
        .filter(|target| target.status == Status::Confirmed)
        .and_then(|target| config.list(&target.list_id).map(|list| (target, list)))
    else {
        finish(state, item.id).await?;
        return Ok(MailOutcome::Skipped);
    };
    let removal = RemovalToken::derive(&state.secrets.hash_key, &target.id);
    let unsubscribe = state.keyring.sign_unsubscribe(&target.list_id, &target.id, now);
    let message = message::welcome(&config, list, &target.email, removal.expose(), &unsubscribe)?;
    match state.transport.send(message).await {
        Ok(delivered) => {
            log_delivered(&delivered, "welcome", &target);
            state
                .db
                .run(move |conn| {
                    outbox::count_sent(conn, now)?;
                    Ok::<_, anyhow::Error>(outbox::delete(conn, item.id)?)
                })
                .await?;
            Ok(MailOutcome::Sent)
        }
        Err(error) => {
            let ttl = i64::try_from(config.signup.confirm_ttl.as_secs()).unwrap_or(i64::MAX);
            let window_ends = item.created_at.saturating_add(ttl);
            handle_failure(state, &item, &target, error, now, window_ends, false).await
        }
    }
}

fn log_delivered(delivered: &Delivered, kind: &str, target: &MailTarget) {
    let masked = crate::domain::EmailAddress::parse(&target.email)
        .map(|e| e.masked())
        .unwrap_or_default();
    match delivered {
        Delivered::Smtp { code } => {
            tracing::info!(kind, to = %masked, list = %target.list_id, smtp_code = code, "mail sent")
        }
        Delivered::File { path } => {
            tracing::info!(kind, to = %masked, list = %target.list_id, file = %path.display(), "mail written to file")
        }
    }
}

async fn handle_failure(
    state: &AppState,
    item: &Claimed,
    target: &MailTarget,
    error: SendError,
    now: UnixSeconds,
    window_ends: UnixSeconds,
    is_confirmation: bool,
) -> anyhow::Result<MailOutcome> {
    let next = now.saturating_add(backoff_secs(state, item.attempts));
    if !error.permanent && next < window_ends {
        let (id, detail) = (item.id, error.detail.clone());
        state
            .db
            .run(move |conn| Ok::<_, anyhow::Error>(outbox::retry_at(conn, id, next, &detail)?))
            .await?;
        tracing::warn!(list = %target.list_id, attempt = item.attempts, retry_in_secs = next - now, detail = %error.detail, "mail not sent; will retry");
        return Ok(MailOutcome::Retrying { detail: error.detail });
    }

    let (item_id, subscriber_id) = (item.id, target.id.clone());
    let deleted_row = state
        .db
        .run(move |conn| {
            let tx = crate::storage::immediate(conn)?;
            tx.execute("DELETE FROM outbox WHERE id = ?1", [item_id])?;
            let deleted = is_confirmation && subscribers::delete_never_mailed(&tx, &subscriber_id)?;
            tx.commit()?;
            Ok::<_, anyhow::Error>(deleted)
        })
        .await?;
    let domain = target
        .email
        .rsplit_once('@')
        .map(|(_, domain)| domain.to_owned())
        .unwrap_or_default();
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
    let jitter = if SystemRandom::new().fill(&mut byte).is_ok() {
        f64::from(byte[0]) / 255.0 * 0.4 - 0.2
    } else {
        0.0
    };
    (plain * (1.0 + jitter)).round().max(1.0) as i64
}
