//! The `subscribers` table and the mail queued for its rows (`outbox`).

use rusqlite::{OptionalExtension, Transaction, params};

use crate::clock::UnixSeconds;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Confirmed,
}

/// What the state table needs to know about an existing row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Existing {
    pub id: String,
    pub status: Status,
    /// When the last confirmation mail went out; `None` while the first is still queued.
    pub confirmation_sent_at: Option<UnixSeconds>,
}

pub fn find(tx: &Transaction<'_>, list_id: &str, email: &str) -> rusqlite::Result<Option<Existing>> {
    tx.prepare_cached("SELECT id, status, confirmation_sent_at FROM subscribers WHERE list_id = ?1 AND email = ?2")?
        .query_row(params![list_id, email], |row| {
            let status: String = row.get(1)?;
            Ok(Existing {
                id: row.get(0)?,
                status: if status == "confirmed" {
                    Status::Confirmed
                } else {
                    Status::Pending
                },
                confirmation_sent_at: row.get(2)?,
            })
        })
        .optional()
}

/// A new pending row. No `Debug`: it holds an address, which must never reach a log.
#[allow(missing_debug_implementations)]
pub struct NewPending<'a> {
    pub id: &'a str,
    pub list_id: &'a str,
    pub email: &'a str,
    pub consent_version: &'a str,
    pub created_at: UnixSeconds,
    pub removal_hash: &'a str,
}

pub fn insert_pending(tx: &Transaction<'_>, row: &NewPending<'_>) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6)",
    )?
    .execute(params![
        row.id,
        row.list_id,
        row.email,
        row.consent_version,
        row.created_at,
        row.removal_hash
    ])?;
    Ok(())
}

/// Queues a confirmation mail for a row unless one is already queued: however often an address
/// is entered, at most one confirmation waits in the queue.
pub fn queue_confirmation(tx: &Transaction<'_>, subscriber_id: &str, now: UnixSeconds) -> rusqlite::Result<bool> {
    let queued = tx
        .prepare_cached(
            "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at)
                         SELECT 'confirm', ?1, ?2, ?2
                         WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE subscriber_id = ?1 AND kind = 'confirm')",
        )?
        .execute(params![subscriber_id, now])?;
    Ok(queued == 1)
}
