//! Plain counters in `rate_limits` whose keys name nothing personal, beside the limiter's keyed
//! ones: accepted signups per list and window (the surge alert), and confirmation mails per
//! client neighbourhood and hour (the fair mail budget; the neighbourhood is already a keyed
//! hash). Each key starts with its family's prefix and a counter expires with its window, so
//! the hourly cleanup deletes it like any other.

use rusqlite::{Connection, params};

use super::Batch;
use crate::clock::UnixSeconds;

/// Counts one accepted signup for `list_id` in the fixed `window` containing `now`; returns the
/// window's count including this one. Counted in the batch ([`Batch::count`]): written once
/// per commit, however many signups it records.
pub fn count_signup(batch: &mut Batch<'_>, list_id: &str, window_secs: i64, now: UnixSeconds) -> rusqlite::Result<i64> {
    let window = window_secs.max(1);
    let bucket = now.div_euclid(window);
    let key = format!("surge/{list_id}/{window}/{bucket}");
    batch.count(&key, 1, (bucket + 1).saturating_mul(window), now)
}

/// The key of a neighbourhood's mail count in the hour containing `now`; `network` is the
/// keyed hash a queued mail carries.
pub fn network_mail_key(network: &str, now: UnixSeconds) -> String {
    format!("{NETWORK_MAIL_PREFIX}{}/{network}", now.div_euclid(3600))
}

/// What [`network_mail_key`] starts with, for a query that builds the key in SQL.
pub const NETWORK_MAIL_PREFIX: &str = "mail-network/";

/// Counts `mails` confirmation mails to the neighbourhood `network` in the hour containing `now`.
/// The count is kept through the next hour too: the fair order ranks by this hour's mails plus
/// the previous hour's, so at the turn of the hour a flood's networks do not start level with
/// a visitor who has had none.
pub fn count_network_mails(conn: &Connection, network: &str, now: UnixSeconds, mails: i64) -> rusqlite::Result<()> {
    let expires_at = (now.div_euclid(3600) + 2) * 3600;
    bump(conn, &network_mail_key(network, now), expires_at, mails)?;
    Ok(())
}

fn bump(conn: &Connection, key: &str, expires_at: UnixSeconds, by: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO rate_limits (key, count, expires_at) VALUES (?1, ?3, ?2)
         ON CONFLICT (key) DO UPDATE SET count = count + excluded.count
         RETURNING count",
    )?
    .query_row(params![key, expires_at, by], |row| row.get(0))
}

/// Deletes every counter of `rate_limits` whose window has ended — the limiter's and these —
/// for the hourly cleanup.
pub fn delete_expired(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM rate_limits WHERE expires_at <= ?1")?.execute([now])
}
