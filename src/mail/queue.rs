//! The mail queue's two writes, as commands of the writer: [`ClaimMail`] takes a batch of due
//! items for one worker (reserving the hourly budget and stamping confirm tokens), and
//! [`SettleMail`] records how each send ended. Between the two, the worker sends without
//! holding anything but its leases.

use std::sync::Arc;

use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::config::Config;
use crate::storage::Command;
use crate::storage::outbox::{self, Claimed, MailKind};
use crate::storage::subscribers::{self, MailTarget, PreviousLink, Status};
use crate::tokens::ConfirmToken;

/// Claims up to `tokens.len()` due items, within what is left of this hour's budget.
///
/// For each: a confirmation whose row is still pending and not mailed within the cooldown gets
/// a new token stamped (compare-and-set on the send time it read, so a resend race can never
/// send twice within the cooldown); a welcome needs a confirmed row; anything else is deleted
/// unsent. Every mail to send reserves one unit of the budget in the same commit.
pub struct ClaimMail {
    pub config: Arc<Config>,
    pub now: UnixSeconds,
    pub lease_until: UnixSeconds,
    /// One fresh token per item that may be claimed; those not stamped are dropped unseen.
    pub tokens: Vec<ConfirmToken>,
}

impl std::fmt::Debug for ClaimMail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimMail").field("limit", &self.tokens.len()).finish_non_exhaustive()
    }
}

/// A claimed mail, ready to build and send. No `Debug`: its target holds the address.
#[allow(missing_debug_implementations)]
pub struct Ready {
    pub item: Claimed,
    pub target: MailTarget,
    /// The hour whose budget it reserved.
    pub reserved_at: UnixSeconds,
    pub kind: ReadyKind,
}

#[derive(Debug)]
pub enum ReadyKind {
    Confirm { token: ConfirmToken, expires_at: UnixSeconds },
    Welcome,
}

/// What a claim found.
#[derive(Default)]
pub struct Claim {
    pub ready: Vec<Ready>,
    /// Items that were due but needed no mail; deleted.
    pub skipped: usize,
    /// Items are due, but the budget allowed none of them.
    pub budget_exhausted: bool,
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim").field("ready", &self.ready.len()).field("skipped", &self.skipped).finish()
    }
}

impl Command for ClaimMail {
    type Output = Claim;

    fn execute(self, conn: &Connection) -> anyhow::Result<Claim> {
        let budget = i64::from(self.config.mail.max_mails_per_hour);
        let room = usize::try_from(budget - outbox::reserved_this_hour(conn, self.now)?).unwrap_or(0);
        let mut claim = Claim::default();
        if room == 0 {
            claim.budget_exhausted = outbox::any_due(conn, self.now)?;
            return Ok(claim);
        }
        let cooldown = secs(self.config.signup.resend_cooldown);
        let ttl = secs(self.config.signup.confirm_ttl);
        let limit = self.tokens.len();
        let mut tokens = self.tokens.into_iter();
        for _ in 0..limit {
            if claim.ready.len() == room {
                break;
            }
            let Some(item) = outbox::claim_due(conn, self.now, self.lease_until)? else {
                break;
            };
            let target = subscribers::mail_target(conn, &item.subscriber_id)?
                .filter(|target| self.config.list(&target.list_id).is_some());
            let kind = match (item.kind, &target) {
                (MailKind::Confirm, Some(target)) if target.status == Status::Pending => {
                    let recently_mailed =
                        target.confirmation_sent_at.is_some_and(|sent| self.now.saturating_sub(sent) < cooldown);
                    let expires_at = self.now.saturating_add(ttl);
                    match tokens.next() {
                        Some(token)
                            if !recently_mailed
                                && subscribers::stamp_confirmation(
                                    conn,
                                    &target.id,
                                    target.confirmation_sent_at,
                                    &token.hash(),
                                    self.now,
                                    expires_at,
                                )? =>
                        {
                            Some(ReadyKind::Confirm { token, expires_at })
                        }
                        _ => None,
                    }
                }
                (MailKind::Welcome, Some(target)) if target.status == Status::Confirmed => Some(ReadyKind::Welcome),
                _ => None,
            };
            match (kind, target) {
                (Some(kind), Some(target)) => claim.ready.push(Ready { item, target, reserved_at: self.now, kind }),
                _ => {
                    outbox::delete(conn, item.id)?;
                    claim.skipped += 1;
                }
            }
        }
        outbox::reserve(conn, self.now, claim.ready.len())?;
        Ok(claim)
    }
}

/// How one claimed mail ended.
#[derive(Debug)]
pub enum Settlement {
    /// Sent: the item goes; its reservation stays spent.
    Sent { item_id: i64 },
    /// Not sent, to be tried again at `next_attempt_at`.
    Retry {
        item_id: i64,
        subscriber_id: String,
        next_attempt_at: UnixSeconds,
        last_error: String,
        undo: Option<Undo>,
        reserved_at: UnixSeconds,
    },
    /// Not sent, for good: the item goes, and a pending row that never got a confirmation with
    /// it (nothing is kept for an address that never got a link).
    GiveUp { item_id: i64, subscriber_id: String, undo: Option<Undo>, reserved_at: UnixSeconds },
}

/// A confirmation's stamp, to take back when its mail was not sent: the link already mailed
/// keeps working (a token stops working only when a new one was actually sent).
#[derive(Debug, Clone)]
pub struct Undo {
    pub stamped_at: UnixSeconds,
    pub stamped_hash: String,
    pub previous: PreviousLink,
}

/// Records a worker's settlements in one commit. Returns, in order, whether each settlement
/// deleted a never-mailed row (so the operator is alerted).
#[derive(Debug)]
pub struct SettleMail(pub Vec<Settlement>);

impl Command for SettleMail {
    type Output = Vec<bool>;

    fn execute(self, conn: &Connection) -> anyhow::Result<Vec<bool>> {
        let mut deleted_rows = Vec::with_capacity(self.0.len());
        for settlement in &self.0 {
            let deleted = match settlement {
                Settlement::Sent { item_id } => {
                    outbox::delete(conn, *item_id)?;
                    false
                }
                Settlement::Retry { item_id, subscriber_id, next_attempt_at, last_error, undo, reserved_at } => {
                    unstamp(conn, subscriber_id, undo.as_ref())?;
                    outbox::refund(conn, *reserved_at)?;
                    outbox::retry_at(conn, *item_id, *next_attempt_at, last_error)?;
                    false
                }
                Settlement::GiveUp { item_id, subscriber_id, undo, reserved_at } => {
                    unstamp(conn, subscriber_id, undo.as_ref())?;
                    outbox::refund(conn, *reserved_at)?;
                    outbox::delete(conn, *item_id)?;
                    undo.is_some() && subscribers::delete_never_mailed(conn, subscriber_id)?
                }
            };
            deleted_rows.push(deleted);
        }
        Ok(deleted_rows)
    }
}

fn unstamp(conn: &Connection, subscriber_id: &str, undo: Option<&Undo>) -> rusqlite::Result<()> {
    match undo {
        Some(undo) => {
            subscribers::unstamp_confirmation(conn, subscriber_id, undo.stamped_at, &undo.stamped_hash, &undo.previous)
        }
        None => Ok(()),
    }
}

pub fn secs(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
}
