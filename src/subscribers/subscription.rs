//! The two changes a subscriber makes to their own subscription, as commands of the writer:
//! confirming (`docs/http-api.md`) and removing their address (`docs/http-api.md`). The routes
//! that trigger them only parse and answer; what is written, and in which order, lives here, so
//! every way in (the pages, one-click unsubscribe, the `signupd remove` command) writes the same.
//!
//! Each change is prepared before it reaches the writer, from the row as a reader sees it: the
//! webhook event (its JSON body and signed unsubscribe link) and the suppression hash are work
//! the writer's thread should not do, since every request's commit waits behind it. The command
//! then checks, inside its transaction, that the row it changes is the row the preparation read
//! (same id, same status). If a concurrent change came between the two, the command fails
//! without writing and [`Subscriptions`] prepares it again from the new row, a few times at most.
//! The preference page's save ([`crate::subscribers::preferences`]) is built from the same parts: its
//! removals are `PreparedRemoval`s, and `write_prepared` runs it.

use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::config::Config;
use crate::config::secrets::Secret;
use crate::config::tokens::{PresentedRemoval, TokenHash};
use crate::domain::{EmailAddress, ListId};
use crate::outbound::webhooks::{ConfirmedEvent, PreparedEvent, UnsubscribedEvent, Webhooks};
use crate::storage::subscribers::{self, Removable, Status};
use crate::storage::suppressions::{self, Reason};
use crate::storage::{Batch, Command, Db, WriteError, Writer, intake, networks, outbox};

/// How a confirmation was made: stored in `confirm_method`, and a metric and webhook label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMethod {
    /// The confirm page's button.
    Button,
    /// The confirm page with the address typed again (`confirm_mode = "retype"`).
    Retype,
    /// Ticked on the preference page (`crate::subscribers::preferences`), reached from the address's inbox.
    Preferences,
}

impl ConfirmMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Button => "button",
            Self::Retype => "retype",
            Self::Preferences => "preferences",
        }
    }
}

/// Which way a removal came in: a metric label and the webhook's `via`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovalChannel {
    /// The manage page's button.
    Manage,
    /// `List-Unsubscribe-Post` one-click unsubscribe.
    OneClick,
    /// `signupd remove`.
    Cli,
    /// A relay's bounce or complaint (`crate::relays`).
    Relay,
    /// The operator API (`/api/v1/`) or the admin page.
    Api,
}

impl RemovalChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Manage => "manage",
            Self::OneClick => "one_click",
            Self::Cli => "cli",
            Self::Relay => "relay",
            Self::Api => "api",
        }
    }
}

/// How often a change is prepared again when its row changed between the read and the write.
const ATTEMPTS: usize = 3;

/// The row a command was prepared from is no longer the row it would change.
#[derive(Debug, thiserror::Error)]
#[error("the row changed while its change was prepared")]
pub(crate) struct Stale;

/// Prepares a command with `prepare` and runs it on `writer`, preparing it again while the
/// writer finds it [`Stale`]. `None` when `prepare` finds nothing to change (then nothing is
/// written).
pub(crate) async fn write_prepared<C: Command>(
    writer: &Writer,
    mut prepare: impl AsyncFnMut() -> anyhow::Result<Option<C>>,
) -> anyhow::Result<Option<C::Output>> {
    for _ in 0..ATTEMPTS {
        let Some(command) = prepare().await? else {
            return Ok(None);
        };
        match writer.execute(command).await {
            Err(WriteError::Rejected(error)) if error.is::<Stale>() => {}
            answer => return Ok(Some(answer?)),
        }
    }
    anyhow::bail!(Stale)
}

/// What confirming and removing work with: a reader to prepare, the writer to write.
#[derive(Debug, Clone, Copy)]
pub struct Subscriptions<'a> {
    pub config: &'a Config,
    pub db: &'a Db,
    pub writer: &'a Writer,
    pub hash_key: &'a Secret,
    pub webhooks: &'a Webhooks,
}

impl Subscriptions<'_> {
    /// Confirms the live pending rows whose confirm token hashes to `confirm_hash` (one, or one
    /// per list when the mail confirmed several) and, with `retyped_email`, whose address it
    /// is. Empty when no such row exists. `network`: the keyed hash of the neighbourhood the
    /// confirmation came from, remembered (with the day) so mail to it goes before the rest
    /// (`signup.reputation_days`); `None` when that is off.
    pub async fn confirm(
        &self,
        confirm_hash: &TokenHash,
        method: ConfirmMethod,
        retyped_email: Option<&EmailAddress>,
        network: Option<String>,
        now: UnixSeconds,
    ) -> anyhow::Result<Vec<Confirmed>> {
        let confirmed = write_prepared(self.writer, async || {
            let prepared = self.prepare_confirm(confirm_hash, method, now).await?;
            Ok(prepared.map(|prepared| Confirm {
                confirm_hash: confirm_hash.clone(),
                method,
                retyped_email: retyped_email.cloned(),
                network: network.clone(),
                now,
                prepared,
            }))
        })
        .await?;
        Ok(confirmed.unwrap_or_default())
    }

    /// One [`PreparedConfirm`] per pending row the hash names, in the order of their ids;
    /// `None` when there is none.
    async fn prepare_confirm(
        &self,
        confirm_hash: &TokenHash,
        method: ConfirmMethod,
        now: UnixSeconds,
    ) -> anyhow::Result<Option<Vec<PreparedConfirm>>> {
        let hash = confirm_hash.clone();
        let webhooks = self.webhooks.clone();
        let found = self
            .db
            .run(move |conn| {
                let mut found = Vec::new();
                for row in subscribers::pending_by_confirm_hash(conn, hash.as_str())? {
                    let consent_text = if webhooks.wants_confirmed(&row.list_id) {
                        webhooks.consent_text(conn, &row.list_id, &row.consent_version, row.created_at)?
                    } else {
                        None
                    };
                    found.push((row, consent_text));
                }
                Ok::<_, anyhow::Error>(found)
            })
            .await?;
        if found.is_empty() {
            return Ok(None);
        }
        let mut prepared = Vec::with_capacity(found.len());
        for (row, consent_text) in found {
            let event = ConfirmedEvent {
                list: &row.list_id,
                email: &row.email,
                subscriber_id: &row.id,
                created_at: row.created_at,
                method: method.as_str(),
                consent_version: &row.consent_version,
                source: row.source.as_deref(),
                tags: row.tags.as_deref(),
                fields: row.fields.as_deref(),
                language: self.config.row_language_code(&row.list_id, row.language.as_deref()),
                now,
            };
            prepared.push(PreparedConfirm {
                event: self.webhooks.confirmed(&event, consent_text.as_deref())?,
                welcome_mail: self.config.list(&row.list_id).is_some_and(|list| list.welcome_mail),
                suppression_hash: suppressions::hash(self.hash_key, &row.list_id, &row.email),
                subscriber_id: row.id,
            });
        }
        Ok(Some(prepared))
    }

    /// Removes the row `target` names, as its status says (`not_me` while pending,
    /// `unsubscribed` once confirmed). `None` when it names no row.
    pub async fn remove(
        &self,
        target: &RemovalTarget,
        via: RemovalChannel,
        now: UnixSeconds,
    ) -> anyhow::Result<Option<Removed>> {
        let removed = write_prepared(self.writer, async || {
            let read = target.clone();
            let Some(row) = self.db.run(move |conn| Ok::<_, anyhow::Error>(read.find(conn)?)).await? else {
                return Ok(None);
            };
            let prepared =
                self.prepare_removal(&row.list_id, &row.email, Some(&row), reason_for(row.status), via, now)?;
            Ok(Some(Remove { target: target.clone(), prepared, now }))
        })
        .await?;
        Ok(removed.flatten())
    }

    /// An erasure request (`signupd remove`): removes `email` from each of `lists` as the manage
    /// page would, all in one transaction, with `reason` instead of the status-derived one when
    /// given. A signup of the address not yet applied from `intake` is removed too (as a pending
    /// one). What was removed from which list.
    pub async fn remove_address(
        &self,
        lists: &[ListId],
        email: &EmailAddress,
        reason: Option<Reason>,
        now: UnixSeconds,
    ) -> anyhow::Result<Vec<Removed>> {
        self.remove_from_lists(lists, email.as_ref(), reason, RemovalChannel::Cli, now).await
    }

    /// Suppresses `email` on each of `lists` whether or not it has a row there (`POST
    /// /api/v1/suppressions`: an address the operator's other systems say must never be mailed),
    /// removing any row as [`Self::remove_address`] does, in one transaction; `via` `api`.
    /// Returns the rows removed; every list gets its suppression either way.
    pub async fn suppress_address(
        &self,
        lists: &[ListId],
        email: &EmailAddress,
        reason: Reason,
        now: UnixSeconds,
    ) -> anyhow::Result<Vec<Removed>> {
        let removed = write_prepared(self.writer, async || {
            let prepared = self.prepare_remove_address(lists, email.as_ref(), Some(reason), RemovalChannel::Api, now);
            Ok(Some(RemoveAddress { suppress_absent: true, ..prepared.await? }))
        })
        .await?;
        Ok(removed.unwrap_or_default())
    }

    /// Removes `email` (as stored: normalised) from each of `lists` in one transaction, as
    /// [`Self::remove_address`] does, reporting `via`: the erasure request, and the preference
    /// page's "remove me from all".
    pub(crate) async fn remove_from_lists(
        &self,
        lists: &[ListId],
        email: &str,
        reason: Option<Reason>,
        via: RemovalChannel,
        now: UnixSeconds,
    ) -> anyhow::Result<Vec<Removed>> {
        let removed = write_prepared(self.writer, async || {
            Ok(Some(self.prepare_remove_address(lists, email, reason, via, now).await?))
        })
        .await?;
        // The command is always prepared, so there is always an answer.
        Ok(removed.unwrap_or_default())
    }

    /// A hard bounce or a complaint (`crate::relays`), prepared from the rows a reader sees: the
    /// address's every-list suppression (`every_list_hash`, with `reason`: `bounced` or
    /// `complained`) and, when the address is known, its removal from each of `lists` with that
    /// reason — a confirmed row with its `subscriber.unsubscribed` event (`via` `relay`), a
    /// pending one with its queued mail, a signup still in `intake` — all in one transaction.
    /// Without the address (the row the report names is gone) only the suppression is recorded:
    /// it keeps the address from being mailed again, which is all that is left to do. Written as
    /// a command, or inside a command of the caller's ([`Suppression::apply`]).
    pub(crate) async fn prepare_suppression(
        &self,
        lists: &[ListId],
        email: Option<&str>,
        every_list_hash: &str,
        reason: Reason,
        now: UnixSeconds,
    ) -> anyhow::Result<Suppression> {
        let every_list = Some((every_list_hash.to_owned(), reason));
        let command = match email {
            Some(email) => {
                let prepared = self.prepare_remove_address(lists, email, Some(reason), RemovalChannel::Relay, now);
                RemoveAddress { every_list, ..prepared.await? }
            }
            None => RemoveAddress { email: String::new(), lists: Vec::new(), every_list, suppress_absent: false, now },
        };
        Ok(Suppression(command))
    }

    /// A permanent refusal of `email`'s recipient by the relay at send time, for a mail to
    /// `lists`: on those lists only, its pending rows are removed and the address suppressed as
    /// `bounced` (so a new signup there is answered and never mailed). A confirmed row stays as
    /// it is: a send-time refusal never removes one (only a verified bounce or complaint
    /// does), and no other list is touched.
    pub(crate) async fn prepare_send_refusal(
        &self,
        lists: &[ListId],
        email: &str,
        now: UnixSeconds,
    ) -> anyhow::Result<Suppression> {
        let mut command =
            self.prepare_remove_address(lists, email, Some(Reason::Bounced), RemovalChannel::Relay, now).await?;
        command.lists.retain(|(_, prepared)| !matches!(prepared.expected, Some((_, Status::Confirmed))));
        command.suppress_absent = true;
        Ok(Suppression(command))
    }

    /// [`RemoveAddress`] for `email` on each of `lists`, prepared from the rows a reader sees.
    async fn prepare_remove_address(
        &self,
        lists: &[ListId],
        email: &str,
        reason: Option<Reason>,
        via: RemovalChannel,
        now: UnixSeconds,
    ) -> anyhow::Result<RemoveAddress> {
        let (read_lists, read_email) = (lists.to_vec(), email.to_owned());
        let rows = self
            .db
            .run(move |conn| {
                let rows = read_lists.iter().map(|list| subscribers::find(conn, list.as_ref(), &read_email));
                Ok::<_, anyhow::Error>(rows.collect::<rusqlite::Result<Vec<_>>>()?)
            })
            .await?;
        let mut prepared = Vec::with_capacity(lists.len());
        for (list, existing) in lists.iter().zip(rows) {
            let row = existing.map(|existing| Removable {
                id: existing.id,
                list_id: list.as_ref().to_owned(),
                email: email.to_owned(),
                status: existing.status,
            });
            let status = row.as_ref().map_or(Status::Pending, |row| row.status);
            let reason = reason.unwrap_or(reason_for(status));
            let removal = self.prepare_removal(list.as_ref(), email, row.as_ref(), reason, via, now)?;
            prepared.push((list.clone(), removal));
        }
        Ok(RemoveAddress { email: email.to_owned(), lists: prepared, every_list: None, suppress_absent: false, now })
    }

    /// What removing `row` (or, without one, a signup of `email` still in `intake`) writes.
    pub(crate) fn prepare_removal(
        &self,
        list_id: &str,
        email: &str,
        row: Option<&Removable>,
        reason: Reason,
        via: RemovalChannel,
        now: UnixSeconds,
    ) -> anyhow::Result<PreparedRemoval> {
        // A pending address was never known to the receivers: only a confirmed one leaves.
        let event = match row {
            Some(row) if row.status == Status::Confirmed => self.webhooks.unsubscribed(&UnsubscribedEvent {
                list: &row.list_id,
                email: &row.email,
                subscriber_id: &row.id,
                reason: reason.as_str(),
                via: via.as_str(),
                now,
            })?,
            _ => None,
        };
        Ok(PreparedRemoval {
            expected: row.map(|row| (row.id.clone(), row.status)),
            reason,
            suppression_hash: suppressions::hash(self.hash_key, list_id, email),
            event,
        })
    }
}

/// What a confirmation writes besides a row, prepared from the row a reader saw.
struct PreparedConfirm {
    /// The row the preparation read; the command refuses any other.
    subscriber_id: String,
    /// Whether the row's list sends a welcome mail.
    welcome_mail: bool,
    /// The `unsubscribed` suppression a confirmation lifts.
    suppression_hash: String,
    /// `subscriber.confirmed`, if an endpoint wants it.
    event: Option<PreparedEvent>,
}

/// The one atomic transition pending → confirmed of every row the token names, with each
/// row's consequences in the same commit: the welcome mail is queued (if the list sends one),
/// an `unsubscribed` suppression is lifted, and `subscriber.confirmed` is queued for the
/// webhooks that want it. Returns what was confirmed; empty when the token matched no live
/// pending row (or, with `retyped_email`, not its address).
struct Confirm {
    confirm_hash: TokenHash,
    method: ConfirmMethod,
    retyped_email: Option<EmailAddress>,
    /// The confirming client's neighbourhood, as a keyed hash, for the reputation.
    network: Option<String>,
    now: UnixSeconds,
    /// In the order of the rows' ids.
    prepared: Vec<PreparedConfirm>,
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
    /// The first signup's attribution.
    pub source: Option<String>,
}

impl Command for Confirm {
    type Output = Vec<Confirmed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Confirmed>> {
        let conn = batch.conn();
        let retyped_email = self.retyped_email.as_ref().map(AsRef::as_ref);
        let rows =
            subscribers::confirm(conn, self.confirm_hash.as_str(), self.now, self.method.as_str(), retyped_email)?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        // Every row the preparation read, and no other: anything else rolls back and is
        // prepared again.
        let same_rows = rows.len() == self.prepared.len()
            && rows.iter().zip(&self.prepared).all(|(row, prepared)| row.id == prepared.subscriber_id);
        if !same_rows {
            return Err(Stale.into());
        }
        let mut confirmed = Vec::with_capacity(rows.len());
        for (row, prepared) in rows.into_iter().zip(&self.prepared) {
            if prepared.welcome_mail {
                outbox::queue_welcome(conn, &row.id, self.now)?;
            }
            suppressions::lift_unsubscribed(conn, &prepared.suppression_hash)?;
            if let Some(event) = &prepared.event {
                event.queue(conn)?;
            }
            confirmed.push(Confirmed { list_id: row.list_id, delay_secs: row.delay_secs, source: row.source });
        }
        if let Some(network) = &self.network {
            networks::record_confirmation(conn, network, self.now)?;
        }
        Ok(confirmed)
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

/// What a removal writes besides deleting, prepared from the row a reader saw.
pub(crate) struct PreparedRemoval {
    /// The row (id and status) the preparation read, or `None` for a signup only in `intake`;
    /// the command refuses anything else.
    expected: Option<(String, Status)>,
    reason: Reason,
    suppression_hash: String,
    /// `subscriber.unsubscribed`, for a confirmed row an endpoint wants to hear of.
    event: Option<PreparedEvent>,
}

impl PreparedRemoval {
    /// Whether `row` is what the preparation read.
    pub(crate) fn check(&self, row: Option<(&str, Status)>) -> Result<(), Stale> {
        let expected = self.expected.as_ref().map(|(id, status)| (id.as_str(), *status));
        if expected == row { Ok(()) } else { Err(Stale) }
    }

    /// Deletes `row` everywhere (the row, its queued mail, any intake item for the address),
    /// records its suppression and queues its event.
    pub(crate) fn apply(&self, conn: &Connection, row: &Removable, now: UnixSeconds) -> anyhow::Result<Removed> {
        // First: the event finds what it waits for through the row.
        if let Some(event) = &self.event {
            event.queue(conn)?;
        }
        subscribers::delete_everywhere(conn, row)?;
        suppressions::record(conn, &self.suppression_hash, &row.list_id, self.reason, now)?;
        Ok(Removed { list_id: row.list_id.clone(), reason: self.reason })
    }
}

/// Deletes a row everywhere at once and records its suppression hash: `not_me` if it was still
/// pending, `unsubscribed` if it was confirmed. The row is looked up again inside the command,
/// and must be the one the removal was prepared from, so the reason always matches the status
/// the row had when it was deleted. `None` when nothing matched.
struct Remove {
    target: RemovalTarget,
    prepared: PreparedRemoval,
    now: UnixSeconds,
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
        self.prepared.check(Some((&row.id, row.status)))?;
        Ok(Some(self.prepared.apply(conn, &row, self.now)?))
    }
}

/// As the manage page would: `unsubscribed` for a confirmed row, `not_me` for a pending one.
fn reason_for(status: Status) -> Reason {
    if status == Status::Confirmed { Reason::Unsubscribed } else { Reason::NotMe }
}

/// [`Subscriptions::remove_address`] as one command: each list's row, or its signup still in
/// `intake`, removed as prepared.
struct RemoveAddress {
    /// Normalised, as stored.
    email: String,
    lists: Vec<(ListId, PreparedRemoval)>,
    /// A bounce's or complaint's suppression on every list: the every-list key and the reason.
    every_list: Option<(String, Reason)>,
    /// Record each list's suppression even where the address has no row.
    suppress_absent: bool,
    now: UnixSeconds,
}

impl std::fmt::Debug for RemoveAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lists: Vec<&ListId> = self.lists.iter().map(|(list, _)| list).collect();
        f.debug_struct("RemoveAddress").field("lists", &lists).finish_non_exhaustive()
    }
}

impl Command for RemoveAddress {
    /// What was removed from which list.
    type Output = Vec<Removed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Removed>> {
        self.apply(batch)
    }
}

/// A bounce's or a complaint's suppression on every list with the removals it brings
/// ([`Subscriptions::prepare_suppression`]), written as a command or inside another one.
#[derive(Debug)]
pub(crate) struct Suppression(RemoveAddress);

impl Suppression {
    /// Writes the suppression and the removals; fails with [`Stale`] when a row is no longer the
    /// one the preparation read, so the caller prepares again.
    pub(crate) fn apply(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Removed>> {
        self.0.apply(batch)
    }
}

impl Command for Suppression {
    type Output = Vec<Removed>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Removed>> {
        self.apply(batch)
    }
}

impl RemoveAddress {
    fn apply(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Removed>> {
        let conn = batch.conn();
        if let Some((hash, reason)) = &self.every_list {
            suppressions::record(conn, hash, suppressions::EVERY_LIST, *reason, self.now)?;
        }
        let email = self.email.as_str();
        let mut removed = Vec::new();
        for (list, prepared) in &self.lists {
            let list_id = list.as_ref();
            let existing = subscribers::find(conn, list_id, email)?;
            prepared.check(existing.as_ref().map(|existing| (existing.id.as_str(), existing.status)))?;
            let row = match existing {
                Some(existing) => Some(Removable {
                    id: existing.id,
                    list_id: list_id.to_owned(),
                    email: email.to_owned(),
                    status: existing.status,
                }),
                None if intake::delete_address(conn, list_id, email)? > 0 => Some(Removable {
                    id: String::new(),
                    list_id: list_id.to_owned(),
                    email: email.to_owned(),
                    status: Status::Pending,
                }),
                None => None,
            };
            match row {
                Some(row) => removed.push(prepared.apply(conn, &row, self.now)?),
                None if self.suppress_absent => {
                    suppressions::record(conn, &prepared.suppression_hash, list_id, prepared.reason, self.now)?;
                }
                None => {}
            }
        }
        Ok(removed)
    }
}
