//! Persistent counters (`docs/http-api.md`): for every `{window, max}` rule, a fixed-window
//! counter in the `rate_limits` table, keyed by HMAC(hash key, scope + rule window + bucket +
//! network). Two scopes: the client (`signup.rate_limits`) and its neighbourhood
//! (`signup.network_rate_limits`); a request must have room in both. No IP address is stored,
//! and a restart resets nothing.
//!
//! Counting happens inside the signup's write command (one writer runs them one after another), so
//! a request is counted exactly when it is recorded, and concurrent requests can never exceed a
//! limit. Only accepted requests count; a refused request does not
//! extend its own ban.

use ring::hmac;

use super::{ClientNet, Neighbourhood};
use crate::clock::UnixSeconds;
use crate::config::secrets::Secret;
use crate::config::{RateLimitRule, SignupConfig};
use crate::storage::Batch;

/// What the limiter decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    /// Over a limit; the earliest moment every exceeded window has room again.
    Limited {
        retry_after_secs: u64,
    },
}

#[derive(Debug, Clone)]
pub struct RateLimiter {
    client_rules: Vec<RateLimitRule>,
    network_rules: Vec<RateLimitRule>,
    key: hmac::Key,
}

impl RateLimiter {
    pub fn new(signup: &SignupConfig, hash_key: &Secret) -> Self {
        Self {
            client_rules: signup.rate_limits.clone(),
            network_rules: signup.network_rate_limits.clone(),
            key: hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose()),
        }
    }

    /// The counters a request is checked against at `now`: one per client rule and one per
    /// network rule. Computing the keys (an HMAC each) is left to the caller's thread, so the
    /// writer only runs SQL.
    pub fn counters(&self, client: &ClientNet, network: &Neighbourhood, now: UnixSeconds) -> Vec<Counter> {
        let client_counters = self.client_rules.iter().map(|rule| {
            // The client scope keeps the key format of the first release, so an upgrade resets
            // no running counter.
            self.counter(rule, now, |window, bucket| format!("signupd/ratelimit/v1\n{window}\n{bucket}\n{client}"))
        });
        let network_counters = self.network_rules.iter().map(|rule| {
            self.counter(rule, now, |window, bucket| {
                format!("signupd/ratelimit/network/v1\n{window}\n{bucket}\n{network}")
            })
        });
        client_counters.chain(network_counters).collect()
    }

    /// The keyed hash a queued confirmation carries of its signup's neighbourhood, so the mail
    /// budget can be shared fairly between networks (`crate::outbound::mail::queue`). 128 bits: enough
    /// to tell networks apart, and it names none.
    pub fn network_tag(&self, network: &Neighbourhood) -> String {
        let tag = hmac::sign(&self.key, format!("signupd/mail-network/v1\n{network}").as_bytes());
        hex::encode(&tag.as_ref()[..16])
    }

    fn counter(&self, rule: &RateLimitRule, now: UnixSeconds, message: impl Fn(i64, i64) -> String) -> Counter {
        let window = i64::try_from(rule.window.as_secs()).unwrap_or(i64::MAX).max(1);
        let bucket = now.div_euclid(window);
        let expires_at = (bucket + 1).saturating_mul(window);
        let key = hex::encode(hmac::sign(&self.key, message(window, bucket).as_bytes()).as_ref());
        Counter { key, expires_at, max: rule.max }
    }
}

/// One rule's counter for one client and window bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    /// HMAC(hash key, window + bucket + client network), hex: no IP address is stored.
    key: String,
    expires_at: UnixSeconds,
    max: u32,
}

/// Checks `counters` at `now`; if all have room, counts the request in each. Runs inside the
/// caller's write command, so a request is counted exactly when it is recorded; the batch keeps
/// the counts in memory and writes each counter once, in its commit ([`Batch`]).
pub fn check_and_count(batch: &mut Batch<'_>, counters: &[Counter], now: UnixSeconds) -> rusqlite::Result<Decision> {
    let mut retry_after: Option<i64> = None;
    for counter in counters {
        let count = batch.counter(&counter.key, now)?;
        if count >= i64::from(counter.max) {
            let wait = (counter.expires_at - now).max(1);
            retry_after = Some(retry_after.map_or(wait, |longest| longest.max(wait)));
        }
    }
    if let Some(wait) = retry_after {
        return Ok(Decision::Limited { retry_after_secs: u64::try_from(wait).unwrap_or(1) });
    }
    for counter in counters {
        batch.count(&counter.key, 1, counter.expires_at, now)?;
    }
    Ok(Decision::Allowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn setup() -> (tempfile::TempDir, rusqlite::Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    fn limiter_with(network_rules: Vec<RateLimitRule>) -> RateLimiter {
        let mut signup = crate::config::Config::from_toml("[[lists]]\nid = \"a\"").unwrap().signup;
        signup.rate_limits = vec![
            RateLimitRule { window: Duration::from_secs(600), max: 3 },
            RateLimitRule { window: Duration::from_secs(86_400), max: 10 },
        ];
        signup.network_rate_limits = network_rules;
        RateLimiter::new(&signup, &crate::config::secrets::Secret::from_bytes(vec![7; 32]))
    }

    /// Per-client rules only.
    fn limiter() -> RateLimiter {
        limiter_with(Vec::new())
    }

    fn attempt(conn: &mut rusqlite::Connection, limiter: &RateLimiter, client: &ClientNet, now: i64) -> Decision {
        let ip: std::net::IpAddr = client.to_string().split('/').next().unwrap().parse().unwrap();
        let counters = limiter.counters(client, &Neighbourhood::of(ip, 24, 48), now);
        let tx = conn.transaction().unwrap();
        let decision =
            crate::storage::batch::run_alone(&tx, |batch| Ok(check_and_count(batch, &counters, now)?)).unwrap();
        tx.commit().unwrap();
        decision
    }

    #[test]
    fn a_neighbourhood_shares_one_budget_whatever_its_clients() {
        let (_dir, mut conn) = setup();
        let limiter = limiter_with(vec![RateLimitRule { window: Duration::from_secs(600), max: 5 }]);
        let start = 6_000;
        // Five /64s of one /48, then a sixth: each client has room, the /48 has not.
        let clients: Vec<ClientNet> =
            (1..=6).map(|i| ClientNet::of(format!("2001:db8:7:{i}::1").parse().unwrap(), 64)).collect();
        for client in &clients[..5] {
            assert_eq!(attempt(&mut conn, &limiter, client, start), Decision::Allowed);
        }
        assert_eq!(attempt(&mut conn, &limiter, &clients[5], start), Decision::Limited { retry_after_secs: 600 });
        let elsewhere = ClientNet::of("2001:db8:8::1".parse().unwrap(), 64);
        assert_eq!(attempt(&mut conn, &limiter, &elsewhere, start), Decision::Allowed, "another /48 has its own");
        let refused = ClientNet::of("2001:db8:7:99::1".parse().unwrap(), 64);
        assert_eq!(
            attempt(&mut conn, &limiter, &refused, start),
            Decision::Limited { retry_after_secs: 600 },
            "a refused request did not use up its own client budget: it was never counted"
        );
    }

    #[test]
    fn a_client_whose_prefix_equals_the_neighbourhood_is_counted_once_per_scope() {
        let (_dir, mut conn) = setup();
        // ipv6_prefix 48 makes the client and its neighbourhood the same network: the scopes must
        // not share a counter, or every request would count twice.
        let limiter = limiter_with(vec![RateLimitRule { window: Duration::from_secs(600), max: 3 }]);
        let client = ClientNet::of("2001:db8:7::1".parse().unwrap(), 48);
        for _ in 0..3 {
            assert_eq!(attempt(&mut conn, &limiter, &client, 6_000), Decision::Allowed);
        }
        assert!(matches!(attempt(&mut conn, &limiter, &client, 6_000), Decision::Limited { .. }));
    }

    #[test]
    fn network_tags_tell_networks_apart_and_name_none() {
        let limiter = limiter();
        let a = limiter.network_tag(&Neighbourhood::of("203.0.113.7".parse().unwrap(), 24, 48));
        let b = limiter.network_tag(&Neighbourhood::of("203.0.113.99".parse().unwrap(), 24, 48));
        let c = limiter.network_tag(&Neighbourhood::of("198.51.100.7".parse().unwrap(), 24, 48));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn three_per_ten_minutes_then_wait_for_the_window() {
        let (_dir, mut conn) = setup();
        let limiter = limiter();
        let client = ClientNet::of("203.0.113.7".parse().unwrap(), 64);
        let start = 6_000; // the start of a 10-minute bucket
        for i in 0..3 {
            assert_eq!(attempt(&mut conn, &limiter, &client, start + i), Decision::Allowed);
        }
        assert_eq!(attempt(&mut conn, &limiter, &client, start + 100), Decision::Limited { retry_after_secs: 500 });
        let other = ClientNet::of("203.0.113.8".parse().unwrap(), 64);
        assert_eq!(attempt(&mut conn, &limiter, &other, start + 100), Decision::Allowed, "budgets are per client");
        assert_eq!(attempt(&mut conn, &limiter, &client, start + 600), Decision::Allowed, "a new window has room");
    }

    #[test]
    fn the_daily_limit_holds_across_short_windows() {
        let (_dir, mut conn) = setup();
        let limiter = limiter();
        let client = ClientNet::of("203.0.113.7".parse().unwrap(), 64);
        let day_start = 86_400 * 100;
        let mut allowed = 0;
        for window in 0..10 {
            for _ in 0..3 {
                if attempt(&mut conn, &limiter, &client, day_start + window * 600) == Decision::Allowed {
                    allowed += 1;
                }
            }
        }
        assert_eq!(allowed, 10);
        let Decision::Limited { retry_after_secs } = attempt(&mut conn, &limiter, &client, day_start + 6_000) else {
            panic!("the daily limit must hold");
        };
        assert_eq!(retry_after_secs, 86_400 - 6_000);
    }

    #[test]
    fn no_ip_address_is_stored() {
        let (_dir, mut conn) = setup();
        let client = ClientNet::of("203.0.113.7".parse().unwrap(), 64);
        attempt(&mut conn, &limiter(), &client, 1_000);
        let keys: Vec<String> = conn
            .prepare("SELECT key FROM rate_limits")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(keys.len(), 2);
        assert!(keys.iter().all(|key| key.len() == 64 && !key.contains("203.0.113")));
        assert_eq!(crate::storage::counters::delete_expired(&conn, 1_000_000_000).unwrap(), 2);
    }
}
