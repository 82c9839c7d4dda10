//! The `address_mails` table: one row per confirmation mail, keyed by a hash of the address's
//! canonical mailbox alone (not the list), so `signup.max_mails_per_address_per_day` holds across every list. A
//! row is written when a confirmation is claimed for sending, taken back if the send fails, and
//! deleted by the cleanup a day later. No address is stored.

use ring::hmac;
use rusqlite::{Connection, params};

use crate::clock::UnixSeconds;
use crate::domain::canonical_mailbox;

/// The window the cap counts over.
pub const DAY: i64 = 86_400;

/// HMAC(hash key, the address's canonical mailbox), hex: however the address is spelled
/// (`+tags`, case, Gmail's dots and its two domains), one victim is one count
/// ([`canonical_mailbox`]). A different message from the suppression hash (which includes the
/// list), so the two cannot be matched against each other. (The message's label is the one
/// used before the canonical form: an address already in that form keeps its count across
/// the upgrade.)
pub fn hash(key: &hmac::Key, email: &str) -> String {
    let mailbox = canonical_mailbox(email);
    hex::encode(hmac::sign(key, format!("signupd/address-mails/v1\n{mailbox}").as_bytes()).as_ref())
}

/// Confirmation mails to the address in the 24 hours before `now`.
pub fn in_last_day(conn: &Connection, hash: &str, now: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM address_mails WHERE hash = ?1 AND sent_at > ?2")?
        .query_row(params![hash, now - DAY], |row| row.get(0))
}

pub fn record(conn: &Connection, hash: &str, at: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO address_mails (hash, sent_at) VALUES (?1, ?2)")?.execute(params![hash, at])?;
    Ok(())
}

/// Takes back one mail recorded at `at` (its send failed).
pub fn unrecord(conn: &Connection, hash: &str, at: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM address_mails WHERE rowid = (SELECT rowid FROM address_mails WHERE hash = ?1 AND sent_at = ?2 LIMIT 1)",
    )?
    .execute(params![hash, at])?;
    Ok(())
}

/// Deletes what no longer counts (the hourly cleanup).
pub fn delete_expired(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM address_mails WHERE sent_at <= ?1")?.execute([now - DAY])
}
