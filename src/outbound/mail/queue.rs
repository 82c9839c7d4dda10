//! The mail queue's two writes, as commands of the writer: [`ClaimMail`] takes a batch of due
//! items for one worker (reserving the hourly budget and the per-address cap, stamping confirm
//! tokens, counting each neighbourhood's mails), and [`SettleMail`] records how each send
//! ended. Between the two, the worker sends without holding anything but its leases.
//!
//! **Several lists, one mail.** A confirmation for a list whose sender (`from`), in the
//! visitor's language (each row's), also sends other lists takes along the confirmations queued for the same address on those
//! lists (the `companions` of a claim): they share its token (their rows get the same confirm hash) and its
//! lease, are named in the one mail, and are settled as it is — sent, retried or given up
//! together. The mail counts once against the budget, the address's cap and its network's
//! share. A list with no sibling costs nothing more.
//!
//! Two bounds against subscription bombing live here (`docs/operations.md`, "Under attack"):
//!
//! - **Per victim.** A confirmation to an address that already had
//!   `signup.max_mails_per_address_per_day` confirmations in the last 24 hours (any list) is
//!   not sent: the item is dropped, and a row that never got a mail goes with it (nothing is
//!   kept for an address that never got a link). The signup's answer was the usual one.
//! - **A paced, fair budget.** Every claim takes its mails from the paced bucket
//!   ([`mail_bucket`]) in the commit that leases them, so at most `mail.burst` leave at once and
//!   then `max_mails_per_hour` evenly, however many workers race. When more mail is due than the
//!   bucket has room for, the worker reads the order that prefers people
//!   ([`outbox::fair_order`]: pressed and welcome mail, then networks where someone confirmed,
//!   then the rest; within each the network with the fewest mails in the last 60 minutes)
//!   beforehand and the claim takes those items. When everything due fits, the order is the
//!   queue's (oldest first), and telling so costs two steps of the primary key while the room
//!   exceeds the whole queue. Mail held for a press in surge mode is never claimed.

use std::sync::Arc;

use ring::hmac;
use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::config::Config;
use crate::config::tokens::ConfirmToken;
use crate::storage::mail_bucket::{self, Pace};
use crate::storage::outbox::{self, Claimed, MailKind};
use crate::storage::subscribers::{self, MailTarget, PreviousLink, Status};
use crate::storage::{Batch, Command, address_mails, networks};

/// Claims up to `tokens.len()` due items, within what the paced budget has room for now.
///
/// For each: a confirmation whose row is still pending and not mailed within the cooldown gets
/// a new token stamped (compare-and-set on the send time it read, so a resend race can never
/// send twice within the cooldown); a welcome needs a confirmed row; anything else is deleted
/// unsent. Every mail to send takes one mail from the bucket in the same commit.
pub struct ClaimMail {
    pub config: Arc<Config>,
    pub now: UnixSeconds,
    pub lease_until: UnixSeconds,
    /// One fresh token per item that may be claimed; those not stamped are dropped unseen.
    pub tokens: Vec<ConfirmToken>,
    /// Keys the per-address hashes of the mail cap (the hash key).
    pub address_key: hmac::Key,
    /// The items to claim, in the fair budget's order; `None`: the oldest due first.
    pub fair_order: Option<Vec<i64>>,
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
    /// Confirmations of the same address on other lists of the sender, confirmed by the same
    /// mail (its token is stamped on their rows too).
    pub companions: Vec<Companion>,
    /// When it was taken from the budget (and counted in that hour's tally).
    pub reserved_at: UnixSeconds,
    pub kind: ReadyKind,
    /// The per-address hash under which a confirmation was counted against the cap.
    pub address_hash: Option<String>,
}

/// A confirmation that goes out in another list's mail. No `Debug`: its target holds the address.
#[allow(missing_debug_implementations)]
pub struct Companion {
    pub item: Claimed,
    pub target: MailTarget,
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
    /// Confirmations not sent because their address had its day's mails; deleted.
    pub capped: usize,
    /// Items are due, but the budget allowed none of them.
    pub budget_exhausted: bool,
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim")
            .field("ready", &self.ready.len())
            .field("skipped", &self.skipped)
            .field("capped", &self.capped)
            .finish()
    }
}

impl Command for ClaimMail {
    type Output = Claim;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Claim> {
        let conn = batch.conn();
        let pace = pace(&self.config);
        let room = mail_bucket::room(conn, pace, self.now)?;
        let mut claim = Claim::default();
        if room == 0 {
            claim.budget_exhausted = outbox::any_due(conn, self.now)?;
            return Ok(claim);
        }
        let cooldown = secs(self.config.signup.resend_cooldown);
        let ttl = secs(self.config.signup.confirm_ttl);
        let cap = self.config.signup.max_mails_per_address_per_day.map(i64::from);
        let lease_until = self.lease_until;
        let limit = self.tokens.len();
        let mut tokens = self.tokens.into_iter();
        let order = match self.fair_order {
            Some(fair_order) => fair_order,
            None => outbox::oldest_due(conn, self.now, limit)?,
        };
        let mut order = order.into_iter();
        for _ in 0..limit {
            if claim.ready.len() == room {
                break;
            }
            let Some(item) = claim_next(conn, &mut order, self.now, self.lease_until)? else {
                break;
            };
            let target = subscribers::mail_target(conn, &item.subscriber_id)?
                .filter(|target| self.config.list(&target.list_id).is_some());
            let mut address_hash = None;
            let mut companions = Vec::new();
            let kind = match (item.kind, &target) {
                (MailKind::Confirm, Some(target)) if target.status == Status::Pending => {
                    let recently_mailed =
                        target.confirmation_sent_at.is_some_and(|sent| self.now.saturating_sub(sent) < cooldown);
                    if recently_mailed {
                        None
                    } else {
                        let hash = cap.map(|_| address_mails::hash(&self.address_key, &target.email));
                        let over_cap = match (&hash, cap) {
                            (Some(hash), Some(cap)) => address_mails::in_last_day(conn, hash, self.now)? >= cap,
                            _ => false,
                        };
                        if over_cap {
                            outbox::delete(conn, item.id)?;
                            if target.confirmation_sent_at.is_none() {
                                subscribers::delete_never_mailed(conn, &target.id)?;
                            }
                            claim.capped += 1;
                            continue;
                        }
                        let expires_at = self.now.saturating_add(ttl);
                        match tokens.next() {
                            Some(token)
                                if subscribers::stamp_confirmation(
                                    conn,
                                    &target.id,
                                    target.confirmation_sent_at,
                                    &token.hash(),
                                    self.now,
                                    expires_at,
                                )? =>
                            {
                                if let Some(hash) = &hash {
                                    address_mails::record(conn, hash, self.now)?;
                                }
                                if let Some(network) = &item.network {
                                    networks::count_mail(conn, network, self.now)?;
                                }
                                let stamp =
                                    Stamp { hash: token.hash(), now: self.now, expires_at, lease_until, cooldown };
                                companions = self::companions(conn, &self.config, target, &stamp)?;
                                address_hash = hash;
                                Some(ReadyKind::Confirm { token, expires_at })
                            }
                            _ => None,
                        }
                    }
                }
                (MailKind::Welcome, Some(target)) if target.status == Status::Confirmed => Some(ReadyKind::Welcome),
                _ => None,
            };
            match (kind, target) {
                (Some(kind), Some(target)) => {
                    claim.ready.push(Ready { item, target, companions, reserved_at: self.now, kind, address_hash });
                }
                _ => {
                    outbox::delete(conn, item.id)?;
                    claim.skipped += 1;
                }
            }
        }
        mail_bucket::take(conn, pace, self.now, claim.ready.len())?;
        outbox::reserve(conn, self.now, claim.ready.len())?;
        Ok(claim)
    }
}

/// The token a confirmation was stamped with, to stamp on its companions too.
struct Stamp {
    hash: String,
    now: UnixSeconds,
    expires_at: UnixSeconds,
    lease_until: UnixSeconds,
    cooldown: i64,
}

/// The confirmations that go out with `target`'s: on every other list of the same sender
/// (`from`) whose row is in the same language as `target`'s, a pending row of the same address, not mailed within the cooldown,
/// whose queued confirmation no other worker holds. Each is leased with the mail and stamped
/// with its token.
fn companions(
    conn: &Connection,
    config: &Config,
    target: &MailTarget,
    stamp: &Stamp,
) -> rusqlite::Result<Vec<Companion>> {
    let Some(list) = config.list(&target.list_id) else {
        return Ok(Vec::new());
    };
    let language = list.row_language(target.language.as_deref());
    let mut companions = Vec::new();
    for sibling in config.lists.iter().filter(|other| other.id != list.id && other.same_sender(list)) {
        let Some(row) = subscribers::mail_target_on(conn, sibling.id.as_ref(), &target.email)? else {
            continue;
        };
        // One mail speaks one language: a row signed up in another waits for its own.
        if sibling.row_language(row.language.as_deref()) != language {
            continue;
        }
        let recently_mailed =
            row.confirmation_sent_at.is_some_and(|sent| stamp.now.saturating_sub(sent) < stamp.cooldown);
        if row.status != Status::Pending || recently_mailed {
            continue;
        }
        let Some(item) = outbox::claim_confirmation_of(conn, &row.id, stamp.now, stamp.lease_until)? else {
            continue;
        };
        // The writer runs one command at a time and the row was read in this one: the
        // compare-and-set cannot lose here, but it is the same write as the primary's.
        if subscribers::stamp_confirmation(
            conn,
            &row.id,
            row.confirmation_sent_at,
            &stamp.hash,
            stamp.now,
            stamp.expires_at,
        )? {
            companions.push(Companion { item, target: row });
        }
    }
    Ok(companions)
}

/// The next item of `order` that is still due and unleased (a companion of an earlier mail in
/// this claim may have taken it).
fn claim_next(
    conn: &Connection,
    order: &mut std::vec::IntoIter<i64>,
    now: UnixSeconds,
    lease_until: UnixSeconds,
) -> rusqlite::Result<Option<Claimed>> {
    for id in order {
        if let Some(item) = outbox::claim_by_id(conn, id, now, lease_until)? {
            return Ok(Some(item));
        }
    }
    Ok(None)
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
        /// The hour whose budget the mail reserved; `None` for a companion, which reserved none.
        reserved_at: Option<UnixSeconds>,
    },
    /// Not sent because the relay refuses signupd ([`super::relay_hold`]): the item keeps its
    /// place in the queue (its due time) and its count of tries, and waits for the hold, which
    /// lives in memory, so after a restart it goes at once.
    Held {
        item_id: i64,
        subscriber_id: String,
        last_error: String,
        undo: Option<Undo>,
        /// As for [`Settlement::Retry`].
        reserved_at: Option<UnixSeconds>,
    },
    /// Not sent, for good: the item goes, and a pending row that never got a confirmation with
    /// it (nothing is kept for an address that never got a link).
    GiveUp { item_id: i64, subscriber_id: String, undo: Option<Undo>, reserved_at: Option<UnixSeconds> },
}

/// A confirmation's stamp, to take back when its mail was not sent: the link already mailed
/// keeps working (a token stops working only when a new one was actually sent).
#[derive(Debug, Clone)]
pub struct Undo {
    pub stamped_at: UnixSeconds,
    pub stamped_hash: String,
    pub previous: PreviousLink,
    /// The mail counted against the address's cap, given back with the stamp.
    pub address_hash: Option<String>,
}

/// Records a worker's settlements in one commit, at `now`; a mail not sent gives its place in
/// the budget back. Returns, in order, whether each settlement deleted a never-mailed row (so
/// the operator is alerted).
#[derive(Debug)]
pub struct SettleMail {
    pub settlements: Vec<Settlement>,
    pub pace: Pace,
    pub now: UnixSeconds,
}

/// The paced budget of `config`.
pub fn pace(config: &Config) -> Pace {
    Pace::new(config.mail.max_mails_per_hour, config.mail.burst)
}

impl Command for SettleMail {
    type Output = Vec<bool>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<bool>> {
        let conn = batch.conn();
        let mut deleted_rows = Vec::with_capacity(self.settlements.len());
        for settlement in &self.settlements {
            let deleted = match settlement {
                Settlement::Sent { item_id } => {
                    outbox::delete(conn, *item_id)?;
                    false
                }
                Settlement::Retry { item_id, subscriber_id, next_attempt_at, last_error, undo, reserved_at } => {
                    unstamp(conn, subscriber_id, undo.as_ref())?;
                    if let Some(reserved_at) = reserved_at {
                        outbox::refund(conn, *reserved_at)?;
                        mail_bucket::give_back(conn, self.pace, self.now)?;
                    }
                    outbox::retry_at(conn, *item_id, *next_attempt_at, last_error)?;
                    false
                }
                Settlement::Held { item_id, subscriber_id, last_error, undo, reserved_at } => {
                    unstamp(conn, subscriber_id, undo.as_ref())?;
                    if let Some(reserved_at) = reserved_at {
                        outbox::refund(conn, *reserved_at)?;
                        mail_bucket::give_back(conn, self.pace, self.now)?;
                    }
                    outbox::release_held(conn, *item_id, last_error)?;
                    false
                }
                Settlement::GiveUp { item_id, subscriber_id, undo, reserved_at } => {
                    unstamp(conn, subscriber_id, undo.as_ref())?;
                    if let Some(reserved_at) = reserved_at {
                        outbox::refund(conn, *reserved_at)?;
                        mail_bucket::give_back(conn, self.pace, self.now)?;
                    }
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
    let Some(undo) = undo else {
        return Ok(());
    };
    if let Some(hash) = &undo.address_hash {
        address_mails::unrecord(conn, hash, undo.stamped_at)?;
    }
    subscribers::unstamp_confirmation(conn, subscriber_id, undo.stamped_at, &undo.stamped_hash, &undo.previous)
}

pub fn secs(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
}
