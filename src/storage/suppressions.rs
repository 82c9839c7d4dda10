//! The `suppressions` table: addresses that must not get mail, stored only as
//! HMAC(hash key, list id + normalised address), so the table holds no address.
//!
//! A hard bounce or a complaint holds on every list: it is stored once, under the address's
//! every-list key ([`every_list_hash`], the list id [`EVERY_LIST`], which no list can have), and
//! a signup reads it beside the list's own key.

use ring::hmac;
use rusqlite::{Connection, OptionalExtension};

use crate::config::secrets::Secret;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Removed while pending: "this wasn't me". No more mail, even after a new signup.
    NotMe,
    /// Removed after confirming. A new signup starts a new double opt-in.
    Unsubscribed,
    /// Its mail bounced for good: on every list, never mailed again.
    Bounced,
    /// Its recipient marked a mail as spam: on every list, never mailed again.
    Complained,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotMe => "not_me",
            Self::Unsubscribed => "unsubscribed",
            Self::Bounced => "bounced",
            Self::Complained => "complained",
        }
    }

    /// The reason a stored word names (the table's CHECK allows no other).
    fn parse(word: &str) -> Option<Self> {
        [Self::NotMe, Self::Unsubscribed, Self::Bounced, Self::Complained].into_iter().find(|r| r.as_str() == word)
    }

    /// Whether a new signup of the address is answered as always and never mailed.
    pub fn never_mailed(self) -> bool {
        !matches!(self, Self::Unsubscribed)
    }
}

/// The list id of the every-list key.
pub const EVERY_LIST: &str = "*";

pub fn hash(hash_key: &Secret, list_id: &str, email: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose());
    hex::encode(hmac::sign(&key, format!("signupd/suppression/v1\n{list_id}\n{email}").as_bytes()).as_ref())
}

/// The address's key on every list: where its bounces and complaints are stored.
pub fn every_list_hash(hash_key: &Secret, email: &str) -> String {
    hash(hash_key, EVERY_LIST, email)
}

pub fn find(conn: &Connection, hash: &str) -> rusqlite::Result<Option<Reason>> {
    let word = conn
        .prepare_cached("SELECT reason FROM suppressions WHERE hash = ?1")?
        .query_row([hash], |row| row.get::<_, String>(0))
        .optional()?;
    // The CHECK constraint allows no other word; were one there, never mailing is the safe reading.
    Ok(word.map(|word| Reason::parse(&word).unwrap_or(Reason::NotMe)))
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
