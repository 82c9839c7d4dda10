//! When the relay refuses signupd itself — a wrong password, a sender it will not carry, an
//! untrusted certificate, a closed port — no mail is at fault, and none should pay for it. The
//! whole queue waits instead: every mail worker sees the hold before it claims anything, so no
//! mail after mail burns its tries against a relay that will refuse them all, and no pending
//! signup is deleted as undeliverable (`SendError::holds_the_queue` says which failures these
//! are).
//!
//! One hold is shared by every worker of the process. An episode begins with the first such
//! failure, which alerts the operator once however many workers meet the refusal together; the
//! queue then waits `retry_base` × 2^(tries−1), jittered, at most [`LONGEST_WAIT`], before
//! one more try; the first mail the relay takes ends the episode (said once), and the rest
//! follow at once. A signup whose confirm window ends meanwhile expires as never mailed, as
//! any unconfirmed signup does.
//!
//! The hold is in memory, and a held mail keeps its due time in the queue: a restart tries
//! the relay at once, which is what an operator who just fixed it expects.

use std::sync::Mutex;
use std::time::Duration;

use crate::clock::{UnixSeconds, backoff_secs};

/// The longest the queue waits between tries of a refusing relay: an operator who fixes the
/// password sees the held mail leave within this.
pub const LONGEST_WAIT: Duration = Duration::from_secs(5 * 60);

/// Whether the relay is refusing signupd, and until when the queue waits.
#[derive(Debug, Default)]
pub struct RelayHold {
    episode: Mutex<Option<Episode>>,
}

#[derive(Debug, Clone, Copy)]
struct Episode {
    /// Tries that met the refusal, this episode.
    tries: i64,
    /// The queue waits until then.
    until: UnixSeconds,
}

/// What a refusal did to the hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// This refusal began an episode: the operator is to be told.
    pub began: bool,
    /// When the queue tries again.
    pub until: UnixSeconds,
}

impl RelayHold {
    /// Whether mail must wait at `now`.
    pub fn holding(&self, now: UnixSeconds) -> bool {
        self.lock().is_some_and(|episode| now < episode.until)
    }

    /// The relay refused signupd at `now`. Workers that meet the same refusal together share
    /// one wait: a refusal while the queue already waits changes nothing.
    pub fn refused(&self, now: UnixSeconds, retry_base: Duration) -> Refusal {
        let mut episode = self.episode.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match *episode {
            Some(current) if now < current.until => Refusal { began: false, until: current.until },
            current => {
                let tries = current.map_or(1, |current| current.tries.saturating_add(1));
                let longest = i64::try_from(LONGEST_WAIT.as_secs()).unwrap_or(i64::MAX);
                let until = now.saturating_add(backoff_secs(retry_base, tries).min(longest));
                *episode = Some(Episode { tries, until });
                if current.is_none() {
                    crate::metrics::relay_refusing(true);
                }
                Refusal { began: current.is_none(), until }
            }
        }
    }

    /// The relay took a mail. True when that ends an episode (to be said once).
    pub fn accepted(&self) -> bool {
        let mut episode = self.episode.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ended = episode.take().is_some();
        if ended {
            crate::metrics::relay_refusing(false);
        }
        ended
    }

    /// Whether an episode is running: the relay refused signupd and has taken nothing since.
    pub fn refusing(&self) -> bool {
        self.lock().is_some()
    }

    fn lock(&self) -> Option<Episode> {
        *self.episode.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_meeting_one_refusal_share_one_wait_and_one_alert() {
        let hold = RelayHold::default();
        let base = Duration::from_secs(30);
        let first = hold.refused(1_000, base);
        let second = hold.refused(1_000, base);
        assert!(first.began && !second.began, "{first:?} {second:?}");
        assert_eq!(first.until, second.until, "the second refusal shares the first's wait");
        assert!((1_024..=1_036).contains(&first.until), "{first:?}");
        assert!(hold.holding(first.until - 1) && !hold.holding(first.until));

        let again = hold.refused(first.until, base);
        assert!(!again.began, "still the same episode");
        assert!(again.until - first.until >= 48, "the wait doubles: {again:?}");
        assert!(hold.accepted(), "a mail taken ends the episode");
        assert!(!hold.accepted(), "and says so once");
        assert!(!hold.holding(again.until - 1));
        assert!(hold.refused(again.until, base).began, "a later refusal is a new episode");
    }

    #[test]
    fn the_wait_is_never_longer_than_five_minutes() {
        let hold = RelayHold::default();
        let mut now = 0;
        for _ in 0..20 {
            let refusal = hold.refused(now, Duration::from_secs(30));
            assert!(refusal.until - now <= 300, "{refusal:?} at {now}");
            now = refusal.until;
        }
    }
}
