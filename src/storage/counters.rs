//! Plain counters in `rate_limits` whose keys name nothing personal, beside the limiter's keyed
//! ones: accepted signups per list and window, for the surge alert and surge mode, and the
//! complaint breaker's holds of a list in surge mode. Each key
//! starts with its family's prefix and a counter expires after the window that follows its own
//! (surge mode asks whether the previous window was over), so the hourly cleanup deletes it like
//! any other.

use rusqlite::Connection;

use super::Batch;
use super::rollups::HOUR;
use crate::clock::UnixSeconds;

/// A list's accepted signups in the current surge window, and what they mean for surge mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurgeCount {
    /// This window's count, including this signup.
    pub count: i64,
    /// Until when the list is in surge as far as the counts known now say (a time in the past:
    /// not in surge). A list enters surge when a window's count passes `max` and leaves it once
    /// a whole window stayed at or below it: so it is in surge while this window or the one
    /// before is over `max`.
    pub surge_until: UnixSeconds,
}

impl SurgeCount {
    pub fn in_surge(&self, now: UnixSeconds) -> bool {
        self.surge_until > now
    }
}

/// Counts one accepted signup for `list_id` in the fixed `window` containing `now`. Counted in
/// the batch ([`Batch::count`]): written once per commit, however many signups it records.
pub fn count_signup(
    batch: &mut Batch<'_>,
    list_id: &str,
    window_secs: i64,
    max: i64,
    now: UnixSeconds,
) -> rusqlite::Result<SurgeCount> {
    let window = window_secs.max(1);
    let bucket = now.div_euclid(window);
    let key = |bucket: i64| format!("surge/{list_id}/{window}/{bucket}");
    let count = batch.count(&key(bucket), 1, (bucket + 2).saturating_mul(window), now)?;
    let previous = batch.counter(&key(bucket - 1), now)?;
    let surge_until = if count > max {
        (bucket + 2).saturating_mul(window)
    } else if previous > max {
        (bucket + 1).saturating_mul(window)
    } else {
        0
    };
    Ok(SurgeCount { count, surge_until })
}

/// The complaint breaker's hold of `list_id` begun in the clock hour `bucket`.
fn hold_key(list_id: &str, bucket: i64) -> String {
    format!("breaker/{list_id}/{bucket}")
}

/// Puts `list_id` in surge mode for the complaint breaker: for the rest of this clock hour and
/// the whole next one, so at least an hour. Until when.
pub fn hold_for_complaints(batch: &mut Batch<'_>, list_id: &str, now: UnixSeconds) -> rusqlite::Result<UnixSeconds> {
    let bucket = now.div_euclid(HOUR);
    let until = (bucket + 2).saturating_mul(HOUR);
    batch.count(&hold_key(list_id, bucket), 1, until, now)?;
    Ok(until)
}

/// Until when the complaint breaker holds `list_id` in surge mode (a time in the past: it does
/// not). A hold begun in this clock hour or the one before is still on.
pub fn complaint_hold(batch: &mut Batch<'_>, list_id: &str, now: UnixSeconds) -> rusqlite::Result<UnixSeconds> {
    let bucket = now.div_euclid(HOUR);
    let mut until = 0;
    for begun in [bucket - 1, bucket] {
        if batch.counter(&hold_key(list_id, begun), now)? > 0 {
            until = (begun + 2).saturating_mul(HOUR);
        }
    }
    Ok(until)
}

/// Deletes every counter of `rate_limits` whose window has ended — the limiter's and these —
/// for the hourly cleanup.
pub fn delete_expired(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM rate_limits WHERE expires_at <= ?1")?.execute([now])
}
