//! Who the client is and how often it may sign up: the trusted-proxy rule that picks the client
//! IP, the network it is counted by, and the persistent per-network counters.

mod client_ip;
pub mod cloudflare;
mod limiter;
mod trusted_proxies;

pub use client_ip::{ClientNet, client_ip};
pub use limiter::{Counter, Decision, RateLimiter, check_and_count, delete_expired};
pub use trusted_proxies::{TrustedProxies, loopback_warning};
