//! Who the client is and how often it may sign up: the trusted-proxy rule that picks the client
//! IP, the networks it is counted by (the client's own, and its neighbourhood), and the
//! persistent counters.
//!
//! Layout: `client_ip` (the client behind trusted proxies), `neighbourhood` (the /24 or /48 it
//! is counted in), `limiter` (the keyed fixed-window counters), `loopback` (the start-up
//! warning for a loopback listener that trusts no proxy). Which proxies are trusted is a
//! configuration type, `crate::domain::TrustedProxies`.

mod client_ip;
mod limiter;
mod loopback;
mod neighbourhood;

pub use client_ip::{ClientNet, client_ip};
pub use limiter::{Counter, Decision, RateLimiter, check_and_count};
pub use loopback::loopback_warning;
pub use neighbourhood::Neighbourhood;
