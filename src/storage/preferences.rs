//! What the preference page reads and writes in `subscribers`, `outbox` and `suppressions`
//! (`crate::subscribers::preferences`): one address's rows across a sender's lists, and confirming a list
//! from the page, either a pending row or a new row. Removing a list goes the way every removal
//! goes ([`super::subscribers::delete_everywhere`]).

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;
use crate::storage::subscribers::Status;

/// One row of the address on one of the sender's lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRow {
    pub id: String,
    pub list_id: String,
    pub status: Status,
    pub created_at: UnixSeconds,
    /// Attribution of the first signup, for the confirmed event.
    pub source: Option<String>,
    /// Comma-joined.
    pub tags: Option<String>,
    /// The field values, a JSON object, as stored; shown read-only on the page.
    pub fields: Option<String>,
    /// The visitor's language code, as stored; the token's row's is the page's.
    pub language: Option<String>,
}

/// The rows `email` has on `lists` (at most one per list: `UNIQUE (list_id, email)`), in the
/// order of `lists`; the caller keeps the sender's. One lookup of the `(list_id, email)` index
/// per list, so the address needs no index of its own (which every signup would pay for).
pub fn rows_of_address(conn: &Connection, email: &str, lists: &[&str]) -> rusqlite::Result<Vec<ListRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT id, list_id, status, created_at, source, tags, fields, language FROM subscribers
         WHERE list_id = ?1 AND email = ?2",
    )?;
    let mut rows = Vec::new();
    for list_id in lists {
        let row = statement
            .query_row([list_id, &email], |row| {
                Ok(ListRow {
                    id: row.get(0)?,
                    list_id: row.get(1)?,
                    status: row.get(2)?,
                    created_at: row.get(3)?,
                    source: row.get(4)?,
                    tags: row.get(5)?,
                    fields: row.get(6)?,
                    language: row.get(7)?,
                })
            })
            .optional()?;
        rows.extend(row);
    }
    Ok(rows)
}

/// A row confirmed on the preference page without a pending row before it. No `Debug`: it
/// holds an address.
#[allow(missing_debug_implementations)]
pub struct NewConfirmed<'a> {
    pub id: &'a str,
    pub list_id: &'a str,
    pub email: &'a str,
    /// The list's consent version now: the text the page showed beside the checkbox.
    pub consent_version: &'a str,
    /// `RemovalToken::removal_hash` of the new id.
    pub removal_hash: &'a str,
    /// The preference page's language code, when the list serves it.
    pub language: Option<&'a str>,
    pub now: UnixSeconds,
}

/// Inserts a row confirmed at `now` with `confirm_method = 'preferences'`. Fails on an existing
/// (list, address) row, which the caller has checked there is not.
pub fn insert_confirmed(conn: &Connection, row: &NewConfirmed<'_>) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, confirmed_at,
                                  confirm_method, removal_hash, language)
         VALUES (?1, ?2, ?3, 'confirmed', ?4, ?5, ?5, 'preferences', ?6, ?7)",
    )?
    .execute(params![
        row.id,
        row.list_id,
        row.email,
        row.consent_version,
        row.now,
        row.removal_hash,
        row.language
    ])?;
    Ok(())
}

/// Confirms the pending row `id` at `now` with `confirm_method = 'preferences'`, recording
/// `consent_version` (the text the page showed), and drops its queued confirmation mail, which
/// has nothing left to ask. Returns whether the row was still pending.
pub fn confirm_pending(conn: &Connection, id: &str, consent_version: &str, now: UnixSeconds) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE subscribers
             SET status = 'confirmed', confirmed_at = ?2, confirm_method = 'preferences', consent_version = ?3
             WHERE id = ?1 AND status = 'pending'",
        )?
        .execute(params![id, now, consent_version])?;
    if changed == 1 {
        conn.prepare_cached("DELETE FROM outbox WHERE subscriber_id = ?1 AND kind = 'confirm'")?.execute([id])?;
    }
    Ok(changed == 1)
}

/// Lifts the suppression `hash`, whatever its reason: a list ticked on the page, reached from
/// the address's own inbox, is that address asking for the list (`not_me` included).
pub fn lift_suppression(conn: &Connection, hash: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM suppressions WHERE hash = ?1")?.execute([hash])?;
    Ok(())
}
