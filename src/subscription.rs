//! The two changes a subscriber makes to their own subscription, as commands of the writer:
//! confirming (`docs/http-api.md`) and removing their address (`docs/http-api.md`). The routes that trigger them
//! only parse and answer; what is written, and in which order, lives here, so every way in
//! (the pages, one-click unsubscribe, the `signupd remove` command) writes the same.

use std::sync::Arc;

use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::config::Config;
use crate::secrets::Secret;
use crate::storage::intake;
use crate::storage::subscribers::{self, Removable, Status};
use crate::storage::suppressions::{self, Reason};
use crate::storage::{Batch, Command, outbox};
use crate::tokens::PresentedRemoval;
use crate::webhooks::{ConfirmedEvent, UnsubscribedEvent, Webhooks};

/// The one atomic transition pending → confirmed, with its consequences in the same commit:
/// the welcome mail is queued (if the list sends one), an `unsubscribed` suppression is lifted,
/// and `subscriber.confirmed` is queued for the webhooks that want it. Returns what was confirmed, or `None` when the token matched no live pending row (or,
/// with `retyped_email`, not its address).
pub struct Confirm {
    pub config: Arc<Config>,
    pub hash_key: Secret,
    pub webhooks: Webhooks,
    /// SHA-256 hex of the confirm token.
    pub confirm_hash: String,
    pub method: &'static str,
    pub retyped_email: Option<String>,
    pub now: UnixSeconds,
}

impl std::fmt::Debug for Confirm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confirm").field("method", &self.method).finish_non_exhaustive()
    }
}

/// A confirmation that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmed {
    pub list_id: String,
    /// Seconds from the confirmation mail to the click (a scanner clicks within seconds).
    pub delay_secs: Option<i64>,
}

impl Command for Confirm {
    type Output = Option<Confirmed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Option<Confirmed>> {
        let conn = batch.conn();
        let Some(row) =
            subscribers::confirm(conn, &self.confirm_hash, self.now, self.method, self.retyped_email.as_deref())?
        else {
            return Ok(None);
        };
        if self.config.list(&row.list_id).is_some_and(|list| list.welcome_mail) {
            outbox::queue_welcome(conn, &row.id, self.now)?;
        }
        suppressions::lift_unsubscribed(conn, &suppressions::hash(&self.hash_key, &row.list_id, &row.email))?;
        self.webhooks.queue_confirmed(
            conn,
            &ConfirmedEvent {
                list: &row.list_id,
                email: &row.email,
                subscriber_id: &row.id,
                created_at: row.created_at,
                method: self.method,
                consent_version: &row.consent_version,
                now: self.now,
            },
        )?;
        Ok(Some(Confirmed { list_id: row.list_id, delay_secs: row.delay_secs }))
    }
}

/// Which row a removal names: by a removal token, or by id from a signed unsubscribe token
/// (whose list must match the row's).
#[derive(Debug, Clone)]
pub enum RemovalTarget {
    /// SHA-256 hex of a 43-character removal token, the form mailed before removal tokens carried
    /// their row's id; only rows created before store such a bare hash.
    ByLegacyRemovalHash(String),
    /// A removal token `<id>.<secret>`: the row by primary key, if its stored hash matches.
    ByRemovalToken(PresentedRemoval),
    ById {
        subscriber_id: String,
        list_id: String,
    },
}

impl RemovalTarget {
    /// The row this names, if any; reads only. A removal token whose secret does not match its
    /// row's stored hash names nothing, exactly like an unknown token.
    pub fn find(&self, conn: &Connection) -> rusqlite::Result<Option<Removable>> {
        Ok(match self {
            Self::ByLegacyRemovalHash(hash) => subscribers::find_removable_by_removal_hash(conn, hash)?,
            Self::ByRemovalToken(token) => subscribers::find_removable_by_id(conn, token.subscriber_id())?
                .filter(|(_, removal_hash)| token.matches(removal_hash))
                .map(|(row, _)| row),
            Self::ById { subscriber_id, list_id } => subscribers::find_removable_by_id(conn, subscriber_id)?
                .map(|(row, _)| row)
                .filter(|row| row.list_id == *list_id),
        })
    }
}

/// What a removal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub list_id: String,
    pub reason: Reason,
}

/// Deletes a row everywhere at once (the row, its queued mail, any intake item for the address)
/// and records its suppression hash: `not_me` if it was still pending, `unsubscribed` if it was
/// confirmed. The row is looked up inside the command, so the reason always matches the status
/// the row had when it was deleted. `None` when nothing matched.
pub struct Remove {
    pub hash_key: Secret,
    pub webhooks: Webhooks,
    /// `manage` or `one_click`, for the webhook event.
    pub via: &'static str,
    pub target: RemovalTarget,
    pub now: UnixSeconds,
}

impl std::fmt::Debug for Remove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remove").finish_non_exhaustive()
    }
}

impl Command for Remove {
    type Output = Option<Removed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Option<Removed>> {
        let conn = batch.conn();
        let Some(row) = self.target.find(conn)? else {
            return Ok(None);
        };
        let reason = reason_for(row.status);
        let removal = Removal { hash_key: &self.hash_key, webhooks: &self.webhooks, via: self.via, now: self.now };
        removal.remove(conn, &row, reason)?;
        Ok(Some(Removed { list_id: row.list_id, reason }))
    }
}

/// As the manage page would: `unsubscribed` for a confirmed row, `not_me` for a pending one.
fn reason_for(status: Status) -> Reason {
    if status == Status::Confirmed { Reason::Unsubscribed } else { Reason::NotMe }
}

/// What every removal does to one row, whoever asked for it.
struct Removal<'a> {
    hash_key: &'a Secret,
    webhooks: &'a Webhooks,
    via: &'static str,
    now: UnixSeconds,
}

impl Removal<'_> {
    /// Deletes the row everywhere, records its suppression and, if it was confirmed, queues
    /// `subscriber.unsubscribed` (a pending address was never known to the receivers).
    fn remove(&self, conn: &Connection, row: &Removable, reason: Reason) -> anyhow::Result<()> {
        subscribers::delete_everywhere(conn, row)?;
        let hash = suppressions::hash(self.hash_key, &row.list_id, &row.email);
        suppressions::record(conn, &hash, &row.list_id, reason, self.now)?;
        if row.status == Status::Confirmed {
            self.webhooks.queue_unsubscribed(
                conn,
                &UnsubscribedEvent {
                    list: &row.list_id,
                    email: &row.email,
                    subscriber_id: &row.id,
                    reason: reason.as_str(),
                    via: self.via,
                    now: self.now,
                },
            )?;
        }
        Ok(())
    }
}

/// An erasure request (`signupd remove`): removes `email` from each of `lists` as the manage page
/// would, all in one transaction, with `reason` instead of the status-derived one when given.
/// A signup of the address not yet applied from `intake` is removed too (as a pending one).
pub struct RemoveAddress {
    pub hash_key: Secret,
    pub webhooks: Webhooks,
    pub lists: Vec<String>,
    /// Normalised, as `EmailAddress` gives it.
    pub email: String,
    pub reason: Option<Reason>,
    pub now: UnixSeconds,
}

impl std::fmt::Debug for RemoveAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoveAddress").field("lists", &self.lists).finish_non_exhaustive()
    }
}

impl Command for RemoveAddress {
    /// What was removed from which list.
    type Output = Vec<Removed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Removed>> {
        let conn = batch.conn();
        let removal = Removal { hash_key: &self.hash_key, webhooks: &self.webhooks, via: "cli", now: self.now };
        let mut removed = Vec::new();
        for list_id in &self.lists {
            let row = match subscribers::find(conn, list_id, &self.email)? {
                Some(existing) => Some(Removable {
                    id: existing.id,
                    list_id: list_id.clone(),
                    email: self.email.clone(),
                    status: existing.status,
                }),
                None if intake::delete_address(conn, list_id, &self.email)? > 0 => Some(Removable {
                    id: String::new(),
                    list_id: list_id.clone(),
                    email: self.email.clone(),
                    status: Status::Pending,
                }),
                None => None,
            };
            if let Some(row) = row {
                let reason = self.reason.unwrap_or(reason_for(row.status));
                removal.remove(conn, &row, reason)?;
                removed.push(Removed { list_id: row.list_id, reason });
            }
        }
        Ok(removed)
    }
}
