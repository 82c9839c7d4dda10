//! Who the client is and how often it may sign up: the trusted-proxy rule that picks the client
//! IP, and (with the signup issue) the persistent per-network counters.

pub mod cloudflare;
mod trusted_proxies;

pub use trusted_proxies::TrustedProxies;
