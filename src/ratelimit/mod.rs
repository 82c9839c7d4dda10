//! Who the client is and how often it may sign up: the trusted-proxy rule that picks the client
//! IP, the networks it is counted by (the client's own, and its neighbourhood), and the
//! persistent counters.

mod client_ip;
pub mod cloudflare;
mod limiter;
mod neighbourhood;
mod trusted_proxies;

pub use client_ip::{ClientNet, client_ip};
pub use limiter::{Counter, Decision, RateLimiter, check_and_count, delete_expired};
pub use neighbourhood::Neighbourhood;
pub use trusted_proxies::{TrustedProxies, loopback_warning};
