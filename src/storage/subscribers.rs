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

/// A row as the mail worker needs it. No `Debug`: it holds the address.
#[allow(missing_debug_implementations)]
pub struct MailTarget {
    pub id: String,
    pub list_id: String,
    pub email: String,
    pub status: Status,
    pub confirmation_sent_at: Option<UnixSeconds>,
}

pub fn mail_target(conn: &rusqlite::Connection, id: &str) -> rusqlite::Result<Option<MailTarget>> {
    conn.prepare_cached("SELECT id, list_id, email, status, confirmation_sent_at FROM subscribers WHERE id = ?1")?
        .query_row([id], |row| {
            let status: String = row.get(3)?;
            Ok(MailTarget {
                id: row.get(0)?,
                list_id: row.get(1)?,
                email: row.get(2)?,
                status: if status == "confirmed" {
                    Status::Confirmed
                } else {
                    Status::Pending
                },
                confirmation_sent_at: row.get(4)?,
            })
        })
        .optional()
}

/// Compare-and-set: stores a new confirm token hash and send time only if the row is still
/// pending with the send time the worker read. Returns whether this worker won.
pub fn stamp_confirmation(
    conn: &rusqlite::Connection,
    id: &str,
    previous_sent_at: Option<UnixSeconds>,
    confirm_hash: &str,
    now: UnixSeconds,
    expires_at: UnixSeconds,
) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE subscribers SET confirm_hash = ?3, confirm_expires_at = ?5, confirmation_sent_at = ?4
             WHERE id = ?1 AND status = 'pending' AND confirmation_sent_at IS ?2",
        )?
        .execute(params![id, previous_sent_at, confirm_hash, now, expires_at])?;
    Ok(changed == 1)
}

/// Undoes [`stamp_confirmation`] after a failed send, so the cooldown and the retry see the
/// state before it. The new hash is cleared too: its token never left this process.
pub fn unstamp_confirmation(
    conn: &rusqlite::Connection,
    id: &str,
    stamped_at: UnixSeconds,
    previous_sent_at: Option<UnixSeconds>,
    confirm_hash: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE subscribers SET confirmation_sent_at = ?3, confirm_hash = NULL, confirm_expires_at = NULL
         WHERE id = ?1 AND confirmation_sent_at = ?2 AND confirm_hash = ?4",
    )?
    .execute(params![id, stamped_at, previous_sent_at, confirm_hash])?;
    Ok(())
}

/// Deletes a pending row that never got a confirmation mail (its queued mail goes with it).
/// Returns whether a row was deleted.
pub fn delete_never_mailed(conn: &rusqlite::Connection, id: &str) -> rusqlite::Result<bool> {
    let deleted = conn
        .prepare_cached(
            "DELETE FROM subscribers WHERE id = ?1 AND status = 'pending' AND confirmation_sent_at IS NULL",
        )?
        .execute([id])?;
    Ok(deleted == 1)
}
