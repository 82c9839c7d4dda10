//! The `mail_bucket` table: the paced mail budget. A bucket holds at most `mail.burst` mails and
//! refills evenly at `mail.max_mails_per_hour`, so in any T seconds at most
//! `burst + T × max_mails_per_hour / 3600` mails leave, however the claims race: every claim
//! takes from the bucket inside the writer, in the commit that leases its mail.
//!
//! The credit is kept in 1/3600 of a mail ([`UNIT`]): a second's refill is exactly
//! `max_mails_per_hour` units, so no rounding lets a mail through early or holds one back. The
//! one row is written only when a claim takes or a failed send gives back; between, the credit
//! is worked out from the time of that write. No row: the bucket is full.

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;

/// What one mail costs, in credit units.
pub const UNIT: i64 = 3600;

/// The pace of the budget, from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    pub per_hour: i64,
    pub burst: i64,
}

impl Pace {
    pub fn new(per_hour: u32, burst: u32) -> Self {
        Self { per_hour: i64::from(per_hour), burst: i64::from(burst.max(1)) }
    }

    fn capacity(self) -> i64 {
        self.burst.saturating_mul(UNIT)
    }
}

/// The credit at `now`: the last written credit plus the refill since, at most the capacity.
fn credit(conn: &Connection, pace: Pace, now: UnixSeconds) -> rusqlite::Result<i64> {
    let stored: Option<(i64, i64)> = conn
        .prepare_cached("SELECT credit, updated_at FROM mail_bucket WHERE id = 1")?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    Ok(match stored {
        Some((credit, updated_at)) => {
            let refill = now.saturating_sub(updated_at).max(0).saturating_mul(pace.per_hour);
            credit.saturating_add(refill).min(pace.capacity())
        }
        None => pace.capacity(),
    })
}

/// How many whole mails the bucket allows at `now`.
pub fn room(conn: &Connection, pace: Pace, now: UnixSeconds) -> rusqlite::Result<usize> {
    Ok(usize::try_from(credit(conn, pace, now)? / UNIT).unwrap_or(0))
}

/// Takes `mails` from the bucket at `now` (the caller checked [`room`] in the same transaction).
pub fn take(conn: &Connection, pace: Pace, now: UnixSeconds, mails: usize) -> rusqlite::Result<()> {
    if mails == 0 {
        return Ok(());
    }
    let mails = i64::try_from(mails).unwrap_or(i64::MAX);
    let left = credit(conn, pace, now)?.saturating_sub(mails.saturating_mul(UNIT));
    store(conn, left, now)
}

/// Gives one mail back at `now` (its send failed), up to the capacity.
pub fn give_back(conn: &Connection, pace: Pace, now: UnixSeconds) -> rusqlite::Result<()> {
    let credit = credit(conn, pace, now)?.saturating_add(UNIT).min(pace.capacity());
    store(conn, credit, now)
}

fn store(conn: &Connection, credit: i64, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO mail_bucket (id, credit, updated_at) VALUES (1, ?1, ?2)
         ON CONFLICT (id) DO UPDATE SET credit = excluded.credit, updated_at = excluded.updated_at",
    )?
    .execute(params![credit, now])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    #[test]
    fn a_full_bucket_then_the_pace() {
        let (_dir, conn) = conn();
        // 360 an hour: one mail every 10 s; a burst of 6.
        let pace = Pace::new(360, 6);
        assert_eq!(room(&conn, pace, 1_000).unwrap(), 6, "a bucket never written is full");
        take(&conn, pace, 1_000, 6).unwrap();
        assert_eq!(room(&conn, pace, 1_000).unwrap(), 0);
        assert_eq!(room(&conn, pace, 1_009).unwrap(), 0, "9 s refill less than one mail");
        assert_eq!(room(&conn, pace, 1_010).unwrap(), 1);
        assert_eq!(room(&conn, pace, 1_100).unwrap(), 6, "never more than the burst");
        assert_eq!(room(&conn, pace, 10_000).unwrap(), 6);
        take(&conn, pace, 1_010, 1).unwrap();
        assert_eq!(room(&conn, pace, 1_019).unwrap(), 0, "the partial credit is kept across a take");
        assert_eq!(room(&conn, pace, 1_020).unwrap(), 1);
    }

    #[test]
    fn in_any_span_at_most_the_burst_plus_the_pace_leaves() {
        let (_dir, conn) = conn();
        let pace = Pace::new(7_200, 3); // two a second
        let mut sent = 0;
        for now in 0..600 {
            let room = room(&conn, pace, now).unwrap();
            take(&conn, pace, now, room).unwrap();
            sent += room;
        }
        // 3 at once, then two a second for the remaining 599 s.
        assert_eq!(sent, 3 + 599 * 2);
    }

    #[test]
    fn a_failed_send_gives_its_mail_back_up_to_the_capacity() {
        let (_dir, conn) = conn();
        let pace = Pace::new(60, 2);
        take(&conn, pace, 0, 2).unwrap();
        give_back(&conn, pace, 0).unwrap();
        assert_eq!(room(&conn, pace, 0).unwrap(), 1);
        give_back(&conn, pace, 0).unwrap();
        give_back(&conn, pace, 0).unwrap();
        assert_eq!(room(&conn, pace, 0).unwrap(), 2, "never above the burst");
    }
}
