//! What the mail order knows about client neighbourhoods, each only as the keyed hash a queued
//! mail carries (`Limiter::network_tag`): `network_mails`, one row per confirmation mail, for
//! the fair order's sliding hour; and `network_reputation`, the day of the last confirmation
//! from each neighbourhood, so mail to a network where people confirm goes before the rest.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use crate::clock::UnixSeconds;

/// The fair order's window: the last 60 minutes, sliding.
pub const MAIL_WINDOW: i64 = 3600;
const DAY: i64 = 86_400;

/// Counts one confirmation mail to `network` at `now`.
pub fn count_mail(conn: &Connection, network: &str, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO network_mails (network, sent_at) VALUES (?1, ?2)")?
        .execute(params![network, now])?;
    Ok(())
}

/// Each network's confirmation mails in the fair order's window before `now`. At most the
/// mails of the last hour, which the budget bounds.
pub fn recent_mails(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<HashMap<String, i64>> {
    conn.prepare_cached("SELECT network, count(*) FROM network_mails WHERE sent_at > ?1 GROUP BY network")?
        .query_map([now - MAIL_WINDOW], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}

/// Takes back one mail counted at `at` (its send failed).
pub fn uncount_mail(conn: &Connection, network: &str, at: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM network_mails
         WHERE rowid = (SELECT rowid FROM network_mails WHERE sent_at = ?2 AND network = ?1 LIMIT 1)",
    )?
    .execute(params![network, at])?;
    Ok(())
}

/// Records that someone from `network` confirmed a signup at `now`.
pub fn record_confirmation(conn: &Connection, network: &str, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO network_reputation (network, day) VALUES (?1, ?2)
         ON CONFLICT (network) DO UPDATE SET day = max(day, excluded.day)",
    )?
    .execute(params![network, now.div_euclid(DAY)])?;
    Ok(())
}

/// The first day that still counts for a reputation of `days` days at `now`.
pub fn reputation_since(now: UnixSeconds, days: u32) -> i64 {
    now.div_euclid(DAY) - i64::from(days)
}

/// The hourly cleanup: mail counts older than the window, and reputations older than `days`
/// (all of them when `days` is 0, the reputation turned off). Returns how many rows went.
pub fn delete_expired(conn: &Connection, now: UnixSeconds, days: u32) -> rusqlite::Result<usize> {
    let mails = conn.prepare_cached("DELETE FROM network_mails WHERE sent_at <= ?1")?.execute([now - MAIL_WINDOW])?;
    let oldest = if days == 0 { i64::MAX } else { reputation_since(now, days) };
    let reputations = conn.prepare_cached("DELETE FROM network_reputation WHERE day < ?1")?.execute([oldest])?;
    Ok(mails + reputations)
}
