//! Time and the loop on it: the injected clock below, and the one loop every background worker
//! runs on its jittered ticks ([`background`]). A leaf.
//!
//! Time, injected: expiry, cooldowns, rate-limit windows and cleanup read the clock through
//! [`Clock`], so tests move time forward instead of sleeping.

pub mod background;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// UTC Unix seconds, the unit of every timestamp in the database.
pub type UnixSeconds = i64;

pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> UnixSeconds;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixSeconds {
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told; shared between a test and the app it drives.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn starting_at(now: UnixSeconds) -> Self {
        Self(Arc::new(AtomicI64::new(now)))
    }

    pub fn advance(&self, by: Duration) {
        let secs = i64::try_from(by.as_secs()).unwrap_or(i64::MAX);
        self.0.fetch_add(secs, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> UnixSeconds {
        self.0.load(Ordering::SeqCst)
    }
}

/// `period` scaled by a random factor between 0.5 and 1.5: background work on a jittered tick
/// is not tied to any request, and workers that share a tick do not wake in step.
pub fn jittered(period: Duration) -> Duration {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 2];
    let unit = if ring::rand::SystemRandom::new().fill(&mut bytes).is_ok() {
        f64::from(u16::from_le_bytes(bytes)) / f64::from(u16::MAX)
    } else {
        0.5
    };
    period.mul_f64(0.5 + unit)
}

/// The retry schedule of mail and webhooks: `base` × 2^(attempt−1), capped at an hour, ±20 %
/// jitter so a relay or receiver coming back is not hit by every retry at once. In seconds.
pub fn backoff_secs(base: Duration, attempt: i64) -> i64 {
    use ring::rand::SecureRandom;
    const MAX_BACKOFF: Duration = Duration::from_secs(3600);
    let exponent = i32::try_from(attempt.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
    let plain = (base.as_secs_f64() * 2f64.powi(exponent)).min(MAX_BACKOFF.as_secs_f64());
    let mut byte = [0u8; 1];
    let jitter = if ring::rand::SystemRandom::new().fill(&mut byte).is_ok() {
        f64::from(byte[0]) / 255.0 * 0.4 - 0.2
    } else {
        0.0
    };
    #[allow(clippy::cast_possible_truncation, reason = "at most an hour and a fifth, in seconds")]
    let secs = (plain * (1.0 + jitter)).round().max(1.0) as i64;
    secs
}

/// A Unix time that has no calendar date: beyond the years chrono can represent (±262,000).
/// Never a real clock's reading, so it means a corrupt value, and it is an error rather than an
/// empty string in an export, a webhook payload or `stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the Unix time {0} has no calendar date")]
pub struct TimeOutOfRange(pub UnixSeconds);

/// A Unix time as RFC 3339 (UTC, whole seconds, `Z`): `2026-12-01T18:42:12Z`.
pub fn rfc3339(time: UnixSeconds) -> Result<String, TimeOutOfRange> {
    chrono::DateTime::from_timestamp(time, 0)
        .map(|time| time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .ok_or(TimeOutOfRange(time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::starting_at(1_000);
        let shared = clock.clone();
        assert_eq!(clock.now(), 1_000);
        shared.advance(Duration::from_secs(90));
        assert_eq!(clock.now(), 1_090);
    }

    #[test]
    fn jitter_stays_within_half_a_period_either_way() {
        let period = Duration::from_millis(1_000);
        let samples: Vec<Duration> = (0..200).map(|_| jittered(period)).collect();
        assert!(samples.iter().all(|d| *d >= period / 2 && *d <= period * 3 / 2), "{samples:?}");
        assert!(samples.iter().any(|d| *d != samples[0]), "jitter varies");
    }

    #[test]
    fn rfc3339_is_utc_whole_seconds_and_refuses_a_time_without_a_date() {
        assert_eq!(rfc3339(0), Ok("1970-01-01T00:00:00Z".to_owned()));
        assert_eq!(rfc3339(1_796_150_532), Ok("2026-12-01T18:42:12Z".to_owned()));
        assert_eq!(rfc3339(i64::MAX), Err(TimeOutOfRange(i64::MAX)));
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now() > 1_577_836_800);
    }
}
