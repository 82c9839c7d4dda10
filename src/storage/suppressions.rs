//! The `suppressions` table: addresses that must not get mail, stored only as
//! HMAC(hash key, list id + normalised address), so the table holds no address.

use ring::hmac;
use rusqlite::{Connection, OptionalExtension};

use crate::secrets::Secret;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Removed while pending: "this wasn't me". No more mail, even after a new signup.
    NotMe,
    /// Removed after confirming. A new signup starts a new double opt-in.
    Unsubscribed,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotMe => "not_me",
            Self::Unsubscribed => "unsubscribed",
        }
    }
}

pub fn hash(hash_key: &Secret, list_id: &str, email: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose());
    hex::encode(hmac::sign(&key, format!("signupd/suppression/v1\n{list_id}\n{email}").as_bytes()).as_ref())
}

pub fn find(conn: &Connection, hash: &str) -> rusqlite::Result<Option<Reason>> {
    conn.prepare_cached("SELECT reason FROM suppressions WHERE hash = ?1")?
        .query_row([hash], |row| row.get::<_, String>(0))
        .optional()
        .map(|reason| reason.map(|r| if r == "not_me" { Reason::NotMe } else { Reason::Unsubscribed }))
}

/// Records (or updates) a suppression for `list_id`; `hash` is [`hash`] of that list and address.
pub fn record(
    conn: &Connection,
    hash: &str,
    list_id: &str,
    reason: Reason,
    now: crate::clock::UnixSeconds,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO suppressions (hash, reason, created_at, list_id) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (hash) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at,
                                          list_id = excluded.list_id",
    )?
    .execute(rusqlite::params![hash, reason.as_str(), now, list_id])?;
    Ok(())
}

/// Lifts an `unsubscribed` suppression (a new confirmation). A `not_me` one is never lifted here:
/// no confirmation mail is sent to such an address in the first place.
pub fn lift_unsubscribed(conn: &Connection, hash: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM suppressions WHERE hash = ?1 AND reason = 'unsubscribed'")?.execute([hash])?;
    Ok(())
}
